//! From a [`ReportInput`] to a [`Document`]: summary, one section per workload,
//! provenance.
//!
//! The verdicts are those of `resplab compare` ([`crate::resplab::compare`] on the same
//! observations), so a report and a terminal comparison never disagree. The summary's
//! geometric mean of ratios and its interval come from
//! [`resplab_stats::bootstrap::geomean_ratio`] (the signed-rank interval of the per-round
//! geometric means, or a bootstrap seeded with the experiment's seed), so it too is the
//! same on every run.
//!
//! Per workload the plots are: the metric per trial in run order, its distribution per
//! variant, the latency spectrum from every counted trial's histogram merged per
//! variant, and ops/s and p99 per second of one representative trial per variant (the
//! trial whose value is closest to its variant's median). Plots that need run records
//! (spectrum, per-second) are left out, with a sentence saying why, when the inputs are
//! foreign formats that carry only numbers.

use super::input::{ReportInput, TrialInput, WorkloadInput};
use super::{Block, Cell, Document};
use crate::plot::{self, significant, PlotError, Series};
use crate::resplab::{self, fmt_interval, Row};
use crate::verdict::{self, Verdict};
use resplab_results::sample::{Direction, Metric, SampleSet};
use resplab_results::RunRecord;
use resplab_stats::bootstrap::{geomean_ratio, GeomeanMethod};
use resplab_stats::hist::LatencyHistogram;
use std::collections::BTreeSet;
use std::sync::Arc;

/// Metrics shown in each workload's verdict table after the report's own metric, when
/// the inputs have them (stored-experiment names, then resplab run-file names).
const TABLE_METRICS: [&str; 10] = [
    "ops_per_sec",
    "p50_us",
    "p99_us",
    "p99_9_us",
    "server_cpu_us_per_op",
    "client_cpu_us_per_op",
    "p50_latency_us",
    "p99_latency_us",
    "p99.9_latency_us",
    "rps",
];

/// Bootstrap resamples of the summary's geometric mean.
pub const GEOMEAN_RESAMPLES: usize = 2000;

/// A report that could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A plot failed to draw.
    #[error(transparent)]
    Plot(#[from] PlotError),
    /// The input has nothing to report.
    #[error("nothing to report: {0}")]
    Empty(String),
}

/// Builds the document.
///
/// # Errors
/// [`BuildError::Empty`] when there is no variant or no observation of the report's
/// metric; [`BuildError::Plot`] when a plot fails to draw.
pub fn build(input: &ReportInput) -> Result<Document, BuildError> {
    let set = SampleSet::from_observations(&input.observations);
    let metric = set
        .metrics
        .iter()
        .find(|m| m.name == input.metric)
        .cloned()
        .ok_or_else(|| {
            let names: Vec<&str> = set.metrics.iter().map(|m| m.name.as_str()).collect();
            BuildError::Empty(format!(
                "expected observations of metric `{}`, found only {}",
                input.metric,
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ))
        })?;
    let mut variants = input.variants.clone();
    for l in &set.labels {
        if !variants.iter().any(|v| **v == **l) {
            variants.push(l.to_string());
        }
    }
    let Some(baseline) = variants.first().cloned() else {
        return Err(BuildError::Empty(
            "expected at least one variant, found none".into(),
        ));
    };
    let cmp = resplab::compare(&set, &baseline, &input.options);
    let ctx = Ctx {
        input,
        variants: &variants,
        metric: &metric,
        rows: &cmp.rows,
    };
    let mut blocks = Vec::new();
    summary(&ctx, &set, &mut blocks)?;
    for (i, w) in input.workloads.iter().enumerate() {
        workload(&ctx, i, w, &mut blocks)?;
    }
    provenance(&ctx, &mut blocks);
    Ok(Document {
        title: input.title.clone(),
        variants,
        blocks,
    })
}

struct Ctx<'a> {
    input: &'a ReportInput,
    variants: &'a [String],
    metric: &'a Metric,
    rows: &'a [Row],
}

impl Ctx<'_> {
    fn index(&self, variant: &str) -> usize {
        self.variants
            .iter()
            .position(|v| v == variant)
            .unwrap_or(self.variants.len())
    }

    /// Position of a workload in the input (unknown ones last).
    fn workload_pos(&self, name: &str) -> usize {
        self.input
            .workloads
            .iter()
            .position(|w| w.name == name)
            .unwrap_or(usize::MAX)
    }

    fn variant_cell(&self, variant: &str) -> Cell {
        Cell::variant(variant, self.index(variant))
    }
}

/// Lower-case letters and digits, everything else one `-`.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let t = out.trim_matches('-');
    if t.is_empty() {
        "x".into()
    } else {
        t.to_string()
    }
}

fn unit_text(unit: &str) -> &str {
    match unit {
        "us" => "µs",
        "us/op" => "µs/op",
        u => u,
    }
}

