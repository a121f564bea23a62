//! The closing section: where the numbers come from — the experiment, the tool, the
//! hosts, the servers and their configuration, the client settings, and the warnings of
//! every run, counted.

use super::*;

/// Distinct runs of the report (a run shared by a workload and its tests counts once).
pub(super) fn all_runs(input: &ReportInput) -> Vec<(String, Arc<RunRecord>)> {
    let mut out: Vec<(String, Arc<RunRecord>)> = Vec::new();
    for w in &input.workloads {
        for t in &w.trials {
            if let Some(r) = &t.run {
                if !out.iter().any(|(_, o)| Arc::ptr_eq(o, r)) {
                    out.push((t.variant.clone(), r.clone()));
                }
            }
        }
    }
    out
}

pub(super) fn is_server_fact(key: &str) -> bool {
    key.ends_with("_version")
        || matches!(
            key,
            "server_name"
                | "redis_git_sha1"
                | "redis_git_dirty"
                | "redis_build_id"
                | "redis_mode"
                | "arch_bits"
                | "multiplexing_api"
                | "executable"
                | "config_file"
                | "os"
        )
}

/// The provenance section, one part after the other.
pub(super) fn provenance(ctx: &Ctx<'_>, blocks: &mut Vec<Block>) {
    let runs = all_runs(ctx.input);
    blocks.push(Block::Heading {
        level: 2,
        text: "Provenance".into(),
        id: "provenance".into(),
    });
    facts(ctx.input, &runs, blocks);
    load_models(ctx.input, blocks);
    hosts(&runs, blocks);
    servers(ctx, &runs, blocks);
    if let Some(c) = &ctx.input.config_check {
        blocks.extend(crate::configcheck::blocks(c));
    }
    run_configs(ctx.input, blocks);
    notes(ctx.input, &runs, blocks);
    if let Some(text) = &ctx.input.experiment_file {
        blocks.push(Block::Heading {
            level: 3,
            text: "Experiment file".into(),
            id: "provenance-file".into(),
        });
        blocks.push(Block::Code {
            lang: "toml".into(),
            text: text.clone(),
        });
    }
}

/// The table of facts: who wrote the report from what, the seeds, the tools that
/// measured the trials and the trials' length.
fn facts(input: &ReportInput, runs: &[(String, Arc<RunRecord>)], blocks: &mut Vec<Block>) {
    let mut facts: Vec<Vec<Cell>> = vec![
        vec![
            Cell::text("report written by"),
            Cell::text(&input.generator),
        ],
        vec![Cell::text("data"), Cell::text(&input.source)],
    ];
    if let Some(seed) = input.seed {
        facts.push(vec![
            Cell::text("experiment seed"),
            Cell::text(seed.to_string()),
        ]);
    }
    for (k, v) in &input.facts {
        facts.push(vec![Cell::text(k), Cell::text(v)]);
    }
    let tools: BTreeSet<String> = runs
        .iter()
        .map(|(_, r)| {
            let rev = r
                .tool
                .git_revision
                .as_deref()
                .map_or(String::new(), |g| format!(" ({g})"));
            format!("{} {}{rev}", r.tool.name, r.tool.version)
        })
        .collect();
    if !tools.is_empty() {
        facts.push(vec![
            Cell::text("trials measured by"),
            Cell::text(tools.into_iter().collect::<Vec<_>>().join(", ")),
        ]);
    }
    let seeds: BTreeSet<u64> = runs.iter().map(|(_, r)| r.seed).collect();
    if !seeds.is_empty() {
        let list: Vec<String> = seeds.iter().map(u64::to_string).collect();
        let text = if list.len() <= 6 {
            list.join(", ")
        } else {
            format!(
                "{} distinct, from {} to {}",
                list.len(),
                list[0],
                list[list.len() - 1]
            )
        };
        facts.push(vec![Cell::text("trial seeds"), Cell::text(text)]);
    }
    let windows: BTreeSet<String> = runs
        .iter()
        .map(|(_, r)| {
            format!(
                "{} s measured after {} s warm-up",
                significant(r.duration_sec, 3),
                significant(r.warmup_sec, 3)
            )
        })
        .collect();
    if !windows.is_empty() && windows.len() <= 4 {
        facts.push(vec![
            Cell::text("trial length"),
            Cell::text(windows.into_iter().collect::<Vec<_>>().join("; ")),
        ]);
    }
    blocks.push(Block::Table {
        header: vec!["fact".into(), "value".into()],
        numeric: vec![false, false],
        rows: facts,
    });
}

/// The load model of each workload's trials.
fn load_models(input: &ReportInput, blocks: &mut Vec<Block>) {
    let mut models = Vec::new();
    for w in &input.workloads {
        let labels: BTreeSet<String> = w
            .trials
            .iter()
            .filter_map(|t| t.run.as_ref().map(|r| r.load_model.label()))
            .collect();
        if !labels.is_empty() {
            models.push(vec![
                Cell::text(&w.name),
                Cell::text(labels.into_iter().collect::<Vec<_>>().join("; ")),
            ]);
        }
    }
    if !models.is_empty() {
        blocks.push(Block::Heading {
            level: 3,
            text: "Load model".into(),
            id: "provenance-load".into(),
        });
        blocks.push(Block::Table {
            header: vec!["workload".into(), "load model".into()],
            numeric: vec![false, false],
            rows: models,
        });
    }
}

