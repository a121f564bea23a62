//! A redis-benchmark line ([`RbLine`], read by `resplab_workload::redis_benchmark`) as
//! the words of a run: the same [`BenchWords`] `resplab bench` fills from its flags, so
//! one validator checks both and a value is refused with the same message in both.
//!
//! The counting is redis-benchmark's and bench's alike: `-c` connections in all, `-n`
//! requests of each test, each test on fresh connections. What differs from bench is
//! the target: redis-benchmark with no `-h`/`-p`/`-s`/`-u` measures 127.0.0.1:6379, so
//! this mode never starts a throwaway server.

use super::bench::{BenchPlan, BenchWords};
use super::workload::WorkloadWords;
use super::WordsError;
use resplab_workload::redis_benchmark::RbLine;
use std::path::PathBuf;

/// The line's words, resolved into a run's configuration and workload.
///
/// # Errors
/// A [`WordsError`] naming the option, the value and what was expected.
pub fn resolve(line: &RbLine) -> Result<BenchPlan, WordsError> {
    let mut plan = words(line).resolve()?;
    plan.config.client_tracking = line.enable_tracking;
    // -k 0: redis-benchmark frees a client once its pipeline's replies are in and opens
    // a fresh one, for every reply batch but the test's last.
    plan.config.renew = line.reconnect.then_some(crate::Renew {
        every: u64::from(plan.config.pipeline),
        after_last: true,
    });
    Ok(plan)
}

/// The line's words as `resplab bench` words.
pub fn words(line: &RbLine) -> BenchWords {
    let no_target =
        line.host.is_none() && line.port.is_none() && line.socket.is_none() && line.uri.is_none();
    let command = line.command_template();
    BenchWords {
        host: if no_target {
            Some("127.0.0.1".into())
        } else {
            line.host.clone()
        },
        port: if no_target {
            Some("6379".into())
        } else {
            line.port.clone()
        },
        socket: line.socket.as_ref().map(PathBuf::from),
        uri: line.uri.clone(),
        password: line.password.clone(),
        user: line.user.clone(),
        select: line.dbnum.map(|d| d.to_string()),
        resp: if line.resp3 { "3" } else { "2" }.into(),
        protocol: "resp".into(),
        tls: line.tls,
        cacert: line.cacert.as_ref().map(PathBuf::from),
        cacertdir: line.cacertdir.as_ref().map(PathBuf::from),
        cert: line.cert.as_ref().map(PathBuf::from),
        key: line.key.as_ref().map(PathBuf::from),
        sni: line.sni.clone(),
        insecure: line.insecure,
        tls_ciphersuites: line.tls_ciphersuites.clone(),
        cluster: line.cluster,
        // valkey-benchmark's --duration replaces -n.
        requests: line.duration.is_none().then(|| line.requests.clone()),
        test_time: line.duration.clone(),
        warmup: line.warmup.clone().unwrap_or_else(|| "0".into()),
        clients: line.clients.clone(),
        pipeline: line.pipeline.clone(),
        threads: line.threads.clone(),
        rate: line.rps.clone(),
        arrivals: "constant".into(),
        seed: line.seed.clone(),
        workload: WorkloadWords {
            // redis-benchmark ignores -t when a command is given.
            tests: if command.is_some() {
                None
            } else {
                line.tests.clone()
            },
            random_keys: line.random_keys.clone(),
            data_size: line.data_size.clone(),
            commands: command.into_iter().collect(),
            ..WorkloadWords::default()
        },
        ..BenchWords::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Budget, Target};
    use resplab_workload::redis_benchmark::{parse, Invocation};

    fn plan(line: &str) -> Result<BenchPlan, WordsError> {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        let Ok(Invocation::Run(l)) = parse(&args) else {
            panic!("{line}")
        };
        resolve(&l)
    }

    #[test]
    fn no_target_is_the_local_default_port() {
        let p = plan("-n 10").unwrap();
        assert_eq!(
            p.target,
            Some(Target::Tcp {
                host: "127.0.0.1".into(),
                port: 6379
            })
        );
        assert_eq!(p.config.clients, 50);
        assert_eq!(p.config.budget, Budget::Requests(10));
    }

    #[test]
    fn valkey_words_and_database() {
        let p = plan("-p 7000 --duration 2 --rps 500 --warmup 1 --dbnum 2 -c 4 --seed 9").unwrap();
        assert_eq!(
            p.config.budget,
            Budget::Duration(std::time::Duration::from_secs(2))
        );
        assert_eq!(p.config.open_loop.map(|o| o.rate_per_sec), Some(500.0));
        assert_eq!(p.config.db, Some(2));
        assert_eq!(p.config.seed, 9);
    }

    #[test]
    fn bad_values_name_the_option() {
        let e = plan("-c 0").unwrap_err().to_string();
        assert!(e.contains("-c"), "{e}");
        let e = plan("-t nosuchtest").unwrap_err().to_string();
        assert!(e.contains("nosuchtest"), "{e}");
    }
}
