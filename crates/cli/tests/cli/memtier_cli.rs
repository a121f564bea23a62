//! `resplab memtier` end to end against a real redis-server: memtier's counting, its
//! outputs read back by resplab's own importers (the JSON with the same values, the HDR
//! files as HdrHistogram files), `-o`, refusals, and invocation as `memtier_benchmark`.

use resplab_results::import::{import_bytes, Ctx, Format, Interner, PlainOptions};
use resplab_testkit::redis::RedisServer;
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

fn server() -> RedisServer {
    RedisServer::start().expect("redis-server (installed by scripts/setup.sh)")
}

fn memtier(server: &RedisServer, args: &[&str], dir: &Path) -> (i32, String, String) {
    let port = server.port().to_string();
    let mut all = vec!["memtier", "-s", "127.0.0.1", "-p", &port];
    all.extend_from_slice(args);
    crate::common::run_in(&all, dir)
}

fn import(bytes: &[u8]) -> resplab_results::import::Imported {
    let mut interner = Interner::default();
    let mut ctx = Ctx {
        label: Arc::from("x"),
        file: Arc::from("file"),
        interner: &mut interner,
    };
    import_bytes(bytes, &mut ctx, &PlainOptions::default()).unwrap()
}

#[test]
fn json_and_hdr_files_read_back_with_the_same_values() {
    let _lane = crate::common::shared();
    let redis = server();
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = memtier(
        &redis,
        &[
            "-t",
            "2",
            "-c",
            "3",
            "-n",
            "100",
            "--ratio=1:3",
            "--key-maximum",
            "50",
            "--json-out-file=out.json",
            "--hdr-file-prefix",
            "lat",
            "-o",
            "out.txt",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.is_empty(), "-o takes the report: {stdout}");
    let text = std::fs::read_to_string(dir.path().join("out.txt")).unwrap();
    assert!(
        text.starts_with(
            "2         Threads\n3         Connections per thread\n100       Requests per client\n"
        ),
        "{text}"
    );
    assert!(text.contains("\nALL STATS\n") && text.contains("Request Latency Distribution"));

    let bytes = std::fs::read(dir.path().join("out.json")).unwrap();
    let doc: Value = serde_json::from_slice(&bytes).unwrap();
    let all = &doc["ALL STATS"];
    // memtier's counting: 2 threads x 3 clients x 100 requests, SET:GET 1:3.
    assert_eq!(all["Totals"]["Count"], 600);
    assert_eq!(all["Sets"]["Count"], 150);
    assert_eq!(all["Gets"]["Count"], 450);
    let hits = all["Gets"]["Hits/sec"].as_f64().unwrap();
    let misses = all["Gets"]["Misses/sec"].as_f64().unwrap();
    let ops = all["Gets"]["Ops/sec"].as_f64().unwrap();
    assert!(
        hits > 0.0 && misses > 0.0 && (hits + misses - ops).abs() < 0.05,
        "{hits} {misses} {ops}"
    );
    assert_eq!(doc["run information"]["Connections per thread"], 3);
    assert_eq!(doc["configuration"]["clients"], 3);

    // resplab's memtier importer reads the same values.
    let imported = import(&bytes);
    assert_eq!(imported.format, Some(Format::Memtier));
    let mut checked = 0;
    for o in imported.observations.iter() {
        let key = match o.metric.name.as_str() {
            "ops_per_sec" => "Ops/sec",
            "avg_latency_ms" => "Average Latency",
            _ => continue,
        };
        let want = all[o.workload.as_ref()][key].as_f64().unwrap();
        assert!(
            (o.value - want).abs() < 1e-9,
            "{} {key}: {} vs {want}",
            o.workload,
            o.value
        );
        checked += 1;
    }
    assert!(checked >= 6, "{checked}");
    let totals = imported
        .histograms
        .iter()
        .find(|h| h.workload == "Totals")
        .unwrap();
    assert_eq!(totals.unit_ns, 1000);

    // The HDR files are HdrHistogram files: a percentile distribution and a log.
    for (name, format) in [
        ("lat_FULL_RUN_1.txt", Format::HdrPercentiles),
        ("lat_FULL_RUN_1.hgrm", Format::HdrLog),
        ("lat_GET_command_run_1.txt", Format::HdrPercentiles),
    ] {
        let got = import(&std::fs::read(dir.path().join(name)).unwrap());
        assert_eq!(got.format, Some(format), "{name}");
        assert!(!got.observations.is_empty(), "{name}");
    }
}

#[test]
fn run_count_prints_best_worst_and_average() {
    let _lane = crate::common::shared();
    let redis = server();
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = memtier(
        &redis,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "50",
            "-x",
            "2",
            "--print-all-runs",
            "--hide-histogram",
            "--command=SET __key__ __data__",
            "--command=GET __key__",
            "--json-out-file",
            "m.json",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{stderr}");
    for title in [
        "RUN #1 RESULTS",
        "RUN #2 RESULTS",
        "BEST RUN RESULTS",
        "WORST RUN RESULTS",
        "AGGREGATED AVERAGE RESULTS (2 runs)",
    ] {
        assert!(
            stdout.contains(&format!("\n{title}\n")),
            "{title}: {stdout}"
        );
    }
    assert!(
        stdout.contains("\nSets ") && stdout.contains("\nGets "),
        "{stdout}"
    );
    assert!(!stdout.contains("Request Latency Distribution"));
    let doc: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("m.json")).unwrap()).unwrap();
    assert_eq!(doc["RUN #2 RESULTS"]["Totals"]["Count"], 100);
    assert_eq!(doc["resplab"]["runs"].as_array().map(Vec::len), Some(2));
    // The importer takes the per-run sections as trials.
    assert_eq!(
        import(&serde_json::to_vec(&doc).unwrap())
            .observations
            .iter()
            .filter(|o| o.workload.as_ref() == "Totals" && o.metric.name == "ops_per_sec")
            .count(),
        2
    );
}

