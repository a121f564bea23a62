//! Where a tracked measurement comes from: its values, host and configuration.

use super::HistoryError;
use resplab_results::history::{fingerprint, values_of, TrackedPoint, TrackedValue};
use resplab_results::import::{self, Interner, PlainOptions, StoredSource as _};
use resplab_results::sample::Observation;
use resplab_results::{HostInfo, RunRecord};
use resplab_store::Store;
use serde_json::Value;

/// What to read a measurement from.
#[derive(Clone, Debug, PartialEq)]
pub enum TrackSource {
    /// A stored experiment, by name.
    Experiment(String),
    /// Files in any format `resplab compare` imports; each file is one trial.
    Files(Vec<String>),
}

/// Reads the source into a point with its values, time, host and configuration (its
/// commit, tags and id are left for the caller).
///
/// # Errors
/// [`HistoryError::Import`] for a file that does not import or an unknown experiment;
/// [`HistoryError::Input`] when the source holds no values or run records disagree on
/// host or configuration.
pub fn measure(store: &mut Store, source: &TrackSource) -> Result<TrackedPoint, HistoryError> {
    let point = match source {
        TrackSource::Experiment(name) => from_experiment(store, name)?,
        TrackSource::Files(files) => from_files(files)?,
    };
    if point.values.is_empty() {
        return Err(HistoryError::Input(format!(
            "{}: no values to track (every value was flagged or missing)",
            point.source
        )));
    }
    Ok(point)
}

fn from_experiment(store: &mut Store, name: &str) -> Result<TrackedPoint, HistoryError> {
    let observations = store.load(name, None)?;
    let info = store.experiment(name)?;
    let (_, mut spec) = store.experiment_spec(info.id)?;
    if let Value::Object(map) = &mut spec {
        map.remove("name");
    }
    let first_valid = store.trials(info.id)?.into_iter().find(|t| t.valid);
    let (host, started) = match first_valid {
        Some(t) => (store.run_record(t.id)?.host, t.started_at_unix_ms),
        None => (resplab_engine::host::detect(), info.created_at_unix_ms),
    };
    Ok(point(
        format!("db:{name}"),
        &host,
        fingerprint(&spec),
        started,
        values_by_variant(&observations),
    ))
}

/// Values per workload, named `variant/workload` when the experiment has several variants.
fn values_by_variant(observations: &[Observation]) -> Vec<TrackedValue> {
    let first = observations.first().map(|o| o.label.clone());
    if observations
        .iter()
        .all(|o| Some(&o.label) == first.as_ref())
    {
        return values_of(observations);
    }
    let renamed: Vec<Observation> = observations
        .iter()
        .map(|o| Observation {
            workload: format!("{}/{}", o.label, o.workload).into(),
            ..o.clone()
        })
        .collect();
    values_of(&renamed)
}

fn from_files(files: &[String]) -> Result<TrackedPoint, HistoryError> {
    let mut interner = Interner::default();
    let mut observations = Vec::new();
    let mut facts: Option<(HostInfo, String, i64)> = None;
    let mut formats = Vec::new();
    for file in files {
        if file == "-" {
            return Err(HistoryError::Input(
                "FILE -: track reads named files, not standard input (write the output to a \
                 file first)"
                    .into(),
            ));
        }
        let imported =
            import::load_input(file, "tracked", &PlainOptions::default(), &mut interner)?;
        let format = imported.format.map_or("unknown", |f| f.name());
        formats.push(format);
        if imported.format == Some(import::Format::Resplab) {
            let run = read_run(file)?;
            let these = (
                run.host.clone(),
                config_fingerprint(&run),
                run.started_at_unix_ms as i64,
            );
            match &facts {
                Some((host, config, _)) if *host != these.0 || *config != these.1 => {
                    return Err(HistoryError::Input(format!(
                        "{file}: measured on another host or with another configuration than \
                         {}; track it as a point of its own",
                        files[0]
                    )));
                }
                Some(_) => {}
                None => facts = Some(these),
            }
        }
        observations.extend(imported.observations.iter());
    }
    let values = values_of(&observations);
    let (host, config, at) = facts.unwrap_or_else(|| {
        let shape: Vec<(&str, &str)> = values
            .iter()
            .map(|v| (v.workload.as_str(), v.metric.as_str()))
            .collect();
        let config = fingerprint(&serde_json::json!({ "formats": formats, "values": shape }));
        (resplab_engine::host::detect(), config, now_unix_ms())
    });
    Ok(point(files.join(" "), &host, config, at, values))
}

