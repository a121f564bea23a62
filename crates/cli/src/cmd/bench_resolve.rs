//! `resplab bench`'s flags handed, once, to the engine's one conversion of a run's words
//! ([`resplab_engine::words`]): the run's configuration and workload come from there;
//! what to print and write stays here.

use super::bench::BenchArgs;
use resplab_engine::words;
use resplab_engine::words::bench::{BenchPlan, BenchWords};
use std::path::PathBuf;

/// Everything a bench run needs, validated.
#[derive(Debug)]
pub struct Resolved {
    /// The run's configuration and workload; no target: start a throwaway server.
    pub plan: BenchPlan,
    pub server_bin: Option<PathBuf>,
    pub output: OutputOptions,
}

/// What to print and write after the run.
#[derive(Debug)]
pub struct OutputOptions {
    pub json: Option<String>,
    pub csv: bool,
    pub quiet: bool,
    pub hdr_out: Option<String>,
    pub progress: bool,
    pub per_node: bool,
    /// `--max-error-rate`: the share of failed requests (percent) above which the run
    /// exits with code 3.
    pub max_error_pct: Option<f64>,
}

/// Resolves the flags into a validated configuration.
///
/// # Errors
/// A [`resplab_engine::words::WordsError`] naming the flag, the value and what was
/// expected.
pub fn resolve_args(a: &BenchArgs) -> anyhow::Result<Resolved> {
    let mut plan = words(a).resolve()?;
    plan.config.cluster_wait = resplab_experiment::words::parse_duration(&a.cluster_wait)
        .map_err(|e| words::flag_error("--cluster-wait", &a.cluster_wait, e))?;
    Ok(Resolved {
        plan,
        server_bin: a.server_bin.clone(),
        output: OutputOptions {
            json: a.json.clone(),
            csv: a.csv,
            quiet: a.quiet,
            hdr_out: a.hdr_out.clone(),
            progress: !a.no_progress,
            per_node: a.per_node,
            max_error_pct: a
                .max_error_rate
                .as_deref()
                .map(|v| words::number("--max-error-rate", v, 0.0, 100.0))
                .transpose()?,
        },
    })
}

/// The run's words as given on the command line.
fn words(a: &BenchArgs) -> BenchWords {
    BenchWords {
        host: a.host.clone(),
        port: a.port.clone(),
        socket: a.socket.clone(),
        uri: a.uri.clone(),
        password: a.password.clone(),
        user: a.user.clone(),
        select: a.select.clone(),
        resp: a.resp.clone(),
        protocol: a.protocol.clone(),
        tls: a.tls,
        cacert: a.cacert.clone(),
        cacertdir: a.cacertdir.clone(),
        cert: a.cert.clone(),
        key: a.key.clone(),
        sni: a.sni.clone(),
        insecure: a.insecure,
        tls_protocols: a.tls_protocols.clone(),
        tls_ciphersuites: a.tls_ciphersuites.clone(),
        cluster: a.cluster,
        read_from_replicas: a.read_from_replicas,
        server_bin: a.server_bin.clone(),
        requests: a.requests.clone(),
        test_time: a.test_time.clone(),
        warmup: a.warmup.clone(),
        clients: a.clients.clone(),
        pipeline: a.pipeline.clone(),
        threads: a.threads.clone(),
        rate: a.rate.clone(),
        arrivals: a.arrivals.clone(),
        seed: a.seed.clone(),
        shard: a.shard.clone(),
        per_shard: a.per_shard,
        start_at: a.start_at.clone(),
        workload_spec: a.workload_spec.clone(),
        ..a.workload.words()
    }
}