/// The distinct hosts the trials ran on.
fn hosts(runs: &[(String, Arc<RunRecord>)], blocks: &mut Vec<Block>) {
    let mut hosts: Vec<Vec<Cell>> = Vec::new();
    let mut seen = BTreeSet::new();
    for (_, r) in runs {
        let h = &r.host;
        let row = [
            h.hostname.clone(),
            h.cpu_model.clone(),
            h.cores.to_string(),
            h.kernel.clone(),
            h.os.clone(),
            h.governor.clone().unwrap_or_else(|| "–".into()),
        ];
        if seen.insert(row.clone()) {
            hosts.push(row.into_iter().map(Cell::text).collect());
        }
    }
    if !hosts.is_empty() {
        blocks.push(Block::Heading {
            level: 3,
            text: "Host".into(),
            id: "provenance-host".into(),
        });
        blocks.push(Block::Table {
            header: ["host", "CPU", "cores", "kernel", "OS", "governor"]
                .map(String::from)
                .to_vec(),
            numeric: vec![false, false, true, false, false, false],
            rows: hosts,
        });
    }
}

/// Servers: version facts from INFO server, per variant, and each variant's definition.
fn servers(ctx: &Ctx<'_>, runs: &[(String, Arc<RunRecord>)], blocks: &mut Vec<Block>) {
    let mut servers: Vec<Vec<Cell>> = Vec::new();
    for v in ctx.variants {
        let mut fields: std::collections::BTreeMap<&str, BTreeSet<&str>> = Default::default();
        for (_, r) in runs.iter().filter(|(rv, _)| rv == v) {
            for (k, val) in &r.server {
                if is_server_fact(k) {
                    fields.entry(k.as_str()).or_default().insert(val.as_str());
                }
            }
        }
        for (k, vals) in fields {
            servers.push(vec![
                ctx.variant_cell(v),
                Cell::text(k),
                Cell::text(vals.into_iter().collect::<Vec<_>>().join(", ")),
            ]);
        }
    }
    if !servers.is_empty() || !ctx.input.variant_definitions.is_empty() {
        blocks.push(Block::Heading {
            level: 3,
            text: "Servers".into(),
            id: "provenance-servers".into(),
        });
    }
    if !servers.is_empty() {
        blocks.push(Block::Paragraph(
            "From each trial's INFO server (distinct values per variant).".into(),
        ));
        blocks.push(Block::Table {
            header: vec!["variant".into(), "field".into(), "value".into()],
            numeric: vec![false, false, false],
            rows: servers,
        });
    }
    for (name, def) in &ctx.input.variant_definitions {
        blocks.push(Block::Paragraph(format!("Definition of variant {name}:")));
        blocks.push(Block::Code {
            lang: "json".into(),
            text: def.clone(),
        });
    }
}

/// The resolved run configuration of the first trial of each workload.
fn run_configs(input: &ReportInput, blocks: &mut Vec<Block>) {
    let mut shown = false;
    for w in &input.workloads {
        let Some(r) = w.trials.iter().find_map(|t| t.run.as_ref()) else {
            continue;
        };
        if w.trials.iter().any(|t| t.command.is_some()) {
            continue; // a test of a workload shares its runs with the workload's totals
        }
        if !shown {
            blocks.push(Block::Heading {
                level: 3,
                text: "Run configuration".into(),
                id: "provenance-config".into(),
            });
            shown = true;
        }
        blocks.push(Block::Paragraph(format!(
            "Workload {}, first counted trial ({}), as resolved by the load generator:",
            w.name,
            w.trials
                .iter()
                .find(|t| t.run.is_some())
                .map_or("", |t| t.variant.as_str())
        )));
        blocks.push(Block::Code {
            lang: "json".into(),
            text: serde_json::to_string_pretty(&r.config).unwrap_or_default(),
        });
    }
}

/// The input's notes and the run warnings, each counted over the trials that gave it.
fn notes(input: &ReportInput, runs: &[(String, Arc<RunRecord>)], blocks: &mut Vec<Block>) {
    let mut warn: std::collections::BTreeMap<(String, String), usize> = Default::default();
    for (v, r) in runs {
        for w in &r.warnings {
            *warn
                .entry((format!("[{}] {v}", w.kind()), w.message()))
                .or_default() += 1;
        }
    }
    let mut notes: Vec<String> = input.notes.clone();
    for ((k, m), n) in warn {
        notes.push(format!(
            "{k}: {m} ({n} trial{})",
            if n == 1 { "" } else { "s" }
        ));
    }
    if !notes.is_empty() {
        blocks.push(Block::Heading {
            level: 3,
            text: "Notes".into(),
            id: "provenance-notes".into(),
        });
        blocks.push(Block::List(notes));
    }
}
