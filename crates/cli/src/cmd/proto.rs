//! `resplab proto`: the protocol lab. Converts request streams between RESP and RESPB,
//! compares their wire sizes, and benchmarks three request decoders on the same
//! commands: RESPB, resplab's zero-copy RESP decoder, and an allocating RESP decoder that
//! builds an owned argument vector per command the way a conventional server does. The
//! workloads, the command text format and the decoder passes are `resplab_proto::lab`;
//! `proto size`'s bench workload
//! is `resplab_engine::words`'. This file parses the flags, streams `convert`,
//! re-executes itself per measurement (in the order `lab::bench::bench_schedule` gives),
//! and prints.
//!
//! `proto convert` streams (`resplab_proto::lab::convert`): memory stays bounded by the
//! largest request rather than the input. Byte offsets in its errors count from the start
//! of the input; what was converted before a malformed request has already been written.
//!
//! `proto bench` runs every measurement in a child process (the same binary, re-executed
//! with a hidden `--child` flag, under `taskset` when `--cpu` is given), so each
//! decoder's peak memory is its own and pinning needs no system calls of ours. CPU time
//! comes from the measuring thread's CPU clock (`resplab_sys::proc::thread_cpu_ns`).
//! Allocations are counted by the decoders themselves: the RESPB and zero-copy decoders
//! reuse one argument buffer and make none after warm-up (checked by watching its
//! capacity), the allocating decoder counts each vector it creates.

use crate::output::write_stdout;
use anyhow::{anyhow, bail, Context, Result};
use clap::builder::{PossibleValuesParser, TypedValueParser as _};
use clap::{Args, Subcommand};
use resplab_engine::words::bench::BenchWords;
use resplab_engine::words::workload::WorkloadWords;
use resplab_proto::lab::bench::{
    bench_jobs, bench_rows, bench_schedule, bench_table, measure, BenchSamples, Clocks, Sample,
};
use resplab_proto::lab::size::{size_rows, size_table, SizedCommand};
use resplab_proto::lab::workload::{generate, name_of, sized_stream};
use resplab_proto::lab::{self, DecoderKind, LabWorkload, Wire};
use resplab_workload::Workload;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Arguments of `resplab proto`.
#[derive(Debug, Args)]
pub struct ProtoArgs {
    #[command(subcommand)]
    command: ProtoCommand,
}

#[derive(Debug, Subcommand)]
enum ProtoCommand {
    /// Convert a stream of requests between RESP and RESPB (stdin to stdout by default).
    Convert(ConvertArgs),
    /// Wire bytes per command type and in total, RESP2 against RESPB.
    Size(Box<SizeArgs>),
    /// Decode throughput, CPU per command, allocations and peak memory of three decoders.
    Bench(BenchArgs),
}

/// The lab's names of its wire formats, workloads and decoders as clap value parsers,
/// so that `--help` lists them.
macro_rules! lab_names {
    ($fn:ident, $ty:ty) => {
        fn $fn() -> impl clap::builder::TypedValueParser<Value = $ty> {
            PossibleValuesParser::new(<$ty>::ALL.map(<$ty>::name))
                .try_map(|s| <$ty>::from_name(&s).ok_or_else(|| format!("unknown name {s}")))
        }
    };
}
lab_names!(wire, Wire);
lab_names!(lab_workload, LabWorkload);
lab_names!(decoder, DecoderKind);

#[derive(Debug, Args)]
struct ConvertArgs {
    /// Input format.
    #[arg(long, value_parser = wire())]
    from: Wire,
    /// Output format.
    #[arg(long, value_parser = wire())]
    to: Wire,
    /// Input file (default: standard input).
    input: Option<PathBuf>,
    /// Output file (default: standard output).
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Mux id written into every RESPB frame (default: keep the input's, or 0 from RESP).
    #[arg(long)]
    mux: Option<u16>,
}

#[derive(Debug, Args)]
struct SizeArgs {
    /// A text file of commands, one per line, with shell-like quoting ("..." with
    /// backslash escapes, '...' literal). Blank lines and lines starting with # are skipped.
    #[arg(long, conflicts_with = "workload")]
    file: Option<PathBuf>,
    /// A generated protocol-lab workload instead of a file.
    #[arg(long, value_parser = lab_workload())]
    workload: Option<LabWorkload>,
    /// Commands to generate for --workload, or per test/phase for a `bench` workload.
    #[arg(
        long = "commands",
        value_name = "COMMANDS",
        short = 'n',
        alias = "requests",
        default_value_t = 100_000
    )]
    count: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Seed of a bench workload's keys and values (as `bench --seed`).
    #[arg(long)]
    seed: Option<String>,
    /// `resplab bench`'s workload flags, with the same meaning: without --file or
    /// --workload, `proto size` generates the requests `bench` would send.
    #[command(flatten)]
    bench: WorkloadWords,
}

