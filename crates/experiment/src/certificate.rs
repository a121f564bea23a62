//! The sensitivity certificate of an experiment's verdict: what it could detect, how
//! long it took, and the error rates `calibrate --validate` measured on this host.
//!
//! "No difference proven" means little without what could have been proven, and a
//! verdict's error rates are only claims until they are measured where it ran. The
//! certificate gathers the three facts; `report::verdict::certificate_line` words them.
//! For a run until decided the detectable effect is the sequential interval's
//! ([`crate::sequential`]); for fixed rounds it is the MDE at 80 % power of the paired
//! verdict. With several comparisons the largest (least sensitive) is given.

use crate::model::Experiment;
use crate::runner::{standings, Standing};
use crate::sequential;
use resplab_results::calibration::{Method, Sought, Validation};
use resplab_stats::verdict::{compare_paired, CompareConfig, Direction};
use resplab_store::{Store, StoreError};

/// What a verdict can vouch for.
#[derive(Clone, Debug, PartialEq)]
pub struct Certificate {
    /// The effect it could detect, percent (`None`: too few rounds).
    pub mde_pct: Option<f64>,
    /// Rounds behind the verdict (the fewest of any comparison).
    pub rounds: usize,
    /// Wall time of the experiment, seconds (`None`: no trial stored).
    pub elapsed_sec: Option<f64>,
    /// The method and stopping rule whose validation it quotes.
    pub sought: Sought,
    /// The newest `calibrate --validate` of this host for them, with its id.
    pub validation: Option<(i64, Validation)>,
}

/// The certificate of a stored experiment, on the host this runs on.
///
/// # Errors
/// A store failure.
pub fn of_experiment(store: &Store, exp: &Experiment) -> Result<Certificate, StoreError> {
    let obs = store.observations(&exp.name)?;
    let standing = standings(exp, &obs);
    let info = store.experiment(&exp.name)?;
    let (mde_pct, rounds, elapsed_sec) = if exp.until_decided.is_some() {
        let a = sequential::assess(
            exp,
            &standing,
            &sequential::Timeline::from_looks(&store.looks(info.id)?),
        );
        let mde = a
            .comparisons
            .iter()
            .map(|c| c.look.mde80().map(|m| m.exp_m1() * 100.0))
            .collect::<Option<Vec<f64>>>()
            .and_then(|v| v.into_iter().reduce(f64::max));
        let elapsed = match store.sequential_stop(info.id)? {
            Some(s) => s.elapsed_sec,
            None => store.sequential_elapsed(info.id)?,
        };
        (mde, a.rounds, Some(elapsed))
    } else {
        let trials = store.trials(info.id)?;
        let first = trials.iter().map(|t| t.started_at_unix_ms).min();
        let last = trials.iter().map(|t| t.finished_at_unix_ms).max();
        let elapsed = first.zip(last).map(|(a, b)| (b - a).max(0) as f64 / 1000.0);
        let rounds = standing.iter().map(|s| s.pairs.len()).min().unwrap_or(0);
        (fixed_mde(&standing), rounds, elapsed)
    };
    Ok(Certificate {
        mde_pct,
        rounds,
        elapsed_sec,
        sought: sought(exp),
        validation: newest_validation_here(store, exp),
    })
}

/// The certificate of the stored experiment `name`, read back with its definition;
/// `None` when its stored definition cannot be read by this build.
///
/// # Errors
/// A store failure.
pub fn of_stored(store: &Store, name: &str) -> Result<Option<Certificate>, StoreError> {
    let Some(exp) = stored_experiment(store, name)? else {
        return Ok(None);
    };
    of_experiment(store, &exp).map(Some)
}

/// A stored run until decided: how it stopped (if it did) and every comparison's
/// sequential interval now; `None` for any other experiment.
///
/// # Errors
/// A store failure.
pub fn sequential_of_stored(
    store: &Store,
    name: &str,
) -> Result<Option<(Option<resplab_store::StopRow>, sequential::Assessment)>, StoreError> {
    let Some(exp) = stored_experiment(store, name)? else {
        return Ok(None);
    };
    if exp.until_decided.is_none() {
        return Ok(None);
    }
    let info = store.experiment(name)?;
    let a = sequential::assess_stored(store, &exp)?;
    Ok(Some((store.sequential_stop(info.id)?, a)))
}

fn stored_experiment(store: &Store, name: &str) -> Result<Option<Experiment>, StoreError> {
    let info = store.experiment(name)?;
    let (_, json) = store.experiment_spec(info.id)?;
    Ok(Experiment::from_json(&json).ok())
}

