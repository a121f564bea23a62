//! No server outlives the resplab that started it, and every entry point that starts
//! servers reaps what an earlier, killed run left behind.
//!
//! Each test runs resplab with its own temporary directory (`TMPDIR`), under which every
//! server resplab starts gets its run directory: a server of that run is a process whose
//! working directory or command line lies there. Before the run, the test plants what a
//! killed run whose servers escaped would leave: a process in its own group and a run
//! directory whose pid file names it and an owner that no longer exists. Then resplab is
//! killed mid-run with SIGKILL (every server dies with it) or stopped with SIGTERM (it
//! stops them itself, writes what it measured, and exits 143).

use resplab_sys::proc;
use std::fs;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// One test's scratch space: its files, and the temporary directory resplab runs with.
struct Scratch {
    dir: tempfile::TempDir,
    tmp: PathBuf,
}

impl Scratch {
    fn new() -> Scratch {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("tmp");
        fs::create_dir(&tmp).unwrap();
        Scratch { dir, tmp }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Starts `resplab ARGS` with this scratch's `TMPDIR`, its stderr into a file.
    fn spawn(&self, args: &[&str]) -> Child {
        let err = fs::File::create(self.path("stderr.txt")).unwrap();
        Command::new(crate::common::BIN)
            .args(args)
            .env("TMPDIR", &self.tmp)
            .env_remove("REDISCLI_AUTH")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err)
            .spawn()
            .unwrap()
    }

    fn stderr(&self) -> String {
        fs::read_to_string(self.path("stderr.txt")).unwrap_or_default()
    }

    /// Fails unless resplab's stderr holds `text`.
    fn assert_stderr_has(&self, text: &str) {
        let stderr = self.stderr();
        assert!(stderr.contains(text), "{stderr}");
    }

    /// Sends signal `name` to `child`, then checks that it exited with `code` and that
    /// no server of this run outlived it.
    fn stop_with(&self, child: &mut Child, name: &str, code: i32) {
        let status = signal(child, self, name);
        self.assert_no_server_within(Duration::ZERO);
        assert_eq!(status.code(), Some(code), "{}", self.stderr());
    }

    /// The live processes of runs in this scratch: working in its temporary directory,
    /// or naming it on their command line.
    fn servers(&self) -> Vec<u32> {
        let own = std::process::id();
        let tmp = self.tmp.display().to_string();
        proc::pids()
            .into_iter()
            .filter(|&pid| pid != own)
            .filter(|&pid| proc::stat(pid).is_some_and(|s| s.state != 'Z'))
            .filter(|&pid| {
                proc::cwd(pid).is_some_and(|c| c.starts_with(&self.tmp))
                    || proc::cmdline(pid).is_some_and(|c| c.contains(&tmp))
            })
            .collect()
    }

    /// Waits until at least `n` servers of this scratch run, then a little longer.
    fn wait_for_servers(&self, child: &mut Child, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(90);
        while self.servers().len() < n {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("resplab ended ({status}) first:\n{}", self.stderr());
            }
            assert!(
                Instant::now() < deadline,
                "no server started:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(300));
    }

    /// Waits until `n` servers of this run are up, kills `child` with SIGKILL, and
    /// checks that no server of this run is alive 5 s later.
    fn kill_9_once_serving(&self, child: &mut Child, n: usize) {
        self.wait_for_servers(child, n);
        kill_9(child);
        self.assert_no_server_within(Duration::from_secs(5));
    }

    /// Fails (after killing them) if servers of this scratch still run after `within`.
    fn assert_no_server_within(&self, within: Duration) {
        let deadline = Instant::now() + within;
        let mut left = self.servers();
        while !left.is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            left = self.servers();
        }
        let described: Vec<String> = left
            .iter()
            .map(|&p| format!("{p}: {}", proc::cmdline(p).unwrap_or_default()))
            .collect();
        for &p in &left {
            let _ = Command::new("kill").args(["-9", &p.to_string()]).status();
        }
        assert!(
            left.is_empty(),
            "servers of the run still alive: {described:?}"
        );
    }

    /// Plants a leftover of an earlier, killed run (see the module's documentation).
    fn plant_leftover(&self) -> Leftover {
        let mut gone = Command::new("true").spawn().unwrap();
        let dead_owner = gone.id();
        gone.wait().unwrap();
        let child = Command::new("sleep")
            .arg("300")
            .process_group(0)
            .spawn()
            .unwrap();
        let start = proc::start_time(child.id()).unwrap();
        let dir = self.tmp.join(format!("resplab-exp-{dead_owner}-0"));
        fs::create_dir(&dir).unwrap();
        // The owner's start time: one no process has, so the owner is surely gone.
        fs::write(
            dir.join("server.pid"),
            format!("{} {start} {dead_owner} 1\n", child.id()),
        )
        .unwrap();
        Leftover { child, dir }
    }
}