/// `ops_per_sec (ops/s, higher is better)`.
pub fn metric_desc(m: &Metric) -> String {
    let dir = match m.direction {
        Direction::HigherIsBetter => "higher is better",
        Direction::LowerIsBetter => "lower is better",
        Direction::Unknown => "no stated direction",
    };
    let unit = unit_text(&m.unit);
    if unit.is_empty() || unit == m.name {
        format!("{} ({dir})", m.name)
    } else {
        format!("{} ({unit}, {dir})", m.name)
    }
}

fn pct(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:+.2}%"))
}

fn ci(r: &Row) -> String {
    fmt_interval(r.ci_low_pct, r.ci_high_pct)
}

fn n_text(r: &Row) -> String {
    if r.paired {
        format!("{} pairs", r.n_baseline)
    } else {
        format!("{}+{}", r.n_baseline, r.n_variant)
    }
}

fn num(v: f64) -> String {
    if v.is_finite() && v.abs() >= 1e5 {
        format!("{v:.0}")
    } else {
        significant(v, 5)
    }
}

/// How good an effect is for ranking: positive is better.
fn goodness(effect: f64, d: Direction) -> f64 {
    match d {
        Direction::LowerIsBetter => -effect,
        _ => effect,
    }
}

fn summary(ctx: &Ctx<'_>, set: &SampleSet, blocks: &mut Vec<Block>) -> Result<(), BuildError> {
    let input = ctx.input;
    blocks.push(Block::Heading {
        level: 2,
        text: "Summary".into(),
        id: "summary".into(),
    });
    let margin = input.options.margin_pct.map_or(String::new(), |m| {
        format!("; equivalence margin ±{}%", significant(m, 4))
    });
    blocks.push(Block::Paragraph(format!(
        "{}. Baseline: {}. Verdicts are about {}; {}% confidence intervals{margin}. \
         Effects are variant/baseline − 1, from the Hodges–Lehmann estimate of the log ratio; \
         trials are paired by round where rounds are known.",
        input.source,
        ctx.variants.first().map_or("", |s| s.as_str()),
        metric_desc(ctx.metric),
        significant(input.options.confidence * 100.0, 4),
    )));
    let mut primary: Vec<&Row> = ctx
        .rows
        .iter()
        .filter(|r| r.metric == ctx.metric.name)
        .collect();
    primary.sort_by_key(|r| (ctx.workload_pos(&r.workload), ctx.index(&r.variant)));
    let rows: Vec<Vec<Cell>> = primary
        .iter()
        .map(|r| {
            vec![
                Cell::text(&r.workload),
                ctx.variant_cell(&r.variant),
                Cell::text(n_text(r)),
                Cell::text(pct(r.effect_pct)),
                Cell::text(ci(r)),
                Cell::strong(r.verdict.label()),
            ]
        })
        .collect();
    if rows.is_empty() {
        blocks.push(Block::Paragraph(
            "No variant could be compared with the baseline (each needs values of the same \
             workload and metric)."
                .into(),
        ));
    } else {
        blocks.push(Block::Table {
            header: ["workload", "variant", "n", "effect", "CI", "verdict"]
                .map(String::from)
                .to_vec(),
            numeric: vec![false, false, true, true, true, false],
            rows,
        });
    }
    let with_effect: Vec<&&Row> = primary.iter().filter(|r| r.effect_pct.is_some()).collect();
    let mut items = Vec::new();
    let d = ctx.metric.direction;
    let best = with_effect.iter().max_by(|a, b| {
        goodness(a.effect_pct.unwrap_or(0.0), d)
            .total_cmp(&goodness(b.effect_pct.unwrap_or(0.0), d))
    });
    let worst = with_effect.iter().min_by(|a, b| {
        goodness(a.effect_pct.unwrap_or(0.0), d)
            .total_cmp(&goodness(b.effect_pct.unwrap_or(0.0), d))
    });
    let describe = |r: &Row| {
        let place = if r.workload.is_empty() {
            String::new()
        } else {
            format!(" on {}", r.workload)
        };
        format!(
            "{}{place}: {} {} ({})",
            r.variant,
            pct(r.effect_pct),
            ci(r),
            r.verdict.label()
        )
    };
    if with_effect.len() > 1 {
        if let (Some(b), Some(w)) = (best, worst) {
            let (best_word, worst_word) = if d == Direction::Unknown {
                ("Largest effect", "Smallest effect")
            } else {
                ("Best effect", "Worst effect")
            };
            items.push(format!("{best_word}: {}", describe(b)));
            items.push(format!("{worst_word}: {}", describe(w)));
        }
    } else if let Some(r) = with_effect.first() {
        items.push(format!("Effect: {}", describe(r)));
    }
    items.extend(geomeans(ctx, set));
    if !items.is_empty() {
        blocks.push(Block::List(items));
    }
    forest(ctx, blocks)
}

