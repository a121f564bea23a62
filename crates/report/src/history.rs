//! What `resplab history` prints: a series per workload × metric, segment by segment,
//! with its change points marked — as text, CSV (one row per point) or JSON — and the
//! page of `resplab report history:NAME` (Markdown or HTML, a plot per line).
//!
//! Input is a [`HistoryAnalysis`] from `resplab_results::history`; nothing is computed
//! here but the words and the layout.

use crate::plot::{self, PlotError};
use resplab_results::csv;
use resplab_results::history::{ChangeAt, Confirmation, HistoryAnalysis, HistoryLine, Segment};
use std::fmt::Write as _;

/// The analysis as text: a header, then for each line its points with the change points
/// marked where a new level starts, and each segment boundary explained.
pub fn text(a: &HistoryAnalysis) -> String {
    let mut out = format!(
        "history {}: {} points; change points by E-Divisive means, permutation test at {} % \
         significance\n",
        a.series,
        a.points,
        a.significance * 100.0
    );
    if a.lines.is_empty() {
        out.push_str("no values of that metric in this series\n");
    }
    for line in &a.lines {
        out.push('\n');
        line_text(&mut out, line, a.min_segment);
    }
    out
}

fn line_text(out: &mut String, line: &HistoryLine, min_segment: usize) {
    let unit = if line.unit.is_empty() {
        String::new()
    } else {
        format!("{}, ", line.unit)
    };
    let _ = writeln!(
        out,
        "{} ({unit}{}): {} segment{}",
        format!("{} {}", line.workload, line.metric).trim(),
        line.direction.replace('_', " "),
        line.segments.len(),
        if line.segments.len() == 1 { "" } else { "s" }
    );
    for (s, seg) in line.segments.iter().enumerate() {
        if let Some(why) = &seg.starts_because {
            let _ = writeln!(
                out,
                "  -- segment {}: {why}; not compared with the points before --",
                s + 1
            );
        }
        segment_text(out, seg);
        if seg.points.len() < 2 * min_segment {
            let _ = writeln!(
                out,
                "  ({} point{} in this segment: a change point needs {} on each side)",
                seg.points.len(),
                if seg.points.len() == 1 { "" } else { "s" },
                min_segment
            );
        }
    }
}

fn segment_text(out: &mut String, seg: &Segment) {
    for (i, p) in seg.points.iter().enumerate() {
        let commit = p.commit.as_deref().unwrap_or("-");
        let _ = write!(
            out,
            "  {:>12}  {}  {:>14}",
            commit,
            utc(p.measured_at_unix_ms),
            number(p.value)
        );
        if let Some(c) = seg.change_points.iter().find(|c| c.index == i) {
            let _ = write!(out, "  <- {}", change_words(c));
        }
        out.push('\n');
    }
}

/// `regression −10.0 % [−10.4, −9.6] p=0.005 (c17 → c18, mean 98150 → 88120) —
/// unconfirmed`, or with the A/B's verdict (`— confirmed by A/B: …`) once
/// `--confirm` has run it.
pub fn change_words(c: &ChangeAt) -> String {
    let kind = match c.is_regression {
        Some(true) => "regression",
        Some(false) => "improvement",
        None => "shift",
    };
    let status = c
        .confirmation
        .as_ref()
        .map_or("unconfirmed".to_string(), |k| k.words());
    format!(
        "{kind} {:+.1} % [{:+.1}, {:+.1}] p={:.3} ({} → {}, mean {} → {}) — {status}",
        c.effect_pct,
        c.ci_low_pct,
        c.ci_high_pct,
        c.p_value,
        c.commit_before.as_deref().unwrap_or("-"),
        c.commit_after.as_deref().unwrap_or("-"),
        number(c.mean_before),
        number(c.mean_after)
    )
}

/// The CSV header of [`csv_rows`].
pub const CSV_HEADER: &[&str] = &[
    "series",
    "workload",
    "metric",
    "unit",
    "direction",
    "segment",
    "segment_starts_because",
    "point_id",
    "commit",
    "measured_at_unix_ms",
    "value",
    "change",
    "effect_pct",
    "ci_low_pct",
    "ci_high_pct",
    "p_value",
    "confirmation",
    "ab_effect_pct",
    "ab_ci_low_pct",
    "ab_ci_high_pct",
    "ab_experiment",
];

