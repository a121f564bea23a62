//! `protocol = "respb"` on a variant: what resolves, and every combination refused with
//! the place and what was expected.

use resplab_experiment::model::LoadProtocol;
use resplab_experiment::{resolve, Overrides};

const SERVE: &str = "resplab serve --port {port} --respb-port {respb_port}";

/// A two-variant file whose second variant has the lines `second`.
fn file(second: &str) -> String {
    format!(
        "[experiment]\nname = \"p\"\nrounds = 6\nrequests = 1000\n\n\
         [[variant]]\nname = \"resp\"\nserver = \"{SERVE}\"\n\n\
         [[variant]]\nname = \"respb\"\n{second}\n\n\
         [[workload]]\nname = \"get\"\ntests = \"get\"\n"
    )
}

fn error_of(text: &str) -> String {
    resolve::parse("exp.toml", text, &Overrides::default())
        .unwrap_err()
        .to_string()
}

#[test]
fn a_spawned_server_with_a_respb_port_and_an_address_with_one_resolve() {
    let e = resolve::parse(
        "exp.toml",
        &file(&format!("server = \"{SERVE}\"\nprotocol = \"respb\"")),
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(e.variants[0].protocol, LoadProtocol::Resp);
    assert_eq!(e.variants[1].protocol, LoadProtocol::Respb { port: None });
    let e = resolve::parse(
        "exp.toml",
        &file("address = \"127.0.0.1:7000\"\nprotocol = \"respb\"\nrespb_port = 7001"),
        &Overrides::default(),
    )
    .unwrap();
    assert_eq!(
        e.variants[1].protocol,
        LoadProtocol::Respb { port: Some(7001) }
    );
    // A RESP variant's stored definition does not change: the key is left out.
    let json = serde_json::to_string(&e.variants[0]).unwrap();
    assert!(!json.contains("protocol"), "{json}");
}

#[test]
fn respb_against_a_server_without_a_respb_port_is_refused_naming_the_key() {
    for (second, expected) in [
        (
            "server = \"redis-server --port {port}\"\nprotocol = \"respb\"",
            "exp.toml:13:12: key `variant[1].protocol`: protocol = \"respb\" needs a server with a RESPB port",
        ),
        (
            "protocol = \"respb\"",
            "key `variant[1].protocol`: protocol = \"respb\" needs a server with a RESPB port",
        ),
        (
            "address = \"127.0.0.1:6379\"\nprotocol = \"respb\"",
            "with an address needs respb_port = N",
        ),
        (
            "server = \"redis-server --port {port}\"\nprotocol = \"resp3\"",
            "key `variant[1].protocol`: expected \"resp\" or \"respb\", found \"resp3\"",
        ),
        (
            "address = \"127.0.0.1:6379\"\nrespb_port = 7001",
            "key `variant[1].respb_port`: respb_port goes with protocol = \"respb\"",
        ),
        (
            &format!("server = \"{SERVE}\"\nprotocol = \"respb\"\nrespb_port = 7001"),
            "respb_port is for an address",
        ),
        (
            "server = \"redis-server --port {port}\"\ncluster = { masters = 3 }\nprotocol = \"respb\"",
            "does not go with cluster",
        ),
        (
            "uri = \"rediss://127.0.0.1:7000\"\ninsecure = true\nprotocol = \"respb\"\nrespb_port = 7001",
            "does not go with TLS",
        ),
        (
            "toggle_of = \"resp\"\nconfig = { a = \"b\" }\nprotocol = \"respb\"",
            "does not go with a toggle variant",
        ),
    ] {
        let msg = error_of(&file(second));
        assert!(msg.contains(expected), "{second}:\n{msg}");
        assert!(!msg.contains('\n'), "one line: {msg}");
    }
}

#[test]
fn respb_with_a_command_workload_is_refused() {
    let text = file(&format!("server = \"{SERVE}\"\nprotocol = \"respb\""))
        .replace("tests = \"get\"", "run = \"true\"\nformat = \"numbers\"");
    let msg = error_of(&text);
    assert!(
        msg.contains("variant \"respb\".protocol") && msg.contains("runs its own client"),
        "{msg}"
    );
}