/// The forest plot of every effect (each workload, metric and variant), placed in the
/// summary when there are at least two.
fn forest(ctx: &Ctx<'_>, blocks: &mut Vec<Block>) -> Result<(), BuildError> {
    let input = ctx.input;
    let mut rows: Vec<&Row> = ctx
        .rows
        .iter()
        .filter(|r| r.effect_pct.is_some_and(f64::is_finite))
        .collect();
    if rows.len() < 2 {
        return Ok(());
    }
    rows.sort_by_key(|r| {
        (
            ctx.workload_pos(&r.workload),
            table_metric_rank(&r.metric, &ctx.metric.name),
            r.metric.clone(),
            ctx.index(&r.variant),
        )
    });
    let several_variants = ctx.variants.len() > 2;
    let effects: Vec<plot::forest::Effect> = rows
        .iter()
        .map(|r| {
            let mut parts: Vec<&str> = Vec::new();
            if !r.workload.is_empty() {
                parts.push(&r.workload);
            }
            parts.push(&r.metric);
            if several_variants {
                parts.push(&r.variant);
            }
            plot::forest::Effect {
                label: parts.join(" · "),
                effect_pct: r.effect_pct.unwrap_or(f64::NAN),
                low_pct: r.ci_low_pct,
                high_pct: r.ci_high_pct,
                verdict: r.verdict,
            }
        })
        .collect();
    let svg = plot::forest::render(&plot::forest::Forest {
        effects: &effects,
        margin_pct: input.options.margin_pct,
    })?;
    blocks.push(Block::Plot {
        file: "summary-forest".into(),
        title: "Every effect at a glance".into(),
        caption: format!(
            "One row per {}metric{}: the effect (dot) and its {}% interval (bar) against the \
             zero line{}. Colour is the verdict; a hollow dot has no interval.",
            if input.workloads.len() > 1 {
                "workload and "
            } else {
                ""
            },
            if several_variants { " and variant" } else { "" },
            significant(input.options.confidence * 100.0, 4),
            if input.options.margin_pct.is_some() {
                "; the shaded band is the equivalence margin"
            } else {
                ""
            }
        ),
        svg,
    });
    Ok(())
}

fn geomeans(ctx: &Ctx<'_>, set: &SampleSet) -> Vec<String> {
    let workloads: Vec<&WorkloadInput> = ctx
        .input
        .workloads
        .iter()
        .filter(|w| w.in_geomean)
        .collect();
    if workloads.len() < 2 {
        return Vec::new();
    }
    let baseline = &ctx.variants[0];
    let mut out = Vec::new();
    for v in ctx.variants.iter().skip(1) {
        let mut lrs = Vec::new();
        for w in &workloads {
            let (Some(a), Some(b)) = (
                set.get(&w.name, ctx.metric, baseline),
                set.get(&w.name, ctx.metric, v),
            ) else {
                continue;
            };
            let mut d = Vec::new();
            if a.has_rounds() && b.has_rounds() {
                for (i, r) in b.rounds.iter().enumerate() {
                    if let Some(j) = a.rounds.iter().position(|x| x == r) {
                        let (x, y) = (a.values[j], b.values[i]);
                        if x > 0.0 && y > 0.0 && x.is_finite() && y.is_finite() {
                            d.push(y.ln() - x.ln());
                        }
                    }
                }
            }
            if d.is_empty() {
                out.push(format!(
                    "Geometric mean for {v}: not computed — workload {} has no trials paired \
                     by round with the baseline.",
                    w.name
                ));
                lrs.clear();
                break;
            }
            lrs.push(d);
        }
        if lrs.len() < 2 {
            continue;
        }
        let seed = ctx.input.seed.unwrap_or(0);
        let conf = significant(ctx.input.options.confidence * 100.0, 4);
        match geomean_ratio(&lrs, ctx.input.options.confidence, GEOMEAN_RESAMPLES, seed) {
            Ok(g) if !g.has_interval() => out.push(format!(
                "Geometric mean of {v}/{baseline} over {} workloads: {:+.2}%, no interval and no \
                 verdict: {} rounds, and a {conf}% interval needs {}.",
                lrs.len(),
                (g.ratio - 1.0) * 100.0,
                g.rounds,
                resplab_stats::verdict::min_pairs(ctx.input.options.confidence)
            )),
            Ok(g) => {
                let how = match g.method {
                    GeomeanMethod::SignedRankOfRoundMeans => format!(
                        "{conf}% signed-rank interval of the {} rounds' geometric means",
                        g.rounds
                    ),
                    GeomeanMethod::Bootstrap => format!(
                        "{conf}% bootstrap interval over whole rounds, {} resamples, seed {seed}{}",
                        g.resamples,
                        if g.approximate {
                            "; approximate below 10 rounds"
                        } else {
                            ""
                        }
                    ),
                };
                out.push(format!(
                    "Geometric mean of {v}/{baseline} over {} workloads: {:+.2}% [{:+.2}%, {:+.2}%] \
                     ({how}): {}",
                    lrs.len(),
                    (g.ratio - 1.0) * 100.0,
                    (g.ci_low - 1.0) * 100.0,
                    (g.ci_high - 1.0) * 100.0,
                    verdict::interval_verdict(
                        (g.ci_low - 1.0) * 100.0,
                        (g.ci_high - 1.0) * 100.0,
                        ctx.metric.direction,
                        ctx.input.options.margin_pct,
                    )
                    .label(),
                ));
            }
            Err(e) => out.push(format!("Geometric mean for {v}: not computed — {e}")),
        }
    }
    out
}

