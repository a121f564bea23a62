//! HdrHistogram percentile distributions, HdrHistogram interval logs and memtier's
//! stdout tables: real memtier files (copied into tests/fixtures) and files written here
//! by the `hdrhistogram` crate, so the round trips are exact.

use super::{fixture, load, values};
use hdrhistogram::serialization::interval_log::{IntervalLogWriterBuilder, Tag};
use hdrhistogram::serialization::V2DeflateSerializer;
use hdrhistogram::Histogram;
use resplab_results::import::{self, detect, Ctx, Format, Imported, Interner, PlainOptions};
use resplab_results::sample::{Direction, Metric, SampleSet};
use resplab_stats::hist::LatencyHistogram;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};

fn ms(name: &str) -> Metric {
    Metric::new(name, "ms", Direction::LowerIsBetter)
}

fn requests() -> Metric {
    Metric::new("requests", "requests", Direction::Unknown)
}

fn one(set: &SampleSet, w: &str, m: &Metric, l: &str) -> f64 {
    let v = values(set, w, m, l);
    assert_eq!(v.len(), 1, "{w} {m} {l}: {v:?}");
    v[0]
}

/// Imports `bytes` under file name `name`, with format detection.
fn import_named(bytes: &[u8], name: &str) -> Result<Imported, import::ImportError> {
    let mut interner = Interner::default();
    let mut ctx = Ctx {
        label: Arc::from("x"),
        file: Arc::from(name),
        interner: &mut interner,
    };
    import::import_bytes(bytes, &mut ctx, &PlainOptions::default())
}

fn dir() -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("resplab-hdr-import-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn detects_the_new_formats_and_keeps_the_old_ones() {
    for (f, want) in [
        ("memtier/hdr/latency_FULL_RUN_1.txt", Format::HdrPercentiles),
        (
            "memtier/hdr/latency_GET_command_run_1.txt",
            Format::HdrPercentiles,
        ),
        ("memtier/hdr/latency_FULL_RUN_1.hgrm", Format::HdrLog),
        ("memtier/hdr/latency_SET_command_run_1.hgrm", Format::HdrLog),
        ("resplab-hdr-out/lat_GET.hgrm", Format::HdrPercentiles),
        ("memtier/single.stdout.txt", Format::MemtierText),
        ("memtier/multirun.stdout.txt", Format::MemtierText),
        ("memtier/arbitrary.stdout.txt", Format::MemtierText),
        ("memtier/hdr.stdout.txt", Format::MemtierText),
        ("memtier/single.json", Format::Memtier),
        (
            "redis-benchmark/set-get.full.txt",
            Format::RedisBenchmarkText,
        ),
        (
            "redis-benchmark/default-suite.q.txt",
            Format::RedisBenchmarkQuiet,
        ),
        ("gobench/baseline.txt", Format::GoBench),
        ("ministat/synth-n3.a.txt", Format::Plain),
    ] {
        let bytes = std::fs::read(fixture(f)).unwrap();
        assert_eq!(detect(&bytes), want, "{f}");
    }
}

