//! `resplab proto`: the protocol lab. Converts request streams between RESP and RESPB,
//! compares their wire sizes, and benchmarks three request decoders on the same
//! commands: RESPB, resplab's zero-copy RESP decoder, and an allocating RESP decoder that
//! builds an owned argument vector per command the way a conventional server does. The
//! workloads, the command text format and the decoder passes are `resplab_proto::lab`;
//! this file parses the flags, streams `convert`, re-executes itself per measurement,
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

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use resplab_proto::lab::bench::{
    bench_jobs, bench_rows, bench_table, measure, BenchJob, BenchSamples, Clocks, Sample,
};
use resplab_proto::lab::size::{size_rows, size_table, SizedCommand};
use resplab_proto::lab::workload::{build_stream, commands_for_size, generate, name_of};
use resplab_proto::lab::{self, DecoderKind, LabWorkload, Wire};
use resplab_workload::{Workload, WorkloadSpec};
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Resp,
    Respb,
}

impl Format {
    fn wire(self) -> Wire {
        match self {
            Format::Resp => Wire::Resp,
            Format::Respb => Wire::Respb,
        }
    }
}

#[derive(Debug, Args)]
struct ConvertArgs {
    /// Input format.
    #[arg(long)]
    from: Format,
    /// Output format.
    #[arg(long)]
    to: Format,
    /// Input file (default: standard input).
    input: Option<PathBuf>,
    /// Output file (default: standard output).
    #[arg(short = 'o', long = "output")]
    output: Option<PathBuf>,
    /// Mux id written into every RESPB frame (default: keep the input's, or 0 from RESP).
    #[arg(long)]
    mux: Option<u16>,
}

/// `--workload`: the lab's workloads by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum WorkloadName {
    Small,
    Medium,
    Large,
    Mixed,
}

impl WorkloadName {
    fn lab(self) -> LabWorkload {
        match self {
            WorkloadName::Small => LabWorkload::Small,
            WorkloadName::Medium => LabWorkload::Medium,
            WorkloadName::Large => LabWorkload::Large,
            WorkloadName::Mixed => LabWorkload::Mixed,
        }
    }
}

#[derive(Debug, Args)]
struct SizeArgs {
    /// A text file of commands, one per line, with shell-like quoting ("..." with
    /// backslash escapes, '...' literal). Blank lines and lines starting with # are skipped.
    #[arg(long, conflicts_with = "workload")]
    file: Option<PathBuf>,
    /// A generated protocol-lab workload instead of a file.
    #[arg(long, value_enum)]
    workload: Option<WorkloadName>,
    /// Commands to generate for --workload, or per test/phase for a `bench` workload.
    #[arg(long, short = 'n', alias = "requests", default_value_t = 100_000)]
    commands: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    bench: BenchWorkloadArgs,
}

/// The workload flags of `resplab bench`, with the same meaning: without --file or
/// --workload, `proto size` generates the requests `bench` would send.
#[derive(Debug, Args, Default)]
struct BenchWorkloadArgs {
    /// redis-benchmark tests, comma-separated (as `bench -t`).
    #[arg(short = 't', long, help_heading = "bench workload")]
    tests: Option<String>,
    /// Random keys in 0..N (as `bench -r`).
    #[arg(short = 'r', long, help_heading = "bench workload")]
    random_keys: Option<String>,
    /// Value size in bytes (as `bench -d`).
    #[arg(short = 'd', long, help_heading = "bench workload")]
    data_size: Option<String>,
    /// SET:GET ratio of a memtier-style mix (as `bench --ratio`).
    #[arg(long, help_heading = "bench workload")]
    ratio: Option<String>,
    /// Key pattern of the mix, e.g. R:R (as `bench --key-pattern`).
    #[arg(long, help_heading = "bench workload")]
    key_pattern: Option<String>,
    #[arg(long, help_heading = "bench workload")]
    key_minimum: Option<String>,
    #[arg(long, help_heading = "bench workload")]
    key_maximum: Option<String>,
    #[arg(long, help_heading = "bench workload")]
    key_prefix: Option<String>,
    #[arg(long, help_heading = "bench workload")]
    key_median: Option<String>,
    #[arg(long, help_heading = "bench workload")]
    key_stddev: Option<String>,
    #[arg(long, help_heading = "bench workload")]
    key_zipf_exp: Option<String>,
    #[arg(long, help_heading = "bench workload")]
    data_size_range: Option<String>,
    #[arg(long, help_heading = "bench workload")]
    data_size_list: Option<String>,
    /// A command template (as `bench --command`); repeatable.
    #[arg(long = "command", help_heading = "bench workload")]
    command: Vec<String>,
    #[arg(long = "command-ratio", help_heading = "bench workload")]
    command_ratio: Vec<String>,
    #[arg(long = "command-key-pattern", help_heading = "bench workload")]
    command_key_pattern: Vec<String>,
    /// Seed of the generated keys and values (as `bench --seed`).
    #[arg(long, help_heading = "bench workload")]
    seed: Option<String>,
}

