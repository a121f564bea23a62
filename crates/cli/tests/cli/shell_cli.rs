//! Completion scripts and manual pages, generated from the live command definition.

use crate::common::command;

#[test]
fn completion_scripts_cover_every_subcommand_and_bash_parses_them() {
    let _lane = crate::common::shared();
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = command().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8(out.stdout).unwrap();
        for word in [
            "bench",
            "experiment",
            "compare",
            "report",
            "proto",
            "--test-time",
        ] {
            assert!(text.contains(word), "{shell} completion lacks {word}");
        }
    }
    let script = command()
        .args(["completions", "bash"])
        .output()
        .unwrap()
        .stdout;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("resplab.bash");
    std::fs::write(&path, script).unwrap();
    let status = std::process::Command::new("bash")
        .arg("-n")
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success(), "bash -n rejects the completion script");
    command()
        .args(["completions", "tcsh"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("invalid value 'tcsh'"));
}

#[test]
fn manual_pages_render_for_the_command_and_each_subcommand() {
    let _lane = crate::common::shared();
    let out = command().arg("man").output().unwrap();
    assert!(out.status.success());
    let page = String::from_utf8(out.stdout).unwrap();
    assert!(page.contains(".TH resplab 1"), "{page}");
    assert!(page.contains(".SH SUBCOMMANDS"), "{page}");
    let dir = tempfile::tempdir().unwrap();
    command()
        .args(["man", "-o"])
        .arg(dir.path())
        .assert()
        .success()
        .stdout(predicates::str::contains("manual pages"));
    let bench = std::fs::read_to_string(dir.path().join("resplab-bench.1")).unwrap();
    assert!(bench.contains(".TH RESPLAB-BENCH 1"), "{bench}");
    for flag in ["test\\-time", "pipeline", "json"] {
        assert!(bench.contains(flag), "resplab-bench.1 lacks {flag}");
    }
    assert!(dir.path().join("resplab-experiment-run.1").exists());
    // groff, when installed, formats the page without a warning (-k: UTF-8 input).
    if let Ok(out) = std::process::Command::new("groff")
        .args(["-k", "-man", "-Tutf8", "-ww", "-z"])
        .arg(dir.path().join("resplab-bench.1"))
        .output()
    {
        assert!(
            out.stderr.is_empty(),
            "groff: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    command()
        .args(["man", "-o", "/no/such/folder"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("expected an existing folder"));
}
