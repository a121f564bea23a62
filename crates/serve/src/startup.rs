//! What `resplab serve` checks before it starts and says once it listens: a
//! [`Config`]'s knobs checked against each other ([`Config::validate`], each error
//! naming the flag), and the lines that describe the running server
//! ([`Running::banner`]). The command line maps its flags onto a [`Config`] and prints.

use crate::{Config, Running};

/// A knob that does not fit, named by its `resplab serve` flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

impl Config {
    /// Checks the knobs: threads within 1..=1024, percentages and seconds finite and not
    /// negative, and the knobs that only work in pairs given as pairs.
    ///
    /// # Errors
    /// The first knob that does not fit, with its flag, what was expected and what was
    /// found.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: String| Err(ConfigError(m));
        if self.threads == 0 || self.threads > 1024 {
            return bad(format!(
                "--threads: expected 1 to 1024, found {}",
                self.threads
            ));
        }
        for (flag, value, what) in [
            ("--slowdown", self.slowdown_pct, "a percentage"),
            ("--stall-every", self.stall_every_s, "seconds"),
            ("--cold-slowdown", self.cold_slowdown_pct, "a percentage"),
        ] {
            if !(value >= 0.0 && value.is_finite()) {
                return bad(format!("{flag}: expected {what} >= 0, found {value}"));
            }
        }
        if (self.cold_ms > 0) != (self.cold_slowdown_pct > 0.0) {
            return bad("--cold-ms and --cold-slowdown go together: give both, or neither".into());
        }
        if (self.stall_ms > 0) != (self.stall_every_s > 0.0) {
            return bad("--stall and --stall-every go together: give both, or neither".into());
        }
        Ok(())
    }
}

impl Running {
    /// The lines that say where the server started by `cfg` listens, on what protocols,
    /// with which knobs set and, with a slowdown, what capacity that leaves.
    pub fn banner(&self, cfg: &Config) -> Vec<String> {
        let socket = cfg
            .unixsocket
            .as_ref()
            .map_or(String::new(), |p| format!(" and {}", p.display()));
        let mut lines = vec![format!(
            "resplab serve: listening on {}:{}{socket} with {} thread(s); in memory only, not a Redis replacement",
            cfg.bind,
            self.port(),
            cfg.threads
        )];
        if let Some(p) = self.respb_port() {
            lines.push(format!("resplab serve: RESPB on {}:{p}", cfg.bind));
        }
        let knobs: Vec<String> = self
            .knobs
            .all()
            .into_iter()
            .filter(|(n, v)| n != "maxclients" && v != "0")
            .map(|(n, v)| format!("{n} {v}"))
            .collect();
        if !knobs.is_empty() {
            lines.push(format!("resplab serve: knobs: {}", knobs.join(", ")));
        }
        if cfg.slowdown_pct > 0.0 {
            let pct = cfg.slowdown_pct;
            lines.push(format!(
                "resplab serve: slowdown {pct}%: every batch of work is followed by {pct}% more busy time, so capacity is 1/{:.4} of the server's at any load",
                1.0 + pct / 100.0
            ));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knobs_are_checked_with_their_flags() {
        assert!(Config::default().validate().is_ok());
        let threads = Config {
            threads: 0,
            ..Config::default()
        };
        assert_eq!(
            threads.validate().unwrap_err().0,
            "--threads: expected 1 to 1024, found 0"
        );
        let slowdown = Config {
            slowdown_pct: f64::NAN,
            ..Config::default()
        };
        assert!(slowdown
            .validate()
            .unwrap_err()
            .0
            .starts_with("--slowdown:"));
        let stall = Config {
            stall_ms: 5,
            ..Config::default()
        };
        assert!(stall.validate().unwrap_err().0.contains("--stall-every"));
        let cold = Config {
            cold_slowdown_pct: 10.0,
            ..Config::default()
        };
        assert!(cold.validate().unwrap_err().0.contains("--cold-ms"));
    }

    #[test]
    fn the_banner_names_the_port_and_the_knobs_set() {
        let cfg = Config {
            port: 0,
            work_ns: 250,
            slowdown_pct: 25.0,
            ..Config::default()
        };
        let server = crate::start(&cfg).unwrap();
        let lines = server.banner(&cfg);
        assert!(
            lines[0].starts_with(&format!(
                "resplab serve: listening on 127.0.0.1:{}",
                server.port()
            )),
            "{lines:?}"
        );
        assert!(lines.iter().any(|l| l.contains("work-ns 250")), "{lines:?}");
        assert!(lines.iter().any(|l| l.contains("1/1.2500")), "{lines:?}");
    }
}