fn table_metric_rank(name: &str, primary: &str) -> usize {
    if name == primary {
        0
    } else {
        TABLE_METRICS
            .iter()
            .position(|m| *m == name)
            .map_or(usize::MAX, |p| p + 1)
    }
}

fn workload(
    ctx: &Ctx<'_>,
    i: usize,
    w: &WorkloadInput,
    blocks: &mut Vec<Block>,
) -> Result<(), BuildError> {
    let stem = format!("{:02}-{}", i + 1, slug(&w.name));
    blocks.push(Block::Heading {
        level: 2,
        text: format!("Workload {}", w.name),
        id: format!("w{stem}"),
    });
    let runs: Vec<&TrialInput> = w.trials.iter().filter(|t| t.run.is_some()).collect();
    let models: BTreeSet<String> = runs
        .iter()
        .filter_map(|t| t.run.as_ref().map(|r| r.load_model.label()))
        .collect();
    let variant_count = ctx
        .variants
        .iter()
        .filter(|v| w.trials.iter().any(|t| &t.variant == *v))
        .count();
    let mut intro = format!(
        "{} counted trials of {} variants.",
        w.trials.len(),
        variant_count
    );
    if !models.is_empty() {
        intro.push_str(&format!(
            " Load model: {}.",
            models.into_iter().collect::<Vec<_>>().join("; ")
        ));
    }
    if let Some(c) = w.trials.iter().find_map(|t| t.command.as_ref()) {
        intro.push_str(&format!(" Figures of test {c} within its trials."));
    }
    blocks.push(Block::Paragraph(intro));

    // Verdict table.
    let mut rows: Vec<&Row> = ctx.rows.iter().filter(|r| r.workload == w.name).collect();
    let primary = &ctx.metric.name;
    if rows
        .iter()
        .any(|r| table_metric_rank(&r.metric, primary) != usize::MAX)
    {
        rows.retain(|r| table_metric_rank(&r.metric, primary) != usize::MAX);
    }
    rows.sort_by_key(|r| (table_metric_rank(&r.metric, primary), ctx.index(&r.variant)));
    blocks.push(Block::Heading {
        level: 3,
        text: "Verdict".into(),
        id: format!("w{stem}-verdict"),
    });
    if rows.is_empty() {
        blocks.push(Block::Paragraph(
            "No comparison: the baseline or the variants have no values here.".into(),
        ));
    } else {
        let ci_head = format!(
            "{}% CI",
            significant(ctx.input.options.confidence * 100.0, 4)
        );
        let base_name = ctx.variants.first().cloned().unwrap_or_default();
        blocks.push(Block::Table {
            header: vec![
                "metric".into(),
                "variant".into(),
                "effect".into(),
                ci_head,
                "verdict".into(),
                "p".into(),
                "n".into(),
                "MDE".into(),
                format!("{base_name} (median)"),
                "variant (median)".into(),
            ],
            numeric: vec![
                false, false, true, true, false, true, true, true, true, true,
            ],
            rows: rows
                .iter()
                .map(|r| {
                    let unit = unit_text(&r.unit);
                    vec![
                        Cell::text(if unit.is_empty() || unit == r.metric {
                            r.metric.clone()
                        } else {
                            format!("{} ({unit})", r.metric)
                        }),
                        ctx.variant_cell(&r.variant),
                        Cell::text(pct(r.effect_pct)),
                        Cell::text(ci(r)),
                        Cell::strong(r.verdict.label()),
                        Cell::text(r.p_value.map_or("–".into(), verdict::fmt_p_value)),
                        Cell::text(n_text(r)),
                        Cell::text(r.mde_pct.map_or("–".into(), |m| format!("{m:.2}%"))),
                        Cell::text(num(r.baseline_median)),
                        Cell::text(num(r.variant_median)),
                    ]
                })
                .collect(),
        });
        // One line per warning text, naming every (metric, variant) it applies to: the
        // same advice for six variants is one line, not six.
        let mut groups: Vec<(&str, String, Vec<String>)> = Vec::new();
        for r in &rows {
            for a in &r.warnings {
                let place = format!("{}, {}", r.metric, r.variant);
                let message = a.message();
                match groups
                    .iter_mut()
                    .find(|g| g.0 == a.kind() && g.1 == message)
                {
                    Some(g) if !g.2.contains(&place) => g.2.push(place),
                    Some(_) => {}
                    None => groups.push((a.kind(), message, vec![place])),
                }
            }
        }
        let mut warnings: Vec<String> = groups
            .into_iter()
            .map(|(kind, message, places)| format!("[{kind}] {}: {message}", places.join("; ")))
            .collect();
        for r in &rows {
            for l in &r.leave_one_out {
                warnings.push(resplab::leave_one_out_line(&r.metric, &r.variant, l));
            }
        }
        if warnings.is_empty() {
            blocks.push(Block::Paragraph("No warnings.".into()));
        } else {
            blocks.push(Block::Paragraph("Warnings:".into()));
            blocks.push(Block::List(warnings));
        }
    }
    if rows.iter().all(|r| r.verdict == Verdict::NoVerdict) && !rows.is_empty() {
        blocks.push(Block::Paragraph(
            "No verdict is possible with these trials; the plots below still show them.".into(),
        ));
    }

    trial_plots(ctx, &stem, w, blocks)?;
    latency_plots(ctx, &stem, w, blocks)?;
    Ok(())
}

