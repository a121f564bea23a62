//! Helpers shared by the CLI's integration tests: running the real binary and killing a
//! run with SIGKILL once it has stored enough trials.

#![allow(dead_code)] // each test file uses some of them

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

/// Standard output and standard error together, for messages and assertions.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
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
