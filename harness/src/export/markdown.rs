//! The Markdown exporter: a [`Table`] as a GitHub-flavoured pipe table, for a README or a
//! paper's notes.

use super::table::Table;

/// Escape the characters that would break a pipe-table cell.
fn cell(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace('\n', " ")
}

/// The table in Markdown: header, a `---` rule, then the rows.
///
/// ```
/// use harness::export::{markdown::table_to_markdown, Table};
/// let mut t = Table::new(["a", "b"]);
/// t.row(["1", "x|y"]);
/// assert_eq!(table_to_markdown(&t), "| a | b |\n| --- | --- |\n| 1 | x\\|y |\n");
/// ```
pub fn table_to_markdown(table: &Table) -> String {
    let cols = table.header().len();
    let line = |cells: &[String]| {
        let parts: Vec<String> = (0..cols)
            .map(|i| cell(cells.get(i).map_or("", String::as_str)))
            .collect();
        format!("| {} |\n", parts.join(" | "))
    };
    let mut out = line(table.header());
    out.push_str(&format!("|{}\n", " --- |".repeat(cols)));
    for row in table.rows() {
        out.push_str(&line(row));
    }
    out
}
