//! The calibration report: what `resplab calibrate` and `calibrate --validate` print,
//! and the page of `resplab report calibration:ID|latest` — the verdict, the budget as a
//! plot of predicted MDE against wall time (one line per trial length) with its table,
//! the error-rate checks of the newest `--validate` run of the host, and what calibrate
//! printed. Markdown (the plot is a file beside it, written by the caller) or one HTML
//! file with the plot inline.
//!
//! Input is the stored shape, [`resplab_results::calibration`]; nothing here reads the
//! store or writes files.

use crate::plot::PlotError;
use resplab_results::calibration::{secs_text, Calibration, Method, StoredCalibration, Validation};
use std::fmt::Write as _;
use std::path::Path;

/// A calibration's report page, before it is written as Markdown or HTML.
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    pub title: String,
    /// The verdict paragraph (Markdown emphasis).
    pub verdict: String,
    /// The budget plot (SVG) and its table's rows, for a calibration.
    pub budget: Option<(String, Vec<[String; 4]>)>,
    /// The error-rate checks shown, with the id of the run they come from.
    pub checks: Option<(i64, Validation)>,
    /// What calibrate printed.
    pub text: String,
}

/// The page of a stored calibration or `--validate` run (`db` is named in its text).
///
/// # Errors
/// The budget plot cannot be drawn.
pub fn page(stored: &StoredCalibration, db: &Path) -> Result<Page, PlotError> {
    Ok(match stored {
        StoredCalibration::Validation { id, validation: v } => Page {
            title: format!("Validation {id}: resplab serve on {}", v.hostname),
            verdict: if v.is_pass() {
                "Every error-rate check passed: on this machine the verdicts say what they claim."
                    .to_string()
            } else {
                "**An error-rate check failed**: on this machine, read verdicts with the failed check in mind (docs/calibrate.md says what each means and what to do)."
                    .to_string()
            },
            budget: None,
            checks: Some((*id, (**v).clone())),
            text: render_validation(v),
        },
        StoredCalibration::Calibration {
            id,
            calibration: cal,
            checks,
        } => Page {
            title: format!("Calibration {id}: {} on {}", cal.workload, cal.hostname),
            verdict: match &cal.biased {
                Some(why) => format!("**The A/A check failed: the set-up is biased.** {why}"),
                None => {
                    "The A/A check passed: the two copies of the same variant were not told apart."
                        .to_string()
                }
            },
            budget: Some(budget_plot(cal)?),
            checks: checks.as_ref().map(|(i, v)| (*i, (**v).clone())),
            text: render(cal, *id, db),
        },
    })
}

const NO_CHECKS: &str = "No `resplab calibrate --validate` run of this host is stored: run one to see the tool's error rates here.";

fn checks_intro(id: i64, v: &Validation) -> String {
    format!(
        "From `resplab calibrate --validate` (calibration {id}): {} rounds x {} trials per experiment against resplab serve, a true effect of {:.2} % for the power and coverage checks.",
        v.rounds,
        secs_text(v.trial_sec),
        v.true_effect_pct
    )
}

/// The page as Markdown; the budget plot is referenced as `{plot_dir}/budget.svg`.
pub fn markdown(p: &Page, plot_dir: &str) -> String {
    let mut md = format!("# {}\n\n{}\n\n", p.title, p.verdict);
    if let Some((_, plans)) = &p.budget {
        let _ = writeln!(
            md,
            "## Budget\n\n![predicted MDE against wall time]({plot_dir}/budget.svg)\n\n| rounds | trial | predicted MDE | wall time |\n|---:|---:|---:|---:|"
        );
        for r in plans {
            let _ = writeln!(md, "| {} | {} | {} | {} |", r[0], r[1], r[2], r[3]);
        }
        md.push('\n');
    }
    md.push_str("## Error-rate checks\n\n");
    match &p.checks {
        Some((id, v)) => {
            let _ = writeln!(
                md,
                "{}\n\n| {} |\n|---|---:|---:|---:|---:|---|",
                checks_intro(*id, v),
                VALIDATION_HEAD.join(" | ")
            );
            for r in validation_rows(v) {
                let _ = writeln!(md, "| {} |", r.join(" | "));
            }
            md.push('\n');
        }
        None => {
            let _ = writeln!(md, "{NO_CHECKS}\n");
        }
    }
    let _ = write!(md, "## What calibrate printed\n\n```text\n{}```\n", p.text);
    md
}