/// The method an experiment ran by and, for a run until decided, the rule it stopped
/// by: duet rounds, runs until decided, or fixed interleaved rounds.
pub fn sought(exp: &Experiment) -> Sought {
    let method = if exp.order == crate::model::Order::Duet {
        Method::Duet
    } else if exp.until_decided.is_some() {
        Method::UntilDecided
    } else {
        Method::Rmit
    };
    Sought {
        method,
        rule: exp.until_decided.map(|u| u.rule),
    }
}

/// The newest `--validate` result of this host for `exp`'s method, stopping rule and
/// primary metric, if any can be read (a duet run until decided finds none: duets are
/// validated with fixed rounds).
pub fn newest_validation_here(store: &Store, exp: &Experiment) -> Option<(i64, Validation)> {
    newest_validation_for(store, sought(exp), &exp.primary_metric)
}

/// The newest `--validate` result of this host for `sought` and `metric`, if any can be
/// read (a comparison of stored results is judged as fixed rounds).
pub fn newest_validation_for(
    store: &Store,
    sought: Sought,
    metric: &str,
) -> Option<(i64, Validation)> {
    let host = resplab_engine::host::detect().hostname;
    crate::calibrate::stored::newest_validation(store, &host, sought, metric)
        .ok()
        .flatten()
}

/// The largest MDE at 80 % power of the paired verdicts; `None` if any has too few rounds.
fn fixed_mde(standing: &[Standing]) -> Option<f64> {
    let cfg = CompareConfig::new(Direction::HigherIsBetter);
    standing
        .iter()
        .map(|s| {
            let (a, b): (Vec<f64>, Vec<f64>) = s.pairs.iter().map(|(_, a, b)| (*a, *b)).unzip();
            compare_paired(&a, &b, &cfg).ok().and_then(|c| c.mde_pct)
        })
        .collect::<Option<Vec<f64>>>()
        .and_then(|v| v.into_iter().reduce(f64::max))
}

#[cfg(test)]
mod tests {
    use super::*;
    use resplab_results::calibration::UntilRule;

    /// Stores one `calibrate --validate` result of `host` for `metric`.
    fn insert_validation(store: &mut Store, host: &str, metric: &str, v: serde_json::Value) {
        store
            .insert_calibration(&resplab_store::NewCalibration {
                hostname: host.to_string(),
                target: "t".into(),
                workload_key: resplab_results::calibration::VALIDATION_KEY.into(),
                workload_name: "validate".into(),
                metric: metric.into(),
                result: v,
            })
            .unwrap();
    }

    fn rate(hits: usize) -> serde_json::Value {
        serde_json::json!({
            "name": "r", "k": 40, "hits": hits, "rate": hits as f64 / 40.0, "ci_low": 0.0,
            "ci_high": 0.2, "nominal": 0.05, "pass": true, "detail": ""
        })
    }

    #[test]
    fn the_newest_validation_of_this_host_is_quoted() {
        let mut store = Store::open_in_memory().unwrap();
        let text = "[experiment]\nname = \"c\"\nrounds = 6\n[[variant]]\nname = \"a\"\n\
                    [[variant]]\nname = \"b\"\n[[workload]]\nname = \"w\"\ntests = \"set\"\n";
        let exp = crate::resolve::parse("c.toml", text, &Default::default()).unwrap();
        crate::runner::register(&mut store, &exp, text).unwrap();
        let none = of_experiment(&store, &exp).unwrap();
        assert_eq!(
            (none.mde_pct, none.rounds, none.validation),
            (None, 0, None)
        );
        let host = resplab_engine::host::detect().hostname;
        for (hits, power) in [(3, 30), (2, 33)] {
            let v = serde_json::json!({
                "hostname": host, "trial_sec": 1.0, "rounds": 10, "sd_log_ratio": 0.1,
                "predicted_mde_pct": 5.0, "slowdown_pct": 5.0, "true_effect_pct": -4.8,
                "false_positives": rate(hits), "power": rate(power), "coverage": rate(38),
                "coordinated_omission": [], "co_pass": true, "experiments": []
            });
            insert_validation(&mut store, &host, "ops_per_sec", v);
        }
        // A newer validation of another method or metric does not vouch for this one.
        for (method, metric) in [
            ("until-decided", "ops_per_sec"),
            ("rmit", "server_cpu_us_per_op"),
        ] {
            let v = serde_json::json!({
                "hostname": host, "trial_sec": 1.0, "rounds": 10, "sd_log_ratio": 0.1,
                "method": method, "metric": metric,
                "predicted_mde_pct": 5.0, "slowdown_pct": 5.0, "true_effect_pct": -4.8,
                "false_positives": rate(9), "power": rate(9), "coverage": rate(9),
                "coordinated_omission": [], "co_pass": true, "experiments": []
            });
            insert_validation(&mut store, &host, metric, v);
        }
        let c = of_experiment(&store, &exp).unwrap();
        let (_, v) = c.validation.expect("the stored validation");
        assert_eq!((v.false_positives.hits, v.power.hits), (2, 33));
        // The until-decided row was stored without its rule and its experiments are not
        // in the store: the rule of its time, the confidence sequence.
        let anytime = Sought {
            method: Method::UntilDecided,
            rule: Some(UntilRule::Anytime),
        };
        let (_, v) = newest_validation_for(&store, anytime, "ops_per_sec").unwrap();
        assert_eq!((v.method, v.power.hits), (Method::UntilDecided, 9));
        let spending = Sought {
            rule: Some(UntilRule::Spending),
            ..anytime
        };
        assert_eq!(newest_validation_for(&store, spending, "ops_per_sec"), None);
    }

