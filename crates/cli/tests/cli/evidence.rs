//! The server's evidence per trial against real servers: `INFO commandstats` calls that
//! agree with the requests the engine sent, stored and compared; a cluster's per-node
//! and summed figures; the process counters of a server the run started; and a server
//! that answers less (`resplab serve`), which says so once and loses no trial.

use crate::common::{run_db, text, BIN};
use resplab_store::{Observation, Store};

fn observations(db: &std::path::Path, name: &str) -> Vec<Observation> {
    Store::open(db).unwrap().observations(name).unwrap()
}

fn values<'a>(
    obs: &'a [Observation],
    command: &'a str,
    metric: &'a str,
) -> impl Iterator<Item = &'a Observation> + 'a {
    obs.iter()
        .filter(move |o| o.command == command && o.metric == metric)
}

fn redis(extra: &str) -> String {
    format!("redis-server --port {{port}} --bind 127.0.0.1 --save '' --appendonly no {extra}")
}

#[test]
fn commandstats_calls_agree_with_the_requests_sent_and_get_verdicts() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("e.toml");
    std::fs::write(
        &file,
        format!(
            r#"
[experiment]
name = "evidence"
rounds = 2
requests = 3000
seed = 5
client_cpu_limit = 1.0
primary_metric = "server_cpu_user_us_per_op"

[[variant]]
name = "a"
server = "{}"

[[variant]]
name = "b"
server = "{}"

[[workload]]
name = "w"
tests = "set,get"
clients = 2
"#,
            redis(""),
            redis("--hz 50")
        ),
    )
    .unwrap();
    let db = dir.path().join("r.db");
    let o = run_db(&["experiment", "run", file.to_str().unwrap()], &db, &[]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    // Redis 7 answers every section and the run started it: nothing to note but,
    // on a machine without a PMU, the hardware counters.
    assert!(!out.contains("does not answer"), "{out}");
    assert!(!out.contains("not started by this run"), "{out}");
    let obs = observations(&db, "evidence");
    for command in ["SET", "GET"] {
        let requests: Vec<_> = values(&obs, command, "requests").collect();
        assert_eq!(requests.len(), 4, "{obs:#?}");
        for r in requests {
            let calls = values(&obs, command, "server_calls")
                .find(|o| o.trial_id == r.trial_id)
                .unwrap_or_else(|| panic!("no server_calls of {command}"));
            // Every request is one call; the warm-up may add its share.
            assert!(
                calls.value >= r.value && calls.value <= r.value * 1.1,
                "{command}: {} calls for {} requests",
                calls.value,
                r.value
            );
            assert_eq!(calls.unit.as_deref(), Some("calls"));
        }
        assert_eq!(values(&obs, command, "server_usec_per_call").count(), 4);
        assert_eq!(values(&obs, command, "server_p99_us").count(), 4);
    }
    // The process counters of a server the run started, to the nanosecond.
    let all = resplab_store::ALL_COMMANDS;
    for m in [
        "server_cpu_sec",
        "server_cpu_user_us_per_op",
        "server_voluntary_switches_per_op",
        "server_net_in_bytes_per_op",
    ] {
        assert_eq!(values(&obs, all, m).count(), 4, "{m}");
    }
    // A server-side metric gets a verdict like any other.
    let c = run_db(&["compare", "db:evidence"], &db, &[]);
    let shown = text(&c);
    assert!(
        shown
            .lines()
            .any(|l| l.starts_with("w:SET") && l.contains("server_usec_per_call")),
        "{shown}"
    );
    // Raw call counts are exported, not compared.
    assert!(!shown.contains("server_calls"), "{shown}");
}

#[test]
fn a_cluster_has_per_node_and_summed_commandstats() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("c.toml");
    std::fs::write(
        &file,
        format!(
            r#"
[experiment]
name = "evidence-cluster"
rounds = 1
requests = 3000
seed = 9
client_cpu_limit = 1.0

[[variant]]
name = "a"
server = "{0}"
cluster = {{ masters = 3 }}

[[variant]]
name = "b"
server = "{0}"
cluster = {{ masters = 3 }}

[[workload]]
name = "w"
tests = "set,get"
keyspace = 10000
clients = 2
"#,
            redis("")
        ),
    )
    .unwrap();
    let db = dir.path().join("r.db");
    let o = run_db(&["experiment", "run", file.to_str().unwrap()], &db, &[]);
    crate::common::assert_ok(&o);
    let obs = observations(&db, "evidence-cluster");
    for t in obs
        .iter()
        .filter(|o| o.command == "SET" && o.metric == "requests")
    {
        let of = |metric: &str| {
            values(&obs, "SET", metric)
                .find(|o| o.trial_id == t.trial_id)
                .map(|o| o.value)
        };
        let summed = of("server_calls").expect("summed calls");
        let nodes: Vec<f64> = (0..3)
            .map(|i| of(&format!("node{i}_server_calls")).expect("calls of every node"))
            .collect();
        assert_eq!(nodes.iter().sum::<f64>(), summed, "{nodes:?}");
        assert!(nodes.iter().all(|&n| n > 0.0), "{nodes:?}");
        assert!(
            summed >= t.value && summed <= t.value * 1.1,
            "{summed} vs {}",
            t.value
        );
        assert!(of("node2_server_usec_per_call").is_some());
    }
}

