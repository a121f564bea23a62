//! What `proto bench` measures and reports: the jobs of a run, one measurement of a
//! decoder on a stream ([`measure`], done in a child process of its own by the caller),
//! and the medians over repetitions with the table that shows them.
//!
//! The clocks are the caller's: [`measure`] is handed a wall clock and the measuring
//! thread's CPU clock, so this module stays a function of bytes and numbers.

use super::pass::pass;
use super::{DecoderKind, LabError, LabWorkload, Wire};
use crate::resp::Limits;
use crate::respb::codec::Decoder;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// One child measurement.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sample {
    pub workload: String,
    /// The decoder's name ([`DecoderKind::name`]).
    pub decoder: String,
    pub commands: u64,
    pub input_bytes: u64,
    pub iterations: u32,
    pub wall_ns: u64,
    pub cpu_ns: u64,
    pub allocations: u64,
    pub peak_memory_bytes: u64,
    pub checksum: u64,
}

/// The shortest measured stretch of one measurement.
pub const MIN_MEASURE: Duration = Duration::from_millis(300);

/// The clocks a measurement reads: time since it began, and the measuring thread's CPU
/// time in ns (`None` where unreadable: wall time stands in).
pub struct Clocks<'a> {
    pub elapsed: &'a dyn Fn() -> Duration,
    pub thread_cpu_ns: &'a dyn Fn() -> Option<u64>,
}

impl std::fmt::Debug for Clocks<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Clocks")
    }
}

/// Measures `decoder` on `data`: one warm-up pass (checked to decode `expected` commands
/// when given), then at least `iterations` passes and at least [`MIN_MEASURE`], so that
/// a run of a few milliseconds is not measured on a handful of passes. The sample's
/// peak memory is left 0 for the caller, which knows its process.
///
/// # Errors
/// The data does not decode, or a pass decodes another number of commands.
pub fn measure(
    decoder: DecoderKind,
    workload: &str,
    data: &[u8],
    expected: Option<u64>,
    iterations: u32,
    clocks: &Clocks<'_>,
) -> Result<Sample, LabError> {
    let limits = Limits::default();
    let dec = Decoder::new(limits);
    // Warm-up pass (not measured): page in the input, size the reusable buffers.
    let (n, _, _) = pass(decoder, data, &dec, &limits)?;
    if let Some(e) = expected.filter(|e| *e != n) {
        return Err(LabError(format!(
            "decoded {n} commands, expected {e}: the workload was not consumed completely"
        )));
    }
    let cpu0 = (clocks.thread_cpu_ns)();
    let t0 = (clocks.elapsed)();
    let (mut checksum, mut allocs, mut passes) = (0u64, 0u64, 0u32);
    while passes < iterations || (clocks.elapsed)().saturating_sub(t0) < MIN_MEASURE {
        let (k, s, al) = pass(decoder, std::hint::black_box(data), &dec, &limits)?;
        if k != n {
            return Err(LabError(format!(
                "pass decoded {k} commands, the warm-up {n}"
            )));
        }
        checksum = checksum.wrapping_add(s);
        allocs += al;
        passes = passes.saturating_add(1);
    }
    let wall_ns = (clocks.elapsed)().saturating_sub(t0).as_nanos() as u64;
    let cpu_ns = match (cpu0, (clocks.thread_cpu_ns)()) {
        (Some(a0), Some(a1)) => a1.saturating_sub(a0),
        _ => wall_ns,
    };
    Ok(Sample {
        workload: workload.to_string(),
        decoder: decoder.name().to_string(),
        commands: n,
        input_bytes: data.len() as u64,
        iterations: passes,
        wall_ns,
        cpu_ns,
        allocations: allocs,
        peak_memory_bytes: 0,
        checksum,
    })
}

/// One benchmark job: its label, the lab workload it generates (none for an input file)
/// and the decoders it measures.
pub type BenchJob = (String, Option<LabWorkload>, Vec<DecoderKind>);

/// The jobs of a run: an input file (its name and wire format) with the decoders of its
/// format, or each chosen lab workload (all four when none is chosen) with every decoder.
pub fn bench_jobs(input: Option<(&str, Wire)>, workloads: &[LabWorkload]) -> Vec<BenchJob> {
    if let Some((name, wire)) = input {
        let decs = DecoderKind::ALL
            .into_iter()
            .filter(|d| d.wire() == wire)
            .collect();
        return vec![(name.to_string(), None, decs)];
    }
    let chosen = if workloads.is_empty() {
        &LabWorkload::ALL[..]
    } else {
        workloads
    };
    chosen
        .iter()
        .map(|w| (w.name().to_string(), Some(*w), DecoderKind::ALL.to_vec()))
        .collect()
}

/// The order of a run's measurements: every job's decoders once per repetition, the
/// decoder order rotated each repetition so drift hits all alike.
pub fn bench_schedule(
    jobs: &[BenchJob],
    repetitions: u32,
) -> Vec<(&str, Option<LabWorkload>, DecoderKind)> {
    let mut order = Vec::new();
    for rep in 0..repetitions as usize {
        for (label, w, decs) in jobs {
            let k = decs.len();
            for j in 0..k {
                order.push((label.as_str(), *w, decs[(j + rep) % k]));
            }
        }
    }
    order
}

