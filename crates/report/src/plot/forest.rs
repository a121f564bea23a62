//! The forest plot: every effect of a comparison on one axis, one row each, with its
//! confidence interval, the zero line and the equivalence margin as a shaded band, each
//! row coloured by its verdict. With many workloads and metrics it is the picture a
//! reader looks at first: what moved, which way, and how sure the interval is.
//!
//! The axis is the log of the ratio variant/baseline, labelled in percent: ×½ and ×2
//! (−50 % and +100 %) sit at the same distance from zero, the axis spans at least that
//! much on both sides and is widened symmetrically for larger effects, so a +4,000 % row
//! takes its place at ×41 and leaves the others readable instead of squeezing every
//! other effect to a dot at zero. An effect or interval end at or below −100 % (no ratio)
//! is drawn at the left edge.
//!
//! It is drawn in pixel coordinates (rows are as tall as labels need, so the plot grows
//! with the number of effects) with the report's fonts and the verdict colours of
//! [`verdict_colour`].

use super::{render_svg_sized, significant, DrawResult, PlotError, DESC_FONT, TICK_FONT, WIDTH};
use crate::verdict::Verdict;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// One effect.
#[derive(Clone, Debug, PartialEq)]
pub struct Effect {
    /// What the row is: workload, metric and variant.
    pub label: String,
    /// Variant vs baseline, percent.
    pub effect_pct: f64,
    /// Its confidence interval, percent, when there is one.
    pub low_pct: Option<f64>,
    pub high_pct: Option<f64>,
    pub verdict: Verdict,
}

/// What to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct Forest<'a> {
    pub effects: &'a [Effect],
    /// The equivalence margin, percent (drawn as ±margin).
    pub margin_pct: Option<f64>,
}

const ROW: i32 = 24;
const TOP: i32 = 40;
const BOTTOM: i32 = 64;
const LABEL_W: i32 = 262;
const RIGHT: i32 = 24;
const LABEL_CHARS: usize = 33;
/// The least distance between two powers-of-two ticks, pixels: room for a label such
/// as `+6300%`.
const TICK_GAP: i32 = 60;

/// The colour of a verdict: bluish green better, vermillion worse, reddish purple changed
/// (a metric without a direction), blue equivalent, grey no verdict (the Okabe–Ito
/// colours of the variants, reused).
pub fn verdict_colour(v: Verdict) -> RGBColor {
    match v {
        Verdict::Faster => RGBColor(0x00, 0x9E, 0x73),
        Verdict::Slower => RGBColor(0xD5, 0x5E, 0x00),
        Verdict::Higher | Verdict::Lower => RGBColor(0xCC, 0x79, 0xA7),
        Verdict::Equivalent => RGBColor(0x00, 0x72, 0xB2),
        Verdict::Inconclusive | Verdict::NoVerdict => RGBColor(0x80, 0x80, 0x80),
    }
}

/// The log ratio of an effect in percent (`+100` → ln 2); `None` at or below −100 %.
fn log_ratio(pct: f64) -> Option<f64> {
    let r = 1.0 + pct / 100.0;
    (r > 0.0 && r.is_finite()).then(|| r.ln())
}

/// Tick ratios, most important first: 1, then every `step`-th power of two out to the
/// axis's ends (×2, ×4, … or ×4, ×16, … on a wide axis), then ×1.5, ×1.25, ×1.1 and their
/// inverses (kept where they fit).
fn tick_ratios(half_span: f64, step: i32) -> Vec<f64> {
    let mut ticks = vec![1.0];
    let mut k = step.max(1);
    while f64::from(k) * std::f64::consts::LN_2 <= half_span + 1e-9 && k < 64 {
        let r = 2f64.powi(k);
        ticks.extend([r, 1.0 / r]);
        k += step.max(1);
    }
    for r in [1.5, 1.25, 1.1] {
        ticks.extend([r, 1.0 / r]);
    }
    ticks
}

/// About how wide a tick label is drawn, pixels (the tick font's digits and signs).
fn label_width(label: &str) -> i32 {
    label.chars().count() as i32 * 7 + 4
}

