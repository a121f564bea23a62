//! Trial values in the order the trials ran: one mark per trial, coloured by variant,
//! with a thin line joining each variant's trials and a grey rule where a new round
//! begins. Drift over time shows as a slope shared by every variant; a variant that only
//! ever ran first or last in its rounds shows as a pattern the rules make visible.

use super::{colour, draw_markers, ordinal_chart, padded, render_svg, PlotError};
use plotters::prelude::*;

/// One trial.
#[derive(Clone, Debug, PartialEq)]
pub struct Mark {
    /// 1-based position in the run order.
    pub order: usize,
    /// Variant index (colour and marker).
    pub variant: usize,
    /// The trial's value.
    pub value: f64,
}

/// What to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct RunOrder<'a> {
    /// Variant names, baseline first.
    pub variants: &'a [String],
    /// The trials.
    pub marks: &'a [Mark],
    /// Run-order positions at which a new round begins (the first round excluded).
    pub round_starts: &'a [usize],
    /// Y axis description with its unit, e.g. `ops/s (higher is better)`.
    pub y_desc: &'a str,
}

/// Draws the plot.
///
/// # Errors
/// [`PlotError`] when there is no trial or drawing fails.
pub fn render(p: &RunOrder<'_>) -> Result<String, PlotError> {
    if p.marks.is_empty() {
        return Err(PlotError::new(
            "run order",
            "expected at least one trial, found none",
        ));
    }
    let n = p.marks.iter().map(|m| m.order).max().unwrap_or(1);
    let finite = p.marks.iter().map(|m| m.value).filter(|v| v.is_finite());
    let lo = finite.clone().fold(f64::INFINITY, f64::min);
    let hi = finite.fold(f64::NEG_INFINITY, f64::max);
    let (ylo, yhi) = padded(lo, hi, false);
    let legend: Vec<(String, usize)> = p
        .variants
        .iter()
        .enumerate()
        .filter(|(i, _)| p.marks.iter().any(|m| m.variant == *i))
        .map(|(i, v)| (v.clone(), i))
        .collect();
    render_svg("run order", &legend, |area| {
        let mut chart = ordinal_chart(area, n, (ylo, yhi), ("trial, in run order", p.y_desc))?;
        for &start in p.round_starts {
            let x = start as f64 - 0.5;
            chart.draw_series(std::iter::once(PathElement::new(
                vec![(x, ylo), (x, yhi)],
                RGBColor(0xb0, 0xb0, 0xb0).stroke_width(1),
            )))?;
        }
        for (_, index) in &legend {
            let mut pts: Vec<(f64, f64)> = p
                .marks
                .iter()
                .filter(|m| m.variant == *index && m.value.is_finite())
                .map(|m| (m.order as f64, m.value))
                .collect();
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            chart.draw_series(std::iter::once(PathElement::new(
                pts.clone(),
                colour(*index).mix(0.45).stroke_width(1),
            )))?;
            draw_markers(&mut chart, &pts, *index)?;
        }
        Ok(())
    })
}
