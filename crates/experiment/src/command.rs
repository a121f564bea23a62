//! Command workloads: a trial that runs any benchmark program (`go test -bench`,
//! redis-benchmark, memtier_benchmark, a team's own load test, `make test`) instead of
//! resplab's own load, and reads what it printed with the importers `compare` uses.
//!
//! The command runs in its own process group with the variant's environment, is killed
//! (with everything it started) at its timeout or when the run is stopped, and its
//! standard output and error are kept with the trial. Every trial records the command's
//! wall time and the CPU time of its process tree (its own and that of the descendants
//! it waited for, as `time` counts them), so a command with no `format` is still
//! measured. Whatever fails — the program is not found, exits non-zero, times out,
//! prints nothing or prints something its format does not describe — becomes a reason
//! that makes the trial invalid; nothing here aborts the run.

use crate::launch::Captured;
use crate::model::{CommandRun, OutputFormat};
use crate::words::{split_words, substitute};
use resplab_engine::StopToken;
use resplab_results::import::{self, Ctx, Format, Interner, PlainOptions};
use resplab_stats::hist::LatencyHistogram;
use resplab_store::MetricRow;
use std::collections::BTreeMap;
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Wall time of the command in seconds (stored under the `all` command).
pub const WALL_METRIC: &str = "wall_sec";
/// CPU time (user + system) of the command's process tree in seconds.
pub const CPU_METRIC: &str = "cpu_sec";

/// Most bytes of standard output kept (and parsed); standard error keeps less.
const STDOUT_LIMIT: u64 = 64 << 20;
const STDERR_LIMIT: u64 = 1 << 20;

/// A command line with its placeholders filled in, ready to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filled {
    /// The command line as shown in messages and stored with the trial.
    pub display: String,
    pub argv: Vec<String>,
    pub cwd: Option<String>,
}

/// Fills `{host}`, `{port}`, … into a command workload's line and working directory.
/// Words are split before filling in, so a value with spaces stays one word.
///
/// # Errors
/// A line that cannot be split into words.
pub fn fill(run: &CommandRun, values: &[(&str, &str)]) -> Result<Filled, String> {
    let display = substitute(&run.line, values);
    let argv = if run.shell {
        vec!["sh".to_string(), "-c".to_string(), display.clone()]
    } else {
        split_words(&run.line)?
            .iter()
            .map(|w| substitute(w, values))
            .collect()
    };
    Ok(Filled {
        display,
        argv,
        cwd: run.cwd.as_ref().map(|c| substitute(c, values)),
    })
}

/// What one run of a command produced.
#[derive(Clone, Debug, Default)]
pub struct Finished {
    /// The exit status; `None` when it never started or was killed.
    pub exit_code: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    pub wall: Duration,
    /// CPU seconds of the process tree (`None` where `/proc` cannot say).
    pub cpu_sec: Option<f64>,
    /// Why the run is not usable (start failure, timeout, non-zero exit).
    pub failure: Option<String>,
    /// The stop token fired: the command was killed and nothing should be stored.
    pub interrupted: bool,
}