/// One CSV row per point of every line; the change columns are filled on the first point
/// of each new level, with its confirmation (`confirmed`, `not confirmed` or
/// `unconfirmed`) and the A/B's effect when it has one.
pub fn csv_rows(a: &HistoryAnalysis) -> String {
    let mut out = csv::record(CSV_HEADER) + "\n";
    for line in &a.lines {
        for (s, seg) in line.segments.iter().enumerate() {
            for (i, p) in seg.points.iter().enumerate() {
                let change = seg.change_points.iter().find(|c| c.index == i);
                let num =
                    |f: fn(&ChangeAt) -> f64| change.map_or(String::new(), |c| f(c).to_string());
                let fields = [
                    a.series.clone(),
                    line.workload.clone(),
                    line.metric.clone(),
                    line.unit.clone(),
                    line.direction.clone(),
                    (s + 1).to_string(),
                    if i == 0 {
                        seg.starts_because.clone().unwrap_or_default()
                    } else {
                        String::new()
                    },
                    p.id.to_string(),
                    p.commit.clone().unwrap_or_default(),
                    p.measured_at_unix_ms.to_string(),
                    p.value.to_string(),
                    change.map_or(String::new(), |c| {
                        match c.is_regression {
                            Some(true) => "regression",
                            Some(false) => "improvement",
                            None => "shift",
                        }
                        .to_string()
                    }),
                    num(|c| c.effect_pct),
                    num(|c| c.ci_low_pct),
                    num(|c| c.ci_high_pct),
                    num(|c| c.p_value),
                    change.map_or(String::new(), |c| {
                        match &c.confirmation {
                            Some(k) if k.confirmed => "confirmed",
                            Some(_) => "not confirmed",
                            None => "unconfirmed",
                        }
                        .to_string()
                    }),
                    ab(change, |k| Some(k.effect_pct)),
                    ab(change, |k| k.ci_low_pct),
                    ab(change, |k| k.ci_high_pct),
                    change
                        .and_then(|c| c.confirmation.as_ref())
                        .map_or(String::new(), |k| k.experiment.clone()),
                ];
                out.push_str(&csv::record(&fields));
                out.push('\n');
            }
        }
    }
    out
}

/// A number of a change point's confirmation, or an empty field.
fn ab(change: Option<&ChangeAt>, f: fn(&Confirmation) -> Option<f64>) -> String {
    change
        .and_then(|c| c.confirmation.as_ref())
        .and_then(f)
        .map_or(String::new(), |v| v.to_string())
}

/// The analysis as pretty JSON.
pub fn json(a: &HistoryAnalysis) -> String {
    serde_json::to_string_pretty(a).unwrap_or_default() + "\n"
}

/// The report page of a history as Markdown, each line's plot a file in `plot_dir`:
/// the text and the `(file name, SVG)` of every plot.
///
/// # Errors
/// [`PlotError`] when a plot cannot be drawn.
pub fn markdown(
    a: &HistoryAnalysis,
    plot_dir: &str,
) -> Result<(String, Vec<(String, String)>), PlotError> {
    let mut md = format!(
        "# History {}

{}
",
        a.series,
        intro(a)
    );
    let mut files = Vec::new();
    for (i, line) in a.lines.iter().enumerate() {
        let name = format!(
            "{:02}-{}.svg",
            i + 1,
            file_safe(&format!("{}-{}", line.workload, line.metric))
        );
        let _ = write!(
            md,
            "\n## {}\n\n![{}]({plot_dir}/{name})\n\n",
            line_title(line),
            line_title(line)
        );
        for note in line_notes(line) {
            let _ = writeln!(md, "- {note}");
        }
        files.push((name, plot::history::render(line)?));
    }
    Ok((md, files))
}

/// The report page of a history as one self-contained HTML file, plots inline.
///
/// # Errors
/// [`PlotError`] when a plot cannot be drawn.
pub fn html(a: &HistoryAnalysis) -> Result<String, PlotError> {
    let esc = crate::doc::html::escape;
    let mut body = String::new();
    for line in &a.lines {
        let _ = write!(
            body,
            "<h2>{}</h2>\n{}\n<ul>",
            esc(&line_title(line)),
            plot::history::render(line)?
        );
        for note in line_notes(line) {
            let _ = write!(body, "<li>{}</li>", esc(&note));
        }
        body.push_str("</ul>\n");
    }
    let title = esc(&format!("History {}", a.series));
    Ok(format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\"><title>{title}</title><style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}</style></head><body>\n<h1>{title}</h1>\n<p>{}</p>\n{body}</body></html>\n",
        esc(&intro(a))
    ))
}

