//! Cross-checks of `resplab compare --style ministat|benchstat` against the real tools on
//! generated data sets: identical ministat output, identical benchstat tables (medians,
//! ± percentages, deltas, p-values and n included). The tools must be installed:
//! `apt-get install ministat` and `go install golang.org/x/perf/cmd/benchstat@latest`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A small seeded generator (xorshift64*), so every data set is reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.unit().max(1e-12), self.unit());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// The real ministat (Debian's package).
fn ministat() -> PathBuf {
    tool(
        "ministat",
        &[PathBuf::from("/usr/bin/ministat")],
        "apt-get install ministat",
    )
}

fn tool(name: &str, extra: &[PathBuf], install: &str) -> PathBuf {
    let mut candidates: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join(name)).collect())
        .unwrap_or_default();
    candidates.extend(extra.iter().cloned());
    candidates
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("`{name}` not found on PATH; install it: {install}"))
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("resplab-xcheck-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(bin: &Path, args: &[String], dir: &Path) -> (String, i32) {
    let out = Command::new(bin)
        .args(args)
        .current_dir(dir)
        .env_remove("COLUMNS")
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", bin.display()));
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        out.status.code().unwrap_or(-1),
    )
}

fn fmt_value(v: f64, integers: bool) -> String {
    if integers {
        format!("{}", v.round() as i64)
    } else {
        format!("{v}")
    }
}

