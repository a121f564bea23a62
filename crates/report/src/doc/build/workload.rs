//! One section per workload: its verdict table (the rows of `resplab compare`) with the
//! medians and the warnings, then its plots.

use super::*;

/// Metrics shown in each workload's verdict table after the report's own metric, when
/// the inputs have them (stored-experiment names, then resplab run-file names).
pub(super) const TABLE_METRICS: [&str; 11] = [
    "ops_per_sec",
    "p50_us",
    "p99_us",
    "p99_9_us",
    "server_cpu_us_per_op",
    "client_cpu_us_per_op",
    "wire_bytes_per_op",
    "p50_latency_us",
    "p99_latency_us",
    "p99.9_latency_us",
    "rps",
];

pub(super) fn table_metric_rank(name: &str, primary: &str) -> usize {
    if name == primary {
        0
    } else {
        TABLE_METRICS
            .iter()
            .position(|m| *m == name)
            .map_or(usize::MAX, |p| p + 1)
    }
}

pub(super) fn workload(
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
    blocks.push(Block::Paragraph(intro(ctx, w)));

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
        blocks.push(verdict_table(ctx, &rows));
        let warnings = warning_lines(&rows);
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

    duet_pairs(ctx, &stem, w, blocks);
    trial_plots(ctx, &stem, w, blocks)?;
    latency_plots(ctx, &stem, w, blocks)?;
    Ok(())
}

/// The workload's opening sentence: trials, variants, load model, the test it covers.
fn intro(ctx: &Ctx<'_>, w: &WorkloadInput) -> String {
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
    intro
}

/// The verdict table of the workload's rows.
fn verdict_table(ctx: &Ctx<'_>, rows: &[&Row]) -> Block {
    let ci_head = format!(
        "{}% CI",
        significant(ctx.input.options.confidence * 100.0, 4)
    );
    let base_name = ctx.variants.first().cloned().unwrap_or_default();
    Block::Table {
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
    }
}

/// One line per warning kind, naming every (metric, variant) it applies to with its
/// figure ([`crate::warnings::grouped`]), then the leave-one-out lines.
fn warning_lines(rows: &[&Row]) -> Vec<String> {
    let placed: Vec<crate::warnings::Placed<'_>> = rows
        .iter()
        .flat_map(|r| {
            r.warnings.iter().map(|w| crate::warnings::Placed {
                warning: w,
                place: r.metric.clone(),
                variant: &r.variant,
            })
        })
        .collect();
    let mut warnings = crate::warnings::grouped(&placed, None);
    for r in rows {
        for l in &r.leave_one_out {
            warnings.push(resplab::leave_one_out_line(&r.metric, &r.variant, l));
        }
    }
    warnings
}