/// The page as one self-contained HTML file, the plot inline.
pub fn html(p: &Page) -> String {
    let esc = |t: &str| {
        t.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let cells = |tag: &str, r: &[String]| {
        r.iter()
            .map(|c| format!("<{tag}>{}</{tag}>", esc(c)))
            .collect::<String>()
    };
    let mut body = String::new();
    if let Some((svg, plans)) = &p.budget {
        let _ = write!(
            body,
            "<h2>Budget</h2>\n{svg}\n<table><tr><th>rounds</th><th>trial</th><th>predicted MDE</th><th>wall time</th></tr>"
        );
        for r in plans {
            let _ = write!(body, "<tr>{}</tr>", cells("td", r));
        }
        body.push_str("</table>\n");
    }
    body.push_str("<h2>Error-rate checks</h2>\n");
    match &p.checks {
        Some((id, v)) => {
            let head: Vec<String> = VALIDATION_HEAD.iter().map(|h| (*h).to_string()).collect();
            let _ = write!(
                body,
                "<p>{}</p>\n<table class=\"checks\"><tr>{}</tr>",
                esc(&checks_intro(*id, v)).replace('`', ""),
                cells("th", &head)
            );
            for r in validation_rows(v) {
                let _ = write!(body, "<tr>{}</tr>", cells("td", &r));
            }
            body.push_str("</table>\n");
        }
        None => {
            let _ = writeln!(body, "<p>{}</p>", esc(NO_CHECKS).replace('`', ""));
        }
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\"><title>{t}</title><style>body{{font-family:sans-serif;max-width:60em;margin:2em auto}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.2em .6em;text-align:right}}table.checks td:first-child{{text-align:left}}pre{{background:#f6f6f6;padding:1em;overflow-x:auto}}</style></head><body>\n<h1>{t}</h1>\n<p>{v}</p>\n{body}<h2>What calibrate printed</h2>\n<pre>{pre}</pre>\n</body></html>\n",
        t = esc(&p.title),
        v = esc(&p.verdict).replace("**", ""),
        pre = esc(&p.text),
    )
}

/// The line that opens a calibration: what is measured (`target`, `workload`), and its
/// A/A experiments as (trial length, rounds) within `budget` (as given).
pub fn announce_line(
    target: &str,
    workload: &str,
    steps: &[(std::time::Duration, u32)],
    budget: &str,
) -> String {
    format!(
        "resplab calibrate: A/A of {target}, workload {workload}, {} trial length(s) within {budget}: {}",
        steps.len(),
        steps
            .iter()
            .map(|(t, r)| format!("{r} rounds x {}", secs_text(t.as_secs_f64())))
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// One stored trial of a calibration's A/A experiment of `trial_sec` trials (`round`
/// from 0, of `rounds`).
pub fn trial_line(
    trial_sec: f64,
    round: u32,
    rounds: u32,
    variant: &str,
    primary: Option<f64>,
    valid: bool,
) -> String {
    format!(
        "  {} round {:>3}/{rounds}  {variant:<8} {}{}",
        secs_text(trial_sec),
        round + 1,
        primary.map_or("-".to_string(), |v| format!("{v:.1}")),
        if valid { "" } else { "  (invalid)" }
    )
}

/// What `resplab calibrate` prints: the noise table, the noise law, the budget table
/// and the A/A verdict, and where the calibration is stored (calibration `id` in `db`).
pub fn render(c: &Calibration, id: i64, db: &Path) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "calibration of {} on {}: workload {}, metric {}{}",
        c.target,
        c.hostname,
        c.workload,
        c.metric,
        match c.method {
            Method::Duet => ", duet rounds (both copies at once, CPU sets swapped between rounds)",
            Method::Rmit | Method::UntilDecided => "",
        }
    );
    noise_section(&mut o, c);
    if !c.table.is_empty() {
        budget_section(&mut o, c);
    }
    predictions_section(&mut o, c);
    let _ = writeln!(o);
    if let Some(note) = &c.budget_note {
        let _ = writeln!(o, "budget: {note}");
    }
    match &c.biased {
        Some(b) => {
            let _ = writeln!(o, "A/A: FINDING: {b}");
        }
        None => {
            let _ = writeln!(
                o,
                "A/A: no difference claimed between two runs of the same server, as it should be"
            );
        }
    }
    let _ = writeln!(
        o,
        "stored as calibration {id} in {}; `resplab experiment run` uses it for this workload on this host",
        db.display()
    );
    o
}

/// The noise table of each trial length, the drift warning and the fitted noise law.
fn noise_section(o: &mut String, c: &Calibration) {
    let _ = writeln!(
        o,
        "\nnoise (A/A: the same server as two variants, randomized interleaved rounds):"
    );
    let _ = writeln!(
        o,
        "  {:>7} {:>6} {:>8} {:>8} {:>11} {:>9} {:>7} {:>9}  A/A verdict",
        "trial", "rounds", "CV a", "CV b", "sd(ratio)", "robust", "lag-1", "outliers"
    );
    for n in &c.noise {
        let aa = match (n.aa_effect_pct, n.aa_ci_low_pct, n.aa_ci_high_pct) {
            (Some(e), Some(l), Some(h)) => format!("{} {e:+.2}% [{l:+.2}, {h:+.2}]", n.aa_verdict),
            _ => n.aa_verdict.clone(),
        };
        let _ = writeln!(
            o,
            "  {:>7} {:>6} {:>8} {:>8} {:>11} {:>9} {:>7} {:>9}  {aa}",
            secs_text(n.trial_sec),
            n.pairs,
            opt_pct(n.cv_a_pct),
            opt_pct(n.cv_b_pct),
            opt_pct(n.sd_log_ratio.map(|s| 100.0 * s)),
            opt_pct(n.robust_sd_log_ratio.map(|s| 100.0 * s)),
            n.lag1_ratio.map_or("-".into(), |x| format!("{x:+.2}")),
            if n.outlier_rounds.is_empty() {
                "-".to_string()
            } else {
                n.outlier_rounds
                    .iter()
                    .map(|r| (r + 1).to_string())
                    .collect::<Vec<_>>()
                    .join(",")
            }
        );
    }
    let drift: Vec<String> = c
        .noise
        .iter()
        .filter(|n| n.lag1_ratio.is_some_and(|x| x > 0.5))
        .map(|n| secs_text(n.trial_sec))
        .collect();
    if !drift.is_empty() {
        let _ = writeln!(
            o,
            "  drift: the paired ratios of consecutive rounds are correlated at {}; rounds are \
             not independent and intervals will be too narrow: a quieter machine or pinned CPUs",
            drift.join(", ")
        );
    }
    if c.noise_a.is_finite() {
        let scale = if c.schema_version >= 4 {
            "robust scale (sd without wild rounds)"
        } else if c.schema_version >= 2 {
            "robust scale (Qn)"
        } else {
            "sd(ratio)"
        };
        let _ = writeln!(
            o,
            "  noise law: {scale} = {:.3}% x (trial / 1 s)^-{:.2}; each trial costs {} beyond its measured time",
            100.0 * c.noise_a,
            c.noise_b,
            secs_text(c.overhead_sec)
        );
    }
    if let Some((a, b)) = c.classical_noise.filter(|(a, _)| a.is_finite()) {
        let _ = writeln!(
            o,
            "  the same law by the classical sd(ratio): {:.3}% x (trial / 1 s)^-{b:.2}{}",
            100.0 * a,
            if a > 1.25 * c.noise_a {
                " (outlying rounds inflate it; the plans below use the robust scale)"
            } else {
                ""
            }
        );
    }
}

/// What 10 and 30 minutes can detect with each method, by the law its verdict follows,
/// beside the classical law's figure for the same plan where that differs.
fn predictions_section(o: &mut String, c: &Calibration) {
    if c.predictions.is_empty() {
        return;
    }
    let _ = writeln!(
        o,
        "
what an experiment of a given wall time can detect here (80% power, best trial length):"
    );
    for p in &c.predictions {
        let within = secs_text(p.within_sec);
        match &p.plan {
            Some(plan) => {
                let _ = writeln!(
                    o,
                    "  {:<14} within {within:>8}: MDE {:.2}% ({} rounds x {} trials){}",
                    p.method.name(),
                    plan.mde_pct,
                    plan.rounds,
                    secs_text(plan.trial_sec),
                    p.classical_mde_pct
                        .filter(|m| (m - plan.mde_pct).abs() >= 0.005)
                        .map_or(String::new(), |m| format!("; by the classical sd {m:.2}%"))
                );
            }
            None => {
                let _ = writeln!(
                    o,
                    "  {:<14} within {within:>8}: no plan fits",
                    p.method.name()
                );
            }
        }
    }
}

/// The budget table (smallest detectable effect and wall time per rounds × trial length)
/// and the cheapest plan that reaches the target.
fn budget_section(o: &mut String, c: &Calibration) {
    let _ = writeln!(
        o,
        "\nbudget table: predicted smallest detectable effect (80% power, 95% confidence) and wall time of a 2-variant experiment"
    );
    let mut rounds: Vec<usize> = c.table.iter().map(|p| p.rounds).collect();
    rounds.sort_unstable();
    rounds.dedup();
    let mut secs: Vec<f64> = c.table.iter().map(|p| p.trial_sec).collect();
    secs.sort_by(f64::total_cmp);
    secs.dedup();
    let _ = write!(o, "  {:>7}", "trial");
    for r in &rounds {
        let _ = write!(o, " {:>16}", format!("{r} rounds"));
    }
    let _ = writeln!(o);
    for s in &secs {
        let _ = write!(o, "  {:>7}", secs_text(*s));
        for r in &rounds {
            let cell = c
                .table
                .iter()
                .find(|p| p.rounds == *r && p.trial_sec == *s)
                .map_or("-".to_string(), |p| {
                    format!("{:.2}% {:>6}", p.mde_pct, wall_text(p.wall_sec))
                });
            let _ = write!(o, " {cell:>16}");
        }
        let _ = writeln!(o);
    }
    match &c.cheapest {
        Some(p) => {
            let _ = writeln!(
                o,
                "  smallest budget for MDE <= {}%: {} rounds x {} trials, MDE {:.2}%, about {} for two variants",
                c.target_mde_pct,
                p.rounds,
                secs_text(p.trial_sec),
                p.mde_pct,
                secs_text(p.wall_sec)
            );
        }
        None => {
            let _ = writeln!(
                o,
                "  no plan in the table reaches MDE <= {}%: the noise is too large; pin CPUs, lengthen trials beyond the table or accept a larger effect",
                c.target_mde_pct
            );
        }
    }
}

/// Wall time in a table cell: `45s`, `2.4m`, `1.5h`.
fn wall_text(s: f64) -> String {
    if s < 99.5 {
        format!("{s:.0}s")
    } else if s < 5940.0 {
        format!("{:.1}m", s / 60.0)
    } else {
        format!("{:.1}h", s / 3600.0)
    }
}

fn opt_pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |x| format!("{x:.2}%"))
}