/// The percent label of a tick ratio: `0`, `+100%`, `-50%`, `-33.3%`.
fn tick_label(ratio: f64) -> String {
    let pct = (ratio - 1.0) * 100.0;
    if pct.abs() < 1e-9 {
        "0".to_string()
    } else if pct > 0.0 {
        format!("+{}%", significant(pct, 3))
    } else {
        format!("{}%", significant(pct, 3))
    }
}

fn shorten(s: &str) -> String {
    if s.chars().count() <= LABEL_CHARS {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(LABEL_CHARS - 1).collect();
        t.push('…');
        t
    }
}

/// Draws the plot.
///
/// # Errors
/// [`PlotError`] when there is no finite effect or drawing fails.
pub fn render(p: &Forest<'_>) -> Result<String, PlotError> {
    let rows: Vec<&Effect> = p
        .effects
        .iter()
        .filter(|e| e.effect_pct.is_finite())
        .collect();
    if rows.is_empty() {
        return Err(PlotError::new(
            "forest",
            "expected at least one finite effect, found none",
        ));
    }
    let margin = p
        .margin_pct
        .filter(|m| m.is_finite() && *m > 0.0 && *m < 100.0);
    let (lo, hi) = axis_range(&rows, margin);
    let height = TOP + ROW * rows.len() as i32 + BOTTOM;
    let frame = Frame {
        lo,
        hi,
        x0: LABEL_W,
        x1: WIDTH as i32 - RIGHT,
        plot_bottom: TOP + ROW * rows.len() as i32,
    };
    render_svg_sized("forest", height as u32, |area| {
        draw_legend(area, &rows)?;
        if let Some(m) = margin {
            area.draw(&Rectangle::new(
                [
                    (frame.px(-m), TOP - 4),
                    (frame.px(m), frame.plot_bottom + 4),
                ],
                RGBColor(0xe8, 0xe8, 0xe8).filled(),
            ))?;
        }
        draw_axis(area, &frame)?;
        draw_rows(area, &rows, &frame)
    })
}

/// The axis range in log-ratio units: symmetric about zero, at least ×½ … ×2, widened to
/// every finite effect and interval end (and the margin), padded by 6 %.
fn axis_range(rows: &[&Effect], margin: Option<f64>) -> (f64, f64) {
    let mut half = std::f64::consts::LN_2;
    for e in rows {
        for v in [Some(e.effect_pct), e.low_pct, e.high_pct]
            .into_iter()
            .flatten()
        {
            if let Some(x) = log_ratio(v) {
                half = half.max(x.abs());
            }
        }
    }
    if let Some(x) = margin.and_then(log_ratio) {
        half = half.max(x.abs());
    }
    let half = half * 1.06;
    (-half, half)
}

/// The plot's pixel frame: the axis range, the axis's left and right ends and the bottom
/// of the last row.
struct Frame {
    lo: f64,
    hi: f64,
    x0: i32,
    x1: i32,
    plot_bottom: i32,
}

impl Frame {
    /// The x pixel of effect `v` (percent) on the log-ratio axis; at or below −100 % (no
    /// ratio), the left edge.
    fn px(&self, v: f64) -> i32 {
        let x = log_ratio(v).unwrap_or(self.lo).clamp(self.lo, self.hi);
        self.x_of_log(x)
    }

    /// The x pixel of a log ratio.
    fn x_of_log(&self, x: f64) -> i32 {
        self.x0
            + ((x - self.lo) / (self.hi - self.lo) * f64::from(self.x1 - self.x0)).round() as i32
    }
}

/// The y pixel of the centre of row `i`.
fn y_of(i: usize) -> i32 {
    TOP + ROW * i as i32 + ROW / 2
}

/// Black text of `size` at `at`, centred vertically.
fn text(s: String, at: (i32, i32), h: HPos, size: u32) -> Text<'static, (i32, i32), String> {
    Text::new(
        s,
        at,
        ("sans-serif", size)
            .into_font()
            .color(&BLACK)
            .pos(Pos::new(h, VPos::Center)),
    )
}

