//! The report's opening section: every workload's verdict in one table, the forest plot
//! of effects with their intervals, and the geometric mean of ratios across workloads.

use super::*;

/// How good an effect is for ranking: positive is better.
pub(super) fn goodness(effect: f64, d: Direction) -> f64 {
    match d {
        Direction::LowerIsBetter => -effect,
        _ => effect,
    }
}

pub(super) fn summary(
    ctx: &Ctx<'_>,
    set: &SampleSet,
    blocks: &mut Vec<Block>,
) -> Result<(), BuildError> {
    blocks.push(Block::Heading {
        level: 2,
        text: "Summary".into(),
        id: "summary".into(),
    });
    blocks.push(intro(ctx));
    let mut primary: Vec<&Row> = ctx
        .rows
        .iter()
        .filter(|r| r.metric == ctx.metric.name)
        .collect();
    primary.sort_by_key(|r| (ctx.workload_pos(&r.workload), ctx.index(&r.variant)));
    blocks.push(verdict_table(ctx, &primary));
    let mut items = highlights(ctx, &primary);
    items.extend(geomeans(ctx, set));
    if !items.is_empty() {
        blocks.push(Block::List(items));
    }
    forest(ctx, blocks)
}

/// What the summary compares: source, baseline, metric, confidence and margin.
fn intro(ctx: &Ctx<'_>) -> Block {
    let input = ctx.input;
    let margin = input.options.margin_pct.map_or(String::new(), |m| {
        format!("; equivalence margin ±{}%", significant(m, 4))
    });
    Block::Paragraph(format!(
        "{}. Baseline: {}. Verdicts are about {}; {}% confidence intervals{margin}. \
         Effects are variant/baseline − 1, from the Hodges–Lehmann estimate of the log ratio; \
         trials are paired by round where rounds are known.",
        input.source,
        ctx.variants.first().map_or("", |s| s.as_str()),
        metric_desc(ctx.metric),
        significant(input.options.confidence * 100.0, 4),
    ))
}

/// The verdict of every variant on every workload for the report's metric, or a sentence
/// saying that nothing could be compared.
fn verdict_table(ctx: &Ctx<'_>, primary: &[&Row]) -> Block {
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
        Block::Paragraph(
            "No variant could be compared with the baseline (each needs values of the same \
             workload and metric)."
                .into(),
        )
    } else {
        Block::Table {
            header: ["workload", "variant", "n", "effect", "CI", "verdict"]
                .map(String::from)
                .to_vec(),
            numeric: vec![false, false, true, true, true, false],
            rows,
        }
    }
}

/// The best and worst effect (or the only one).
fn highlights(ctx: &Ctx<'_>, primary: &[&Row]) -> Vec<String> {
    let mut items = Vec::new();
    let with_effect: Vec<&&Row> = primary.iter().filter(|r| r.effect_pct.is_some()).collect();
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
    items
}

/// The forest plot of every effect (each workload, metric and variant), placed in the
/// summary when there are at least two.
pub(super) fn forest(ctx: &Ctx<'_>, blocks: &mut Vec<Block>) -> Result<(), BuildError> {
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

/// One line per later variant: the geometric mean of its ratios to the baseline over the
/// workloads in the geomean (at least two), with its interval and verdict, or why it was
/// not computed.
pub(super) fn geomeans(ctx: &Ctx<'_>, set: &SampleSet) -> Vec<String> {
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
        match paired_log_ratios(ctx, set, &workloads, baseline, v) {
            Err(unpaired) => out.push(unpaired),
            Ok(lrs) if lrs.len() < 2 => {}
            Ok(lrs) => out.push(geomean_line(ctx, v, baseline, &lrs)),
        }
    }
    out
}

/// Per workload, the log ratios of variant `v` to the baseline in the rounds both ran;
/// `Err` with the sentence to print when a workload has no such round.
fn paired_log_ratios(
    ctx: &Ctx<'_>,
    set: &SampleSet,
    workloads: &[&WorkloadInput],
    baseline: &str,
    v: &str,
) -> Result<Vec<Vec<f64>>, String> {
    let mut lrs = Vec::new();
    for w in workloads {
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
            return Err(format!(
                "Geometric mean for {v}: not computed — workload {} has no trials paired \
                 by round with the baseline.",
                w.name
            ));
        }
        lrs.push(d);
    }
    Ok(lrs)
}

/// The geometric mean line of variant `v` from its per-workload log ratios `lrs`.
fn geomean_line(ctx: &Ctx<'_>, v: &str, baseline: &str, lrs: &[Vec<f64>]) -> String {
    let seed = ctx.input.seed.unwrap_or(0);
    let conf = significant(ctx.input.options.confidence * 100.0, 4);
    match geomean_ratio(lrs, ctx.input.options.confidence, GEOMEAN_RESAMPLES, seed) {
        Ok(g) if !g.has_interval() => format!(
            "Geometric mean of {v}/{baseline} over {} workloads: {:+.2}%, no interval and no \
             verdict: {} rounds, and a {conf}% interval needs {}.",
            lrs.len(),
            (g.ratio - 1.0) * 100.0,
            g.rounds,
            resplab_stats::verdict::min_pairs(ctx.input.options.confidence)
        ),
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
            format!(
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
            )
        }
        Err(e) => format!("Geometric mean for {v}: not computed — {e}"),
    }
}
