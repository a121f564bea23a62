//! Trials whose load comes from N generator processes (`[[generator]]`): one
//! `resplab bench --shard I/N --start-at T --json -` per host, each through its launcher
//! (`ssh {host}`, `kubectl exec {host} --`, `docker exec {host}`, or none for a local
//! process), all started together at `T`; their results are merged exactly
//! ([`resplab_results::merge`]) into the trial's record.
//!
//! A generator that cannot be started, exits with an error, prints no result, or runs a
//! different resplab version fails the trial with a message naming the host and shard;
//! the runner stores the trial as invalid (with what the other shards measured) and runs
//! the round again as for any invalid trial.

use crate::launch::{last_lines, Captured};
use crate::model::Generator;
use crate::words::{split_words, substitute};
use resplab_engine::StopToken;
use resplab_results::RunRecord;
use std::process::Command;
use std::time::{Duration, Instant};

/// One shard's command, as it will be run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShardCommand {
    /// The host (or label) of the shard.
    pub host: String,
    /// `I/N`, counted from 1.
    pub shard: String,
    pub argv: Vec<String>,
}

/// What the shards of one trial produced.
#[derive(Debug, Default)]
pub struct ShardResults {
    /// `(host, record)` of every shard that returned a result.
    pub records: Vec<(String, RunRecord)>,
    /// One message per shard that failed, naming its host and shard.
    pub failures: Vec<String>,
    /// The stop token fired: the shards were killed.
    pub interrupted: bool,
}

/// The command of every shard: the launcher's words (with `{host}`), then resplab and
/// `bench` with `bench_args` and the shard's flags. `start_at_unix_sec` is the common start.
///
/// # Errors
/// A launcher that cannot be split into words.
pub fn shard_commands(
    generators: &[Generator],
    server_host: &str,
    port: u16,
    bench_args: &[String],
    start_at_unix_sec: f64,
) -> Result<Vec<ShardCommand>, String> {
    let total: usize = generators.iter().map(|g| g.hosts.len()).sum();
    let local_binary = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "resplab".into());
    let mut out = Vec::with_capacity(total);
    for g in generators {
        for host in &g.hosts {
            let index = out.len() + 1;
            let launcher = substitute(&g.launcher, &[("host", host)]);
            let mut argv =
                split_words(&launcher).map_err(|e| format!("launcher {launcher:?}: {e}"))?;
            let resplab = match &g.resplab {
                Some(r) => r.clone(),
                None if argv.is_empty() => local_binary.clone(),
                None => "resplab".into(),
            };
            let shard = format!("{index}/{total}");
            argv.push(resplab);
            argv.extend(
                [
                    "bench",
                    "-h",
                    g.server_host.as_deref().unwrap_or(server_host),
                    "-p",
                    &port.to_string(),
                    "--shard",
                    &shard,
                    "--start-at",
                    &format!("{start_at_unix_sec:.3}"),
                    "--json",
                    "-",
                    "--no-progress",
                ]
                .iter()
                .map(|s| s.to_string()),
            );
            argv.extend(bench_args.iter().cloned());
            out.push(ShardCommand {
                host: host.clone(),
                shard,
                argv,
            });
        }
    }
    Ok(out)
}

/// A started shard: its command's index and the process with its output readers.
type Running = (usize, Captured);

/// Runs every shard command at once and collects the results, killing all of them when
/// `timeout` passes or `stop` fires. `env` is added to each launcher's environment (the
/// password as `REDISCLI_AUTH`: a local generator reads it; `ssh` passes it on only where
/// the remote side accepts it, so remote generators set it themselves).
pub fn run_shards(
    commands: &[ShardCommand],
    env: &[(String, String)],
    timeout: Duration,
    stop: &StopToken,
) -> ShardResults {
    let mut results = ShardResults::default();
    let mut running = start_shards(commands, env, &mut results);
    let status = wait_for_shards(commands, &mut running, timeout, stop, &mut results);
    for (k, (i, cap)) in running.into_iter().enumerate() {
        let st = status[k];
        let (stdout, stderr) = cap.finish();
        let c = &commands[i];
        if results.interrupted || st.is_none() {
            continue;
        }
        if results
            .failures
            .iter()
            .any(|f| f.contains(&format!("(shard {})", c.shard)))
        {
            continue;
        }
        read_shard(c, st, &stdout, &stderr, &mut results);
    }
    results
}

/// Starts every shard command; one that cannot start is a failure.
fn start_shards(
    commands: &[ShardCommand],
    env: &[(String, String)],
    results: &mut ShardResults,
) -> Vec<Running> {
    let mut running: Vec<Running> = Vec::new();
    for (i, c) in commands.iter().enumerate() {
        let Some((program, args)) = c.argv.split_first() else {
            continue;
        };
        let mut cmd = Command::new(program);
        cmd.args(args).envs(env.iter().map(|(k, v)| (k, v)));
        match Captured::spawn(&mut cmd, 1 << 30, 1 << 20) {
            Ok(cap) => running.push((i, cap)),
            Err(e) => results.failures.push(format!(
                "generator {} (shard {}): cannot start `{program}`: {e}",
                c.host, c.shard
            )),
        }
    }
    running
}

