//! Small text helpers for experiment files: shell-like word splitting of server
//! commands, `{name}` placeholder substitution, durations and CPU lists.
//!
//! Server commands are split into words here rather than handed to a shell so that the
//! runner owns the server process itself (its pid is the server's pid, a kill reaches
//! it, and its CPU time can be read) and so that quoting mistakes are reported with the
//! offending command instead of surfacing as a confusing start-up failure.

pub use resplab_engine::words::{parse_duration, seconds};
use std::time::Duration;

/// Splits a command line into words the way a POSIX shell would for the simple cases:
/// blanks separate words, `'…'` is literal, `"…"` allows `\"` and `\\`, a backslash
/// outside quotes escapes the next character. `''` is an empty word.
///
/// The two other quote-aware splitters keep rules of their own on purpose: command
/// templates follow redis-cli (`resplab_workload::template::split_args`: `\n` and
/// `\xHH` inside double quotes are bytes), and the protocol lab's command files follow
/// theirs (`resplab_proto::lab::text::split_line`). This line is run as a program, so it
/// follows the shell: inside double quotes `\n` stays two characters, and a backslash
/// outside quotes escapes.
///
/// # Errors
/// A message naming the unclosed quote or trailing backslash.
pub fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(ch) => cur.push(ch),
                        None => return Err(format!("unclosed single quote in `{line}`")),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(ch @ ('"' | '\\' | '$' | '`')) => cur.push(ch),
                            Some(ch) => {
                                cur.push('\\');
                                cur.push(ch);
                            }
                            None => return Err(format!("unclosed double quote in `{line}`")),
                        },
                        Some(ch) => cur.push(ch),
                        None => return Err(format!("unclosed double quote in `{line}`")),
                    }
                }
            }
            '\\' => match chars.next() {
                Some(ch) => {
                    cur.push(ch);
                    in_word = true;
                }
                None => return Err(format!("trailing backslash in `{line}`")),
            },
            _ => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// The `{name}` placeholders in `text`, in order of appearance, without duplicates.
/// `{{` and `}}` are not placeholders.
pub fn placeholders(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        if let Some(stripped) = after.strip_prefix('{') {
            rest = stripped;
            continue;
        }
        match after.find('}') {
            Some(end) => {
                let name = &after[..end];
                if !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                    && !out.iter().any(|n| n == name)
                {
                    out.push(name.to_string());
                }
                rest = &after[end + 1..];
            }
            None => break,
        }
    }
    out
}

/// Replaces `{name}` with `value` for each pair.
pub fn substitute(text: &str, pairs: &[(&str, &str)]) -> String {
    let mut out = text.to_string();
    for (name, value) in pairs {
        out = out.replace(&format!("{{{name}}}"), value);
    }
    out
}

/// A duration above zero, as [`parse_duration`] reads it (a flag's trial length, budget
/// or limit).
///
/// # Errors
/// What [`parse_duration`] refuses, and a zero duration.
pub fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    match parse_duration(text)? {
        d if d.is_zero() => Err(format!(
            "expected a duration above zero, found \"{}\"",
            text.trim()
        )),
        d => Ok(d),
    }
}

/// Checks a `taskset -c` CPU list such as `"0"`, `"0-3"`, `"0,2,4-5"` and returns the
/// number of CPUs it names.
///
/// # Errors
/// A message naming the list and the accepted form.
pub fn cpu_list_len(list: &str) -> Result<usize, String> {
    let bad = || format!("expected a CPU list such as \"0\", \"0-3\" or \"0,2\", found \"{list}\"");
    let mut n = 0usize;
    for part in list.split(',') {
        let part = part.trim();
        match part.split_once('-') {
            Some((a, b)) => {
                let a: usize = a.trim().parse().map_err(|_| bad())?;
                let b: usize = b.trim().parse().map_err(|_| bad())?;
                if b < a {
                    return Err(bad());
                }
                n += b - a + 1;
            }
            None => {
                part.parse::<usize>().map_err(|_| bad())?;
                n += 1;
            }
        }
    }
    Ok(n)
}

/// A workload's `memtier = "…"`: a memtier_benchmark line read by
/// `resplab_workload::memtier` with memtier's meaning. Only its workload and load words
/// belong in an experiment: where to connect is the variant's, and what to write is
/// the experiment's, so connection, output and `--run-count` options are refused.
///
/// # Errors
/// A line that does not split or parse, or one of the options above.
pub fn memtier_line(
    text: &str,
) -> Result<resplab_workload::memtier::MemtierPlan, resplab_workload::WorkloadError> {
    use resplab_workload::memtier::{parse, Invocation};
    let bad = |why: String| resplab_workload::WorkloadError::new("memtier", text, why);
    let words = split_words(text).map_err(bad)?;
    let plan = match parse(&words).map_err(|e| bad(e.to_string()))? {
        Invocation::Run(plan) => *plan,
        _ => return Err(bad("a benchmark line, not --help or --version".into())),
    };
    let Ok(Invocation::Run(default)) = parse(&[]) else {
        return Err(bad("memtier's defaults to read".into()));
    };
    if plan.connection != default.connection {
        return Err(bad("no connection options (server, port, socket, uri, authentication, database, protocol, TLS, cluster): the variant says where and how to connect".into()));
    }
    if plan.output != default.output || plan.run_count != 1 {
        return Err(bad("no output options and one run: the experiment stores every trial with its full histograms and runs the rounds".into()));
    }
    if plan.randomize {
        return Err(bad(
            "no --randomize: each trial's seed is derived from the experiment's seed".into(),
        ));
    }
    Ok(plan)
}

