//! Experiment files: parsing, errors with places and suggestions, params, plans.

use resplab_experiment::plan::{self, Next};
use resplab_experiment::{resolve, Order, Overrides, ServerSource, TrialBudget};

const BASIC: &str = r#"
[experiment]
name = "aof"
rounds = 4
requests = 2000
seed = 42

[[variant]]
name = "no-aof"
server = "redis-server --port {port} --save '' --appendonly no"

[[variant]]
name = "aof-always"
server = "redis-server --port {port} --save '' --appendonly yes --appendfsync always"
config = { maxmemory = "1gb" }

[[workload]]
name = "set"
tests = "set"
clients = 4
"#;

fn parse(text: &str) -> Result<resplab_experiment::Experiment, resplab_experiment::SpecError> {
    resolve::parse("exp.toml", text, &Overrides::default())
}

#[test]
fn basic_file_resolves_with_defaults() {
    let e = parse(BASIC).unwrap();
    assert_eq!(e.name, "aof");
    assert_eq!(e.rounds, 4);
    assert_eq!(e.order, Order::Rmit);
    assert_eq!(e.primary_metric, "ops_per_sec");
    assert_eq!(e.workloads[0].budget, TrialBudget::Requests(2000));
    assert_eq!(e.workloads[0].clients, 4);
    assert_eq!(
        e.variants[1].config,
        vec![("maxmemory".into(), "1gb".into())]
    );
    match &e.variants[0].server {
        ServerSource::Spawn { command } => assert_eq!(command[4], ""),
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_key_names_place_and_suggestion() {
    let text = BASIC.replace("rounds = 4", "rounds = 4\ntest_tme = \"5s\"");
    let err = parse(&text).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with("exp.toml:5:1: key `experiment.test_tme`"),
        "{msg}"
    );
    assert!(msg.contains("did you mean `test_time`?"), "{msg}");

    let text = BASIC.replace("clients = 4", "client = 4");
    let msg = parse(&text).unwrap_err().to_string();
    assert!(msg.contains("workload[0].client"), "{msg}");
    assert!(msg.contains("did you mean `clients`?"), "{msg}");
}

#[test]
fn type_errors_and_bad_values_name_line_and_key() {
    let text = BASIC.replace("rounds = 4", "rounds = \"four\"");
    let err = parse(&text).unwrap_err();
    assert_eq!(err.line, Some(4));
    assert_eq!(err.key.as_deref(), Some("experiment.rounds"));

    let text = BASIC.replace("seed = 42", "seed = 42\norder = \"abab\"");
    let err = parse(&text).unwrap_err();
    assert!(
        err.to_string()
            .contains("expected \"rmit\", \"abba\", \"fixed\" or \"duet\", found \"abab\""),
        "{err}"
    );
    assert_eq!(err.line, Some(7));

    let text = BASIC.replace("tests = \"set\"", "tests = \"set,gett\"");
    let err = parse(&text).unwrap_err();
    assert_eq!(err.key.as_deref(), Some("workload[0].tests"));

    let text = BASIC.replace("--port {port}", "--port {prot}");
    let err = parse(&text).unwrap_err();
    assert!(
        err.to_string().contains("unknown placeholder {prot}"),
        "{err}"
    );

    let text = BASIC.replace("seed = 42", "seed = 42\nprimary_metric = \"p99\"");
    let err = parse(&text).unwrap_err();
    assert!(err.to_string().contains("unknown metric \"p99\""), "{err}");

    let err = parse("[experiment]\nname = \"x\"\n").unwrap_err();
    assert!(
        err.to_string().contains("at least two [[variant]]"),
        "{err}"
    );

    let err = parse("[experiment\nname = 1").unwrap_err();
    assert_eq!(err.line, Some(1));
}

#[test]
fn params_expand_into_variants() {
    let text = r#"
[experiment]
name = "sweep"
requests = 100
[params]
threshold = [1000, 0]
[[variant]]
name = "baseline"
[[variant]]
name = "slowlog-{threshold}"
server = "redis-server --port {port} --save '' --slowlog-log-slower-than {threshold}"
[[workload]]
name = "w"
"#;
    let e = parse(text).unwrap();
    let names: Vec<&str> = e.variants.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(names, ["baseline", "slowlog-1000", "slowlog-0"]);
    match &e.variants[2].server {
        ServerSource::Spawn { command } => assert_eq!(command.last().unwrap(), "0"),
        other => panic!("{other:?}"),
    }
    assert_eq!(e.workloads[0].tests.words(), ["set", "get"]);
}

#[test]
fn toggle_variants_share_the_base_execution() {
    let text = r#"
[experiment]
name = "t"
requests = 100
rounds = 3
[[variant]]
name = "base"
[[variant]]
name = "on"
toggle_of = "base"
config = { "lazyfree-lazy-user-del" = "yes" }
guard = "200ms"
[[workload]]
name = "w"
"#;
    let e = parse(text).unwrap();
    let p = plan::round_plan(&e, 0, 0);
    assert_eq!(p.len(), 1);
    assert_eq!(p[0].trials.len(), 2);
    let bad = text.replace("toggle_of = \"base\"", "toggle_of = \"nope\"");
    assert!(parse(&bad)
        .unwrap_err()
        .to_string()
        .contains("no variant named \"nope\""));
}

#[test]
fn rmit_order_is_reproducible_and_varies_between_rounds() {
    let text = BASIC.replace("rounds = 4", "rounds = 20").replace(
        "[[workload]]",
        "[[variant]]\nname = \"c\"\n[[variant]]\nname = \"d\"\n\n[[workload]]",
    );
    let e = parse(&text).unwrap();
    let order = |e: &resplab_experiment::Experiment, r| -> Vec<usize> {
        plan::round_plan(e, r, 0)
            .iter()
            .flat_map(|x| x.trials.iter().map(|t| t.variant))
            .collect()
    };
    let orders: Vec<Vec<usize>> = (0..20).map(|r| order(&e, r)).collect();
    // same seed → same plan
    let again: Vec<Vec<usize>> = (0..20).map(|r| order(&e, r)).collect();
    assert_eq!(orders, again);
    // every round holds every variant once
    for o in &orders {
        let mut s = o.clone();
        s.sort();
        assert_eq!(s, vec![0, 1, 2, 3]);
    }
    // rounds differ, and the first variant is not always the same
    let distinct: std::collections::HashSet<_> = orders.iter().collect();
    assert!(
        distinct.len() >= 8,
        "only {} distinct orders",
        distinct.len()
    );
    let firsts: std::collections::HashSet<_> = orders.iter().map(|o| o[0]).collect();
    assert!(firsts.len() >= 3);
    // another seed → another plan
    let other = parse(&text.replace("seed = 42", "seed = 43")).unwrap();
    let other_orders: Vec<Vec<usize>> = (0..20).map(|r| order(&other, r)).collect();
    assert_ne!(orders, other_orders);
    // reruns get their own order
    let rerun: Vec<Vec<usize>> = (0..20)
        .map(|r| {
            plan::round_plan(&e, r, 1)
                .iter()
                .flat_map(|x| x.trials.iter().map(|t| t.variant))
                .collect()
        })
        .collect();
    assert_ne!(orders, rerun);
}

#[test]
fn abba_alternates() {
    let e = parse(&BASIC.replace("seed = 42", "seed = 42\norder = \"abba\"")).unwrap();
    let v = |r| -> Vec<usize> {
        plan::round_plan(&e, r, 0)
            .iter()
            .map(|x| x.trials[0].variant)
            .collect()
    };
    assert_eq!(v(0), [0, 1]);
    assert_eq!(v(1), [1, 0]);
    assert_eq!(v(2), [0, 1]);
}

#[test]
fn fixed_runs_file_order_in_every_round_and_attempt() {
    let e = parse(&BASIC.replace("seed = 42", "seed = 42\norder = \"fixed\"")).unwrap();
    for r in 0..6 {
        for attempt in 0..2 {
            let v: Vec<usize> = plan::round_plan(&e, r, attempt)
                .iter()
                .map(|x| x.trials[0].variant)
                .collect();
            assert_eq!(v, [0, 1], "round {r} attempt {attempt}");
        }
    }
}

#[test]
fn next_execution_starts_at_round_zero() {
    let e = parse(BASIC).unwrap();
    match plan::next_execution(&e, &[]) {
        Next::Run(x) => {
            assert_eq!((x.round, x.attempt), (0, 0));
            assert_eq!(x.trials[0].position, 0);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(plan::full_plan(&e).len(), 8);
    assert!(plan::estimate_total(&e).as_secs_f64() > 0.0);
}

const COMMAND: &str = r#"
[experiment]
name = "cmd"

[[variant]]
name = "a"
server = "none"

[[variant]]
name = "b"
server = "none"

[[workload]]
name = "w"
run = "./bench -h {host} -p {port}"
"#;

#[test]
fn command_workloads_resolve_and_default_to_wall_time() {
    let e = parse(COMMAND).unwrap();
    let run = e.workloads[0].run.as_ref().unwrap();
    assert_eq!(run.line, "./bench -h {host} -p {port}");
    assert!(!run.shell);
    assert_eq!(run.format, None);
    assert_eq!(run.timeout.as_secs(), 600);
    assert_eq!(e.primary_metric, "wall_sec");
    assert!(matches!(
        e.variants[0].server,
        resplab_experiment::ServerSource::None
    ));
    // Any metric name may be primary when a workload is a command.
    let e = parse(&COMMAND.replace(
        "name = \"cmd\"",
        "name = \"cmd\"\nprimary_metric = \"ns/op\"",
    ))
    .unwrap();
    assert_eq!(e.primary_metric, "ns/op");
}

#[test]
fn command_workload_mistakes_name_line_and_key() {
    let cases = [
        (
            "run = \"./bench -h {host} -p {port}\"",
            "run = \"./bench\"\nformat = \"gobenc\"",
            "unknown format \"gobenc\"; did you mean \"gobench\"?",
        ),
        (
            "run = \"./bench -h {host} -p {port}\"",
            "run = \"./bench\"\nclients = 4",
            "`clients` is bench vocabulary",
        ),
        (
            "run = \"./bench -h {host} -p {port}\"",
            "run = \"./bench {hots}\"",
            "unknown placeholder {hots}",
        ),
        (
            "run = \"./bench -h {host} -p {port}\"",
            "tests = \"set\"\nformat = \"auto\"",
            "`format` belongs to a command workload",
        ),
        (
            "run = \"./bench -h {host} -p {port}\"",
            "run = \"./bench 'unclosed\"",
            "workload[0].run",
        ),
        (
            "run = \"./bench -h {host} -p {port}\"",
            "tests = \"set\"",
            "can only run command workloads",
        ),
    ];
    for (from, to, needle) in cases {
        let err = parse(&COMMAND.replace(from, to)).unwrap_err().to_string();
        assert!(err.contains(needle), "{to}: {err}");
        assert!(err.starts_with("exp.toml"), "{err}");
    }
    // With [server], a bench workload of a server = "none" variant targets that server.
    let e = parse(&format!(
        "{}\n[server]\nper = \"round\"\n",
        COMMAND.replace("run = \"./bench -h {host} -p {port}\"", "tests = \"set\"")
    ))
    .unwrap();
    assert!(e.workloads[0].run.is_none());
    assert!(e.shared_server.as_ref().unwrap().per_round);
    let err = parse(&format!("{COMMAND}\n[server]\nper = \"boot\"\n"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("expected \"trial\" or \"round\", found \"boot\""),
        "{err}"
    );
    let err = parse(
        &COMMAND
            .replace("server = \"none\"", "")
            .replace("[[workload]]", "[server]\nper = \"round\"\n\n[[workload]]"),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("no variant has it"), "{err}");
}

/// The memtier words are parsed once, when the file is read, and the stored definition
/// keeps them exactly as written: a stored experiment reads back and hashes as before.
#[test]
fn workload_words_are_typed_once_and_stored_as_written() {
    use resplab_workload::{Arrivals, KeyPattern, Ratio, ValueSize};
    let text = BASIC.replace(
        "tests = \"set\"\n",
        "ratio = \" 1:10\"\nkey_pattern = \"r:g\"\ndata_size_range = \"32-64\"\nrate = 500.0\narrivals = \"constant\"\n",
    );
    let e = parse(&text).unwrap();
    let w = &e.workloads[0];
    assert_eq!(
        *w.ratio.as_ref().unwrap().value(),
        Ratio { set: 1, get: 10 }
    );
    assert_eq!(
        w.key_pattern
            .as_ref()
            .unwrap()
            .value()
            .set_get("r:g")
            .unwrap(),
        (KeyPattern::Random, KeyPattern::Gaussian)
    );
    assert_eq!(
        *w.data_size_range.as_ref().unwrap().value(),
        ValueSize::Range { min: 32, max: 64 }
    );
    assert_eq!(w.arrivals, Arrivals::Constant);

    // Stored as the words of the file, as when these fields were strings.
    let json = e.to_json();
    let stored = &json["workloads"][0];
    assert_eq!(stored["ratio"], " 1:10");
    assert_eq!(stored["key_pattern"], "r:g");
    assert_eq!(stored["data_size_range"], "32-64");
    assert_eq!(stored["data_size_list"], serde_json::Value::Null);
    assert_eq!(stored["arrivals"], "constant");
    let back = resplab_experiment::Experiment::from_json(&json).unwrap();
    assert_eq!(back, e);
    assert_eq!(back.to_json().to_string(), json.to_string());
    assert_eq!(back.definition_hash(), e.definition_hash());

    // The spec of a trial comes from the typed values.
    let spec = resplab_experiment::workload::to_spec(w, 7).unwrap();
    match spec.kind {
        resplab_workload::WorkloadKind::Mix(m) => {
            assert_eq!(m.ratio, Ratio { set: 1, get: 10 });
            assert_eq!(m.get_pattern, KeyPattern::Gaussian);
            assert_eq!(m.values, ValueSize::Range { min: 32, max: 64 });
        }
        other => panic!("{other:?}"),
    }

    // A stored word its parser refuses does not load.
    let mut broken = json.clone();
    broken["workloads"][0]["ratio"] = "1-10".into();
    let err = resplab_experiment::Experiment::from_json(&broken).unwrap_err();
    assert!(err.contains("invalid --ratio '1-10'"), "{err}");
}

/// A key pattern of the other form is refused when a trial's spec is built, with the
/// message of the flag that form belongs to, as when the words were parsed per trial.
#[test]
fn key_pattern_of_the_wrong_form_fails_the_trial_spec() {
    let mix = parse(&BASIC.replace("tests = \"set\"\n", "key_pattern = \"R\"\n")).unwrap();
    let err = resplab_experiment::workload::to_spec(&mix.workloads[0], 1).unwrap_err();
    assert!(
        err.starts_with("workload \"set\": invalid --key-pattern 'R'"),
        "{err}"
    );
    let cmd = parse(&BASIC.replace(
        "tests = \"set\"\n",
        "command = \"SET __key__ __data__\"\nkey_pattern = \"R:R\"\n",
    ))
    .unwrap();
    let err = resplab_experiment::workload::to_spec(&cmd.workloads[0], 1).unwrap_err();
    assert!(
        err.starts_with("workload \"set\": invalid --command-key-pattern 'R:R'"),
        "{err}"
    );
}

#[test]
fn cluster_wait_is_a_duration_with_a_default_left_out_of_the_definition() {
    let plain = parse(BASIC).unwrap();
    assert_eq!(plain.cluster_wait, resplab_engine::DEFAULT_CLUSTER_WAIT);
    assert!(!plain.to_json().to_string().contains("cluster_wait"));
    let text = BASIC.replace("seed = 42", "seed = 42\ncluster_wait = \"30s\"");
    let e = parse(&text).unwrap();
    assert_eq!(e.cluster_wait, std::time::Duration::from_secs(30));
    assert_ne!(e.definition_hash(), plain.definition_hash());
    let text = BASIC.replace("seed = 42", "seed = 42\ncluster_wait = \"soon\"");
    let err = parse(&text).unwrap_err();
    assert_eq!(err.line, Some(7), "{err}");
    assert!(err.to_string().contains("soon"), "{err}");
}
