//! What `resplab calibrate` found, as it is stored (the `calibrations` table's JSON) and
//! printed: the noise of an A/A experiment at each trial length, the noise law, the
//! budget table and, for `--validate`, the tool's measured error rates.
//!
//! The types are plain data: `resplab-experiment` measures them, `resplab-report` renders
//! them. [`CALIBRATION_SCHEMA_VERSION`] changes whenever a field changes meaning or goes
//! away; a row stored before the version was written reads as version 1.

pub use resplab_stats::sequential::UntilRule;
use serde::{Deserialize, Serialize};

/// The version of [`Calibration`] and [`Validation`] this build writes. Version 2: the
/// noise law and the budget table are fitted to the robust scale of the per-round log
/// ratio (Qn), no longer to its standard deviation; predictions per method and the
/// validation's method and metric were added. Version 3: the duet method (a calibration
/// says which method's noise it measured), and a validation of runs until decided keeps
/// its stopping rule. Version 4: the robust scale is the standard deviation of the
/// rounds that are not wild (`resplab_stats::scale::clipped_sd`), no longer Qn, and
/// predictions of runs until decided follow the classical law.
pub const CALIBRATION_SCHEMA_VERSION: u32 = 4;

/// The `workload_key` under which `--validate` results are stored in the calibrations
/// table: no workload's fingerprint, so no experiment takes one for its noise.
pub const VALIDATION_KEY: &str = "validate:resplab-serve";

fn first_version() -> u32 {
    1
}

fn throughput() -> String {
    "ops_per_sec".into()
}

/// The noise at one trial length.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Noise {
    pub trial_sec: f64,
    pub experiment: String,
    pub rounds: u32,
    /// Rounds in which both arms have a counted trial.
    pub pairs: usize,
    /// Median of the metric over every counted trial.
    pub median: f64,
    /// Per-trial coefficient of variation of each arm, percent.
    pub cv_a_pct: Option<f64>,
    pub cv_b_pct: Option<f64>,
    /// Standard deviation of the per-round log ratio.
    pub sd_log_ratio: Option<f64>,
    /// Its robust scale: from schema version 4 the standard deviation of the rounds that
    /// are not wild (`resplab_stats::scale::clipped_sd`), in versions 2 and 3
    /// Rousseeuw and Croux's Qn. What the noise law and the predictions of fixed and duet
    /// rounds use, so that one outlying round does not inflate them. Absent in rows stored
    /// before schema version 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robust_sd_log_ratio: Option<f64>,
    /// Lag-1 autocorrelation of the per-round log ratios (rounds in order) and of each
    /// arm's values in run order.
    pub lag1_ratio: Option<f64>,
    pub lag1_a: Option<f64>,
    pub lag1_b: Option<f64>,
    /// Rounds whose log ratio is more than 3.5 robust sd from the median.
    pub outlier_rounds: Vec<u32>,
    /// Wall time of the experiment and the cost of a trial beyond its measured time.
    pub wall_sec: f64,
    pub overhead_sec: f64,
    /// The A/A comparison (a-again vs a).
    pub aa_effect_pct: Option<f64>,
    pub aa_ci_low_pct: Option<f64>,
    pub aa_ci_high_pct: Option<f64>,
    pub aa_p_value: Option<f64>,
    pub aa_mde_pct: Option<f64>,
    pub aa_verdict: String,
}

/// One plan of the budget table.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq)]
pub struct PlanRow {
    pub rounds: usize,
    pub trial_sec: f64,
    pub mde_pct: f64,
    pub wall_sec: f64,
}

