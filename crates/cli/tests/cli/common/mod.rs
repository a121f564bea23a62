//! Helpers shared by the CLI's integration tests: running the real binary (collecting its
//! output, in a directory, against a database, or as an assert_cmd `Command`) and killing
//! a run with SIGKILL once it has stored enough trials; the lanes that give a timing
//! test the machine alone.

pub mod oracle;

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_resplab");

/// Runs `resplab ARGS` with no stdin and no REDISCLI_AUTH from the test's environment.
pub fn resplab(args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .env_remove("REDISCLI_AUTH")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// `resplab` as an assert_cmd `Command`, with no REDISCLI_AUTH from the test's environment.
pub fn command() -> assert_cmd::Command {
    let mut c = assert_cmd::Command::cargo_bin("resplab").expect("the resplab binary is built");
    c.env_remove("REDISCLI_AUTH");
    c
}

/// [`command`], killed if it runs longer than `limit`.
pub fn command_within(limit: Duration) -> assert_cmd::Command {
    let mut c = command();
    c.timeout(limit);
    c
}

/// Runs `resplab ARGS` in `dir` (no stdin, no REDISCLI_AUTH): its exit code (-1 when a
/// signal ended it), standard output and standard error.
pub fn run_in(args: &[&str], dir: &Path) -> (i32, String, String) {
    run_in_with(args, dir, &[])
}

/// [`run_in`] with `env` added to the environment.
pub fn run_in_with(args: &[&str], dir: &Path, env: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("REDISCLI_AUTH")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `resplab ARGS --db DB` with `env` added (no stdin, no REDISCLI_AUTH unless `env`
/// gives it).
pub fn run_db(args: &[&str], db: &Path, env: &[(&str, &str)]) -> Output {
    Command::new(BIN)
        .args(args)
        .arg("--db")
        .arg(db)
        .env_remove("REDISCLI_AUTH")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Runs `resplab experiment run FILE --db DB EXTRA...`.
pub fn experiment_run(file: &Path, db: &Path, extra: &[&str]) -> Output {
    let (file, db) = (file.to_string_lossy(), db.to_string_lossy());
    let mut args = vec!["experiment", "run", &file, "--db", &db];
    args.extend_from_slice(extra);
    resplab(&args)
}

/// Standard output and standard error together, for messages and assertions.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Fails unless `out` is of a run that exited 0, showing what it printed.
#[track_caller]
pub fn assert_ok(out: &Output) {
    assert!(out.status.success(), "{}", text(out));
}

/// Adds the ACL user `user` with `password`, every key and every command, to `server`.
pub fn add_acl_user(server: &resplab_testkit::redis::RedisServer, user: &str, password: &str) {
    let r = server
        .client()
        .unwrap()
        .cmd(&[
            "ACL",
            "SETUSER",
            user,
            "on",
            &format!(">{password}"),
            "~*",
            "+@all",
        ])
        .unwrap();
    assert_eq!(r.as_text().as_deref(), Some("OK"));
}

/// Runs `resplab calibrate --validate ARGS --format json --db DB` (killed after 4
/// minutes), which must end with exit code 0 or 1 (the checks passed or not: at a test's
/// small K either may come); what it printed, as JSON.
pub fn validation(args: &[&str], db: &Path) -> serde_json::Value {
    let out = command_within(Duration::from_secs(240))
        .args(["calibrate", "--validate"])
        .args(args)
        .args(["--format", "json", "--db"])
        .arg(db)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Trials stored in the experiments of `db` whose name `of` accepts (0 while the store
/// cannot be opened yet).
pub fn stored_trials(db: &Path, of: impl Fn(&str) -> bool) -> usize {
    let Ok(store) = resplab_store::Store::open(db) else {
        return 0;
    };
    let experiments = store.list_experiments().unwrap_or_default();
    experiments
        .iter()
        .filter(|e| of(&e.name))
        .filter_map(|e| store.trials(e.id).ok())
        .map(|t| t.len())
        .sum()
}

/// `resplab experiment resume NAME --db DB` in `dir`: as [`run_in`].
pub fn resume(name: &str, db: &Path, dir: &Path) -> (i32, String, String) {
    run_in(
        &["experiment", "resume", name, "--db", db.to_str().unwrap()],
        dir,
    )
}

/// An experiment file `DIR/NAME.toml` run until decided on the server CPU per request,
/// of two `resplab serve` variants doing 2 µs of work per command, `other` with
/// `--slowdown PCT`; its equivalence margin is ±20 %, or ±3 % with a slowdown (so that a
/// 10 % slowdown, once measured closely, cannot be called equivalent before it is called
/// slower). `experiment` lines go into `[experiment]`, `workload` lines into its one
/// workload, `set`.
pub fn serve_pair_file(
    dir: &Path,
    name: &str,
    slowdown: u32,
    experiment: &str,
    workload: &str,
) -> std::path::PathBuf {
    let path = dir.join(format!("{name}.toml"));
    let margin = if slowdown > 0 { 0.03 } else { 0.2 };
    std::fs::write(
        &path,
        format!(
            r#"
[experiment]
name = "{name}"
until = "decided"
{experiment}
test_time = "0.6s"
warmup = "0.2s"
client_cpu_limit = 1.0
primary_metric = "server_cpu_us_per_op"
margin = {margin}

[[variant]]
name = "base"
server = "{BIN} serve --port {{port}} --work-ns 2000"

[[variant]]
name = "other"
server = "{BIN} serve --port {{port}} --work-ns 2000 --slowdown {slowdown}"

[[workload]]
name = "set"
tests = "set"
{workload}
threads = 1
"#
        ),
    )
    .unwrap();
    path
}

/// Starts `resplab experiment run FILE --db DB` with its stderr piped.
pub fn spawn_experiment(file: &Path, db: &Path) -> Child {
    Command::new(BIN)
        .args(["experiment", "run"])
        .arg(file)
        .arg("--db")
        .arg(db)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until `stored()` reaches `at_least` (failing the test if the run ends first or
/// `within` passes), lets the next trial begin for `then`, and kills the run with SIGKILL.
pub fn kill_9_once_stored(
    child: &mut Child,
    stored: impl Fn() -> usize,
    at_least: usize,
    within: Duration,
    then: Duration,
) {
    let deadline = Instant::now() + within;
    while stored() < at_least {
        assert!(
            Instant::now() < deadline,
            "no progress within {} s",
            within.as_secs()
        );
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            if let Some(mut e) = child.stderr.take() {
                use std::io::Read;
                let _ = e.read_to_string(&mut err);
            }
            panic!("finished ({status}) before it could be killed:\n{err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(then);
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

/// A `resplab serve` child on free ports, killed on drop: its RESP port and, when started
/// with `--respb-port 0` among the flags, its RESPB port.
pub struct Serve {
    pub child: Child,
    pub port: u16,
    pub respb_port: Option<u16>,
}

impl Serve {
    /// `resplab serve --port 0 FLAGS`.
    pub fn start(flags: &[&str]) -> Serve {
        Serve::start_with(Command::new(BIN), flags)
    }

    /// Started by `command`, which runs the binary (in the same process: `prlimit`
    /// executes it); the ports are read from the lines serve prints when it listens.
    pub fn start_with(mut command: Command, flags: &[&str]) -> Serve {
        use std::io::{BufRead as _, BufReader};
        let mut child = command
            .args(["serve", "--port", "0"])
            .args(flags)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        let port = line
            .split("listening on 127.0.0.1:")
            .nth(1)
            .and_then(|r| r.split_whitespace().next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no port in {line:?}"));
        let mut respb_port = None;
        if flags.contains(&"--respb-port") {
            let mut line = String::new();
            out.read_line(&mut line).unwrap();
            respb_port = line
                .split("RESPB on 127.0.0.1:")
                .nth(1)
                .and_then(|r| r.trim().parse().ok());
            assert!(respb_port.is_some(), "no RESPB port in {line:?}");
        }
        Serve {
            child,
            port,
            respb_port,
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// All the tests of this binary share one process and run two at a time. A test that
/// asserts a timing or a measured effect must have the machine to itself, as it had when
/// each file was a binary of its own: it takes [`alone`]. Every other test takes
/// [`shared`] first, so that it waits while such a test runs (the lock serves writers
/// before new readers, so an `alone` test is not starved).
static LANES: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// A lane beside other shared tests; held for the whole test.
pub fn shared() -> std::sync::RwLockReadGuard<'static, ()> {
    LANES
        .read()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The machine to this test alone: no other test of the binary runs while it is held.
pub fn alone() -> std::sync::RwLockWriteGuard<'static, ()> {
    LANES
        .write()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}
