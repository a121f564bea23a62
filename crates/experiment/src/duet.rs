//! Duet runs (`order = "duet"`): both variants measured at the same time on one machine,
//! each server with its own load generator on its own CPU set, so that whatever else
//! the machine does in that moment (other tenants, frequency changes, interrupts) hits
//! both arms alike and cancels in their ratio (Bulej, Horký, Tůma, Trojánek, Bureš and
//! Hnětynka, "Duet Benchmarking: Improving Measurement Accuracy in the Cloud", Empirical
//! Software Engineering 25, 2020).
//!
//! This module is the pure part: which experiments a duet can run ([`check`]), the two
//! CPU sets ([`cpu_sets`]) and which variant gets which set in a round
//! ([`CpuSets::for_round`]: swapped every round, so that a faster CPU cannot pose as a
//! faster variant). The runner's side is `runner::duet`.
//!
//! The unit of inference stays the round: a round's two trials pair like an RMIT round's,
//! and the verdict works on the per-round log ratio of the whole trials' values (the
//! time-weighted mean of the intervals). The intervals inside one trial are
//! autocorrelated (they share the servers' state and the machine's moment), so treating
//! them as independent pairs would shrink the interval without warrant; averaging within
//! the round and testing across rounds is the method of batch means, with one batch per
//! round (Schmeiser, "Batch Size Effects in the Analysis of Simulation Output",
//! Operations Research 30(3), 1982). Rounds are independent: fresh servers, fresh
//! connections. The per-interval pairs are kept and shown, never counted as samples.

use crate::model::{Experiment, ServerSource, TrialBudget};
use crate::words::{cpu_list, cpu_list_text};

/// How far ahead of now a round's shared start is set: time for both generators to
/// connect.
pub const START_LEAD: std::time::Duration = std::time::Duration::from_millis(700);

/// The two disjoint CPU sets of a duet; `first` is the baseline's in even rounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuSets {
    pub first: Vec<usize>,
    pub second: Vec<usize>,
}

impl CpuSets {
    /// The baseline's and the other variant's set in `round`: swapped every round.
    pub fn for_round(&self, round: u32) -> (&[usize], &[usize]) {
        if round.is_multiple_of(2) {
            (&self.first, &self.second)
        } else {
            (&self.second, &self.first)
        }
    }
}

/// What a duet cannot run, checked once when the file is read: the setting at fault
/// (`key`) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub key: String,
    pub message: String,
}

/// Checks that `exp` (with `order = "duet"`) can run as a duet: two variants, each
/// starting its own single server that can be pinned; resplab's own load measured for
/// a time (both arms over the same wall-clock intervals), on the RESP wire, from this
/// process; CPU sets given for both variants or for neither.
///
/// # Errors
/// The first [`Refusal`].
pub fn check(exp: &Experiment) -> Result<(), Refusal> {
    let refuse = |key: &str, message: String| {
        Err(Refusal {
            key: key.into(),
            message,
        })
    };
    if exp.variants.len() != 2 {
        return refuse(
            "order",
            format!(
                "order = \"duet\" runs exactly two variants at once (baseline and one other), found {}; compare more variants with order = \"rmit\" or one duet per pair",
                exp.variants.len()
            ),
        );
    }
    for v in &exp.variants {
        let key = |k: &str| format!("variant \"{}\".{k}", v.name);
        if !matches!(v.server, ServerSource::Spawn { .. }) {
            return refuse(
                &key("server"),
                "order = \"duet\" pins each variant's server to its own CPUs, so each variant must start its own single server (server = \"…\"); an address, a cluster, a toggle or a shared [server] cannot be pinned".into(),
            );
        }
        if v.client_cpus.is_some() {
            return refuse(
                &key("client_cpus"),
                "order = \"duet\" runs each variant's load generator on its server's CPU set; give server_cpus only".into(),
            );
        }
        if !v.protocol.is_resp() {
            return refuse(
                &key("protocol"),
                "order = \"duet\" measures over the RESP wire only".into(),
            );
        }
    }
    let given = exp
        .variants
        .iter()
        .filter(|v| v.server_cpus.is_some())
        .count();
    if given == 1 {
        return refuse(
            "server_cpus",
            "order = \"duet\" needs server_cpus for both variants (two disjoint sets) or for neither (this machine's CPUs split in two)".into(),
        );
    }
    if !exp.generators.is_empty() {
        return refuse(
            "generator",
            "order = \"duet\" generates both variants' load in this process, pinned beside each server; [[generator]] hosts cannot be pinned".into(),
        );
    }
    for w in &exp.workloads {
        let key = format!("workload \"{}\"", w.name);
        if w.run.is_some() {
            return refuse(
                &format!("{key}.run"),
                "order = \"duet\" cannot pin a command workload's own client or read its intervals; use resplab's own load (tests = \"…\")".into(),
            );
        }
        if matches!(w.budget, TrialBudget::Requests(_)) {
            return refuse(
                &format!("{key}.requests"),
                "order = \"duet\" measures both variants over the same wall-clock intervals, so a trial lasts a time (test_time), not a request count".into(),
            );
        }
    }
    Ok(())
}

