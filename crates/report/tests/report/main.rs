//! resplab-report's integration tests, one test binary: the report document (insta
//! snapshots in `snapshots/`), the HTML in a real headless Chromium, and the ministat and
//! benchstat renderers against the real tools' outputs; `report_fixture` is the seeded
//! experiment they share.

mod report_fixture;

mod fixtures_exact;
mod report_browser;
mod report_doc;
