//! Plots of a report, drawn as SVG text with `plotters`.
//!
//! Every plot is a pure function of its numbers: the same data gives the same bytes, so
//! the SVGs are snapshot-tested. Text is written as SVG `<text>` elements in the generic
//! `sans-serif` family; `plotters` is built without its font features, so layout uses
//! its fixed-width estimate and no font file is ever loaded — the viewer's own fonts
//! draw the glyphs.
//!
//! Colours: variants keep one colour in every plot of a report, picked by their index
//! (baseline first) from [`PALETTE`], the Okabe–Ito set that stays distinguishable with
//! the common colour-vision deficiencies (its yellow is left out: it vanishes on white
//! paper). Each variant also keeps one marker shape, so the plots read in black and
//! white too.
//!
//! - [`run_order`]: one mark per trial in the order trials ran.
//! - [`distribution`]: the trial values of each variant, box and dots.
//! - [`spectrum`]: latency by percentile, 50 % to 99.999 % on a log scale.
//! - [`timeline`]: a figure per interval over the measured part of one trial.
//! - [`forest`]: every effect of a comparison with its interval, coloured by verdict.
//! - [`history`]: a tracked series with its segments, levels and change points.
//!
//! Neighbours: [`crate::doc`] decides what to plot and places the SVGs in a document.

pub mod distribution;
pub mod forest;
pub mod history;
pub mod run_order;
pub mod spectrum;
pub mod timeline;

use plotters::chart::MeshStyle;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Width of every plot, in SVG user units (CSS pixels at scale 1).
pub const WIDTH: u32 = 640;
/// Height of the plotting part of a plot (a legend adds to it).
pub const HEIGHT: u32 = 340;

/// Okabe–Ito colours without yellow, as `(r, g, b)`: blue, vermillion, bluish green,
/// reddish purple, orange, sky blue, black.
pub const PALETTE: [(u8, u8, u8); 7] = [
    (0x00, 0x72, 0xB2),
    (0xD5, 0x5E, 0x00),
    (0x00, 0x9E, 0x73),
    (0xCC, 0x79, 0xA7),
    (0xE6, 0x9F, 0x00),
    (0x56, 0xB4, 0xE9),
    (0x00, 0x00, 0x00),
];

/// Names of the marker shapes, in the order variants take them.
pub const SHAPES: [&str; 4] = ["circle", "triangle", "square", "diamond"];

/// The colour of variant `index` (baseline = 0); repeats after seven variants.
pub fn colour(index: usize) -> RGBColor {
    let (r, g, b) = PALETTE[index % PALETTE.len()];
    RGBColor(r, g, b)
}

/// The colour of variant `index` as a CSS hex string (`#0072b2`).
pub fn colour_hex(index: usize) -> String {
    let (r, g, b) = PALETTE[index % PALETTE.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// A plot that could not be drawn.
#[derive(Debug, thiserror::Error)]
#[error("plot `{plot}`: {message}")]
pub struct PlotError {
    /// Which plot.
    pub plot: String,
    /// What went wrong.
    pub message: String,
}

impl PlotError {
    pub(crate) fn new(plot: &str, message: impl Into<String>) -> PlotError {
        PlotError {
            plot: plot.to_string(),
            message: message.into(),
        }
    }
}

/// A named, coloured set of points.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Variant name shown in the legend.
    pub name: String,
    /// Variant index: picks colour and marker.
    pub index: usize,
    /// The points, in drawing order.
    pub points: Vec<(f64, f64)>,
}

pub(crate) type DrawResult = Result<(), Box<dyn std::error::Error>>;

pub(crate) const TICK_FONT: u32 = 17;
pub(crate) const DESC_FONT: u32 = 19;

/// The chart of values in the order they came, x from 1 to `n` with integer ticks, y
/// from `lo` to `hi`, and the light mesh of the run-order and history plots.
pub(crate) fn ordinal_chart<'a, 'b>(
    area: &'a DrawingArea<SVGBackend<'b>, Shift>,
    n: usize,
    (lo, hi): (f64, f64),
    (x_desc, y_desc): (&str, &str),
) -> Result<
    ChartContext<
        'a,
        SVGBackend<'b>,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    Box<dyn std::error::Error>,
> {
    let mut chart = ChartBuilder::on(area)
        .margin_left(8)
        .margin_right(20)
        .margin_top(8)
        .x_label_area_size(52)
        .y_label_area_size(86)
        .build_cartesian_2d(0.5f64..(n as f64 + 0.5), lo..hi)?;
    house_mesh(&mut chart.configure_mesh())
        .disable_x_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .x_labels(n.min(12))
        .x_label_formatter(&|v| format!("{}", v.round() as i64))
        .draw()?;
    Ok(chart)
}

/// Every plot's mesh in the house style: y ticks as [`tick_number`]s, the tick and
/// description fonts, no minor grid (white) and a light grey major grid. Callers add
/// their axes' descriptions and x labels and draw.
pub(crate) fn house_mesh<'m, 'a, 'b, X, Y, DB>(
    mesh: &'m mut MeshStyle<'a, 'b, X, Y, DB>,
) -> &'m mut MeshStyle<'a, 'b, X, Y, DB>
where
    X: Ranged + ValueFormatter<X::ValueType>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    DB: DrawingBackend,
{
    mesh.y_label_formatter(&y_tick)
        .label_style(("sans-serif", TICK_FONT))
        .axis_desc_style(("sans-serif", DESC_FONT))
        .light_line_style(WHITE)
        .bold_line_style(RGBColor(0xe4, 0xe4, 0xe4))
}

