//! memtier_benchmark's `--monitor-input FILE` and `--monitor-pattern S|R`: commands
//! read from a Redis `MONITOR` output file and referenced from `--command`.
//!
//! A MONITOR line is `TIMESTAMP [DB CLIENT] "COMMAND" "ARG" …`, each argument quoted
//! with the escapes `\"`, `\\`, `\n`, `\r`, `\t`, `\a`, `\b` and `\xHH` (the form
//! `redis-cli monitor` prints; the client is an address, `lua` or `unix:PATH`). The
//! quoted part is kept as written: it is a command line in template syntax, split by
//! [`crate::template::split_args`] with those very escapes. A line without a quote
//! (the `OK` redis-cli prints first, a blank line) holds no command and is skipped, as
//! memtier skips it; any other line that is not of that form is an error naming the
//! file and line.
//!
//! In `--command`, `__monitor_lineN__` is the file's N-th command (counting commands,
//! not lines, as memtier does) and `__monitor_line@__` one of them per request, in
//! turn for all connections together (`S`, the default) or at random (`R`), with its
//! results under each command's own name ([`crate::spec::Replay`]).

use super::MemtierError;
use crate::spec::{CommandSpec, Replay};
use crate::template;

/// The placeholders' common beginning.
const PREFIX: &str = "__monitor_line";
/// The placeholder of a choice per request.
const ANY: &str = "__monitor_line@__";

/// The commands of a MONITOR file's `text` (read from `path`), each the quoted part of
/// its line.
///
/// # Errors
/// A line with a quote that is not a MONITOR line, or a file without any command; the
/// message names `path` and the line number.
pub(crate) fn commands(text: &str, path: &str) -> Result<Vec<String>, MemtierError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        let Some(quote) = line.find('"') else {
            continue;
        };
        let (head, args) = line.split_at(quote);
        let parsed = template::split_args(args, "--monitor-input").ok();
        if !is_monitor_head(head) || parsed.is_none_or(|a| a.is_empty()) {
            return Err(MemtierError::usage(format!(
                "--monitor-input {path}:{}: expected a MONITOR line like 1700000000.000000 [0 127.0.0.1:6379] \"SET\" \"key\" \"value\" (found '{}')",
                i + 1,
                clip(line)
            )));
        }
        out.push(args.to_string());
    }
    if out.is_empty() {
        return Err(MemtierError::usage(format!(
            "--monitor-input {path}: no commands found (expected MONITOR lines like 1700000000.000000 [0 127.0.0.1:6379] \"GET\" \"key\")"
        )));
    }
    Ok(out)
}

/// Replaces the placeholders of `commands` with the monitor file's commands
/// (`monitor`: `None` when no `--monitor-input` was given).
///
/// # Errors
/// A placeholder without `--monitor-input`, or one that names no command of the file.
pub(crate) fn expand(
    commands: &mut [CommandSpec],
    monitor: Option<&[String]>,
    random: bool,
) -> Result<(), MemtierError> {
    for cmd in commands
        .iter_mut()
        .filter(|c| c.template.starts_with(PREFIX))
    {
        let Some(lines) = monitor else {
            return Err(MemtierError::usage(format!(
                "--command={} needs --monitor-input FILE (the MONITOR output its commands come from)",
                cmd.template
            )));
        };
        if cmd.template == ANY {
            cmd.replay = Some(Replay {
                lines: lines.to_vec(),
                random,
            });
            continue;
        }
        let n = cmd.template[PREFIX.len()..]
            .strip_suffix("__")
            .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|d| d.parse::<usize>().ok())
            .filter(|&n| (1..=lines.len()).contains(&n));
        let Some(n) = n else {
            return Err(MemtierError::usage(format!(
                "invalid monitor placeholder '{}': expected __monitor_line1__ to __monitor_line{}__ or {ANY}",
                cmd.template,
                lines.len()
            )));
        };
        cmd.template = lines[n - 1].clone();
    }
    Ok(())
}

/// `--monitor-pattern`: `S` (in turn, false) or `R` (at random, true), either case.
pub(crate) fn is_random(value: &str) -> Option<bool> {
    match value {
        "S" | "s" => Some(false),
        "R" | "r" => Some(true),
        _ => None,
    }
}

