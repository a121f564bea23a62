//! A duet workload's paired intervals ([`resplab_results::duet`]): per round, how many
//! intervals of the two arms paired, their throughput ratio (the mean of the intervals'
//! log ratios, as a percentage), its range over the intervals, the intervals' lag-1
//! autocorrelation, and the median p50 and p99 latency ratios. Shown for reading; the
//! verdict above counts each round once (docs/duet.md).

use super::*;
use resplab_results::duet::{is_duet, pair_intervals, summarize};

/// The section's blocks, when the workload's trials are duet arms.
pub(super) fn duet_pairs(ctx: &Ctx<'_>, stem: &str, w: &WorkloadInput, blocks: &mut Vec<Block>) {
    let runs = |variant: &str| -> Vec<(u32, &RunRecord)> {
        w.trials
            .iter()
            .filter(|t| t.variant == variant && t.command.is_none())
            .filter_map(|t| Some((t.round?, t.run.as_deref()?)))
            .filter(|(_, r)| is_duet(r))
            .collect()
    };
    let Some(baseline) = ctx.variants.first() else {
        return;
    };
    let base = runs(baseline);
    if base.is_empty() {
        return;
    }
    let mut rows = Vec::new();
    for (i, variant) in ctx.variants.iter().enumerate().skip(1) {
        for (round, other) in runs(variant) {
            let Some((_, b)) = base.iter().find(|(r, _)| *r == round) else {
                continue;
            };
            let Some(s) = summarize(pair_intervals(b, other)) else {
                continue;
            };
            let pct = |ratio: f64| format!("{:+.2}%", (ratio - 1.0) * 100.0);
            rows.push(vec![
                Cell::variant(variant.clone(), i),
                Cell::text((round + 1).to_string()),
                Cell::text(s.pairs.len().to_string()),
                Cell::text(pct(s.mean_log_ratio.exp())),
                Cell::text(format!("{} to {}", pct(s.min_ratio), pct(s.max_ratio))),
                Cell::text(s.lag1.map_or("–".into(), |r| format!("{r:.2}"))),
                Cell::text(pct(s.p50_ratio)),
                Cell::text(pct(s.p99_ratio)),
            ]);
        }
    }
    if rows.is_empty() {
        return;
    }
    blocks.push(Block::Heading {
        level: 3,
        text: "Duet: paired intervals".into(),
        id: format!("w{stem}-duet"),
    });
    blocks.push(Block::Paragraph(format!(
        "Both variants ran at the same time, each on its own CPU set (swapped every round), \
         measured over the same wall-clock intervals. Per round: the intervals paired, the \
         throughput ratio against {baseline} (mean of the intervals' log ratios) and its \
         range, the lag-1 autocorrelation of the intervals' log ratios, and the median \
         latency ratios from the intervals' histograms. The verdict counts each round once: \
         intervals of one round are not independent observations."
    )));
    blocks.push(Block::Table {
        header: [
            "variant",
            "round",
            "intervals",
            "ops/s ratio",
            "interval range",
            "lag-1 r",
            "p50 ratio",
            "p99 ratio",
        ]
        .map(String::from)
        .to_vec(),
        numeric: vec![false, true, true, true, false, true, true, true],
        rows,
    });
}
