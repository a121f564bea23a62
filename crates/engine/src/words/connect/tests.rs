//! The shared converter read by both routes (flag names and file positions as places),
//! and bench's wording of its refusals.

use super::rules::*;
use super::*;
use std::path::PathBuf;

/// A file position, as an experiment file's route gives it.
type Pos = (&'static str, usize);

fn flags() -> ConnectionWords<&'static str> {
    ConnectionWords::new(UriReading::Given)
}

fn file() -> ConnectionWords<Pos> {
    ConnectionWords::new(UriReading::Stored)
}

/// A file that exists but holds no certificate.
fn not_pem() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")
}

#[test]
fn a_lone_word_is_a_password_on_the_command_line_and_a_user_in_a_file() {
    let mut w = flags();
    w.uri = Some(Said::new("redis://SECRET@h:7/3".into(), "--uri"));
    let c = w.convert().unwrap();
    assert_eq!((c.user, c.password.as_deref()), (None, Some("SECRET")));
    assert_eq!(c.db, Some(3));
    assert_eq!(
        c.target,
        Some(Target::Tcp {
            host: "h".into(),
            port: 7
        })
    );
    let mut w = file();
    w.uri = Some(Said::new("redis://loader@h:7".into(), ("uri", 4)));
    let c = w.convert().unwrap();
    assert_eq!((c.user.as_deref(), c.password), (Some("loader"), None));
}

#[test]
fn a_file_refuses_a_password_and_a_database_number_in_its_uri() {
    let mut w = file();
    w.uri = Some(Said::new("redis://u:pw@h:7".into(), ("uri", 9)));
    assert_eq!(
        w.target().unwrap_err(),
        Problem::StoredPassword { at: ("uri", 9) }
    );
    w.uri = Some(Said::new("redis://u@h:7/2".into(), ("uri", 9)));
    let Problem::StoredDb { at, shown } = w.convert().unwrap_err() else {
        panic!("expected the database number refused")
    };
    assert_eq!(at, ("uri", 9));
    assert_eq!(shown, "redis://***@h:7/2");
    // The same URIs on the command line are taken.
    let mut w = flags();
    w.uri = Some(Said::new("redis://u:pw@h:7/2".into(), "--uri"));
    let c = w.convert().unwrap();
    assert_eq!(
        (c.user.as_deref(), c.password.as_deref()),
        (Some("u"), Some("pw"))
    );
    assert_eq!(c.db, Some(2));
}

#[test]
fn target_words_conflict_by_place() {
    let mut w = flags();
    w.socket = Some(Said::new("/tmp/s".into(), "--socket"));
    w.host = Some(Said::new("h".into(), "--host"));
    assert_eq!(
        w.target().unwrap_err(),
        Problem::Conflict {
            word: "--socket",
            with: "--host"
        }
    );
    let mut w = flags();
    w.uri = Some(Said::new("redis://h".into(), "--uri"));
    w.port = Some(Said::new(7, "--port"));
    assert_eq!(
        w.target().unwrap_err(),
        Problem::Conflict {
            word: "--uri",
            with: "--port"
        }
    );
    let mut w = file();
    w.uri = Some(Said::new("redis://h".into(), ("uri", 2)));
    w.elsewhere = Some(("server", 1));
    assert_eq!(
        w.target().unwrap_err(),
        Problem::Conflict {
            word: ("uri", 2),
            with: ("server", 1)
        }
    );
}

#[test]
fn a_user_needs_a_password_only_when_one_can_be_given() {
    let mut w = flags();
    w.user = Some(Said::new("bob".into(), "--user"));
    assert_eq!(
        w.convert().unwrap_err(),
        Problem::UserWithoutPassword {
            at: "--user",
            user: "bob".into()
        }
    );
    let mut w = file();
    w.user = Some(Said::new("bob".into(), ("user", 3)));
    assert_eq!(w.convert().unwrap().user.as_deref(), Some("bob"));
}