/// Runs a filled command with `env` added to resplab's environment.
pub fn execute(
    filled: &Filled,
    env: &[(String, String)],
    timeout: Duration,
    stop: &StopToken,
) -> Finished {
    let mut out = Finished::default();
    let Some((program, args)) = filled.argv.split_first() else {
        out.failure = Some("empty command line".into());
        return out;
    };
    let mut cmd = Command::new(program);
    cmd.args(args)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    if let Some(dir) = &filled.cwd {
        cmd.current_dir(dir);
    }
    let cpu_before = resplab_sys::proc::children_cpu_sec();
    let t0 = Instant::now();
    let mut cap = match Captured::spawn(&mut cmd, STDOUT_LIMIT, STDERR_LIMIT) {
        Ok(c) => c,
        Err(e) => {
            let cwd = filled
                .cwd
                .as_ref()
                .map(|d| format!(" in {d}"))
                .unwrap_or_default();
            out.failure = Some(format!("cannot start `{program}`{cwd}: {e}"));
            return out;
        }
    };
    let status = loop {
        match cap.child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(e) => {
                out.failure = Some(format!("waiting for `{program}`: {e}"));
                break None;
            }
        }
        if stop.is_stopped() || t0.elapsed() > timeout {
            out.interrupted = stop.is_stopped();
            if !out.interrupted {
                out.failure = Some(format!(
                    "timed out after {:.1} s (timeout {:.1} s): killed",
                    t0.elapsed().as_secs_f64(),
                    timeout.as_secs_f64()
                ));
            }
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    out.wall = t0.elapsed();
    let (stdout, stderr) = cap.finish();
    out.stdout = stdout;
    out.stderr = stderr;
    out.cpu_sec = match (cpu_before, resplab_sys::proc::children_cpu_sec()) {
        (Some(a), Some(b)) if b >= a => Some(b - a),
        _ => None,
    };
    if let Some(status) = status {
        out.exit_code = status.code();
        if out.failure.is_none() && !status.success() {
            let hint = if status.code() == Some(127) {
                " (the shell did not find the command)"
            } else {
                ""
            };
            out.failure = Some(match status.code() {
                Some(c) => format!("exited with status {c}{hint}"),
                None => format!("was killed by a signal ({status})"),
            });
        }
    }
    out
}

/// What one run's output gave.
#[derive(Debug, Default)]
pub struct Readout {
    /// Wall and CPU time, then every value the output carries.
    pub metrics: Vec<MetricRow>,
    /// The latency histograms it carried, by request type (several runs of one type
    /// merged), in nanoseconds; `total` is the one of all types together, when given.
    pub histograms: Vec<(String, LatencyHistogram)>,
    pub total: Option<LatencyHistogram>,
}

/// The metrics of one run: wall and CPU time, then every value its output carries in
/// `format` (several values of one benchmark and metric — `-count=3` — are averaged),
/// and the latency histograms it carries (memtier's, per request type).
///
/// # Errors
/// Why the output is not usable: nothing printed, a format it does not match, no values,
/// a histogram that cannot be read.
pub fn read_metrics(format: Option<OutputFormat>, finished: &Finished) -> Result<Readout, String> {
    let all = resplab_store::ALL_COMMANDS.to_string();
    let mut rows = vec![MetricRow {
        command: all.clone(),
        name: WALL_METRIC.into(),
        unit: "s".into(),
        direction: "lower_is_better".into(),
        value: finished.wall.as_secs_f64(),
    }];
    if let Some(cpu) = finished.cpu_sec {
        rows.push(MetricRow {
            command: all.clone(),
            name: CPU_METRIC.into(),
            unit: "s".into(),
            direction: "lower_is_better".into(),
            value: cpu,
        });
    }
    let Some(format) = format else {
        return Ok(Readout {
            metrics: rows,
            ..Readout::default()
        });
    };
    if finished.stdout.iter().all(|b| b.is_ascii_whitespace()) {
        return Err("printed nothing on standard output to read".into());
    }
    let imported = import_output(format, &finished.stdout)?;
    push_averages(&imported, &all, &mut rows)?;
    let mut out = Readout {
        metrics: rows,
        ..Readout::default()
    };
    merge_histograms(&imported, &mut out)?;
    Ok(out)
}

/// The standard output read in `format`.
fn import_output(format: OutputFormat, bytes: &[u8]) -> Result<import::Imported, String> {
    let mut interner = Interner::default();
    let mut ctx = Ctx {
        label: Arc::from(""),
        file: Arc::from("standard output"),
        interner: &mut interner,
    };
    let plain = PlainOptions::default();
    match format {
        OutputFormat::Auto => import::import_bytes(bytes, &mut ctx, &plain),
        OutputFormat::RedisBenchmark => {
            import::import_as(bytes, &mut ctx, Format::RedisBenchmarkText, &plain)
        }
        OutputFormat::Memtier => import::import_as(bytes, &mut ctx, Format::Memtier, &plain),
        OutputFormat::Gobench => import::import_as(bytes, &mut ctx, Format::GoBench, &plain),
        OutputFormat::Resplab => import::import_as(bytes, &mut ctx, Format::Resplab, &plain),
        OutputFormat::Numbers => import::import_as(bytes, &mut ctx, Format::Plain, &plain),
        OutputFormat::Hyperfine => import::import_as(bytes, &mut ctx, Format::Hyperfine, &plain),
    }
    .map_err(|e| e.to_string())
}

/// Appends one row per (command, metric) of the output's unflagged finite values, in
/// first-seen order, averaging several values of one.
fn push_averages(
    imported: &import::Imported,
    all: &str,
    rows: &mut Vec<MetricRow>,
) -> Result<(), String> {
    // (command, metric name) → (unit, direction, sum, count), in first-seen order.
    let mut order = Vec::new();
    let mut sums: BTreeMap<(String, String), (String, String, f64, u32)> = BTreeMap::new();
    for o in imported.observations.iter() {
        if o.flag.is_some() || !o.value.is_finite() {
            continue;
        }
        let command = if o.workload.is_empty() {
            all.to_string()
        } else {
            o.workload.to_string()
        };
        let key = (command, o.metric.name.clone());
        let e = sums.entry(key.clone()).or_insert_with(|| {
            order.push(key);
            (
                o.metric.unit.clone(),
                o.metric.direction.as_str().to_string(),
                0.0,
                0,
            )
        });
        e.2 += o.value;
        e.3 += 1;
    }
    if order.is_empty() {
        return Err(format!(
            "its output ({}) holds no values",
            imported.format.map_or("unknown format", |f| f.name())
        ));
    }
    for key in order {
        let (unit, direction, sum, n) = &sums[&key];
        rows.push(MetricRow {
            command: key.0,
            name: key.1,
            unit: unit.clone(),
            direction: direction.clone(),
            value: sum / f64::from(*n),
        });
    }
    Ok(())
}

/// The output's latency histograms, merged per request type and into the total.
fn merge_histograms(imported: &import::Imported, out: &mut Readout) -> Result<(), String> {
    for f in &imported.histograms {
        let h = LatencyHistogram::from_base64_in(&f.hdr_base64, f.unit_ns)
            .map_err(|e| format!("printed a latency histogram of {} that {e}", f.workload))?;
        if f.total {
            out.total
                .get_or_insert_with(LatencyHistogram::new)
                .merge(&h);
        }
        match out.histograms.iter_mut().find(|(w, _)| *w == f.workload) {
            Some((_, merged)) => merged.merge(&h),
            None => out.histograms.push((f.workload.clone(), h)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(line: &str, shell: bool, format: Option<OutputFormat>) -> CommandRun {
        CommandRun {
            line: line.into(),
            shell,
            timeout: Duration::from_secs(10),
            cwd: None,
            format,
        }
    }

    #[test]
    fn placeholders_are_filled_per_word() {
        let f = fill(
            &run("bench -h {host} --name '{variant}'", false, None),
            &[("host", "127.0.0.1"), ("variant", "a b")],
        )
        .unwrap();
        assert_eq!(f.argv, ["bench", "-h", "127.0.0.1", "--name", "a b"]);
        let f = fill(&run("echo {port} | cat", true, None), &[("port", "7")]).unwrap();
        assert_eq!(f.argv, ["sh", "-c", "echo 7 | cat"]);
    }

    #[test]
    fn go_bench_output_becomes_rows_per_benchmark_and_unit() {
        let out = "goos: linux\nBenchmarkGet-2 \t 1000\t 1500 ns/op\t 64 B/op\t 2 allocs/op\n\
                   BenchmarkGet-2 \t 1000\t 2500 ns/op\t 64 B/op\t 2 allocs/op\nPASS\n";
        let f = execute(
            &fill(&run(&format!("printf '{out}'"), true, None), &[]).unwrap(),
            &[],
            Duration::from_secs(10),
            &StopToken::new(),
        );
        assert_eq!(f.failure, None);
        let rows = read_metrics(Some(OutputFormat::Gobench), &f)
            .unwrap()
            .metrics;
        assert_eq!(rows[0].name, WALL_METRIC);
        let ns = rows.iter().find(|r| r.name == "ns/op").unwrap();
        assert_eq!((ns.command.as_str(), ns.value), ("Get-2", 2000.0));
        assert_eq!(ns.direction, "lower_is_better");
        assert!(rows.iter().any(|r| r.name == "allocs/op" && r.value == 2.0));
        // The same bytes under another declared format are refused, naming both.
        let err = read_metrics(Some(OutputFormat::Memtier), &f).unwrap_err();
        assert!(err.contains("expected memtier JSON output"), "{err}");
    }

    #[test]
    fn failures_are_reasons() {
        let stop = StopToken::new();
        let t = Duration::from_secs(10);
        let missing = execute(
            &fill(&run("no-such-program-xyz --x", false, None), &[]).unwrap(),
            &[],
            t,
            &stop,
        );
        assert!(missing
            .failure
            .unwrap()
            .contains("cannot start `no-such-program-xyz`"));
        let exit = execute(
            &fill(&run("exit 3", true, None), &[]).unwrap(),
            &[],
            t,
            &stop,
        );
        assert_eq!(exit.failure.as_deref(), Some("exited with status 3"));
        let slow = execute(
            &fill(&run("sleep 30", true, None), &[]).unwrap(),
            &[],
            Duration::from_millis(200),
            &stop,
        );
        assert!(slow.failure.unwrap().starts_with("timed out after"));
        assert!(slow.wall < Duration::from_secs(5));
        let silent = execute(&fill(&run("true", true, None), &[]).unwrap(), &[], t, &stop);
        assert!(read_metrics(Some(OutputFormat::Auto), &silent)
            .unwrap_err()
            .contains("printed nothing"));
        // Without a format, wall and CPU time are the metrics.
        let rows = read_metrics(None, &silent).unwrap().metrics;
        assert_eq!(rows[0].name, WALL_METRIC);
    }

    #[test]
    fn the_command_runs_in_its_cwd_with_the_given_environment() {
        let dir = std::env::temp_dir();
        let mut r = run("echo $PWD $RESPLAB_X", true, Some(OutputFormat::Auto));
        r.cwd = Some("{dir}".into());
        let f = fill(&r, &[("dir", &dir.display().to_string())]).unwrap();
        let done = execute(
            &f,
            &[("RESPLAB_X".into(), "7".into())],
            Duration::from_secs(10),
            &StopToken::new(),
        );
        let out = String::from_utf8_lossy(&done.stdout).into_owned();
        let canonical = dir.canonicalize().unwrap();
        assert!(
            out.starts_with(&*dir.display().to_string())
                || out.starts_with(&*canonical.display().to_string()),
            "{out}"
        );
        assert!(out.trim_end().ends_with(" 7"), "{out}");
        let missing = execute(
            &fill(&r, &[("dir", "/no/such/dir-xyz")]).unwrap(),
            &[],
            Duration::from_secs(10),
            &StopToken::new(),
        );
        assert!(missing.failure.unwrap().contains("in /no/such/dir-xyz"));
    }

    #[test]
    fn cpu_time_of_the_process_tree_is_counted() {
        let f = execute(
            &fill(
                &run(
                    "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done",
                    true,
                    None,
                ),
                &[],
            )
            .unwrap(),
            &[],
            Duration::from_secs(30),
            &StopToken::new(),
        );
        assert_eq!(f.failure, None);
        assert!(f.cpu_sec.unwrap() > 0.05, "{:?}", f.cpu_sec);
    }
}
