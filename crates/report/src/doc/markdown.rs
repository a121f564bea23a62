//! A [`Document`] as GitHub-flavoured Markdown. Plots become SVG files in a folder beside
//! the Markdown file, linked by relative path, so the report reads on a forge, in an
//! editor's preview or in a wiki, and the SVGs can be reused on their own.

use super::{Block, Cell, Document};

/// The Markdown text and the SVG files it links.
#[derive(Clone, Debug, PartialEq)]
pub struct Markdown {
    /// The Markdown document.
    pub text: String,
    /// `(relative path, SVG text)` of each plot, in document order.
    pub files: Vec<(String, String)>,
}

/// Escapes characters Markdown would read as markup.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | '*' | '`' | '<' | '>' | '|') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn fence(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

/// Renders `doc`; plots are linked as `plot_dir/FILE.svg` (`plot_dir` relative to the
/// Markdown file, without a trailing slash).
pub fn render(doc: &Document, plot_dir: &str) -> Markdown {
    let mut out = format!("# {}\n", escape(&doc.title));
    let mut files = Vec::new();
    for b in &doc.blocks {
        out.push('\n');
        match b {
            Block::Heading { level, text, .. } => {
                out.push_str(&format!(
                    "{} {}\n",
                    "#".repeat(usize::from((*level).clamp(1, 6))),
                    escape(text)
                ));
            }
            Block::Paragraph(t) => {
                out.push_str(&escape(t));
                out.push('\n');
            }
            Block::List(items) => {
                for i in items {
                    out.push_str(&format!("- {}\n", escape(i)));
                }
            }
            Block::Table {
                header,
                numeric,
                rows,
            } => {
                table(&mut out, header, numeric, rows);
            }
            Block::Plot {
                file,
                title,
                caption,
                svg,
            }
            | Block::Flame {
                file,
                title,
                caption,
                svg,
            } => {
                let path = format!("{plot_dir}/{file}.svg");
                out.push_str(&format!(
                    "![{}]({path})\n\n*{}.* {}\n",
                    escape(title),
                    escape(title),
                    escape(caption)
                ));
                files.push((path, svg.clone()));
            }
            Block::Code { lang, text } => {
                let f = fence(text);
                out.push_str(&format!("{f}{lang}\n{}", text));
                if !text.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str(&f);
                out.push('\n');
            }
        }
    }
    Markdown { text: out, files }
}

/// A table: header, alignment rule (numeric columns right-aligned), rows.
fn table(out: &mut String, header: &[String], numeric: &[bool], rows: &[Vec<Cell>]) {
    let head: Vec<String> = header.iter().map(|h| escape(h)).collect();
    out.push_str(&format!("| {} |\n", head.join(" | ")));
    let rule: Vec<&str> = (0..header.len())
        .map(|i| {
            if numeric.get(i).copied().unwrap_or(false) {
                "--:"
            } else {
                "---"
            }
        })
        .collect();
    out.push_str(&format!("|{}|\n", rule.join("|")));
    for r in rows {
        let cells: Vec<String> = r
            .iter()
            .map(|c| {
                let t = escape(&c.text);
                if c.strong {
                    format!("**{t}**")
                } else {
                    t
                }
            })
            .collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_fences() {
        assert_eq!(escape("ops_per_sec | *x*"), "ops_per_sec \\| \\*x\\*");
        assert_eq!(fence("a ``` b"), "````");
        assert_eq!(fence("plain"), "```");
    }
}
