//! `resplab report`: an experiment (or any inputs `compare` reads) as a document a reader
//! can trust at a glance — Markdown with SVG files beside it, or one self-contained HTML
//! file.
//!
//! The work is split in three, so the two formats cannot drift apart:
//!
//! 1. [`input`] — what the caller hands over: the observations `compare` would read, the
//!    trials of each workload in run order with their run records where there are any
//!    (histograms, per-second series, provenance), and the experiment's own facts. The
//!    caller (the CLI) reads the store or the files; nothing here touches the disk.
//! 2. [`build`] — turns that into a [`Document`]: a summary of every workload's verdict,
//!    then per workload the verdict table of `compare` (computed by
//!    [`crate::resplab::compare`], the same rule and numbers as `resplab compare`), the
//!    plots of [`crate::plot`], and at the end the provenance.
//! 3. [`markdown`] and [`html`] — render the same [`Document`]: Markdown links each plot
//!    as an SVG file written beside it; HTML inlines every SVG and its CSS in one file
//!    that needs no network, reads on a phone and prints.
//!
//! A document is deterministic: the same input gives the same bytes (no clock, no
//! randomness without the experiment's seed), so reports are snapshot-tested.

pub mod build;
pub mod html;
pub mod input;
pub mod markdown;

pub use build::build;
pub use input::{ProfileInput, ReportInput, TrialInput, WorkloadInput};

/// A report, ready to render.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    /// Title (first heading, HTML `<title>`).
    pub title: String,
    /// Variant names, baseline first; index = colour.
    pub variants: Vec<String>,
    /// The content, in reading order.
    pub blocks: Vec<Block>,
}

/// One table cell.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Cell {
    /// The text.
    pub text: String,
    /// When set, the cell names this variant and HTML shows its colour beside it.
    pub variant: Option<usize>,
    /// Emphasised (verdicts).
    pub strong: bool,
}

impl Cell {
    /// A plain cell.
    pub fn text(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            ..Cell::default()
        }
    }

    /// A cell naming variant `index`.
    pub fn variant(text: impl Into<String>, index: usize) -> Cell {
        Cell {
            text: text.into(),
            variant: Some(index),
            strong: false,
        }
    }

    /// An emphasised cell.
    pub fn strong(text: impl Into<String>) -> Cell {
        Cell {
            text: text.into(),
            variant: None,
            strong: true,
        }
    }
}

/// A part of the document.
#[derive(Clone, Debug, PartialEq)]
pub enum Block {
    /// A heading; `level` 2 for sections, 3 for their parts. `id` is a stable anchor.
    Heading { level: u8, text: String, id: String },
    /// A paragraph of plain text.
    Paragraph(String),
    /// A bulleted list of plain text items.
    List(Vec<String>),
    /// A table; `numeric[i]` right-aligns column i.
    Table {
        header: Vec<String>,
        numeric: Vec<bool>,
        rows: Vec<Vec<Cell>>,
    },
    /// A plot: `file` is the stem of its SVG file in Markdown output.
    Plot {
        file: String,
        title: String,
        caption: String,
        svg: String,
    },
    /// A flame graph drawn by inferno: `svg` is its whole file (interactive on its own,
    /// as Markdown links it); HTML inlines it without script ([`crate::profile::inline_svg`]).
    Flame {
        file: String,
        title: String,
        caption: String,
        svg: String,
    },
    /// Preformatted text (configuration, the experiment file).
    Code { lang: String, text: String },
}
