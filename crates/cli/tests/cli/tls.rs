//! TLS end to end: `resplab bench` against a real redis-server with a TLS port and
//! certificates made by the test: CA verification, mutual TLS, `--insecure`, and every
//! bad case with its one-line error and exit code 2.

use crate::common::{resplab, text};
use resplab_testkit::tls::TlsRedis;
use serde_json::Value;

fn ok_json(args: &[&str]) -> (Value, String) {
    let out = resplab(args);
    crate::common::assert_ok(&out);
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON record on stdout");
    (v, String::from_utf8_lossy(&out.stderr).into_owned())
}

/// `bench` with its record on stdout and no progress line.
const BENCH_JSON: [&str; 4] = ["bench", "--no-progress", "--json", "-"];

/// [`ok_json`] of `bench` with [`BENCH_JSON`] and `args`.
fn bench_json(args: &[&str]) -> (Value, String) {
    ok_json(&[&BENCH_JSON[..], args].concat())
}

fn fails_with(args: &[&str], want: &str) {
    let out = resplab(args);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains(want), "expected {want:?} in: {err}");
    let errors: Vec<&str> = err.lines().filter(|l| !l.contains(": seed ")).collect();
    assert_eq!(errors.len(), 1, "one line: {err}");
}

#[test]
fn tls_with_ca_verification_insecure_and_the_bad_cases() {
    let _lane = crate::common::shared();
    let s = TlsRedis::start(false).unwrap();
    let tls = s.tls_port.to_string();
    let plain = s.server.port().to_string();
    let ca = s.files.ca.display().to_string();
    let other = s.files.other_ca.display().to_string();
    let base = [&BENCH_JSON[..], &["-t", "set,get", "-n", "2000", "-c", "4"]].concat();

    // Verified against the test CA, by IP and by name, by flags and by rediss://.
    for host in ["127.0.0.1", "localhost"] {
        let mut a = base.to_vec();
        a.extend(["--tls", "--cacert", &ca, "-h", host, "-p", &tls]);
        let (v, _) = ok_json(&a);
        assert_eq!(v["totals"]["requests"].as_u64(), Some(4000));
        assert_eq!(v["totals"]["errors"].as_u64(), Some(0));
        assert_eq!(v["config"]["tls"]["insecure"].as_bool(), Some(false));
        assert!(v["connections"]["setup_us"]["p50"].as_f64().unwrap() > 0.0);
        assert!(v["connections"]["setup_histogram"].is_string());
    }
    let uri = format!("rediss://127.0.0.1:{tls}");
    let mut a = base.to_vec();
    a.extend(["-u", &uri, "--cacert", &ca]);
    ok_json(&a);
    // A folder of CA certificates works as well.
    let ca_dir = s.files.dir.join("cas");
    std::fs::create_dir_all(&ca_dir).unwrap();
    std::fs::copy(&s.files.ca, ca_dir.join("a.pem")).unwrap();
    let ca_dir = ca_dir.display().to_string();
    let mut a = base.to_vec();
    a.extend(["--tls", "--cacertdir", &ca_dir, "-p", &tls]);
    ok_json(&a);

    // Deep pipelines of large values: writes that the socket takes only in part, and
    // replies that span many TLS records.
    let (v, _) = bench_json(&[
        "-t", "set", "-n", "400", "-c", "2", "-P", "100", "-d", "262144", "--tls", "--cacert", &ca,
        "-p", &tls,
    ]);
    assert_eq!(v["totals"]["requests"].as_u64(), Some(400));
    assert_eq!(v["totals"]["errors"].as_u64(), Some(0));

    // --insecure: works with an unknown CA, and says so everywhere.
    let mut a = base.to_vec();
    a.extend(["--tls", "--insecure", "-p", &tls]);
    let (v, stderr) = ok_json(&a);
    assert!(stderr.contains("WARNING: --insecure"), "{stderr}");
    assert_eq!(v["config"]["tls"]["insecure"].as_bool(), Some(true));
    assert!(v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w["kind"] == "tls_insecure"));

    let bench = |extra: &[&str], want: &str| {
        let mut a = vec![
            "bench",
            "--no-progress",
            "-t",
            "ping_mbulk",
            "-n",
            "10",
            "-c",
            "1",
        ];
        a.extend_from_slice(extra);
        fails_with(&a, want);
    };
    // A CA that did not sign the server's certificate.
    bench(&["--tls", "--cacert", &other, "-p", &tls], "not trusted");
    // The certificate is for localhost and 127.0.0.1, not for this name.
    bench(
        &[
            "--tls",
            "--cacert",
            &ca,
            "-p",
            &tls,
            "--sni",
            "cache.example.com",
        ],
        "not valid for the name",
    );
    // TLS to the plain port, plain to the TLS port.
    bench(&["--tls", "--cacert", &ca, "-p", &plain], "plain-TCP port");
    bench(&["-p", &tls], "TLS port");
    // Flags that need --tls, files that are not there, a half client certificate.
    bench(
        &["--cacert", &ca, "-p", &tls],
        "--tls (or a rediss:// URI) as well",
    );
    bench(
        &["--tls", "--cacert", "/nonexistent.pem", "-p", &tls],
        "--cacert",
    );
    bench(
        &[
            "--tls",
            "--cert",
            &s.files.client_cert.display().to_string(),
            "-p",
            &tls,
        ],
        "--cert and --key together",
    );
    bench(
        &["--tls", "--tls-protocols", "TLSv1.0", "-p", &tls],
        "TLSv1.2 and/or TLSv1.3",
    );
    bench(
        &["--tls", "--tls-ciphersuites", "NOPE", "-p", &tls],
        "cipher suite",
    );
}

