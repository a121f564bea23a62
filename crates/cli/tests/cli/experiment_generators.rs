//! Experiments whose load comes from `[[generator]]` hosts: local processes, and real ssh
//! to this machine through a throwaway sshd. Each trial's shards are merged into one
//! stored run; a failing generator makes the trial invalid with its host named; a run
//! killed with SIGKILL resumes.

use crate::common::{run_db, BIN};
use resplab_store::Store;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn experiment(name: &str, generators: &str, rounds: u32, max_reruns: u32) -> String {
    format!(
        r#"
[experiment]
name = "{name}"
rounds = {rounds}
test_time = "400ms"
seed = 5
max_reruns = {max_reruns}
client_cpu_limit = 1.0

[[variant]]
name = "a"
server = "redis-server --port {{port}} --bind 127.0.0.1 --save '' --appendonly no --hz 10"

[[variant]]
name = "b"
server = "redis-server --port {{port}} --bind 127.0.0.1 --save '' --appendonly no --hz 50"

[[workload]]
name = "set"
tests = "set"
clients = 4

{generators}
"#
    )
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn stored(db: &Path, name: &str) -> usize {
    crate::common::stored_trials(db, |n| n == name)
}

/// Every stored trial is a merge of `shards` shards that together ran the workload.
fn check_merged(db: &Path, name: &str, trials: usize, shards: usize) {
    let store = Store::open(db).unwrap();
    let info = store.experiment(name).unwrap();
    let stored = store.trials(info.id).unwrap();
    assert_eq!(stored.len(), trials, "{stored:#?}");
    for t in &stored {
        assert!(t.valid, "trial {} invalid: {:?}", t.id, t);
        let run = store.run_record(t.id).unwrap();
        assert_eq!(run.shards.len(), shards);
        let sum: u64 = run.shards.iter().map(|s| s.totals.requests).sum();
        assert_eq!(run.totals.requests, sum);
        assert!(sum > 0);
        let mut idx: Vec<u32> = run.shards.iter().map(|s| s.shard.index).collect();
        idx.dedup();
        assert_eq!(idx.len(), shards);
    }
}

/// Runs the experiment, kills the runner with SIGKILL after two trials are stored (mid
/// trial), resumes it, and checks every trial is a valid merge of `shards` shards.
fn run_kill_resume(dir: &Path, name: &str, generators: &str, rounds: u32, shards: usize) {
    let file = write(dir, "exp.toml", &experiment(name, generators, rounds, 2));
    let db = dir.join("r.db");
    let mut child = crate::common::spawn_experiment(&file, &db);
    crate::common::kill_9_once_stored(
        &mut child,
        || stored(&db, name),
        2,
        Duration::from_secs(120),
        Duration::from_millis(300),
    );
    let before = stored(&db, name);
    let total = 2 * rounds as usize;
    assert!((2..total).contains(&before), "{before}");

    let out = run_db(&["experiment", "resume", name], &db, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "resume failed: {stderr}");
    check_merged(&db, name, total, shards);

    // The stored, merged trials compare like any others.
    let out = run_db(&["compare", &format!("db:{name}")], &db, &[]);
    assert!(
        out.status.code() != Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn local_generators_merge_every_trial_and_resume_after_kill_9() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    run_kill_resume(
        dir.path(),
        "gen-local",
        "[[generator]]\nlauncher = \"\"\nhosts = [\"g1\", \"g2\"]\nstart_lead = \"1s\"\n",
        3,
        2,
    );
}

#[test]
fn a_failing_generator_names_its_host_and_invalidates_the_trial() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let file = write(
        dir.path(),
        "exp.toml",
        &experiment(
            "gen-bad",
            "[[generator]]\nlauncher = \"\"\nhosts = [\"ok\"]\nstart_lead = \"1s\"\n\n[[generator]]\nlauncher = \"/nonexistent/launcher {host}\"\nhosts = [\"far-host\"]\nstart_lead = \"1s\"\n",
            1,
            0,
        ),
    );
    let db = dir.path().join("r.db");
    let out = run_db(&["experiment", "run", file.to_str().unwrap()], &db, &[]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("far-host"), "{text}");
    let store = Store::open(&db).unwrap();
    let info = store.experiment("gen-bad").unwrap();
    let trials = store.trials(info.id).unwrap();
    assert_eq!(trials.len(), 2);
    for t in &trials {
        assert!(!t.valid);
        // What the working shard measured is kept.
        let run = store.run_record(t.id).unwrap();
        assert_eq!(run.shards.len(), 1);
        assert!(run.totals.requests > 0);
    }

    // A launcher without {host} is refused when the file is read, with its line.
    let file = write(
        dir.path(),
        "nohost.toml",
        &experiment(
            "gen-nohost",
            "[[generator]]\nlauncher = \"ssh\"\nhosts = [\"a\"]\n",
            1,
            0,
        ),
    );
    let out = run_db(&["experiment", "run", file.to_str().unwrap()], &db, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nohost.toml:") && err.contains("{host}"),
        "{err}"
    );
}

/// A throwaway sshd on a free loopback port that accepts one throwaway key.
struct Sshd {
    child: Child,
    port: u16,
    key: PathBuf,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_sshd(dir: &Path) -> Result<Sshd, String> {
    let sshd = ["/usr/sbin/sshd", "/usr/local/sbin/sshd"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .ok_or("sshd is not installed (apt-get install openssh-server)")?;
    let keygen = |path: &Path| {
        Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(path)
            .status()
            .map_err(|e| format!("ssh-keygen: {e}"))
            .and_then(|s| {
                s.success()
                    .then_some(())
                    .ok_or("ssh-keygen failed".to_string())
            })
    };
    let host_key = dir.join("host_key");
    let key = dir.join("client_key");
    keygen(&host_key)?;
    keygen(&key)?;
    let authorized = dir.join("authorized_keys");
    std::fs::copy(dir.join("client_key.pub"), &authorized).map_err(|e| e.to_string())?;
    let port = resplab_testkit::free_port().map_err(|e| e.to_string())?;
    let config = dir.join("sshd_config");
    std::fs::write(
        &config,
        format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {}\nAuthorizedKeysFile {}\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\nStrictModes no\nUsePAM no\nPidFile {}\n",
            host_key.display(),
            authorized.display(),
            dir.join("sshd.pid").display()
        ),
    )
    .map_err(|e| e.to_string())?;
    // sshd wants its privilege-separation directory.
    let _ = std::fs::create_dir_all("/run/sshd");
    let child = Command::new(sshd)
        .arg("-D")
        .arg("-e")
        .arg("-f")
        .arg(&config)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start sshd: {e}"))?;
    let sshd = Sshd { child, port, key };
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let out = Command::new("ssh")
            .args(ssh_options(&sshd))
            .args(["127.0.0.1", "true"])
            .output()
            .map_err(|e| format!("ssh: {e}"))?;
        if out.status.success() {
            return Ok(sshd);
        }
        if Instant::now() > deadline {
            return Err(format!(
                "ssh to the throwaway sshd does not work: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn ssh_options(s: &Sshd) -> Vec<String> {
    vec![
        "-p".into(),
        s.port.to_string(),
        "-i".into(),
        s.key.display().to_string(),
        "-o".into(),
        "BatchMode=yes".into(),
        "-o".into(),
        "StrictHostKeyChecking=no".into(),
        "-o".into(),
        "UserKnownHostsFile=/dev/null".into(),
        "-o".into(),
        "LogLevel=ERROR".into(),
    ]
}

/// Two generators through real ssh to this machine; killed with SIGKILL mid-run and
/// resumed.
#[test]
fn two_generators_through_ssh_localhost_resume_after_kill_9() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let sshd = start_sshd(dir.path()).unwrap_or_else(|reason| {
        panic!("this test needs a local sshd (scripts/setup.sh installs openssh-server): {reason}")
    });
    let launcher = format!("ssh {} {{host}}", ssh_options(&sshd).join(" "));
    let generators = format!(
        "[[generator]]\nlauncher = \"{launcher}\"\nhosts = [\"127.0.0.1\", \"localhost\"]\nresplab = \"{BIN}\"\nstart_lead = \"2s\"\n"
    );
    run_kill_resume(dir.path(), "gen-ssh", &generators, 3, 2);
}