#[derive(Debug, Args)]
struct BenchArgs {
    /// Workloads to run (default: all four).
    #[arg(long, value_parser = lab_workload(), value_delimiter = ',')]
    workload: Vec<LabWorkload>,
    /// Benchmark a captured or generated stream of frames instead of the built-in workloads.
    #[arg(long, conflicts_with = "workload")]
    input: Option<PathBuf>,
    /// Format of --input.
    #[arg(long, value_parser = wire(), requires = "input")]
    input_format: Option<Wire>,
    /// Size of each generated workload in MiB of RESP.
    #[arg(long, default_value_t = 10)]
    size_mb: usize,
    /// Passes over the workload per repetition (at least; passes continue until 300 ms).
    #[arg(long, default_value_t = 10)]
    iterations: u32,
    /// Repetitions; medians are reported.
    #[arg(long, default_value_t = 5)]
    repetitions: u32,
    /// Pin each measurement to this CPU (runs the child under `taskset -c N`).
    #[arg(long)]
    cpu: Option<usize>,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    #[arg(long, hide = true)]
    child: bool,
    #[arg(long, hide = true, value_parser = decoder())]
    decoder: Option<DecoderKind>,
}

/// Runs `resplab proto ...`.
///
/// # Errors
///
/// I/O failures and malformed input (with the byte offset or line).
pub fn run(args: ProtoArgs) -> Result<ExitCode> {
    match args.command {
        ProtoCommand::Convert(a) => convert(a),
        ProtoCommand::Size(a) => size(*a),
        ProtoCommand::Bench(a) => bench(a),
    }
}

fn convert(a: ConvertArgs) -> Result<ExitCode> {
    let name = a
        .input
        .as_ref()
        .map_or_else(|| "stdin".to_string(), |p| p.display().to_string());
    let mut input: Box<dyn Read> = match &a.input {
        Some(p) => Box::new(
            std::fs::File::open(p).with_context(|| format!("cannot read {}", p.display()))?,
        ),
        None => Box::new(std::io::stdin()),
    };
    let mut output: Box<dyn Write> = match &a.output {
        Some(p) => Box::new(
            std::fs::File::create(p).with_context(|| format!("cannot write {}", p.display()))?,
        ),
        None => Box::new(std::io::stdout()),
    };
    match lab::convert::convert(&mut input, &mut output, (a.from, a.to), a.mux, &name) {
        Ok(_) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            eprintln!("resplab: {e}");
            Ok(ExitCode::from(2))
        }
    }
}