#[test]
fn mutual_tls_needs_the_client_certificate() {
    let _lane = crate::common::shared();
    let s = TlsRedis::start(true).unwrap();
    let tls = s.tls_port.to_string();
    let ca = s.files.ca.display().to_string();
    let cert = s.files.client_cert.display().to_string();
    let key = s.files.client_key.display().to_string();
    let (v, _) = bench_json(&[
        "-t",
        "set",
        "-n",
        "1000",
        "-c",
        "2",
        "--tls",
        "--cacert",
        &ca,
        "--cert",
        &cert,
        "--key",
        &key,
        "-p",
        &tls,
        "--tls-protocols",
        "TLSv1.3",
    ]);
    assert_eq!(v["totals"]["requests"].as_u64(), Some(1000));
    assert_eq!(
        v["config"]["tls"]["client_certificate"].as_bool(),
        Some(true)
    );
    fails_with(
        &[
            "bench",
            "--no-progress",
            "-t",
            "set",
            "-n",
            "10",
            "-c",
            "1",
            "--tls",
            "--cacert",
            &ca,
            "-p",
            &tls,
        ],
        "--cert and --key",
    );
}

/// An ACL user with limited permissions over rediss://: commands it may not run are
/// counted as NOPERM by name, a wrong password is WRONGPASS by name, and the password
/// appears in no output or file.
#[test]
fn acl_user_over_tls_errors_by_name_and_no_password_anywhere() {
    let _lane = crate::common::shared();
    let s = TlsRedis::start(false).unwrap();
    let secret = "Tls-Acl-s3cret-77";
    let mut admin = s.server.client().unwrap();
    let acl = admin
        .cmd(&[
            "ACL",
            "SETUSER",
            "bencher",
            "on",
            &format!(">{secret}"),
            "~*",
            "+set",
            "+get",
            "+ping",
            "+hello",
            "+auth",
            "+select",
            "+info",
            "+client",
            "+time",
        ])
        .unwrap();
    assert_eq!(acl.as_text().as_deref(), Some("OK"));
    let ca = s.files.ca.display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json").display().to_string();
    let hdr = dir.path().join("h").display().to_string();
    let uri = format!("rediss://bencher:{secret}@127.0.0.1:{}", s.tls_port);
    let out = resplab(&[
        "bench",
        "--no-progress",
        "-u",
        &uri,
        "--cacert",
        &ca,
        "-t",
        "set,get,incr",
        "-n",
        "300",
        "-c",
        "2",
        "--json",
        &json,
        "--hdr-out",
        &hdr,
    ]);
    // INCR is not allowed: the run completes with its errors counted.
    let all = text(&out);
    assert!(!all.contains(secret), "password leaked: {all}");
    let record = std::fs::read_to_string(&json).unwrap();
    assert!(!record.contains(secret));
    let v: Value = serde_json::from_str(&record).unwrap();
    assert_eq!(
        v["commands"]["INCR"]["error_kinds"]["NOPERM"].as_u64(),
        Some(300),
        "{}",
        v["commands"]["INCR"]
    );
    assert_eq!(v["commands"]["SET"]["errors"].as_u64(), Some(0));
    for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
        let bytes = std::fs::read(f.path()).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{:?}",
            f.path()
        );
    }
    // CSV layout too.
    let out = resplab(&[
        "bench",
        "--no-progress",
        "-u",
        &uri,
        "--cacert",
        &ca,
        "-t",
        "get",
        "-n",
        "50",
        "-c",
        "1",
        "--csv",
    ]);
    crate::common::assert_ok(&out);
    assert!(!text(&out).contains(secret));
    // A wrong password is named, and not echoed.
    let wrong = format!("rediss://bencher:not-{secret}@127.0.0.1:{}", s.tls_port);
    let out = resplab(&[
        "bench",
        "--no-progress",
        "-u",
        &wrong,
        "--cacert",
        &ca,
        "-t",
        "get",
        "-n",
        "5",
        "-c",
        "1",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).contains("WRONGPASS"), "{}", text(&out));
    assert!(!text(&out).contains(secret));
}

