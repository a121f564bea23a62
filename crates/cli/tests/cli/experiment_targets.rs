//! Experiments against the servers people run: a fresh 3-master Redis Cluster per
//! execution (`cluster = { masters, replicas }`), and a server behind TLS with an ACL
//! user whose password comes from an environment variable and is stored nowhere.

use crate::common::{run_db, text};
use resplab_store::Store;
use resplab_testkit::tls::TlsRedis;

#[test]
fn an_experiment_starts_a_fresh_three_master_cluster_per_execution() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cluster.toml");
    std::fs::write(
        &file,
        r#"
[experiment]
name = "cluster-ab"
rounds = 2
test_time = "300ms"
seed = 3
client_cpu_limit = 1.0

[[variant]]
name = "hz10"
server = "redis-server --port {port} --bind 127.0.0.1 --save '' --appendonly no --hz 10"
cluster = { masters = 3 }

[[variant]]
name = "hz50"
server = "redis-server --port {port} --bind 127.0.0.1 --save '' --appendonly no --hz 50"
cluster = { masters = 3, replicas = 0 }

[[workload]]
name = "setget"
tests = "set,get,mset"
keyspace = 10000
clients = 2
pipeline = 4
"#,
    )
    .unwrap();
    let db = dir.path().join("r.db");
    let o = run_db(&["experiment", "run", file.to_str().unwrap()], &db, &[]);
    crate::common::assert_ok(&o);
    let store = Store::open(&db).unwrap();
    let info = store.experiment("cluster-ab").unwrap();
    let trials = store.trials(info.id).unwrap();
    assert_eq!(trials.len(), 4, "{trials:#?}");
    for t in &trials {
        assert!(t.valid, "{t:?}");
        let r = store.run_record(t.id).unwrap();
        let c = r.cluster.as_ref().expect("a cluster run");
        assert_eq!(c.masters, 3);
        assert_eq!(r.nodes.len(), 3, "{:?}", r.nodes.keys());
        assert_eq!(r.totals.errors, 0, "{:?}", r.commands);
    }
    // Each execution had its own cluster: no node address is shared by two trials of
    // different rounds.
    let names: std::collections::BTreeSet<String> = trials
        .iter()
        .flat_map(|t| store.run_record(t.id).unwrap().nodes.into_keys())
        .collect();
    assert_eq!(names.len(), 12, "{names:?}");
    // A cluster variant with an address is refused, naming the key.
    let bad = dir.path().join("bad.toml");
    std::fs::write(
        &bad,
        "[experiment]\nname = \"x\"\n[[variant]]\nname = \"a\"\naddress = \"127.0.0.1:7000\"\ncluster = { masters = 3 }\n[[variant]]\nname = \"b\"\n[[workload]]\nname = \"w\"\ntests = \"set\"\n",
    )
    .unwrap();
    let o = run_db(&["experiment", "run", bad.to_str().unwrap()], &db, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("cluster"), "{}", text(&o));
}

