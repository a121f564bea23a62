//! The one CSV field writer of every CSV resplab writes (the comparison reports, the
//! benchstat-style CSV, the store's export).
//!
//! A field is quoted when it holds a comma, a double quote, a carriage return or a line
//! feed, or when it begins with white space (which some readers would trim); a quote
//! inside a quoted field is doubled. This is the rule of Go's `encoding/csv`, which
//! benchstat's CSV output follows, so resplab's benchstat CSV matches it byte for byte,
//! and it is valid RFC 4180 for every other reader.

use std::borrow::Cow;

/// `f` as one CSV field: as it is, or quoted (see the module docs).
pub fn field(f: &str) -> Cow<'_, str> {
    let needs =
        f.contains([',', '"', '\r', '\n']) || f.chars().next().is_some_and(char::is_whitespace);
    if needs {
        Cow::Owned(format!("\"{}\"", f.replace('"', "\"\"")))
    } else {
        Cow::Borrowed(f)
    }
}

/// One CSV record: the fields written by [`field`], joined by commas, without the line
/// end.
pub fn record<S: AsRef<str>>(fields: &[S]) -> String {
    let mut line = String::new();
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        line.push_str(&field(f.as_ref()));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field(""), "");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(field("two\nlines"), "\"two\nlines\"");
        assert_eq!(field("cr\r"), "\"cr\r\"");
        assert_eq!(field(" lead"), "\" lead\"");
        assert_eq!(field("\ttab"), "\"\ttab\"");
        assert_eq!(field("trail "), "trail ");
        assert_eq!(record(&["a", "b,c", ""]), "a,\"b,c\",");
    }
}