/// `TIMESTAMP [DB CLIENT] ` before the first quote of a MONITOR line.
fn is_monitor_head(head: &str) -> bool {
    let Some((stamp, rest)) = head.trim_end().split_once(' ') else {
        return false;
    };
    let stamp_ok = !stamp.is_empty()
        && stamp.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && stamp.bytes().filter(|&b| b == b'.').count() <= 1;
    let Some(inner) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) else {
        return false;
    };
    let Some((db, client)) = inner.split_once(' ') else {
        return false;
    };
    stamp_ok && !db.is_empty() && db.bytes().all(|b| b.is_ascii_digit()) && !client.is_empty()
}

/// The first 80 characters of a line, for a message.
fn clip(line: &str) -> String {
    let mut s: String = line.chars().take(80).collect();
    if s.len() < line.len() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "OK\n\
        1700000000.100000 [0 127.0.0.1:5000] \"set\" \"user:1\" \"hello world\"\r\n\
        \n\
        1700000000.200000 [0 lua] \"HSET\" \"h\" \"n\" \"quote\\\"d\"\n\
        1700000000.300000 [3 unix:/tmp/redis.sock] \"SET\" \"bin\" \"\\x00\\x01\\n\"\n";

    #[test]
    fn reads_the_quoted_part_of_each_monitor_line() {
        let c = commands(FILE, "m.txt").unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!(c[0], "\"set\" \"user:1\" \"hello world\"");
        let args = template::split_args(&c[2], "x").unwrap();
        assert_eq!(args[2], b"\x00\x01\n");
        let args = template::split_args(&c[1], "x").unwrap();
        assert_eq!(args[3], b"quote\"d");
    }

    #[test]
    fn bad_lines_name_the_file_and_line() {
        for (text, line) in [
            ("OK\n1.5 [0 a:1] \"GET\" \"unterminated\n", 2),
            ("1.5 [0 a:1] \"GET\" \"k\"x\n", 1),
            ("OK\n\nsomething \"GET\" \"k\"\n", 3),
            ("1.5 [x a:1] \"GET\"\n", 1),
            ("1.5 [0] \"GET\"\n", 1),
            ("1.5 [0 a:1] \"\\xZZ\"\n", 1),
        ] {
            let e = commands(text, "m.txt").unwrap_err().to_string();
            assert!(
                e.starts_with(&format!(
                    "--monitor-input m.txt:{line}: expected a MONITOR line"
                )),
                "{text:?}: {e}"
            );
            assert!(!e.contains('\n'), "{e}");
        }
        let e = commands("OK\n", "m.txt").unwrap_err().to_string();
        assert!(e.contains("m.txt: no commands found"), "{e}");
    }

    #[test]
    fn placeholders_become_the_files_commands() {
        let lines = commands(FILE, "m.txt").unwrap();
        let mut cmds = vec![
            CommandSpec::new("__monitor_line2__"),
            CommandSpec::new(ANY),
            CommandSpec::new("GET __key__"),
        ];
        expand(&mut cmds, Some(&lines), true).unwrap();
        assert_eq!(cmds[0].template, lines[1]);
        let r = cmds[1].replay.as_ref().unwrap();
        assert!(r.random && r.lines == lines);
        assert!(cmds[2].replay.is_none());
        for bad in [
            "__monitor_line0__",
            "__monitor_line4__",
            "__monitor_line1",
            "__monitor_linex__",
        ] {
            let e = expand(&mut [CommandSpec::new(bad)], Some(&lines), false).unwrap_err();
            assert!(
                e.to_string()
                    .contains("__monitor_line1__ to __monitor_line3__"),
                "{e}"
            );
        }
        let e = expand(&mut [CommandSpec::new(ANY)], None, false).unwrap_err();
        assert!(e.to_string().contains("needs --monitor-input"), "{e}");
        assert_eq!(is_random("r"), Some(true));
        assert_eq!(is_random("S"), Some(false));
        assert_eq!(is_random("SR"), None);
    }
}