/// What `resplab calibrate --validate` prints: each error-rate check with its interval,
/// and the coordinated-omission quantiles.
pub fn render_validation(v: &Validation) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "validation with resplab serve, {} on {}: {} rounds x {} trials per experiment; A/A noise sd(ratio) {:.3}%{}, predicted MDE {:.2}% (the true effect of the slowdown on {} is {:+.2}%)",
        resplab_results::calibration::Sought {
            method: v.method,
            rule: v.stopping_rule(),
        }
        .describe(),
        v.metric,
        if v.method == Method::UntilDecided { "at most " } else { "" }.to_string() + &v.rounds.to_string(),
        secs_text(v.trial_sec),
        100.0 * v.sd_log_ratio,
        v.robust_sd_log_ratio
            .map_or(String::new(), |r| format!(", robust {:.3}%", 100.0 * r)),
        v.predicted_mde_pct,
        v.metric,
        v.true_effect_pct
    );
    for c in [&v.false_positives, &v.power, &v.coverage] {
        let _ = writeln!(
            o,
            "  {:<16} {:>3}/{:<3} = {:>5.1}%  95% CI [{:.1}%, {:.1}%]  nominal {:.0}%  {}  ({})",
            c.name,
            c.hits,
            c.k,
            100.0 * c.rate,
            100.0 * c.ci_low,
            100.0 * c.ci_high,
            100.0 * c.nominal,
            if c.pass { "PASS" } else { "FAIL" },
            c.detail
        );
    }
    let _ = writeln!(
        o,
        "  (power used --slowdown {:.3}% in the second server: a true effect of {:.2}%)",
        v.slowdown_pct, v.true_effect_pct
    );
    for line in [drift_line(v), expected_power_line(v)]
        .into_iter()
        .flatten()
    {
        let _ = writeln!(o, "  {line}");
    }
    for (q, m, e, pass) in &v.coordinated_omission {
        let _ = writeln!(
            o,
            "  coordinated omission {q}: measured {m:.1} ms, analytic {e:.1} ms (±10%)  {}",
            if *pass { "PASS" } else { "FAIL" }
        );
    }
    let _ = writeln!(
        o,
        "the {} experiments are stored (calibrate-*-validate-*); exit code 0 when every check passes, 1 otherwise",
        v.experiments.len()
    );
    o
}

