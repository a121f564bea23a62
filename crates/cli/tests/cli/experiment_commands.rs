//! Command workloads (`run = "…"`): external load generators and benchmarks run as
//! trials, their output read by `compare`'s importers, their failures kept as invalid
//! trials with a reason; and examples/client-library.toml, three Go client builds in
//! interleaved rounds.

use crate::common::{resplab, text};
use resplab_results::import::{import_bytes, Ctx, Interner, PlainOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn repo_root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// `(command, metric) → value` of every trial in the export of `name`, with the trial's
/// standard output, keyed by `(variant, workload, round)`.
type Exported = BTreeMap<(String, String, u64), (BTreeMap<(String, String), f64>, String)>;

/// `resplab experiment status NAME --db DB`: what it printed.
fn status(name: &str, db: &str) -> String {
    text(&resplab(&["experiment", "status", name, "--db", db]))
}

/// Writes `resplab report SOURCE --db DB -o MD`, which must succeed, and reads `MD`.
fn report_md(source: &str, db: &str, md: &Path) -> String {
    let out = resplab(&["report", source, "--db", db, "-o", &md.to_string_lossy()]);
    crate::common::assert_ok(&out);
    std::fs::read_to_string(md).unwrap()
}

fn export(db: &Path, name: &str) -> Exported {
    let out = resplab(&[
        "experiment",
        "export",
        name,
        "--db",
        &db.to_string_lossy(),
        "--format",
        "json",
    ]);
    crate::common::assert_ok(&out);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut map = Exported::new();
    for t in v["trials"].as_array().unwrap() {
        let mut metrics = BTreeMap::new();
        for (command, m) in t["metrics"].as_object().unwrap() {
            for (name, value) in m.as_object().unwrap() {
                metrics.insert((command.clone(), name.clone()), value.as_f64().unwrap());
            }
        }
        let stdout = t["command_output"]["stdout"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        map.insert(
            (
                t["variant"].as_str().unwrap().to_string(),
                t["workload"].as_str().unwrap().to_string(),
                t["round"].as_u64().unwrap(),
            ),
            (metrics, stdout),
        );
    }
    map
}

/// What `compare` reads from the same bytes as a file: `(workload, metric) → value`.
fn imported(bytes: &[u8]) -> BTreeMap<(String, String), f64> {
    let mut interner = Interner::default();
    let mut ctx = Ctx {
        label: Arc::from("x"),
        file: Arc::from("file"),
        interner: &mut interner,
    };
    let got = import_bytes(bytes, &mut ctx, &PlainOptions::default()).unwrap();
    got.observations
        .iter()
        .filter(|o| o.flag.is_none())
        .map(|o| ((o.workload.to_string(), o.metric.name.clone()), o.value))
        .collect()
}

/// redis-benchmark run by the experiment and memtier's JSON (a real memtier_benchmark
/// output file from the test fixtures, replayed by `cat`: memtier_benchmark is not
/// installed here) give, per command, exactly the metrics `compare` reads from the
/// same output as a file; wall and CPU time come on top.
#[test]
fn external_tools_store_what_compare_reads_from_their_files() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let memtier = repo_root().join("crates/results/tests/fixtures/memtier/single.json");
    let file = dir.path().join("ext.toml");
    std::fs::write(
        &file,
        format!(
            r#"
[experiment]
name = "ext"
rounds = 2
primary_metric = "rps"

[[variant]]
name = "plain"

[[variant]]
name = "aof"
server = "redis-server --port {{port}} --bind 127.0.0.1 --save '' --appendonly yes --dir {{dir}}"

[[workload]]
name = "rb"
run = "redis-benchmark -h {{host}} -p {{port}} -t set,get -n 2000 --csv"
format = "redis-benchmark"
timeout = "60s"

[[workload]]
name = "mt"
run = "cat '{}'"
format = "memtier"
"#,
            memtier.display()
        ),
    )
    .unwrap();
    let db = dir.path().join("ext.db");
    let out = crate::common::experiment_run(&file, &db, &[]);
    crate::common::assert_ok(&out);
    let all = text(&out);
    assert!(all.contains("rb:SET / aof vs baseline"), "{all}");
    let trials = export(&db, "ext");
    assert_eq!(trials.len(), 8);
    for ((variant, workload, round), (metrics, stdout)) in &trials {
        let expected = imported(stdout.as_bytes());
        assert!(!expected.is_empty(), "{variant} {workload} {round}");
        let mut stored = metrics.clone();
        assert!(stored.remove(&("all".into(), "wall_sec".into())).unwrap() > 0.0);
        stored.remove(&("all".into(), "cpu_sec".into()));
        // The server's own evidence of the trial comes beside the command's figures.
        stored.retain(|(_, name), _| !name.starts_with("server_"));
        assert_eq!(stored, expected, "{variant} {workload} round {round}");
    }
    // redis-benchmark's per-test rows are there for both tests.
    let (rb, _) = &trials[&("aof".into(), "rb".into(), 0)];
    assert!(rb.contains_key(&("SET".into(), "rps".into())), "{rb:?}");
    assert!(rb.contains_key(&("GET".into(), "rps".into())), "{rb:?}");

    // memtier's full histograms (µs) are stored per request type and for all together,
    // in ns, with the percentiles memtier printed beside them.
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&memtier).unwrap()).unwrap();
    let store = resplab_store::Store::open(&db).unwrap();
    let info = store.experiment("ext").unwrap();
    let mt: Vec<_> = store
        .trials(info.id)
        .unwrap()
        .into_iter()
        .filter(|t| t.workload == "mt")
        .collect();
    assert_eq!(mt.len(), 4);
    for t in &mt {
        for (stored_as, section) in [("Sets", "Sets"), ("Gets", "Gets"), ("all", "Totals")] {
            let bytes = store
                .histogram(t.id, stored_as, "latency")
                .unwrap()
                .unwrap_or_else(|| panic!("trial {}: no {stored_as} histogram", t.id));
            let h = resplab_stats::hist::LatencyHistogram::from_base64(&base64::Engine::encode(
                &base64::engine::general_purpose::STANDARD,
                bytes,
            ))
            .unwrap();
            let p = &json["ALL STATS"][section]["Percentile Latencies"];
            assert_eq!(
                h.count(),
                json["ALL STATS"][section]["Count"].as_u64().unwrap()
            );
            for (q, key) in [(50.0, "p50.00"), (99.0, "p99.00")] {
                let want_ns = p[key].as_f64().unwrap() * 1e6;
                let got = h.percentile_ns(q) as f64;
                assert!(
                    (got / want_ns - 1.0).abs() < 0.02,
                    "{section} {key}: {got} ns from the histogram, memtier printed {want_ns} ns"
                );
            }
        }
    }
    // ...so the report draws their latency spectrum.
    let md = dir.path().join("ext.md");
    report_md("db:ext", &db.to_string_lossy(), &md);
    let spectra: Vec<String> = std::fs::read_dir(dir.path().join("ext-plots"))
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with("latency-spectrum.svg"))
        .collect();
    assert!(spectra.iter().any(|n| n.contains("mt")), "{spectra:?}");
    // redis-benchmark's CSV carries no histogram: no spectrum is drawn for it.
    assert!(!spectra.iter().any(|n| n.contains("rb")), "{spectra:?}");
}