fn size(a: SizeArgs) -> Result<ExitCode> {
    let words = BenchWords {
        workload: a.bench.clone(),
        seed: a.seed.clone(),
        ..BenchWords::default()
    };
    let bench_flag = a.bench.first_given().or(a.seed.as_ref().map(|_| "--seed"));
    let cmds = match size_commands(&a, bench_flag, &words) {
        Ok(c) => c,
        Err(message) => {
            eprintln!("resplab: {message}");
            return Ok(ExitCode::from(2));
        }
    };
    // Bench phases keep their run order; named commands sort by name.
    let all = size_rows(&cmds, bench_flag.is_none());
    let out = if a.json {
        serde_json::to_string_pretty(&all)? + "\n"
    } else {
        size_table(&all)
    };
    write_stdout(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// The commands `proto size` measures, from a file, a lab workload or bench workload
/// flags (`bench_flag`: the first one given); the error is the message to print.
fn size_commands(
    a: &SizeArgs,
    bench_flag: Option<&str>,
    words: &BenchWords,
) -> std::result::Result<Vec<SizedCommand>, String> {
    if let (Some(flag), true) = (bench_flag, a.file.is_some() || a.workload.is_some()) {
        return Err(format!(
            "{flag} describes a bench workload; it cannot be combined with --file or --workload"
        ));
    }
    let named = |c: Vec<Vec<u8>>| (name_of(&c), c, false);
    match (&a.file, a.workload) {
        (Some(f), _) => read_command_file(f)
            .map(|c| c.into_iter().map(named).collect())
            .map_err(|e| format!("{e:#}")),
        (None, Some(w)) => Ok(generate(w, a.count).into_iter().map(named).collect()),
        (None, None) if bench_flag.is_some() => {
            let requests = resplab_engine::words::workload::workload_alone(words)
                .map_err(anyhow::Error::from)
                .and_then(|spec| Ok(Workload::new(&spec)?))
                .map(|w| w.labelled_requests(a.count));
            match requests {
                Ok(c) => Ok(c
                    .into_iter()
                    .map(|(label, req)| {
                        let args = req.args().map(<[u8]>::to_vec).collect();
                        (label, args, req.is_inline())
                    })
                    .collect()),
                Err(e) => Err(format!("{e:#}")),
            }
        }
        (None, None) => Err(
            "proto size needs --file FILE, --workload small|medium|large|mixed, or bench workload flags (-t, -d, -r, --ratio, --command, ...)"
                .to_string(),
        ),
    }
}

fn read_command_file(path: &PathBuf) -> Result<Vec<Vec<Vec<u8>>>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {} as UTF-8 text", path.display()))?;
    Ok(lab::text::commands(&text, &path.display().to_string())?)
}

/// The measuring child: one decoder on one workload or input file, its sample as one
/// JSON line on standard output.
fn child(a: &BenchArgs) -> Result<ExitCode> {
    let decoder = a
        .decoder
        .ok_or_else(|| anyhow!("--child needs --decoder"))?;
    let (label, data, expected) = match (&a.input, a.workload.first()) {
        (Some(p), _) => (
            p.display().to_string(),
            std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?,
            None,
        ),
        (None, Some(&w)) => {
            let (data, n) = sized_stream(w, a.size_mb, decoder.wire());
            (w.name().to_string(), data, Some(n))
        }
        (None, None) => bail!("--child needs --workload or --input"),
    };
    let t0 = Instant::now();
    let clocks = Clocks {
        elapsed: &|| t0.elapsed(),
        thread_cpu_ns: &resplab_sys::proc::thread_cpu_ns,
    };
    let mut s = measure(decoder, &label, &data, expected, a.iterations, &clocks)?;
    s.peak_memory_bytes = resplab_sys::proc::peak_rss_bytes().unwrap_or(0);
    println!("{}", serde_json::to_string(&s)?);
    Ok(ExitCode::SUCCESS)
}

fn bench(a: BenchArgs) -> Result<ExitCode> {
    if a.child {
        return child(&a);
    }
    if a.iterations == 0 || a.repetitions == 0 {
        eprintln!("resplab: --iterations and --repetitions must be at least 1");
        return Ok(ExitCode::from(2));
    }
    let input = match (&a.input, a.input_format) {
        (Some(p), Some(f)) => Some((p.display().to_string(), f)),
        (Some(_), None) => bail!("--input needs --input-format resp|respb"),
        (None, _) => None,
    };
    let jobs = bench_jobs(input.as_ref().map(|(n, w)| (n.as_str(), *w)), &a.workload);
    let exe = std::env::current_exe().context("cannot find the resplab executable")?;
    let mut samples = BenchSamples::new();
    for (label, w, d) in bench_schedule(&jobs, a.repetitions) {
        let Some(s) = run_child(&a, &exe, (label, w, d))? else {
            return Ok(ExitCode::from(2));
        };
        samples.entry((label.to_string(), d)).or_default().push(s);
    }
    if !a.json {
        eprintln!();
    }
    let rows = bench_rows(&samples);
    let out = if a.json {
        let doc = serde_json::json!({
            "iterations": a.iterations,
            "repetitions": a.repetitions,
            "size_mb": a.size_mb,
            "cpu": a.cpu,
            "results": rows,
        });
        serde_json::to_string_pretty(&doc)? + "\n"
    } else {
        bench_table(&rows, a.repetitions, a.iterations, a.cpu)
    };
    write_stdout(out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// One measurement in a child process (a dot on standard error unless `--json`);
/// `None` when the child failed (said on standard error).
fn run_child(
    a: &BenchArgs,
    exe: &Path,
    (label, w, d): (&str, Option<LabWorkload>, DecoderKind),
) -> Result<Option<Sample>> {
    let out = child_command(a, exe, w, d).output().with_context(|| {
        if a.cpu.is_some() {
            "cannot run `taskset` (util-linux) for --cpu".to_string()
        } else {
            "cannot run the benchmark child process".to_string()
        }
    })?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        eprintln!("resplab: {label} / {d:?}: {}", why.trim());
        return Ok(None);
    }
    let s: Sample =
        serde_json::from_slice(&out.stdout).context("cannot read the benchmark child's result")?;
    if !a.json {
        eprint!(".");
    }
    Ok(Some(s))
}

/// The `proto bench --child` process that measures decoder `d` on one job, pinned with
/// `taskset` when `--cpu` is given.
fn child_command(
    a: &BenchArgs,
    exe: &Path,
    w: Option<LabWorkload>,
    d: DecoderKind,
) -> std::process::Command {
    let mut cmd = match a.cpu {
        Some(cpu) => {
            let mut c = std::process::Command::new("taskset");
            c.arg("-c").arg(cpu.to_string()).arg(exe);
            c
        }
        None => std::process::Command::new(exe),
    };
    cmd.args(["proto", "bench", "--child", "--decoder", d.name()])
        .arg("--iterations")
        .arg(a.iterations.to_string())
        .arg("--size-mb")
        .arg(a.size_mb.to_string());
    match (w, &a.input) {
        (Some(w), _) => {
            cmd.arg("--workload").arg(w.name());
        }
        (None, Some(p)) => {
            let format = d.wire().name();
            cmd.arg("--input").arg(p).arg("--input-format").arg(format);
        }
        (None, None) => {}
    }
    cmd
}
