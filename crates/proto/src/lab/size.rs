//! What `proto size` measures: the wire bytes of each command in RESP2 and in RESPB, per
//! command label and in total, and the table it prints.

use crate::resp::encode::write_inline;
use crate::respb::codec::{encode_command, Encoding};
use serde::Serialize;
use std::collections::BTreeMap;

use super::workload::resp_len;

/// A command to measure: its row label, its arguments, and whether RESP2 writes it
/// inline.
pub type SizedCommand = (String, Vec<Vec<u8>>, bool);

/// The wire sizes of one label's commands (or of all: `TOTAL`).
#[derive(Debug, Default, Serialize)]
pub struct SizeRow {
    pub command: String,
    pub count: u64,
    pub resp_bytes: u64,
    pub respb_bytes: u64,
    pub respb_passthrough: u64,
    pub saving_percent: f64,
}

/// One row per label (in first-seen order, or by name when `sort`), then the total,
/// each with its saving. Empty commands are left out.
pub fn size_rows(cmds: &[SizedCommand], sort: bool) -> Vec<SizeRow> {
    let mut rows: BTreeMap<String, SizeRow> = BTreeMap::new();
    let mut total = SizeRow {
        command: "TOTAL".into(),
        ..SizeRow::default()
    };
    let mut buf = Vec::new();
    let mut order: Vec<String> = Vec::new();
    for (key, c, inline) in cmds {
        if c.is_empty() {
            continue;
        }
        let refs: Vec<&[u8]> = c.iter().map(Vec::as_slice).collect();
        buf.clear();
        let enc = encode_command(&mut buf, 0, &refs);
        let row = rows.entry(key.clone()).or_insert_with(|| {
            order.push(key.clone());
            SizeRow {
                command: key.clone(),
                ..SizeRow::default()
            }
        });
        let r = if *inline {
            let mut text = Vec::new();
            write_inline(&mut text, &refs);
            text.len() as u64
        } else {
            resp_len(c) as u64
        };
        let p = u64::from(enc == Encoding::Passthrough);
        for row in [&mut *row, &mut total] {
            row.count += 1;
            row.resp_bytes += r;
            row.respb_bytes += buf.len() as u64;
            row.respb_passthrough += p;
        }
    }
    if sort {
        order.sort();
    }
    let mut all: Vec<SizeRow> = order.iter().filter_map(|k| rows.remove(k)).collect();
    all.push(total);
    for r in &mut all {
        r.saving_percent = if r.resp_bytes > 0 {
            100.0 * (r.resp_bytes as f64 - r.respb_bytes as f64) / r.resp_bytes as f64
        } else {
            0.0
        };
    }
    all
}

/// The text table of `proto size`.
pub fn size_table(all: &[SizeRow]) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "{:<16} {:>9} {:>12} {:>12} {:>9} {:>8} {:>8}\n",
        "command", "count", "RESP2 B", "RESPB B", "saving", "B/cmd", "B/cmd"
    ));
    out.push_str(&format!(
        "{:<16} {:>9} {:>12} {:>12} {:>9} {:>8} {:>8}\n",
        "", "", "", "", "", "RESP2", "RESPB"
    ));
    for r in all {
        let n = r.count.max(1) as f64;
        out.push_str(&format!(
            "{:<16} {:>9} {:>12} {:>12} {:>8.1}% {:>8.1} {:>8.1}{}\n",
            r.command,
            r.count,
            r.resp_bytes,
            r.respb_bytes,
            r.saving_percent,
            r.resp_bytes as f64 / n,
            r.respb_bytes as f64 / n,
            if r.respb_passthrough > 0 {
                format!("  ({} via passthrough)", r.respb_passthrough)
            } else {
                String::new()
            }
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_follow_first_sight_or_name_and_end_with_the_total() {
        let get = |k: &str| vec![b"GET".to_vec(), k.as_bytes().to_vec()];
        let cmds: Vec<SizedCommand> = vec![
            (
                "SET".into(),
                vec![b"SET".to_vec(), b"k".to_vec(), b"v".to_vec()],
                false,
            ),
            ("GET".into(), get("a"), false),
            ("GET".into(), get("b"), false),
        ];
        let names = |rows: &[SizeRow]| rows.iter().map(|r| r.command.clone()).collect::<Vec<_>>();
        assert_eq!(names(&size_rows(&cmds, false)), ["SET", "GET", "TOTAL"]);
        let sorted = size_rows(&cmds, true);
        assert_eq!(names(&sorted), ["GET", "SET", "TOTAL"]);
        assert_eq!(sorted[0].count, 2);
        // *2\r\n$3\r\nGET\r\n$1\r\na\r\n
        assert_eq!(sorted[0].resp_bytes, 2 * 20);
        assert_eq!(sorted[2].count, 3);
        assert!(size_table(&sorted).starts_with("command "));
    }
}
