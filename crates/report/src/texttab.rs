//! A small fixed-width table layout engine with benchstat's rules, so that
//! `--style benchstat` lines up exactly like benchstat's text tables.
//!
//! Cells sit on a grid of columns; a cell may span several columns, carries a left margin
//! (default one space, none in column 0 or for an empty cell) and an alignment. Layout:
//! - each column's margin width is the widest margin of any cell in it;
//! - single-column cells widen their column to fit (margin included); cells spanning
//!   several columns, taken in order of increasing span, widen the non-"shrink" columns
//!   they cover, spreading the missing width evenly (widest columns first, rounding up);
//! - printing skips cells whose value and margin are both blank, writes each margin
//!   right-aligned in its column's margin width, and pads values by alignment (left
//!   values get no trailing padding, so no line ends in spaces).
//!
//! Widths count Unicode scalar values (`µ`, `±`, `│` are one column each).

/// Horizontal alignment of a cell's value within its width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Center,
    Right,
}

#[derive(Clone, Debug)]
struct Cell {
    row: usize,
    col: usize,
    span: usize,
    value: String,
    margin: String,
    align: Align,
}

/// A table being built row by row.
#[derive(Clone, Debug, Default)]
pub struct TextTable {
    cells: Vec<Cell>,
    cols: usize,
    shrink: Vec<bool>,
    cur_row: usize,
    cur_col: usize,
}

fn width(s: &str) -> usize {
    s.chars().count()
}

impl TextTable {
    /// Starts a new row (the first call starts row 0).
    pub fn row(&mut self) -> &mut Self {
        if !self.cells.is_empty() {
            self.cur_row += 1;
        }
        self.cur_col = 0;
        self
    }

    /// Moves to column `col` (never backwards).
    pub fn col(&mut self, col: usize) -> &mut Self {
        self.cur_col = self.cur_col.max(col);
        self
    }

    /// The current column.
    pub fn cur_col(&self) -> usize {
        self.cur_col
    }

    /// Adds a one-column cell.
    pub fn cell(&mut self, value: &str, align: Align, margin: Option<&str>) -> &mut Self {
        self.span(1, value, align, margin)
    }

    /// Adds a cell spanning `cols` columns. `margin` replaces the default left margin.
    pub fn span(
        &mut self,
        cols: usize,
        value: &str,
        align: Align,
        margin: Option<&str>,
    ) -> &mut Self {
        let default = if self.cur_col == 0 || value.is_empty() {
            ""
        } else {
            " "
        };
        self.cells.push(Cell {
            row: self.cur_row,
            col: self.cur_col,
            span: cols.max(1),
            value: value.to_string(),
            margin: margin.unwrap_or(default).to_string(),
            align,
        });
        self.cur_col += cols.max(1);
        self.cols = self.cols.max(self.cur_col);
        self
    }

    /// Marks column `col` as one that spanning cells may not widen.
    pub fn set_shrink(&mut self, col: usize) {
        if self.shrink.len() <= col {
            self.shrink.resize(col + 1, false);
        }
        self.shrink[col] = true;
    }

    fn is_shrink(&self, col: usize) -> bool {
        self.shrink.get(col).copied().unwrap_or(false)
    }

    /// Lays the table out and returns its text (each row ends in `\n`).
    pub fn format(&self) -> String {
        let lmargin = self.left_margins();
        let ws = self.column_widths(&lmargin);
        let mut offs = vec![0usize; self.cols + 1];
        let mut off = 0;
        for (i, w) in ws.iter().enumerate() {
            offs[i] = off;
            off += w;
        }
        offs[self.cols] = off;
        self.write_cells(&lmargin, &offs)
    }

    /// Each column's left margin: the widest margin of a cell that starts in it.
    fn left_margins(&self) -> Vec<usize> {
        let mut lmargin = vec![0usize; self.cols];
        for c in &self.cells {
            lmargin[c.col] = lmargin[c.col].max(width(&c.margin));
        }
        lmargin
    }

    /// Each column's width: single cells first, then each spanning cell (narrow spans
    /// first) widens the columns it covers when they are too narrow for it.
    fn column_widths(&self, lmargin: &[usize]) -> Vec<usize> {
        let mut ws = vec![0usize; self.cols];
        let mut by_span: Vec<&Cell> = self.cells.iter().collect();
        by_span.sort_by_key(|c| c.span);
        for c in by_span {
            let w = width(&c.value) + lmargin[c.col];
            if c.span == 1 {
                ws[c.col] = ws[c.col].max(w);
            } else {
                self.widen_for_span(&mut ws, c, w);
            }
        }
        ws
    }

    /// Shares the width `w` that spanning cell `c` needs among the columns it covers that
    /// may grow, the widest first, as evenly as whole characters allow.
    fn widen_for_span(&self, ws: &mut [usize], c: &Cell, w: usize) {
        let range = c.col..(c.col + c.span).min(self.cols);
        let total: usize = ws[range.clone()].iter().sum();
        if total >= w {
            return;
        }
        let mut grow: Vec<usize> = Vec::new();
        let mut need = w as isize;
        for col in range {
            if self.is_shrink(col) {
                need -= ws[col] as isize;
            } else {
                grow.push(col);
            }
        }
        grow.sort_by(|a, b| ws[*b].cmp(&ws[*a]));
        let mut left = grow.len() as isize;
        for col in grow {
            let avg = if left > 0 {
                (need + left - 1).div_euclid(left)
            } else {
                0
            };
            if avg > ws[col] as isize {
                ws[col] = avg as usize;
            }
            need -= ws[col] as isize;
            left -= 1;
        }
    }

    /// The text: cells in row order, each at its column's offset after its margin and
    /// aligned within its span; cells with nothing to show are skipped.
    fn write_cells(&self, lmargin: &[usize], offs: &[usize]) -> String {
        let mut cells: Vec<&Cell> = self.cells.iter().collect();
        cells.sort_by_key(|c| (c.row, c.col));
        let mut out = String::new();
        let (mut row, mut off) = (0usize, 0usize);
        for c in &cells {
            if c.value.trim().is_empty() && c.margin.trim().is_empty() {
                continue;
            }
            while c.row > row {
                out.push('\n');
                row += 1;
                off = 0;
            }
            let spaces = offs[c.col].saturating_sub(off);
            out.push_str(&" ".repeat(spaces));
            let m = lmargin[c.col];
            out.push_str(&" ".repeat(m.saturating_sub(width(&c.margin))));
            out.push_str(&c.margin);
            off += spaces + m.max(width(&c.margin));
            let end = (c.col + c.span).min(self.cols);
            let tw = offs[end].saturating_sub(offs[c.col] + m);
            let vw = width(&c.value);
            let padded = match c.align {
                Align::Left => c.value.clone(),
                Align::Center => format!("{}{}", " ".repeat(tw.saturating_sub(vw) / 2), c.value),
                Align::Right => format!("{}{}", " ".repeat(tw.saturating_sub(vw)), c.value),
            };
            off += width(&padded);
            out.push_str(&padded);
        }
        if !cells.is_empty() {
            out.push('\n');
        }
        out
    }
}