#[test]
fn refused_and_malformed_lines_exit_2_with_one_line_before_any_load() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.txt"),
        "OK\n1.0 [0 127.0.0.1:1] \"GET\" \"unterminated\n",
    )
    .unwrap();
    for (args, says) in [
        (
            vec!["memtier", "--data-import", "f.txt"],
            "--data-import is not supported by resplab memtier: resplab has no data import",
        ),
        (
            vec!["memtier", "--multi-key-get", "2"],
            "--multi-key-get is not supported by resplab memtier: memtier_benchmark sends no MGET",
        ),
        (vec!["memtier", "--threads", "x"], "invalid --threads 'x'"),
        (
            vec!["memtier", "--expiry-range", "0-0"],
            "invalid --expiry-range '0-0': expected MIN-MAX whole seconds",
        ),
        (
            vec![
                "memtier",
                "--command=SET __key__ __data__",
                "--data-size-range=8-64",
                "--data-size-pattern=S",
                "--key-minimum=1",
            ],
            "as if its key were 0",
        ),
        (vec!["memtier", "--bogus"], "unknown option '--bogus'"),
        (
            vec![
                "memtier",
                "--monitor-input",
                "bad.txt",
                "--command=__monitor_line@__",
            ],
            "--monitor-input bad.txt:2: expected a MONITOR line",
        ),
        // A bad output path fails before connecting (nothing listens on port 1).
        (
            vec![
                "memtier",
                "-p",
                "1",
                "--json-out-file",
                "no/such/dir/x.json",
            ],
            "--json-out-file no/such/dir/x.json: cannot write there",
        ),
    ] {
        let (code, stdout, stderr) = crate::common::run_in(&args, dir.path());
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}");
        assert_eq!(stderr.trim().lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    let (code, stdout, _) = crate::common::run_in(&["memtier", "--help"], dir.path());
    assert_eq!(code, 0);
    assert!(stdout.contains("--distinct-client-seed"));
}

