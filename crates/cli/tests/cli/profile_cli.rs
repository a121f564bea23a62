//! `resplab profile diff`: the function given a known extra cost leads the table, the
//! differential flame graph is written, and a malformed line is a one-line error.

use crate::common::{resplab, text};

const A: &str = "redis-server;aeMain;readQueryFromClient 500\n\
                 redis-server;aeMain;call;setCommand;dictAdd 300\n\
                 redis-server;aeMain;writeToClient 200\n";
const B: &str = "redis-server;aeMain;readQueryFromClient 480\n\
                 redis-server;aeMain;call;setCommand;dictAdd 310\n\
                 redis-server;aeMain;call;setCommand;feedAppendOnlyFile;fdatasync 400\n\
                 redis-server;aeMain;writeToClient 190\n";

#[test]
fn the_function_with_the_extra_cost_leads_and_the_flame_graph_is_written() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let (a, b, svg) = (
        dir.path().join("a.folded"),
        dir.path().join("b.folded"),
        dir.path().join("d.svg"),
    );
    std::fs::write(&a, A).unwrap();
    std::fs::write(&b, B).unwrap();
    let o = resplab(&[
        "profile",
        "diff",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--requests",
        "1000,1000",
        "--svg",
        svg.to_str().unwrap(),
    ]);
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    let first = out.lines().nth(2).unwrap_or_default();
    assert!(first.trim_start().starts_with("fdatasync"), "{out}");
    assert!(first.contains("+0.4000") && first.contains(" 400"), "{out}");
    assert!(out.contains("samples/request"), "{out}");
    let drawn = std::fs::read_to_string(&svg).unwrap();
    assert!(drawn.contains("<svg") && drawn.contains("fdatasync"));
}

#[test]
fn a_malformed_line_or_a_bad_flag_is_a_one_line_error() {
    let _lane = crate::common::shared();
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.folded"), dir.path().join("b.folded"));
    std::fs::write(&a, A).unwrap();
    std::fs::write(&b, "main;x 3\nmain;y three\n").unwrap();
    let o = resplab(&["profile", "diff", a.to_str().unwrap(), b.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("b.folded:2: expected `frame;frame;… SAMPLES`, found `main;y three`"),
        "{err}"
    );
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let o = resplab(&[
        "profile",
        "diff",
        a.to_str().unwrap(),
        a.to_str().unwrap(),
        "--requests",
        "5",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("expected two positive counts"),
        "{}",
        text(&o)
    );
}
