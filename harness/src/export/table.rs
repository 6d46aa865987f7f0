//! A table of text cells: the data model of the CSV and Markdown exporters, and its aligned
//! rendering for the terminal.

/// Columns of text, right-aligned numbers and left-aligned words.
#[derive(Debug, Default, Clone)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column titles.
    pub fn new<S: Into<String>>(header: impl IntoIterator<Item = S>) -> Self {
        Table {
            header: header.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    /// Append a row (missing cells print empty).
    pub fn row<S: Into<String>>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(cells.into_iter().map(Into::into).collect());
    }

    /// The column titles.
    pub fn header(&self) -> &[String] {
        &self.header
    }

    /// The rows, in the order they were added.
    pub fn rows(&self) -> &[Vec<String>] {
        &self.rows
    }

    /// Render with two spaces between columns (the terminal's form). A cell longer than
    /// [`MAX_CELL_CHARS`] is cut for display with a note of its length (the CSV and Markdown
    /// exporters keep it whole).
    pub fn render(&self) -> String {
        let cols = self.header.len();
        let shorten =
            |cells: &[String]| -> Vec<String> { cells.iter().map(|c| display(c)).collect() };
        let header = shorten(&self.header);
        let rows: Vec<Vec<String>> = self.rows.iter().map(|r| shorten(r)).collect();
        let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
        for row in &rows {
            for (i, cell) in row.iter().enumerate().take(cols) {
                widths[i] = widths[i].max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let line = |cells: &[String], out: &mut String| {
            let mut parts = Vec::with_capacity(cols);
            for (i, w) in widths.iter().enumerate() {
                let cell = cells.get(i).map_or("", String::as_str);
                let numeric = cell
                    .trim_start_matches(['-', '+'])
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_digit());
                parts.push(if numeric {
                    format!("{cell:>w$}")
                } else {
                    format!("{cell:<w$}")
                });
            }
            out.push_str(parts.join("  ").trim_end());
            out.push('\n');
        };
        line(&header, &mut out);
        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
        out.push_str(&rule.join("  "));
        out.push('\n');
        for row in &rows {
            line(row, &mut out);
        }
        out
    }
}

/// The most characters a cell shows in a rendered table.
pub const MAX_CELL_CHARS: usize = 200;

/// `cell` as a rendered table shows it: whole, or its first characters and its length.
fn display(cell: &str) -> String {
    // A control character (an escape sequence in a device or spec name) would drive the
    // terminal, and a line break would break the table: shown as `?`.
    let cell = &terminal_safe(cell);
    let count = cell.chars().count();
    if count <= MAX_CELL_CHARS {
        return cell.to_string();
    }
    let head: String = cell.chars().take(MAX_CELL_CHARS - 40).collect();
    format!("{head}… ({count} characters)")
}

/// `text` with every control character (ESC, CR, LF, BEL, …) shown as `?`, so that text
/// from a file or a device cannot move the cursor, recolour or clear a terminal.
///
/// ```
/// use harness::export::table::terminal_safe;
/// assert_eq!(terminal_safe("GPU\u{1b}[2J\r\nx"), "GPU?[2J??x");
/// ```
pub fn terminal_safe(text: &str) -> String {
    if !text.contains(|c: char| c.is_control()) {
        return text.to_string();
    }
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// A number with `digits` significant digits, in plain or scientific notation as fits.
pub fn sig(value: f64, digits: usize) -> String {
    if !value.is_finite() {
        return value.to_string();
    }
    if value == 0.0 {
        return "0".into();
    }
    let magnitude = value.abs().log10().floor() as i32;
    if !(-3..6).contains(&magnitude) {
        return format!("{value:.prec$e}", prec = digits.saturating_sub(1));
    }
    let decimals = (digits as i32 - 1 - magnitude).max(0) as usize;
    format!("{value:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_escape_sequence_reaches_the_terminal() {
        let mut t = Table::new(["device"]);
        t.row(["GPU\u{1b}]0;owned\u{7}\u{1b}[2J\r\nnext"]);
        let text = t.render();
        assert!(!text.contains('\u{1b}') && !text.contains('\u{7}') && !text.contains('\r'));
        assert_eq!(text.lines().count(), 3, "{text:?}");
    }

    #[test]
    fn a_huge_cell_is_cut_for_display_not_a_panic() {
        let mut t = Table::new(["name", "value"]);
        let label = "x".repeat(70_000);
        t.row([label.as_str(), "1"]);
        let text = t.render();
        assert!(text.contains("… (70000 characters)"));
        assert!(text.lines().all(|l| l.chars().count() < 400));
        // The table's data keeps it whole.
        assert_eq!(t.rows()[0][0].len(), 70_000);
    }

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(["name", "value"]);
        t.row(["a", "1.5"]);
        t.row(["long name", "10"]);
        let text = t.render();
        assert_eq!(
            text,
            "name       value\n---------  -----\na            1.5\nlong name     10\n"
        );
    }

    #[test]
    fn significant_digits() {
        assert_eq!(sig(340.123, 3), "340");
        assert_eq!(sig(1.23456, 3), "1.23");
        assert_eq!(sig(0.0013, 3), "0.00130");
        assert_eq!(sig(0.00013, 3), "1.30e-4");
        assert_eq!(sig(2.5e9, 3), "2.50e9");
    }
}