#[test]
fn tls_settings_need_tls_files_and_a_target() {
    let mut w = file();
    w.tls.insecure = Some(Said::new(false, ("insecure", 5)));
    assert_eq!(
        w.convert().unwrap_err(),
        Problem::TlsSettingWithoutTls {
            at: ("insecure", 5)
        }
    );
    let mut w = file();
    w.host = Some(Said::new("h".into(), ("address", 1)));
    w.tls.on = Some(Said::new(true, ("tls", 2)));
    w.tls.cacert = Some(Said::new("/nonexistent.pem".into(), ("cacert", 3)));
    assert!(matches!(
        w.convert().unwrap_err(),
        Problem::BadPath {
            at: ("cacert", 3),
            want: PathKind::File,
            exists: false,
            ..
        }
    ));
    w.tls.cacert = Some(Said::new(env!("CARGO_MANIFEST_DIR").into(), ("cacert", 3)));
    assert!(matches!(
        w.convert().unwrap_err(),
        Problem::BadPath { exists: true, .. }
    ));
    w.tls.cacert = Some(Said::new(not_pem(), ("cacert", 3)));
    let Problem::TlsRefused { at, why } = w.convert().unwrap_err() else {
        panic!("expected the TLS library's refusal")
    };
    assert_eq!(at, ("tls", 2));
    assert!(why.contains("PEM"), "{why}");
    w.tls.insecure = Some(Said::new(true, ("insecure", 4)));
    assert_eq!(
        w.convert().unwrap_err(),
        Problem::InsecureWithCa {
            at: ("insecure", 4),
            with: ("cacert", 3)
        }
    );
    w.tls.cacert = None;
    w.tls.key = Some(Said::new(not_pem(), ("key", 6)));
    assert_eq!(
        w.convert().unwrap_err(),
        Problem::HalfClientCertificate { at: ("key", 6) }
    );
}

#[test]
fn tls_goes_over_tcp_to_a_target() {
    let mut w = flags();
    w.tls.on = Some(Said::new(true, "--tls"));
    w.tls.insecure = Some(Said::new(true, "--insecure"));
    assert_eq!(
        w.convert().unwrap_err(),
        Problem::TlsWithoutTarget { at: "--tls" }
    );
    w.socket = Some(Said::new("/tmp/s".into(), "--socket"));
    assert_eq!(
        w.convert().unwrap_err(),
        Problem::TlsOverSocket { at: "--tls" }
    );
    let mut w = flags();
    w.uri = Some(Said::new("rediss://h:7".into(), "--uri"));
    w.tls.insecure = Some(Said::new(true, "--insecure"));
    let c = w.convert().unwrap();
    assert!(c.tls.is_some_and(|t| t.insecure));
}

#[test]
fn wires_and_what_respb_goes_with() {
    assert_eq!(
        wire(&Said::new(" respb ".into(), "--protocol")),
        Ok(Wire::Respb)
    );
    assert_eq!(
        wire(&Said::new("resp3".into(), ("protocol", 1))),
        Err(Problem::UnknownWire {
            at: ("protocol", 1),
            found: "resp3".into()
        })
    );
    let fits = RespbWith {
        protocol: Protocol::Resp2,
        tls: false,
        cluster: false,
        target: true,
    };
    assert_eq!(respb_fits("--protocol", fits), Ok(()));
    let blocked = |with| match respb_fits("--protocol", with) {
        Err(Problem::RespbWith { blocker, .. }) => Some(blocker),
        _ => None,
    };
    let all = RespbWith {
        protocol: Protocol::Resp3,
        tls: true,
        cluster: true,
        target: false,
    };
    assert_eq!(blocked(all), Some(RespbBlocker::Resp3));
    let no_target = RespbWith {
        target: false,
        ..fits
    };
    assert_eq!(blocked(no_target), Some(RespbBlocker::NoTarget));
}

type Edit = fn(&mut BenchWords);

#[test]
fn bench_words_every_refusal_by_its_flag() {
    let cases: [(Edit, &str); 6] = [
        (
            |a| a.uri = Some("redis://bob:p/q@h:bad".into()),
            "invalid value 'redis://bob:***@h:bad' for --uri: expected redis[s]://[user[:password]@]host[:port][/db] (the port must be a whole number from 1 to 65535)",
        ),
        (
            |a| {
                a.socket = Some("/tmp/s".into());
                a.uri = Some("redis://h".into());
            },
            "--socket cannot be used together with --host/--uri",
        ),
        (
            |a| a.user = Some("bob".into()),
            "invalid value 'bob' for --user: expected a password too (-a or REDISCLI_AUTH)",
        ),
        (
            |a| a.sni = Some("x".into()),
            "invalid value '' for --sni: expected --tls (or a rediss:// URI) as well",
        ),
        (
            |a| {
                a.host = Some("h".into());
                a.server_bin = Some("redis-server".into());
            },
            "--server-bin cannot be used together with a target (--host, --port, --socket, --uri)",
        ),
        (
            |a| a.protocol = "respb".into(),
            "invalid value 'respb' for --protocol: expected a target as well (--host/--port of a RESPB port, such as resplab serve --respb-port): the throwaway server has none",
        ),
    ];
    for (edit, expected) in cases {
        let mut a = BenchWords {
            resp: "2".into(),
            protocol: "resp".into(),
            ..BenchWords::default()
        };
        edit(&mut a);
        assert_eq!(resolve_connection(&a).unwrap_err().to_string(), expected);
    }
}