#[test]
fn a_tls_variant_with_an_acl_user_stores_no_password() {
    let _lane = crate::common::shared();
    let s = TlsRedis::start(false).unwrap();
    let password = "exp-secret-9913";
    crate::common::add_acl_user(&s.server, "loader", password);
    let dir = tempfile::tempdir().unwrap();
    let ca = s.files.ca.display().to_string();
    let file = dir.path().join("tls.toml");
    std::fs::write(
        &file,
        format!(
            r#"
[experiment]
name = "tls-ab"
rounds = 2
test_time = "300ms"
seed = 4
client_cpu_limit = 1.0

[[variant]]
name = "uri"
uri = "rediss://loader@127.0.0.1:{tls}"
cacert = "{ca}"
password_env = "RESPLAB_TEST_PW"

[[variant]]
name = "address"
address = "localhost:{tls}"
tls = true
cacert = "{ca}"
user = "loader"
password_env = "RESPLAB_TEST_PW"

[[workload]]
name = "set"
tests = "set,get"
clients = 2
"#,
            tls = s.tls_port
        ),
    )
    .unwrap();
    let db = dir.path().join("r.db");
    let o = run_db(
        &["experiment", "run", file.to_str().unwrap()],
        &db,
        &[("RESPLAB_TEST_PW", password)],
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(!out.contains(password));
    let store = Store::open(&db).unwrap();
    let info = store.experiment("tls-ab").unwrap();
    let trials = store.trials(info.id).unwrap();
    assert_eq!(trials.len(), 4);
    for t in &trials {
        assert!(t.valid, "{t:?}");
        let r = store.run_record(t.id).unwrap();
        assert!(r.config["engine"]["tls"].is_object(), "{}", r.config);
        assert_eq!(r.config["engine"]["auth"], true);
        assert_eq!(r.totals.errors, 0);
    }
    drop(store);
    let bytes = std::fs::read(&db).unwrap();
    assert!(
        !bytes
            .windows(password.len())
            .any(|w| w == password.as_bytes()),
        "the password is in the SQLite file"
    );
    // A password in the uri is refused, and so is a missing variable.
    let o = run_db(&["experiment", "run", file.to_str().unwrap()], &db, &[]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("RESPLAB_TEST_PW is not set"),
        "{}",
        text(&o)
    );
    let with_pw = std::fs::read_to_string(&file)
        .unwrap()
        .replace("rediss://loader@", &format!("rediss://loader:{password}@"));
    std::fs::write(&file, with_pw).unwrap();
    let o = run_db(
        &["experiment", "run", file.to_str().unwrap()],
        &db,
        &[("RESPLAB_TEST_PW", password)],
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("password_env"), "{}", text(&o));
}

/// A protected server's `requirepass` and an ACL user's password appear in no byte of the
/// store, the export, the report, compare or the terminal output of any of them, and the
/// config check says a differing password differs without showing it.
#[test]
fn a_protected_servers_passwords_are_in_no_stored_or_shown_byte() {
    let _lane = crate::common::shared();
    let requirepass = "rp-secret-4471";
    let user_pw = "alice-secret-8812";
    let plain = resplab_testkit::redis::RedisServer::start().unwrap();
    let protected = resplab_testkit::redis::RedisServer::start_with(
        &[
            "--requirepass",
            requirepass,
            "--user",
            "alice",
            "on",
            &format!(">{user_pw}"),
            "~*",
            "&*",
            "+@all",
        ],
        false,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pw.toml");
    std::fs::write(
        &file,
        format!(
            r#"
[experiment]
name = "pw-ab"
rounds = 2
test_time = "300ms"
seed = 5
client_cpu_limit = 1.0

[[variant]]
name = "open"
address = "127.0.0.1:{plain}"

[[variant]]
name = "protected"
address = "127.0.0.1:{protected}"
user = "alice"
password_env = "RESPLAB_TEST_PW"

[[workload]]
name = "set"
tests = "set"
"#,
            plain = plain.port(),
            protected = protected.port()
        ),
    )
    .unwrap();
    let db = dir.path().join("pw.db");
    let env = [("RESPLAB_TEST_PW", user_pw)];
    let mut shown = String::new();
    let o = run_db(&["experiment", "run", file.to_str().unwrap()], &db, &env);
    shown.push_str(&text(&o));
    crate::common::assert_ok(&o);
    assert!(
        text(&o).contains("protected: requirepass differs from the baseline (value hidden)"),
        "{}",
        text(&o)
    );
    let report = dir.path().join("pw.md");
    for args in [
        vec!["experiment", "export", "pw-ab"],
        vec!["experiment", "status", "pw-ab"],
        vec!["compare", "db:pw-ab"],
        vec!["report", "pw-ab", "-o", report.to_str().unwrap()],
    ] {
        let o = run_db(&args, &db, &env);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        shown.push_str(&text(&o));
    }
    shown.push_str(&std::fs::read_to_string(&report).unwrap());
    let stored = std::fs::read(&db).unwrap();
    for secret in [requirepass, user_pw] {
        assert!(!shown.contains(secret), "{secret} was shown:\n{shown}");
        assert!(
            !stored.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "{secret} is in the SQLite file"
        );
    }
}

/// An open-loop experiment is judged by its documented `send_lag_limit` alone: with a
/// generous limit its trials are valid, and an invalid trial's message quotes the limit
/// that was applied.
#[test]
fn an_open_loop_experiment_is_judged_by_its_send_lag_limit() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let write = |limit: &str| {
        let file = dir
            .path()
            .join(format!("ol-{}.toml", limit.replace(' ', "")));
        std::fs::write(
            &file,
            format!(
                r#"
[experiment]
name = "ol-{name}"
rounds = 2
test_time = "500ms"
seed = 6
client_cpu_limit = 1.0
send_lag_limit = "{limit}"
max_reruns = {reruns}

[[variant]]
name = "a"
server = "redis-server --port {{port}} --save '' --appendonly no --dir {{dir}}"

[[variant]]
name = "b"
server = "redis-server --port {{port}} --save '' --appendonly no --dir {{dir}}"

[[workload]]
name = "get"
tests = "get"
rate = 1000
clients = 20
"#,
                name = limit.replace(' ', ""),
                // A request still in flight on a starved machine can leave one due
                // request unsent at the end: a rerun is allowed for that.
                reruns = if limit == "1us" { 0 } else { 3 }
            ),
        )
        .unwrap();
        file
    };
    let db = dir.path().join("ol.db");
    let generous = write("100ms");
    let o = run_db(&["experiment", "run", generous.to_str().unwrap()], &db, &[]);
    crate::common::assert_ok(&o);
    let store = Store::open(&db).unwrap();
    let info = store.experiment("ol-100ms").unwrap();
    let status = store.status("ol-100ms").unwrap();
    assert_eq!(status.valid_rounds(), 2, "{}", text(&o));
    // Lag far above the bench's own 1 ms limit at 1,000/s never invalidates a trial here.
    let trials = store.trials(info.id).unwrap();
    assert!(
        trials.iter().filter(|t| t.valid).count() >= 4,
        "{}",
        text(&o)
    );
    drop(store);
    // A limit no run can meet: invalid, and the message quotes that limit.
    let strict = write("1us");
    let o = run_db(&["experiment", "run", strict.to_str().unwrap()], &db, &[]);
    assert!(text(&o).contains("(limit 1 us)"), "{}", text(&o));
}
