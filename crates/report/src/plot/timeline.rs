//! A per-second figure (ops/s, p99 latency) over the measured part of one trial per
//! variant. Shows warm-up that was too short, throughput that sags as memory fills, a
//! stall, or a periodic hiccup (an fsync, a background save) that a whole-trial number
//! averages away.

use super::{colour, draw_markers, house_mesh, padded, render_svg, tick_number, PlotError, Series};
use plotters::prelude::*;

/// What to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline<'a> {
    /// One series per variant: (seconds since the measured part began, value).
    pub series: &'a [Series],
    /// Y axis description with its unit.
    pub y_desc: &'a str,
}

/// Draws the plot.
///
/// # Errors
/// [`PlotError`] when no series has a point or drawing fails.
pub fn render(p: &Timeline<'_>) -> Result<String, PlotError> {
    lines(
        "per-second series",
        p.series,
        "time since the measured part began (s)",
        p.y_desc,
    )
}

/// A line plot of named series over a common x axis starting at 0 (each series drawn
/// with its variant's colour and markers): the per-second series, and a calibration's
/// predicted MDE against wall time.
///
/// # Errors
/// [`PlotError`] (named `plot`) when no series has a point or drawing fails.
pub fn lines(
    plot: &str,
    series: &[Series],
    x_desc: &str,
    y_desc: &str,
) -> Result<String, PlotError> {
    let p = Timeline { series, y_desc };
    let pts = p
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .filter(|q| q.0.is_finite() && q.1.is_finite());
    let tmax = pts.clone().map(|q| q.0).fold(f64::NEG_INFINITY, f64::max);
    let ymax = pts.clone().map(|q| q.1).fold(f64::NEG_INFINITY, f64::max);
    let ymin = pts.map(|q| q.1).fold(f64::INFINITY, f64::min);
    if !tmax.is_finite() {
        return Err(PlotError::new(
            plot,
            "expected at least one point, found none",
        ));
    }
    let (ylo, yhi) = padded(ymin, ymax, true);
    let legend: Vec<(String, usize)> = p
        .series
        .iter()
        .filter(|s| !s.points.is_empty())
        .map(|s| (s.name.clone(), s.index))
        .collect();
    render_svg(plot, &legend, |area| {
        let mut chart = ChartBuilder::on(area)
            .margin_left(8)
            .margin_right(24)
            .margin_top(8)
            .x_label_area_size(52)
            .y_label_area_size(86)
            .build_cartesian_2d(0f64..(tmax.max(1.0) * 1.04), ylo..yhi)?;
        house_mesh(&mut chart.configure_mesh())
            .x_desc(x_desc)
            .y_desc(p.y_desc)
            .x_label_formatter(&|v| tick_number(*v))
            .draw()?;
        for s in p.series.iter().filter(|s| !s.points.is_empty()) {
            chart.draw_series(LineSeries::new(
                s.points.clone(),
                colour(s.index).stroke_width(2),
            ))?;
            draw_markers(&mut chart, &s.points, s.index)?;
        }
        Ok(())
    })
}
