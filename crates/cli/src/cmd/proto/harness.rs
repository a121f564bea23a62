//! The parent side of `resplab proto bench`: the jobs of a run, one child process per
//! (job, decoder, repetition), and the medians and table made of the children's samples.
//! The measuring itself happens in the child (`proto bench --child`, in the parent module).

use super::{BenchArgs, DecoderName, Format, Sample, WorkloadName};
use anyhow::{anyhow, Context, Result};
use clap::ValueEnum;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// Medians over repetitions for one (workload, decoder).
#[derive(Debug, Clone, Serialize)]
pub(super) struct BenchRow {
    workload: String,
    decoder: String,
    repetitions: usize,
    commands_per_iteration: u64,
    commands_per_sec: f64,
    commands_per_sec_min: f64,
    commands_per_sec_max: f64,
    cpu_ns_per_command: f64,
    bytes_per_command: f64,
    allocations_per_command: f64,
    peak_memory_bytes: u64,
}

/// One benchmark job: its label, the lab workload it generates (none for `--input`) and
/// the decoders it measures.
pub(super) type BenchJob = (String, Option<WorkloadName>, Vec<DecoderName>);

/// The samples of each (job label, decoder), one per repetition.
pub(super) type BenchSamples = BTreeMap<(String, u8), Vec<Sample>>;

/// The jobs of a run: the `--input` file with the decoders of its format, or each
/// chosen lab workload (all four by default) with every decoder.
pub(super) fn bench_jobs(a: &BenchArgs) -> Result<Vec<BenchJob>> {
    let mut jobs: Vec<BenchJob> = Vec::new();
    let all = vec![
        DecoderName::Respb,
        DecoderName::RespZeroCopy,
        DecoderName::RespAllocating,
    ];
    if let Some(p) = &a.input {
        let fmt = a
            .input_format
            .ok_or_else(|| anyhow!("--input needs --input-format resp|respb"))?;
        let decs = match fmt {
            Format::Respb => vec![DecoderName::Respb],
            Format::Resp => vec![DecoderName::RespZeroCopy, DecoderName::RespAllocating],
        };
        jobs.push((p.display().to_string(), None, decs));
    } else {
        let ws = if a.workload.is_empty() {
            vec![
                WorkloadName::Small,
                WorkloadName::Medium,
                WorkloadName::Large,
                WorkloadName::Mixed,
            ]
        } else {
            a.workload.clone()
        };
        for w in ws {
            jobs.push((format!("{w:?}").to_lowercase(), Some(w), all.clone()));
        }
    }
    Ok(jobs)
}

/// Runs every job's decoders in a child process per repetition, with the decoder order
/// rotated each repetition so drift hits all alike; `None` when a child failed (said on
/// standard error).
pub(super) fn run_jobs(
    a: &BenchArgs,
    exe: &Path,
    jobs: &[BenchJob],
) -> Result<Option<BenchSamples>> {
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
                        d,
                        String::from_utf8_lossy(&out.stderr).trim()
                    );
                    return Ok(None);
                }
                let s: Sample = serde_json::from_slice(&out.stdout)
                    .context("cannot read the benchmark child's result")?;
                if !a.json {
                    eprint!(".");
                }
                samples.entry((label.clone(), d as u8)).or_default().push(s);
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
    w: Option<WorkloadName>,
    d: DecoderName,
) -> std::process::Command {
    let mut cmd = match a.cpu {
        Some(cpu) => {
            let mut c = std::process::Command::new("taskset");
            c.arg("-c").arg(cpu.to_string()).arg(exe);
            c
        }
        None => std::process::Command::new(exe),
    };
    cmd.args(["proto", "bench", "--child", "--decoder"])
        .arg(
            d.to_possible_value()
                .map(|v| v.get_name().to_string())
                .unwrap_or_default(),
        )
        .arg("--iterations")
        .arg(a.iterations.to_string())
        .arg("--size-mb")
        .arg(a.size_mb.to_string());
    match (w, &a.input) {
        (Some(w), _) => {
            cmd.arg("--workload").arg(format!("{w:?}").to_lowercase());
        }
        (None, Some(p)) => {
            cmd.arg("--input")
                .arg(p)
                .arg("--input-format")
                .arg(match d {
                    DecoderName::Respb => "respb",
                    _ => "resp",
                });
        }
        (None, None) => {}
    }
    cmd
}

/// One row per (job, decoder): medians over the repetitions, with the throughput's range.
pub(super) fn bench_rows(samples: &BenchSamples) -> Vec<BenchRow> {
    let mut rows = Vec::new();
    for ((label, _), ss) in samples {
        let Some(first) = ss.first() else { continue };
        let total = |s: &Sample| (s.commands * u64::from(s.iterations)).max(1) as f64;
        let mut cps: Vec<f64> = ss
            .iter()
            .map(|s| total(s) / (s.wall_ns.max(1) as f64 / 1e9))
            .collect();
        let mut cpu: Vec<f64> = ss.iter().map(|s| s.cpu_ns as f64 / total(s)).collect();
        let mut alloc: Vec<f64> = ss.iter().map(|s| s.allocations as f64 / total(s)).collect();
        let mut peak: Vec<f64> = ss.iter().map(|s| s.peak_memory_bytes as f64).collect();
        let min = cps.iter().copied().fold(f64::INFINITY, f64::min);
        let max = cps.iter().copied().fold(0.0, f64::max);
        rows.push(BenchRow {
            workload: label.clone(),
            decoder: first.decoder.clone(),
            repetitions: ss.len(),
            commands_per_iteration: first.commands,
            commands_per_sec: median(&mut cps),
            commands_per_sec_min: min,
            commands_per_sec_max: max,
            cpu_ns_per_command: median(&mut cpu),
            bytes_per_command: first.input_bytes as f64 / first.commands.max(1) as f64,
            allocations_per_command: median(&mut alloc),
            peak_memory_bytes: median(&mut peak) as u64,
        });
    }
    rows
}

/// The text table of `proto bench`, with the line saying how it was measured.
pub(super) fn bench_table(a: &BenchArgs, rows: &[BenchRow]) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{:<8} {:<16} {:>10} {:>14} {:>20} {:>9} {:>8} {:>9} {:>10}\n",
        "workload",
        "decoder",
        "cmds/iter",
        "M cmd/s",
        "[min-max]",
        "CPU ns/cmd",
        "B/cmd",
        "alloc/cmd",
        "peak MB"
    ));
    for r in rows {
        out.push_str(&format!(
            "{:<8} {:<16} {:>10} {:>14.1} {:>20} {:>10.2} {:>8.1} {:>9.2} {:>10.1}\n",
            r.workload,
            r.decoder,
            r.commands_per_iteration,
            r.commands_per_sec / 1e6,
            format!(
                "[{:.1}-{:.1}]",
                r.commands_per_sec_min / 1e6,
                r.commands_per_sec_max / 1e6
            ),
            r.cpu_ns_per_command,
            r.bytes_per_command,
            r.allocations_per_command,
            r.peak_memory_bytes as f64 / 1e6,
        ));
    }
    out.push_str(&format!(
        "medians of {} repetitions x at least {} passes (and 300 ms); CPU from the thread's CPU clock; peak = VmHWM of the measuring process (input included){}\n",
        a.repetitions,
        a.iterations,
        a.cpu.map_or(String::new(), |c| format!("; pinned to CPU {c}"))
    ));
    out
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}