/// The legend: the verdict colours ("changed" only when a row has a direction-free
/// verdict).
fn draw_legend(area: &DrawingArea<SVGBackend<'_>, Shift>, rows: &[&Effect]) -> DrawResult {
    let mut x = 16;
    let mut keys = vec![
        ("better", Verdict::Faster),
        ("worse", Verdict::Slower),
        ("equivalent", Verdict::Equivalent),
        ("no verdict", Verdict::Inconclusive),
    ];
    if rows
        .iter()
        .any(|e| matches!(e.verdict, Verdict::Higher | Verdict::Lower))
    {
        keys.insert(2, ("changed", Verdict::Higher));
    }
    for (name, v) in keys {
        area.draw(&Rectangle::new(
            [(x, 12), (x + 14, 26)],
            verdict_colour(v).filled(),
        ))?;
        area.draw(&text(name.to_string(), (x + 20, 19), HPos::Left, TICK_FONT))?;
        x += 28 + name.len() as i32 * 9 + 18;
    }
    Ok(())
}

/// Ticks (the most important first, each where its label has room), grid, the zero
/// line and the axis caption.
fn draw_axis(area: &DrawingArea<SVGBackend<'_>, Shift>, f: &Frame) -> DrawResult {
    let (x0, x1, plot_bottom) = (f.x0, f.x1, f.plot_bottom);
    // Each label's extent, [left, right] in pixels: a tick whose label would touch one
    // already placed is left out.
    let mut placed: Vec<(i32, i32)> = Vec::new();
    let per_doubling = f64::from(f.x_of_log(std::f64::consts::LN_2) - f.x_of_log(0.0));
    let step = (f64::from(TICK_GAP) / per_doubling.max(1.0)).ceil() as i32;
    for ratio in tick_ratios(f.hi, step) {
        let x = ratio.ln();
        if x < f.lo || x > f.hi {
            continue;
        }
        let xp = f.x_of_log(x);
        let label = tick_label(ratio);
        let half = label_width(&label) / 2;
        let clipped = xp + half > WIDTH as i32 - 2;
        if clipped
            || placed
                .iter()
                .any(|(l, r)| xp - half < r + 4 && xp + half > l - 4)
        {
            continue;
        }
        placed.push((xp - half, xp + half));
        area.draw(&PathElement::new(
            vec![(xp, TOP - 4), (xp, plot_bottom + 4)],
            RGBColor(0xd0, 0xd0, 0xd0).stroke_width(1),
        ))?;
        area.draw(&text(
            label,
            (xp, plot_bottom + 18),
            HPos::Center,
            TICK_FONT,
        ))?;
    }
    area.draw(&PathElement::new(
        vec![
            (f.x_of_log(0.0), TOP - 6),
            (f.x_of_log(0.0), plot_bottom + 6),
        ],
        BLACK.stroke_width(1),
    ))?;
    area.draw(&text(
        "effect, variant vs baseline, log-ratio axis (95% interval; shaded: equivalence margin)"
            .to_string(),
        ((x0 + x1) / 2 - 40, plot_bottom + 46),
        HPos::Center,
        DESC_FONT - 4,
    ))?;
    Ok(())
}

