//! The trial values of each variant on one axis, one row per variant (baseline on
//! top): a box from the first to the third quartile with the median drawn across it, a
//! whisker from the smallest to the largest value, and every trial as a dot. Dots are
//! spread vertically by a fixed sequence (no randomness), so equal values stay visible
//! and the plot is the same on every run. Like ministat's plot, it shows at once whether
//! two variants overlap, how wide each is, and whether one is bimodal.

use super::{
    colour, draw_label, draw_markers, padded, render_svg, tick_number, DrawResult, PlotError,
    DESC_FONT, TICK_FONT,
};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use resplab_stats::describe::quantile_sorted;

/// What to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct Distribution<'a> {
    /// One row per variant: (name, variant index, values).
    pub rows: &'a [(String, usize, Vec<f64>)],
    /// X axis description with its unit.
    pub x_desc: &'a str,
}

/// Vertical offset of the `i`-th dot of a row, in row heights: a golden-ratio sequence
/// folded into ±0.22.
fn jitter(i: usize) -> f64 {
    let f = (i as f64 * 0.618_033_988_749_895).fract();
    (f - 0.5) * 0.44
}

/// Draws the plot.
///
/// # Errors
/// [`PlotError`] when no row has a value or drawing fails.
pub fn render(p: &Distribution<'_>) -> Result<String, PlotError> {
    let all = p
        .rows
        .iter()
        .flat_map(|r| r.2.iter().copied())
        .filter(|v| v.is_finite());
    let lo = all.clone().fold(f64::INFINITY, f64::min);
    let hi = all.fold(f64::NEG_INFINITY, f64::max);
    if !lo.is_finite() {
        return Err(PlotError::new(
            "distribution",
            "expected at least one value, found none",
        ));
    }
    let (xlo, xhi) = padded(lo, hi, false);
    let k = p.rows.len();
    let longest = p
        .rows
        .iter()
        .map(|r| r.0.chars().count())
        .max()
        .unwrap_or(1);
    let label_w = (longest as u32 * 8 + 24).clamp(60, 230);
    let names: Vec<String> = p.rows.iter().map(|r| r.0.clone()).collect();
    // Row i sits at y = k - 1 - i so the first row (the baseline) is on top.
    let row_y = move |i: usize| (k - 1 - i) as f64;
    render_svg("distribution", &[], |area| {
        let mut chart = ChartBuilder::on(area)
            .margin_left(8)
            .margin_right(24)
            .margin_top(12)
            .x_label_area_size(52)
            .y_label_area_size(label_w)
            .build_cartesian_2d(xlo..xhi, -0.6f64..(k as f64 - 0.4))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_desc(p.x_desc)
            .x_labels(7)
            .x_label_formatter(&|v| tick_number(*v))
            .y_labels(0)
            .label_style(("sans-serif", TICK_FONT))
            .axis_desc_style(("sans-serif", DESC_FONT))
            .light_line_style(WHITE)
            .bold_line_style(RGBColor(0xe4, 0xe4, 0xe4))
            .draw()?;
        for (i, name) in names.iter().enumerate() {
            draw_label(
                &mut chart,
                (xlo, row_y(i)),
                (-10, 0),
                name,
                HPos::Right,
                VPos::Center,
            )?;
        }
        for (i, (_, index, values)) in p.rows.iter().enumerate() {
            draw_row(&mut chart, values, row_y(i), *index)?;
        }
        Ok(())
    })
}

/// One variant's row at height `y`: whisker, quartile box, median and every value as a
/// dot. Nothing when no value is finite.
fn draw_row(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    values: &[f64],
    y: f64,
    index: usize,
) -> DrawResult {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return Ok(());
    }
    v.sort_by(f64::total_cmp);
    let c = colour(index);
    let (q1, med, q3) = (
        quantile_sorted(&v, 0.25),
        quantile_sorted(&v, 0.5),
        quantile_sorted(&v, 0.75),
    );
    let (min, max) = (v[0], v[v.len() - 1]);
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(min, y), (max, y)],
        c.stroke_width(1),
    )))?;
    for end in [min, max] {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(end, y - 0.12), (end, y + 0.12)],
            c.stroke_width(1),
        )))?;
    }
    chart.draw_series(std::iter::once(Rectangle::new(
        [(q1, y - 0.3), (q3, y + 0.3)],
        c.mix(0.15).filled(),
    )))?;
    chart.draw_series(std::iter::once(Rectangle::new(
        [(q1, y - 0.3), (q3, y + 0.3)],
        c.stroke_width(1),
    )))?;
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(med, y - 0.3), (med, y + 0.3)],
        c.stroke_width(3),
    )))?;
    let dots: Vec<(f64, f64)> = values
        .iter()
        .enumerate()
        .filter(|(_, x)| x.is_finite())
        .map(|(j, x)| (*x, y + jitter(j)))
        .collect();
    draw_markers(chart, &dots, index)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::jitter;

    #[test]
    fn jitter_stays_inside_the_row() {
        for i in 0..1000 {
            assert!(jitter(i).abs() <= 0.22);
        }
    }
}
