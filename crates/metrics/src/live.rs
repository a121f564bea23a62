//! The live state of a bench run or an experiment, as a scrape sees it.
//!
//! [`Live`] is shared between the thread that runs (it calls [`Live::observe`] from the
//! progress callback once per second, and for an experiment [`Live::trial`] and
//! [`Live::verdicts`] from the runner's events) and the endpoint's thread (which calls
//! [`Live::render`]). Counters never go back: when an experiment's next trial begins,
//! the figures of the one before are added to what is done, under its variant and
//! workload labels, and the new trial counts from there.

use crate::text::{labels, Exposition};
use resplab_engine::Progress;
use resplab_stats::hist::LatencyHistogram;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// Labels of a trial (variant and workload) or none (a bench run).
type Context = Vec<(String, String)>;

/// What a command did so far.
#[derive(Clone, Debug, Default)]
struct Cmd {
    requests: u64,
    errors: u64,
    latency: LatencyHistogram,
}

impl Cmd {
    fn add(&mut self, o: &Cmd) {
        self.requests += o.requests;
        self.errors += o.errors;
        self.latency.merge(&o.latency);
    }
}

/// Where an experiment is.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TrialState {
    /// 1-based round of the trial running, and the rounds planned.
    pub round: u32,
    pub rounds: u32,
    /// Trials stored and planned.
    pub stored: usize,
    pub planned: usize,
}

/// The running verdict of one variant against the baseline on one workload.
#[derive(Clone, Debug, PartialEq)]
pub struct VerdictRow {
    pub workload: String,
    pub variant: String,
    /// The verdict's label (`FASTER`, `SLOWER`, `EQUIVALENT`, `INCONCLUSIVE`, `NO VERDICT`).
    pub verdict: String,
    /// Rounds compared.
    pub rounds: usize,
    /// The effect on the primary metric so far, percent (variant against baseline).
    pub effect_pct: Option<f64>,
}

#[derive(Debug, Default)]
struct State {
    context: Context,
    /// Figures of finished trials (and of the current one's finished phases' commands
    /// are kept in `current` under their phase).
    done: BTreeMap<(Context, String), Cmd>,
    current: BTreeMap<(usize, String), Cmd>,
    last: Option<Progress>,
    trial: Option<TrialState>,
    verdicts: Vec<VerdictRow>,
}

/// The shared live state; clones share it.
#[derive(Clone, Debug, Default)]
pub struct Live {
    inner: Arc<Mutex<State>>,
}

