//! A [`Document`] as one self-contained HTML file: every plot is inline SVG, the CSS is
//! inline, there is no script, no web font and no external reference of any kind. A
//! Content-Security-Policy of `default-src 'none'` makes that a promise the browser
//! enforces: even a stray link could not load anything. The layout is one column that
//! narrows to a phone's width (wide tables scroll sideways on their own, plots scale),
//! and a print style drops the contents list and keeps figures whole on a page.

use super::{Block, Cell, Document};
use crate::plot::colour_hex;

const CSS: &str = r#":root{color-scheme:light}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:#1b1b1b;background:#fff}
main{max-width:80rem;margin:0 auto;padding:1rem 1.25rem 3rem}
h1{font-size:1.65rem;line-height:1.25;margin:.6rem 0 1rem}
h2{font-size:1.3rem;margin:2.4rem 0 .6rem;padding-bottom:.25rem;border-bottom:1px solid #d8d8d8}
h3{font-size:1.05rem;margin:1.6rem 0 .5rem}
p{margin:.5rem 0}
nav{font-size:.95rem;background:#f6f7f8;border:1px solid #e3e5e8;border-radius:6px;padding:.5rem 1rem;margin:0 0 1rem}
nav ul{margin:.2rem 0;padding-left:1.2rem}
a{color:#0b5cad}
.tw{overflow-x:auto;margin:.6rem 0 1rem;-webkit-overflow-scrolling:touch}
table{border-collapse:collapse;font-size:.85rem;font-variant-numeric:tabular-nums}
th,td{padding:.3rem .5rem;border-bottom:1px solid #e4e4e4;text-align:left;vertical-align:top}
th{background:#f3f4f5;font-weight:600}
td{white-space:nowrap}
td.w{white-space:normal;min-width:16rem}
td:first-child{white-space:normal}
th.n,td.n{text-align:right}
.sw{display:inline-block;width:.8em;height:.8em;border-radius:2px;margin-right:.4em;vertical-align:-.06em;-webkit-print-color-adjust:exact;print-color-adjust:exact}
ul.items li{margin:.2rem 0}
figure{margin:1.4rem 0;break-inside:avoid;page-break-inside:avoid}
figcaption{font-size:.9rem;color:#3d3d3d;margin:0 0 .4rem}
figcaption b{color:#1b1b1b}
.plot svg{display:block;width:100%;max-width:48rem;height:auto}
.flame svg{display:block;width:100%;height:auto}
.flame text{font-family:Verdana,sans-serif;font-size:12px}
.flame #title{text-anchor:middle;font-size:17px}
.flame #subtitle{text-anchor:middle}
.flame #search,.flame #unzoom,.flame #matched{display:none}
.flame #frames>g:hover>rect{stroke:#000;stroke-width:.5}
pre{background:#f5f6f7;border:1px solid #e6e7e9;border-radius:4px;padding:.6rem .8rem;overflow-x:auto;font:.8rem/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
@media (max-width:40rem){body{font-size:15px}main{padding:.6rem .7rem 2rem}th,td{padding:.25rem .45rem}h1{font-size:1.35rem}}
@media print{body{font-size:11pt}main{max-width:none;padding:0}nav{display:none}a{color:inherit;text-decoration:none}.tw{overflow:visible}td{white-space:normal}pre{white-space:pre-wrap;overflow:visible}h2,h3{break-after:avoid;page-break-after:avoid}}
"#;

/// Escapes text for HTML element content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Renders `doc` as one HTML file.
pub fn render(doc: &Document) -> String {
    let mut out = String::new();
    head(&mut out, doc);
    contents(&mut out, doc);
    for b in &doc.blocks {
        match b {
            Block::Heading { level, text, id } => {
                let l = (*level).clamp(2, 6);
                out.push_str(&format!(
                    "<h{l} id=\"{}\">{}</h{l}>\n",
                    escape(id),
                    escape(text)
                ));
            }
            Block::Paragraph(t) => out.push_str(&format!("<p>{}</p>\n", escape(t))),
            Block::List(items) => {
                out.push_str("<ul class=\"items\">\n");
                for i in items {
                    out.push_str(&format!("<li>{}</li>\n", escape(i)));
                }
                out.push_str("</ul>\n");
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
            } => figure(&mut out, "plot", file, title, caption, svg),
            Block::Flame {
                file,
                title,
                caption,
                svg,
            } => figure(
                &mut out,
                "flame",
                file,
                title,
                caption,
                &crate::profile::inline_svg(svg),
            ),
            Block::Code { lang, text } => {
                out.push_str(&format!(
                    "<pre><code class=\"language-{}\">{}</code></pre>\n",
                    escape(lang),
                    escape(text.trim_end())
                ));
            }
        }
    }
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

/// The document head (character set, viewport, security policy, title, CSS) and the
/// page title.
fn head(out: &mut String, doc: &Document) {
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str(
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n",
    );
    out.push_str(&format!("<title>{}</title>\n", escape(&doc.title)));
    out.push_str(&format!(
        "<style>\n{CSS}</style>\n</head>\n<body>\n<main>\n"
    ));
    out.push_str(&format!("<h1>{}</h1>\n", escape(&doc.title)));
}

/// A contents list of the level-2 headings, when there are more than two.
fn contents(out: &mut String, doc: &Document) {
    let toc: Vec<(&str, &str)> = doc
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Heading { level: 2, text, id } => Some((id.as_str(), text.as_str())),
            _ => None,
        })
        .collect();
    if toc.len() > 2 {
        out.push_str("<nav><b>Contents</b>\n<ul>\n");
        for (id, text) in toc {
            out.push_str(&format!(
                "<li><a href=\"#{}\">{}</a></li>\n",
                escape(id),
                escape(text)
            ));
        }
        out.push_str("</ul></nav>\n");
    }
}

/// A figure: its caption, then `svg` in a `<div>` of `class` (`plot` or `flame`).
fn figure(out: &mut String, class: &str, file: &str, title: &str, caption: &str, svg: &str) {
    out.push_str(&format!(
        "<figure id=\"{}\"><figcaption><b>{}.</b> {}</figcaption>\n<div class=\"{class}\" role=\"img\" aria-label=\"{}\">\n{}</div></figure>\n",
        escape(file),
        escape(title),
        escape(caption),
        escape(title),
        svg.trim_end()
    ));
}

/// A table that scrolls sideways on its own; numeric columns right-aligned, long text
/// cells allowed to wrap, a colour swatch before a variant's cell.
fn table(out: &mut String, header: &[String], numeric: &[bool], rows: &[Vec<Cell>]) {
    let is_num = |i: usize| numeric.get(i).copied().unwrap_or(false);
    out.push_str("<div class=\"tw\"><table>\n<thead><tr>");
    for (i, h) in header.iter().enumerate() {
        let class = if is_num(i) { " class=\"n\"" } else { "" };
        out.push_str(&format!("<th{class}>{}</th>", escape(h)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for r in rows {
        out.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let class = if is_num(i) {
                " class=\"n\""
            } else if c.text.chars().count() > 60 {
                " class=\"w\""
            } else {
                ""
            };
            let sw = c.variant.map_or(String::new(), |v| {
                format!(
                    "<span class=\"sw\" style=\"background:{}\"></span>",
                    colour_hex(v)
                )
            });
            let text = if c.strong {
                format!("<b>{}</b>", escape(&c.text))
            } else {
                escape(&c.text)
            };
            out.push_str(&format!("<td{class}>{sw}{text}</td>"));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("<a href='x'>&\""),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;"
        );
    }
}
