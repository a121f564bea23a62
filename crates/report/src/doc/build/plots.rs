//! A workload's plots: the metric per trial in run order and its distribution per
//! variant; the latency spectrum of every counted trial merged per variant and the
//! per-second series of each variant's representative trial (run records only).

use super::*;

pub(super) fn trial_plots(
    ctx: &Ctx<'_>,
    stem: &str,
    w: &WorkloadInput,
    blocks: &mut Vec<Block>,
) -> Result<(), BuildError> {
    let valued: Vec<(usize, &TrialInput, f64)> = w
        .trials
        .iter()
        .filter_map(|t| t.value.filter(|v| v.is_finite()).map(|v| (t, v)))
        .enumerate()
        .map(|(i, (t, v))| (i + 1, t, v))
        .collect();
    if valued.is_empty() {
        blocks.push(Block::Paragraph(format!(
            "No trial has a value of {}, so there is nothing to plot per trial.",
            ctx.metric.name
        )));
        return Ok(());
    }
    let desc = metric_desc(ctx.metric);
    run_order_plot(ctx, stem, &valued, &desc, blocks)?;
    distribution_plot(ctx, stem, &valued, &desc, blocks)
}

/// The metric of each valued trial (run order, trial, value) in run order, with rules
/// between rounds.
fn run_order_plot(
    ctx: &Ctx<'_>,
    stem: &str,
    valued: &[(usize, &TrialInput, f64)],
    desc: &str,
    blocks: &mut Vec<Block>,
) -> Result<(), BuildError> {
    let marks: Vec<plot::run_order::Mark> = valued
        .iter()
        .map(|(order, t, v)| plot::run_order::Mark {
            order: *order,
            variant: ctx.index(&t.variant),
            value: *v,
        })
        .collect();
    let mut round_starts = Vec::new();
    for pair in valued.windows(2) {
        if let (Some(a), Some(b)) = (pair[0].1.round, pair[1].1.round) {
            if a != b {
                round_starts.push(pair[1].0);
            }
        }
    }
    let svg = plot::run_order::render(&plot::run_order::RunOrder {
        variants: ctx.variants,
        marks: &marks,
        round_starts: &round_starts,
        y_desc: desc,
    })?;
    let rounds_note = if round_starts.is_empty() {
        String::new()
    } else {
        " Grey rules separate rounds.".to_string()
    };
    blocks.push(Block::Plot {
        file: format!("{stem}-run-order"),
        title: format!("{} per trial, in run order", ctx.metric.name),
        caption: format!(
            "One mark per counted trial, coloured by variant; a slope shared by all variants \
             is drift, which pairing by round cancels.{rounds_note}"
        ),
        svg,
    });
    Ok(())
}

/// The valued trials' metric per variant as boxes and dots.
fn distribution_plot(
    ctx: &Ctx<'_>,
    stem: &str,
    valued: &[(usize, &TrialInput, f64)],
    desc: &str,
    blocks: &mut Vec<Block>,
) -> Result<(), BuildError> {
    let rows: Vec<(String, usize, Vec<f64>)> = ctx
        .variants
        .iter()
        .enumerate()
        .filter_map(|(i, v)| {
            let vals: Vec<f64> = valued
                .iter()
                .filter(|(_, t, _)| &t.variant == v)
                .map(|(_, _, x)| *x)
                .collect();
            (!vals.is_empty()).then(|| (v.clone(), i, vals))
        })
        .collect();
    let svg = plot::distribution::render(&plot::distribution::Distribution {
        rows: &rows,
        x_desc: desc,
    })?;
    blocks.push(Block::Plot {
        file: format!("{stem}-distribution"),
        title: format!("Distribution of {} per variant", ctx.metric.name),
        caption: "Box from the first to the third quartile, thick line at the median, whiskers \
                  to the extremes; every trial is a dot."
            .into(),
        svg,
    });
    Ok(())
}

