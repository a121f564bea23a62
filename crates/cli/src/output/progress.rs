//! The live progress line shown on a terminal while a run is measured.
//!
//! One line, rewritten in place with `\r` once a second: elapsed time, ops/s in the last
//! second and overall, p99 of the last second, errors. It is written to stderr and only
//! when stderr is a terminal, so redirected output never contains it.

use std::io::{IsTerminal, Write};

/// Writes progress lines when stderr is a terminal; does nothing otherwise.
#[derive(Debug)]
pub struct ProgressLine {
    enabled: bool,
    width: usize,
}

impl ProgressLine {
    /// A progress line that shows only on a terminal and when `wanted`.
    pub fn new(wanted: bool) -> Self {
        ProgressLine {
            enabled: wanted && std::io::stderr().is_terminal(),
            width: 0,
        }
    }

    /// Shows `text`, replacing the previous line.
    pub fn show(&mut self, text: &str) {
        if !self.enabled {
            return;
        }
        let pad = self.width.saturating_sub(text.len());
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{text}{:pad$}", "");
        let _ = err.flush();
        self.width = text.len();
    }

    /// Erases the line, before the final results are printed.
    pub fn clear(&mut self) {
        if !self.enabled || self.width == 0 {
            return;
        }
        let mut err = std::io::stderr().lock();
        let _ = write!(err, "\r{:w$}\r", "", w = self.width);
        let _ = err.flush();
        self.width = 0;
    }
}
