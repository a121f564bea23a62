//! The runner's side of profiles (`[profile]`, [`crate::model::Profile`]): the server's
//! stacks sampled by `perf record` during a trial ([`resplab_sys::profile`]), folded and
//! stored with the trial's requests.
//!
//! With `trials = "extra"` (the default) every counted trial of resplab's own load is
//! followed by one more trial of the same variant, workload and seed, sampled and never
//! counted: its numbers are thrown away, so sampling cannot perturb a counted value.
//! With `trials = "counted"` the counted trials themselves are sampled.
//!
//! Where sampling cannot run (perf missing, not permitted, a server this run did not
//! start and so whose pid it does not know) one notice says what is missing and how to
//! enable it; the experiment goes on without profiles. A machine that refuses kernel
//! stacks is sampled in user space only, with a notice.

use super::*;
use crate::evidence::Node;
use crate::model::{CallGraph, Profile, ProfileTrials};
use resplab_store::ProfileRow;
use resplab_sys::profile::{self as sampling, Recording, Sampling};

impl Runner<'_> {
    /// Whether the counted trials of this run are sampled.
    pub(super) fn profiles_counted(&self) -> bool {
        self.exp
            .profile
            .as_ref()
            .is_some_and(|p| p.trials == ProfileTrials::Counted)
    }

    /// Starts sampling the processes of `nodes` when this trial is sampled.
    pub(super) fn start_profile(&mut self, nodes: &[Node]) -> Option<Recording> {
        if !self.profile_now || self.profile_off {
            return None;
        }
        let p = self.exp.profile.clone()?;
        let pids: Vec<u32> = nodes.iter().filter_map(|n| n.pid).collect();
        if pids.is_empty() || pids.len() != nodes.len() {
            self.profile_notice(
                "no profile: the server was not started by this run, so its process is unknown (profiles need a variant with `server`, not `address`)",
            );
            return None;
        }
        let s = self.sampling(&p);
        self.profile_seq += 1;
        let data = std::env::temp_dir().join(format!(
            "resplab-profile-{}-{}.data",
            std::process::id(),
            self.profile_seq
        ));
        match Recording::start(&s, &pids, &data) {
            Ok(r) => Some(r),
            Err(why) => {
                self.profile_unavailable(&why);
                None
            }
        }
    }

    /// Stops sampling and keeps the folded stacks for [`Runner::keep_profile`].
    pub(super) fn finish_profile(&mut self, recording: Option<Recording>) {
        let Some(r) = recording else {
            return;
        };
        // No samples is a profile too: a server that waited off the CPU all along.
        match r.finish() {
            Ok(stacks) => self.captured = Some(stacks),
            Err(why) => self.profile_unavailable(&why),
        }
    }

    /// Stores the stacks captured during the trial just run (of `slot`, counted as
    /// `trial_id` or extra), with its requests.
    pub(super) fn keep_profile(
        &mut self,
        slot: &TrialSlot,
        trial_id: Option<i64>,
        requests: u64,
    ) -> Result<(), RunError> {
        let (Some(stacks), Some(p)) = (self.captured.take(), self.exp.profile.as_ref()) else {
            return Ok(());
        };
        let row = ProfileRow {
            experiment_id: self.id,
            trial_id,
            variant: self.exp.variants[slot.variant].name.clone(),
            workload: self.exp.workloads[slot.workload].name.clone(),
            round: slot.round,
            attempt: slot.attempt,
            folded: stacks.folded,
            samples: stacks.samples,
            requests,
            sampling: describe(&self.sampling(p)),
        };
        self.store.insert_profile(&row)?;
        Ok(())
    }

    /// The extra, uncounted trial of `slot` that is sampled, when profiles are taken
    /// that way and this trial can be: resplab's own load against a server this run
    /// started. `Ok(false)` when the stop token fired during it (nothing is stored).
    pub(super) fn extra_profile_trial(
        &mut self,
        slot: &TrialSlot,
        base: &Variant,
        at: (&str, u16),
        ctl: Option<&mut Client>,
        process: Option<&ServerProcess>,
    ) -> Result<bool, RunError> {
        let wanted = self
            .exp
            .profile
            .as_ref()
            .is_some_and(|p| p.trials == ProfileTrials::Extra);
        if !wanted || self.profile_off || self.exp.workloads[slot.workload].run.is_some() {
            return Ok(true);
        }
        if self.stop.is_stopped() {
            return Ok(false);
        }
        let (host, port) = at;
        let variant = &self.exp.variants[slot.variant];
        (self.on_event)(Event::Step {
            variant: &variant.name,
            what: "profiling trial (sampled, not counted)".into(),
        });
        self.profile_now = true;
        let trial = self.run_trial(slot, base, host, port, ctl, process);
        self.profile_now = false;
        let Some(trial) = trial? else {
            self.captured = None;
            return Ok(false);
        };
        self.keep_profile(slot, None, trial.run.totals.requests)?;
        self.give_notices();
        Ok(true)
    }

    /// The sampling of `p` on this machine: its perf program, and user space only when
    /// kernel stacks are not permitted (said once).
    fn sampling(&mut self, p: &Profile) -> Sampling {
        let mut kernel = p.kernel;
        if kernel {
            if let Err(why) = sampling::kernel_permitted() {
                self.profile_notice(&format!("profiles: {why}; sampling user stacks only"));
                kernel = false;
            }
        }
        Sampling {
            perf: p
                .perf
                .clone()
                .or_else(|| self.exp.perf.clone())
                .unwrap_or_else(|| "perf".into()),
            frequency: p.frequency,
            call_graph: match p.call_graph {
                CallGraph::Fp => sampling::CallGraph::FramePointer,
                CallGraph::Dwarf => sampling::CallGraph::Dwarf,
            },
            event: p.event.clone(),
            kernel,
        }
    }

    /// Sampling cannot run on this machine: said once, and not tried again in this run.
    fn profile_unavailable(&mut self, why: &str) {
        self.profile_off = true;
        self.profile_notice(&format!(
            "profiles: {why}; the experiment runs on without profiles"
        ));
    }

    /// A notice about profiles, given once per run after the trial is stored.
    fn profile_notice(&mut self, note: &str) {
        if self.noticed.insert(note.to_string()) {
            self.pending_notices.push(note.to_string());
        }
    }
}

/// The perf command line of a sampling, as stored with each profile.
fn describe(s: &Sampling) -> String {
    let graph = match s.call_graph {
        sampling::CallGraph::FramePointer => "-g",
        sampling::CallGraph::Dwarf => "--call-graph dwarf",
    };
    let event = if s.kernel {
        s.event.clone()
    } else {
        format!("{}:u", s.event)
    };
    format!("perf record -F {} -e {event} {graph}", s.frequency)
}
