//! The comparison as data: the whole report as JSON, and one CSV row per comparison
//! (geomean summaries follow as rows whose workload is `geomean`).

use super::*;

/// JSON document of the whole report.
pub fn render_json(report: &Report) -> String {
    serde_json::to_string_pretty(report).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
        + "\n"
}

/// CSV, one row per comparison, raw numbers; geomean summaries follow as rows whose
/// workload is `geomean`.
pub fn render_csv(report: &Report) -> String {
    let mut out = String::from(
        "workload,metric,unit,direction,baseline,variant,n_baseline,n_variant,paired,\
         baseline_median,variant_median,effect_pct,ci_low_pct,ci_high_pct,p_value,q_value,\
         mde_pct,verdict,warnings\n",
    );
    let o = |v: Option<f64>| v.map_or(String::new(), |x| x.to_string());
    let mut push = |fields: &[String]| {
        out.push_str(&resplab_results::csv::record(fields));
        out.push('\n');
    };
    for r in &report.rows {
        let warnings: Vec<&str> = r.warnings.iter().map(|w| w.kind()).collect();
        push(&[
            r.workload.clone(),
            r.metric.clone(),
            r.unit.clone(),
            r.direction.to_string(),
            r.baseline.clone(),
            r.variant.clone(),
            r.n_baseline.to_string(),
            r.n_variant.to_string(),
            r.paired.to_string(),
            r.baseline_median.to_string(),
            r.variant_median.to_string(),
            o(r.effect_pct),
            o(r.ci_low_pct),
            o(r.ci_high_pct),
            o(r.p_value),
            o(r.q_value),
            o(r.mde_pct),
            r.verdict.label().to_string(),
            warnings.join(";"),
        ]);
    }
    for s in &report.summaries {
        push(&[
            "geomean".into(),
            s.metric.clone(),
            s.unit.clone(),
            s.direction.to_string(),
            report.baseline.clone(),
            s.variant.clone(),
            s.workloads.to_string(),
            s.workloads.to_string(),
            s.ci_low_pct.is_some().to_string(),
            String::new(),
            String::new(),
            s.effect_pct.to_string(),
            o(s.ci_low_pct),
            o(s.ci_high_pct),
            String::new(),
            String::new(),
            String::new(),
            s.verdict.map_or(String::new(), |v| v.label().to_string()),
            String::new(),
        ]);
    }
    out
}
