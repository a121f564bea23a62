//! One reading of one server node: what it says of itself (`INFO commandstats`,
//! `INFO stats`, `INFO cpu`, `LATENCY HISTOGRAM`) and, when this run knows its pid, the
//! counters of its process from `/proc` ([`resplab_sys::proc::process_counters`]).
//!
//! A section the server does not answer (an error reply, no such header, a closed
//! connection) is `None`: the trial then lacks those metrics, never fails for them.

use crate::client::{Client, Reply};
use resplab_proto::resp::info;
use resplab_sys::proc::ProcessCounters;
use std::collections::BTreeMap;

/// The command statistics of one command: `cmdstat_<name>:calls=…,usec=…`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CommandStat {
    pub calls: u64,
    pub usec: u64,
    /// Redis 7+: calls that failed (an error reply) or were rejected before running.
    pub failed: Option<u64>,
    pub rejected: Option<u64>,
}

/// A command's latency histogram: (bucket upper bound in microseconds, cumulative count)
/// in increasing order of bound, as `LATENCY HISTOGRAM` answers it.
pub type Buckets = Vec<(u64, u64)>;

/// What one node said, and its process's counters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeReading {
    /// Command name in upper case (`SET`, `CONFIG|GET`) → its statistics; `None` when
    /// the server does not answer `INFO commandstats`.
    pub commandstats: Option<BTreeMap<String, CommandStat>>,
    /// The numeric fields of `INFO stats` and `INFO cpu`; empty when not answered.
    pub fields: BTreeMap<String, f64>,
    /// Command name in upper case → its histogram; `None` when `LATENCY HISTOGRAM` is not
    /// answered (before Redis 7, `resplab serve`).
    pub latency: Option<BTreeMap<String, Buckets>>,
    /// The server process's counters, when its pid is known and `/proc` can be read.
    pub process: Option<ProcessCounters>,
}

/// Reads one node through `ctl`, and its process when `pid` is given.
pub fn read_node(ctl: &mut Client, pid: Option<u32>) -> NodeReading {
    let text = |ctl: &mut Client, args: &[&str]| match ctl.call(args) {
        Ok(Reply::Error(_)) | Err(_) => None,
        Ok(r) => Some(r.text()),
    };
    let commandstats = text(ctl, &["INFO", "commandstats"]).and_then(|t| commandstats(&t));
    let mut fields = BTreeMap::new();
    for section in ["stats", "cpu"] {
        if let Some(t) = text(ctl, &["INFO", section]) {
            fields.extend(numeric_fields(&t));
        }
    }
    let latency = match ctl.call(&["LATENCY", "HISTOGRAM"]) {
        Ok(Reply::Array(Some(items))) => Some(histograms(&items)),
        _ => None,
    };
    NodeReading {
        commandstats,
        fields,
        latency,
        process: pid.and_then(resplab_sys::proc::process_counters),
    }
}

/// The `cmdstat_*` lines of an `INFO commandstats` reply; `None` when the text has no
/// `# Commandstats` header (a server that ignores the section answers another or none).
pub fn commandstats(text: &str) -> Option<BTreeMap<String, CommandStat>> {
    let mut seen = false;
    let mut out = BTreeMap::new();
    for line in info::lines(text) {
        match line {
            info::Line::Section(name) => seen |= name.eq_ignore_ascii_case("commandstats"),
            info::Line::Field { key, value } => {
                let Some(name) = key.strip_prefix("cmdstat_") else {
                    continue;
                };
                let p = info::pairs(value);
                let num = |k: &str| p.get(k).and_then(|v| v.parse::<u64>().ok());
                let (Some(calls), Some(usec)) = (num("calls"), num("usec")) else {
                    continue;
                };
                out.insert(
                    name.to_ascii_uppercase(),
                    CommandStat {
                        calls,
                        usec,
                        failed: num("failed_calls"),
                        rejected: num("rejected_calls"),
                    },
                );
            }
        }
    }
    (seen || !out.is_empty()).then_some(out)
}

/// Every field of `text` whose value is a number.
pub fn numeric_fields(text: &str) -> BTreeMap<String, f64> {
    info::fields(text)
        .into_iter()
        .filter_map(|(k, v)| Some((k, v.parse::<f64>().ok().filter(|x| x.is_finite())?)))
        .collect()
}

/// The `LATENCY HISTOGRAM` reply (command name, then `calls`, n, `histogram_usec`,
/// [bound, cumulative count, …]) as histograms by upper-case command name; entries
/// of another shape are left out.
pub fn histograms(items: &[Reply]) -> BTreeMap<String, Buckets> {
    let mut out = BTreeMap::new();
    for pair in items.chunks_exact(2) {
        let Reply::Array(Some(fields)) = &pair[1] else {
            continue;
        };
        let buckets = fields.chunks_exact(2).find_map(|kv| match &kv[1] {
            Reply::Array(Some(b)) if kv[0].text() == "histogram_usec" => Some(b),
            _ => None,
        });
        let Some(buckets) = buckets else {
            continue;
        };
        let mut list: Buckets = buckets
            .chunks_exact(2)
            .filter_map(|b| match (&b[0], &b[1]) {
                (Reply::Integer(bound), Reply::Integer(n)) => {
                    Some((u64::try_from(*bound).ok()?, u64::try_from(*n).ok()?))
                }
                _ => None,
            })
            .collect();
        list.sort_unstable();
        out.insert(pair[0].text().to_ascii_uppercase(), list);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commandstats_lines_are_read_by_upper_case_name() {
        let t = "# Commandstats\r\ncmdstat_set:calls=10,usec=25,usec_per_call=2.50,rejected_calls=0,failed_calls=1\r\n\
                 cmdstat_config|get:calls=2,usec=40,usec_per_call=20.00\r\ncmdstat_bad:calls=x\r\n";
        let s = commandstats(t).unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(
            s["SET"],
            CommandStat {
                calls: 10,
                usec: 25,
                failed: Some(1),
                rejected: Some(0)
            }
        );
        assert_eq!(s["CONFIG|GET"].failed, None);
        assert_eq!(commandstats("# Commandstats\r\n"), Some(BTreeMap::new()));
        assert_eq!(commandstats("# Server\r\nredis_version:7\r\n"), None);
        assert_eq!(commandstats(""), None);
    }

    #[test]
    fn numeric_fields_keep_numbers_only() {
        let f = numeric_fields("# CPU\r\nused_cpu_sys:1.5\r\nrole:master\r\nx:inf\r\n");
        assert_eq!(f.len(), 1);
        assert_eq!(f["used_cpu_sys"], 1.5);
    }

    #[test]
    fn latency_histograms_are_read_from_the_reply_tree() {
        let int = Reply::Integer;
        let bulk = |s: &str| Reply::Bulk(Some(s.as_bytes().to_vec()));
        let reply = vec![
            bulk("set"),
            Reply::Array(Some(vec![
                bulk("calls"),
                int(5),
                bulk("histogram_usec"),
                Reply::Array(Some(vec![int(4), int(3), int(2), int(1), int(8), int(5)])),
            ])),
            bulk("odd"),
            bulk("not an array"),
        ];
        let h = histograms(&reply);
        assert_eq!(h.len(), 1);
        assert_eq!(h["SET"], vec![(2, 1), (4, 3), (8, 5)]);
    }
}
