//! The comparison as a table: plain text and GitHub-flavoured Markdown, each followed by
//! the geomean summary and the warnings (one line per warning kind, naming the rows it
//! applies to with their figures).

use super::*;

pub(super) fn all_zero_line(report: &Report) -> Option<String> {
    (!report.all_zero.is_empty()).then(|| {
        format!(
            "zero in every trial of every variant, so not compared: {}",
            report.all_zero.join(", ")
        )
    })
}

pub(super) fn fmt_pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{v:+.2}%"))
}

/// The `[leave_one_out]` warning line of one outlier round of a row at `place`.
pub(crate) fn leave_one_out_line(place: &str, variant: &str, l: &LeftOut) -> String {
    format!(
        "[leave_one_out] {place}, {variant}: without round {}: {:+.2}% {} ({})",
        l.round,
        l.effect_pct,
        if l.verdict == Verdict::NoVerdict {
            fmt_interval(None, None)
        } else {
            fmt_interval(Some(l.ci_low_pct), Some(l.ci_high_pct))
        },
        l.verdict.label()
    )
}

/// A confidence interval of an effect in percent; `(-inf, +inf)` when there is none.
pub(crate) fn fmt_interval(lo: Option<f64>, hi: Option<f64>) -> String {
    match (lo, hi) {
        (Some(l), Some(h)) => format!("[{l:+.2}%, {h:+.2}%]"),
        _ => "(-inf, +inf)".into(),
    }
}

pub(super) fn fmt_p(v: Option<f64>) -> String {
    v.map_or("-".into(), fmt_p_value)
}

pub(super) fn fmt_mde(v: Option<f64>) -> String {
    v.map_or("-".into(), |m| format!("{m:.2}%"))
}

pub(super) fn fmt_num(v: f64) -> String {
    if v == 0.0 || (v.abs() >= 0.01 && v.abs() < 1e7) {
        let s = format!("{v:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    } else {
        format!("{v:.4e}")
    }
}

pub(super) fn arrow(direction: &str) -> &'static str {
    match direction {
        "higher_is_better" => " ↑",
        "lower_is_better" => " ↓",
        _ => "",
    }
}

pub(super) fn metric_text(metric: &str, unit: &str, direction: &str) -> String {
    let arrow = arrow(direction);
    if unit.is_empty() || unit == metric {
        format!("{metric}{arrow}")
    } else {
        format!("{metric} ({unit}){arrow}")
    }
}

/// Whether the table has a q column (more than one row).
pub(super) fn shows_q(report: &Report) -> bool {
    report.rows.len() > 1
}