#[test]
fn a_server_without_commandstats_says_so_once_and_keeps_every_trial() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("s.toml");
    std::fs::write(
        &file,
        format!(
            r#"
[experiment]
name = "evidence-serve"
rounds = 2
requests = 2000
seed = 2
client_cpu_limit = 1.0

[[variant]]
name = "a"
server = "{BIN} serve --port {{port}}"

[[variant]]
name = "b"
server = "{BIN} serve --port {{port}}"

[[workload]]
name = "w"
tests = "set"
clients = 2
"#
        ),
    )
    .unwrap();
    let db = dir.path().join("r.db");
    let o = run_db(&["experiment", "run", file.to_str().unwrap()], &db, &[]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert_eq!(
        out.matches("does not answer INFO commandstats").count(),
        1,
        "{out}"
    );
    assert_eq!(out.matches("LATENCY HISTOGRAM").count(), 1, "{out}");
    let obs = observations(&db, "evidence-serve");
    assert_eq!(values(&obs, "SET", "requests").count(), 4);
    assert_eq!(values(&obs, "SET", "server_calls").count(), 0);
    // The run started the server: its CPU comes from /proc, to the nanosecond.
    let all = resplab_store::ALL_COMMANDS;
    assert_eq!(values(&obs, all, "server_cpu_us_per_op").count(), 4);
    assert_eq!(values(&obs, all, "server_minor_faults_per_op").count(), 4);
}

/// A two-round A/A experiment of redis-server, with `env` for resplab: its output and
/// observations.
fn two_rounds(
    dir: &std::path::Path,
    name: &str,
    env: &[(&str, &str)],
) -> (String, Vec<Observation>) {
    let file = dir.join(format!("{name}.toml"));
    std::fs::write(
        &file,
        format!(
            r#"
[experiment]
name = "{name}"
rounds = 2
requests = 2000
seed = 4
client_cpu_limit = 1.0

[[variant]]
name = "a"
server = "{0}"

[[variant]]
name = "b"
server = "{0}"

[[workload]]
name = "w"
tests = "set"
clients = 2
"#,
            redis("")
        ),
    )
    .unwrap();
    let db = dir.join(format!("{name}.db"));
    let o = run_db(&["experiment", "run", file.to_str().unwrap()], &db, env);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    (out, observations(&db, name))
}

#[test]
fn missing_hardware_counters_are_said_once_and_never_fail_a_trial() {
    let _lane = crate::common::shared();
    assert!(
        std::process::Command::new("perf")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success()),
        "perf is missing: scripts/setup.sh installs it (Debian: linux-perf)"
    );
    let dir = tempfile::tempdir().unwrap();
    let all = resplab_store::ALL_COMMANDS;
    // perf pointed at a missing program: one line naming it, every trial stored.
    let (out, obs) = two_rounds(
        dir.path(),
        "no-perf",
        &[("RESPLAB_PERF", "/nonexistent/perf")],
    );
    assert_eq!(
        out.matches("hardware counters unavailable").count(),
        1,
        "{out}"
    );
    assert!(
        out.contains("`/nonexistent/perf` is not installed"),
        "{out}"
    );
    assert_eq!(values(&obs, "SET", "requests").count(), 4);
    assert_eq!(values(&obs, all, "server_instructions_per_op").count(), 0);
    // The real perf: on a machine with a PMU the counts are stored; without one (a
    // virtual machine) the unsupported events are named, once.
    let (out, obs) = two_rounds(dir.path(), "perf", &[]);
    let counted = values(&obs, all, "server_instructions_per_op").count();
    let noted = out.matches("hardware counters unavailable").count();
    if counted == 0 {
        assert_eq!(noted, 1, "{out}");
        assert!(out.contains("<not supported>"), "{out}");
    } else {
        assert_eq!((counted, noted), (4, 0), "{out}");
        assert_eq!(values(&obs, all, "server_ipc").count(), 4);
    }
    assert_eq!(values(&obs, "SET", "requests").count(), 4);
}

#[test]
fn a_tls_server_at_an_address_gives_commandstats_and_says_its_pid_is_unknown() {
    let _lane = crate::common::shared();
    let s = resplab_testkit::tls::TlsRedis::start(false).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tls.toml");
    std::fs::write(
        &file,
        format!(
            r#"
[experiment]
name = "evidence-tls"
rounds = 2
requests = 2000
seed = 6
client_cpu_limit = 1.0

[[variant]]
name = "a"
address = "127.0.0.1:{tls}"
tls = true
cacert = "{ca}"

[[variant]]
name = "b"
address = "127.0.0.1:{tls}"
tls = true
cacert = "{ca}"

[[workload]]
name = "w"
tests = "set"
clients = 2
"#,
            tls = s.tls_port,
            ca = s.files.ca.display()
        ),
    )
    .unwrap();
    let db = dir.path().join("r.db");
    let o = run_db(&["experiment", "run", file.to_str().unwrap()], &db, &[]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert_eq!(out.matches("not started by this run").count(), 1, "{out}");
    let obs = observations(&db, "evidence-tls");
    assert_eq!(values(&obs, "SET", "server_usec_per_call").count(), 4);
    let all = resplab_store::ALL_COMMANDS;
    // No pid: the server's CPU comes from INFO cpu, and no process counters.
    assert_eq!(
        values(&obs, all, "server_info_cpu_sys_us_per_op").count(),
        4
    );
    assert_eq!(
        values(&obs, all, "server_voluntary_switches_per_op").count(),
        0
    );
}