pub(super) fn latency_plots(
    ctx: &Ctx<'_>,
    stem: &str,
    w: &WorkloadInput,
    blocks: &mut Vec<Block>,
) -> Result<(), BuildError> {
    if !w.trials.iter().any(|t| t.summary().is_some()) {
        blocks.push(Block::Paragraph(
            "These inputs carry no latency histograms or per-second series (only resplab run \
             records and stored experiments do), so the latency spectrum and the per-second \
             plots are left out."
                .into(),
        ));
        return Ok(());
    }
    spectrum(ctx, stem, w, blocks)?;
    let reps = representatives(ctx, w);
    if reps.is_empty() {
        return Ok(());
    }
    series_plots(ctx, stem, w, &reps, blocks)
}

/// The latency spectrum: every counted trial's histogram merged per variant, and a
/// sentence naming the histograms that could not be read.
fn spectrum(
    ctx: &Ctx<'_>,
    stem: &str,
    w: &WorkloadInput,
    blocks: &mut Vec<Block>,
) -> Result<(), BuildError> {
    let closed = w
        .trials
        .iter()
        .filter_map(|t| t.run.as_ref())
        .all(|r| r.load_model.is_closed_loop());
    let mut series = Vec::new();
    let mut bad = Vec::new();
    for (i, v) in ctx.variants.iter().enumerate() {
        let mut merged = LatencyHistogram::new();
        let mut trials = 0;
        for t in w.trials.iter().filter(|t| &t.variant == v) {
            let Some(s) = t.summary() else { continue };
            if s.histogram.is_empty() {
                continue;
            }
            match LatencyHistogram::from_base64(&s.histogram) {
                Ok(h) => {
                    merged.merge(&h);
                    trials += 1;
                }
                Err(e) => bad.push(format!("{v}: {e}")),
            }
        }
        if trials > 0 && !merged.is_empty() {
            series.push(Series {
                name: format!("{v} ({trials} trials, {} requests)", merged.count()),
                index: i,
                points: plot::spectrum::points(&merged),
            });
        }
    }
    if !series.is_empty() {
        let svg = plot::spectrum::render(&series)?;
        let timing = if closed {
            "Closed loop: latency here restates throughput (Little's law), it is not an independent result."
        } else {
            "Open loop: latency is timed from each request's intended send time."
        };
        blocks.push(Block::Plot {
            file: format!("{stem}-latency-spectrum"),
            title: "Latency by percentile".into(),
            caption: format!(
                "Histograms of all counted trials merged per variant; x is the percentile on a \
                 log scale from 50% to 99.999%. {timing}"
            ),
            svg,
        });
    }
    if !bad.is_empty() {
        blocks.push(Block::Paragraph(format!(
            "Histograms that could not be read were left out: {}.",
            bad.join("; ")
        )));
    }
    Ok(())
}

/// One representative trial per variant: the one with a per-second series whose value
/// is closest to the variant's median.
fn representatives<'a>(
    ctx: &Ctx<'a>,
    w: &'a WorkloadInput,
) -> Vec<(usize, &'a String, &'a TrialInput)> {
    let mut reps: Vec<(usize, &String, &TrialInput)> = Vec::new();
    for (i, v) in ctx.variants.iter().enumerate() {
        let cands: Vec<(&TrialInput, f64)> = w
            .trials
            .iter()
            .filter(|t| &t.variant == v && t.run.as_ref().is_some_and(|r| !r.series.is_empty()))
            .filter_map(|t| t.value.filter(|x| x.is_finite()).map(|x| (t, x)))
            .collect();
        if cands.is_empty() {
            continue;
        }
        let vals: Vec<f64> = cands.iter().map(|c| c.1).collect();
        let m = resplab_stats::describe::median(&vals).unwrap_or(f64::NAN);
        let mut best = cands[0];
        for c in &cands[1..] {
            if (c.1 - m).abs() < (best.1 - m).abs() {
                best = *c;
            }
        }
        reps.push((i, v, best.0));
    }
    reps
}