fn trial_plots(
    ctx: &Ctx<'_>,
    stem: &str,
    w: &WorkloadInput,
    blocks: &mut Vec<Block>,
) -> Result<(), BuildError> {
    let valued: Vec<(usize, &TrialInput, f64)> = w
        .trials
        .iter()
        .filter_map(|t| t.value.filter(|v| v.is_finite()).map(|v| (t, v)))
        .enumerate()
        .map(|(i, (t, v))| (i + 1, t, v))
        .collect();
    if valued.is_empty() {
        blocks.push(Block::Paragraph(format!(
            "No trial has a value of {}, so there is nothing to plot per trial.",
            ctx.metric.name
        )));
        return Ok(());
    }
    let marks: Vec<plot::run_order::Mark> = valued
        .iter()
        .map(|(order, t, v)| plot::run_order::Mark {
            order: *order,
            variant: ctx.index(&t.variant),
            value: *v,
        })
        .collect();
    let mut round_starts = Vec::new();
    for pair in valued.windows(2) {
        if let (Some(a), Some(b)) = (pair[0].1.round, pair[1].1.round) {
            if a != b {
                round_starts.push(pair[1].0);
            }
        }
    }
    let desc = metric_desc(ctx.metric);
    let svg = plot::run_order::render(&plot::run_order::RunOrder {
        variants: ctx.variants,
        marks: &marks,
        round_starts: &round_starts,
        y_desc: &desc,
    })?;
    let rounds_note = if round_starts.is_empty() {
        String::new()
    } else {
        " Grey rules separate rounds.".to_string()
    };
    blocks.push(Block::Plot {
        file: format!("{stem}-run-order"),
        title: format!("{} per trial, in run order", ctx.metric.name),
        caption: format!(
            "One mark per counted trial, coloured by variant; a slope shared by all variants \
             is drift, which pairing by round cancels.{rounds_note}"
        ),
        svg,
    });
    let rows: Vec<(String, usize, Vec<f64>)> = ctx
        .variants
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let vals: Vec<f64> = valued
                .iter()
                .filter(|(_, t, _)| &t.variant == v)
                .map(|(_, _, x)| *x)
                .collect();
            (!vals.is_empty()).then(|| (v.clone(), i, vals))
        })
        .collect();
    let svg = plot::distribution::render(&plot::distribution::Distribution {
        rows: &rows,
        x_desc: &desc,
    })?;
    blocks.push(Block::Plot {
        file: format!("{stem}-distribution"),
        title: format!("Distribution of {} per variant", ctx.metric.name),
        caption: "Box from the first to the third quartile, thick line at the median, whiskers \
                  to the extremes; every trial is a dot."
            .into(),
        svg,
    });
    Ok(())
}