#[test]
fn a_link_named_memtier_benchmark_runs_the_memtier_mode() {
    let _lane = crate::common::shared();
    let redis = server();
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = crate::common::run_in(&["install-links", "."], dir.path());
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("memtier_benchmark ->"), "{stdout}");
    // Again: the existing link is replaced.
    assert_eq!(
        crate::common::run_in(&["install-links", "."], dir.path()).0,
        0
    );
    let link = dir.path().join("memtier_benchmark");
    let out = std::process::Command::new(&link)
        .args([
            "-s",
            "127.0.0.1",
            "-p",
            &redis.port().to_string(),
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "30",
            "--hide-histogram",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    crate::common::assert_ok(&out);
    assert!(
        text.contains("30        Requests per client") && text.contains("ALL STATS"),
        "{text}"
    );
}

#[test]
fn bench_says_when_its_line_looks_like_memtiers() {
    let _lane = crate::common::shared();
    let redis = server();
    let dir = tempfile::tempdir().unwrap();
    let hint = "memtier counts -c per thread and -n per client; run `resplab memtier …` for memtier's meaning";
    let port = redis.port().to_string();
    let (code, _, stderr) = crate::common::run_in(
        &[
            "bench",
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "--threads",
            "4",
            "-c",
            "2",
            "-n",
            "20",
            "-t",
            "set",
            "-q",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stderr.contains("--threads 4 with -c 2") && stderr.contains(hint),
        "{stderr}"
    );
    let (code, _, stderr) = crate::common::run_in(&["bench", "--distinct-client-seed"], dir.path());
    assert_eq!(code, 2);
    assert!(stderr.contains(hint), "{stderr}");
    // A line that does not look like memtier's gets no hint.
    let (code, _, stderr) = crate::common::run_in(
        &[
            "bench",
            "-h",
            "127.0.0.1",
            "-p",
            &port,
            "--threads",
            "2",
            "-c",
            "8",
            "-n",
            "20",
            "-t",
            "set",
            "-q",
        ],
        dir.path(),
    );
    assert_eq!(code, 0);
    assert!(!stderr.contains(hint), "{stderr}");
}

#[test]
fn unix_socket_password_and_database_are_memtiers() {
    let _lane = crate::common::shared();
    use resplab_testkit::client::Reply;
    let redis = RedisServer::start_with(&["--requirepass", "s3cret"], true)
        .expect("redis-server (installed by scripts/setup.sh)");
    let socket = redis.socket_path().unwrap().display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = crate::common::run_in(
        &[
            "memtier",
            "-S",
            &socket,
            "-a",
            "s3cret",
            "--select-db",
            "3",
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "25",
            "--ratio",
            "1:0",
            "--key-pattern",
            "P:P",
            "--hide-histogram",
            "--json-out-file",
            "a.json",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{stderr}");
    let mut c = redis.client().unwrap();
    c.cmd(&["AUTH", "s3cret"]).unwrap();
    c.cmd(&["SELECT", "3"]).unwrap();
    assert!(matches!(c.cmd(&["DBSIZE"]).unwrap(), Reply::Integer(n) if n > 0));
    c.cmd(&["SELECT", "0"]).unwrap();
    assert!(matches!(c.cmd(&["DBSIZE"]).unwrap(), Reply::Integer(0)));
    // The password is never written.
    let json = std::fs::read_to_string(dir.path().join("a.json")).unwrap();
    assert!(!json.contains("s3cret"));
    // A wrong password ends the run with one line and exit 2.
    let (code, _, stderr) = crate::common::run_in(
        &["memtier", "-S", &socket, "-a", "wrong", "-n", "5"],
        dir.path(),
    );
    assert_eq!(code, 2, "{stderr}");
    assert_eq!(
        stderr
            .trim()
            .lines()
            .filter(|l| !l.starts_with("resplab memtier: "))
            .count(),
        1,
        "{stderr}"
    );
}

#[test]
fn cluster_mode_runs_against_a_cluster_with_memtiers_columns() {
    let _lane = crate::common::shared();
    let cluster = resplab_testkit::cluster::RedisCluster::start(3, 0)
        .expect("a local Redis Cluster (redis-server installed by scripts/setup.sh)");
    let seed = cluster.seed_addr();
    let (host, port) = seed.rsplit_once(':').unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = crate::common::run_in(
        &[
            "memtier",
            "--cluster-mode",
            "-s",
            host,
            "-p",
            port,
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "100",
            "--ratio",
            "1:1",
            "--key-maximum",
            "1000",
            "--hide-histogram",
        ],
        dir.path(),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("Misses/sec    MOVED/sec      ASK/sec    Avg. Latency"),
        "{stdout}"
    );
    let totals = stdout.lines().find(|l| l.starts_with("Totals")).unwrap();
    assert!(!totals.contains("---"), "{totals}");
    let mut written = 0;
    for m in 0..cluster.masters() {
        let mut c = cluster.master(m).client().unwrap();
        if let Ok(resplab_testkit::client::Reply::Integer(n)) = c.cmd(&["DBSIZE"]) {
            assert!(n > 0, "master {m} got no key");
            written += n;
        }
    }
    assert!(written > 0);
}

#[test]
fn tls_options_are_memtiers() {
    let _lane = crate::common::shared();
    let s = resplab_testkit::tls::TlsRedis::start(false)
        .expect("redis-server with TLS (installed by scripts/setup.sh)");
    let tls = s.tls_port.to_string();
    let ca = s.files.ca.display().to_string();
    let other = s.files.other_ca.display().to_string();
    let dir = tempfile::tempdir().unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec![
            "memtier",
            "-s",
            "127.0.0.1",
            "-p",
            &tls,
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "50",
            "--hide-histogram",
        ];
        a.extend_from_slice(extra);
        crate::common::run_in(&a, dir.path())
    };
    let (code, stdout, stderr) = run(&["--tls", "--cacert", &ca]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("ALL STATS"));
    // A certificate from another CA fails, unless --tls-skip-verify.
    let (code, _, stderr) = run(&["--tls", "--cacert", &other]);
    assert_eq!(code, 2, "{stderr}");
    let (code, _, stderr) = run(&["--tls", "--cacert", &other, "--tls-skip-verify"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("certificate is not verified"), "{stderr}");
}
