//! `resplab calibrate`'s flags, as the user typed them, turned into what a calibration
//! measures ([`Options`]): the trial lengths and budget read as durations, the target
//! MDE checked, the connection to `--address` (TLS, user, the variable holding the
//! password). Every refusal is a [`CalibrateError::Invalid`] that names its flag. The
//! environment is the caller's: it says which variables are set.

use super::setup::{Options, WorkloadFlags};
use super::CalibrateError;
use crate::model::{Connect, TlsConnect};
use crate::words::parse_positive_duration;
use resplab_results::calibration::secs_text;
use std::path::PathBuf;
use std::time::Duration;

/// The flags of `resplab calibrate`, as given, in the order `--help` lists them.
#[derive(Clone, Debug, Default, PartialEq, clap::Args)]
pub struct Given {
    /// Server command started fresh for every trial ({port} and {dir} are filled in).
    /// Default: a throwaway redis-server with persistence off, or the baseline variant's
    /// server of --experiment.
    #[arg(
        long,
        value_name = "CMD",
        conflicts_with = "address",
        help_heading = "Target"
    )]
    pub server: Option<String>,
    /// A server that is already running, HOST:PORT (only checked with PING; it is not
    /// restarted between trials).
    #[arg(long, value_name = "HOST:PORT", help_heading = "Target")]
    pub address: Option<String>,
    /// --address: connect with TLS.
    #[arg(long, requires = "address", help_heading = "Target")]
    pub tls: bool,
    /// --address: the CA certificate that signed the server's (implies --tls).
    #[arg(
        long,
        value_name = "FILE",
        requires = "address",
        help_heading = "Target"
    )]
    pub cacert: Option<String>,
    /// --address: do not verify the server's certificate (implies --tls; said in the
    /// results).
    #[arg(long, requires = "address", help_heading = "Target")]
    pub insecure: bool,
    /// --address: ACL user for AUTH.
    #[arg(
        long,
        value_name = "NAME",
        requires = "address",
        help_heading = "Target"
    )]
    pub user: Option<String>,
    /// --address: the environment variable that holds the password (default:
    /// REDISCLI_AUTH when it is set). Only the variable's name is stored.
    #[arg(
        long = "password-env",
        value_name = "VAR",
        requires = "address",
        help_heading = "Target"
    )]
    pub password_env: Option<String>,
    /// Take the workload from this experiment file (see --workload).
    #[arg(
        long,
        value_name = "FILE",
        requires = "workload",
        help_heading = "Workload"
    )]
    pub experiment: Option<PathBuf>,
    /// The workload of --experiment to calibrate, by name.
    #[arg(
        long,
        value_name = "NAME",
        requires = "experiment",
        help_heading = "Workload"
    )]
    pub workload: Option<String>,
    #[command(flatten)]
    pub flags: WorkloadFlags,
    /// Wall time for the whole calibration (e.g. 5m, 90s).
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    pub budget: String,
    /// The trial lengths to measure, comma-separated.
    #[arg(long, value_name = "LIST", default_value = "0.5s,1s,2s")]
    pub durations: String,
    /// The smallest effect, in percent, the budget table should find a plan for.
    #[arg(long = "target-mde", value_name = "PCT", default_value_t = 1.0)]
    pub target_mde_pct: f64,
    /// The metric (default: ops_per_sec, or the primary metric of --experiment).
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
    /// Load before each trial that is not recorded (default 200ms, or the file's).
    #[arg(long, value_name = "DURATION")]
    pub warmup: Option<String>,
    /// Seed of the trial order and the request streams.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// `--method duet`: the A/A rounds run as duets (set from `--method`).
    #[arg(skip)]
    pub duet: bool,
}

/// The budget and trial lengths of `--budget` and `--durations`, checked (trial
/// lengths sorted, each once), and `--target-mde` above zero.
///
/// # Errors
/// [`CalibrateError::Invalid`] naming the flag.
pub fn budget(g: &Given) -> Result<(Duration, Vec<Duration>), CalibrateError> {
    let invalid = |flag: &str, m: String| CalibrateError::Invalid(format!("{flag}: {m}"));
    let budget = parse_positive_duration(&g.budget).map_err(|e| invalid("--budget", e))?;
    let mut durations = Vec::new();
    for d in g.durations.split(',').filter(|s| !s.trim().is_empty()) {
        durations.push(parse_positive_duration(d).map_err(|e| invalid("--durations", e))?);
    }
    durations.sort();
    if let Some(w) = durations.windows(2).find(|w| w[0] == w[1]) {
        let twice = secs_text(w[0].as_secs_f64());
        let m = format!(
            "expected each trial length once, found {twice} twice in \"{}\"",
            g.durations
        );
        return Err(invalid("--durations", m));
    }
    if durations.is_empty() {
        let m = format!(
            "expected at least one trial length, found \"{}\"",
            g.durations
        );
        return Err(invalid("--durations", m));
    }
    if !(g.target_mde_pct > 0.0 && g.target_mde_pct.is_finite()) {
        let m = format!("expected a percentage above 0, found {}", g.target_mde_pct);
        return Err(invalid("--target-mde", m));
    }
    Ok((budget, durations))
}

