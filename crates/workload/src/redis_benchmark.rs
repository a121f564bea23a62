//! redis-benchmark's command line with redis-benchmark's meaning (`resplab
//! redis-benchmark ARGS…`, or the binary called as `redis-benchmark` or
//! `valkey-benchmark`).
//!
//! redis-benchmark reads its options one by one until the first word that is not an
//! option; that word and the words after it are a command to benchmark instead of the
//! tests (`redis-benchmark -n 1000 SET k v`). This module reads a line the same way into
//! a [`RbLine`]: the words that `resplab bench` shares with redis-benchmark (`-h`, `-p`,
//! `-s`, `-a`, `--user`, `-u`, `-c`, `-n`, `-d`, `-r`, `-P`, `-t`, `--threads`,
//! `--cluster`, the TLS flags) kept as written, so that one validator
//! (`resplab_engine::words`) checks them for both modes; the words only redis-benchmark
//! has (`--dbnum`, `-3`, `-k`, `-q`, `--csv`, `--precision`, `-l`, `-x`, `--seed`,
//! `--enable-tracking`) and
//! valkey-benchmark's `--rps`, `--duration` and `--warmup` (valkey.io/topics/benchmark)
//! checked here.
//!
//! An option resplab cannot honour with redis-benchmark's meaning is refused with its
//! reason ([`RbError::Refused`]): it is never accepted and ignored.

use crate::error::WorkloadError;

/// What a redis-benchmark command line asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum Invocation {
    /// `--help`.
    Help,
    /// `--version`.
    Version,
    /// A benchmark.
    Run(Box<RbLine>),
}

/// A redis-benchmark line that cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RbError {
    /// An unknown option, a missing value or a value of the wrong form.
    #[error("{0}")]
    Usage(String),
    /// An option resplab cannot honour with redis-benchmark's meaning.
    #[error("{option} is not supported by resplab redis-benchmark: {why}")]
    Refused {
        /// The option as written.
        option: String,
        /// Why, and what to do instead.
        why: String,
    },
}

impl From<WorkloadError> for RbError {
    fn from(e: WorkloadError) -> Self {
        RbError::Usage(e.to_string())
    }
}

/// A redis-benchmark line: the words shared with `resplab bench` as written (each
/// named after bench's flag of the same meaning), the rest typed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RbLine {
    /// `-h`.
    pub host: Option<String>,
    /// `-p`.
    pub port: Option<String>,
    /// `-s`.
    pub socket: Option<String>,
    /// `-u`.
    pub uri: Option<String>,
    /// `-a`.
    pub password: Option<String>,
    /// `--user`.
    pub user: Option<String>,
    /// `--dbnum`: the database every connection selects.
    pub dbnum: Option<u32>,
    /// `-3`: RESP3 (`HELLO 3`).
    pub resp3: bool,
    /// `--tls`.
    pub tls: bool,
    /// `--sni`.
    pub sni: Option<String>,
    /// `--cacert`.
    pub cacert: Option<String>,
    /// `--cacertdir`.
    pub cacertdir: Option<String>,
    /// `--cert`.
    pub cert: Option<String>,
    /// `--key`.
    pub key: Option<String>,
    /// `--insecure`.
    pub insecure: bool,
    /// `--tls-ciphersuites`.
    pub tls_ciphersuites: Option<String>,
    /// `--cluster`.
    pub cluster: bool,
    /// `--enable-tracking`: `CLIENT TRACKING on` on every connection.
    pub enable_tracking: bool,
    /// `-c` (redis-benchmark's default 50).
    pub clients: String,
    /// `-n` (default 100000): requests of each test.
    pub requests: String,
    /// `-P` (default 1).
    pub pipeline: String,
    /// `--threads` (default 1).
    pub threads: String,
    /// `-d` (default 3).
    pub data_size: Option<String>,
    /// `-r`.
    pub random_keys: Option<String>,
    /// `-t`: ignored by redis-benchmark when a command is given, and so here.
    pub tests: Option<String>,
    /// `--seed`.
    pub seed: Option<String>,
    /// valkey-benchmark's `--rps`: requests per second in all.
    pub rps: Option<String>,
    /// valkey-benchmark's `--duration`: seconds of each test instead of `-n`.
    pub duration: Option<String>,
    /// valkey-benchmark's `--warmup`: seconds before each test is measured.
    pub warmup: Option<String>,
    /// The command given after the options, one word an argument; empty: the tests.
    pub command: Vec<String>,
    /// `-x`: the command's last argument is read from standard input.
    pub last_arg_from_stdin: bool,
    /// `-q`.
    pub quiet: bool,
    /// `--csv` (it wins over `-q`, as in redis-benchmark).
    pub csv: bool,
    /// `--precision`: decimal places of the latency figures (redis-benchmark 7 prints
    /// three whatever it is given, and so does this mode).
    pub precision: Option<u32>,
    /// `-l`: run the tests again and again until stopped.
    pub looping: bool,
    /// `-I`: open the `-c` connections, send nothing, and wait until stopped.
    pub idle: bool,
    /// `-k 0`: a new connection after every reply (every `-P` replies with pipelining).
    pub reconnect: bool,
}

