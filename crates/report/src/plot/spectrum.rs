//! The latency percentile spectrum, as HdrHistogram plots it: x is the percentile on a
//! log scale of 1 / (1 − p), so 50 %, 90 %, 99 %, 99.9 %, 99.99 % and 99.999 % are
//! equally spaced and the tail gets as much room as the body; y is the latency. One line
//! per variant, from the histogram of all its counted trials merged, so a tail that
//! moves while the median stays put is plain to see.
//!
//! Percentiles beyond what a histogram's count can resolve (above 1 − 1/n) all equal its
//! largest value; the line then runs flat to the right edge.

use super::{
    colour, draw_label, draw_markers, house_mesh, latency_unit, render_svg, DrawResult, PlotError,
    Series,
};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, VPos};
use resplab_stats::hist::LatencyHistogram;

/// Left edge: 1 / (1 − 0.5).
pub const X_MIN: f64 = 2.0;
/// Right edge: 1 / (1 − 0.99999).
pub const X_MAX: f64 = 1e5;
/// Points per decade of the x axis.
const STEPS_PER_DECADE: usize = 24;
/// Percentiles that get a marker (and a tick).
const TICKS: [(f64, &str); 6] = [
    (2.0, "50%"),
    (10.0, "90%"),
    (100.0, "99%"),
    (1e3, "99.9%"),
    (1e4, "99.99%"),
    (1e5, "99.999%"),
];

/// The spectrum of one histogram: (1 / (1 − p), latency in µs) from p = 50 % to
/// 99.999 %. Empty for an empty histogram.
pub fn points(h: &LatencyHistogram) -> Vec<(f64, f64)> {
    if h.is_empty() {
        return Vec::new();
    }
    let lo = X_MIN.log10();
    let hi = X_MAX.log10();
    let steps = ((hi - lo) * STEPS_PER_DECADE as f64).ceil() as usize;
    (0..=steps)
        .map(|i| {
            let e = lo + (hi - lo) * i as f64 / steps as f64;
            let x = 10f64.powf(e).clamp(X_MIN, X_MAX);
            let p = 100.0 * (1.0 - 1.0 / x);
            (x, h.percentile_ns(p) as f64 / 1000.0)
        })
        .collect()
}

/// Draws the spectrum of each series (points from [`points`], y in µs).
///
/// # Errors
/// [`PlotError`] when no series has a point or drawing fails.
pub fn render(series: &[Series]) -> Result<String, PlotError> {
    let max_us = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.1))
        .filter(|v| v.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    if !max_us.is_finite() {
        return Err(PlotError::new(
            "latency spectrum",
            "expected a histogram with values, found none",
        ));
    }
    let (div, unit) = latency_unit(max_us);
    let ymax = if max_us > 0.0 {
        max_us / div * 1.08
    } else {
        1.0
    };
    let legend: Vec<(String, usize)> = series
        .iter()
        .filter(|s| !s.points.is_empty())
        .map(|s| (s.name.clone(), s.index))
        .collect();
    let y_desc = format!("latency ({unit})");
    render_svg("latency spectrum", &legend, |area| {
        let mut chart = ChartBuilder::on(area)
            .margin_left(8)
            .margin_right(36)
            .margin_top(8)
            .x_label_area_size(52)
            .y_label_area_size(86)
            .build_cartesian_2d((X_MIN..X_MAX).log_scale(), 0f64..ymax)?;
        house_mesh(&mut chart.configure_mesh())
            .x_desc("percentile (log scale of 1/(1-p))")
            .y_desc(y_desc.as_str())
            .disable_x_mesh()
            .x_labels(0)
            .x_label_formatter(&|_| String::new())
            .draw()?;
        draw_percentile_ticks(&mut chart, ymax)?;
        for s in series.iter().filter(|s| !s.points.is_empty()) {
            let pts: Vec<(f64, f64)> = s.points.iter().map(|&(x, y)| (x, y / div)).collect();
            chart.draw_series(LineSeries::new(
                pts.clone(),
                colour(s.index).stroke_width(2),
            ))?;
            let marks: Vec<(f64, f64)> = TICKS
                .iter()
                .filter_map(|(tx, _)| {
                    pts.iter()
                        .min_by(|a, b| (a.0 / tx).ln().abs().total_cmp(&(b.0 / tx).ln().abs()))
                        .copied()
                })
                .collect();
            draw_markers(&mut chart, &marks, s.index)?;
        }
        Ok(())
    })
}

/// A grid line and a label at each named percentile.
fn draw_percentile_ticks<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    ymax: f64,
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    for (x, label) in TICKS {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, 0.0), (x, ymax)],
            RGBColor(0xe4, 0xe4, 0xe4).stroke_width(1),
        )))?;
        let h = if x == X_MAX {
            HPos::Right
        } else if x == X_MIN {
            HPos::Left
        } else {
            HPos::Center
        };
        draw_label(chart, (x, 0.0), (0, 8), label, h, VPos::Top)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spectrum_spans_50_to_99_999() {
        let mut h = LatencyHistogram::new();
        for i in 1..=100_000u64 {
            h.record(i * 10);
        }
        let pts = points(&h);
        assert!((pts[0].0 - 2.0).abs() < 1e-9);
        assert!((pts[pts.len() - 1].0 - 1e5).abs() < 1e-6);
        // p50 of 10 ns .. 1 ms uniform is about 500 µs
        assert!((pts[0].1 - 500.0).abs() < 5.0, "{}", pts[0].1);
        assert!(pts.windows(2).all(|w| w[1].1 >= w[0].1));
        assert!(points(&LatencyHistogram::new()).is_empty());
    }
}