/// The duet's two CPU sets, from the variants' `server_cpus` when given (they must be
/// disjoint and allowed), or else the CPUs this process may use (`allowed`) split in two
/// halves (on a 2-CPU machine: CPU 0 and CPU 1).
///
/// # Errors
/// A one-line message: fewer than two CPUs allowed, sets that overlap, or a set naming
/// a CPU this process may not use.
pub fn cpu_sets(exp: &Experiment, allowed: &[usize]) -> Result<CpuSets, String> {
    let given: Vec<&str> = exp
        .variants
        .iter()
        .filter_map(|v| v.server_cpus.as_deref())
        .collect();
    if let [a, b] = given[..] {
        let first = cpu_list(a)?;
        let second = cpu_list(b)?;
        if let Some(c) = first.iter().find(|c| second.contains(c)) {
            return Err(format!(
                "order = \"duet\" needs two disjoint CPU sets; server_cpus \"{a}\" and \"{b}\" share CPU {c}"
            ));
        }
        if let Some(c) = first.iter().chain(&second).find(|c| !allowed.contains(c)) {
            return Err(format!(
                "order = \"duet\": server_cpus names CPU {c}, which this process may not use (allowed: {})",
                cpu_list_text(allowed)
            ));
        }
        return Ok(CpuSets { first, second });
    }
    if allowed.len() < 2 {
        return Err(format!(
            "order = \"duet\" needs at least two CPUs for two disjoint sets; this process may use {} ({})",
            allowed.len(),
            cpu_list_text(allowed)
        ));
    }
    let half = allowed.len() / 2;
    Ok(CpuSets {
        first: allowed[..half].to_vec(),
        second: allowed[half..2 * half].to_vec(),
    })
}

/// The CPUs this process may use now (its affinity list), or every CPU the standard
/// library counts when the list cannot be read.
pub fn allowed_cpus() -> Vec<usize> {
    match resplab_sys::proc::cpus_allowed_list().map(|l| cpu_list(&l)) {
        Some(Ok(list)) => list,
        _ => (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exp(text: &str) -> Experiment {
        crate::resolve::parse("t.toml", text, &Default::default()).unwrap()
    }

    /// Two redis-server variants and one workload, read as RMIT.
    pub(super) const TWO: &str = r#"
[experiment]
name = "d"
test_time = "1s"
[[variant]]
name = "a"
server = "redis-server --port {port}"
[[variant]]
name = "b"
server = "redis-server --port {port}"
[[workload]]
name = "w"
tests = "set"
"#;

    #[test]
    fn sets_split_the_allowed_cpus_and_swap_every_round() {
        let e = exp(TWO);
        let sets = cpu_sets(&e, &[0, 1]).unwrap();
        assert_eq!(sets.for_round(0), (&[0][..], &[1][..]));
        assert_eq!(sets.for_round(1), (&[1][..], &[0][..]));
        let sets = cpu_sets(&e, &[0, 1, 2, 3, 4]).unwrap();
        assert_eq!(sets.first, vec![0, 1]);
        assert_eq!(sets.second, vec![2, 3]);
        let err = cpu_sets(&e, &[3]).unwrap_err();
        assert!(err.contains("at least two CPUs"), "{err}");
    }

    #[test]
    fn given_sets_must_be_disjoint_and_allowed() {
        let mut e = exp(TWO);
        e.variants[0].server_cpus = Some("0-1".into());
        e.variants[1].server_cpus = Some("1".into());
        assert!(cpu_sets(&e, &[0, 1]).unwrap_err().contains("share CPU 1"));
        e.variants[0].server_cpus = Some("0".into());
        e.variants[1].server_cpus = Some("5".into());
        assert!(cpu_sets(&e, &[0, 1]).unwrap_err().contains("may not use"));
        e.variants[1].server_cpus = Some("1".into());
        assert_eq!(cpu_sets(&e, &[0, 1]).unwrap().second, vec![1]);
    }

    #[test]
    fn what_a_duet_cannot_run_is_refused() {
        let mut e = exp(TWO);
        assert_eq!(check(&e), Ok(()));
        e.variants.push(e.variants[1].clone());
        assert_eq!(check(&e).unwrap_err().key, "order");
        e.variants.pop();
        e.variants[1].server_cpus = Some("1".into());
        assert_eq!(check(&e).unwrap_err().key, "server_cpus");
        e.variants[1].server_cpus = None;
        e.workloads[0].budget = TrialBudget::Requests(1000);
        assert_eq!(check(&e).unwrap_err().key, "workload \"w\".requests");
    }
}

#[cfg(test)]
mod plan_tests {
    use crate::plan::{estimate_execution, round_plan};

    #[test]
    fn a_duet_round_is_one_execution_per_workload_holding_both_variants() {
        let text = format!(
            "{}[[workload]]\nname = \"v\"\ntests = \"get\"\n",
            super::tests::TWO
        );
        // Read as RMIT (the file's duet check would ask this machine for two CPUs),
        // then planned as a duet.
        let mut exp = crate::resolve::parse("d.toml", &text, &Default::default()).unwrap();
        exp.order = crate::Order::Duet;
        for round in 0..4 {
            let plan = round_plan(&exp, round, 0);
            assert_eq!(plan.len(), 2);
            for e in &plan {
                let variants: Vec<usize> = e.trials.iter().map(|s| s.variant).collect();
                assert_eq!(variants, vec![0, 1]);
                assert_eq!(e.server_variant, 0);
                // Both trials at once: one trial's time, not two.
                assert!(estimate_execution(&exp, e).as_secs_f64() < 2.5);
            }
        }
    }
}
