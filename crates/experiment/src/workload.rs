//! From an experiment's `[[workload]]` to the workload crate's [`WorkloadSpec`].
//!
//! The file uses the words of `resplab bench` (`tests`, `ratio`, `key_pattern`,
//! `data_size_range`, …) and each value is checked by the same parser the bench flag
//! uses, so a value valid on the command line is valid in a file and the messages match.
//! Three kinds follow from which keys are present, as in `bench`: `tests` → the
//! redis-benchmark catalog; `command` → command templates; otherwise a memtier-style
//! SET:GET mix (`ratio`, `key_pattern`, sizes).
//!
//! Preload keys are written under the names the workload's requests will use:
//! `key:` plus 12 zero-padded digits for catalog tests (redis-benchmark's `-r` form),
//! `memtier-` plus the decimal number for mixes, so GETs hit the preloaded data.

use crate::model::Workload;
use resplab_workload::flags::{self, WorkloadFlags};
use resplab_workload::{KeySpace, ValueSize, WorkloadSpec};

pub(crate) fn check_tests(v: &str) -> Result<(), String> {
    flags::parse_tests(v).map(|_| ()).map_err(|e| e.to_string())
}
/// True when the workload is a memtier-style mix (no `tests`, no `command`).
pub fn is_mix(w: &Workload) -> bool {
    w.tests.is_empty() && w.commands.is_empty()
}

/// Builds the workload crate's spec for one trial.
///
/// Every word was parsed when the file was read; nothing is parsed again here. The spec
/// itself comes from the one conversion bench uses too, [`WorkloadFlags::into_spec`].
///
/// # Errors
/// A key pattern of the wrong form for the workload's kind (`S:G` for templates, one
/// letter for a mix), or a combination [`WorkloadSpec::validate`] refuses.
pub fn to_spec(w: &Workload, seed: u64) -> Result<WorkloadSpec, String> {
    let e = |x: resplab_workload::WorkloadError| format!("workload \"{}\": {x}", w.name);
    if let Some(spec) = tool_spec(w, seed)? {
        return Ok(spec);
    }
    let mix = is_mix(w);
    let tests = w.tests.names().to_vec();
    let mut commands = Vec::new();
    for c in &w.commands {
        let mut spec = c.value().clone();
        if let Some(p) = &w.key_pattern {
            spec.key_pattern = p.value().one(p.text()).map_err(e)?;
        }
        commands.push(spec);
    }
    let key_pattern = match &w.key_pattern {
        Some(p) if mix => Some(p.value().set_get(p.text()).map_err(e)?),
        _ => None,
    };
    // A file's templates default to 3-byte values like its tests (bench's `--command`
    // takes memtier's 32): given here so that stored experiments measure what they did.
    let values = match (&w.data_size_range, &w.data_size_list) {
        (Some(r), _) => r.value().clone(),
        (None, Some(l)) => l.value().clone(),
        (None, None) => ValueSize::Fixed {
            bytes: w.data_size.unwrap_or(if mix { 32 } else { 3 }) as usize,
        },
    };
    let words = WorkloadFlags {
        tests,
        commands,
        mix,
        ratio: w.ratio.as_ref().map(|r| *r.value()),
        key_pattern,
        keys: KeySpace {
            maximum: w
                .keyspace
                .map_or(KeySpace::default().maximum, |k| k.saturating_sub(1)),
            ..KeySpace::default()
        },
        random_keyspace: w.keyspace,
        data_size: Some(w.data_size.unwrap_or(3) as usize),
        values: Some(values),
        expiry: None,
    };
    words.into_spec(seed).map_err(e)
}

/// The spec of a workload given as a memtier or redis-benchmark line (`None` for any
/// other), with `seed`.
fn tool_spec(w: &Workload, seed: u64) -> Result<Option<WorkloadSpec>, String> {
    let mut spec = if let Some(m) = &w.memtier {
        m.value().workload.clone()
    } else if let Some(r) = &w.redis_benchmark {
        resplab_engine::words::redis_benchmark::resolve(r.value())
            .map_err(|e| format!("workload \"{}\": {e}", w.name))?
            .spec
    } else {
        return Ok(None);
    };
    spec.seed = seed;
    Ok(Some(spec))
}

/// The compiled workload of one trial: memtier's clients share one key stream unless
/// the line says `--distinct-client-seed`, as in `resplab memtier`.
///
/// # Errors
/// A spec the workload crate refuses.
pub fn compile(w: &Workload, spec: &WorkloadSpec) -> Result<resplab_workload::Workload, String> {
    let compiled =
        resplab_workload::Workload::new(spec).map_err(|e| format!("workload `{}`: {e}", w.name))?;
    Ok(match &w.memtier {
        Some(m) if !m.value().distinct_client_seed => compiled.with_shared_streams(),
        _ => compiled,
    })
}

/// The name of preload key `index` for workload `w`.
pub fn preload_key(w: &Workload, prefix: &str, index: u64) -> String {
    if w.tests.is_empty() {
        format!("{prefix}{index}")
    } else {
        format!("{prefix}{index:012}")
    }
}

/// The default preload key prefix for a workload's kind.
pub fn default_prefix(w: &Workload) -> &'static str {
    if w.tests.is_empty() {
        "memtier-"
    } else {
        "key:"
    }
}