#[test]
fn memtier_percentile_distributions_give_exact_counts_and_printed_percentiles() {
    let full = fixture("memtier/hdr/latency_FULL_RUN_1.txt");
    let get = fixture("memtier/hdr/latency_GET_command_run_1.txt");
    let set_ = fixture("memtier/hdr/latency_SET_command_run_1.txt");
    let loaded = load(&[full.clone(), get.clone(), set_.clone()]).unwrap();
    let set = SampleSet::from_observations(&loaded.observations);
    assert_eq!(one(&set, "ALL", &requests(), &full), 50000.0);
    assert_eq!(one(&set, "ALL", &requests(), &get), 45450.0);
    assert_eq!(one(&set, "ALL", &requests(), &set_), 4550.0);
    // As printed: the p50 row (0.500000) reads 0.12, the footer Mean 0.122, Max 2.335.
    assert_eq!(one(&set, "ALL", &ms("p50_latency_ms"), &full), 0.12);
    assert_eq!(one(&set, "ALL", &ms("avg_latency_ms"), &full), 0.122);
    assert_eq!(one(&set, "ALL", &ms("max_latency_ms"), &full), 2.335);
    // memtier's JSON of the same run: Totals p99 0.247, Gets p99 0.247 (two decimals here).
    assert!((one(&set, "ALL", &ms("p99_latency_ms"), &full) - 0.247).abs() <= 0.005);
    assert!((one(&set, "ALL", &ms("p99_latency_ms"), &get) - 0.247).abs() <= 0.005);
    assert!(loaded.notes.iter().any(|n| n.contains("milliseconds")));

    // The kept histogram holds every request, in nanoseconds.
    let imported = import_named(&std::fs::read(&full).unwrap(), "full.txt").unwrap();
    assert_eq!(imported.histograms.len(), 1);
    let h = &imported.histograms[0];
    assert_eq!(h.unit_ns, 1);
    let h = LatencyHistogram::from_base64(&h.hdr_base64).unwrap();
    assert_eq!(h.count(), 50000);
    assert!((h.percentile_ns(50.0) as f64 / 1e6 - 0.12).abs() < 0.001);
}

#[test]
fn memtier_interval_logs_sum_to_exact_counts() {
    let full = fixture("memtier/hdr/latency_FULL_RUN_1.hgrm");
    let get = fixture("memtier/hdr/latency_GET_command_run_1.hgrm");
    let set_ = fixture("memtier/hdr/latency_SET_command_run_1.hgrm");
    let loaded = load(&[full.clone(), get.clone(), set_.clone()]).unwrap();
    let set = SampleSet::from_observations(&loaded.observations);
    assert_eq!(one(&set, "ALL", &requests(), &full), 50000.0);
    assert_eq!(one(&set, "ALL", &requests(), &get), 45450.0);
    assert_eq!(one(&set, "ALL", &requests(), &set_), 4550.0);
    // Microsecond values read exactly: memtier's JSON says Gets p50 0.119, p99 0.247,
    // Sets p99 0.255, Totals p50 0.119, max 2.335 (Interval_Max 2335.0).
    let near = |got: f64, want: f64| (got - want).abs() <= want * 1e-3 + 1e-9;
    let p = |f: &str, m: &str| one(&set, "ALL", &ms(m), f);
    assert!(
        near(p(&get, "p50_latency_ms"), 0.119),
        "{}",
        p(&get, "p50_latency_ms")
    );
    assert!(
        near(p(&get, "p99_latency_ms"), 0.247),
        "{}",
        p(&get, "p99_latency_ms")
    );
    assert!(
        near(p(&set_, "p99_latency_ms"), 0.255),
        "{}",
        p(&set_, "p99_latency_ms")
    );
    assert!(near(p(&full, "p50_latency_ms"), 0.119));
    assert!(
        near(p(&full, "max_latency_ms"), 2.335),
        "{}",
        p(&full, "max_latency_ms")
    );
    assert!(loaded.notes.iter().any(|n| n.contains("microseconds")));
}