fn latency_plots(
    ctx: &Ctx<'_>,
    stem: &str,
    w: &WorkloadInput,
    blocks: &mut Vec<Block>,
) -> Result<(), BuildError> {
    if !w.trials.iter().any(|t| t.summary().is_some()) {
        blocks.push(Block::Paragraph(
            "These inputs carry no latency histograms or per-second series (only resplab run \
             records and stored experiments do), so the latency spectrum and the per-second \
             plots are left out."
                .into(),
        ));
        return Ok(());
    }
    let closed = w
        .trials
        .iter()
        .filter_map(|t| t.run.as_ref())
        .all(|r| r.load_model.is_closed_loop());
    let mut series = Vec::new();
    let mut bad = Vec::new();
    for (i, v) in ctx.variants.iter().enumerate() {
        let mut merged = LatencyHistogram::new();
        let mut trials = 0;
        for t in w.trials.iter().filter(|t| &t.variant == v) {
            let Some(s) = t.summary() else { continue };
            if s.histogram.is_empty() {
                continue;
            }
            match LatencyHistogram::from_base64(&s.histogram) {
                Ok(h) => {
                    merged.merge(&h);
                    trials += 1;
                }
                Err(e) => bad.push(format!("{v}: {e}")),
            }
        }
        if trials > 0 && !merged.is_empty() {
            series.push(Series {
                name: format!("{v} ({trials} trials, {} requests)", merged.count()),
                index: i,
                points: plot::spectrum::points(&merged),
            });
        }
    }
    if !series.is_empty() {
        let svg = plot::spectrum::render(&series)?;
        let timing = if closed {
            "Closed loop: latency here restates throughput (Little's law), it is not an independent result."
        } else {
            "Open loop: latency is timed from each request's intended send time."
        };
        blocks.push(Block::Plot {
            file: format!("{stem}-latency-spectrum"),
            title: "Latency by percentile".into(),
            caption: format!(
                "Histograms of all counted trials merged per variant; x is the percentile on a \
                 log scale from 50% to 99.999%. {timing}"
            ),
            svg,
        });
    }
    if !bad.is_empty() {
        blocks.push(Block::Paragraph(format!(
            "Histograms that could not be read were left out: {}.",
            bad.join("; ")
        )));
    }

    // One representative trial per variant: value closest to the variant's median.
    let mut reps: Vec<(usize, &String, &TrialInput)> = Vec::new();
    for (i, v) in ctx.variants.iter().enumerate() {
        let cands: Vec<(&TrialInput, f64)> = w
            .trials
            .iter()
            .filter(|t| &t.variant == v && t.run.as_ref().is_some_and(|r| !r.series.is_empty()))
            .filter_map(|t| t.value.filter(|x| x.is_finite()).map(|x| (t, x)))
            .collect();
        if cands.is_empty() {
            continue;
        }
        let vals: Vec<f64> = cands.iter().map(|c| c.1).collect();
        let m = resplab_stats::describe::median(&vals).unwrap_or(f64::NAN);
        let mut best = cands[0];
        for c in &cands[1..] {
            if (c.1 - m).abs() < (best.1 - m).abs() {
                best = *c;
            }
        }
        reps.push((i, v, best.0));
    }
    if reps.is_empty() {
        return Ok(());
    }
    let which: Vec<String> = reps
        .iter()
        .map(|(_, v, t)| match t.round {
            Some(r) => format!("{v} round {r}"),
            None => v.to_string(),
        })
        .collect();
    let whole = if w.trials.iter().any(|t| t.command.is_some()) {
        " The series covers the whole trial (all its tests)."
    } else {
        ""
    };
    let run = |t: &TrialInput| -> Option<Arc<RunRecord>> { t.run.clone() };
    // Runs shorter than 10 s carry tenths of a second; older records (and long runs)
    // whole seconds. A series of one or two points draws a vertical line, not a story.
    let points = reps
        .iter()
        .filter_map(|(_, _, t)| t.run.as_ref().map(|r| r.series.len()))
        .max()
        .unwrap_or(0);
    let interval = reps
        .iter()
        .filter_map(|(_, _, t)| t.run.as_ref().map(|r| r.series_interval_sec))
        .fold(0.0f64, f64::max);
    if points < MIN_SERIES_POINTS {
        blocks.push(Block::Paragraph(format!(
            "No throughput or p99 plot over time: the representative trials ({}) have \
             {points} point(s), one per {}; a plot needs at least {MIN_SERIES_POINTS}. \
             Longer trials (or a current resplab, which records runs shorter than 10 s by the \
             tenth of a second) give one.",
            which.join(", "),
            interval_words(interval)
        )));
        return Ok(());
    }
    let per = interval_words(interval);
    let ops: Vec<Series> = reps
        .iter()
        .filter_map(|(i, v, t)| {
            run(t).map(|r| Series {
                name: (*v).clone(),
                index: *i,
                points: r.series.iter().map(|s| (s.t_sec, s.ops_per_sec)).collect(),
            })
        })
        .collect();
    let svg = plot::timeline::render(&plot::timeline::Timeline {
        series: &ops,
        y_desc: "ops/s (higher is better)",
    })?;
    blocks.push(Block::Plot {
        file: format!("{stem}-ops-per-second"),
        title: format!("Throughput per {per}, one representative trial per variant"),
        caption: format!(
            "Each variant's trial whose {} is closest to its median: {}.{whole}",
            ctx.metric.name,
            which.join(", ")
        ),
        svg,
    });
    let max_p99 = reps
        .iter()
        .filter_map(|(_, _, t)| t.run.as_ref())
        .flat_map(|r| r.series.iter().map(|s| s.latency_us.p99))
        .fold(0.0f64, f64::max);
    let (div, unit) = plot::latency_unit(max_p99);
    let p99: Vec<Series> = reps
        .iter()
        .filter_map(|(i, v, t)| {
            run(t).map(|r| Series {
                name: (*v).clone(),
                index: *i,
                points: r
                    .series
                    .iter()
                    .map(|s| (s.t_sec, s.latency_us.p99 / div))
                    .collect(),
            })
        })
        .collect();
    let desc = format!("p99 latency ({unit}, lower is better)");
    let svg = plot::timeline::render(&plot::timeline::Timeline {
        series: &p99,
        y_desc: &desc,
    })?;
    blocks.push(Block::Plot {
        file: format!("{stem}-p99-per-second"),
        title: format!("p99 latency per {per}, same trials"),
        caption: format!(
            "The 99th percentile of the replies of each {per} in the same trials.{whole}"
        ),
        svg,
    });
    Ok(())
}