#[test]
fn ministat_output_is_identical_on_generated_data() {
    let _lane = crate::common::shared();
    let ministat = ministat();
    let resplab = PathBuf::from(env!("CARGO_BIN_EXE_resplab"));
    let dir = scratch("ministat");
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let confs = ["80", "90", "95", "98", "99", "99.5"];
    let mut cases = 0;
    for case in 0..60 {
        let kind = case % 6;
        let sets = 2 + rng.below(3) as usize;
        let mut names = Vec::new();
        let base = match kind {
            4 => -500.0,
            5 => 3.0e12,
            _ => 100.0,
        };
        let scale = match kind {
            5 => 2.0e9,
            _ => 5.0,
        };
        for s in 0..sets {
            let n = match kind {
                1 => 3,
                _ => 3 + rng.below(25) as usize,
            };
            let shift = if rng.below(2) == 0 {
                0.0
            } else {
                scale * rng.normal()
            };
            let mut lines = Vec::new();
            if rng.below(4) == 0 {
                lines.push("# generated".to_string());
            }
            for _ in 0..n {
                let v = match kind {
                    2 => (base + rng.below(4) as f64).round(),
                    3 => 42.0,
                    _ => base + shift + scale * rng.normal(),
                };
                lines.push(fmt_value(v, kind == 2 || kind == 3));
            }
            let name = format!("c{case}s{s}.txt");
            std::fs::write(dir.join(&name), lines.join("\n") + "\n").unwrap();
            names.push(name);
        }
        let mut flags: Vec<String> = vec!["-c".into(), confs[case % confs.len()].into()];
        match case % 5 {
            1 => flags.push("-A".into()),
            2 => flags.push("-s".into()),
            3 => flags.push("-n".into()),
            4 => flags.extend(["-w".to_string(), format!("{}", 40 + rng.below(60))]),
            _ => {}
        }
        let mut margs = flags.clone();
        margs.extend(names.iter().cloned());
        let (want, code) = run(&ministat, &margs, &dir);
        assert_eq!(code, 0, "ministat failed on case {case}: {margs:?}");
        let mut rargs: Vec<String> = vec!["compare".into(), "--style".into(), "ministat".into()];
        rargs.extend(margs.iter().cloned());
        let (got, rcode) = run(&resplab, &rargs, &dir);
        assert_eq!(rcode, 0, "resplab failed on case {case}: {rargs:?}\n{got}");
        assert_eq!(got, want, "case {case}: ministat {}", margs.join(" "));
        cases += 1;
    }
    assert!(cases >= 50);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn benchstat_tables_are_identical_on_generated_data() {
    let _lane = crate::common::shared();
    let home_bin = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join("go/bin/benchstat"))
        .unwrap_or_default();
    let benchstat = tool(
        "benchstat",
        &[home_bin, PathBuf::from("/root/go/bin/benchstat")],
        "go install golang.org/x/perf/cmd/benchstat@latest (then put $HOME/go/bin on PATH)",
    );
    let resplab = PathBuf::from(env!("CARGO_BIN_EXE_resplab"));
    let dir = scratch("benchstat");
    let mut rng = Rng(0x5eed_bec4_0002);
    let mut cases = 0;
    for case in 0..55 {
        let kind = case % 7;
        let files = 2 + rng.below(2) as usize;
        let benches = 1 + rng.below(4) as usize;
        let mut names = Vec::new();
        for f in 0..files {
            let mut text =
                String::from("goos: linux\ngoarch: amd64\npkg: example.com/x\ncpu: Test CPU\n");
            for b in 0..benches {
                let n = match kind {
                    0 => 1,
                    1 => 3,
                    _ => 1 + rng.below(14) as usize,
                };
                let center = match kind {
                    5 => 4.0e15,
                    _ => 1000.0 * (b as f64 + 1.0),
                };
                let shift = if rng.below(2) == 0 {
                    1.0
                } else {
                    1.0 + 0.2 * rng.normal()
                };
                for _ in 0..n {
                    let ns = match kind {
                        2 => (center + rng.below(3) as f64).round(),
                        3 => center,
                        _ => (center * shift * (1.0 + 0.05 * rng.normal())).abs().round() + 1.0,
                    };
                    let custom = match kind {
                        4 => -(10.0 + rng.below(5) as f64),
                        _ => 5.0 + rng.below(3) as f64,
                    };
                    text.push_str(&format!(
                        "BenchmarkB{b}-2   \t{}\t{} ns/op\t{} B/op\t{} x/op\n",
                        1000,
                        ns,
                        64 * (b + 1),
                        custom
                    ));
                }
            }
            text.push_str("PASS\nok  \texample.com/x\t1.0s\n");
            let name = format!("c{case}f{f}.txt");
            std::fs::write(dir.join(&name), text).unwrap();
            names.push(name);
        }
        let (want, code) = run(&benchstat, &names, &dir);
        assert_eq!(code, 0, "benchstat failed on case {case}");
        let mut rargs: Vec<String> = vec!["compare".into(), "--style".into(), "benchstat".into()];
        rargs.extend(names.iter().cloned());
        let (got, rcode) = run(&resplab, &rargs, &dir);
        assert_eq!(rcode, 0, "resplab failed on case {case}\n{got}");
        assert_eq!(got, want, "case {case}: benchstat {}", names.join(" "));
        // The CSV prints every number in full, the geomean summaries included.
        let mut bargs: Vec<String> = vec!["-format".into(), "csv".into()];
        bargs.extend(names.iter().cloned());
        let (want_csv, code) = run(&benchstat, &bargs, &dir);
        assert_eq!(code, 0, "benchstat -format csv failed on case {case}");
        rargs.extend(["--format".to_string(), "csv".to_string()]);
        let (got_csv, rcode) = run(&resplab, &rargs, &dir);
        assert_eq!(rcode, 0, "resplab --format csv failed on case {case}");
        assert_eq!(
            got_csv,
            want_csv,
            "case {case}: benchstat -format csv {}",
            names.join(" ")
        );
        cases += 1;
    }
    assert!(cases >= 50);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Equal values keep their input order as in ministat (glibc's qsort is a stable merge
/// sort and its comparator makes -0.0 equal to 0.0): `0.0` before `-0.0` has minimum `0`,
/// the other way round `-0`.
#[test]
fn ministat_keeps_the_input_order_of_equal_values() {
    let _lane = crate::common::shared();
    let ministat = ministat();
    let resplab = PathBuf::from(env!("CARGO_BIN_EXE_resplab"));
    let dir = scratch("ministat-zero");
    std::fs::write(dir.join("a"), "0.0\n-0.0\n1\n2\n3\n").unwrap();
    std::fs::write(dir.join("b"), "-0.0\n0.0\n5\n6\n7\n").unwrap();
    std::fs::write(dir.join("c"), "4\n-0\n0\n-0\n8\n").unwrap();
    let files = ["a".to_string(), "b".to_string(), "c".to_string()];
    let (want, code) = run(&ministat, &files, &dir);
    assert_eq!(code, 0);
    let mut args = vec!["compare".to_string(), "--style".into(), "ministat".into()];
    args.extend(files.iter().cloned());
    let (got, rcode) = run(&resplab, &args, &dir);
    assert_eq!(rcode, 0, "{got}");
    assert_eq!(got, want);
    assert!(want.contains("x   5             0"), "{want}");
    let _ = std::fs::remove_dir_all(&dir);
}