/// The noise of a validation's slowed experiments beside its A/A experiments', and when
/// the two differ by more than [`NOISE_DRIFT_BAND`] allows, what that does to the power
/// check; `None` for a validation stored before the slowed noise was kept.
pub fn drift_line(v: &Validation) -> Option<String> {
    let slowed = v.slowed_sd_log_ratio?;
    let drift = v.noise_drift()?;
    let mut line = format!(
        "noise of the slowed experiments: sd(ratio) {:.3}%, against {:.3}% in the A/A experiments the MDE was predicted from",
        100.0 * slowed,
        100.0 * v.sd_log_ratio
    );
    let (low, high) = resplab_results::calibration::NOISE_DRIFT_BAND;
    if !(low..=high).contains(&drift) {
        line.push_str(&format!(
            "; the noise changed by a factor of {drift:.2} between them, so the power check measured that change as well as the prediction (power {} than the prediction's)",
            if drift > 1.0 { "lower" } else { "higher" }
        ));
    }
    Some(line)
}

/// The power the slowed experiments' own noise predicts beside the power measured, and
/// whether the measured power's interval holds it: when it does and the power check
/// failed, the prediction was sound for the noise that followed it, and what failed is
/// that the noise changed; when it does not, the verdict's power differs from the
/// formula's. `None` for a validation stored before the expectation was kept.
pub fn expected_power_line(v: &Validation) -> Option<String> {
    let e = v.expected_power?;
    let p = &v.power;
    let holds = p.ci_low <= e && e <= p.ci_high;
    let mut line = format!(
        "power the slowed experiments' own noise predicts at the {:.2}% effect: {:.1} %; the measured {:.1} % [{:.1} %, {:.1} %] {}",
        v.true_effect_pct,
        100.0 * e,
        100.0 * p.rate,
        100.0 * p.ci_low,
        100.0 * p.ci_high,
        if holds { "holds it" } else { "does not hold it" }
    );
    match (holds, p.pass) {
        (true, false) => line.push_str(
            ": the prediction is right for the noise the slowed experiments had, and the power check failed because the noise changed after the MDE was predicted",
        ),
        (false, _) => line.push_str(
            ": the verdict's power at this noise is not what the MDE's formula says",
        ),
        (true, true) => {}
    }
    Some(line)
}