/// A command that is not found, exits non-zero, times out, prints nothing or prints
/// something its format does not describe: each trial is stored as invalid with a
/// reason naming the variant, the round and the command, and the run goes on.
#[test]
fn failing_commands_are_invalid_trials_with_their_reasons() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let file = serverless_pair(
        dir.path(),
        "bad",
        r#"[[workload]]
name = "missing"
run = "no-such-benchmark-xyz --fast"

[[workload]]
name = "exits"
run = "sh -c 'echo failing >&2; exit 3'"

[[workload]]
name = "slow"
run = "sleep 20"
timeout = "300ms"

[[workload]]
name = "silent"
run = "true"
format = "auto"

[[workload]]
name = "wrong"
run = "echo BenchmarkX-2 10 5 ns/op"
format = "memtier"

[[workload]]
name = "fine"
run = "echo 42"
format = "numbers"
"#,
    );
    let db = dir.path().join("bad.db");
    let db_s = db.to_string_lossy().into_owned();
    let out = resplab(&["experiment", "run", &file.to_string_lossy(), "--db", &db_s]);
    // Its only round is invalid: nothing to compare, and the exit code says so.
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("no round of `bad` was valid, so there is nothing to compare"),
        "{}",
        text(&out)
    );
    let status = resplab(&["experiment", "status", "bad", "--db", &db_s]);
    let s = text(&status);
    for needle in [
        "variant `a`, round 1: command `no-such-benchmark-xyz --fast` cannot start `no-such-benchmark-xyz`",
        "command `sh -c 'echo failing >&2; exit 3'` exited with status 3; its output ends: failing",
        "command `sleep 20` timed out after",
        "command `true` printed nothing on standard output",
        "command `echo BenchmarkX-2 10 5 ns/op` standard output: expected memtier JSON output, found what looks like go test -bench output",
    ] {
        assert!(s.contains(needle), "missing {needle:?} in\n{s}");
    }
    assert!(s.contains("trials stored: 12 (2 valid, 10 invalid)"), "{s}");
    // The good workload's trials are stored with their value.
    let trials = export(&db, "bad");
    let (fine, _) = &trials[&("b".into(), "fine".into(), 0)];
    assert_eq!(fine[&("all".to_string(), "value".to_string())], 42.0);
}