/// Waits until every shard has exited, `stop` fires (interrupted) or `timeout` passes
/// (a failure for each shard still running); returns each shard's exit status, `None`
/// for those still running, which the caller's `finish` kills.
fn wait_for_shards(
    commands: &[ShardCommand],
    running: &mut [Running],
    timeout: Duration,
    stop: &StopToken,
    results: &mut ShardResults,
) -> Vec<Option<std::process::ExitStatus>> {
    let deadline = Instant::now() + timeout;
    let mut status: Vec<Option<std::process::ExitStatus>> = vec![None; running.len()];
    loop {
        let mut all_done = true;
        for (k, (_, cap)) in running.iter_mut().enumerate() {
            if status[k].is_none() {
                match cap.child.try_wait() {
                    Ok(Some(s)) => status[k] = Some(s),
                    Ok(None) => all_done = false,
                    Err(_) => all_done = false,
                }
            }
        }
        if all_done {
            break;
        }
        let stopped = stop.is_stopped();
        if stopped || Instant::now() >= deadline {
            // What is still running is killed by `finish` below.
            if stopped {
                results.interrupted = true;
            } else {
                for (k, (i, _)) in running.iter().enumerate() {
                    if status[k].is_none() {
                        let c = &commands[*i];
                        results.failures.push(format!(
                            "generator {} (shard {}): no result within {:.0} s; it was killed",
                            c.host,
                            c.shard,
                            timeout.as_secs_f64()
                        ));
                    }
                }
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    status
}

/// Reads a finished shard's result: its run record when it printed one from the same
/// resplab version, else a failure saying why.
fn read_shard(
    c: &ShardCommand,
    st: Option<std::process::ExitStatus>,
    stdout: &[u8],
    stderr: &[u8],
    results: &mut ShardResults,
) {
    let version = env!("CARGO_PKG_VERSION");
    let tail = last_lines(stderr, 3);
    let parsed = serde_json::from_slice::<RunRecord>(stdout);
    match (st, parsed) {
        (Some(s), Ok(record)) if s.success() || s.code() == Some(3) => {
            if record.tool.version != version {
                results.failures.push(format!(
                    "generator {} (shard {}): runs resplab {}, this is resplab {version}; install the same version on every generator",
                    c.host, c.shard, record.tool.version
                ));
            } else {
                results.records.push((c.host.clone(), record));
            }
        }
        (Some(s), _) if !s.success() => results.failures.push(format!(
            "generator {} (shard {}): `{}` exited with {}{}",
            c.host,
            c.shard,
            c.argv.first().map(String::as_str).unwrap_or(""),
            match s.code() {
                Some(code) => format!("code {code}"),
                None => "a signal".into(),
            },
            if tail.is_empty() {
                String::new()
            } else {
                format!(": {tail}")
            }
        )),
        (_, Err(e)) => results.failures.push(format!(
            "generator {} (shard {}): printed no resplab result ({e}){}",
            c.host,
            c.shard,
            if tail.is_empty() {
                String::new()
            } else {
                format!("; its errors: {tail}")
            }
        )),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(launcher: &str, hosts: &[&str]) -> Generator {
        Generator {
            launcher: launcher.into(),
            hosts: hosts.iter().map(|h| h.to_string()).collect(),
            resplab: None,
            server_host: None,
            start_lead: Duration::from_secs(3),
        }
    }

    #[test]
    fn each_host_gets_its_shard_through_its_launcher() {
        let gens = [gen("ssh -p 2222 {host}", &["a", "b"]), gen("", &["local"])];
        let cmds =
            shard_commands(&gens, "10.0.0.5", 6379, &["-c".into(), "8".into()], 1e9).unwrap();
        assert_eq!(cmds.len(), 3);
        assert_eq!(&cmds[0].argv[..5], &["ssh", "-p", "2222", "a", "resplab"]);
        assert_eq!(cmds[1].argv[3], "b");
        assert!(cmds[1].argv.windows(2).any(|w| w == ["--shard", "2/3"]));
        assert!(cmds[2].argv.windows(2).any(|w| w == ["--shard", "3/3"]));
        assert!(cmds[2].argv.windows(2).any(|w| w == ["-h", "10.0.0.5"]));
        assert!(cmds[2]
            .argv
            .windows(2)
            .any(|w| w == ["--start-at", "1000000000.000"]));
        assert_eq!(cmds[2].argv.last().unwrap(), "8");
        // A local shard runs this very binary.
        assert_ne!(cmds[2].argv[0], "ssh");
    }

    #[test]
    fn failing_generators_are_named() {
        let stop = StopToken::new();
        let cmds = vec![
            ShardCommand {
                host: "h1".into(),
                shard: "1/3".into(),
                argv: vec!["sh".into(), "-c".into(), "echo nope >&2; exit 7".into()],
            },
            ShardCommand {
                host: "h2".into(),
                shard: "2/3".into(),
                argv: vec!["/nonexistent/launcher".into()],
            },
            ShardCommand {
                host: "h3".into(),
                shard: "3/3".into(),
                argv: vec!["sh".into(), "-c".into(), "echo not json".into()],
            },
        ];
        let r = run_shards(&cmds, &[], Duration::from_secs(20), &stop);
        assert!(r.records.is_empty());
        assert_eq!(r.failures.len(), 3, "{:?}", r.failures);
        let all = r.failures.join("\n");
        assert!(
            all.contains("generator h1 (shard 1/3)")
                && all.contains("code 7")
                && all.contains("nope"),
            "{all}"
        );
        assert!(
            all.contains("generator h2 (shard 2/3): cannot start"),
            "{all}"
        );
        assert!(
            all.contains("generator h3 (shard 3/3): printed no resplab result"),
            "{all}"
        );
    }

    #[test]
    fn a_hanging_generator_is_killed_at_the_deadline() {
        let stop = StopToken::new();
        let cmds = vec![ShardCommand {
            host: "slow".into(),
            shard: "1/1".into(),
            argv: vec!["sleep".into(), "30".into()],
        }];
        let t = Instant::now();
        let r = run_shards(&cmds, &[], Duration::from_millis(300), &stop);
        assert!(t.elapsed() < Duration::from_secs(5));
        assert!(
            r.failures[0].contains("no result within"),
            "{:?}",
            r.failures
        );
    }
}