/// The error-rate checks of a validation as table rows: check, hits of K, rate, 95 %
/// interval, nominal, result; then the coordinated-omission quantiles.
fn validation_rows(v: &Validation) -> Vec<[String; 6]> {
    let mut rows: Vec<[String; 6]> = [&v.false_positives, &v.power, &v.coverage]
        .into_iter()
        .map(|c| {
            [
                c.name.clone(),
                format!("{}/{}", c.hits, c.k),
                format!("{:.1} %", 100.0 * c.rate),
                format!("[{:.1} %, {:.1} %]", 100.0 * c.ci_low, 100.0 * c.ci_high),
                format!("{:.0} %", 100.0 * c.nominal),
                if c.pass { "PASS" } else { "FAIL" }.to_string(),
            ]
        })
        .collect();
    for (q, m, e, pass) in &v.coordinated_omission {
        rows.push([
            format!("coordinated omission {q}"),
            String::new(),
            format!("{m:.1} ms"),
            String::new(),
            format!("{e:.1} ms ± 10 %"),
            if *pass { "PASS" } else { "FAIL" }.to_string(),
        ]);
    }
    rows
}

const VALIDATION_HEAD: [&str; 6] = [
    "check",
    "hits",
    "rate / measured",
    "95 % interval",
    "nominal / analytic",
    "result",
];

