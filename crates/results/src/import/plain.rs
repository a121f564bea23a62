//! Plain numbers, one per line, read the way ministat reads them.
//!
//! Each line is split into fields at any of the delimiter characters (default space and
//! tab; runs of delimiters count as one, as with C's `strtok`). Fields are counted from 1;
//! the value is field `column`. A field starting with `#` ends the line: if it comes at or
//! before the chosen column, the line is skipped, so `#` lines are comments. A line with
//! fewer fields than `column` is skipped too. The chosen field must be a number in full
//! (leading blanks allowed, as `strtod` allows them); anything after it is an error that
//! names the line.
//!
//! Cost: one pass over the bytes, no allocation per line.

use super::{Ctx, ImportError, Imported};
use crate::sample::{Direction, Metric, Observation};
use std::sync::Arc;

/// How plain-number files are split.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlainOptions {
    /// 1-based field number to read (`-C`).
    pub column: usize,
    /// Field delimiter characters (`-d`), default `" \t"`.
    pub delimiters: Vec<u8>,
    /// Read every input as plain numbers, without format detection (set when `-C` or
    /// `-d` is given, or for the ministat style).
    pub force: bool,
}

impl Default for PlainOptions {
    fn default() -> Self {
        PlainOptions {
            column: 1,
            delimiters: b" \t".to_vec(),
            force: false,
        }
    }
}

impl PlainOptions {
    /// The options of `-C COLUMN` and `-d DELIMS` as given (either one forces every input
    /// to be read as plain numbers).
    pub fn from_flags(column: Option<usize>, delimiters: Option<&str>) -> Self {
        PlainOptions {
            column: column.unwrap_or(1),
            delimiters: delimiters.unwrap_or(" \t").as_bytes().to_vec(),
            force: column.is_some() || delimiters.is_some(),
        }
    }
}

/// The metric plain numbers are recorded under.
pub fn plain_metric() -> Metric {
    Metric::new("value", "", Direction::Unknown)
}

/// Parses a number the way `strtod` accepts a whole field: optional leading white space,
/// then a decimal or special value (`inf`, `nan`), nothing after it.
pub fn parse_number(field: &[u8]) -> Option<f64> {
    let start = field
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(field.len());
    let text = std::str::from_utf8(&field[start..]).ok()?;
    if text.is_empty() {
        return None;
    }
    text.parse::<f64>().ok()
}

/// Imports plain numbers.
///
/// # Errors
/// [`ImportError::Line`] for a field that is not a number.
pub fn import(
    bytes: &[u8],
    ctx: &mut Ctx<'_>,
    opts: &PlainOptions,
) -> Result<Imported, ImportError> {
    let metric = ctx.interner.metric(plain_metric());
    let workload = ctx.interner.str("");
    let mut out = Imported::default();
    out.observations.reserve(bytes.len() / 8);
    let delims = if opts.delimiters.is_empty() {
        &b" \t"[..]
    } else {
        &opts.delimiters[..]
    };
    let is_delim = |b: u8| delims.contains(&b);
    for (index, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line_no = u32::try_from(index + 1).unwrap_or(u32::MAX);
        let line = raw.strip_suffix(b"\r").unwrap_or(raw);
        // Walk the fields up to the requested column.
        let mut field_no = 0usize;
        let mut pos = 0usize;
        let mut chosen: Option<&[u8]> = None;
        while pos < line.len() {
            while pos < line.len() && is_delim(line[pos]) {
                pos += 1;
            }
            if pos >= line.len() {
                break;
            }
            let start = pos;
            while pos < line.len() && !is_delim(line[pos]) {
                pos += 1;
            }
            let field = &line[start..pos];
            field_no += 1;
            if field.first() == Some(&b'#') {
                break;
            }
            if field_no == opts.column {
                chosen = Some(field);
                break;
            }
        }
        let Some(field) = chosen else { continue };
        match parse_number(field) {
            Some(v) => {
                let mut obs = plain_observation(ctx, &workload, &metric, v, line_no);
                obs.trial = u32::try_from(out.observations.len()).unwrap_or(u32::MAX);
                out.observations.push(obs);
            }
            None => {
                let shown = String::from_utf8_lossy(&field[..field.len().min(40)]);
                return Err(ctx.line_error(
                    line_no,
                    format!(
                        "expected a number in column {} (plain numbers, one per line, `#` starts \
                         a comment), found `{shown}`; the file is not resplab or memtier JSON, \
                         redis-benchmark CSV or text, or go test -bench output either",
                        opts.column
                    ),
                ));
            }
        }
    }
    Ok(out)
}

fn plain_observation(
    ctx: &Ctx<'_>,
    workload: &Arc<str>,
    metric: &Arc<Metric>,
    value: f64,
    line: u32,
) -> Observation {
    Observation {
        label: ctx.label.clone(),
        workload: workload.clone(),
        metric: metric.clone(),
        value,
        round: None,
        trial: 0,
        origin: crate::sample::Origin {
            file: ctx.file.clone(),
            line: Some(line),
        },
        config: None,
        flag: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::Interner;

    fn run(text: &str, opts: &PlainOptions) -> Result<Vec<f64>, ImportError> {
        let mut interner = Interner::default();
        let mut ctx = Ctx {
            label: Arc::from("a"),
            file: Arc::from("a.txt"),
            interner: &mut interner,
        };
        import(text.as_bytes(), &mut ctx, opts)
            .map(|i| i.observations.iter().map(|o| o.value).collect())
    }

    #[test]
    fn reads_like_ministat() {
        let o = PlainOptions::default();
        assert_eq!(
            run("# c\n1\n 2 x\n\n3.5e1\r\n#x 9\n", &o).unwrap(),
            vec![1.0, 2.0, 35.0]
        );
        let o2 = PlainOptions {
            column: 2,
            delimiters: b",".to_vec(),
            force: true,
        };
        assert_eq!(run("a,1\nb\nc,# 7\nd,2,3\n", &o2).unwrap(), vec![1.0, 2.0]);
    }

    #[test]
    fn rejects_garbage_with_line() {
        let e = run("1\n2\nabc\n", &PlainOptions::default()).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("a.txt:3: expected a number in column 1"),
            "{msg}"
        );
        assert!(msg.contains("`abc`"));
    }
}
