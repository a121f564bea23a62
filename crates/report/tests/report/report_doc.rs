//! The report document of a fixed, seeded experiment: Markdown and every SVG are
//! snapshot-tested, and the HTML is checked for self-containment.

use resplab_report::doc::{self, Block};

#[test]
fn markdown_and_plots_match_their_snapshots() {
    let input = crate::report_fixture::input();
    let document = doc::build(&input).expect("the fixture builds");
    let md = doc::markdown::render(&document, "fixture-plots");
    insta::assert_snapshot!("fixture_markdown", md.text);
    assert_eq!(
        md.files.len(),
        11,
        "the summary's forest plot and five plots per workload"
    );
    for (path, svg) in &md.files {
        let name = path
            .trim_start_matches("fixture-plots/")
            .trim_end_matches(".svg");
        insta::assert_snapshot!(format!("svg_{name}"), svg);
    }
}

#[test]
fn the_same_input_gives_the_same_bytes() {
    let a = doc::html::render(&doc::build(&crate::report_fixture::input()).unwrap());
    let b = doc::html::render(&doc::build(&crate::report_fixture::input()).unwrap());
    assert_eq!(a, b);
}

#[test]
fn html_is_self_contained() {
    let html = doc::html::render(&doc::build(&crate::report_fixture::input()).unwrap());
    for banned in [
        "<script",
        "<link",
        "@import",
        "url(",
        "@font-face",
        "src=",
        "http://",
        "https://",
    ] {
        // The SVG namespace is an identifier, not a request.
        let hits = html
            .match_indices(banned)
            .filter(|(i, _)| !html[*i..].starts_with("http://www.w3.org/2000/svg"))
            .count();
        assert_eq!(hits, 0, "found {banned} in the HTML");
    }
    assert!(html.contains("default-src 'none'"));
    assert_eq!(html.matches("<svg").count(), 11);
    assert!(html.contains("name=\"viewport\""));
    assert!(html.contains("@media print"));
}

#[test]
fn verdicts_follow_the_fixture_effects() {
    let document = doc::build(&crate::report_fixture::input()).unwrap();
    let summary_table = document
        .blocks
        .iter()
        .find_map(|b| match b {
            Block::Table { header, rows, .. } if header[0] == "workload" => Some(rows.clone()),
            _ => None,
        })
        .expect("a summary table");
    // set/get × two variants
    assert_eq!(summary_table.len(), 4);
    for row in &summary_table {
        let expected = if row[1].text == "io-threads-4" {
            "FASTER"
        } else {
            "SLOWER"
        };
        assert_eq!(row[5].text, expected, "{row:?}");
        assert!(row[1].variant.is_some());
    }
    let items: Vec<String> = document
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::List(i) => Some(i.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    assert!(
        items
            .iter()
            .any(|i| i.starts_with("Best effect: io-threads-4")),
        "{items:?}"
    );
    assert!(
        items
            .iter()
            .any(|i| i.starts_with("Worst effect: appendfsync-always")),
        "{items:?}"
    );
    assert!(
        items
            .iter()
            .any(|i| i.starts_with("Geometric mean of io-threads-4/baseline over 2 workloads: +")),
        "{items:?}"
    );
}

#[test]
fn missing_metric_is_an_error_that_names_it() {
    let mut input = crate::report_fixture::input();
    input.metric = "no_such_metric".into();
    let err = doc::build(&input).unwrap_err().to_string();
    assert!(
        err.contains("no_such_metric") && err.contains("ops_per_sec"),
        "{err}"
    );
}

#[test]
fn inputs_without_run_records_say_which_plots_are_missing() {
    let mut input = crate::report_fixture::input();
    for w in &mut input.workloads {
        for t in &mut w.trials {
            t.run = None;
        }
    }
    let document = doc::build(&input).unwrap();
    let plots = document
        .blocks
        .iter()
        .filter(|b| matches!(b, Block::Plot { .. }))
        .count();
    assert_eq!(
        plots, 5,
        "the summary's forest plot, run order and distribution per workload"
    );
    let md = doc::markdown::render(&document, "p");
    assert!(md.text.contains("carry no latency histograms"));
}

/// Trials whose series has one or two points (1-second trials recorded by the second)
/// get no plot over time, and a line that says why, instead of a vertical line.
#[test]
fn series_too_short_to_plot_are_left_out_with_a_reason() {
    let mut input = crate::report_fixture::input();
    for w in &mut input.workloads {
        for t in &mut w.trials {
            if let Some(run) = &t.run {
                let mut r = (**run).clone();
                r.series.truncate(1);
                t.run = Some(std::sync::Arc::new(r));
            }
        }
    }
    let document = doc::build(&input).unwrap();
    let md = doc::markdown::render(&document, "p");
    assert!(!md.text.contains("Throughput per second"), "{}", md.text);
    assert!(
        md.text
            .contains("No throughput or p99 plot over time: the representative trials"),
        "{}",
        md.text
    );
    assert!(md.text.contains("have 1 point(s), one per second"));
}