/// The budget of a calibration as an SVG plot of predicted MDE against wall time (one
/// line per trial length) and its table's rows (rounds, trial, MDE, wall time).
pub fn budget_plot(cal: &Calibration) -> Result<(String, Vec<[String; 4]>), PlotError> {
    let mut lengths: Vec<f64> = cal.table.iter().map(|r| r.trial_sec).collect();
    lengths.sort_by(f64::total_cmp);
    lengths.dedup();
    let series: Vec<crate::plot::Series> = lengths
        .iter()
        .enumerate()
        .map(|(i, t)| crate::plot::Series {
            name: format!("trials of {}", secs_text(*t)),
            index: i,
            points: cal
                .table
                .iter()
                .filter(|r| r.trial_sec == *t)
                .map(|r| (r.wall_sec / 60.0, r.mde_pct))
                .collect(),
        })
        .collect();
    let svg = crate::plot::timeline::lines(
        "budget",
        &series,
        "expected wall time of the experiment (min)",
        "predicted MDE at 80 % power (%)",
    )?;
    let rows = cal
        .table
        .iter()
        .map(|r| {
            [
                r.rounds.to_string(),
                secs_text(r.trial_sec),
                format!("{:.2} %", r.mde_pct),
                secs_text(r.wall_sec),
            ]
        })
        .collect();
    Ok((svg, rows))
}

#[cfg(test)]
mod tests {
    use super::*;
    use resplab_results::calibration::{Noise, PlanRow, Prediction};

    use resplab_results::fixture::validation;

    #[test]
    fn a_validation_sets_the_power_its_own_noise_predicts_beside_the_power_found() {
        let mut v = validation(Some(0.08));
        assert_eq!(expected_power_line(&v), None);
        // Measured 75 % [60 %, 87 %], passing: an expectation inside says nothing more.
        v.expected_power = Some(0.7);
        let inside = expected_power_line(&v).unwrap();
        assert!(
            inside.contains("predicts at the -4.80% effect: 70.0 %; the measured 75.0 % [60.0 %, 87.0 %] holds it"),
            "{inside}"
        );
        assert!(inside.ends_with("holds it"), "{inside}");
        // A failed power check whose interval holds the expectation: the noise changed.
        v.power.pass = false;
        let drifted = expected_power_line(&v).unwrap();
        assert!(drifted.contains("because the noise changed"), "{drifted}");
        // An expectation outside the interval: the formula is in question.
        v.expected_power = Some(0.95);
        let outside = expected_power_line(&v).unwrap();
        assert!(outside.contains("does not hold it"), "{outside}");
        assert!(
            outside.contains("not what the MDE's formula says"),
            "{outside}"
        );
        assert!(render_validation(&v).contains(&outside));
    }

