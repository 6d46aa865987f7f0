//! The CSV exporter: a [`Table`] as comma-separated values, one header line.

use super::table::Table;

/// Quote a CSV field when it holds a comma, a quote or a newline.
///
/// ```
/// use harness::export::csv::csv_field;
/// assert_eq!(csv_field("sweep"), "sweep");
/// assert_eq!(csv_field("model, a"), "\"model, a\"");
/// ```
pub fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// The table as CSV text: the header, then every row, each field quoted where it must be.
pub fn table_to_csv(table: &Table) -> String {
    let line = |cells: &[String]| {
        let fields: Vec<String> = cells.iter().map(|c| csv_field(c)).collect();
        fields.join(",") + "\n"
    };
    let mut out = line(table.header());
    for row in table.rows() {
        out.push_str(&line(row));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_needs_it() {
        let mut t = Table::new(["size", "phase"]);
        t.row(["64", "a,b"]);
        t.row(["128", "say \"hi\""]);
        assert_eq!(
            table_to_csv(&t),
            "size,phase\n64,\"a,b\"\n128,\"say \"\"hi\"\"\"\n"
        );
    }
}
