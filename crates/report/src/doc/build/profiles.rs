//! The profiles section: per workload, each variant's flame graph (its trials' folded
//! stacks merged), each other variant's differential flame graph against the baseline
//! normalised per request, and the table of the functions whose share per request
//! changed most ([`crate::profile`]). Where the profiles came from (extra, uncounted
//! trials or the counted ones) and how they were sampled is said first.

use super::{slug, Ctx};
use crate::doc::input::ProfileInput;
use crate::doc::{Block, Cell};
use crate::profile::{self, Change, Folded};

/// Functions listed in each changed-functions table.
pub const TOP_FUNCTIONS: usize = 15;

/// One variant's profiles of one workload, merged.
struct Merged {
    folded: Folded,
    requests: u64,
    trials: usize,
}

/// The section, when there are profiles.
pub(super) fn profiles(cx: &Ctx<'_>, blocks: &mut Vec<Block>) {
    let all = &cx.input.profiles;
    if all.is_empty() {
        return;
    }
    blocks.push(Block::Heading {
        level: 2,
        text: "Profiles".into(),
        id: "profiles".into(),
    });
    blocks.push(Block::Paragraph(origin(all)));
    let mut workloads: Vec<&str> = Vec::new();
    for p in all {
        if !workloads.contains(&p.workload.as_str()) {
            workloads.push(&p.workload);
        }
    }
    workloads.sort_by_key(|w| cx.workload_pos(w));
    for w in workloads {
        workload(cx, w, blocks);
    }
}

/// Where the profiles came from and how they were sampled.
fn origin(all: &[ProfileInput]) -> String {
    let counted = all.iter().filter(|p| p.counted).count();
    let from = if counted == 0 {
        "extra trials that were sampled and not counted: no number above comes from a sampled trial"
    } else if counted == all.len() {
        "the counted trials themselves: sampling ran during the trials whose numbers are compared above"
    } else {
        "extra, uncounted trials and counted trials"
    };
    let mut how: Vec<&str> = all.iter().map(|p| p.sampling.as_str()).collect();
    how.sort_unstable();
    how.dedup();
    format!(
        "The server's stacks were sampled ({}) during {from}. Each variant's trials are merged; \
         the differential flame graphs scale the baseline to the variant's requests, so red \
         frames take more samples per request in the variant and blue ones fewer.",
        how.join("; ")
    )
}

/// One workload's flame graphs and tables.
fn workload(cx: &Ctx<'_>, name: &str, blocks: &mut Vec<Block>) {
    let merged: Vec<(&String, Merged)> = cx
        .variants
        .iter()
        .filter_map(|v| Some((v, merge(&cx.input.profiles, name, v)?)))
        .collect();
    blocks.push(Block::Heading {
        level: 3,
        text: format!("Profiles of {name}"),
        id: format!("profiles-{}", slug(name)),
    });
    let base = merged
        .first()
        .filter(|(v, _)| Some(*v) == cx.variants.first());
    for (v, m) in &merged {
        let caption = format!(
            "{} samples from {} trial(s), {} requests",
            m.folded.samples(),
            m.trials,
            m.requests
        );
        if let Ok(svg) = profile::flame_svg(&m.folded, &format!("{v} on {name}"), &caption) {
            blocks.push(Block::Flame {
                file: format!("flame-{}-{}", slug(name), slug(v)),
                title: format!("Flame graph of {v} on {name}"),
                caption,
                svg,
            });
        }
        let Some((b, bm)) = base.filter(|(b, _)| b != v) else {
            continue;
        };
        let requests = (bm.requests, m.requests);
        let title = format!("{v} vs {b} on {name}, per request");
        if let Ok(svg) =
            profile::differential_svg_per_request(&bm.folded, &m.folded, Some(requests), &title)
        {
            blocks.push(Block::Flame {
                file: format!("flame-diff-{}-{}", slug(name), slug(v)),
                title: format!("Differential flame graph of {v} against {b} on {name}"),
                caption: "Frames sized by the variant's samples; red: more samples per request than the baseline, blue: fewer.".into(),
                svg,
            });
        }
        let changes = profile::changes(&bm.folded, &m.folded, Some(requests), TOP_FUNCTIONS);
        blocks.push(Block::Paragraph(format!(
            "Functions whose share changed most, {v} against {b} (samples per 1,000 requests; \
             self: the function is where the sample landed, total: it is anywhere on the stack)."
        )));
        blocks.push(table(&changes));
    }
}

/// A variant's profiles of a workload, merged; `None` without any.
fn merge(all: &[ProfileInput], workload: &str, variant: &str) -> Option<Merged> {
    let mut out = Merged {
        folded: Folded::default(),
        requests: 0,
        trials: 0,
    };
    for p in all
        .iter()
        .filter(|p| p.workload == workload && p.variant == variant)
    {
        out.folded.add(&p.folded);
        out.requests += p.requests;
        out.trials += 1;
    }
    (out.trials > 0 && out.folded.samples() > 0).then_some(out)
}

/// The changed-functions table, per 1,000 requests.
fn table(changes: &[Change]) -> Block {
    let k = |v: f64| format!("{:.3}", v * 1000.0);
    let signed = |v: f64| format!("{:+.3}", v * 1000.0);
    let header = [
        "function",
        "self base",
        "self variant",
        "Δ self",
        "total base",
        "total variant",
        "Δ total",
        "samples base",
        "samples variant",
    ];
    Block::Table {
        header: header.iter().map(|h| (*h).to_string()).collect(),
        numeric: (0..header.len()).map(|i| i > 0).collect(),
        rows: changes
            .iter()
            .map(|c| {
                vec![
                    Cell::text(&c.function),
                    Cell::text(k(c.self_a)),
                    Cell::text(k(c.self_b)),
                    Cell::strong(signed(c.self_delta())),
                    Cell::text(k(c.total_a)),
                    Cell::text(k(c.total_b)),
                    Cell::text(signed(c.total_delta())),
                    Cell::text(c.samples_a.to_string()),
                    Cell::text(c.samples_b.to_string()),
                ]
            })
            .collect(),
    }
}