fn intro(a: &HistoryAnalysis) -> String {
    format!(
        "{} points. Change points by E-Divisive means with a permutation test at {} % \
         significance (a flat series of independent points shows a false one that often); \
         dashed rules mark them, the horizontal strokes are the mean of each level, and a \
         grey rule starts a segment measured on another host or configuration, never \
         compared with the points before it.",
        a.points,
        a.significance * 100.0
    )
}

fn line_title(line: &HistoryLine) -> String {
    format!("{} {}", line.workload, line.metric)
        .trim()
        .to_string()
}

fn line_notes(line: &HistoryLine) -> Vec<String> {
    let mut notes = Vec::new();
    let mut first = 1;
    for (s, seg) in line.segments.iter().enumerate() {
        if let Some(why) = &seg.starts_because {
            notes.push(format!("segment {} from point {first}: {why}", s + 1));
        }
        for c in &seg.change_points {
            notes.push(format!("point {}: {}", first + c.index, change_words(c)));
        }
        first += seg.points.len();
    }
    if notes.is_empty() {
        notes.push("no change point".into());
    }
    notes
}

fn file_safe(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn number(v: f64) -> String {
    if v.abs() >= 1000.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.4}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}

/// `2026-11-25 19:00` (UTC) of Unix milliseconds.
fn utc(unix_ms: i64) -> String {
    let secs = unix_ms.div_euclid(1000);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = resplab_results::date::civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}

/// The line that opens the A/B confirming a change point of `workload` × `metric`
/// (`effect_pct` in the history) between two commits, run as experiment `experiment`
/// until decided within `max_time` (as given).
pub fn confirming_line(
    workload: &str,
    metric: &str,
    effect_pct: f64,
    commits: (&str, &str),
    experiment: &str,
    max_time: &str,
) -> String {
    format!(
        "confirming {workload} {metric} {effect_pct:+.1} % ({} → {}): A/B `{experiment}`, until decided within {max_time}",
        commits.0, commits.1
    )
}