/// examples/client-library.toml: three builds of a Go benchmark over go-redis, six
/// RMIT rounds against a fresh redis-server each, every go test -bench metric stored;
/// `compare --style benchstat` prints benchstat's tables of them and the default style
/// a paired verdict per benchmark and metric.
#[test]
fn client_library_example_runs_three_builds_in_interleaved_rounds() {
    let _lane = crate::common::shared();
    assert!(
        std::process::Command::new("go")
            .arg("version")
            .output()
            .is_ok(),
        "this test needs `go`, which is not installed: scripts/setup.sh installs it"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("c.db");
    let db_s = db.to_string_lossy().into_owned();
    let out = std::process::Command::new(crate::common::BIN)
        .args([
            "experiment",
            "run",
            "examples/client-library.toml",
            "--db",
            &db_s,
        ])
        .current_dir(repo_root())
        .output()
        .unwrap();
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(all.contains("18 trials run"), "{all}");
    assert!(all.contains("6 of 6 rounds valid"), "{all}");
    assert!(all.contains("gobench:Get"), "{all}");
    // RMIT: the order of the variants is not the same in every round.
    let trials = export(&db, "client-library");
    assert_eq!(trials.len(), 18);
    for ((_, _, _), (metrics, _)) in &trials {
        let names: Vec<&str> = metrics.keys().map(|(_, n)| n.as_str()).collect();
        for n in ["ns/op", "B/op", "allocs/op", "ns/key", "wall_sec"] {
            assert!(names.contains(&n), "{n} missing: {names:?}");
        }
    }
    let bs = resplab(&[
        "compare",
        "db:client-library",
        "--db",
        &db_s,
        "--style",
        "benchstat",
    ]);
    let bs = text(&bs);
    for needle in [
        "sec/op",
        "B/op",
        "allocs/op",
        "vs base",
        "hook-active",
        "geomean",
    ] {
        assert!(bs.contains(needle), "{needle} missing:\n{bs}");
    }
    same_as_real_benchstat(&trials, &bs, dir.path());
    let def = text(&resplab(&["compare", "db:client-library", "--db", &db_s]));
    assert!(def.contains("gobench:Set"), "{def}");
    assert!(def.contains("allocs/op"), "{def}");
}

/// A redis-server on `port` started by the test: one "boot" of examples/kernels-phased.
fn boot(port: u16, extra: &[&str]) -> std::process::Child {
    let dir = tempfile::tempdir().unwrap().keep();
    let mut child = std::process::Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
        ])
        .arg("--dir")
        .arg(&dir)
        .args(extra)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return child;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("redis-server on port {port} did not start");
}