#[test]
fn interval_log_written_by_hdrhistogram_round_trips_per_tag() {
    // Three intervals, two tags and one untagged, recorded in microseconds.
    let mut per_tag: Vec<(Option<&str>, Histogram<u64>)> = Vec::new();
    let mut log = Vec::new();
    {
        let mut serializer = V2DeflateSerializer::new();
        let mut writer = IntervalLogWriterBuilder::new()
            .add_comment("written by the hdrhistogram crate")
            .with_start_time(UNIX_EPOCH + Duration::from_secs(1_700_000_000))
            .with_base_time(UNIX_EPOCH + Duration::from_secs(1_700_000_000))
            .begin_log_with(&mut log, &mut serializer)
            .unwrap();
        let plan = [
            (Some("GET"), 1u64),
            (Some("SET"), 7),
            (Some("GET"), 3),
            (None, 11),
        ];
        for (i, (tag, seed)) in plan.into_iter().enumerate() {
            let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).unwrap();
            for k in 0..2_000u64 {
                h.record(20 + (k * seed * 7919) % 5_000 + k % 17).unwrap();
            }
            h.record_n(40_000, seed).unwrap();
            let start = Duration::from_secs(i as u64);
            writer
                .write_histogram(&h, start, Duration::from_secs(1), tag.and_then(Tag::new))
                .unwrap();
            match per_tag.iter_mut().find(|(t, _)| *t == tag) {
                Some((_, sum)) => sum.add(&h).unwrap(),
                None => per_tag.push((tag, h)),
            }
        }
    }
    let path = dir().join("crate.hlog");
    std::fs::write(&path, &log).unwrap();
    let path = path.to_string_lossy().into_owned();
    assert_eq!(detect(&log), Format::HdrLog);
    let imported = import_named(&log, &path).unwrap();
    let set =
        SampleSet::from_observations(&load(std::slice::from_ref(&path)).unwrap().observations);
    assert_eq!(imported.histograms.len(), 3);
    for (tag, want) in &per_tag {
        let w = tag.unwrap_or("ALL");
        assert_eq!(one(&set, w, &requests(), &path), want.len() as f64, "{w}");
        let kept = imported
            .histograms
            .iter()
            .find(|h| h.workload == w)
            .unwrap();
        let got = LatencyHistogram::from_base64(&kept.hdr_base64).unwrap();
        assert_eq!(got.count(), want.len(), "{w}");
        for q in [50.0, 90.0, 99.0, 99.9, 99.99, 100.0] {
            let want_ns = want.value_at_percentile(q) as f64 * 1_000.0;
            let got_ns = got.percentile_ns(q) as f64;
            assert!(
                (got_ns / want_ns - 1.0).abs() < 2e-3,
                "{w} p{q}: {got_ns} vs {want_ns}"
            );
        }
        let p99 = one(&set, w, &ms("p99_latency_ms"), &path);
        assert!((p99 * 1e6 / (want.value_at_percentile(99.0) as f64 * 1e3) - 1.0).abs() < 2e-3);
    }
}

/// A percentile distribution in the layout of HdrHistogram's
/// `outputPercentileDistribution` (5 ticks per half distance, values scaled to ms with
/// three decimals), from the crate's own quantile iterator.
fn percentile_text(h: &Histogram<u64>, ns_per_unit: f64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:>12} {:>14} {:>10} {:>14}\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    let mut total = 0;
    for v in h.iter_quantiles(5) {
        total += v.count_since_last_iteration();
        let value = v.value_iterated_to() as f64 / ns_per_unit;
        let q = v.quantile_iterated_to();
        if q < 1.0 {
            let _ = writeln!(
                out,
                "{value:12.3} {q:2.12} {total:10} {:14.2}",
                1.0 / (1.0 - q)
            );
        } else {
            let _ = writeln!(out, "{value:12.3} {q:2.12} {total:10} {:>14}", "Infinity");
        }
    }
    let _ = writeln!(
        out,
        "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]",
        h.mean() / ns_per_unit,
        h.stdev() / ns_per_unit
    );
    let _ = writeln!(
        out,
        "#[Max     = {:12.3}, Total count    = {:12}]",
        h.max() as f64 / ns_per_unit,
        h.len()
    );
    let _ = writeln!(
        out,
        "#[Buckets = {:12}, SubBuckets     = {:12}]",
        h.buckets(),
        2048
    );
    out
}

