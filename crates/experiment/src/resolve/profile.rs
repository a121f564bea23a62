//! `[profile]`: the sampling of the server's stacks, checked and defaulted.

use super::Ctx;
use crate::error::SpecError;
use crate::model::{CallGraph, Profile, ProfileTrials};
use crate::spec::ProfileSpec;
use toml::Spanned;

/// Samples per second when the file does not say: a prime, so sampling does not beat
/// in step with a periodic timer of the server.
pub const DEFAULT_FREQUENCY: u32 = 499;

/// The highest frequency accepted; Linux caps it lower still by default
/// (`kernel.perf_event_max_sample_rate`).
const MAX_FREQUENCY: u32 = 100_000;

/// The table, resolved; `None` without one.
pub(super) fn profile(
    cx: &Ctx<'_>,
    spec: Option<&Spanned<ProfileSpec>>,
) -> Result<Option<Profile>, SpecError> {
    let Some(spec) = spec else {
        return Ok(None);
    };
    let p = spec.get_ref();
    let frequency = match &p.frequency {
        Some(f) if !(1..=MAX_FREQUENCY).contains(f.get_ref()) => {
            return Err(cx.err(
                f.span(),
                format!(
                    "expected a frequency from 1 to {MAX_FREQUENCY} samples per second, found {}",
                    f.get_ref()
                ),
            ))
        }
        Some(f) => *f.get_ref(),
        None => DEFAULT_FREQUENCY,
    };
    let call_graph = match word(&p.call_graph) {
        None | Some(("fp", _)) => CallGraph::Fp,
        Some(("dwarf", _)) => CallGraph::Dwarf,
        Some((other, span)) => {
            return Err(cx.err(
                span,
                format!("expected \"fp\" or \"dwarf\", found \"{other}\""),
            ))
        }
    };
    let trials = match word(&p.trials) {
        None | Some(("extra", _)) => ProfileTrials::Extra,
        Some(("counted", _)) => ProfileTrials::Counted,
        Some((other, span)) => {
            return Err(cx.err(
                span,
                format!("expected \"extra\" or \"counted\", found \"{other}\""),
            ))
        }
    };
    let event = match word(&p.event) {
        None => "cpu-clock".to_string(),
        Some((e, span)) if e.is_empty() || e.contains(char::is_whitespace) || e.contains(',') => {
            return Err(cx.err(
                span,
                format!("expected one perf event name such as \"cpu-clock\" or \"cycles\", found \"{e}\""),
            ))
        }
        Some((e, _)) => e.to_string(),
    };
    let perf = match word(&p.perf) {
        Some(("", span)) => return Err(cx.err(span, "expected the path of perf, found nothing")),
        other => other.map(|(w, _)| w.to_string()),
    };
    Ok(Some(Profile {
        frequency,
        call_graph,
        trials,
        kernel: p.kernel.unwrap_or(true),
        event,
        perf,
    }))
}

/// A string value, trimmed, with its span.
fn word(v: &Option<Spanned<String>>) -> Option<(&str, std::ops::Range<usize>)> {
    v.as_ref().map(|s| (s.get_ref().trim(), s.span()))
}