/// examples/kernels-phased.toml in two phases, the reboot faked by starting another
/// server on the same address between them: the first phase leaves every round
/// incomplete and `status` names the missing cells; the second fills them; the verdict
/// pairs by round and says the variants were not interleaved, and `compare` shows the
/// per-phase run order.
#[test]
fn phased_variants_store_resume_and_report_not_interleaved() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let spec = std::fs::read_to_string(repo_root().join("examples/kernels-phased.toml"))
        .unwrap()
        .replace("127.0.0.1:6379", &format!("127.0.0.1:{port}"))
        .replace("requests = 20000", "requests = 3000");
    let file = dir.path().join("kernels.toml");
    std::fs::write(&file, spec).unwrap();
    let (file, db) = (
        file.to_string_lossy().into_owned(),
        dir.path().join("k.db").to_string_lossy().into_owned(),
    );
    let mut a = boot(port, &[]);
    let out = resplab(&[
        "experiment",
        "run",
        &file,
        "--db",
        &db,
        "-q",
        "--variants",
        "kernel-a",
    ]);
    let _ = a.kill();
    let _ = a.wait();
    crate::common::assert_ok(&out);
    let st = status("kernels-phased", &db);
    assert!(st.contains("missing (round, variant) cells: 6"), "{st}");
    assert!(st.contains("experiment kernels-phased (phased)"), "{st}");
    assert!(st.contains("missing: round 1 kernel-b"), "{st}");
    assert!(!st.contains("missing: round 1 kernel-a"), "{st}");
    // The second boot: another server (append-only, fsync always) at the same address.
    // `resume` from the stored definition, limited to this boot's variant.
    let mut b = boot(port, &["--appendonly", "yes", "--appendfsync", "always"]);
    let out = resplab(&[
        "experiment",
        "resume",
        "kernels-phased",
        "--db",
        &db,
        "-q",
        "--variants",
        "kernel-b",
    ]);
    let _ = b.kill();
    let _ = b.wait();
    let all = text(&out);
    assert!(out.status.success(), "{all}");
    assert!(
        all.contains("set-get / kernel-b vs baseline:") && all.contains("[NOT INTERLEAVED"),
        "{all}"
    );
    assert!(all.contains("n = 6"), "{all}");
    let st = status("kernels-phased", &db);
    assert!(st.contains("rounds valid: 6/6"), "{st}");
    assert!(st.contains("experiment kernels-phased (finished)"), "{st}");
    assert!(!st.contains("missing"), "{st}");
    let cmp = text(&resplab(&["compare", "db:kernels-phased", "--db", &db]));
    assert!(cmp.contains("6 pairs"), "{cmp}");
    assert!(
        cmp.contains("kernel-b vs kernel-a: NOT INTERLEAVED"),
        "{cmp}"
    );
    assert!(
        cmp.contains("phase 1 (kernel-a): run order r1:kernel-a/set-get"),
        "{cmp}"
    );
    assert!(
        cmp.contains("phase 2 (kernel-b): run order r1:kernel-b/set-get"),
        "{cmp}"
    );
    assert!(cmp.contains("before_phase: Linux"), "{cmp}");
    // Every row of the table carries the mark, and each row's warnings say it.
    let rows: Vec<&str> = cmp.lines().filter(|l| l.starts_with("set-get ")).collect();
    assert!(!rows.is_empty(), "{cmp}");
    for r in &rows {
        assert!(r.contains("(not interleaved)"), "{r}");
    }
    let json: serde_json::Value = serde_json::from_slice(
        &resplab(&[
            "compare",
            "db:kernels-phased",
            "--db",
            &db,
            "--format",
            "json",
        ])
        .stdout,
    )
    .unwrap();
    for row in json["rows"].as_array().unwrap() {
        assert!(
            row["warnings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|w| w["kind"] == "not_interleaved"),
            "{row}"
        );
    }
    let md = dir.path().join("k.md");
    let report = report_md("db:kernels-phased", &db, &md);
    assert!(
        report.contains("kernel-b vs kernel-a: NOT INTERLEAVED"),
        "{report}"
    );
    assert!(report.contains("phase 2 (kernel-b): run order"), "{report}");
}

