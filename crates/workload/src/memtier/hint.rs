//! When a `resplab bench` line looks like a memtier line.
//!
//! `resplab bench` keeps redis-benchmark's counting (`-c` connections in all, `-n`
//! requests in all, `-t` a test list). A memtier line pasted into it runs, silently,
//! with far fewer connections and requests than memtier would make: `--threads 32
//! --clients 10 --requests 10000` is 320 connections and 3.2 million requests to
//! memtier, 10 connections and 10,000 requests to bench. [`bench_hint`] spots the
//! signs and returns the advice [`HINT`].

/// The advice, word for word.
pub const HINT: &str =
    "memtier counts -c per thread and -n per client; run `resplab memtier …` for memtier's meaning";

/// What bench was given, as written.
#[derive(Clone, Copy, Debug, Default)]
pub struct BenchWords<'a> {
    /// `--threads`.
    pub threads: &'a str,
    /// `-c`/`--clients`.
    pub clients: &'a str,
    /// `-t`/`--tests`, when given.
    pub tests: Option<&'a str>,
}

/// Why the words look like memtier's, with [`HINT`]; `None` when they do not.
///
/// The signs: a bare number after `-t` (memtier's thread count, not a test list), and
/// `--threads` with a `-c` no larger than the thread count (a per-thread count: as a
/// total it would leave threads without a connection).
pub fn bench_hint(w: BenchWords<'_>) -> Option<String> {
    if let Some(t) = w.tests {
        let t = t.trim();
        if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
            return Some(format!(
                "-t {t} is a number: bench's -t is a test list (memtier's -t is threads); {HINT}"
            ));
        }
    }
    let threads: u64 = w.threads.trim().parse().ok()?;
    let clients: u64 = w.clients.trim().parse().ok()?;
    (threads > 1 && clients <= threads).then(|| {
        format!(
            "--threads {threads} with -c {clients}: bench opens {clients} connections in all, not per thread; {HINT}"
        )
    })
}

/// The hint for an option bench does not know but memtier does (`--hide-histogram`).
pub fn unknown_option_hint(arg: &str) -> Option<String> {
    let name = arg.trim_start_matches('-');
    let name = name.split('=').next().unwrap_or(name);
    (arg.starts_with("--") && super::is_memtier_option(name))
        .then(|| format!("{arg} is a memtier_benchmark option; {HINT}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memtier_signs() {
        let words = |threads, clients, tests| BenchWords {
            threads,
            clients,
            tests,
        };
        assert!(bench_hint(words("32", "10", None)).unwrap().ends_with(HINT));
        assert!(bench_hint(words("1", "50", Some("4")))
            .unwrap()
            .contains("-t 4 is a number"));
        assert!(bench_hint(words("4", "50", Some("set,get"))).is_none());
        assert!(bench_hint(words("1", "1", None)).is_none());
        assert!(unknown_option_hint("--hide-histogram").is_some());
        assert!(unknown_option_hint("--distinct-client-seed=1").is_some());
        assert!(unknown_option_hint("--no-such").is_none());
    }
}
