//! Opens the HTML report of the fixture experiment in a real headless Chromium and checks
//! that it loads without console errors, that every plot has drawn content, and that no
//! request leaves the page. Saves desktop and phone screenshots as test artifacts (the
//! paths are printed).
//!
//! Chromium is found at `$RESPLAB_CHROMIUM` or `/usr/bin/chromium`; when it is missing the
//! test fails with the command that installs it.

use resplab_report::doc;
use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> PathBuf {
    let p = std::env::var_os("RESPLAB_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        p.exists(),
        "headless Chromium not found at {}: install it with `apt-get install -y chromium` \
         (or set RESPLAB_CHROMIUM to its path)",
        p.display()
    );
    p
}

/// Runs Chromium headless with networking disabled and a fresh profile.
fn headless(profile: &Path, extra: &[&str], page: &Path) -> (String, String) {
    let out = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            // No network at all: every host name fails to resolve and any connection
            // would go to a proxy on the discard port, which nothing listens on.
            "--host-resolver-rules=MAP * ~NOTFOUND",
            "--proxy-server=127.0.0.1:9",
            "--disable-component-update",
            "--disable-sync",
            "--disable-default-apps",
            "--disable-extensions",
            "--no-first-run",
            "--no-default-browser-check",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium starts");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Probe run after load: per plot, the number of drawn shapes and the rendered size;
/// plus resource requests, CSP violations and error events seen by the page.
const PROBE: &str = r#"<script>
var probe = {violations: [], errors: []};
document.addEventListener('securitypolicyviolation', function (e) {
  probe.violations.push(e.violatedDirective + ' ' + e.blockedURI);
});
window.addEventListener('error', function (e) {
  probe.errors.push(String(e.message || (e.target && (e.target.src || e.target.href)) || 'error'));
}, true);
window.addEventListener('load', function () {
  var plots = [];
  document.querySelectorAll('.plot svg').forEach(function (svg) {
    var r = svg.getBoundingClientRect();
    var b = svg.getBBox();
    plots.push({
      shapes: svg.querySelectorAll('path, polyline, polygon, circle, rect, line').length,
      texts: svg.querySelectorAll('text').length,
      width: Math.round(r.width), height: Math.round(r.height),
      bbox: Math.round(b.width) + 'x' + Math.round(b.height)
    });
  });
  var out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = 'PROBE' + JSON.stringify({
    plots: plots,
    resources: performance.getEntriesByType('resource').map(function (e) { return e.name; }),
    violations: probe.violations, errors: probe.errors
  }) + 'END';
  document.body.appendChild(out);
});
</script>"#;

fn probe_value(dom: &str) -> serde_json::Value {
    let start = dom.find("PROBE{").expect("the probe ran") + 5;
    let end = dom[start..].find("}END").expect("probe end") + start + 1;
    let text = dom[start..end]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&text).expect("probe JSON")
}

fn console_errors(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("CONSOLE") || l.contains("Refused to") || l.contains("Uncaught"))
        .collect()
}

#[test]
fn html_report_loads_draws_every_plot_and_stays_offline() {
    let html = doc::html::render(&doc::build(&crate::report_fixture::input()).unwrap());
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("report_browser");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let page = dir.join("fixture-report.html");
    std::fs::write(&page, &html).unwrap();

    // The probe copy: same page, with a script allowed by its CSP (the report itself has
    // none and allows none). Every other resource type stays blocked by default-src.
    let probed = html
        .replace(
            "default-src 'none'; style-src 'unsafe-inline'",
            "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'",
        )
        .replacen(
            "<meta charset=\"utf-8\">",
            &format!("<meta charset=\"utf-8\">\n{PROBE}"),
            1,
        );
    let probe_page = dir.join("fixture-report-probe.html");
    std::fs::write(&probe_page, probed).unwrap();

    let profile = tempfile::tempdir().unwrap();
    let (dom, stderr) = headless(profile.path(), &["--dump-dom"], &probe_page);
    let probe = probe_value(&dom);
    let plots = probe["plots"].as_array().expect("plots");
    assert_eq!(plots.len(), 11, "every plot is in the page: {probe}");
    for (i, p) in plots.iter().enumerate() {
        assert!(
            p["shapes"].as_u64().unwrap_or(0) >= 10,
            "plot {i} has drawn shapes: {p}"
        );
        assert!(
            p["texts"].as_u64().unwrap_or(0) >= 4,
            "plot {i} has labels: {p}"
        );
        assert!(
            p["width"].as_u64().unwrap_or(0) >= 300,
            "plot {i} is rendered wide: {p}"
        );
        assert!(
            p["height"].as_u64().unwrap_or(0) >= 150,
            "plot {i} is rendered tall: {p}"
        );
    }
    assert_eq!(
        probe["resources"].as_array().map(Vec::len),
        Some(0),
        "no request: {probe}"
    );
    assert_eq!(
        probe["violations"].as_array().map(Vec::len),
        Some(0),
        "no CSP violation: {probe}"
    );
    assert_eq!(
        probe["errors"].as_array().map(Vec::len),
        Some(0),
        "no error event: {probe}"
    );
    let errs = console_errors(&stderr);
    assert!(errs.is_empty(), "console messages: {errs:?}");

    // The report as written, without the probe: no console output either.
    let profile = tempfile::tempdir().unwrap();
    let desktop = dir.join("fixture-report-desktop.png");
    let (_, stderr) = headless(
        profile.path(),
        &[
            &format!("--screenshot={}", desktop.display()),
            "--window-size=1100,4200",
        ],
        &page,
    );
    let errs = console_errors(&stderr);
    assert!(errs.is_empty(), "console messages: {errs:?}");
    let profile = tempfile::tempdir().unwrap();
    let phone = dir.join("fixture-report-phone.png");
    headless(
        profile.path(),
        &[
            &format!("--screenshot={}", phone.display()),
            "--window-size=390,3000",
        ],
        &page,
    );
    for shot in [&desktop, &phone] {
        let len = std::fs::metadata(shot).map(|m| m.len()).unwrap_or(0);
        assert!(
            len > 20_000,
            "screenshot {} was written ({len} bytes)",
            shot.display()
        );
        println!("screenshot: {}", shot.display());
    }
}