/// Fewest points of a representative trial's series worth a plot over time.
const MIN_SERIES_POINTS: usize = 3;

/// "second" or "0.1 s": the length of one series interval, in words.
fn interval_words(interval_sec: f64) -> String {
    if (interval_sec - 1.0).abs() < 1e-9 || interval_sec <= 0.0 {
        "second".into()
    } else {
        format!("{interval_sec} s")
    }
}

/// Distinct runs of the report (a run shared by a workload and its tests counts once).
fn all_runs(input: &ReportInput) -> Vec<(String, Arc<RunRecord>)> {
    let mut out: Vec<(String, Arc<RunRecord>)> = Vec::new();
    for w in &input.workloads {
        for t in &w.trials {
            if let Some(r) = &t.run {
                if !out.iter().any(|(_, o)| Arc::ptr_eq(o, r)) {
                    out.push((t.variant.clone(), r.clone()));
                }
            }
        }
    }
    out
}

fn is_server_fact(key: &str) -> bool {
    key.ends_with("_version")
        || matches!(
            key,
            "server_name"
                | "redis_git_sha1"
                | "redis_git_dirty"
                | "redis_build_id"
                | "redis_mode"
                | "arch_bits"
                | "multiplexing_api"
                | "executable"
                | "config_file"
                | "os"
        )
}

