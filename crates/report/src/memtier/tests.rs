use super::*;
use resplab_results::{fixture, LatencyUs};

fn summary(values_ns: &[u64], nils: u64) -> Summary {
    let mut h = LatencyHistogram::new();
    for v in values_ns {
        h.record(*v);
    }
    let mut s = fixture::summary(
        values_ns.len() as u64,
        0.0,
        LatencyUs::from_histogram(&h),
        (100 * values_ns.len() as u64, 40 * values_ns.len() as u64),
        &h,
    );
    s.nil_replies = nils;
    s
}

fn mix_run(scale: u64) -> RunRecord {
    let sets = summary(&[100_000 * scale; 10], 0);
    let gets = summary(&[200_000 * scale; 100], 60);
    let mut all: Vec<u64> = vec![100_000 * scale; 10];
    all.extend(vec![200_000 * scale; 100]);
    let mut r = fixture::run_record(summary(&all, 60));
    r.duration_sec = 2.0;
    r.commands.insert("SET".into(), sets);
    r.commands.insert("GET".into(), gets);
    r
}

fn shape(commands: &[&str]) -> Shape {
    Shape {
        threads: 4,
        clients_per_thread: 50,
        requests_per_client: Some(10_000),
        seconds: None,
        commands: commands.iter().map(|c| c.to_string()).collect(),
        percentiles: vec![50.0, 99.0, 99.9],
        hide_histogram: false,
        cluster: false,
        staircase: None,
    }
}

#[test]
fn a_staircase_has_the_active_clients_of_each_second() {
    let mut sh = shape(&[]);
    sh.clients_per_thread = 4;
    sh.staircase = Some((1, 2, 3));
    let clients: Vec<u32> = (0..8).map(|s| sh.clients_at(s)).collect();
    assert_eq!(clients, [1, 1, 1, 3, 3, 3, 4, 4]);
    let secs = sections(&sh, &[mix_run(1)], false);
    let doc = super::json::document(&sh, serde_json::json!({}), &secs, &[]);
    let all = &doc.iter().find(|(k, _)| k == "ALL STATS").unwrap().1;
    let active = all["Active Clients"].as_object().unwrap();
    assert_eq!(active.len(), secs[0].series.len());
    if let Some((sec, _)) = secs[0].series.first() {
        let first = &active[&sec.to_string()];
        assert_eq!(first["Total clients"], u64::from(sh.clients_at(*sec)) * 4);
    }
}

#[test]
fn a_mix_has_sets_gets_waits_and_hits() {
    let secs = sections(&shape(&[]), &[mix_run(1)], false);
    assert_eq!(secs.len(), 1);
    let s = &secs[0];
    assert_eq!(s.title, "ALL STATS");
    let labels: Vec<String> = s.types.iter().map(TypeStats::label).collect();
    assert_eq!(labels, ["Sets", "Gets", "Waits"]);
    assert_eq!(s.types[1].ops_per_sec, 50.0);
    assert_eq!(s.types[1].hits_per_sec, 20.0);
    assert_eq!(s.types[1].misses_per_sec, 30.0);
    assert_eq!(s.totals.misses_per_sec, 30.0);
    let text = table::render(&shape(&[]), &secs);
    assert!(text.starts_with("4         Threads\n50        Connections per thread\n10000     Requests per client\n\n\nALL STATS\n"));
    assert!(text.contains(
        "Type         Ops/sec     Hits/sec   Misses/sec    Avg. Latency     p50 Latency     p99 Latency   p99.9 Latency       KB/sec \n"
    ));
    assert!(text.contains("Waits           0.00          ---          ---             ---             ---             ---             ---          --- \n"), "{text}");
    assert!(text.contains("\n\nRequest Latency Distribution\nType     <= msec         Percent\n"));
    assert!(text.contains("GET       0.200      100.000\n"), "{text}");
    assert!(
        text.ends_with("---\nWAIT      0.000      100.000\n"),
        "{text}"
    );
}

#[test]
fn commands_rows_group_repeated_names() {
    let mut r = mix_run(1);
    r.commands.clear();
    r.commands.insert("HSET".into(), summary(&[100_000; 5], 0));
    r.commands
        .insert("HSET#2".into(), summary(&[100_000; 5], 0));
    r.commands.insert("HGET".into(), summary(&[100_000; 10], 3));
    let sh = shape(&["HSET", "HGET"]);
    let s = &sections(&sh, &[r], false)[0];
    assert_eq!(s.types[0].label(), "Hsets");
    assert_eq!(s.types[0].count, 10.0);
    assert_eq!(s.types[1].hits_per_sec, 0.0);
    let text = table::render(&sh, std::slice::from_ref(s));
    assert!(
        text.contains("Type         Ops/sec    Avg. Latency"),
        "{text}"
    );
}