/// The samples of each (job label, decoder), one per repetition.
pub type BenchSamples = BTreeMap<(String, DecoderKind), Vec<Sample>>;

/// Medians over repetitions for one (workload, decoder).
#[derive(Debug, Clone, Serialize)]
pub struct BenchRow {
    pub workload: String,
    pub decoder: String,
    pub repetitions: usize,
    pub commands_per_iteration: u64,
    pub commands_per_sec: f64,
    pub commands_per_sec_min: f64,
    pub commands_per_sec_max: f64,
    pub cpu_ns_per_command: f64,
    pub bytes_per_command: f64,
    pub allocations_per_command: f64,
    pub peak_memory_bytes: u64,
}

/// One row per (job, decoder): medians over the repetitions ([`plain_median`]), with the
/// throughput's range.
///
/// [`plain_median`]: resplab_stats::describe::plain_median
pub fn bench_rows(samples: &BenchSamples) -> Vec<BenchRow> {
    use resplab_stats::describe::plain_median;
    let mut rows = Vec::new();
    for ((label, _), ss) in samples {
        let Some(first) = ss.first() else { continue };
        let total = |s: &Sample| (s.commands * u64::from(s.iterations)).max(1) as f64;
        let of = |f: &dyn Fn(&Sample) -> f64| ss.iter().map(f).collect::<Vec<f64>>();
        let cps = of(&|s| total(s) / (s.wall_ns.max(1) as f64 / 1e9));
        rows.push(BenchRow {
            workload: label.clone(),
            decoder: first.decoder.clone(),
            repetitions: ss.len(),
            commands_per_iteration: first.commands,
            commands_per_sec: plain_median(&cps),
            commands_per_sec_min: cps.iter().copied().fold(f64::INFINITY, f64::min),
            commands_per_sec_max: cps.iter().copied().fold(0.0, f64::max),
            cpu_ns_per_command: plain_median(&of(&|s| s.cpu_ns as f64 / total(s))),
            bytes_per_command: first.input_bytes as f64 / first.commands.max(1) as f64,
            allocations_per_command: plain_median(&of(&|s| s.allocations as f64 / total(s))),
            peak_memory_bytes: plain_median(&of(&|s| s.peak_memory_bytes as f64)) as u64,
        });
    }
    rows
}

/// The text table of `proto bench`, with the line saying how it was measured.
pub fn bench_table(
    rows: &[BenchRow],
    repetitions: u32,
    iterations: u32,
    cpu: Option<usize>,
) -> String {
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
        "medians of {repetitions} repetitions x at least {iterations} passes (and 300 ms); CPU from the thread's CPU clock; peak = VmHWM of the measuring process (input included){}\n",
        cpu.map_or(String::new(), |c| format!("; pinned to CPU {c}"))
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_decoder_order_rotates_each_repetition() {
        let jobs = bench_jobs(None, &[LabWorkload::Small]);
        let order: Vec<DecoderKind> = bench_schedule(&jobs, 2).iter().map(|o| o.2).collect();
        let all = DecoderKind::ALL;
        assert_eq!(order, [all[0], all[1], all[2], all[1], all[2], all[0]]);
        for w in LabWorkload::ALL {
            assert_eq!(LabWorkload::from_name(w.name()), Some(w));
        }
        assert_eq!(Wire::from_name("respb"), Some(Wire::Respb));
        assert_eq!(DecoderKind::from_name("nosuch"), None);
    }

    fn sample(wall_ns: u64, peak: u64) -> Sample {
        Sample {
            workload: "small".into(),
            decoder: "respb".into(),
            commands: 1000,
            input_bytes: 8000,
            iterations: 10,
            wall_ns,
            cpu_ns: wall_ns,
            allocations: 0,
            peak_memory_bytes: peak,
            checksum: 0,
        }
    }

    #[test]
    fn rows_are_medians_with_the_range_of_throughput() {
        let mut samples = BenchSamples::new();
        samples.insert(
            ("small".into(), DecoderKind::Respb),
            vec![
                sample(1_000_000, 10),
                sample(2_000_000, 30),
                sample(4_000_000, 20),
            ],
        );
        let rows = bench_rows(&samples);
        assert_eq!(rows.len(), 1);
        let r = &rows[0];
        assert_eq!(r.commands_per_sec, 5e6);
        assert_eq!(r.commands_per_sec_min, 2.5e6);
        assert_eq!(r.commands_per_sec_max, 1e7);
        assert_eq!(r.cpu_ns_per_command, 200.0);
        assert_eq!(r.peak_memory_bytes, 20);
        assert_eq!(r.bytes_per_command, 8.0);
    }

    #[test]
    fn jobs_take_the_decoders_of_the_input_format() {
        let jobs = bench_jobs(Some(("in.resp", Wire::Resp)), &[]);
        assert_eq!(
            jobs[0].2,
            [DecoderKind::RespZeroCopy, DecoderKind::RespAllocating]
        );
        let all = bench_jobs(None, &[]);
        let names: Vec<&str> = all.iter().map(|j| j.0.as_str()).collect();
        assert_eq!(names, ["small", "medium", "large", "mixed"]);
        assert_eq!(all[0].2.len(), 3);
    }
}
