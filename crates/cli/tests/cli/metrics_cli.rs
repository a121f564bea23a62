//! `--metrics-addr`: the live metrics of a running bench and of `resplab serve`, checked
//! by Prometheus's own tools: `promtool check metrics` on the text, and a real
//! `prometheus` (Debian's package; `scripts/setup.sh` installs both) that scrapes a
//! running bench every second and answers a query for its samples.

use crate::common::{resplab, text, BIN};
use resplab_testkit::redis::RedisServer;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A child process killed when the test ends, however it ends.
struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn tool(name: &str) -> String {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "{name} is not installed: run scripts/setup.sh (Debian package prometheus)"
    );
    name.to_string()
}

/// The body of `GET path` on `addr`, or `None` when nothing answers (yet).
fn get(addr: &str, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    let (head, body) = out.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200").then(|| body.to_string())
}

/// Asks `addr` for `path` until `ok` holds for the body, for at most `limit`.
fn poll(addr: &str, path: &str, limit: Duration, ok: impl Fn(&str) -> bool) -> String {
    let start = Instant::now();
    let mut last = None;
    while start.elapsed() < limit {
        last = get(addr, path);
        if last.as_deref().is_some_and(&ok) {
            return last.unwrap_or_default();
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("{addr}{path} did not answer as expected within {limit:?}; last: {last:?}");
}

fn promtool_check(metrics: &str) {
    let mut child = Command::new(tool("promtool"))
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(metrics.as_bytes())
        .unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(
        o.status.success() && o.stdout.is_empty() && o.stderr.is_empty(),
        "promtool check metrics: {}{}\n{metrics}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn free_addr() -> String {
    format!("127.0.0.1:{}", resplab_sys::port::free_port().unwrap())
}

fn spawn_bench(server: &RedisServer, metrics: &str, seconds: &str) -> Killed {
    let port = server.port().to_string();
    let child = Command::new(BIN)
        .args([
            "bench",
            "-p",
            &port,
            "-t",
            "set,get",
            "--test-time",
            seconds,
        ])
        .args(["--rate", "2000", "-c", "4", "--no-progress", "-q"])
        .args(["--metrics-addr", metrics])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Killed(child)
}

#[test]
fn a_running_bench_serves_metrics_that_promtool_accepts() {
    let _lane = crate::common::shared();
    let s = RedisServer::start().unwrap();
    let addr = free_addr();
    let _bench = spawn_bench(&s, &addr, "30");
    let body = poll(&addr, "/metrics", Duration::from_secs(30), |b| {
        b.contains("resplab_requests_total{command=\"SET\"}")
            && b.contains("resplab_request_duration_seconds_bucket{command=\"SET\",le=\"+Inf\"}")
    });
    for family in [
        "# TYPE resplab_requests_total counter",
        "# TYPE resplab_errors_total counter",
        "# TYPE resplab_request_duration_seconds histogram",
        "# TYPE resplab_request_latency_seconds summary",
        "resplab_request_latency_seconds{command=\"SET\",quantile=\"0.99\"}",
        "resplab_ops_per_second ",
        "resplab_phase_info{phase=\"SET\"} 1",
    ] {
        assert!(body.contains(family), "{family}\n{body}");
    }
    promtool_check(&body);
}

#[test]
fn prometheus_scrapes_a_running_bench_and_answers_a_query() {
    let _lane = crate::common::shared();
    let prometheus = tool("prometheus");
    let s = RedisServer::start().unwrap();
    let metrics = free_addr();
    let _bench = spawn_bench(&s, &metrics, "120");
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: resplab\n    static_configs:\n      - targets: ['{metrics}']\n"
        ),
    )
    .unwrap();
    let web = free_addr();
    let child = Command::new(prometheus)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.path().join("data").display()
        ))
        .arg(format!("--web.listen-address={web}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _prometheus = Killed(child);
    let query = "/api/v1/query?query=resplab_requests_total%7Bcommand%3D%22SET%22%7D";
    let body = poll(&web, query, Duration::from_secs(90), |b| {
        b.contains("\"status\":\"success\"") && b.contains("\"job\":\"resplab\"")
    });
    assert!(
        body.contains("\"__name__\":\"resplab_requests_total\""),
        "{body}"
    );
    assert!(
        body.contains(&format!("\"instance\":\"{metrics}\"")),
        "{body}"
    );
    // The scrape itself went well: `up` is 1.
    let up = poll(
        &web,
        "/api/v1/query?query=up",
        Duration::from_secs(10),
        |b| b.contains("\"job\":\"resplab\""),
    );
    assert!(up.contains("\"1\"]"), "{up}");
}

#[test]
fn serve_serves_its_counters() {
    let _lane = crate::common::shared();
    let metrics = free_addr();
    let child = Command::new(BIN)
        .args(["serve", "-p", "0", "--metrics-addr", &metrics])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _serve = Killed(child);
    let body = poll(&metrics, "/metrics", Duration::from_secs(20), |b| {
        b.contains("resplab_serve_commands_total")
    });
    for family in [
        "# TYPE resplab_serve_commands_total counter",
        "resplab_serve_clients ",
        "resplab_serve_cpu_seconds_total{mode=\"user\"}",
    ] {
        assert!(body.contains(family), "{family}\n{body}");
    }
    promtool_check(&body);
}

#[test]
fn a_bad_metrics_address_is_refused_before_measuring() {
    let _lane = crate::common::shared();
    for bad in ["9464", "127.0.0.1:99999", "no-such-host.invalid:9464"] {
        let o = resplab(&["bench", "-p", "1", "-n", "10", "--metrics-addr", bad]);
        let out = text(&o);
        assert_eq!(o.status.code(), Some(2), "{bad}: {out}");
        assert!(out.contains(&format!("--metrics-addr '{bad}'")), "{out}");
        assert!(out.contains("expected HOST:PORT"), "{out}");
    }
    let o = resplab(&["serve", "-p", "0", "--metrics-addr", "nowhere"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn an_experiment_serves_its_trials_and_verdicts_and_exits_3_on_errors() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("e.toml");
    // Every request fails (INCRBY of a word): each trial is invalid, and --max-error-rate
    // 50 fails the run with exit code 3.
    std::fs::write(
        &file,
        r#"
[experiment]
name = "live"
rounds = 3
test_time = "1s"
max_reruns = 0

[[variant]]
name = "a"

[[variant]]
name = "b"

[[workload]]
name = "incr"
command = "INCRBY counter notanumber"
clients = 2
"#,
    )
    .unwrap();
    let metrics = free_addr();
    let child = Command::new(BIN)
        .args(["experiment", "run"])
        .arg(&file)
        .arg("--db")
        .arg(dir.path().join("r.db"))
        .args(["--metrics-addr", &metrics, "--max-error-rate", "50"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut run = Killed(child);
    let body = poll(&metrics, "/metrics", Duration::from_secs(120), |b| {
        b.contains("resplab_verdict_info{workload=\"incr\",variant=\"b\"")
            && b.contains(
                "resplab_errors_total{variant=\"a\",workload=\"incr\",command=\"INCRBY\"}",
            )
            && b.contains("resplab_experiment_trial_info{variant=")
    });
    for family in [
        "resplab_experiment_rounds 3",
        "resplab_experiment_trials_planned 6",
        "resplab_verdict_rounds{workload=\"incr\",variant=\"b\"}",
    ] {
        assert!(body.contains(family), "{family}\n{body}");
    }
    promtool_check(&body);
    let start = Instant::now();
    let status = loop {
        if let Some(s) = run.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the experiment did not end"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let mut err = String::new();
    run.0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert_eq!(status.code(), Some(3), "{err}");
    assert!(err.contains("of the requests failed"), "{err}");
    assert!(err.contains("more than --max-error-rate 50 %"), "{err}");
}