/// What a calibration found; stored as the `calibrations` row's JSON.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Calibration {
    /// Always [`CALIBRATION_SCHEMA_VERSION`] when written by this build.
    #[serde(default = "first_version")]
    pub schema_version: u32,
    pub hostname: String,
    pub target: String,
    pub workload: String,
    pub workload_key: String,
    pub metric: String,
    pub warmup_sec: f64,
    pub noise: Vec<Noise>,
    /// s_d(T) = a·T^(−b), fitted to the robust scale of each length (to the standard
    /// deviation before schema version 2).
    pub noise_a: f64,
    pub noise_b: f64,
    /// The same law fitted to the classical standard deviations, shown beside it (NaN
    /// when nothing was fitted; absent before schema version 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classical_noise: Option<(f64, f64)>,
    /// Median cost of a trial beyond its measured time, seconds.
    pub overhead_sec: f64,
    pub table: Vec<PlanRow>,
    pub target_mde_pct: f64,
    pub cheapest: Option<PlanRow>,
    /// When an A/A comparison claimed a difference: what it means.
    pub biased: Option<String>,
    /// When `--budget` was reached before every planned trial length was measured:
    /// what was measured and what was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_note: Option<String>,
    /// What an experiment of 10 and of 30 minutes can detect here, per method.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub predictions: Vec<Prediction>,
    /// How the A/A rounds ran: one variant after the other (RMIT, the default and all
    /// before schema version 3) or both at once ([`Method::Duet`]).
    #[serde(default)]
    pub method: Method,
}

/// How an experiment's rounds are run and judged; each has its own noise-to-MDE law and
/// its own validated error rates.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq, Hash)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// A fixed number of randomized interleaved rounds, judged once at the end by the
    /// paired signed-rank verdict.
    #[default]
    Rmit,
    /// Randomized interleaved rounds until the sequential interval decides
    /// (`until = "decided"`), at most the plan's rounds.
    UntilDecided,
    /// Duet rounds (`order = "duet"`): both variants' servers at once, each on its own
    /// CPU set, the sets swapped between rounds; a fixed number of rounds judged once by
    /// the paired verdict.
    Duet,
}

impl Method {
    /// Every method, in the order calibrate reports them.
    pub const ALL: [Method; 3] = [Method::Rmit, Method::UntilDecided, Method::Duet];

    /// The name of `--method`: `rmit`, `until-decided` or `duet`.
    pub fn name(self) -> &'static str {
        match self {
            Method::Rmit => "rmit",
            Method::UntilDecided => "until-decided",
            Method::Duet => "duet",
        }
    }

    /// How many trials of a round run one after the other: two for interleaved rounds
    /// of two variants, one for a duet (both at once).
    pub fn trials_in_sequence(self) -> usize {
        match self {
            Method::Rmit | Method::UntilDecided => 2,
            Method::Duet => 1,
        }
    }
}

/// The validation a verdict may quote: its method and, for a run until decided, the
/// stopping rule it stopped by (error rates measured under another rule do not vouch
/// for this one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sought {
    pub method: Method,
    pub rule: Option<UntilRule>,
}

impl Sought {
    /// Fixed interleaved rounds: how a comparison of stored results is judged.
    pub const RMIT: Sought = Sought {
        method: Method::Rmit,
        rule: None,
    };

    /// Whether validation `v` was measured by this method and rule.
    pub fn is_met_by(&self, v: &Validation) -> bool {
        v.method == self.method && v.stopping_rule() == self.rule
    }

    /// `rmit`, `duet`, `until-decided (rule spending)`.
    pub fn describe(&self) -> String {
        match self.rule {
            Some(r) => format!("{} (rule {})", self.method.name(), r.name()),
            None => self.method.name().to_string(),
        }
    }
}

/// What an experiment of a given wall time can detect with a method: its best plan.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Prediction {
    pub method: Method,
    /// The wall time allowed, seconds.
    pub within_sec: f64,
    /// The plan of smallest MDE that fits, by the noise law of the scale the method's
    /// verdict is as wide as (robust for fixed and duet rounds, classical for runs until
    /// decided); `None` when none fits.
    pub plan: Option<PlanRow>,
    /// The MDE the same plan would have by the classical law, percent.
    pub classical_mde_pct: Option<f64>,
}
/// One error-rate check of `--validate`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RateCheck {
    pub name: String,
    /// Experiments (or, for coordinated omission, quantiles) checked.
    pub k: usize,
    pub hits: usize,
    pub rate: f64,
    /// 95 % Clopper–Pearson interval of the rate.
    pub ci_low: f64,
    pub ci_high: f64,
    pub nominal: f64,
    pub pass: bool,
    pub detail: String,
}

