//! HdrHistogram interval logs (`.hlog`; memtier names its own `.hgrm`).
//!
//! ```text
//! #[Histogram log format version 1.2]
//! #[StartTime: 1795313964.490 (seconds since epoch), …]
//! "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//! Tag=GET,0.127,1.007,2.769,HISTFAAAAIx4nJNpmSzMwMBQzQABTFCaC0QoH3ZjsP8AEWBm…
//! ```
//!
//! Lines are read by the `hdrhistogram` crate's interval-log iterator (comments,
//! `StartTime`/`BaseTime` headers, the legend, intervals with an optional `Tag=`); each
//! interval's base64 V2 (compressed) histogram is decoded and the intervals are summed,
//! exactly, into one histogram per tag: the tag is the workload, untagged intervals are
//! workload `ALL`. memtier's logs name their second column `EndTimestamp`; timestamps do
//! not matter for the sum. Each file is one trial; its values are microseconds unless
//! the caller says otherwise (see [`super::hdr`]).

use super::hdr;
use super::{Ctx, ImportError, Imported};
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry, LogIteratorError};
use resplab_stats::hist::LatencyHistogram;

/// True when `line` marks an interval log: its legend, one of its `#[…]` headers, or an
/// interval line (every HdrHistogram V2 encoding, base64, starts with `HIST`).
pub fn is_marker(line: &str) -> bool {
    const HEADERS: [&str; 4] = [
        "\"StartTimestamp\"",
        "#[Histogram log format version",
        "#[StartTime: ",
        "#[BaseTime: ",
    ];
    HEADERS.iter().any(|h| line.starts_with(h)) || is_interval(line)
}

/// `[Tag=…,]start,length,max,HIST…`.
fn is_interval(line: &str) -> bool {
    let body = match line.strip_prefix("Tag=") {
        Some(rest) => rest.split_once(',').map_or("", |(_, b)| b),
        None => line,
    };
    let fields: Vec<&str> = body.split(',').collect();
    fields.len() == 4
        && fields[..3].iter().all(|f| f.trim().parse::<f64>().is_ok())
        && fields[3].trim().starts_with("HIST")
}

/// Imports an interval log whose values are microseconds.
///
/// # Errors
/// As [`import_in`].
pub fn import(bytes: &[u8], ctx: &mut Ctx<'_>) -> Result<Imported, ImportError> {
    import_in(bytes, ctx, hdr::LOG_UNIT_NS)
}

/// Imports an interval log whose values are in units of `unit_ns` nanoseconds.
///
/// # Errors
/// [`ImportError::Line`] for a line that is neither a comment, a header, the legend nor
/// an interval, or whose histogram does not decode; [`ImportError::File`] when the log
/// holds no interval.
pub fn import_in(bytes: &[u8], ctx: &mut Ctx<'_>, unit_ns: u64) -> Result<Imported, ImportError> {
    // The iterator wants every line, the last one included, to end with a newline.
    let mut input = bytes.to_vec();
    if !input.is_empty() && !input.ends_with(b"\n") {
        input.push(b'\n');
    }
    let sums = sum_by_tag(&input, ctx, unit_ns)?;
    if sums.is_empty() {
        return Err(ctx.file_error(
            "expected interval lines `[Tag=…,]start,length,max,histogram` in the \
             HdrHistogram log, found none",
        ));
    }
    let mut out = Imported::default();
    for (workload, h) in &sums {
        let points = hdr::points_of(h);
        hdr::push_distribution(&mut out, ctx, workload, &points, h);
    }
    out.notes.push(format!(
        "{}: HdrHistogram interval log read as {}; {} histogram(s) summed from its intervals",
        ctx.file,
        hdr::unit_name(unit_ns),
        sums.len()
    ));
    Ok(out)
}

/// The intervals of `input` summed per tag, in the order tags first appear.
fn sum_by_tag(
    input: &[u8],
    ctx: &Ctx<'_>,
    unit_ns: u64,
) -> Result<Vec<(String, LatencyHistogram)>, ImportError> {
    let mut sums: Vec<(String, LatencyHistogram)> = Vec::new();
    for entry in IntervalLogIterator::new(input) {
        let interval = match entry {
            Ok(LogEntry::Interval(i)) => i,
            Ok(LogEntry::StartTime(_) | LogEntry::BaseTime(_)) => continue,
            Err(LogIteratorError::ParseError { offset }) => {
                let line = line_at(input, offset);
                return Err(ctx.line_error(
                    line,
                    format!(
                        "expected a comment, the legend or an interval \
                         `[Tag=…,]start,length,max,histogram`, found `{}`",
                        line_text(input, offset)
                    ),
                ));
            }
        };
        let encoded = interval.encoded_histogram();
        let h = LatencyHistogram::from_base64_in(encoded, unit_ns).map_err(|e| {
            let offset = (encoded.as_ptr() as usize).saturating_sub(input.as_ptr() as usize);
            ctx.line_error(line_at(input, offset), e.to_string())
        })?;
        let tag = interval.tag().map_or(hdr::UNNAMED_WORKLOAD, |t| t.as_str());
        match sums.iter_mut().find(|(w, _)| w == tag) {
            Some((_, sum)) => sum.merge(&h),
            None => sums.push((tag.to_string(), h)),
        }
    }
    Ok(sums)
}

/// 1-based line number of byte `offset`.
fn line_at(input: &[u8], offset: usize) -> u32 {
    let before = &input[..offset.min(input.len())];
    let n = before.iter().filter(|b| **b == b'\n').count() + 1;
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The line that starts at or contains byte `offset`, shortened for a message.
fn line_text(input: &[u8], offset: usize) -> String {
    let start = input[..offset.min(input.len())]
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |p| p + 1);
    let rest = &input[start..];
    let end = rest.iter().position(|b| *b == b'\n').unwrap_or(rest.len());
    let text = String::from_utf8_lossy(&rest[..end]);
    let text = text.trim_end();
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_counted_from_one() {
        let input = b"a\nbb\nccc\n";
        assert_eq!(line_at(input, 0), 1);
        assert_eq!(line_at(input, 3), 2);
        assert_eq!(line_at(input, 5), 3);
        assert_eq!(line_text(input, 6), "ccc");
        assert!(is_marker("\"StartTimestamp\",\"EndTimestamp\""));
        assert!(!is_marker("1.0,2.0"));
        assert!(is_marker("#[BaseTime: 1.000 (seconds since epoch)]"));
        assert!(is_marker("Tag=GET,0.127,1.007,2.769,HISTFAAAAIx4"));
        assert!(is_marker("0.127,1.007,2.769,HISTFAAAAIx4"));
        assert!(!is_marker("0.127,1.007,2.769,12"));
    }
}