    /// A run until decided quotes only a validation made with its own stopping rule, and
    /// a duet only a duet validation; otherwise its certificate says none is stored.
    #[test]
    fn the_certificate_quotes_the_validation_of_its_rule_and_method() {
        let mut store = Store::open_in_memory().unwrap();
        let host = resplab_engine::host::detect().hostname;
        let text = |name: &str, extra: &str| {
            format!(
                "[experiment]\nname = \"{name}\"\n{extra}\n[[variant]]\nname = \"a\"\n\
                 server = \"redis-server --port {{port}}\"\n[[variant]]\nname = \"b\"\n\
                 server = \"redis-server --port {{port}}\"\n[[workload]]\nname = \"w\"\n\
                 tests = \"set\"\ntest_time = \"1s\"\n"
            )
        };
        let register = |store: &mut Store, name: &str, extra: &str| {
            let t = text(name, extra);
            let exp = crate::resolve::parse("c.toml", &t, &Default::default()).unwrap();
            crate::runner::register(store, &exp, &t).unwrap();
            exp
        };
        let spend = register(
            &mut store,
            "spend",
            "until = \"decided\"\nmax_rounds = 20\nuntil_rule = \"spending\"",
        );
        let pocock = register(
            &mut store,
            "pocock",
            "until = \"decided\"\nmax_rounds = 20\nuntil_rule = \"spending-pocock\"",
        );
        let mut duet = register(&mut store, "duet", "rounds = 6");
        // Read as RMIT (the file's duet check asks this machine for two CPUs).
        duet.order = crate::Order::Duet;
        // A validation of version 2 (no rule) whose experiments ran by "spending": the
        // rule is read from them.
        let v = |method: &str, power: usize, experiments: &[&str]| {
            serde_json::json!({
                "schema_version": 2, "hostname": host, "trial_sec": 1.0, "rounds": 10,
                "sd_log_ratio": 0.1, "method": method, "metric": "ops_per_sec",
                "predicted_mde_pct": 5.0, "slowdown_pct": 5.0, "true_effect_pct": -4.8,
                "false_positives": rate(2), "power": rate(power), "coverage": rate(38),
                "coordinated_omission": [], "co_pass": true, "experiments": experiments
            })
        };
        insert_validation(
            &mut store,
            &host,
            "ops_per_sec",
            v("until-decided", 30, &["spend"]),
        );
        let c = of_experiment(&store, &spend).unwrap();
        assert_eq!(c.validation.map(|(_, v)| v.power.hits), Some(30));
        let c = of_experiment(&store, &pocock).unwrap();
        assert_eq!(c.validation, None);
        let line = resplab_report::verdict::certificate_line(None, 0, None, None, c.sought);
        assert!(
            line.contains("none stored for this rule (spending-pocock)"),
            "{line}"
        );
        assert_eq!(of_experiment(&store, &duet).unwrap().validation, None);
        insert_validation(&mut store, &host, "ops_per_sec", v("duet", 31, &[]));
        let c = of_experiment(&store, &duet).unwrap();
        assert_eq!(c.validation.map(|(_, v)| v.power.hits), Some(31));
        assert_eq!(
            c.sought,
            Sought {
                method: Method::Duet,
                rule: None
            }
        );
    }
}
