//! Commands as text, one per line, as `proto size --file` and `proto convert` read them:
//! arguments split with shell-like quoting (`"…"` with `\\n`, `\\r`, `\\t`, `\\xHH` and
//! `\\` escapes, `'…'` taken literally); blank lines and `#` comments are skipped.
//!
//! These are not redis-cli's rules, which command templates follow
//! (`resplab_workload::template::split_args`, in a crate this one does not depend on):
//! here `'…'` has no `\'`, `\a` and `\b` are plain letters, and a quoted section may run
//! on into the rest of the argument (`"a"b` is `ab`, an error for a template). Folding
//! the two would change what `proto size --file` and `proto convert` read from files
//! written for them.

use super::LabError;

/// The commands of a command file's text (`file` names it in errors).
///
/// # Errors
/// An unterminated quote or a bad escape, with the file, line and column.
pub fn commands(text: &str, file: &str) -> Result<Vec<Vec<Vec<u8>>>, LabError> {
    let mut cmds = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        cmds.push(split_line(line, i + 1, file)?);
    }
    Ok(cmds)
}

/// Splits one line into arguments with shell-like quoting.
///
/// # Errors
/// An unterminated quote or a bad escape, with `file:line:column`.
pub fn split_line(line: &str, lineno: usize, file: &str) -> Result<Vec<Vec<u8>>, LabError> {
    let mut args = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    let err = |col: usize, what: &str| LabError(format!("{file}:{lineno}:{}: {what}", col + 1));
    while i < bytes.len() {
        while bytes.get(i).is_some_and(|b| b.is_ascii_whitespace()) {
            i += 1;
        }
        if i >= bytes.len() {
            break;
        }
        let mut arg = Vec::new();
        while let Some(&b) = bytes.get(i) {
            if b.is_ascii_whitespace() {
                break;
            }
            match b {
                b'"' => {
                    i = double_quoted(line, i, &mut arg).map_err(|(col, what)| err(col, what))?;
                }
                b'\'' => {
                    let open = i;
                    let close = bytes
                        .get(i + 1..)
                        .and_then(|r| r.iter().position(|&c| c == b'\''))
                        .ok_or_else(|| {
                            err(open, "expected a closing \"'\", found the end of the line")
                        })?;
                    arg.extend_from_slice(bytes.get(i + 1..i + 1 + close).unwrap_or(&[]));
                    i += close + 2;
                }
                _ => {
                    arg.push(b);
                    i += 1;
                }
            }
        }
        args.push(arg);
    }
    Ok(args)
}

/// A `"…"` section opening at `open`, its escapes decoded, appended to `arg`: where it
/// ends, or the column where it went wrong and what was expected there.
fn double_quoted(
    line: &str,
    open: usize,
    arg: &mut Vec<u8>,
) -> Result<usize, (usize, &'static str)> {
    let bytes = line.as_bytes();
    let mut i = open + 1;
    loop {
        match bytes.get(i) {
            None => return Err((open, "expected a closing '\"', found the end of the line")),
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => {
                let e = bytes.get(i + 1).copied();
                i += 2;
                match e {
                    Some(b'n') => arg.push(b'\n'),
                    Some(b'r') => arg.push(b'\r'),
                    Some(b't') => arg.push(b'\t'),
                    Some(b'x') => {
                        let hex = line
                            .get(i..i + 2)
                            .and_then(|h| u8::from_str_radix(h, 16).ok());
                        match hex {
                            Some(v) => arg.push(v),
                            None => return Err((i - 2, "expected two hex digits after \\x")),
                        }
                        i += 2;
                    }
                    Some(c) => arg.push(c),
                    None => return Err((i - 2, "expected a character after '\\'")),
                }
            }
            Some(&c) => {
                arg.push(c);
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_line_handles_quotes_and_escapes() {
        let a = split_line(r#"SET "a b" 'c d' "x\x41\n" plain"#, 1, "f").unwrap();
        assert_eq!(
            a,
            vec![
                b"SET".to_vec(),
                b"a b".to_vec(),
                b"c d".to_vec(),
                b"xA\n".to_vec(),
                b"plain".to_vec()
            ]
        );
        assert_eq!(
            split_line(r#"SET """#, 1, "f").unwrap(),
            vec![b"SET".to_vec(), vec![]]
        );
        let e = split_line(r#"SET "open"#, 7, "cmds.txt")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("cmds.txt:7:5:"), "{e}");
    }

    #[test]
    fn comments_and_blank_lines_are_skipped() {
        let c = commands("# a comment\n\nGET k\n  # indented\nSET k v\n", "f").unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[1], vec![b"SET".to_vec(), b"k".to_vec(), b"v".to_vec()]);
    }
}
