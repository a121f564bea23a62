//! Two sampled profiles compared: which functions' share of the time changed most, and a
//! differential flame graph.
//!
//! A profile is given as folded stacks, one line per distinct stack: frames from the root
//! to the leaf separated by `;`, a space, and the number of samples (the format of
//! `inferno-collapse-perf`, `stackcollapse-perf.pl` and most profilers' exports).
//! Each function's **self** share is the fraction of samples in which it is the leaf
//! (where the time was spent); its **total** share the fraction in which it appears
//! anywhere on the stack (once per stack, however deep a recursion). When the requests
//! each profile covered are known, shares become samples per request, so a variant
//! that served fewer requests in its profile is not credited with doing less work.
//!
//! The flame graph is drawn by `inferno`: its differential folding (normalised to the
//! second profile's sample count) and its SVG renderer; nothing here draws.

use crate::texttab::Align;
use std::collections::{BTreeMap, BTreeSet};

/// A folded profile: stack → samples.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Folded {
    pub stacks: BTreeMap<String, u64>,
}

/// A line of a folded file that is not one.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{file}:{line}: expected `frame;frame;… SAMPLES`, found `{found}`")]
pub struct FoldedError {
    pub file: String,
    pub line: usize,
    pub found: String,
}

impl Folded {
    /// Reads folded text; blank lines are skipped, a line without a trailing count is an
    /// error naming `file` and the line.
    ///
    /// # Errors
    /// [`FoldedError`] for the first malformed line.
    pub fn parse(file: &str, text: &str) -> Result<Folded, FoldedError> {
        let mut stacks = BTreeMap::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            let parsed = line
                .rsplit_once(char::is_whitespace)
                .and_then(|(stack, n)| Some((stack.trim(), n.parse::<u64>().ok()?)))
                .filter(|(stack, _)| !stack.is_empty());
            let Some((stack, n)) = parsed else {
                let mut found: String = line.chars().take(80).collect();
                if line.chars().count() > 80 {
                    found.push('…');
                }
                return Err(FoldedError {
                    file: file.to_string(),
                    line: i + 1,
                    found,
                });
            };
            *stacks.entry(stack.to_string()).or_insert(0) += n;
        }
        Ok(Folded { stacks })
    }

    /// All samples.
    pub fn samples(&self) -> u64 {
        self.stacks.values().sum()
    }

    /// Each function's (self, total) samples.
    pub fn by_function(&self) -> BTreeMap<String, (u64, u64)> {
        let mut out: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for (stack, &n) in &self.stacks {
            let frames: Vec<&str> = stack.split(';').collect();
            let unique: BTreeSet<&str> = frames.iter().copied().collect();
            for f in unique {
                out.entry(f.to_string()).or_default().1 += n;
            }
            if let Some(leaf) = frames.last() {
                out.entry((*leaf).to_string()).or_default().0 += n;
            }
        }
        out
    }
}

/// One function's change between profiles A and B.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    pub function: String,
    /// Self and total shares in A and B: fractions of all samples, or samples per
    /// request when the requests are known.
    pub self_a: f64,
    pub self_b: f64,
    pub total_a: f64,
    pub total_b: f64,
    /// The samples behind each share: self in A and B.
    pub samples_a: u64,
    pub samples_b: u64,
}

impl Change {
    /// B's self share minus A's.
    pub fn self_delta(&self) -> f64 {
        self.self_b - self.self_a
    }

    /// B's total share minus A's.
    pub fn total_delta(&self) -> f64 {
        self.total_b - self.total_a
    }
}

/// The functions whose self share changed most (largest absolute change first, ties by
/// total change then by name), at most `top` of them. `requests` (A, B) normalise the
/// shares per request; without them shares are fractions of each profile's samples.
pub fn changes(a: &Folded, b: &Folded, requests: Option<(u64, u64)>, top: usize) -> Vec<Change> {
    let (da, db) = match requests {
        Some((ra, rb)) => (ra.max(1) as f64, rb.max(1) as f64),
        None => (a.samples().max(1) as f64, b.samples().max(1) as f64),
    };
    let fa = a.by_function();
    let fb = b.by_function();
    let names: BTreeSet<&String> = fa.keys().chain(fb.keys()).collect();
    let mut out: Vec<Change> = names
        .into_iter()
        .map(|name| {
            let (sa, ta) = fa.get(name).copied().unwrap_or_default();
            let (sb, tb) = fb.get(name).copied().unwrap_or_default();
            Change {
                function: name.clone(),
                self_a: sa as f64 / da,
                self_b: sb as f64 / db,
                total_a: ta as f64 / da,
                total_b: tb as f64 / db,
                samples_a: sa,
                samples_b: sb,
            }
        })
        .collect();
    out.sort_by(|x, y| {
        y.self_delta()
            .abs()
            .total_cmp(&x.self_delta().abs())
            .then(y.total_delta().abs().total_cmp(&x.total_delta().abs()))
            .then(x.function.cmp(&y.function))
    });
    out.truncate(top);
    out
}