/// A planted leftover: its process (a child of the test, so its end can be seen).
struct Leftover {
    child: Child,
    dir: PathBuf,
}

impl Leftover {
    /// Fails unless the leftover was killed and its run directory removed.
    fn assert_reaped(mut self, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            match self.child.try_wait().unwrap() {
                Some(status) => break Some(status),
                None if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
                None => break None,
            }
        };
        if status.is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        assert!(
            status.is_some(),
            "{what} did not reap the earlier run's server"
        );
        assert!(!self.dir.exists(), "{what} left {}", self.dir.display());
    }
}

fn kill_9(child: &mut Child) {
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Sends signal `name` and waits (at most a minute) for resplab to exit.
fn signal(child: &mut Child, scratch: &Scratch, name: &str) -> ExitStatus {
    let sent = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!(
                "still running a minute after SIG{name}:\n{}",
                scratch.stderr()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An experiment of two redis-server variants (or clusters of `cluster_masters`), with
/// trials long enough to be caught mid-run.
fn experiment_file(scratch: &Scratch, name: &str, cluster_masters: usize) -> PathBuf {
    let cluster = if cluster_masters > 0 {
        format!("cluster = {{ masters = {cluster_masters} }}\n")
    } else {
        String::new()
    };
    let text = format!(
        r#"
[experiment]
name = "{name}"
rounds = 2
test_time = "30s"
seed = 5

[[variant]]
name = "a"
server = "redis-server --port {{port}} --bind 127.0.0.1 --save '' --appendonly no --dir {{dir}} --hz 10"
{cluster}
[[variant]]
name = "b"
server = "redis-server --port {{port}} --bind 127.0.0.1 --save '' --appendonly no --dir {{dir}} --hz 50"
{cluster}
[[workload]]
name = "set"
tests = "set"
clients = 2
"#
    );
    let file = scratch.path("exp.toml");
    fs::write(&file, text).unwrap();
    file
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn bench_killed_leaves_no_server_and_reaps_an_earlier_runs() {
    let _lane = crate::common::shared();
    let scratch = Scratch::new();
    let leftover = scratch.plant_leftover();
    let mut child = scratch.spawn(&["bench", "-t", "set", "-c", "2", "--test-time", "60"]);
    scratch.kill_9_once_serving(&mut child, 1);
    leftover.assert_reaped("bench");
}

#[test]
fn experiment_run_killed_leaves_no_server_and_reaps_an_earlier_runs() {
    let _lane = crate::common::shared();
    let scratch = Scratch::new();
    let file = experiment_file(&scratch, "lifetime-run", 0);
    let db = scratch.path("r.db");
    let leftover = scratch.plant_leftover();
    let mut child = scratch.spawn(&["experiment", "run", s(&file), "--db", s(&db)]);
    scratch.kill_9_once_serving(&mut child, 1);
    leftover.assert_reaped("experiment run");
    assert!(
        scratch
            .stderr()
            .contains("left running by an interrupted run"),
        "the reaped server is reported:\n{}",
        scratch.stderr()
    );
}

#[test]
fn experiment_resume_killed_leaves_no_server_and_reaps_an_earlier_runs() {
    let _lane = crate::common::shared();
    let scratch = Scratch::new();
    let file = experiment_file(&scratch, "lifetime-resume", 0);
    let db = scratch.path("r.db");
    let mut child = scratch.spawn(&["experiment", "run", s(&file), "--db", s(&db)]);
    scratch.kill_9_once_serving(&mut child, 1);

    let leftover = scratch.plant_leftover();
    let mut child = scratch.spawn(&["experiment", "resume", "lifetime-resume", "--db", s(&db)]);
    scratch.kill_9_once_serving(&mut child, 1);
    leftover.assert_reaped("experiment resume");
}

#[test]
fn cluster_nodes_killed_leave_no_server_and_reap_an_earlier_runs() {
    let _lane = crate::common::shared();
    let scratch = Scratch::new();
    let file = experiment_file(&scratch, "lifetime-cluster", 3);
    let db = scratch.path("r.db");
    let leftover = scratch.plant_leftover();
    let mut child = scratch.spawn(&["experiment", "run", s(&file), "--db", s(&db)]);
    scratch.kill_9_once_serving(&mut child, 3);
    leftover.assert_reaped("a cluster variant");
}

/// `calibrate` of SET against fresh redis-servers, long enough to be caught mid-run.
fn calibrate_args(db: &Path) -> [&str; 13] {
    [
        "calibrate",
        "--budget",
        "300s",
        "--durations",
        "1s",
        "--warmup",
        "0s",
        "-c",
        "2",
        "--format",
        "json",
        "--db",
        s(db),
    ]
}

#[test]
fn calibrate_killed_leaves_no_server_and_reaps_an_earlier_runs() {
    let _lane = crate::common::shared();
    let scratch = Scratch::new();
    let db = scratch.path("r.db");
    let leftover = scratch.plant_leftover();
    let mut child = scratch.spawn(&calibrate_args(&db));
    scratch.kill_9_once_serving(&mut child, 1);
    leftover.assert_reaped("calibrate");
}

#[test]
fn calibrate_validate_killed_leaves_no_serve_process_and_reaps_an_earlier_runs() {
    let _lane = crate::common::shared();
    let scratch = Scratch::new();
    let db = scratch.path("r.db");
    let leftover = scratch.plant_leftover();
    let mut child = scratch.spawn(&[
        "calibrate",
        "--validate",
        "--validate-k",
        "2",
        "--validate-rounds",
        "6",
        "--durations",
        "0.1s",
        "--budget",
        "70s",
        "--format",
        "json",
        "--db",
        s(&db),
    ]);
    // The validation's servers are `resplab serve` processes working in their run
    // directories.
    scratch.kill_9_once_serving(&mut child, 1);
    leftover.assert_reaped("calibrate --validate");
}

#[test]
fn sigterm_to_bench_stops_its_server_and_writes_a_labelled_partial_result() {
    let _lane = crate::common::shared();
    let scratch = Scratch::new();
    let json = scratch.path("run.json");
    let mut child = scratch.spawn(&bench_minute("set", &json));
    scratch.wait_for_servers(&mut child, 1);
    // Some load measured before the signal.
    std::thread::sleep(Duration::from_millis(700));
    scratch.stop_with(&mut child, "TERM", 143);
    scratch.assert_stderr_has("interrupted");
    assert_interrupted_record(&json);
}

#[test]
fn sigterm_to_experiment_run_stops_its_servers_and_exits_143() {
    let _lane = crate::common::shared();
    let scratch = Scratch::new();
    let file = experiment_file(&scratch, "lifetime-term", 0);
    let db = scratch.path("r.db");
    let mut child = scratch.spawn(&["experiment", "run", s(&file), "--db", s(&db)]);
    scratch.wait_for_servers(&mut child, 1);
    scratch.stop_with(&mut child, "TERM", 143);
    scratch.assert_stderr_has("resplab experiment resume lifetime-term");
}

#[test]
fn sigterm_to_calibrate_stops_its_servers_and_exits_143() {
    let _lane = crate::common::shared();
    let scratch = Scratch::new();
    let db = scratch.path("r.db");
    let mut child = scratch.spawn(&calibrate_args(&db));
    scratch.wait_for_servers(&mut child, 1);
    scratch.stop_with(&mut child, "TERM", 143);
    scratch.assert_stderr_has("interrupted");
}

#[test]
fn sighup_to_bench_is_handled_as_sigterm_and_exits_129() {
    let _lane = crate::common::shared();
    let scratch = Scratch::new();
    let json = scratch.path("run.json");
    let mut child = scratch.spawn(&bench_minute("get", &json));
    scratch.wait_for_servers(&mut child, 1);
    scratch.stop_with(&mut child, "HUP", 129);
    assert_interrupted_record(&json);
}

/// `bench -t TEST` with two clients for a minute, its JSON result into `json`.
fn bench_minute<'a>(test: &'a str, json: &'a Path) -> [&'a str; 9] {
    [
        "bench",
        "-t",
        test,
        "-c",
        "2",
        "--test-time",
        "60",
        "--json",
        s(json),
    ]
}

/// Fails unless `json` holds a whole result whose end is labelled `interrupted`.
fn assert_interrupted_record(json: &Path) {
    let record: serde_json::Value =
        serde_json::from_slice(&fs::read(json).unwrap()).expect("a whole JSON result");
    assert_eq!(record["end"]["reason"], "interrupted", "{record:#}");
}