#[test]
fn percentile_text_of_an_hdrhistogram_round_trips() {
    let mut h = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).unwrap();
    for k in 0..30_000u64 {
        h.record(50_000 + (k * 104_729) % 900_000).unwrap();
    }
    h.record_n(12_345_678, 30).unwrap();
    let text = percentile_text(&h, 1e6);
    assert_eq!(detect(text.as_bytes()), Format::HdrPercentiles);
    let path = dir().join("crate-dist.txt");
    std::fs::write(&path, &text).unwrap();
    let path = path.to_string_lossy().into_owned();
    let set =
        SampleSet::from_observations(&load(std::slice::from_ref(&path)).unwrap().observations);
    assert_eq!(one(&set, "ALL", &requests(), &path), h.len() as f64);
    // Each percentile is the value printed on the first row that reaches its rank: at or
    // above the true value (within the printed 0.001 ms), never below it.
    for q in [50.0, 90.0, 99.0, 99.9, 99.99] {
        let name = format!("p{q}_latency_ms");
        let got = one(&set, "ALL", &ms(&name), &path);
        let rank = ((q / 100.0 * h.len() as f64).ceil() as u64).max(1);
        let mut seen = 0;
        let row = h
            .iter_quantiles(5)
            .find(|v| {
                seen += v.count_since_last_iteration();
                seen >= rank
            })
            .unwrap();
        let printed: f64 = format!("{:.3}", row.value_iterated_to() as f64 / 1e6)
            .parse()
            .unwrap();
        assert_eq!(got, printed, "{name}");
        let truth = h.value_at_percentile(q) as f64 / 1e6;
        assert!(got + 0.0005 >= truth, "{name}: {got} below {truth}");
    }
    let max = one(&set, "ALL", &ms("max_latency_ms"), &path);
    assert!((max - h.max() as f64 / 1e6).abs() <= 0.0005 + 1e-12);
    let imported = import_named(text.as_bytes(), &path).unwrap();
    let kept = LatencyHistogram::from_base64(&imported.histograms[0].hdr_base64).unwrap();
    assert_eq!(kept.count(), h.len());
}

#[test]
fn compare_of_two_hdr_files_gives_rows() {
    let a = format!("full={}", fixture("memtier/hdr/latency_FULL_RUN_1.hgrm"));
    let b = format!(
        "get={}",
        fixture("memtier/hdr/latency_GET_command_run_1.hgrm")
    );
    let loaded = load(&[a, b]).unwrap();
    let set = SampleSet::from_observations(&loaded.observations);
    for m in ["p50_latency_ms", "p99_latency_ms", "avg_latency_ms"] {
        assert_eq!(values(&set, "ALL", &ms(m), "full").len(), 1, "{m}");
        assert_eq!(values(&set, "ALL", &ms(m), "get").len(), 1, "{m}");
    }
}