/// Whether an option takes a value.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Takes {
    Value,
    Nothing,
}

/// Every option of redis-benchmark 7.x (`redis-benchmark --help`, and `-e`, `--seed`
/// of its source and later releases) and valkey-benchmark's additions.
const OPTIONS: &[(&str, Takes)] = {
    use Takes::{Nothing as N, Value as V};
    &[
        ("-h", V),
        ("-p", V),
        ("-s", V),
        ("-a", V),
        ("--user", V),
        ("-u", V),
        ("-c", V),
        ("-n", V),
        ("-d", V),
        ("--dbnum", V),
        ("-3", N),
        ("--threads", V),
        ("--cluster", N),
        ("--enable-tracking", N),
        ("-k", V),
        ("-r", V),
        ("-P", V),
        ("-q", N),
        ("--precision", V),
        ("--csv", N),
        ("-l", N),
        ("-t", V),
        ("-I", N),
        ("-x", N),
        ("-e", N),
        ("--seed", V),
        ("--tls", N),
        ("--sni", V),
        ("--cacert", V),
        ("--cacertdir", V),
        ("--insecure", N),
        ("--cert", V),
        ("--key", V),
        ("--tls-ciphers", V),
        ("--tls-ciphersuites", V),
        ("--rps", V),
        ("--duration", V),
        ("--warmup", V),
        ("--sequential", N),
        ("--help", N),
        ("--version", N),
    ]
};

/// Whether `word` is one of redis-benchmark's (or valkey-benchmark's) options.
pub fn is_option(word: &str) -> bool {
    OPTIONS.iter().any(|(name, _)| *name == word)
}

/// Whether `option` is one of redis-benchmark's options that takes a value.
pub fn takes_value(option: &str) -> bool {
    OPTIONS
        .iter()
        .any(|(name, takes)| *name == option && *takes == Takes::Value)
}

/// redis-benchmark's options that `resplab bench` does not take (bench spells some of
/// them its own way: `--resp 3` for `-3`, `--test-time` for `--duration`, `--rate` for
/// `--rps`).
const NOT_BENCH: &[&str] = &[
    "-k",
    "-l",
    "-I",
    "-x",
    "-e",
    "-3",
    "--precision",
    "--enable-tracking",
    "--tls-ciphers",
    "--rps",
    "--duration",
    "--sequential",
];

/// The advice for an option `resplab bench` refused that redis-benchmark takes: run the
/// line through `resplab redis-benchmark`, which reads it with redis-benchmark's
/// meaning. `None` for any other option.
pub fn unknown_option_hint(arg: &str) -> Option<String> {
    let name = arg.split('=').next().unwrap_or(arg);
    NOT_BENCH.contains(&name).then(|| {
        format!("{name} is a redis-benchmark option that resplab bench does not take; run `resplab redis-benchmark …` for redis-benchmark's meaning")
    })
}

/// Reads a redis-benchmark command line (without the program name).
///
/// # Errors
/// An unknown option, a missing or malformed value, or an option resplab refuses.
pub fn parse(args: &[String]) -> Result<Invocation, RbError> {
    let mut line = RbLine {
        clients: "50".into(),
        requests: "100000".into(),
        pipeline: "1".into(),
        threads: "1".into(),
        ..RbLine::default()
    };
    let mut i = 0;
    while i < args.len() {
        let word = args[i].as_str();
        if !word.starts_with('-') {
            line.command = args[i..].to_vec();
            break;
        }
        let Some((_, takes)) = OPTIONS.iter().find(|(name, _)| *name == word) else {
            return Err(RbError::Usage(format!(
                "unknown option '{word}' (argument {}): expected one of redis-benchmark's options (resplab redis-benchmark --help)",
                i + 1
            )));
        };
        let value = if *takes == Takes::Value {
            i += 1;
            Some(args.get(i).ok_or_else(|| {
                RbError::Usage(format!("{word} needs a value (argument {i} is the last)"))
            })?)
        } else {
            None
        };
        match word {
            "--help" => return Ok(Invocation::Help),
            "--version" => return Ok(Invocation::Version),
            _ => apply(&mut line, word, value.map(String::as_str).unwrap_or(""))?,
        }
        i += 1;
    }
    check(&line)?;
    Ok(Invocation::Run(Box::new(line)))
}