/// What `--validate` found; stored in the calibrations table under [`VALIDATION_KEY`].
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Validation {
    /// Always [`CALIBRATION_SCHEMA_VERSION`] when written by this build.
    #[serde(default = "first_version")]
    pub schema_version: u32,
    pub hostname: String,
    pub trial_sec: f64,
    pub rounds: u32,
    /// How the experiments were run and judged, and the metric they compared (absent
    /// before schema version 2: fixed rounds of `ops_per_sec`).
    #[serde(default)]
    pub method: Method,
    #[serde(default = "throughput")]
    pub metric: String,
    /// The stopping rule of a validation of runs until decided. Absent before schema
    /// version 3: [`Validation::stopping_rule`] then says what the row's own
    /// experiments ran with, when the caller has read it (see `experiments`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_rule: Option<UntilRule>,
    /// s_d of the serve A/A calibration and the MDE it predicts for the plan, percent
    /// (from version 2 the prediction uses the robust scale beside it).
    pub sd_log_ratio: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub robust_sd_log_ratio: Option<f64>,
    pub predicted_mde_pct: f64,
    /// The pooled within-experiment sd of the log ratios of the slowed experiments
    /// (each taken about its own mean, so the effect is not counted): set against
    /// `sd_log_ratio`, it shows whether the noise changed between the A/A experiments
    /// and the slowed ones that came after them. Absent in rows stored before it was
    /// kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowed_sd_log_ratio: Option<f64>,
    /// The slowed experiments' robust scale, as `robust_sd_log_ratio` is the A/A
    /// experiments'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slowed_robust_sd_log_ratio: Option<f64>,
    /// The power the slowed experiments' own noise predicts at the true effect (the
    /// MDE the method's scale of that noise gives for the plan, read back by
    /// `resplab_stats::power::power_at`), 0 to 1. Set against the measured power it
    /// tells a prediction that was wrong from noise that changed after it was made.
    /// Absent in rows stored before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expected_power: Option<f64>,
    /// The slowdown injected for the power check and the true effect it makes.
    pub slowdown_pct: f64,
    pub true_effect_pct: f64,
    pub false_positives: RateCheck,
    pub power: RateCheck,
    pub coverage: RateCheck,
    /// (quantile, measured ms, analytic ms, within ±10 %).
    pub coordinated_omission: Vec<(String, f64, f64, bool)>,
    pub co_pass: bool,
    pub experiments: Vec<String>,
}

impl Validation {
    /// The stopping rule its experiments stopped by: `None` for fixed rounds; for runs
    /// until decided the stored rule, or for a row stored before the rule was kept, the
    /// confidence sequence of that time ([`UntilRule::before_choice`]).
    pub fn stopping_rule(&self) -> Option<UntilRule> {
        match self.method {
            Method::UntilDecided => Some(self.until_rule.unwrap_or(UntilRule::before_choice())),
            Method::Rmit | Method::Duet => None,
        }
    }

    /// The ratio of the slowed experiments' noise to the A/A experiments' (their sds),
    /// when both are known: far from 1, the power check measured a change of the noise
    /// as well as the prediction.
    pub fn noise_drift(&self) -> Option<f64> {
        let slowed = self.slowed_sd_log_ratio?;
        (self.sd_log_ratio > 0.0 && slowed.is_finite()).then(|| slowed / self.sd_log_ratio)
    }

    /// Every error-rate check and the coordinated-omission check passed.
    pub fn is_pass(&self) -> bool {
        self.false_positives.pass && self.power.pass && self.coverage.pass && self.co_pass
    }
}

/// A stored calibration as its report shows it.
#[derive(Clone, Debug, PartialEq)]
pub enum StoredCalibration {
    /// A calibration, with the newest `--validate` run of the same host if there is one.
    Calibration {
        id: i64,
        calibration: Box<Calibration>,
        checks: Option<(i64, Box<Validation>)>,
    },
    /// A `--validate` run.
    Validation {
        id: i64,
        validation: Box<Validation>,
    },
}