fn y_tick(v: &f64) -> String {
    tick_number(*v)
}

const LEGEND_FONT: u32 = 17;
const LEGEND_ROW: u32 = 24;

/// Draws into a fresh SVG of `WIDTH` × (`HEIGHT` + legend) and returns its text.
pub(crate) fn render_svg(
    plot: &str,
    legend: &[(String, usize)],
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> DrawResult,
) -> Result<String, PlotError> {
    let rows = legend_rows(legend);
    let legend_h = if legend.is_empty() {
        0
    } else {
        rows.len() as u32 * LEGEND_ROW + 8
    };
    let mut svg = String::new();
    {
        let root =
            SVGBackend::with_string(&mut svg, (WIDTH, HEIGHT + legend_h)).into_drawing_area();
        let result: DrawResult = (|| {
            root.fill(&WHITE)?;
            let (top, chart) = root.split_vertically(legend_h);
            if !legend.is_empty() {
                draw_legend(&top, &rows)?;
            }
            draw(&chart)?;
            root.present()?;
            Ok(())
        })();
        result.map_err(|e| PlotError::new(plot, e.to_string()))?;
    }
    Ok(svg)
}

/// Draws into a fresh SVG of `WIDTH` × `height`, with no legend (the plot draws its
/// own), and returns its text.
pub(crate) fn render_svg_sized(
    plot: &str,
    height: u32,
    draw: impl FnOnce(&DrawingArea<SVGBackend<'_>, Shift>) -> DrawResult,
) -> Result<String, PlotError> {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
        let result: DrawResult = (|| {
            root.fill(&WHITE)?;
            draw(&root)?;
            root.present()?;
            Ok(())
        })();
        result.map_err(|e| PlotError::new(plot, e.to_string()))?;
    }
    Ok(svg)
}

/// Estimated width of a legend entry: marker, gap, text (plotters' fixed-width guess).
fn legend_entry_width(name: &str) -> u32 {
    28 + (name.chars().count() as u32) * 8 + 18
}

fn legend_rows(legend: &[(String, usize)]) -> Vec<Vec<(String, usize)>> {
    let mut rows: Vec<Vec<(String, usize)>> = Vec::new();
    let mut used = u32::MAX;
    for (name, index) in legend {
        let w = legend_entry_width(name);
        if used.saturating_add(w) > WIDTH - 16 {
            rows.push(Vec::new());
            used = 0;
        }
        used += w;
        if let Some(r) = rows.last_mut() {
            r.push((name.clone(), *index));
        }
    }
    rows
}

fn draw_legend(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    rows: &[Vec<(String, usize)>],
) -> DrawResult {
    for (r, row) in rows.iter().enumerate() {
        let y = 6 + r as i32 * LEGEND_ROW as i32 + LEGEND_ROW as i32 / 2;
        let mut x = 16i32;
        for (name, index) in row {
            area.draw(&PathElement::new(
                vec![(x, y), (x + 20, y)],
                colour(*index).stroke_width(2),
            ))?;
            draw_marker_px(area, (x + 10, y), *index)?;
            area.draw(&Text::new(
                name.clone(),
                (x + 28, y),
                ("sans-serif", LEGEND_FONT)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            ))?;
            x += legend_entry_width(name) as i32;
        }
    }
    Ok(())
}