/// Applies one option to the line.
fn apply(line: &mut RbLine, option: &str, v: &str) -> Result<(), RbError> {
    let some = || Some(v.to_string());
    match option {
        "-h" => line.host = some(),
        "-p" => line.port = some(),
        "-s" => line.socket = some(),
        "-a" => line.password = some(),
        "--user" => line.user = some(),
        "-u" => line.uri = some(),
        "-c" => line.clients = v.to_string(),
        "-n" => line.requests = v.to_string(),
        "-d" => line.data_size = some(),
        "--dbnum" => line.dbnum = Some(whole(option, v, 0, 1_000_000)?),
        "-3" => line.resp3 = true,
        "--threads" => line.threads = v.to_string(),
        "--cluster" => line.cluster = true,
        "--enable-tracking" => line.enable_tracking = true,
        "-k" => line.reconnect = !keep_alive(v)?,
        "-r" => line.random_keys = some(),
        "-P" => line.pipeline = v.to_string(),
        "-q" => line.quiet = true,
        "--precision" => line.precision = Some(whole(option, v, 0, 20)?),
        "--csv" => line.csv = true,
        "-l" => line.looping = true,
        "-I" => line.idle = true,
        "-t" => line.tests = some(),
        "-x" => line.last_arg_from_stdin = true,
        "--seed" => line.seed = some(),
        "--tls" => line.tls = true,
        "--sni" => line.sni = some(),
        "--cacert" => line.cacert = some(),
        "--cacertdir" => line.cacertdir = some(),
        "--insecure" => line.insecure = true,
        "--cert" => line.cert = some(),
        "--key" => line.key = some(),
        "--tls-ciphersuites" => line.tls_ciphersuites = some(),
        "--rps" => line.rps = some(),
        "--duration" => line.duration = some(),
        "--warmup" => line.warmup = some(),
        other => return Err(refusal(other)),
    }
    Ok(())
}

/// `-k`: 1 keeps each connection for the whole test (the default), 0 opens a new one
/// after every reply.
fn keep_alive(v: &str) -> Result<bool, RbError> {
    match v.trim() {
        "1" => Ok(true),
        "0" => Ok(false),
        _ => Err(RbError::Usage(format!(
            "invalid value '{v}' for -k: expected 1 (keep alive) or 0 (reconnect)"
        ))),
    }
}

/// Why an option of redis-benchmark is refused.
fn refusal(option: &str) -> RbError {
    let why = match option {
        "-e" => "resplab counts error replies by their first word (resplab bench --json shows them per command) but does not print their text",
        "--tls-ciphers" => "resplab's TLS library names TLS 1.2 suites differently from OpenSSL's cipher list; give --tls-ciphersuites with rustls suite names",
        "--sequential" => "resplab draws __rand_int__ at random; for sequential keys use resplab bench --command with --command-key-pattern S",
        _ => "it has no equivalent in resplab's engine",
    };
    RbError::Refused {
        option: option.to_string(),
        why: why.to_string(),
    }
}

/// Checks the options against each other and against the command.
fn check(line: &RbLine) -> Result<(), RbError> {
    if line.last_arg_from_stdin && line.command.is_empty() {
        return Err(RbError::Usage(
            "-x reads the last argument of a command from standard input: give the command after the options".into(),
        ));
    }
    for word in &line.command {
        for placeholder in [
            crate::template::KEY,
            crate::template::DATA,
            crate::template::TAG,
        ] {
            if word.contains(placeholder) {
                return Err(RbError::Refused {
                    option: format!("the command argument '{word}'"),
                    why: format!("{placeholder} is one of resplab's placeholders, which redis-benchmark sends as it is; write the line for resplab bench --command instead"),
                });
            }
        }
    }
    Ok(())
}

/// A whole number of `option` within `min..=max`.
fn whole(option: &str, v: &str, min: u32, max: u32) -> Result<u32, RbError> {
    v.trim()
        .parse::<u32>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .ok_or_else(|| {
            RbError::Usage(format!(
                "invalid value '{v}' for {option}: expected a whole number from {min} to {max}"
            ))
        })
}