impl BenchWorkloadArgs {
    /// The flags as `bench` would be given them; empty when none was set.
    fn to_bench_argv(&self) -> Vec<String> {
        let mut v = Vec::new();
        let mut one = |flag: &str, val: &Option<String>| {
            if let Some(x) = val {
                v.push(flag.to_string());
                v.push(x.clone());
            }
        };
        one("--tests", &self.tests);
        one("--random-keys", &self.random_keys);
        one("--data-size", &self.data_size);
        one("--ratio", &self.ratio);
        one("--key-pattern", &self.key_pattern);
        one("--key-minimum", &self.key_minimum);
        one("--key-maximum", &self.key_maximum);
        one("--key-prefix", &self.key_prefix);
        one("--key-median", &self.key_median);
        one("--key-stddev", &self.key_stddev);
        one("--key-zipf-exp", &self.key_zipf_exp);
        one("--data-size-range", &self.data_size_range);
        one("--data-size-list", &self.data_size_list);
        one("--seed", &self.seed);
        for (flag, list) in [
            ("--command", &self.command),
            ("--command-ratio", &self.command_ratio),
            ("--command-key-pattern", &self.command_key_pattern),
        ] {
            for x in list {
                v.push(flag.to_string());
                v.push(x.clone());
            }
        }
        v
    }
}

/// The `bench` workload flags as `resplab bench` reads them: its flags (`--tests …`) to
/// the workload it would run. `main` hands in `bench`'s own resolver, so both commands
/// resolve one way and neither imports the other.
pub type BenchWorkload<'a> = &'a dyn Fn(Vec<String>) -> Result<WorkloadSpec>;

/// `--decoder` of a measuring child: the lab's decoders by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DecoderName {
    Respb,
    RespZeroCopy,
    RespAllocating,
}

impl DecoderName {
    /// The name of a lab decoder (its `Debug` form is what errors show).
    fn of(d: DecoderKind) -> DecoderName {
        match d {
            DecoderKind::Respb => DecoderName::Respb,
            DecoderKind::RespZeroCopy => DecoderName::RespZeroCopy,
            DecoderKind::RespAllocating => DecoderName::RespAllocating,
        }
    }

    fn lab(self) -> DecoderKind {
        match self {
            DecoderName::Respb => DecoderKind::Respb,
            DecoderName::RespZeroCopy => DecoderKind::RespZeroCopy,
            DecoderName::RespAllocating => DecoderKind::RespAllocating,
        }
    }
}

#[derive(Debug, Args)]
struct BenchArgs {
    /// Workloads to run (default: all four).
    #[arg(long, value_enum, value_delimiter = ',')]
    workload: Vec<WorkloadName>,
    /// Benchmark a captured or generated stream of frames instead of the built-in workloads.
    #[arg(long, conflicts_with = "workload")]
    input: Option<PathBuf>,
    /// Format of --input.
    #[arg(long, value_enum, requires = "input")]
    input_format: Option<Format>,
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
    #[arg(long, hide = true, value_enum)]
    decoder: Option<DecoderName>,
}

/// Runs `resplab proto ...`.
///
/// # Errors
///
/// I/O failures and malformed input (with the byte offset or line).
pub fn run(args: ProtoArgs, bench_workload: BenchWorkload<'_>) -> Result<ExitCode> {
    match args.command {
        ProtoCommand::Convert(a) => convert(a),
        ProtoCommand::Size(a) => size(*a, bench_workload),
        ProtoCommand::Bench(a) => bench(a),
    }
}

fn write_output(path: Option<&PathBuf>, data: &[u8]) -> Result<()> {
    match path {
        Some(p) => std::fs::write(p, data).with_context(|| format!("cannot write {}", p.display())),
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(data).and_then(|()| out.flush()) {
                Ok(()) => Ok(()),
                // A closed pipe (`| head`) is not an error.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                Err(e) => Err(e).context("cannot write standard output"),
            }
        }
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
    let wires = (a.from.wire(), a.to.wire());
    match lab::convert::convert(&mut input, &mut output, wires, a.mux, &name) {
        Ok(_) => Ok(ExitCode::SUCCESS),
        Err(e) => {
            eprintln!("resplab: {e}");
            Ok(ExitCode::from(2))
        }
    }
}

// ---------------------------------------------------------------------------------------
// Commands from text and generated workloads
// ---------------------------------------------------------------------------------------

fn read_command_file(path: &PathBuf) -> Result<Vec<Vec<Vec<u8>>>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {} as UTF-8 text", path.display()))?;
    Ok(lab::text::commands(&text, &path.display().to_string())?)
}