    #[test]
    fn a_validation_says_when_its_noise_changed_between_its_halves() {
        assert_eq!(drift_line(&validation(None)), None);
        assert!(!render_validation(&validation(None)).contains("slowed experiments"));
        let steady = drift_line(&validation(Some(0.055))).unwrap();
        assert!(
            steady.contains("sd(ratio) 5.500%, against 5.000%"),
            "{steady}"
        );
        assert!(!steady.contains("changed"), "{steady}");
        let noisier = drift_line(&validation(Some(0.08))).unwrap();
        assert!(noisier.contains("a factor of 1.60"), "{noisier}");
        assert!(
            noisier.contains("power lower than the prediction's"),
            "{noisier}"
        );
        let quieter = drift_line(&validation(Some(0.035))).unwrap();
        assert!(quieter.contains("power higher"), "{quieter}");
        assert!(render_validation(&validation(Some(0.08))).contains(&noisier));
    }

    fn calibration() -> Calibration {
        let noise = Noise {
            trial_sec: 0.5,
            experiment: "calibrate-1-500ms".into(),
            rounds: 20,
            pairs: 20,
            median: 1000.0,
            cv_a_pct: Some(3.0),
            cv_b_pct: Some(3.1),
            sd_log_ratio: Some(0.06),
            robust_sd_log_ratio: Some(0.03),
            lag1_ratio: Some(0.1),
            lag1_a: None,
            lag1_b: None,
            outlier_rounds: vec![7],
            wall_sec: 30.0,
            overhead_sec: 0.3,
            aa_effect_pct: None,
            aa_ci_low_pct: None,
            aa_ci_high_pct: None,
            aa_p_value: None,
            aa_mde_pct: None,
            aa_verdict: "NO DIFFERENCE".into(),
        };
        let plan = |mde_pct| PlanRow {
            rounds: 300,
            trial_sec: 0.5,
            mde_pct,
            wall_sec: 480.0,
        };
        Calibration {
            schema_version: 2,
            hostname: "h".into(),
            target: "t".into(),
            workload: "w".into(),
            workload_key: "k".into(),
            metric: "ops_per_sec".into(),
            warmup_sec: 0.2,
            noise: vec![noise],
            noise_a: 0.03,
            noise_b: 0.0,
            classical_noise: Some((0.06, 0.0)),
            overhead_sec: 0.3,
            table: Vec::new(),
            target_mde_pct: 1.0,
            cheapest: None,
            biased: None,
            budget_note: None,
            method: Method::Rmit,
            predictions: vec![
                Prediction {
                    method: Method::Rmit,
                    within_sec: 600.0,
                    plan: Some(plan(0.61)),
                    classical_mde_pct: Some(1.22),
                },
                Prediction {
                    method: Method::UntilDecided,
                    within_sec: 1800.0,
                    plan: None,
                    classical_mde_pct: None,
                },
            ],
        }
    }

    /// The robust scale stands beside the sd, the law says which it follows and that the
    /// classical one is inflated, and each method's prediction is a line.
    #[test]
    fn the_robust_scale_and_the_predictions_are_shown() {
        let text = render(&calibration(), 3, Path::new("r.db"));
        assert!(text.contains("sd(ratio)    robust"), "{text}");
        assert!(text.contains("6.00%     3.00%"), "{text}");
        assert!(
            text.contains("noise law: robust scale (Qn) = 3.000%"),
            "{text}"
        );
        assert!(text.contains("the same law by the classical sd(ratio): 6.000% x (trial / 1 s)^-0.00 (outlying rounds inflate it"), "{text}");
        assert!(
            text.contains("rmit           within 10.0 min: MDE 0.61% (300 rounds x 0.5 s trials); by the classical sd 1.22%"),
            "{text}"
        );
        assert!(
            text.contains("until-decided  within 30.0 min: no plan fits"),
            "{text}"
        );
    }

    #[test]
    fn progress_lines() {
        use std::time::Duration;
        let steps = [
            (Duration::from_millis(500), 12),
            (Duration::from_secs(1), 6),
        ];
        let line = announce_line("redis-server", "set", &steps, "5m");
        assert!(line.starts_with("resplab calibrate: A/A of redis-server, workload set, 2 trial length(s) within 5m: 12 rounds x "), "{line}");
        assert!(line.contains(", 6 rounds x "), "{line}");
        let t = trial_line(1.0, 2, 6, "a", Some(10.26), false);
        assert!(t.ends_with(" round   3/6  a        10.3  (invalid)"), "{t}");
    }
}