/// Draws the marker of variant `index` at each point of a chart.
pub(crate) fn draw_markers<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    pts: &[(f64, f64)],
    index: usize,
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let style = colour(index).filled();
    let it = pts.iter().copied();
    match index % SHAPES.len() {
        0 => {
            chart.draw_series(it.map(|c| EmptyElement::at(c) + Circle::new((0, 0), 4, style)))?;
        }
        1 => {
            chart.draw_series(
                it.map(|c| EmptyElement::at(c) + TriangleMarker::new((0, 0), 5, style)),
            )?;
        }
        2 => {
            chart.draw_series(
                it.map(|c| EmptyElement::at(c) + Rectangle::new([(-4, -4), (4, 4)], style)),
            )?;
        }
        _ => {
            chart.draw_series(it.map(|c| {
                EmptyElement::at(c) + Polygon::new(vec![(0, -5), (5, 0), (0, 5), (-5, 0)], style)
            }))?;
        }
    }
    Ok(())
}

/// Draws the marker of variant `index` at pixel `at` of an area.
fn draw_marker_px(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    at: (i32, i32),
    index: usize,
) -> DrawResult {
    let style = colour(index).filled();
    match index % SHAPES.len() {
        0 => area.draw(&(EmptyElement::at(at) + Circle::new((0, 0), 4, style)))?,
        1 => area.draw(&(EmptyElement::at(at) + TriangleMarker::new((0, 0), 5, style)))?,
        2 => area.draw(&(EmptyElement::at(at) + Rectangle::new([(-4, -4), (4, 4)], style)))?,
        _ => area.draw(
            &(EmptyElement::at(at) + Polygon::new(vec![(0, -5), (5, 0), (0, 5), (-5, 0)], style)),
        )?,
    }
    Ok(())
}

/// Writes `text` at a data point of a chart, shifted by `offset` pixels, anchored by
/// `h`/`v` (used for axis labels the default tick logic cannot place).
pub(crate) fn draw_label<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    at: (f64, f64),
    offset: (i32, i32),
    text: &str,
    h: HPos,
    v: VPos,
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let font = ("sans-serif", TICK_FONT)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(h, v));
    chart.draw_series(std::iter::once(
        EmptyElement::at(at) + Text::new(text.to_string(), offset, font),
    ))?;
    Ok(())
}

/// A number for an axis tick: at most four significant digits, with k/M/G for large
/// magnitudes.
pub fn tick_number(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    format!("{}{suffix}", significant(scaled, 4))
}

/// `v` with at most `digits` significant digits, trailing zeros dropped.
pub fn significant(v: f64, digits: i32) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v.is_finite() {
            "0".into()
        } else {
            format!("{v}")
        };
    }
    let mag = v.abs().log10().floor() as i32;
    let decimals = (digits - 1 - mag).clamp(0, 9) as usize;
    let s = format!("{v:.decimals$}");
    let s = if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    };
    if s == "-0" {
        "0".into()
    } else {
        s
    }
}

/// A value range with some air around it; a flat range is widened so it has a height.
pub(crate) fn padded(lo: f64, hi: f64, from_zero: bool) -> (f64, f64) {
    let (lo, hi) = if lo.is_finite() && hi.is_finite() && lo <= hi {
        (lo, hi)
    } else {
        (0.0, 1.0)
    };
    let span = hi - lo;
    let pad = if span > 0.0 {
        span * 0.08
    } else if hi != 0.0 {
        hi.abs() * 0.02
    } else {
        1.0
    };
    let low = if from_zero && lo >= 0.0 {
        0.0
    } else {
        lo - pad
    };
    (low, hi + pad)
}

/// Latency unit for a largest value in microseconds: (divisor, unit name).
pub fn latency_unit(max_us: f64) -> (f64, &'static str) {
    if max_us >= 10_000.0 {
        (1000.0, "ms")
    } else {
        (1.0, "µs")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_numbers() {
        assert_eq!(tick_number(95_250.0), "95.25k");
        assert_eq!(tick_number(120.0), "120");
        assert_eq!(tick_number(0.5), "0.5");
        assert_eq!(tick_number(2_500_000.0), "2.5M");
        assert_eq!(tick_number(0.0), "0");
        assert_eq!(significant(-0.00001, 2), "-0.00001");
    }

    #[test]
    fn palette_is_fixed() {
        assert_eq!(colour_hex(0), "#0072b2");
        assert_eq!(colour_hex(7), "#0072b2");
    }

    #[test]
    fn legend_wraps() {
        let many: Vec<(String, usize)> = (0..7)
            .map(|i| (format!("variant-with-a-long-name-{i}"), i))
            .collect();
        assert!(legend_rows(&many).len() > 1);
        assert_eq!(legend_rows(&many[..1]).len(), 1);
    }
}