/// One row per effect: its label, interval and point, in its verdict's colour.
fn draw_rows(area: &DrawingArea<SVGBackend<'_>, Shift>, rows: &[&Effect], f: &Frame) -> DrawResult {
    for (i, e) in rows.iter().enumerate() {
        let y = y_of(i);
        let c = verdict_colour(e.verdict);
        area.draw(&text(shorten(&e.label), (8, y), HPos::Left, TICK_FONT - 2))?;
        if let (Some(l), Some(h)) = (e.low_pct, e.high_pct) {
            if l.is_finite() && h.is_finite() {
                area.draw(&PathElement::new(
                    vec![(f.px(l), y), (f.px(h), y)],
                    c.stroke_width(3),
                ))?;
                for end in [l, h] {
                    area.draw(&PathElement::new(
                        vec![(f.px(end), y - 5), (f.px(end), y + 5)],
                        c.stroke_width(2),
                    ))?;
                }
            }
        }
        let style = if e.verdict == Verdict::NoVerdict {
            c.stroke_width(2)
        } else {
            c.filled()
        };
        area.draw(&Circle::new((f.px(e.effect_pct), y), 5, style))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn effect(label: &str, e: f64, l: f64, h: f64, v: Verdict) -> Effect {
        Effect {
            label: label.into(),
            effect_pct: e,
            low_pct: Some(l),
            high_pct: Some(h),
            verdict: v,
        }
    }

    #[test]
    fn every_row_is_drawn_in_its_verdict_colour() {
        let effects = [
            effect("set ops_per_sec b", 3.1, 2.4, 3.8, Verdict::Faster),
            effect("get ops_per_sec b", -4.0, -5.0, -3.0, Verdict::Slower),
            effect("get p99_us b", 0.2, -0.5, 0.9, Verdict::Equivalent),
        ];
        let svg = render(&Forest {
            effects: &effects,
            margin_pct: Some(1.0),
        })
        .unwrap();
        assert!(svg.contains("set ops_per_sec b"));
        for v in [Verdict::Faster, Verdict::Slower, Verdict::Equivalent] {
            let RGBColor(r, g, b) = verdict_colour(v);
            let hex = format!("#{r:02X}{g:02X}{b:02X}");
            assert!(svg.contains(&hex), "{hex} missing");
        }
        // Taller with more rows.
        let one = render(&Forest {
            effects: &effects[..1],
            margin_pct: None,
        })
        .unwrap();
        let height = |s: &str| {
            s.split("height=\"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .and_then(|h| h.parse::<u32>().ok())
                .unwrap()
        };
        assert!(height(&svg) > height(&one));
    }

    #[test]
    fn nothing_finite_is_an_error() {
        let e = [effect("x", f64::NAN, 0.0, 0.0, Verdict::Inconclusive)];
        assert!(render(&Forest {
            effects: &e,
            margin_pct: None
        })
        .is_err());
    }

    #[test]
    fn the_axis_is_symmetric_in_log_ratio_at_least_half_to_double() {
        let small = [effect("a", 3.0, 1.0, 5.0, Verdict::Faster)];
        let rows: Vec<&Effect> = small.iter().collect();
        let (lo, hi) = axis_range(&rows, Some(5.0));
        assert!((hi - 2f64.ln() * 1.06).abs() < 1e-12 && (lo + hi).abs() < 1e-12);
        // +4,000 % widens both sides to ×41, not the right side alone.
        let big = [
            effect("p90", 4000.0, 3000.0, 5000.0, Verdict::Slower),
            effect("p50", 3.0, 1.0, 5.0, Verdict::Faster),
        ];
        let rows: Vec<&Effect> = big.iter().collect();
        let (lo, hi) = axis_range(&rows, None);
        assert!((hi - 51f64.ln() * 1.06).abs() < 1e-9, "{hi}");
        assert!((lo + hi).abs() < 1e-12);
    }

    #[test]
    fn a_small_effect_stays_readable_beside_a_huge_one() {
        let big = [
            effect("p90", 4000.0, 3000.0, 5000.0, Verdict::Slower),
            effect("p50", 10.0, 5.0, 15.0, Verdict::Slower),
            effect("gone", -100.0, -100.0, -90.0, Verdict::Faster),
        ];
        let rows: Vec<&Effect> = big.iter().collect();
        let (lo, hi) = axis_range(&rows, None);
        let f = Frame {
            lo,
            hi,
            x0: 0,
            x1: 1000,
            plot_bottom: 0,
        };
        // On a linear axis a +10 % next to +5,000 % would sit about 2 pixels from zero.
        assert!(f.px(10.0) - f.px(0.0) >= 10, "{}", f.px(10.0) - f.px(0.0));
        assert_eq!(f.px(-100.0), 0, "no ratio: the left edge");
        assert_eq!(f.px(100.0) - f.px(0.0), f.px(0.0) - f.px(-50.0));
        let svg = render(&Forest {
            effects: &big,
            margin_pct: Some(5.0),
        })
        .unwrap();
        for label in ["+700%", "-87.5%", "log-ratio axis"] {
            assert!(svg.contains(label), "{label} missing");
        }
        let small = render(&Forest {
            effects: &big[1..2],
            margin_pct: None,
        })
        .unwrap();
        for label in ["+100%", "-50%", "+50%", "-33.3%", "+25%"] {
            assert!(small.contains(label), "{label} missing");
        }
    }

    #[test]
    fn tick_labels_are_percent_changes() {
        assert_eq!(tick_label(1.0), "0");
        assert_eq!(tick_label(2.0), "+100%");
        assert_eq!(tick_label(0.5), "-50%");
        assert_eq!(tick_label(1.0 / 1.5), "-33.3%");
        assert_eq!(tick_label(4.0), "+300%");
    }
}
