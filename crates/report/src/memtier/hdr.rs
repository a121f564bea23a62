//! memtier's `--hdr-file-prefix` files, for each run `n`: `PREFIX_FULL_RUN_n.txt`, the
//! HdrHistogram percentile distribution of all requests (values in ms), and
//! `PREFIX_FULL_RUN_n.hgrm`, an HdrHistogram interval log holding that histogram (µs),
//! plus the same pair per command, `PREFIX_<CMD>_command_run_n.{txt,hgrm}`. (memtier
//! gives the extensions the other way round from HdrHistogram's usual convention; the
//! names are memtier's, so scripts find them.)

use super::Section;
use crate::run::hdr::percentile_distribution;
use resplab_stats::hist::LatencyHistogram;

/// The files of run `run` (1-based): `(path, contents)`.
pub fn files(prefix: &str, run: usize, s: &Section) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut pair = |stem: String, title: &str, h: &LatencyHistogram| {
        out.push((format!("{stem}.txt"), percentile_distribution(h)));
        out.push((format!("{stem}.hgrm"), interval_log(title, s, h)));
    };
    pair(
        format!("{prefix}_FULL_RUN_{run}"),
        "Full Run command HDR latency histogram results",
        &s.totals.hist,
    );
    for t in &s.types {
        if t.hist.is_empty() {
            continue;
        }
        pair(
            format!("{prefix}_{}_command_run_{run}", t.name),
            &format!("{} command HDR latency histogram results", t.name),
            &t.hist,
        );
    }
    out
}

/// An interval log (format 1.2) with the whole run as one interval, values in µs.
fn interval_log(title: &str, s: &Section, h: &LatencyHistogram) -> String {
    let start = s.start_ms as f64 / 1000.0;
    let end = s.finish_ms as f64 / 1000.0;
    format!(
        "#[{title}]\n#[Histogram log format version 1.2]\n#[StartTime: {start:.3} (seconds since epoch)]\n\
         \"StartTimestamp\",\"EndTimestamp\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n\
         {start:.3},{end:.3},{:.1},{}\n",
        h.max_ns() as f64 / 1000.0,
        h.to_base64_in(1000)
    )
}