impl Folded {
    /// The stacks as folded text, one `stack SAMPLES` line each.
    pub fn to_text(&self) -> String {
        self.stacks
            .iter()
            .map(|(s, n)| format!("{s} {n}\n"))
            .collect()
    }

    /// Adds `other`'s samples to these (profiles of several trials merged).
    pub fn add(&mut self, other: &Folded) {
        for (s, n) in &other.stacks {
            *self.stacks.entry(s.clone()).or_insert(0) += n;
        }
    }
}

/// The differential flame graph of B against A as SVG: frames sized by B's samples,
/// coloured red where B spends more than A and blue where less, A normalised to B's
/// sample count.
///
/// # Errors
/// What inferno reports (an empty profile).
pub fn differential_svg(a: &Folded, b: &Folded, title: &str) -> Result<String, String> {
    differential_svg_per_request(a, b, None, title)
}

/// [`differential_svg`], with A normalised to B per request when the requests (A, B)
/// are known: A's samples are scaled by B's requests over A's, so a frame is red where
/// B spends more samples per request than A.
///
/// # Errors
/// What inferno reports (an empty profile).
pub fn differential_svg_per_request(
    a: &Folded,
    b: &Folded,
    requests: Option<(u64, u64)>,
    title: &str,
) -> Result<String, String> {
    let a_text = match requests {
        Some((ra, rb)) => {
            let scale = rb.max(1) as f64 / ra.max(1) as f64;
            let scaled = Folded {
                stacks: a
                    .stacks
                    .iter()
                    .map(|(s, &n)| (s.clone(), (n as f64 * scale).round() as u64))
                    .filter(|(_, n)| *n > 0)
                    .collect(),
            };
            scaled.to_text()
        }
        None => a.to_text(),
    };
    let mut folded = Vec::new();
    let opt = inferno::differential::Options {
        normalize: requests.is_none(),
        strip_hex: false,
    };
    inferno::differential::from_readers(
        opt,
        a_text.as_bytes(),
        b.to_text().as_bytes(),
        &mut folded,
    )
    .map_err(|e| e.to_string())?;
    draw(folded.as_slice(), title, None)
}

/// The flame graph of one profile as SVG, with `subtitle` under the title.
///
/// # Errors
/// What inferno reports (an empty profile).
pub fn flame_svg(f: &Folded, title: &str, subtitle: &str) -> Result<String, String> {
    draw(f.to_text().as_bytes(), title, Some(subtitle))
}

fn draw(folded: &[u8], title: &str, subtitle: Option<&str>) -> Result<String, String> {
    let mut options = inferno::flamegraph::Options::default();
    options.title = title.to_string();
    options.subtitle = subtitle.map(str::to_string);
    let mut svg = Vec::new();
    inferno::flamegraph::from_reader(&mut options, folded, &mut svg).map_err(|e| e.to_string())?;
    String::from_utf8(svg).map_err(|e| e.to_string())
}

/// A flame graph's SVG made fit to sit inside an HTML page whose policy forbids scripts:
/// the XML prolog, the script, the event handler and the style sheet (whose rules
/// would apply to the whole page) are removed; the page's own CSS styles the frames
/// (class `flame`). Hovering still shows each frame's name and samples (SVG titles).
pub fn inline_svg(svg: &str) -> String {
    let mut out = match svg.find("<svg") {
        Some(i) => svg[i..].to_string(),
        None => svg.to_string(),
    };
    for (open, close) in [("<script", "</script>"), ("<style", "</style>")] {
        while let Some(i) = out.find(open) {
            let Some(j) = out[i..].find(close) else {
                break;
            };
            out.replace_range(i..i + j + close.len(), "");
        }
    }
    out.replace(" onload=\"init(evt)\"", "")
}