#[test]
fn memtier_stdout_single_run_gives_the_printed_values() {
    let f = fixture("memtier/single.stdout.txt");
    let loaded = load(std::slice::from_ref(&f)).unwrap();
    let set = SampleSet::from_observations(&loaded.observations);
    let rate = |n: &str, u: &str, d: Direction| Metric::new(n, u, d);
    let ops = rate("ops_per_sec", "ops/s", Direction::HigherIsBetter);
    assert_eq!(one(&set, "Totals", &ops, &f), 77153.95);
    assert_eq!(one(&set, "Sets", &ops, &f), 7021.01);
    let hits = rate("hits_per_sec", "Hits/s", Direction::Unknown);
    assert_eq!(one(&set, "Gets", &hits, &f), 200.60);
    let misses = rate("misses_per_sec", "Misses/s", Direction::Unknown);
    assert_eq!(one(&set, "Gets", &misses, &f), 69932.34);
    assert!(
        values(&set, "Sets", &hits, &f).is_empty(),
        "--- is no value"
    );
    let kb = rate("kb_per_sec", "KB/s", Direction::HigherIsBetter);
    assert_eq!(one(&set, "Totals", &kb, &f), 3128.82);
    assert_eq!(one(&set, "Totals", &ms("avg_latency_ms"), &f), 0.12967);
    assert_eq!(one(&set, "Totals", &ms("p50_latency_ms"), &f), 0.127);
    assert_eq!(one(&set, "Totals", &ms("p99_latency_ms"), &f), 0.311);
    assert_eq!(one(&set, "Gets", &ms("p99.9_latency_ms"), &f), 1.255);
    // Waits sent nothing and is skipped, as in the JSON importer.
    assert!(!set.workloads.iter().any(|w| &**w == "Waits"));
    // The same run's JSON gives the same p99 under the same metric name.
    let json = fixture("memtier/single.json");
    let set =
        SampleSet::from_observations(&load(std::slice::from_ref(&json)).unwrap().observations);
    assert_eq!(one(&set, "Totals", &ms("p99_latency_ms"), &json), 0.311);

    // The same output with standard error in front (`2>&1`): the `\r` progress lines
    // change nothing.
    let stderr = std::fs::read_to_string(fixture("memtier/single.stderr.txt")).unwrap();
    let stdout = std::fs::read_to_string(&f).unwrap();
    assert!(stderr.contains('\r'));
    let both = import_named(format!("{stderr}{stdout}").as_bytes(), "both.txt").unwrap();
    let alone = import_named(stdout.as_bytes(), "alone.txt").unwrap();
    let pairs = |i: &Imported| -> Vec<(String, String, f64)> {
        i.observations
            .iter()
            .map(|o| (o.workload.to_string(), o.metric.name.clone(), o.value))
            .collect()
    };
    assert_eq!(pairs(&both), pairs(&alone));

    let arb = fixture("memtier/arbitrary.stdout.txt");
    let set = SampleSet::from_observations(&load(std::slice::from_ref(&arb)).unwrap().observations);
    assert_eq!(one(&set, "Hsets", &ops, &arb), 40447.64);
    assert_eq!(one(&set, "Hgets", &ms("p99.9_latency_ms"), &arb), 0.367);
}

#[test]
fn memtier_stdout_run_count_imports_each_run_not_the_summaries() {
    let f = fixture("memtier/multirun.stdout.txt");
    let loaded = load(std::slice::from_ref(&f)).unwrap();
    let set = SampleSet::from_observations(&loaded.observations);
    let ops = Metric::new("ops_per_sec", "ops/s", Direction::HigherIsBetter);
    assert_eq!(
        values(&set, "Totals", &ops, &f),
        vec![86662.92, 81726.46, 94408.2]
    );
    assert_eq!(
        values(&set, "Sets", &ms("p99.9_latency_ms"), &f),
        vec![0.431, 1.119, 0.999]
    );
    assert!(loaded
        .notes
        .iter()
        .any(|n| n.contains("BEST/WORST/AGGREGATED")));
    // Same trials as memtier's JSON of the same runs.
    let json = fixture("memtier/multirun.json");
    let jset =
        SampleSet::from_observations(&load(std::slice::from_ref(&json)).unwrap().observations);
    assert_eq!(
        values(&jset, "Totals", &ops, &json),
        values(&set, "Totals", &ops, &f)
    );

    // Without --print-all-runs only the summaries are printed: the aggregate is used.
    let text = std::fs::read_to_string(&f).unwrap();
    let summaries = &text[text.find("BEST RUN RESULTS").unwrap()..];
    let imported = import_named(summaries.as_bytes(), "summaries.txt").unwrap();
    assert!(imported
        .notes
        .iter()
        .any(|n| n.contains("AGGREGATED AVERAGE RESULTS (3 runs)")));
    let totals: Vec<f64> = imported
        .observations
        .iter()
        .filter(|o| &*o.workload == "Totals" && o.metric.name == "ops_per_sec")
        .map(|o| o.value)
        .collect();
    assert_eq!(totals, vec![87599.19]);
}

