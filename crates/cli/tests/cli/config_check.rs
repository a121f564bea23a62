//! The configuration check between different server software: redis-server against
//! `resplab serve` differ in nearly every setting by design, so the terminal says so in
//! one line with the count and points to the report, which lists every setting.

use crate::common::{run_in, BIN};

#[test]
fn different_server_software_is_one_terminal_line_and_a_full_list_in_the_report() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("sw.toml");
    std::fs::write(
        &file,
        format!(
            "[experiment]\nname = \"sw\"\nrounds = 2\nrequests = 500\n\n\
             [[variant]]\nname = \"redis\"\n\n\
             [[variant]]\nname = \"serve\"\nserver = \"{BIN} serve --port {{port}}\"\n\n\
             [[workload]]\nname = \"set\"\ntests = \"set\"\nclients = 4\n"
        ),
    )
    .unwrap();
    let (code, out, err) = run_in(
        &["experiment", "run", "sw.toml", "-q", "--db", "sw.db"],
        dir.path(),
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let line = err
        .lines()
        .find(|l| l.starts_with("config check:"))
        .unwrap_or_else(|| panic!("no config check line: {err}"));
    assert!(
        line.starts_with("config check: serve (resplab-serve ")
            && line.contains(" vs baseline redis (redis ")
            && line.ends_with(" settings differ; see the report (resplab report sw)"),
        "{line}"
    );
    let count: usize = line
        .split(": ")
        .nth(2)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count: {line}"));
    assert!(count > 20, "{line}");
    assert_eq!(
        err.lines().filter(|l| l.starts_with("  serve: ")).count(),
        0,
        "the settings are not listed in the terminal: {err}"
    );

    let (code, _, err) = run_in(
        &["report", "sw", "--db", "sw.db", "-o", "sw.md"],
        dir.path(),
    );
    assert_eq!(code, 0, "{err}");
    let md = std::fs::read_to_string(dir.path().join("sw.md")).unwrap();
    assert!(md.contains("### Configuration check"), "{md}");
    // The part's own table (the servers' table has rows of `serve` too).
    let part = md
        .split("### Configuration check")
        .nth(1)
        .and_then(|rest| rest.split("\n### ").next())
        .unwrap_or_default();
    let rows = part.lines().filter(|l| l.starts_with("| serve | ")).count();
    assert_eq!(
        rows, count,
        "every differing setting is a row of the report"
    );
}