/// The table of [`changes`] as text: per function, self and total in A and B with the
/// change, and the self samples behind each.
pub fn table(changes: &[Change], per_request: bool) -> String {
    let unit = if per_request {
        "samples/request"
    } else {
        "% of samples"
    };
    let show = |v: f64| {
        if per_request {
            format!("{v:.4}")
        } else {
            format!("{:.2}", v * 100.0)
        }
    };
    let signed = |v: f64| {
        if per_request {
            format!("{v:+.4}")
        } else {
            format!("{:+.2}", v * 100.0)
        }
    };
    let mut rows = vec![vec![
        "function".to_string(),
        format!("self A ({unit})"),
        "self B".into(),
        "Δ self".into(),
        "total A".into(),
        "total B".into(),
        "Δ total".into(),
        "samples A".into(),
        "samples B".into(),
    ]];
    for c in changes {
        rows.push(vec![
            c.function.clone(),
            show(c.self_a),
            show(c.self_b),
            signed(c.self_delta()),
            show(c.total_a),
            show(c.total_b),
            signed(c.total_delta()),
            c.samples_a.to_string(),
            c.samples_b.to_string(),
        ]);
    }
    let mut t = crate::texttab::TextTable::default();
    for (i, r) in rows.iter().enumerate() {
        if i > 0 {
            t.row();
        }
        for (j, cell) in r.iter().enumerate() {
            let align = if j == 0 { Align::Left } else { Align::Right };
            t.cell(cell, align, Some("  "));
        }
    }
    t.format()
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "main;serve;read 50\nmain;serve;handle_set;dict_add 30\nmain;serve;write 20\n";
    const B: &str = "main;serve;read 50\nmain;serve;handle_set;dict_add 30\n\
                     main;serve;handle_set;slow_path 40\nmain;serve;write 20\n";

    #[test]
    fn self_and_total_shares_and_the_biggest_change_first() {
        let a = Folded::parse("a", A).unwrap();
        let b = Folded::parse("b", B).unwrap();
        assert_eq!(a.samples(), 100);
        let f = b.by_function();
        assert_eq!(f["handle_set"], (0, 70));
        assert_eq!(f["main"], (0, 140));
        let c = changes(&a, &b, None, 3);
        assert_eq!(c[0].function, "slow_path", "{c:#?}");
        assert_eq!((c[0].samples_a, c[0].samples_b), (0, 40));
        // Per request: the same work per request in A and B except the injected path.
        let c = changes(&a, &b, Some((100, 100)), 10);
        assert_eq!(c[0].function, "slow_path");
        let read = c.iter().find(|x| x.function == "read").unwrap();
        assert_eq!(read.self_delta(), 0.0);
        let t = table(&c, true);
        assert!(
            t.contains("slow_path") && t.contains("samples/request"),
            "{t}"
        );
    }

    #[test]
    fn malformed_lines_name_file_and_line() {
        let e = Folded::parse("x.folded", "a;b 3\n\nno count here\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert_eq!(
            e.to_string(),
            "x.folded:3: expected `frame;frame;… SAMPLES`, found `no count here`"
        );
        assert!(Folded::parse("x", " 4\n").is_err());
        assert_eq!(Folded::parse("x", "a 1\na 2\n").unwrap().stacks["a"], 3);
    }

    #[test]
    fn the_differential_flame_graph_is_svg_naming_the_new_frame() {
        let a = Folded::parse("a", A).unwrap();
        let b = Folded::parse("b", B).unwrap();
        let svg = differential_svg(&a, &b, "B vs A").unwrap();
        assert!(svg.contains("<svg"), "{}", &svg[..200.min(svg.len())]);
        assert!(svg.contains("slow_path"));
        assert!(svg.contains("B vs A"));
    }

    #[test]
    fn per_request_normalisation_and_an_inline_svg_without_script() {
        let a = Folded::parse("a", A).unwrap();
        let mut b = Folded::parse("b", B).unwrap();
        b.add(&Folded::parse("b2", "main;serve;read 10\n").unwrap());
        assert_eq!(b.stacks["main;serve;read"], 60);
        let svg = differential_svg_per_request(&a, &b, Some((100, 200)), "B vs A").unwrap();
        let inline = inline_svg(&svg);
        assert!(inline.starts_with("<svg"), "{}", &inline[..80]);
        for gone in ["<script", "<style", "onload", "<?xml", "<!DOCTYPE"] {
            assert!(!inline.contains(gone), "{gone}");
        }
        assert!(inline.contains("slow_path") && inline.contains("<title>"));
        let one = flame_svg(&a, "A", "from 2 trials").unwrap();
        assert!(one.contains("from 2 trials"));
    }
}