impl Live {
    pub fn new() -> Self {
        Live::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes one progress report of the engine.
    pub fn observe(&self, p: &Progress) {
        let mut s = self.state();
        for c in &p.commands {
            s.current.insert(
                (p.phase, c.name.clone()),
                Cmd {
                    requests: c.requests,
                    errors: c.errors,
                    latency: c.latency.clone(),
                },
            );
        }
        let mut last = p.clone();
        last.commands.clear();
        s.last = Some(last);
    }

    /// An experiment begins: `planned` trials, `stored` of them already.
    pub fn plan(&self, planned: usize, stored: usize) {
        let mut s = self.state();
        let t = s.trial.get_or_insert_with(TrialState::default);
        t.planned = planned;
        t.stored = stored;
    }

    /// An experiment's trial begins: the figures so far are put under the previous
    /// trial's labels, and the new trial's are `variant` and `workload`. A `planned` of
    /// 0 keeps the number of trials planned as it was.
    pub fn trial(&self, variant: &str, workload: &str, at: TrialState) {
        let mut s = self.state();
        let ctx = std::mem::replace(
            &mut s.context,
            labels(&[("variant", variant), ("workload", workload)]),
        );
        let current = std::mem::take(&mut s.current);
        for ((_, name), c) in current {
            s.done.entry((ctx.clone(), name)).or_default().add(&c);
        }
        s.last = None;
        let planned = s.trial.as_ref().map_or(0, |t| t.planned);
        s.trial = Some(TrialState {
            planned: if at.planned == 0 { planned } else { at.planned },
            ..at
        });
    }

    /// One more trial was stored.
    pub fn stored_one(&self) {
        if let Some(t) = self.state().trial.as_mut() {
            t.stored += 1;
        }
    }

    /// The running verdicts, replacing the ones before.
    pub fn verdicts(&self, rows: Vec<VerdictRow>) {
        self.state().verdicts = rows;
    }

    /// Serves this state at `addr` (`HOST:PORT`) until the endpoint is dropped.
    ///
    /// # Errors
    /// An address that is not HOST:PORT or cannot be bound.
    pub fn serve(&self, addr: &str) -> Result<crate::Endpoint, crate::MetricsError> {
        let live = self.clone();
        crate::Endpoint::start(addr, Arc::new(move || live.render()))
    }

    /// The text of a scrape.
    pub fn render(&self) -> String {
        let s = self.state();
        let mut cmds: BTreeMap<(Context, String), Cmd> = s.done.clone();
        for ((_, name), c) in &s.current {
            cmds.entry((s.context.clone(), name.clone()))
                .or_default()
                .add(c);
        }
        let mut e = Exposition::new();
        commands(&mut e, &cmds);
        if let Some(p) = &s.last {
            progress(&mut e, p, &s.context);
        }
        if let Some(t) = &s.trial {
            experiment(&mut e, t, &s.context);
        }
        verdicts(&mut e, &s.verdicts);
        e.finish()
    }
}

fn with_command(ctx: &Context, name: &str) -> Vec<(String, String)> {
    let mut l = ctx.clone();
    l.push(("command".into(), name.into()));
    l
}

fn commands(e: &mut Exposition, cmds: &BTreeMap<(Context, String), Cmd>) {
    let count = |f: fn(&Cmd) -> u64| -> Vec<(Context, f64)> {
        cmds.iter()
            .map(|((ctx, n), c)| (with_command(ctx, n), f(c) as f64))
            .collect()
    };
    e.counter(
        "resplab_requests_total",
        "Replies received in the measured part, error replies included.",
        &count(|c| c.requests),
    );
    e.counter(
        "resplab_errors_total",
        "Error replies and requests lost (timeouts, dropped connections, protocol errors).",
        &count(|c| c.errors),
    );
    let hists: Vec<(Context, &LatencyHistogram)> = cmds
        .iter()
        .map(|((ctx, n), c)| (with_command(ctx, n), &c.latency))
        .collect();
    e.histogram(
        "resplab_request_duration_seconds",
        "Latency of each reply (open loop: from its intended send time).",
        &hists,
    );
    e.summary(
        "resplab_request_latency_seconds",
        "Exact latency quantiles of every reply so far (HdrHistogram, 3 significant digits).",
        &hists,
    );
}

fn progress(e: &mut Exposition, p: &Progress, ctx: &Context) {
    let one = |v: f64| vec![(ctx.clone(), v)];
    e.gauge(
        "resplab_ops_per_second",
        "Replies per second in the last second.",
        &one(p.ops_per_sec_now),
    );
    e.gauge(
        "resplab_p99_latency_seconds",
        "99th percentile latency of the last second.",
        &one(p.p99_us_now / 1e6),
    );
    e.gauge(
        "resplab_phase_elapsed_seconds",
        "Seconds of the phase's measured part so far.",
        &one(p.elapsed_sec),
    );
    e.gauge(
        "resplab_warming_up",
        "1 while the warm-up runs (nothing is recorded).",
        &one(f64::from(u8::from(p.warming_up))),
    );
    let mut info = ctx.clone();
    info.push(("phase".into(), p.phase_name.clone()));
    e.gauge(
        "resplab_phase_info",
        "The phase running (a test such as SET, or a mix).",
        &[(info, 1.0)],
    );
}

fn experiment(e: &mut Exposition, t: &TrialState, ctx: &Context) {
    let g = |v: f64| vec![(Vec::new(), v)];
    e.gauge(
        "resplab_experiment_round",
        "Round of the trial running, from 1.",
        &g(f64::from(t.round)),
    );
    e.gauge(
        "resplab_experiment_rounds",
        "Rounds planned.",
        &g(f64::from(t.rounds)),
    );
    e.gauge(
        "resplab_experiment_trials_stored",
        "Trials stored so far.",
        &g(t.stored as f64),
    );
    e.gauge(
        "resplab_experiment_trials_planned",
        "Trials planned in this run.",
        &g(t.planned as f64),
    );
    e.gauge(
        "resplab_experiment_trial_info",
        "The variant and workload of the trial running.",
        &[(ctx.clone(), 1.0)],
    );
}

fn verdicts(e: &mut Exposition, rows: &[VerdictRow]) {
    let key = |r: &VerdictRow| labels(&[("workload", &r.workload), ("variant", &r.variant)]);
    let info: Vec<(Context, f64)> = rows
        .iter()
        .map(|r| {
            let mut l = key(r);
            l.push(("verdict".into(), r.verdict.clone()));
            (l, 1.0)
        })
        .collect();
    e.gauge(
        "resplab_verdict_info",
        "The running verdict of each variant against the baseline.",
        &info,
    );
    let effect: Vec<(Context, f64)> = rows
        .iter()
        .filter_map(|r| r.effect_pct.map(|v| (key(r), v)))
        .collect();
    e.gauge(
        "resplab_verdict_effect_percent",
        "The effect on the primary metric so far, percent.",
        &effect,
    );
    let n: Vec<(Context, f64)> = rows.iter().map(|r| (key(r), r.rounds as f64)).collect();
    e.gauge(
        "resplab_verdict_rounds",
        "Rounds the running verdict compares.",
        &n,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use resplab_engine::CommandProgress;

    fn progress(phase: usize, requests: u64) -> Progress {
        let mut latency = LatencyHistogram::new();
        latency.record_n(100_000, requests);
        Progress {
            phase,
            phase_name: "GET".into(),
            elapsed_sec: 1.0,
            warming_up: false,
            requests,
            errors: 0,
            ops_per_sec_now: requests as f64,
            ops_per_sec_overall: requests as f64,
            p99_us_now: 100.0,
            commands: vec![CommandProgress {
                name: "GET".into(),
                requests,
                errors: 1,
                latency,
            }],
        }
    }

    #[test]
    fn counters_keep_growing_across_trials() {
        let live = Live::new();
        let at = TrialState {
            round: 1,
            rounds: 2,
            stored: 0,
            planned: 4,
        };
        live.trial("a", "get", at.clone());
        live.observe(&progress(0, 10));
        live.observe(&progress(0, 30));
        live.trial("b", "get", at.clone());
        live.observe(&progress(0, 5));
        live.trial("a", "get", at);
        live.observe(&progress(0, 7));
        let t = live.render();
        assert!(
            t.contains(
                "resplab_requests_total{variant=\"a\",workload=\"get\",command=\"GET\"} 37\n"
            ),
            "{t}"
        );
        assert!(
            t.contains(
                "resplab_requests_total{variant=\"b\",workload=\"get\",command=\"GET\"} 5\n"
            ),
            "{t}"
        );
        assert!(
            t.contains("resplab_errors_total{variant=\"a\",workload=\"get\",command=\"GET\"} 2\n"),
            "{t}"
        );
        assert!(
            t.contains("resplab_experiment_trial_info{variant=\"a\",workload=\"get\"} 1\n"),
            "{t}"
        );
    }

    #[test]
    fn a_bench_run_has_no_experiment_families() {
        let live = Live::new();
        live.observe(&progress(0, 10));
        let t = live.render();
        assert!(
            t.contains("resplab_requests_total{command=\"GET\"} 10\n"),
            "{t}"
        );
        assert!(t.contains("resplab_phase_info{phase=\"GET\"} 1\n"), "{t}");
        assert!(!t.contains("experiment"), "{t}");
    }
}