fn provenance(ctx: &Ctx<'_>, blocks: &mut Vec<Block>) {
    let input = ctx.input;
    let runs = all_runs(input);
    blocks.push(Block::Heading {
        level: 2,
        text: "Provenance".into(),
        id: "provenance".into(),
    });
    let mut facts: Vec<Vec<Cell>> = vec![
        vec![
            Cell::text("report written by"),
            Cell::text(&input.generator),
        ],
        vec![Cell::text("data"), Cell::text(&input.source)],
    ];
    if let Some(seed) = input.seed {
        facts.push(vec![
            Cell::text("experiment seed"),
            Cell::text(seed.to_string()),
        ]);
    }
    for (k, v) in &input.facts {
        facts.push(vec![Cell::text(k), Cell::text(v)]);
    }
    let tools: BTreeSet<String> = runs
        .iter()
        .map(|(_, r)| {
            let rev = r
                .tool
                .git_revision
                .as_deref()
                .map_or(String::new(), |g| format!(" ({g})"));
            format!("{} {}{rev}", r.tool.name, r.tool.version)
        })
        .collect();
    if !tools.is_empty() {
        facts.push(vec![
            Cell::text("trials measured by"),
            Cell::text(tools.into_iter().collect::<Vec<_>>().join(", ")),
        ]);
    }
    let seeds: BTreeSet<u64> = runs.iter().map(|(_, r)| r.seed).collect();
    if !seeds.is_empty() {
        let list: Vec<String> = seeds.iter().map(u64::to_string).collect();
        let text = if list.len() <= 6 {
            list.join(", ")
        } else {
            format!(
                "{} distinct, from {} to {}",
                list.len(),
                list[0],
                list[list.len() - 1]
            )
        };
        facts.push(vec![Cell::text("trial seeds"), Cell::text(text)]);
    }
    let windows: BTreeSet<String> = runs
        .iter()
        .map(|(_, r)| {
            format!(
                "{} s measured after {} s warm-up",
                significant(r.duration_sec, 3),
                significant(r.warmup_sec, 3)
            )
        })
        .collect();
    if !windows.is_empty() && windows.len() <= 4 {
        facts.push(vec![
            Cell::text("trial length"),
            Cell::text(windows.into_iter().collect::<Vec<_>>().join("; ")),
        ]);
    }
    blocks.push(Block::Table {
        header: vec!["fact".into(), "value".into()],
        numeric: vec![false, false],
        rows: facts,
    });

    // Load model per workload.
    let mut models = Vec::new();
    for w in &input.workloads {
        let labels: BTreeSet<String> = w
            .trials
            .iter()
            .filter_map(|t| t.run.as_ref().map(|r| r.load_model.label()))
            .collect();
        if !labels.is_empty() {
            models.push(vec![
                Cell::text(&w.name),
                Cell::text(labels.into_iter().collect::<Vec<_>>().join("; ")),
            ]);
        }
    }
    if !models.is_empty() {
        blocks.push(Block::Heading {
            level: 3,
            text: "Load model".into(),
            id: "provenance-load".into(),
        });
        blocks.push(Block::Table {
            header: vec!["workload".into(), "load model".into()],
            numeric: vec![false, false],
            rows: models,
        });
    }

    // Hosts.
    let mut hosts: Vec<Vec<Cell>> = Vec::new();
    let mut seen = BTreeSet::new();
    for (_, r) in &runs {
        let h = &r.host;
        let row = [
            h.hostname.clone(),
            h.cpu_model.clone(),
            h.cores.to_string(),
            h.kernel.clone(),
            h.os.clone(),
            h.governor.clone().unwrap_or_else(|| "–".into()),
        ];
        if seen.insert(row.clone()) {
            hosts.push(row.into_iter().map(Cell::text).collect());
        }
    }
    if !hosts.is_empty() {
        blocks.push(Block::Heading {
            level: 3,
            text: "Host".into(),
            id: "provenance-host".into(),
        });
        blocks.push(Block::Table {
            header: ["host", "CPU", "cores", "kernel", "OS", "governor"]
                .map(String::from)
                .to_vec(),
            numeric: vec![false, false, true, false, false, false],
            rows: hosts,
        });
    }

    // Servers: version facts from INFO server, per variant.
    let mut servers: Vec<Vec<Cell>> = Vec::new();
    for v in ctx.variants {
        let mut fields: std::collections::BTreeMap<&str, BTreeSet<&str>> = Default::default();
        for (_, r) in runs.iter().filter(|(rv, _)| rv == v) {
            for (k, val) in &r.server {
                if is_server_fact(k) {
                    fields.entry(k.as_str()).or_default().insert(val.as_str());
                }
            }
        }
        for (k, vals) in fields {
            servers.push(vec![
                ctx.variant_cell(v),
                Cell::text(k),
                Cell::text(vals.into_iter().collect::<Vec<_>>().join(", ")),
            ]);
        }
    }
    if !servers.is_empty() || !input.variant_definitions.is_empty() {
        blocks.push(Block::Heading {
            level: 3,
            text: "Servers".into(),
            id: "provenance-servers".into(),
        });
    }
    if !servers.is_empty() {
        blocks.push(Block::Paragraph(
            "From each trial's INFO server (distinct values per variant).".into(),
        ));
        blocks.push(Block::Table {
            header: vec!["variant".into(), "field".into(), "value".into()],
            numeric: vec![false, false, false],
            rows: servers,
        });
    }
    for (name, def) in &input.variant_definitions {
        blocks.push(Block::Paragraph(format!("Definition of variant {name}:")));
        blocks.push(Block::Code {
            lang: "json".into(),
            text: def.clone(),
        });
    }

    // Resolved run configuration of the first trial of each workload.
    let mut shown = false;
    for w in &input.workloads {
        let Some(r) = w.trials.iter().find_map(|t| t.run.as_ref()) else {
            continue;
        };
        if w.trials.iter().any(|t| t.command.is_some()) {
            continue; // a test of a workload shares its runs with the workload's totals
        }
        if !shown {
            blocks.push(Block::Heading {
                level: 3,
                text: "Run configuration".into(),
                id: "provenance-config".into(),
            });
            shown = true;
        }
        blocks.push(Block::Paragraph(format!(
            "Workload {}, first counted trial ({}), as resolved by the load generator:",
            w.name,
            w.trials
                .iter()
                .find(|t| t.run.is_some())
                .map_or("", |t| t.variant.as_str())
        )));
        blocks.push(Block::Code {
            lang: "json".into(),
            text: serde_json::to_string_pretty(&r.config).unwrap_or_default(),
        });
    }

    // Run warnings, counted.
    let mut warn: std::collections::BTreeMap<(String, String), usize> = Default::default();
    for (v, r) in &runs {
        for w in &r.warnings {
            *warn
                .entry((format!("[{}] {v}", w.kind()), w.message()))
                .or_default() += 1;
        }
    }
    let mut notes: Vec<String> = input.notes.clone();
    for ((k, m), n) in warn {
        notes.push(format!(
            "{k}: {m} ({n} trial{})",
            if n == 1 { "" } else { "s" }
        ));
    }
    if !notes.is_empty() {
        blocks.push(Block::Heading {
            level: 3,
            text: "Notes".into(),
            id: "provenance-notes".into(),
        });
        blocks.push(Block::List(notes));
    }

    if let Some(text) = &input.experiment_file {
        blocks.push(Block::Heading {
            level: 3,
            text: "Experiment file".into(),
            id: "provenance-file".into(),
        });
        blocks.push(Block::Code {
            lang: "toml".into(),
            text: text.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs() {
        assert_eq!(slug("suite:GET"), "suite-get");
        assert_eq!(slug("::"), "x");
        assert_eq!(slug("LRANGE_100 (first 100)"), "lrange-100-first-100");
    }
}