/// examples/external-memtier.toml, smoke-run as written: with the real memtier_benchmark
/// where it is installed; elsewhere (no Debian package brings it) with a stand-in on
/// `PATH` that takes the example's command line and writes a JSON output recorded from
/// the real memtier_benchmark (crates/results/tests/fixtures/memtier/single.json) to
/// its `--json-out-file`, so the example's placeholders, shell, file hand-off and
/// importer run on the real tool's recorded facts.
#[test]
fn external_memtier_example_smoke_runs() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("m.db").to_string_lossy().into_owned();
    let file = repo_root().join("examples/external-memtier.toml");
    let real = std::process::Command::new("memtier_benchmark")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let mut path = std::env::var("PATH").unwrap_or_default();
    if !real {
        let bin = dir.path().join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        let recorded = repo_root().join("crates/results/tests/fixtures/memtier/single.json");
        let script = bin.join("memtier_benchmark");
        std::fs::write(
            &script,
            format!(
                "#!/bin/sh\n# Replays a recorded real memtier_benchmark JSON output.\nout=\"\"\nwhile [ $# -gt 0 ]; do\n  case \"$1\" in\n    --json-out-file) out=\"$2\"; shift ;;\n    -s|-p|--ratio|-c|-t|-n) [ -n \"$2\" ] || exit 1; shift ;;\n    --hide-histogram) ;;\n    *) echo \"memtier_benchmark: unknown option $1\" >&2; exit 1 ;;\n  esac\n  shift\ndone\n[ -n \"$out\" ] || {{ echo 'no --json-out-file' >&2; exit 1; }}\ncp '{}' \"$out\"\n",
                recorded.display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        path = format!("{}:{path}", bin.display());
    }
    let out = std::process::Command::new(crate::common::BIN)
        .args(["experiment", "run"])
        .arg(&file)
        .args(["--smoke", "-q", "--db", &db])
        .env("PATH", &path)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    crate::common::assert_ok(&out);
    let st = status("external-memtier-smoke", &db);
    assert!(st.contains("rounds valid: 2/2"), "{st}");
}

/// Variants without a server of their own target the `[server]` section's: with
/// `per = "round"` every variant of a round talks to one server (a counter there counts
/// both), with the default `per = "trial"` each trial has a fresh one.
#[test]
fn variants_without_a_server_share_the_server_section() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    for (per, expected) in [("round", vec![1.0, 2.0]), ("trial", vec![1.0, 1.0])] {
        let file = dir.path().join(format!("{per}.toml"));
        std::fs::write(
            &file,
            format!(
                r#"
[experiment]
name = "shared-{per}"
rounds = 2
primary_metric = "value"

[server]
per = "{per}"

[[variant]]
name = "a"
server = "none"

[[variant]]
name = "b"
server = "none"

[[workload]]
name = "incr"
run = "redis-cli -h {{host}} -p {{port}} INCR counter"
format = "numbers"
"#
            ),
        )
        .unwrap();
        let db = dir.path().join(format!("{per}.db"));
        let out = crate::common::experiment_run(&file, &db, &["-q"]);
        crate::common::assert_ok(&out);
        let trials = export(&db, &format!("shared-{per}"));
        for round in 0..2 {
            let mut values: Vec<f64> = ["a", "b"]
                .iter()
                .map(|v| {
                    trials[&(v.to_string(), "incr".into(), round)].0
                        [&("all".into(), "value".into())]
                })
                .collect();
            values.sort_by(f64::total_cmp);
            assert_eq!(values, expected, "per {per}, round {round}");
        }
    }
}