#[test]
fn run_count_gives_best_worst_and_average() {
    let mut slow = mix_run(2);
    slow.duration_sec = 4.0;
    let runs = [mix_run(1), slow];
    let secs = sections(&shape(&[]), &runs, true);
    let titles: Vec<&str> = secs.iter().map(|s| s.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "RUN #1 RESULTS",
            "RUN #2 RESULTS",
            "BEST RUN RESULTS",
            "WORST RUN RESULTS",
            "AGGREGATED AVERAGE RESULTS (2 runs)"
        ]
    );
    assert_eq!(secs[2].totals.ops_per_sec, 55.0);
    assert_eq!(secs[3].totals.ops_per_sec, 27.5);
    assert_eq!(secs[4].totals.ops_per_sec, 41.25);
    assert_eq!(secs[4].totals.hist.count(), 220);
}

#[test]
fn json_has_memtiers_keys_and_the_importers_values() {
    let sh = shape(&[]);
    let runs = [mix_run(1)];
    let secs = sections(&sh, &runs, false);
    let parts = json::document(&sh, serde_json::json!({"threads": 4}), &secs, &runs);
    let text = json::to_text(&parts);
    assert!(text.starts_with("{\n  \"configuration\": {"), "{text}");
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let totals = &doc["ALL STATS"]["Totals"];
    assert_eq!(totals["Ops/sec"], 55.0);
    assert_eq!(totals["Count"], 110);
    assert_eq!(totals["Percentile Latencies"]["p50.00"], 0.2);
    assert_eq!(doc["run information"]["Format version"], 2);
    assert_eq!(doc["ALL STATS"]["Gets"]["Misses/sec"], 30.0);
    assert!(doc["ALL STATS"]["SET"]
        .as_array()
        .is_some_and(|a| !a.is_empty()));
    assert!(doc["resplab"]["runs"][0]["totals"].is_object());
    let compressed = totals["Percentile Latencies"]["Histogram log format"]["Compressed Histogram"]
        .as_str()
        .unwrap();
    let back = LatencyHistogram::from_base64_in(compressed, 1000).unwrap();
    assert_eq!(back.count(), 110);
}

#[test]
fn hdr_files_are_named_as_memtier_names_them() {
    let secs = sections(&shape(&[]), &[mix_run(1)], false);
    let names: Vec<String> = hdr::files("out/lat", 1, &secs[0])
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert_eq!(
        names,
        [
            "out/lat_FULL_RUN_1.txt",
            "out/lat_FULL_RUN_1.hgrm",
            "out/lat_SET_command_run_1.txt",
            "out/lat_SET_command_run_1.hgrm",
            "out/lat_GET_command_run_1.txt",
            "out/lat_GET_command_run_1.hgrm"
        ]
    );
    assert_eq!(table::percentile_label(99.9), "p99.9 Latency");
    assert_eq!(table::percentile_label(50.0), "p50 Latency");
    assert_eq!(table::percentile_label(99.99), "p99.990 Latency");
}

#[test]
fn the_time_serie_counts_whole_seconds() {
    let mut r = mix_run(1);
    r.series_interval_sec = 0.1;
    r.series = (1..=15)
        .map(|i| resplab_results::SecondSample {
            t_sec: f64::from(i) * 0.1,
            requests: 10,
            ..Default::default()
        })
        .collect();
    assert_eq!(per_second(&r), vec![(0, 100), (1, 50)]);
    r.series_interval_sec = 1.0;
    r.series.truncate(0);
    assert!(per_second(&r).is_empty());
}

#[test]
fn cluster_mode_adds_redirection_columns() {
    let mut sh = shape(&[]);
    sh.cluster = true;
    let mut r = mix_run(1);
    r.cluster = Some(resplab_results::ClusterSummary {
        moved: 8,
        ask: 2,
        ..Default::default()
    });
    let secs = sections(&sh, &[r.clone()], false);
    assert_eq!(secs[0].totals.moved_per_sec, Some(4.0));
    let text = table::render(&sh, &secs);
    assert!(
        text.contains("Misses/sec    MOVED/sec      ASK/sec    Avg. Latency"),
        "{text}"
    );
    assert!(text.contains("        4.00         1.00 "), "{text}");
    let doc = json::document(&sh, serde_json::Value::Null, &secs, &[r]);
    let all = &doc.iter().find(|(k, _)| k == "ALL STATS").unwrap().1;
    assert_eq!(all["Totals"]["MOVED/sec"], 4.0);
    assert!(all["Sets"].get("MOVED/sec").is_none());
}