/// Throughput and p99 per interval of the representative trials, or a sentence saying
/// why their series are too short for a plot.
fn series_plots(
    ctx: &Ctx<'_>,
    stem: &str,
    w: &WorkloadInput,
    reps: &[(usize, &String, &TrialInput)],
    blocks: &mut Vec<Block>,
) -> Result<(), BuildError> {
    let which: Vec<String> = reps
        .iter()
        .map(|(_, v, t)| match t.round {
            Some(r) => format!("{v} round {r}"),
            None => v.to_string(),
        })
        .collect();
    let whole = if w.trials.iter().any(|t| t.command.is_some()) {
        " The series covers the whole trial (all its tests)."
    } else {
        ""
    };
    // Runs shorter than 10 s carry tenths of a second; older records (and long runs)
    // whole seconds. A series of one or two points draws a vertical line, not a story.
    let points = reps
        .iter()
        .filter_map(|(_, _, t)| t.run.as_ref().map(|r| r.series.len()))
        .max()
        .unwrap_or(0);
    let interval = reps
        .iter()
        .filter_map(|(_, _, t)| t.run.as_ref().map(|r| r.series_interval_sec))
        .fold(0.0f64, f64::max);
    if points < MIN_SERIES_POINTS {
        blocks.push(Block::Paragraph(format!(
            "No throughput or p99 plot over time: the representative trials ({}) have \
             {points} point(s), one per {}; a plot needs at least {MIN_SERIES_POINTS}. \
             Longer trials (or a current resplab, which records runs shorter than 10 s by the \
             tenth of a second) give one.",
            which.join(", "),
            interval_words(interval)
        )));
        return Ok(());
    }
    let per = interval_words(interval);
    ops_plot(ctx, stem, reps, &which, whole, &per, blocks)?;
    p99_plot(stem, reps, whole, &per, blocks)
}

/// Throughput per interval of the representative trials.
fn ops_plot(
    ctx: &Ctx<'_>,
    stem: &str,
    reps: &[(usize, &String, &TrialInput)],
    which: &[String],
    whole: &str,
    per: &str,
    blocks: &mut Vec<Block>,
) -> Result<(), BuildError> {
    let ops: Vec<Series> = reps
        .iter()
        .filter_map(|(i, v, t)| {
            t.run.clone().map(|r| Series {
                name: (*v).clone(),
                index: *i,
                points: r.series.iter().map(|s| (s.t_sec, s.ops_per_sec)).collect(),
            })
        })
        .collect();
    let svg = plot::timeline::render(&plot::timeline::Timeline {
        series: &ops,
        y_desc: "ops/s (higher is better)",
    })?;
    blocks.push(Block::Plot {
        file: format!("{stem}-ops-per-second"),
        title: format!("Throughput per {per}, one representative trial per variant"),
        caption: format!(
            "Each variant's trial whose {} is closest to its median: {}.{whole}",
            ctx.metric.name,
            which.join(", ")
        ),
        svg,
    });
    Ok(())
}

/// p99 latency per interval of the same trials, in a unit that suits the largest.
fn p99_plot(
    stem: &str,
    reps: &[(usize, &String, &TrialInput)],
    whole: &str,
    per: &str,
    blocks: &mut Vec<Block>,
) -> Result<(), BuildError> {
    let max_p99 = reps
        .iter()
        .filter_map(|(_, _, t)| t.run.as_ref())
        .flat_map(|r| r.series.iter().map(|s| s.latency_us.p99))
        .fold(0.0f64, f64::max);
    let (div, unit) = plot::latency_unit(max_p99);
    let p99: Vec<Series> = reps
        .iter()
        .filter_map(|(i, v, t)| {
            t.run.clone().map(|r| Series {
                name: (*v).clone(),
                index: *i,
                points: r
                    .series
                    .iter()
                    .map(|s| (s.t_sec, s.latency_us.p99 / div))
                    .collect(),
            })
        })
        .collect();
    let desc = format!("p99 latency ({unit}, lower is better)");
    let svg = plot::timeline::render(&plot::timeline::Timeline {
        series: &p99,
        y_desc: &desc,
    })?;
    blocks.push(Block::Plot {
        file: format!("{stem}-p99-per-second"),
        title: format!("p99 latency per {per}, same trials"),
        caption: format!(
            "The 99th percentile of the replies of each {per} in the same trials.{whole}"
        ),
        svg,
    });
    Ok(())
}

/// Fewest points of a representative trial's series worth a plot over time.
pub(super) const MIN_SERIES_POINTS: usize = 3;

/// "second" or "0.1 s": the length of one series interval, in words.
pub(super) fn interval_words(interval_sec: f64) -> String {
    if (interval_sec - 1.0).abs() < 1e-9 || interval_sec <= 0.0 {
        "second".into()
    } else {
        format!("{interval_sec} s")
    }
}