/// What a calibration measures, from its flags; `is_set` says whether an environment
/// variable is set.
///
/// # Errors
/// [`CalibrateError::Invalid`] naming the flag: a bad `--warmup`, a `--password-env`
/// variable that is not set.
pub fn options(
    g: &Given,
    durations: Vec<Duration>,
    budget: Duration,
    is_set: &dyn Fn(&str) -> bool,
) -> Result<Options, CalibrateError> {
    let warmup = match &g.warmup {
        Some(w) => Some(
            crate::words::parse_duration(w)
                .map_err(|e| CalibrateError::Invalid(format!("--warmup: {e}")))?,
        ),
        None => None,
    };
    Ok(Options {
        experiment: g
            .experiment
            .clone()
            .map(|f| (f, g.workload.clone().unwrap_or_default())),
        flags: g.flags.clone(),
        server: g.server.clone(),
        address: g.address.clone(),
        connect: connect(g, is_set)?,
        warmup,
        metric: g.metric.clone(),
        seed: g.seed,
        durations,
        budget,
        target_mde_pct: g.target_mde_pct,
        duet: g.duet,
    })
}

/// How to connect to `--address`: TLS (`--tls`, or implied by `--cacert` and
/// `--insecure`), user, and the name of the variable holding the password
/// (`--password-env`, else `REDISCLI_AUTH` when it is set).
fn connect(g: &Given, is_set: &dyn Fn(&str) -> bool) -> Result<Connect, CalibrateError> {
    let tls = (g.tls || g.cacert.is_some() || g.insecure).then(|| TlsConnect {
        cacert: g.cacert.clone(),
        insecure: g.insecure,
        ..TlsConnect::default()
    });
    let password_env = match &g.password_env {
        Some(v) if !is_set(v) => {
            return Err(CalibrateError::Invalid(format!(
                "--password-env {v}: the environment variable {v} is not set"
            )))
        }
        Some(v) => Some(v.clone()),
        None if g.address.is_some() && is_set("REDISCLI_AUTH") => Some("REDISCLI_AUTH".into()),
        None => None,
    };
    Ok(Connect {
        tls,
        user: g.user.clone(),
        password_env,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn given() -> Given {
        Given {
            budget: "5m".into(),
            durations: "2s,0.5s,1s".into(),
            target_mde_pct: 1.0,
            ..Given::default()
        }
    }

    fn refusal(g: &Given) -> String {
        budget(g).unwrap_err().to_string()
    }

    #[test]
    fn trial_lengths_are_sorted_and_each_given_once() {
        let (b, d) = budget(&given()).unwrap();
        assert_eq!(b, Duration::from_secs(300));
        assert_eq!(d, [0.5, 1.0, 2.0].map(Duration::from_secs_f64));
        let g = Given {
            durations: "1s,1000ms".into(),
            ..given()
        };
        assert!(refusal(&g).starts_with("--durations: expected each trial length once, found"));
        let g = Given {
            durations: " , ".into(),
            ..given()
        };
        assert_eq!(
            refusal(&g),
            "--durations: expected at least one trial length, found \" , \""
        );
    }

    #[test]
    fn refusals_name_their_flag() {
        let g = Given {
            budget: "0s".into(),
            ..given()
        };
        assert_eq!(
            refusal(&g),
            "--budget: expected a duration above zero, found \"0s\""
        );
        let g = Given {
            durations: "1s,0".into(),
            ..given()
        };
        assert!(refusal(&g).starts_with("--durations: expected a duration above zero"));
        let g = Given {
            target_mde_pct: f64::NAN,
            ..given()
        };
        assert_eq!(
            refusal(&g),
            "--target-mde: expected a percentage above 0, found NaN"
        );
        let g = Given {
            warmup: Some("soon".into()),
            ..given()
        };
        let e = options(&g, Vec::new(), Duration::ZERO, &|_| false).unwrap_err();
        assert!(e.to_string().starts_with("--warmup: "), "{e}");
    }

    #[test]
    fn the_password_variable_must_be_set_and_rediscli_auth_is_the_default() {
        let g = Given {
            address: Some("127.0.0.1:6379".into()),
            cacert: Some("ca.pem".into()),
            ..given()
        };
        let o = options(&g, Vec::new(), Duration::ZERO, &|v| v == "REDISCLI_AUTH").unwrap();
        assert_eq!(o.connect.password_env.as_deref(), Some("REDISCLI_AUTH"));
        assert!(o.connect.tls.is_some_and(|t| !t.insecure));
        let o = options(&g, Vec::new(), Duration::ZERO, &|_| false).unwrap();
        assert_eq!(o.connect.password_env, None);
        let g = Given {
            password_env: Some("PW".into()),
            ..g
        };
        let e = options(&g, Vec::new(), Duration::ZERO, &|_| false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "--password-env PW: the environment variable PW is not set"
        );
    }
}
