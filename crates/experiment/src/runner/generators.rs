//! The executor of a workload spread over several load generators: one shard per
//! generator (local processes or remote hosts through a launcher), started together and
//! merged exactly into one record.

use super::*;

/// The record of a trial whose generators produced nothing: no requests, no time.
pub(super) fn empty_record() -> RunRecord {
    let tool = resplab_results::ToolInfo {
        name: "resplab".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        git_revision: None,
    };
    RunRecord::empty(tool, resplab_store::write::now_unix_ms())
}

impl Runner<'_> {
    /// The trial's load from the `[[generator]]` hosts: one shard each, started together,
    /// merged. `None` when the stop token fired. Failures are returned as messages (the
    /// trial is then invalid) with what the other shards measured.
    pub(super) fn run_generators(
        &mut self,
        workload: &crate::model::Workload,
        spec: &resplab_workload::WorkloadSpec,
        cfg: &RunConfig,
        host: &str,
        port: u16,
    ) -> Option<(RunRecord, Vec<String>)> {
        let exp = self.exp;
        let args = shard_args(spec, cfg);
        let auth_env: Vec<(String, String)> = cfg
            .credentials
            .as_ref()
            .map(|c| vec![("REDISCLI_AUTH".to_string(), c.password.clone())])
            .unwrap_or_default();
        let expected = expected_duration(exp, workload, cfg);
        let lead = exp
            .generators
            .iter()
            .map(|g| g.start_lead)
            .max()
            .unwrap_or_default();
        let start_at = resplab_engine::unix_ms_now() / 1e3 + lead.as_secs_f64();
        let commands =
            match crate::generators::shard_commands(&exp.generators, host, port, &args, start_at) {
                Ok(c) => c,
                Err(e) => return Some((empty_record(), vec![e])),
            };
        let results = crate::generators::run_shards(
            &commands,
            &auth_env,
            expected + Duration::from_secs(60),
            self.stop,
        );
        if results.interrupted {
            return None;
        }
        let mut failures = results.failures;
        if results.records.is_empty() {
            failures.push("no generator returned a result".into());
            return Some((empty_record(), failures));
        }
        match resplab_results::merge::merge(&results.records, !failures.is_empty()) {
            Ok(record) => Some((record, failures)),
            Err(e) => {
                failures.push(e.0);
                Some((empty_record(), failures))
            }
        }
    }
}

/// The command-line flags of every shard: the trial's seed, connection shape, warm-up,
/// workload, TLS, user, wire protocol, budget and open-loop rate.
fn shard_args(spec: &resplab_workload::WorkloadSpec, cfg: &RunConfig) -> Vec<String> {
    use base64::Engine as _;
    let spec_json = serde_json::to_vec(spec).unwrap_or_default();
    let mut args: Vec<String> = vec![
        "--seed".into(),
        spec.seed.to_string(),
        "-c".into(),
        cfg.clients.to_string(),
        "-P".into(),
        cfg.pipeline.to_string(),
        "--threads".into(),
        cfg.threads.to_string(),
        "--warmup".into(),
        format!("{}", cfg.warmup.as_secs_f64()),
        "--workload-spec".into(),
        base64::engine::general_purpose::STANDARD.encode(spec_json),
    ];
    // TLS travels as flags (the CA and client certificate paths must exist on every
    // generator host); a user as --user, its password only as REDISCLI_AUTH in the
    // environment the launcher passes on (never on a command line).
    if let Some(t) = &cfg.tls {
        args.push("--tls".into());
        for (flag, path) in [
            ("--cacert", &t.ca_file),
            ("--cacertdir", &t.ca_dir),
            ("--cert", &t.cert),
            ("--key", &t.key),
        ] {
            if let Some(p) = path {
                args.extend([flag.to_string(), p.display().to_string()]);
            }
        }
        if let Some(sni) = &t.sni {
            args.extend(["--sni".into(), sni.clone()]);
        }
        if t.insecure {
            args.push("--insecure".into());
        }
    }
    if let Some(user) = cfg.credentials.as_ref().and_then(|c| c.user.as_ref()) {
        args.extend(["--user".into(), user.clone()]);
    }
    if cfg.wire == resplab_engine::Wire::Respb {
        args.extend(["--protocol".into(), "respb".into()]);
    }
    match cfg.budget {
        Budget::Requests(n) => args.extend(["-n".into(), n.to_string()]),
        Budget::Duration(d) => {
            args.extend(["--test-time".into(), format!("{}", d.as_secs_f64())]);
        }
    }
    if let Some(ol) = &cfg.open_loop {
        args.extend([
            "--rate".into(),
            format!("{}", ol.rate_per_sec),
            "--arrivals".into(),
            ol.arrivals.as_str().into(),
        ]);
    }
    args
}

/// How long the shards are expected to take: the longest start lead, plus the measured
/// time of every phase (an hour when the budget is a request count).
fn expected_duration(
    exp: &Experiment,
    workload: &crate::model::Workload,
    cfg: &RunConfig,
) -> Duration {
    let mut expected = exp
        .generators
        .iter()
        .map(|g| g.start_lead)
        .max()
        .unwrap_or_default();
    let phases = workload.tests.words().len().max(1) as u32;
    match cfg.budget {
        Budget::Requests(_) => expected += Duration::from_secs(3600),
        Budget::Duration(d) => expected += (d + cfg.warmup) * phases,
    }
    expected
}