/// A server stopped (SIGSTOP) again and again while 3 MB requests stream to it over TLS:
/// writes meet a full socket mid-request and resume, replies wait and come in bursts,
/// and the run still ends with every request answered once, no error and no reconnect.
#[test]
fn a_server_that_stops_reading_mid_run_loses_nothing_over_tls() {
    let _lane = crate::common::shared();
    let s = TlsRedis::start(false).unwrap();
    let tls = s.tls_port.to_string();
    let ca = s.files.ca.display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("r.json");
    let child = std::process::Command::new(crate::common::BIN)
        .args([
            "bench",
            "--no-progress",
            "--tls",
            "--cacert",
            &ca,
            "-p",
            &tls,
            "-t",
            "set",
            "-d",
            "3000000",
            "-n",
            "40",
            "-c",
            "1",
            "-P",
            "1",
            "--json",
            json.to_str().unwrap(),
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Stop the server twice while the load runs, long enough for the client's socket
    // buffers to fill.
    for _ in 0..6 {
        std::thread::sleep(std::time::Duration::from_millis(37));
        s.server.signal("STOP").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(150));
        s.server.signal("CONT").unwrap();
    }
    let o = child.wait_with_output().unwrap();
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let v: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert_eq!(v["totals"]["requests"].as_u64(), Some(40), "{out}");
    assert_eq!(v["totals"]["errors"].as_u64(), Some(0), "{out}");
    assert_eq!(v["connections"]["reconnects"].as_u64(), Some(0), "{out}");
}

/// Certificates as people make them: an expired server certificate is named as expired
/// with its date (not as untrusted), a server's X.509 v1 certificate is named as v1 with
/// how to make a v3 one, and a v1 client certificate (what `openssl x509 -req` makes
/// without an extensions file) works for mutual TLS as it does with redis-cli.
#[test]
fn expired_and_v1_certificates_are_told_right() {
    let _lane = crate::common::shared();
    let s = TlsRedis::start(true).unwrap();
    let f = &s.files;
    let ca = f.ca.display().to_string();
    let dir = f.dir.clone();
    // A v1 certificate for a new key, signed by the test CA, made by openssl.
    let v1 = |name: &str, cn: &str| {
        let key = dir.join(format!("{name}.key"));
        let csr = dir.join(format!("{name}.csr"));
        let cert = dir.join(format!("{name}.pem"));
        let run = |args: &[&str]| {
            let out = std::process::Command::new("openssl")
                .args(args)
                .output()
                .expect("openssl is needed for this test (scripts/setup.sh installs it)");
            assert!(out.status.success(), "openssl {args:?}: {}", text(&out));
        };
        run(&["genrsa", "-out", key.to_str().unwrap(), "2048"]);
        run(&[
            "req",
            "-new",
            "-key",
            key.to_str().unwrap(),
            "-subj",
            &format!("/CN={cn}"),
            "-out",
            csr.to_str().unwrap(),
        ]);
        run(&[
            "x509",
            "-req",
            "-in",
            csr.to_str().unwrap(),
            "-CA",
            &ca,
            "-CAkey",
            f.ca_key.to_str().unwrap(),
            "-CAcreateserial",
            "-days",
            "30",
            "-out",
            cert.to_str().unwrap(),
        ]);
        let pem = std::fs::read_to_string(&cert).unwrap();
        assert!(pem.contains("BEGIN CERTIFICATE"), "{pem}");
        (cert.display().to_string(), key.display().to_string())
    };
    // Mutual TLS with a v1 client certificate.
    let (ccert, ckey) = v1("client-v1", "resplab-client");
    let tls = s.tls_port.to_string();
    let out = resplab(&[
        "bench",
        "--tls",
        "--cacert",
        &ca,
        "--cert",
        &ccert,
        "--key",
        &ckey,
        "-p",
        &tls,
        "-t",
        "ping_inline",
        "-n",
        "200",
        "-c",
        "2",
        "--no-progress",
    ]);
    crate::common::assert_ok(&out);
    // A v1 client certificate with another key: the mismatch is named.
    let (_, other_key) = v1("client-v1b", "resplab-client");
    fails_with(
        &[
            "bench",
            "--tls",
            "--cacert",
            &ca,
            "--cert",
            &ccert,
            "--key",
            &other_key,
            "-p",
            &tls,
            "-t",
            "ping_inline",
            "-n",
            "10",
        ],
        "the key does not fit the certificate",
    );

    // A server presenting an expired certificate.
    let files2 = resplab_testkit::tls::TlsFiles::generate(&dir.join("pki2")).unwrap();
    let (ecert, ekey) = (files2.expired_cert.clone(), files2.expired_key.clone());
    let ca2 = files2.ca.display().to_string();
    let expired = TlsRedis::start_with(files2, &ecert, &ekey, false).unwrap();
    let port = expired.tls_port.to_string();
    fails_with(
        &[
            "bench",
            "--tls",
            "--cacert",
            &ca2,
            "-p",
            &port,
            "-t",
            "ping_inline",
            "-n",
            "10",
        ],
        "expired on 2020-02-01",
    );

    // A server presenting a v1 certificate.
    let (scert, skey) = v1("server-v1", "localhost");
    let files3 = resplab_testkit::tls::TlsFiles::generate(&dir.join("pki3")).unwrap();
    let v1server = TlsRedis::start_with(
        files3,
        std::path::Path::new(&scert),
        std::path::Path::new(&skey),
        false,
    )
    .unwrap();
    let port = v1server.tls_port.to_string();
    fails_with(
        &[
            "bench",
            "--tls",
            "--cacert",
            &ca,
            "-p",
            &port,
            "-t",
            "ping_inline",
            "-n",
            "10",
        ],
        "X.509 v1 certificate",
    );
}
