//! The geomean summary: per variant, the geometric mean of its ratios across workloads
//! for the primary metric, with the signed-rank or bootstrap interval over whole rounds
//! when every workload was paired.

use super::*;

pub(super) fn summarize(
    set: &SampleSet,
    baseline: &str,
    rows: &[Row],
    paired: &[Paired],
    opts: &ResplabOptions,
    summary: &SummaryOptions,
) -> Vec<Summary> {
    let primary = summary
        .primary_metric
        .as_deref()
        .and_then(|name| set.metrics.iter().find(|m| m.name == name))
        .or_else(|| set.metrics.first());
    let Some(primary) = primary else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for label in set.labels.iter().filter(|l| &***l != baseline) {
        let chosen: Vec<usize> = (0..rows.len())
            .filter(|&i| {
                let r = &rows[i];
                r.variant == **label
                    && r.metric == primary.name
                    && r.unit == primary.unit
                    && r.effect_pct.is_some()
            })
            .collect();
        let names: Vec<&str> = chosen.iter().map(|&i| rows[i].workload.as_str()).collect();
        let chosen: Vec<usize> = chosen
            .into_iter()
            .filter(|&i| !is_part_of_aggregate(&rows[i].workload, &names))
            .collect();
        if chosen.len() < 2 {
            continue;
        }
        let logs: Vec<f64> = chosen
            .iter()
            .filter_map(|&i| rows[i].effect_pct)
            .map(|e| (1.0 + e / 100.0).ln())
            .collect();
        let point = (logs.iter().sum::<f64>() / logs.len() as f64).exp();
        let ds: Option<Vec<Vec<f64>>> = chosen
            .iter()
            .map(|&i| {
                paired
                    .iter()
                    .find(|p| p.row == i)
                    .map(|p| p.log_ratios.clone())
            })
            .collect();
        let mut s = Summary {
            metric: primary.name.clone(),
            unit: primary.unit.clone(),
            direction: primary.direction.as_str(),
            variant: label.to_string(),
            workloads: chosen.len(),
            effect_pct: (point - 1.0) * 100.0,
            ci_low_pct: None,
            ci_high_pct: None,
            resamples: None,
            method: None,
            rounds: None,
            note: None,
            verdict: None,
        };
        add_interval(&mut s, ds, primary.direction, opts, summary.seed);
        out.push(s);
    }
    out
}

/// The interval of a summary and its verdict, or the note saying why there is none:
/// `ds` holds each workload's per-round log ratios, `None` when one was compared
/// unpaired.
fn add_interval(
    s: &mut Summary,
    ds: Option<Vec<Vec<f64>>>,
    direction: Direction,
    opts: &ResplabOptions,
    seed: u64,
) {
    match ds {
        None => {
            s.note = Some(
                "some workloads were compared unpaired; the bootstrap resamples whole rounds, \
                 so there is no interval"
                    .into(),
            )
        }
        Some(ds) if ds.iter().any(|d| d.len() > BOOTSTRAP_MAX_ROUNDS) => {
            s.note = Some(format!(
                "more than {BOOTSTRAP_MAX_ROUNDS} rounds in a workload; the bootstrap was \
                 skipped"
            ))
        }
        Some(ds) => match geomean_ratio(&ds, opts.confidence, BOOTSTRAP_RESAMPLES, seed) {
            Ok(b) => {
                s.effect_pct = (b.ratio - 1.0) * 100.0;
                s.rounds = Some(b.rounds);
                s.method = Some(match b.method {
                    GeomeanMethod::SignedRankOfRoundMeans => "signed_rank_of_round_means",
                    GeomeanMethod::Bootstrap => "bootstrap",
                });
                if b.method == GeomeanMethod::Bootstrap {
                    s.resamples = Some(b.resamples);
                }
                if b.has_interval() {
                    s.ci_low_pct = Some((b.ci_low - 1.0) * 100.0);
                    s.ci_high_pct = Some((b.ci_high - 1.0) * 100.0);
                    s.verdict = Some(interval_verdict(
                        (b.ci_low - 1.0) * 100.0,
                        (b.ci_high - 1.0) * 100.0,
                        direction,
                        opts.margin_pct,
                    ));
                    if b.approximate {
                        s.note = Some(format!(
                                "approximate: a bootstrap over fewer than {BOOTSTRAP_APPROXIMATE_BELOW} rounds claims too much"
                            ));
                    }
                } else {
                    s.note = Some(format!(
                        "{} rounds: an interval, and so a verdict, needs {}",
                        b.rounds,
                        resplab_stats::verdict::min_pairs(opts.confidence)
                    ));
                }
            }
            Err(e) => s.note = Some(format!("no bootstrap interval: {e}")),
        },
    }
}

/// Whether `workload` is one command of a workload whose aggregate is also among
/// `names`: `suite:GET` next to `suite` (a stored multi-command workload), or `GET` next
/// to `ALL` (the commands of resplab run files). The geomean counts every measured
/// workload once, by its aggregate.
pub(super) fn is_part_of_aggregate(workload: &str, names: &[&str]) -> bool {
    match workload.split_once(':') {
        Some((whole, _)) if names.contains(&whole) => true,
        _ => workload != "ALL" && !workload.contains(':') && names.contains(&"ALL"),
    }
}