/// A workload's `redis_benchmark = "…"`: a redis-benchmark line read by
/// `resplab_workload::redis_benchmark` with its meaning. As for memtier lines, only the
/// workload and load words belong in an experiment.
///
/// # Errors
/// A line that does not split or parse, or a connection or output option.
pub fn redis_benchmark_line(
    text: &str,
) -> Result<resplab_workload::redis_benchmark::RbLine, resplab_workload::WorkloadError> {
    use resplab_workload::redis_benchmark::{parse, Invocation};
    let bad = |why: String| resplab_workload::WorkloadError::new("redis_benchmark", text, why);
    let words = split_words(text).map_err(bad)?;
    let line = match parse(&words).map_err(|e| bad(e.to_string()))? {
        Invocation::Run(line) => *line,
        _ => return Err(bad("a benchmark line, not --help or --version".into())),
    };
    let connection = line.host.is_some()
        || line.port.is_some()
        || line.socket.is_some()
        || line.uri.is_some()
        || line.password.is_some()
        || line.user.is_some()
        || line.dbnum.is_some()
        || line.resp3
        || line.tls
        || line.cluster
        || line.enable_tracking
        || line.sni.is_some()
        || line.cacert.is_some()
        || line.cacertdir.is_some()
        || line.cert.is_some()
        || line.key.is_some()
        || line.insecure
        || line.tls_ciphersuites.is_some();
    if connection {
        return Err(bad("no connection options (-h, -p, -s, -u, -a, --user, --dbnum, -3, --cluster, --enable-tracking, TLS): the variant says where and how to connect".into()));
    }
    if line.quiet || line.csv || line.precision.is_some() || line.looping || line.idle {
        return Err(bad("no -q, --csv, --precision, -l or -I: the experiment stores every trial with its full histograms and runs the rounds".into()));
    }
    if line.last_arg_from_stdin {
        return Err(bad(
            "no -x: an experiment has no standard input to read; write the argument in the line"
                .into(),
        ));
    }
    if line.seed.is_some() || line.warmup.is_some() {
        return Err(bad("no --seed or --warmup: each trial's seed is derived from the experiment's seed, and its warm-up is the experiment's".into()));
    }
    Ok(line)
}

/// The CPUs a `taskset -c` list names, ascending and without repeats (`"0,2-3"` →
/// `[0, 2, 3]`); at most [`MAX_CPU`] is accepted, the most one thread can be pinned to.
///
/// # Errors
/// A message naming the list and the accepted form.
pub fn cpu_list(list: &str) -> Result<Vec<usize>, String> {
    cpu_list_len(list)?;
    let mut cpus = std::collections::BTreeSet::new();
    for part in list.split(',') {
        let (a, b) = match part.trim().split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part.trim(), part.trim()),
        };
        let (a, b): (usize, usize) = (a.parse().unwrap_or(0), b.parse().unwrap_or(0));
        if b > MAX_CPU {
            return Err(format!(
                "expected CPUs numbered up to {MAX_CPU}, found \"{list}\""
            ));
        }
        cpus.extend(a..=b);
    }
    Ok(cpus.into_iter().collect())
}

/// The highest CPU number [`cpu_list`] accepts (the kernel's `CPU_SETSIZE` less one).
pub const MAX_CPU: usize = 1023;

/// A CPU list in `taskset -c` form, runs of consecutive CPUs joined (`[0, 1, 2, 5]` →
/// `"0-2,5"`).
pub fn cpu_list_text(cpus: &[usize]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j == i {
            cpus[i].to_string()
        } else {
            format!("{}-{}", cpus[i], cpus[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words() {
        assert_eq!(
            split_words("redis-server --port {port} --save '' --x \"a b\" c\\ d").unwrap(),
            vec![
                "redis-server",
                "--port",
                "{port}",
                "--save",
                "",
                "--x",
                "a b",
                "c d"
            ]
        );
        assert!(split_words("a 'b").is_err());
        assert!(split_words("a \"b").is_err());
        assert!(split_words("a \\").is_err());
        assert_eq!(split_words("  ").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn placeholder_names() {
        assert_eq!(
            placeholders("a {port} {x} {{lit}} {x} {"),
            vec!["port", "x"]
        );
        assert_eq!(substitute("-p {port}", &[("port", "7")]), "-p 7");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("").is_err());
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(cpu_list_len("0").unwrap(), 1);
        assert_eq!(cpu_list_len("0-3,6").unwrap(), 5);
        assert!(cpu_list_len("3-1").is_err());
        assert!(cpu_list_len("a").is_err());
        assert_eq!(cpu_list("3,0-1,1").unwrap(), vec![0, 1, 3]);
        assert!(cpu_list("0-5000").is_err());
        assert!(cpu_list("x").is_err());
        assert_eq!(cpu_list_text(&[0, 1, 2, 5]), "0-2,5");
        assert_eq!(cpu_list_text(&[1]), "1");
    }
}