pub(super) fn headers(report: &Report) -> Vec<String> {
    let mut h: Vec<String> = [
        "workload", "metric", "variant", "n", "baseline", "variant", "effect", "CI", "p",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    h[4] = format!("{} (median)", report.baseline);
    h[5] = "variant (median)".into();
    h[7] = format!("{:.0}% CI", report.confidence * 100.0);
    if shows_q(report) {
        h.push("q".into());
    }
    h.push("MDE".into());
    h.push("verdict".into());
    h
}

pub(super) fn cells(r: &Row, with_q: bool) -> Vec<String> {
    let mut c = vec![
        if r.workload.is_empty() {
            "-".into()
        } else {
            r.workload.clone()
        },
        metric_text(&r.metric, &r.unit, r.direction),
        r.variant.clone(),
        if r.paired {
            format!("{} pairs", r.n_baseline)
        } else {
            format!("{}+{}", r.n_baseline, r.n_variant)
        },
        fmt_num(r.baseline_median),
        fmt_num(r.variant_median),
        fmt_pct(r.effect_pct),
        fmt_interval(r.ci_low_pct, r.ci_high_pct),
        fmt_p(r.p_value),
    ];
    if with_q {
        c.push(fmt_p(r.q_value));
    }
    c.push(fmt_mde(r.mde_pct));
    // A row whose arms were not interleaved carries the mark in its verdict.
    if r.warnings.iter().any(|w| w.kind() == "not_interleaved") {
        c.push(format!("{} (not interleaved)", r.verdict.label()));
    } else {
        c.push(r.verdict.label().into());
    }
    c
}

/// Warning lines: one per kind ([`crate::warnings::grouped`]), naming the rows it
/// applies to with each one's figure (the first eight, then a count), then the
/// leave-one-out lines.
pub(super) fn notes(report: &Report) -> Vec<String> {
    let mut placed = Vec::new();
    for r in &report.rows {
        let place = if r.workload.is_empty() {
            r.metric.clone()
        } else {
            format!("{} {}", r.workload, r.metric)
        };
        for w in &r.warnings {
            placed.push(crate::warnings::Placed {
                warning: w,
                place: place.clone(),
                variant: &r.variant,
            });
        }
    }
    let mut out = crate::warnings::grouped(&placed, Some(8));
    for r in &report.rows {
        let place = if r.workload.is_empty() {
            r.metric.clone()
        } else {
            format!("{} {}", r.workload, r.metric)
        };
        for l in &r.leave_one_out {
            out.push(leave_one_out_line(&place, &r.variant, l));
        }
    }
    out
}

pub(super) fn summary_lines(report: &Report) -> Vec<String> {
    report
        .summaries
        .iter()
        .map(|s| {
            let ci = match (s.ci_low_pct, s.ci_high_pct, s.method) {
                (Some(_), Some(_), Some("signed_rank_of_round_means")) => format!(
                    " {} ({:.0}% signed-rank interval of the {} rounds' geometric means)",
                    fmt_interval(s.ci_low_pct, s.ci_high_pct),
                    report.confidence * 100.0,
                    s.rounds.unwrap_or(0)
                ),
                (Some(_), Some(_), _) => format!(
                    " {} ({:.0}% bootstrap CI, {} resamples of whole rounds{})",
                    fmt_interval(s.ci_low_pct, s.ci_high_pct),
                    report.confidence * 100.0,
                    s.resamples.unwrap_or(0),
                    s.note.as_ref().map_or(String::new(), |n| format!("; {n}"))
                ),
                _ => s.note.as_ref().map_or(String::new(), |n| format!(" ({n})")),
            };
            format!(
                "{} {}: {:+.2}% over {} workloads{ci}{}",
                s.variant,
                metric_text(&s.metric, &s.unit, s.direction),
                s.effect_pct,
                s.workloads,
                s.verdict
                    .map_or(String::new(), |v| format!(": {}", v.label()))
            )
        })
        .collect()
}

/// Plain-text table, then the geomean summary and the warnings.
pub fn render_text(report: &Report) -> String {
    let with_q = shows_q(report);
    let head = headers(report);
    let ncol = head.len();
    let mut rows: Vec<Vec<String>> = Vec::with_capacity(report.rows.len() + 1);
    rows.push(head);
    rows.extend(report.rows.iter().map(|r| cells(r, with_q)));
    let widths: Vec<usize> = (0..ncol)
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = format!(
        "baseline: {}{}\n",
        report.baseline,
        report
            .margin_pct
            .map_or(String::new(), |m| format!("; equivalence margin ±{m}%"))
    );
    for r in &rows {
        let mut line = String::new();
        for (i, c) in r.iter().enumerate() {
            if i > 0 {
                line.push_str("  ");
            }
            let pad = " ".repeat(widths[i].saturating_sub(c.chars().count()));
            // Numbers (n .. MDE) are right-aligned; names and the verdict left-aligned.
            if (3..ncol - 1).contains(&i) {
                line.push_str(&pad);
                line.push_str(c);
            } else {
                line.push_str(c);
                line.push_str(&pad);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    if let Some(z) = all_zero_line(report) {
        out.push_str(&format!("{z}\n"));
    }
    let s = summary_lines(report);
    if !s.is_empty() {
        out.push_str("\ngeomean of ratios across workloads:\n");
        for l in s {
            out.push_str(&format!("  {l}\n"));
        }
    }
    let n = notes(report);
    if !n.is_empty() {
        out.push_str("\nwarnings:\n");
        for w in n {
            out.push_str(&format!("  {w}\n"));
        }
    }
    out
}

/// GitHub-flavoured Markdown table, then the geomean summary and the warnings as lists.
pub fn render_markdown(report: &Report) -> String {
    let with_q = shows_q(report);
    let mut out = format!("Baseline: **{}**\n\n", report.baseline);
    let mut head = headers(report);
    head[4] = "baseline (median)".into();
    out.push_str(&format!("| {} |\n", head.join(" | ")));
    out.push_str(&format!("|{}\n", "---|".repeat(head.len())));
    for r in &report.rows {
        let c: Vec<String> = cells(r, with_q)
            .iter()
            .map(|s| s.replace('|', "\\|"))
            .collect();
        out.push_str(&format!("| {} |\n", c.join(" | ")));
    }
    if let Some(z) = all_zero_line(report) {
        out.push_str(&format!("\n{z}\n"));
    }
    let s = summary_lines(report);
    if !s.is_empty() {
        out.push_str("\n**Geomean of ratios across workloads**\n\n");
        for l in s {
            out.push_str(&format!("- {l}\n"));
        }
    }
    let n = notes(report);
    if !n.is_empty() {
        out.push_str("\n**Warnings**\n\n");
        for w in n {
            out.push_str(&format!("- {w}\n"));
        }
    }
    out
}