fn read_run(file: &str) -> Result<RunRecord, HistoryError> {
    let bytes = std::fs::read(file).map_err(|source| import::ImportError::Io {
        file: file.to_string(),
        source,
    })?;
    serde_json::from_slice(&bytes)
        .map_err(|e| HistoryError::Input(format!("{file}: not a resplab run record: {e}")))
}

/// The fingerprint of a run's resolved configuration without what changes from run to
/// run of the same benchmark: its seeds and the port of a throwaway server.
fn config_fingerprint(run: &RunRecord) -> String {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(map) => {
                map.remove("seed");
                map.remove("port");
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut config = run.config.clone();
    strip(&mut config);
    fingerprint(&config)
}

fn point(
    source: String,
    host: &HostInfo,
    config: String,
    at: i64,
    values: Vec<TrackedValue>,
) -> TrackedPoint {
    let host_json = serde_json::to_value(host).unwrap_or(Value::Null);
    TrackedPoint {
        id: 0,
        measured_at_unix_ms: at,
        commit: None,
        host_fingerprint: fingerprint(&host_json),
        host: host_json,
        config_fingerprint: config,
        tags: Vec::new(),
        source,
        values,
    }
}

fn now_unix_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use resplab_results::{fixture, LatencyUs};

    fn run(ops: f64, hostname: &str, config: Value) -> RunRecord {
        let mut h = resplab_stats::hist::LatencyHistogram::new();
        h.record(50_000);
        let latency = LatencyUs {
            mean: 50.0,
            p50: 50.0,
            p90: 60.0,
            p99: 70.0,
            p99_9: 80.0,
            max: 90.0,
        };
        let mut r = fixture::run_record(fixture::summary(1000, ops, latency, (1, 1), &h));
        r.host = fixture::host(hostname, "cpu", None);
        r.config = config;
        r
    }

    fn write(dir: &std::path::Path, name: &str, r: &RunRecord) -> String {
        let p = dir.join(name);
        std::fs::write(&p, serde_json::to_vec(r).unwrap()).unwrap();
        p.to_str().unwrap().to_string()
    }

    #[test]
    fn seeds_and_ports_do_not_change_the_configuration_but_clients_do() {
        let cfg = |seed: u64, port: u16, clients: u32| {
            serde_json::json!({"clients": clients, "seed": seed,
                "target": {"host": "127.0.0.1", "port": port}, "workload": {"seed": seed}})
        };
        let a = config_fingerprint(&run(1.0, "h", cfg(1, 6379, 50)));
        assert_eq!(a, config_fingerprint(&run(1.0, "h", cfg(2, 7000, 50))));
        assert_ne!(a, config_fingerprint(&run(1.0, "h", cfg(1, 6379, 10))));
    }

    #[test]
    fn files_are_trials_of_one_point_and_must_share_their_host() {
        let dir = tempfile::tempdir().unwrap();
        let c = serde_json::json!({"clients": 50});
        let files = vec![
            write(dir.path(), "a.json", &run(100.0, "h1", c.clone())),
            write(dir.path(), "b.json", &run(110.0, "h1", c.clone())),
            write(dir.path(), "c.json", &run(120.0, "h1", c.clone())),
        ];
        let p = from_files(&files).unwrap();
        let ops = p
            .values
            .iter()
            .find(|v| v.workload == "ALL" && v.metric == "ops_per_sec")
            .unwrap();
        assert_eq!((ops.value, ops.trials), (110.0, 3));
        assert_eq!(p.host["hostname"], "h1");
        let other = write(dir.path(), "d.json", &run(100.0, "h2", c));
        let e = from_files(&[files[0].clone(), other])
            .unwrap_err()
            .to_string();
        assert!(e.contains("d.json: measured on another host"), "{e}");
        let e = from_files(&["-".to_string()]).unwrap_err().to_string();
        assert!(e.contains("not standard input"), "{e}");
    }
}