#[test]
fn memtier_stdout_zero_rate_is_flagged_and_bad_rows_name_the_line() {
    let text = std::fs::read_to_string(fixture("memtier/single.stdout.txt")).unwrap();
    let broken = text.replace("Totals      77153.95", "Totals          0.00");
    let imported = import_named(broken.as_bytes(), "zero.txt").unwrap();
    let flagged: Vec<String> = imported
        .observations
        .iter()
        .filter(|o| o.flag.is_some())
        .map(|o| o.metric.name.clone())
        .collect();
    assert!(flagged.iter().any(|m| m == "ops_per_sec"), "{flagged:?}");
    assert!(
        !flagged.iter().any(|m| m == "p99_latency_ms"),
        "{flagged:?}"
    );
    assert!(imported.notes.iter().any(|n| n.contains("timing bug")));
    let bad = text.replace("0.31100         1.25500", "0.31100         oops");
    let e = import_named(bad.as_bytes(), "bad.txt")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("bad.txt:11: expected a number or `---` for Gets"),
        "{e}"
    );
}

/// Every prefix of a file either imports (then with every request of the whole file, or
/// for tables and logs a subset of whole rows/intervals) or fails with an error that
/// names the file; none panics.
fn check_truncations(rel: &str, cuts: impl Iterator<Item = usize>, full_count: Option<f64>) {
    let bytes = std::fs::read(fixture(rel)).unwrap();
    let format = detect(&bytes);
    let name = "cut.file";
    for cut in cuts {
        let prefix = &bytes[..cut];
        let forced = {
            let mut interner = Interner::default();
            let mut ctx = Ctx {
                label: Arc::from("x"),
                file: Arc::from(name),
                interner: &mut interner,
            };
            match format {
                Format::HdrPercentiles => import::hdr_text::import(prefix, &mut ctx),
                Format::HdrLog => import::hdr_log::import(prefix, &mut ctx),
                _ => import::memtier_text::import(prefix, &mut ctx),
            }
        };
        match forced {
            Ok(imported) => {
                if let Some(full) = full_count {
                    let counted: f64 = imported
                        .observations
                        .iter()
                        .filter(|o| o.metric.name == "requests")
                        .map(|o| o.value)
                        .sum();
                    assert_eq!(counted, full, "{rel} cut at {cut} imported a partial count");
                }
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(
                    msg.starts_with(&format!("{name}:")),
                    "{rel} cut at {cut}: {msg}"
                );
            }
        }
        // Through detection too: whatever the prefix looks like, no panic, a named error.
        if let Err(e) = import_named(prefix, name) {
            assert!(e.to_string().starts_with(name), "{rel} cut at {cut}: {e}");
        }
    }
}

#[test]
fn truncated_files_fail_with_file_and_line_never_panic() {
    for (rel, full) in [
        ("memtier/hdr/latency_SET_command_run_1.txt", 4550.0),
        ("memtier/hdr/latency_FULL_RUN_1.hgrm", 50000.0),
        ("memtier/hdr/latency_GET_command_run_1.hgrm", 45450.0),
    ] {
        let len = std::fs::metadata(fixture(rel)).unwrap().len() as usize;
        check_truncations(rel, 0..=len, Some(full));
    }
    // A cut percentile table is refused unless its footer's total made it whole.
    let rel = "memtier/hdr/latency_FULL_RUN_1.txt";
    let bytes = std::fs::read(fixture(rel)).unwrap();
    let end_of_total = bytes.windows(6).position(|w| w == b"50000]").unwrap() + 6;
    for cut in (0..bytes.len())
        .step_by(7)
        .chain([end_of_total - 1, end_of_total])
    {
        let mut interner = Interner::default();
        let mut ctx = Ctx {
            label: Arc::from("x"),
            file: Arc::from("t"),
            interner: &mut interner,
        };
        let ok = import::hdr_text::import(&bytes[..cut], &mut ctx).is_ok();
        // After the total, a cut inside the last footer line `#[…` is refused as well.
        let tail = String::from_utf8_lossy(&bytes[..cut]);
        let last = tail.rsplit('\n').next().unwrap_or("").trim();
        let cut_footer = last.starts_with("#[") && !last.ends_with(']');
        assert_eq!(ok, cut >= end_of_total && !cut_footer, "cut at {cut}");
    }
    let len = std::fs::metadata(fixture("memtier/single.stdout.txt"))
        .unwrap()
        .len() as usize;
    check_truncations("memtier/single.stdout.txt", 0..=len, None);
    let len = std::fs::metadata(fixture("memtier/multirun.stdout.txt"))
        .unwrap()
        .len() as usize;
    check_truncations("memtier/multirun.stdout.txt", (0..=len).step_by(97), None);
}