/// A length of time as calibrations word it: `0.5 s`, `2 s`, `1.5 min`, `2.0 h`.
pub fn secs_text(s: f64) -> String {
    if s < 120.0 {
        let t = format!("{s:.2}");
        let t = t.trim_end_matches('0').trim_end_matches('.');
        format!("{t} s")
    } else if s < 7200.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

/// The ratio of the slowed experiments' noise to the A/A experiments' beyond which a
/// validation says that the noise changed between them (a factor of 1.25 either way).
pub const NOISE_DRIFT_BAND: (f64, f64) = (0.8, 1.25);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_of_time_read_as_calibrate_prints_them() {
        assert_eq!(secs_text(0.5), "0.5 s");
        assert_eq!(secs_text(2.0), "2 s");
        assert_eq!(secs_text(90.0), "90 s");
        assert_eq!(secs_text(150.0), "2.5 min");
        assert_eq!(secs_text(7200.0), "2.0 h");
    }

    #[test]
    fn a_row_stored_without_a_version_reads_as_version_1() {
        let v = serde_json::json!({
            "hostname": "h", "target": "t", "workload": "w", "workload_key": "k",
            "metric": "ops_per_sec", "warmup_sec": 0.2, "noise": [], "noise_a": 0.01,
            "noise_b": 0.5, "overhead_sec": 0.1, "table": [], "target_mde_pct": 1.0,
            "cheapest": null, "biased": null
        });
        let c: Calibration = serde_json::from_value(v).unwrap();
        assert_eq!(c.schema_version, 1);
        assert_eq!((c.classical_noise, c.predictions.len()), (None, 0));
        // Written back, it stays what it is: a row of version 1 (its law is of the sd).
        let back = serde_json::to_value(&c).unwrap();
        assert_eq!(back["schema_version"], 1);
        assert!(back.get("predictions").is_none());
    }

    #[test]
    fn a_validation_stored_before_version_2_was_of_fixed_rounds_and_throughput() {
        let rate = serde_json::json!({
            "name": "r", "k": 40, "hits": 2, "rate": 0.05, "ci_low": 0.0, "ci_high": 0.2,
            "nominal": 0.05, "pass": true, "detail": ""
        });
        let v = serde_json::json!({
            "hostname": "h", "trial_sec": 0.2, "rounds": 10, "sd_log_ratio": 0.06,
            "predicted_mde_pct": 6.0, "slowdown_pct": 6.0, "true_effect_pct": -5.7,
            "false_positives": rate, "power": rate, "coverage": rate,
            "coordinated_omission": [], "co_pass": true, "experiments": []
        });
        let v: Validation = serde_json::from_value(v).unwrap();
        assert_eq!((v.method, v.metric.as_str()), (Method::Rmit, "ops_per_sec"));
        assert_eq!(v.robust_sd_log_ratio, None);
        let m: Method = serde_json::from_value(serde_json::json!("until-decided")).unwrap();
        assert_eq!((m, m.name()), (Method::UntilDecided, "until-decided"));
    }

    #[test]
    fn a_validation_of_runs_until_decided_is_of_its_rule() {
        let rate = serde_json::json!({
            "name": "r", "k": 40, "hits": 2, "rate": 0.05, "ci_low": 0.0, "ci_high": 0.2,
            "nominal": 0.05, "pass": true, "detail": ""
        });
        let row = |extra: serde_json::Value| {
            let mut v = serde_json::json!({
                "schema_version": 2, "hostname": "h", "trial_sec": 0.2, "rounds": 10,
                "sd_log_ratio": 0.06, "predicted_mde_pct": 6.0, "slowdown_pct": 6.0,
                "true_effect_pct": -5.7, "false_positives": rate, "power": rate,
                "coverage": rate, "coordinated_omission": [], "co_pass": true,
                "experiments": []
            });
            v.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            serde_json::from_value::<Validation>(v).unwrap()
        };
        // Stored before the rule was kept: the confidence sequence of that time.
        let old = row(serde_json::json!({"method": "until-decided"}));
        assert_eq!(old.stopping_rule(), Some(UntilRule::Anytime));
        let new = row(serde_json::json!({"method": "until-decided", "until_rule": "spending"}));
        assert_eq!(new.stopping_rule(), Some(UntilRule::Spending));
        let duet = row(serde_json::json!({"method": "duet"}));
        assert_eq!(duet.stopping_rule(), None);
        let spending = Sought {
            method: Method::UntilDecided,
            rule: Some(UntilRule::Spending),
        };
        assert!(spending.is_met_by(&new) && !spending.is_met_by(&old));
        assert!(!spending.is_met_by(&duet) && !Sought::RMIT.is_met_by(&duet));
        assert_eq!(spending.describe(), "until-decided (rule spending)");
        assert_eq!(Method::Duet.trials_in_sequence(), 1);
    }
}
