//! The LaTeX exporter: a [`Table`] as a `booktabs` table (`\toprule`, `\midrule`,
//! `\bottomrule`), ready to paste into a paper that loads the `booktabs` package.

use super::table::Table;

/// Escape LaTeX's special characters, and write the Unicode symbols the harness prints
/// (Δ, τ, φ, ρ, ², ×, ≤, …) in math mode so that pdflatex needs no extra package. Line
/// ends (LF, and a lone CR, at which TeX ends a line too) and every other control
/// character become spaces, so escaped text never starts a new line: it is safe after a
/// `%` as well.
///
/// ```
/// use harness::export::latex::escape;
/// assert_eq!(escape("a\rb\n\\input{x}"), "a b \\textbackslash{}input\\{x\\}");
/// ```
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => out.push(' '),
            'Δ' => out.push_str("$\\Delta$"),
            'τ' => out.push_str("$\\tau$"),
            'φ' => out.push_str("$\\varphi$"),
            'ρ' => out.push_str("$\\rho$"),
            'ν' => out.push_str("$\\nu$"),
            'µ' | 'μ' => out.push_str("$\\mu$"),
            '²' => out.push_str("$^2$"),
            '×' => out.push_str("$\\times$"),
            '≤' => out.push_str("$\\le$"),
            '≥' => out.push_str("$\\ge$"),
            '±' => out.push_str("$\\pm$"),
            '−' => out.push('-'),
            '…' => out.push_str("\\dots{}"),
            '–' => out.push_str("--"),
            '—' => out.push_str("---"),
            _ => out.push(c),
        }
    }
    out
}

/// Whether a cell reads as a number (right-aligned).
fn numeric(cell: &str) -> bool {
    cell.trim_start_matches(['-', '+', '−'])
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit())
}

/// The table as a `table` environment with `caption`, columns right-aligned where every
/// row's cell is a number, else left-aligned.
///
/// ```
/// use harness::export::{latex::table_to_latex, Table};
/// let mut t = Table::new(["case", "error %"]);
/// t.row(["sor_rb", "9.8"]);
/// let tex = table_to_latex(&t, "Errors");
/// assert!(tex.contains("\\begin{tabular}{lr}"));
/// assert!(tex.contains("sor\\_rb & 9.8 \\\\"));
/// assert!(tex.contains("\\caption{Errors}"));
/// ```
pub fn table_to_latex(table: &Table, caption: &str) -> String {
    let cols = table.header().len();
    let spec: String = (0..cols)
        .map(|i| {
            let all_numbers = !table.rows().is_empty()
                && table
                    .rows()
                    .iter()
                    .all(|r| r.get(i).is_some_and(|c| c.is_empty() || numeric(c)));
            if all_numbers {
                'r'
            } else {
                'l'
            }
        })
        .collect();
    let line = |cells: &[String]| {
        let parts: Vec<String> = (0..cols)
            .map(|i| escape(cells.get(i).map_or("", String::as_str)))
            .collect();
        format!("{} \\\\\n", parts.join(" & "))
    };
    let mut out = format!(
        "\\begin{{table}}\n\\centering\n\\caption{{{}}}\n\\begin{{tabular}}{{{spec}}}\n\\toprule\n",
        escape(caption)
    );
    out.push_str(&line(table.header()));
    out.push_str("\\midrule\n");
    for row in table.rows() {
        out.push_str(&line(row));
    }
    out.push_str("\\bottomrule\n\\end{tabular}\n\\end{table}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_field_reaches_a_live_line() {
        for evil in [
            "GPU\n\\input{/etc/passwd}",
            "GPU\r\\immediate\\write18{id}",
            "GPU\r\n\\input{x}",
            "GPU\u{b}\u{c}\u{1b}[31m",
        ] {
            let e = escape(evil);
            assert!(!e.contains(['\n', '\r']), "{e:?}");
            assert!(!e.chars().any(char::is_control), "{e:?}");
            assert!(
                !e.contains("\\input{") && !e.contains("\\immediate"),
                "{e:?}"
            );
        }
        let mut t = Table::new(["a\rb"]);
        t.row(["x\r\\input{y}"]);
        let tex = table_to_latex(&t, "cap\r\\input{z}");
        assert!(!tex.contains('\r'), "{tex:?}");
        assert!(!tex.contains("\\input{"), "{tex:?}");
    }
}
