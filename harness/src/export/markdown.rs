//! The Markdown exporter: a [`Table`] as a GitHub-flavoured pipe table, for a README or a
//! paper's notes.

use super::table::Table;

/// Text for one line of Markdown (a heading, a cell): no HTML (`<`, `>` as entities, so no
/// `<script>` or `<img onerror>` reaches a renderer), no line break or other control
/// character (a space), backslashes kept literal.
///
/// ```
/// use harness::export::markdown::inline;
/// assert_eq!(inline("<img src=x onerror=alert(1)>\n# x"), "&lt;img src=x onerror=alert(1)&gt; # x");
/// ```
pub fn inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Escape the characters that would break a pipe-table cell (and any HTML, as [`inline`]).
fn cell(text: &str) -> String {
    inline(text).replace('|', "\\|")
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_html_or_line_break_gets_through() {
        let mut t = Table::new(["<script>alert(1)</script>"]);
        t.row(["<img src=x onerror=alert(1)>\r\n# heading"]);
        let md = table_to_markdown(&t);
        assert!(!md.contains('<') && !md.contains('>'), "{md}");
        assert_eq!(md.lines().count(), 3, "{md:?}");
        assert!(!md.contains('\r'), "{md:?}");
    }
}
