//! The experiment of one measured pair: a base commit (the baseline) against a
//! candidate, each a variant whose server is the `--server` template with `{src}` set
//! to the commit's worktree, run until decided within the bisect's round limit.
//!
//! Everything else — workloads, budgets, warm-up, order, primary metric, the first
//! variant's environment, settings and hooks — comes from the template experiment: the
//! `--experiment` file, or the one made from `--workload`. Its name is fixed by the
//! bisect and the two commits, so a rerun of the same bisect finds it in the store and
//! reuses it (or continues it, when it was stopped part-way).

use super::git::Commit;
use super::BisectError;
use crate::model::{Experiment, ServerSource, Variant};
use crate::resolve::Overrides;
use crate::sequential::apply_limits;
use crate::words::split_words;
use std::path::Path;

/// The template experiment made from `--workload TESTS` (redis-benchmark test names):
/// one workload of those tests, the default budget unless `overrides` give one.
///
/// # Errors
/// [`BisectError::Input`] naming `--workload` when the tests do not parse.
pub fn workload_template(
    tests: &str,
    overrides: &Overrides,
) -> Result<(Experiment, String), BisectError> {
    let quoted = toml::Value::String(tests.to_string()).to_string();
    let text = format!(
        "[experiment]\nname = \"bisect\"\nrounds = 6\n\n[[variant]]\nname = \"base\"\n\n[[variant]]\nname = \"change\"\n\n\
         [[workload]]\nname = \"workload\"\ntests = {quoted}\n"
    );
    let exp =
        crate::resolve::parse("--workload", &text, overrides).map_err(|e| BisectError::Input {
            flag: "--workload".into(),
            message: format!("`{tests}`: {}", e.message),
        })?;
    Ok((exp, text))
}

/// The words of the `--server` template, checked: it must hold `{port}`.
///
/// # Errors
/// [`BisectError::Input`] naming `--server`.
pub fn server_words(template: &str) -> Result<Vec<String>, BisectError> {
    let input = |message: String| BisectError::Input {
        flag: "--server".into(),
        message,
    };
    let words = split_words(template).map_err(|e| input(format!("`{template}`: {e}")))?;
    if words.is_empty() {
        return Err(input(
            "expected a command with {port}, found nothing".into(),
        ));
    }
    if !words.iter().any(|w| w.contains("{port}")) {
        return Err(input(format!(
            "`{template}` has no {{port}}: expected a command that listens on the port it is given, e.g. `./server --port {{port}}`"
        )));
    }
    Ok(words)
}

/// One side of a pair: a commit and its built worktree.
#[derive(Debug)]
pub struct Side<'a> {
    pub commit: &'a Commit,
    pub src: &'a Path,
}

/// The experiment of `sides[0]` (the baseline) and the others, in this order (see the
/// module documentation): `bisect-ID-FIRST-vs-SECOND[-THIRD]`.
///
/// # Errors
/// [`BisectError::Input`] naming `--max-rounds` when the limit cannot decide.
pub fn experiment(
    template: &Experiment,
    server: &[String],
    bisect_id: &str,
    sides: &[Side<'_>],
    margin: Option<f64>,
    max_rounds: u32,
) -> Result<Experiment, BisectError> {
    let mut exp = template.clone();
    let others: Vec<&str> = sides[1..].iter().map(|s| s.commit.short()).collect();
    exp.name = format!(
        "bisect-{bisect_id}-{}-vs-{}",
        sides[0].commit.short(),
        others.join("-")
    );
    let first = template.baseline().clone();
    let variant = |side: &Side<'_>| {
        let src = side.src.to_string_lossy();
        Variant {
            name: side.commit.short().to_string(),
            server: ServerSource::Spawn {
                command: server.iter().map(|w| w.replace("{src}", &src)).collect(),
            },
            params: Vec::new(),
            ..first.clone()
        }
    };
    exp.variants = sides.iter().map(variant).collect();
    exp.shared_server = None;
    exp.margin = margin;
    exp.until_decided = None;
    apply_limits(&mut exp, true, Some(max_rounds), None).map_err(|e| BisectError::Input {
        flag: "--max-rounds".into(),
        message: e.message,
    })?;
    Ok(exp)
}

/// What the store keeps as the pair's experiment text: the template's text under a
/// header saying what replaced its variants.
pub fn spec_text(exp: &Experiment, template_text: &str) -> String {
    let servers: Vec<String> = exp
        .variants
        .iter()
        .map(|v| match &v.server {
            ServerSource::Spawn { command } => format!("#   {}: {}", v.name, command.join(" ")),
            _ => format!("#   {}", v.name),
        })
        .collect();
    format!(
        "# resplab bisect: {} (variants replaced by the two commits' servers, run until decided)\n{}\n{template_text}",
        exp.name,
        servers.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_template_needs_its_port() {
        assert!(server_words("./srv --port {port} --src {src}").is_ok());
        let e = server_words("./srv --src {src}").unwrap_err().to_string();
        assert!(
            e.starts_with("--server: `./srv --src {src}` has no {port}"),
            "{e}"
        );
        assert!(server_words("'unclosed {port}").is_err());
    }

    #[test]
    fn a_pair_replaces_the_variants_and_runs_until_decided() {
        let (t, _) = workload_template("get", &Overrides::default()).unwrap();
        let words = server_words("{src}/srv --port {port}").unwrap();
        let (a, b) = (
            Commit {
                id: "a".repeat(40),
                subject: "a".into(),
            },
            Commit {
                id: "b".repeat(40),
                subject: "b".into(),
            },
        );
        let base = Side {
            commit: &a,
            src: Path::new("/w/a"),
        };
        let cand = Side {
            commit: &b,
            src: Path::new("/w/b"),
        };
        let sides = [base, cand];
        let exp = experiment(&t, &words, "id", &sides, Some(0.2), 12).unwrap();
        assert_eq!(exp.name, "bisect-id-aaaaaaaaaa-vs-bbbbbbbbbb");
        assert_eq!(exp.baseline().name, "aaaaaaaaaa");
        assert_eq!(
            exp.variants[1].server,
            ServerSource::Spawn {
                command: vec!["/w/b/srv".into(), "--port".into(), "{port}".into()]
            }
        );
        assert_eq!(exp.until_decided.and_then(|u| u.max_rounds), Some(12));
        assert!(experiment(&t, &words, "id", &sides, None, 2).is_err());
        assert!(workload_template("nosuchtest", &Overrides::default()).is_err());
    }
}