fn size(a: SizeArgs, resolve: BenchWorkload<'_>) -> Result<ExitCode> {
    let bench_flags = a.bench.to_bench_argv();
    let cmds = match size_commands(&a, &bench_flags, resolve) {
        Ok(c) => c,
        Err(message) => {
            eprintln!("resplab: {message}");
            return Ok(ExitCode::from(2));
        }
    };
    // Bench phases keep their run order; named commands sort by name.
    let all = size_rows(&cmds, bench_flags.is_empty());
    let out = if a.json {
        let mut out = serde_json::to_string_pretty(&all)?;
        out.push('\n');
        out
    } else {
        size_table(&all)
    };
    write_output(None, out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// The commands `proto size` measures, from a file, a lab workload or bench workload
/// flags; the error is the message to print.
fn size_commands(
    a: &SizeArgs,
    bench_flags: &[String],
    resolve: BenchWorkload<'_>,
) -> std::result::Result<Vec<SizedCommand>, String> {
    if !bench_flags.is_empty() && (a.file.is_some() || a.workload.is_some()) {
        return Err(format!(
            "{} describes a bench workload; it cannot be combined with --file or --workload",
            bench_flags.first().map_or("", String::as_str)
        ));
    }
    match (&a.file, a.workload) {
        (Some(f), _) => match read_command_file(f) {
            Ok(c) => Ok(c.into_iter().map(|c| (name_of(&c), c, false)).collect()),
            Err(e) => Err(format!("{e:#}")),
        },
        (None, Some(w)) => Ok(generate(w.lab(), a.commands)
            .into_iter()
            .map(|c| (name_of(&c), c, false))
            .collect()),
        (None, None) if !bench_flags.is_empty() => {
            let requests = resolve(a.bench.to_bench_argv())
                .and_then(|spec| Ok(Workload::new(&spec)?))
                .map(|w| w.labelled_requests(a.commands));
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

// ---------------------------------------------------------------------------------------
// bench
// ---------------------------------------------------------------------------------------

/// The measuring child: one decoder on one workload or input file, its sample as one
/// JSON line on standard output.
fn child(a: &BenchArgs) -> Result<ExitCode> {
    let decoder = a
        .decoder
        .ok_or_else(|| anyhow!("--child needs --decoder"))?
        .lab();
    let (label, data, expected) = match (&a.input, a.workload.first()) {
        (Some(p), _) => (
            p.display().to_string(),
            std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))?,
            None,
        ),
        (None, Some(&w)) => {
            let w = w.lab();
            let cmds = generate(w, commands_for_size(w, a.size_mb));
            let n = cmds.len() as u64;
            (
                w.name().to_string(),
                build_stream(&cmds, decoder.wire()),
                Some(n),
            )
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
        (Some(p), Some(f)) => Some((p.display().to_string(), f.wire())),
        (Some(_), None) => bail!("--input needs --input-format resp|respb"),
        (None, _) => None,
    };
    let workloads: Vec<LabWorkload> = a.workload.iter().map(|w| w.lab()).collect();
    let jobs = bench_jobs(input.as_ref().map(|(n, w)| (n.as_str(), *w)), &workloads);
    let exe = std::env::current_exe().context("cannot find the resplab executable")?;
    let Some(samples) = run_jobs(&a, &exe, &jobs)? else {
        return Ok(ExitCode::from(2));
    };
    let rows = bench_rows(&samples);
    let out = if a.json {
        let doc = serde_json::json!({
            "iterations": a.iterations,
            "repetitions": a.repetitions,
            "size_mb": a.size_mb,
            "cpu": a.cpu,
            "results": rows,
        });
        let mut out = serde_json::to_string_pretty(&doc)?;
        out.push('\n');
        out
    } else {
        bench_table(&rows, a.repetitions, a.iterations, a.cpu)
    };
    write_output(None, out.as_bytes())?;
    Ok(ExitCode::SUCCESS)
}

/// Runs every job's decoders in a child process per repetition, with the decoder order
/// rotated each repetition so drift hits all alike; `None` when a child failed (said on
/// standard error).
fn run_jobs(a: &BenchArgs, exe: &Path, jobs: &[BenchJob]) -> Result<Option<BenchSamples>> {
    let mut samples = BenchSamples::new();
    for rep in 0..a.repetitions {
        for (label, w, decs) in jobs {
            let k = decs.len();
            for j in 0..k {
                let d = decs[(j + rep as usize) % k];
                let out = child_command(a, exe, *w, d).output().with_context(|| {
                    if a.cpu.is_some() {
                        "cannot run `taskset` (util-linux) for --cpu".to_string()
                    } else {
                        "cannot run the benchmark child process".to_string()
                    }
                })?;
                if !out.status.success() {
                    eprintln!(
                        "resplab: {} / {:?}: {}",
                        label,
                        DecoderName::of(d),
                        String::from_utf8_lossy(&out.stderr).trim()
                    );
                    return Ok(None);
                }
                let s: Sample = serde_json::from_slice(&out.stdout)
                    .context("cannot read the benchmark child's result")?;
                if !a.json {
                    eprint!(".");
                }
                samples.entry((label.clone(), d)).or_default().push(s);
            }
        }
    }
    if !a.json {
        eprintln!();
    }
    Ok(Some(samples))
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
            let format = match d.wire() {
                Wire::Respb => "respb",
                Wire::Resp => "resp",
            };
            cmd.arg("--input").arg(p).arg("--input-format").arg(format);
        }
        (None, None) => {}
    }
    cmd
}