/// Where the real benchstat is installed: its tables of the trials' outputs (one file
/// per variant, in round order) hold the same numbers, row by row, as resplab's
/// benchstat style of the stored experiment (whose rows are named `workload:benchmark`).
fn same_as_real_benchstat(trials: &Exported, ours: &str, dir: &Path) {
    let mut files = Vec::new();
    for v in ["baseline", "hook-active", "hook-dormant"] {
        let mut out = String::new();
        for round in 0..6 {
            out.push_str(&trials[&(v.to_string(), "gobench".to_string(), round)].1);
        }
        let f = dir.join(v);
        std::fs::write(&f, out).unwrap();
        files.push(f);
    }
    let real = std::process::Command::new("benchstat")
        .args(&files)
        .current_dir(dir)
        .output()
        .expect("this cross-check needs benchstat, which is not installed: scripts/setup.sh installs it");
    let real = String::from_utf8_lossy(&real.stdout);
    let cells = |line: &str| {
        line.split_whitespace()
            .skip(1)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut checked = 0;
    for line in real.lines() {
        let Some(name) = line.split_whitespace().next() else {
            continue;
        };
        if !(name.starts_with("Set-")
            || name.starts_with("Get-")
            || name.starts_with("PipelineGet16-"))
        {
            continue;
        }
        let theirs = cells(line);
        let found = ours
            .lines()
            .filter(|l| l.starts_with(&format!("gobench:{name} ")))
            .any(|l| cells(l) == theirs);
        assert!(found, "benchstat row `{line}` not in\n{ours}");
        checked += 1;
    }
    assert!(checked >= 10, "{real}");
}

/// A command's hostile output (escape sequences that retitle and recolour the terminal,
/// a bell, binary) reaches the terminal with its control characters escaped.
#[test]
fn hostile_command_output_is_shown_escaped() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let file = serverless_pair(
        dir.path(),
        "hostile",
        r#"[[workload]]
name = "evil"
run = '''printf '\033]0;pwned\007\033[31mred\001\002\377 done\n' >&2; exit 3'''
shell = true
"#,
    );
    let db = dir.path().join("hostile.db");
    let db_s = db.to_string_lossy().into_owned();
    let out = resplab(&["experiment", "run", &file.to_string_lossy(), "--db", &db_s]);
    let status = resplab(&["experiment", "status", "hostile", "--db", &db_s]);
    for o in [&out, &status] {
        let bytes: Vec<u8> = o.stdout.iter().chain(o.stderr.iter()).copied().collect();
        for c in [0x1b_u8, 0x07, 0x01, 0x02] {
            assert!(
                !bytes.contains(&c),
                "control byte {c:#x} printed: {}",
                text(o)
            );
        }
    }
    let all = text(&out);
    assert!(all.contains("\\u{1b}]0;pwned"), "{all}");
    assert!(all.contains("red") && all.contains("done"), "{all}");
}

/// A command workload's working directory (`{dir}`) lives as long as the run: it exists
/// while the command runs and is gone when the run ends.
#[test]
fn command_work_directories_are_removed_when_the_run_ends() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("wd.toml");
    let seen = dir.path().join("seen.txt");
    std::fs::write(
        &file,
        format!(
            r#"
[experiment]
name = "workdir-{pid}"
rounds = 1

[[variant]]
name = "a"
server = "none"

[[variant]]
name = "b"
server = "none"

[[workload]]
name = "n"
run = "echo {{dir}} >> {seen}; touch {{dir}}/built; echo 42"
shell = true
format = "numbers"
"#,
            pid = std::process::id(),
            seen = seen.display()
        ),
    )
    .unwrap();
    let db = dir.path().join("wd.db");
    let out = crate::common::experiment_run(&file, &db, &[]);
    crate::common::assert_ok(&out);
    let dirs = std::fs::read_to_string(&seen).unwrap();
    assert_eq!(dirs.lines().count(), 2, "{dirs}");
    for d in dirs.lines() {
        assert!(!Path::new(d.trim()).exists(), "{d} was left behind");
    }
}

/// Writes `NAME.toml` in `dir`: experiment NAME of one round with no reruns, variants a
/// and b without a server, then `workloads`; returns the file's path.
fn serverless_pair(dir: &Path, name: &str, workloads: &str) -> PathBuf {
    let file = dir.join(format!("{name}.toml"));
    let text = format!(
        "\n[experiment]\nname = \"{name}\"\nrounds = 1\nmax_reruns = 0\n\n\
         [[variant]]\nname = \"a\"\nserver = \"none\"\n\n\
         [[variant]]\nname = \"b\"\nserver = \"none\"\n\n{workloads}"
    );
    std::fs::write(&file, text).unwrap();
    file
}