#[test]
fn damaged_interval_log_lines_are_named() {
    let text =
        std::fs::read_to_string(fixture("memtier/hdr/latency_SET_command_run_1.hgrm")).unwrap();
    let bad = text.replace("HISTFAAAAGd4", "HISTFAAAAGd!");
    let e = import_named(bad.as_bytes(), "s.hgrm")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("s.hgrm:5: histogram is not valid base64"),
        "{e}"
    );
    let bad = text.replace("1795313964.490,1795313965.099", "soon,later");
    let e = import_named(bad.as_bytes(), "s.hgrm")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("s.hgrm:5: expected a comment, the legend or an interval"),
        "{e}"
    );
    let header_only: String = text.lines().take(4).map(|l| format!("{l}\n")).collect();
    let e = import_named(header_only.as_bytes(), "s.hgrm")
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("s.hgrm: expected interval lines"), "{e}");
}

#[test]
fn resplab_hdr_out_files_match_the_bench_table() {
    // `resplab bench -t set,get -n 20000 -c 4 --hdr-out lat` against a local
    // redis-server; bench.stdout.txt is the same run's table.
    let table = std::fs::read_to_string(fixture("resplab-hdr-out/bench.stdout.txt")).unwrap();
    for (name, count) in [("GET", 20000.0), ("SET", 20000.0), ("TOTAL", 40000.0)] {
        let f = fixture(&format!("resplab-hdr-out/lat_{name}.hgrm"));
        let loaded = load(std::slice::from_ref(&f)).unwrap();
        let set = SampleSet::from_observations(&loaded.observations);
        assert_eq!(one(&set, "ALL", &requests(), &f), count, "{name}");
        let row: Vec<f64> = table
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap()
            .split_whitespace()
            .skip(1)
            .map(|v| v.parse().unwrap())
            .collect();
        // Columns: ops/s, mean, p50, p90, p99, p99.9, max (ms).
        assert_eq!(
            one(&set, "ALL", &ms("avg_latency_ms"), &f),
            row[1],
            "{name}"
        );
        assert_eq!(
            one(&set, "ALL", &ms("max_latency_ms"), &f),
            row[6],
            "{name}"
        );
        // The file's rows as (value, TotalCount), read here independently of the importer.
        let text = std::fs::read_to_string(&f).unwrap();
        let rows: Vec<(f64, f64)> = text
            .lines()
            .skip(2)
            .take_while(|l| !l.starts_with('#'))
            .map(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                (w[0].parse().unwrap(), w[2].parse().unwrap())
            })
            .collect();
        for (i, q) in [(2, 50.0), (3, 90.0), (4, 99.0), (5, 99.9)] {
            let got = one(&set, "ALL", &ms(&format!("p{q}_latency_ms")), &f);
            let rank = (q / 100.0 * count).ceil();
            let at = rows.iter().position(|r| r.1 >= rank).unwrap();
            // The first printed row that reaches the rank...
            assert_eq!(got, rows[at].0, "{name} p{q}");
            // ...and the true percentile (the bench table) lies between it and the row
            // before, within the printed 0.001 ms. p50 and p90 are printed rows: exact.
            let truth = row[i];
            assert!(truth <= got + 0.0005, "{name} p{q}: {truth} above {got}");
            assert!(
                rows[at - 1].0 <= truth + 0.0005,
                "{name} p{q}: {truth} below the rows"
            );
            if q <= 90.0 {
                assert_eq!(got, truth, "{name} p{q}");
            }
        }
    }
}