/// One stored trial of a confirming A/B (`round` from 0).
pub fn confirm_trial_line(
    round: u32,
    variant: &str,
    metric: &str,
    primary: Option<f64>,
    valid: bool,
) -> String {
    format!(
        "  round {} {variant}: {metric} {}{}",
        round + 1,
        primary.map_or("-".to_string(), |v| format!("{v:.1}")),
        if valid { "" } else { " (invalid)" }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use resplab_results::history::{analyse, TrackedPoint, TrackedValue};
    use resplab_stats::changepoint::ChangePointConfig;

    fn analysis() -> HistoryAnalysis {
        let points: Vec<TrackedPoint> = (0..24)
            .map(|i| TrackedPoint {
                id: i + 1,
                measured_at_unix_ms: 1_764_097_200_000 + 86_400_000 * i,
                commit: Some(format!("c{i:02}")),
                host_fingerprint: if i < 20 { "a" } else { "b" }.into(),
                host: serde_json::Value::Null,
                config_fingerprint: "c".into(),
                tags: Vec::new(),
                source: "t".into(),
                values: vec![TrackedValue {
                    workload: "GET".into(),
                    metric: "p99_us".into(),
                    unit: "us".into(),
                    direction: "lower_is_better".into(),
                    value: if i < 10 { 100.0 } else { 125.0 } + (i % 3) as f64,
                    trials: 1,
                }],
            })
            .collect();
        analyse("nightly", &points, None, &ChangePointConfig::default()).unwrap()
    }

    #[test]
    fn text_marks_the_change_and_the_new_host() {
        let t = text(&analysis());
        assert!(t.starts_with("history nightly: 24 points;"), "{t}");
        assert!(
            t.contains("GET p99_us (us, lower is better): 2 segments"),
            "{t}"
        );
        assert!(t.contains("2025-11-25 19:00"), "{t}");
        let marked: Vec<&str> = t.lines().filter(|l| l.contains("<- ")).collect();
        assert_eq!(marked.len(), 1, "{t}");
        assert!(
            marked[0].contains("c10") && marked[0].contains("regression +"),
            "{t}"
        );
        assert!(marked[0].contains("(c09 → c10"), "{t}");
        assert!(
            t.contains("-- segment 2: measured on another host; not compared"),
            "{t}"
        );
    }

    #[test]
    fn csv_has_one_row_per_point_and_the_change_on_its_row() {
        let c = csv_rows(&analysis());
        let rows: Vec<&str> = c.lines().collect();
        assert_eq!(rows.len(), 25);
        assert!(rows[0].starts_with("series,workload,metric"));
        assert!(
            rows[11].contains(",c10,") && rows[11].contains(",regression,"),
            "{c}"
        );
        assert!(rows[21].contains("measured on another host"), "{c}");
        let json: serde_json::Value = serde_json::from_str(&json(&analysis())).unwrap();
        let (md, files) = markdown(&analysis(), "plots").unwrap();
        assert!(
            md.contains("![GET p99_us](plots/01-GET-p99_us.svg)"),
            "{md}"
        );
        assert!(md.contains("- point 11: regression +"), "{md}");
        assert!(
            md.contains("- segment 2 from point 21: measured on another host"),
            "{md}"
        );
        assert_eq!(files.len(), 1);
        assert!(
            files[0].1.starts_with("<svg") && files[0].1.contains("segment 2"),
            "{}",
            files[0].1
        );
        let page = html(&analysis()).unwrap();
        assert!(
            page.contains("<h2>GET p99_us</h2>") && page.contains("<svg"),
            "{page}"
        );
        assert_eq!(
            json["lines"][0]["segments"][0]["change_points"][0]["index"],
            10
        );
        assert!(json["lines"][0]["segments"][0]["change_points"][0]["confirmation"].is_null());
    }

    #[test]
    fn a_confirmation_shows_in_text_csv_and_json() {
        let mut a = analysis();
        assert!(
            text(&a).contains("mean 100.9 → 126) — unconfirmed"),
            "{}",
            text(&a)
        );
        let (_, dashed) = markdown(&a, "p").unwrap();
        let c = Confirmation {
            series: "nightly".into(),
            workload: "GET".into(),
            metric: "p99_us".into(),
            commit_before: "c09".into(),
            commit_after: "c10".into(),
            point_id: 11,
            experiment: "confirm-x".into(),
            confirmed: true,
            decision: "higher".into(),
            effect_pct: 24.5,
            ci_low_pct: Some(20.0),
            ci_high_pct: Some(29.0),
            rounds: 8,
            recorded_at_unix_ms: 0,
        };
        a.attach(&[c]);
        let t = text(&a);
        assert!(
            t.contains("— confirmed by A/B: +24.5 % [+20.0, +29.0], 8 rounds (db:confirm-x)"),
            "{t}"
        );
        let rows = csv_rows(&a);
        let row = rows.lines().nth(11).unwrap();
        assert!(row.ends_with(",confirmed,24.5,20,29,confirm-x"), "{row}");
        let json: serde_json::Value = serde_json::from_str(&json(&a)).unwrap();
        let k = &json["lines"][0]["segments"][0]["change_points"][0]["confirmation"];
        assert_eq!(k["decision"], "higher");
        let (md, solid) = markdown(&a, "p").unwrap();
        assert!(md.contains("— confirmed by A/B"), "{md}");
        assert_ne!(
            solid[0].1, dashed[0].1,
            "a confirmed change point is drawn solid"
        );
    }

    #[test]
    fn confirmation_progress_lines() {
        assert_eq!(
            confirming_line("get", "ops_per_sec", -12.34, ("a1", "b2"), "confirm-x", "10m"),
            "confirming get ops_per_sec -12.3 % (a1 → b2): A/B `confirm-x`, until decided within 10m"
        );
        assert_eq!(
            confirm_trial_line(1, "b2", "ops_per_sec", Some(5.54), false),
            "  round 2 b2: ops_per_sec 5.5 (invalid)"
        );
        assert_eq!(
            confirm_trial_line(0, "a1", "m", None, true),
            "  round 1 a1: m -"
        );
    }
}