impl RbLine {
    /// The command as one template line for `resplab bench --command` syntax: every
    /// argument quoted, so that spaces and bytes of any kind reach the server as
    /// given; `None` when the tests run.
    pub fn command_template(&self) -> Option<String> {
        if self.command.is_empty() {
            return None;
        }
        let quoted: Vec<String> = self.command.iter().map(|w| quote(w)).collect();
        Some(quoted.join(" "))
    }

    /// The title redis-benchmark gives the command's test: its words joined by spaces.
    pub fn command_title(&self) -> String {
        self.command.join(" ")
    }
}

/// `word` in double quotes with the escapes of [`crate::template::split_args`].
fn quote(word: &str) -> String {
    let mut out = String::with_capacity(word.len() + 2);
    out.push('"');
    for b in word.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(words: &str) -> Result<RbLine, RbError> {
        let args: Vec<String> = words.split_whitespace().map(String::from).collect();
        match parse(&args)? {
            Invocation::Run(line) => Ok(*line),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn defaults_are_redis_benchmarks() {
        let l = run("").unwrap();
        assert_eq!(
            (l.clients.as_str(), l.requests.as_str(), l.pipeline.as_str()),
            ("50", "100000", "1")
        );
        assert!(l.command.is_empty() && l.tests.is_none());
    }

    #[test]
    fn options_then_a_command() {
        let l =
            run("-h 127.0.0.1 -p 7000 -c 5 -n 10 -P 4 -r 100 --dbnum 3 -3 -q SET k -x").unwrap();
        assert_eq!(l.port.as_deref(), Some("7000"));
        assert_eq!(l.dbnum, Some(3));
        assert!(l.resp3 && l.quiet);
        // Everything after the first word that is no option belongs to the command.
        assert_eq!(l.command, ["SET", "k", "-x"]);
        assert!(!l.last_arg_from_stdin);
        assert_eq!(l.command_title(), "SET k -x");
    }

    #[test]
    fn arguments_are_quoted_into_one_template() {
        let l = RbLine {
            command: vec!["SET".into(), "a b".into(), "q\"\\\n".into()],
            ..RbLine::default()
        };
        let t = l.command_template().unwrap();
        assert_eq!(t, r#""SET" "a b" "q\"\\\x0a""#);
        let split = crate::template::split_args(&t, "t").unwrap();
        assert_eq!(
            split,
            vec![b"SET".to_vec(), b"a b".to_vec(), b"q\"\\\n".to_vec()]
        );
    }

    #[test]
    fn refusals_say_why() {
        for (words, option) in [
            ("-e", "-e"),
            ("--sequential", "--sequential"),
            ("--tls-ciphers X", "--tls-ciphers"),
        ] {
            match run(words) {
                Err(RbError::Refused { option: o, why }) => {
                    assert_eq!(o, option);
                    assert!(!why.is_empty());
                }
                other => panic!("{words}: {other:?}"),
            }
        }
    }

    #[test]
    fn keep_alive_zero_reconnects() {
        assert!(run("-k 0 -t set").unwrap().reconnect);
        assert!(!run("-k 1 -t set").unwrap().reconnect);
        assert!(!run("-t set").unwrap().reconnect);
    }

    #[test]
    fn usage_errors_name_the_option() {
        for (words, says) in [
            ("--nope", "unknown option '--nope'"),
            ("-c", "-c needs a value"),
            ("--dbnum x", "invalid value 'x' for --dbnum"),
            ("-k 2", "invalid value '2' for -k"),
            ("-x", "-x reads the last argument"),
        ] {
            let e = run(words).unwrap_err().to_string();
            assert!(e.contains(says), "{words}: {e}");
        }
        assert!(matches!(run("SET __key__ v"), Err(RbError::Refused { .. })));
    }

    #[test]
    fn help_and_version() {
        assert_eq!(parse(&["--help".into()]).unwrap(), Invocation::Help);
        assert_eq!(
            parse(&["-q".into(), "--version".into()]).unwrap(),
            Invocation::Version
        );
        assert!(is_option("--dbnum") && !is_option("--ratio"));
    }

    #[test]
    fn bench_hints_point_to_the_mode() {
        let h = unknown_option_hint("--enable-tracking").unwrap();
        assert!(h.contains("resplab redis-benchmark"), "{h}");
        assert!(unknown_option_hint("-k").is_some());
        assert!(unknown_option_hint("--ratio").is_none());
        assert!(NOT_BENCH.iter().all(|o| is_option(o)));
    }
}
