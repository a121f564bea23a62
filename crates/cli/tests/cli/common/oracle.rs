//! What the oracle tests of `resplab memtier` and `resplab redis-benchmark` share: a
//! server's facts after a run (connections received, calls of each command), the
//! comparison of command shares with the real tool's, and the split of a command line
//! as a shell splits it.

use resplab_testkit::client::Reply;
use std::collections::BTreeMap;

/// Commands a tool sends to set itself up (resplab's control connection asks INFO).
pub const SETUP: &[&str] = &[
    "info",
    "config|resetstat",
    "config|get",
    "config",
    "hello",
    "auth",
    "select",
    "flushall",
];

/// Shares of the workload's commands within 5 points of the real tool's.
pub fn compare_shares(
    tool: &str,
    want: &BTreeMap<String, u64>,
    got: &BTreeMap<String, u64>,
) -> Result<(), String> {
    let share = |m: &BTreeMap<String, u64>, k: &str| {
        let total: u64 = m.values().sum();
        100.0 * m.get(k).copied().unwrap_or(0) as f64 / total.max(1) as f64
    };
    for k in want.keys().chain(got.keys()) {
        let (w, g) = (share(want, k), share(got, k));
        if (w - g).abs() > 5.0 {
            return Err(format!(
                "{k}: {g:.1}% of the calls, {tool} {w:.1}% ({tool} {want:?}, resplab {got:?})"
            ));
        }
    }
    Ok(())
}

/// `total_connections_received` and the calls of each workload command.
pub fn server_facts(
    client: &mut resplab_testkit::client::Client,
) -> Result<(u64, BTreeMap<String, u64>), String> {
    let info = match client
        .cmd(&["INFO", "everything"])
        .map_err(|e| e.to_string())?
    {
        Reply::Bulk(Some(b)) => String::from_utf8_lossy(&b).into_owned(),
        other => return Err(format!("INFO replied {other:?}")),
    };
    let mut conns = 0;
    let mut calls = BTreeMap::new();
    for row in info.lines() {
        if let Some(n) = row.strip_prefix("total_connections_received:") {
            conns = n.trim().parse().unwrap_or(0);
        }
        if let Some(rest) = row.strip_prefix("cmdstat_") {
            let (name, stats) = rest.split_once(':').unwrap_or((rest, ""));
            let n = stats
                .split(',')
                .next()
                .and_then(|c| c.strip_prefix("calls="))
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            if !SETUP.contains(&name) {
                calls.insert(name.to_string(), n);
            }
        }
    }
    Ok((conns, calls))
}

/// Splits a line as a POSIX shell does for these lines: words separated by blanks,
/// double and single quotes grouping (and removed), a backslash escaping one character.
pub fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, '\\') => word.get_or_insert_with(String::new).extend(chars.next()),
            (None, c) if c.is_whitespace() => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}
