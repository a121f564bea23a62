//! A tracked series over its points: one mark per point, coloured by segment (a new
//! host or configuration starts a new colour and a grey rule), the mean of each level
//! drawn across it, and a dashed rule at each change point — vermillion for a
//! regression, bluish green for an improvement, black for a shift of unknown direction;
//! solid once an A/B confirmed it (`history --confirm`), faint when one did not.

use super::{colour, draw_markers, ordinal_chart, padded, render_svg, DrawResult, PlotError};
use plotters::prelude::*;
use resplab_results::history::{ChangeAt, HistoryLine, Segment};

/// Draws one line of a history.
///
/// # Errors
/// [`PlotError`] when the line has no point or drawing fails.
pub fn render(line: &HistoryLine) -> Result<String, PlotError> {
    let values: Vec<f64> = line
        .segments
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.value))
        .collect();
    if values.is_empty() {
        return Err(PlotError::new(
            "history",
            "expected at least one point, found none",
        ));
    }
    let n = values.len();
    let lo = values
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(f64::INFINITY, f64::min);
    let hi = values
        .iter()
        .copied()
        .filter(|v| v.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    let (ylo, yhi) = padded(lo, hi, false);
    let legend: Vec<(String, usize)> = (0..line.segments.len())
        .map(|i| (format!("segment {}", i + 1), i))
        .collect();
    let legend = if legend.len() > 1 { legend } else { Vec::new() };
    let y_desc = match line.unit.as_str() {
        "" => line.metric.clone(),
        u => format!("{} ({u})", line.metric),
    };
    render_svg("history", &legend, |area| {
        let mut chart = ordinal_chart(
            area,
            n,
            (ylo, yhi),
            ("point, in measurement order", y_desc.as_str()),
        )?;
        let mut first = 1usize;
        for (s, seg) in line.segments.iter().enumerate() {
            let x0 = first as f64;
            if s > 0 {
                let x = x0 - 0.5;
                chart.draw_series(std::iter::once(PathElement::new(
                    vec![(x, ylo), (x, yhi)],
                    RGBColor(0x90, 0x90, 0x90).stroke_width(2),
                )))?;
            }
            draw_levels(&mut chart, seg, x0, s)?;
            for c in &seg.change_points {
                draw_change_rule(&mut chart, x0 + c.index as f64 - 0.5, (ylo, yhi), c)?;
            }
            let pts: Vec<(f64, f64)> = seg
                .points
                .iter()
                .enumerate()
                .filter(|(_, p)| p.value.is_finite())
                .map(|(i, p)| (x0 + i as f64, p.value))
                .collect();
            chart.draw_series(std::iter::once(PathElement::new(
                pts.clone(),
                colour(s).mix(0.45).stroke_width(1),
            )))?;
            draw_markers(&mut chart, &pts, s)?;
            first += seg.points.len();
        }
        Ok(())
    })
}

/// The rule of one change point at `x`: coloured by direction, solid once an A/B
/// confirmed it, faint when one did not, dashed while unconfirmed.
fn draw_change_rule<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    x: f64,
    (ylo, yhi): (f64, f64),
    c: &ChangeAt,
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let rule = match c.is_regression {
        Some(true) => RGBColor(0xD5, 0x5E, 0x00),
        Some(false) => RGBColor(0x00, 0x9E, 0x73),
        None => BLACK,
    };
    let line = vec![(x, ylo), (x, yhi)];
    match c.confirmation.as_ref().map(|k| k.confirmed) {
        Some(true) => {
            chart.draw_series(std::iter::once(PathElement::new(
                line,
                rule.stroke_width(3),
            )))?;
        }
        Some(false) => {
            let faint = rule.mix(0.3).stroke_width(2);
            chart.draw_series(DashedLineSeries::new(line, 6, 4, faint))?;
        }
        None => {
            chart.draw_series(DashedLineSeries::new(line, 6, 4, rule.stroke_width(2)))?;
        }
    }
    Ok(())
}

/// The mean of each level of segment number `s` (between its change points), drawn
/// across the level's points from `x0`.
fn draw_levels<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    seg: &Segment,
    x0: f64,
    s: usize,
) -> DrawResult
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    let mut bounds: Vec<usize> = seg.change_points.iter().map(|c| c.index).collect();
    bounds.insert(0, 0);
    bounds.push(seg.points.len());
    for w in bounds.windows(2) {
        let level = &seg.points[w[0]..w[1]];
        let mean = level.iter().map(|p| p.value).sum::<f64>() / level.len() as f64;
        let (a, b) = (x0 + w[0] as f64 - 0.3, x0 + w[1] as f64 - 0.7);
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(a, mean), (b, mean)],
            colour(s).mix(0.6).stroke_width(2),
        )))?;
    }
    Ok(())
}
