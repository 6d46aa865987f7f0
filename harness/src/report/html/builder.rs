//! An HTML page under construction ([`Builder`]): its body, its tables collected in Markdown
//! and LaTeX, the escaping of text and the page's style.

use std::fmt::Write as _;

use super::{InlineFigure, Page};
use crate::export::latex::table_to_latex;
use crate::export::markdown::table_to_markdown;
use crate::export::table::Table;

/// An HTML page under construction, collecting its tables.
pub(super) struct Builder {
    pub(super) body: String,
    markdown: String,
    latex: String,
    tables: usize,
}

impl Builder {
    pub(super) fn new() -> Self {
        Builder {
            body: String::new(),
            markdown: String::new(),
            latex: String::new(),
            tables: 0,
        }
    }

    pub(super) fn heading(&mut self, level: u8, id: &str, text: &str) {
        let _ = writeln!(
            self.body,
            "<h{level} id=\"{}\">{}</h{level}>",
            attr(id),
            esc(text)
        );
    }

    pub(super) fn para(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p>{}</p>", esc(text));
    }

    pub(super) fn missing(&mut self, text: &str) {
        let _ = writeln!(self.body, "<p class=\"missing\">{}</p>", esc(text));
    }

    pub(super) fn table(&mut self, caption: &str, table: &Table) {
        self.tables += 1;
        let _ = writeln!(
            self.body,
            "<div class=\"scroll\"><table><caption>{}</caption><thead><tr>",
            esc(caption)
        );
        for h in table.header() {
            let _ = write!(self.body, "<th>{}</th>", esc(h));
        }
        self.body.push_str("</tr></thead><tbody>\n");
        for row in table.rows() {
            self.body.push_str("<tr>");
            for i in 0..table.header().len() {
                let cell = row.get(i).map_or("", String::as_str);
                let class = if is_number(cell) { " class=\"n\"" } else { "" };
                let _ = write!(self.body, "<td{class}>{}</td>", esc(cell));
            }
            self.body.push_str("</tr>\n");
        }
        self.body.push_str("</tbody></table></div>\n");
        let _ = write!(
            self.markdown,
            "### {}\n\n{}\n",
            crate::export::markdown::inline(caption),
            table_to_markdown(table)
        );
        self.latex.push_str(&table_to_latex(table, caption));
        self.latex.push('\n');
    }

    pub(super) fn figure(&mut self, f: &InlineFigure<'_>) {
        let Some(svg) = &f.svg else { return };
        let sources: Vec<String> = f
            .planned
            .sources
            .iter()
            .map(|s| s.display().to_string())
            .collect();
        let _ = writeln!(
            self.body,
            "<figure id=\"{}\">{}<figcaption>{} <span class=\"src\">(from {})</span></figcaption></figure>",
            attr(&f.planned.stem.display().to_string()),
            svg_body(svg),
            esc(f.planned.drawing.title()),
            esc(&sources.join(", "))
        );
    }

    pub(super) fn finish(self, name: &str, title: &str, nav: &str) -> Page {
        let html = format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<nav>{nav}</nav>\n\
             <main>\n<h1>{}</h1>\n{}</main>\n</body>\n</html>\n",
            esc(title),
            esc(title),
            self.body
        );
        Page {
            name: name.to_string(),
            html,
            markdown: format!(
                "# {}\n\n{}",
                crate::export::markdown::inline(title),
                self.markdown
            ),
            latex: format!(
                "% {}: tables for a paper (\\usepackage{{booktabs}})\n\n{}",
                crate::export::latex::escape(title),
                self.latex
            ),
        }
    }
}

/// The page's look: readable without the network, no script; wide tables scroll inside
/// their box instead of widening the page.
const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;\
color:#111;background:#fff;line-height:1.45}nav{padding:.6em 1.2em;background:#f2f2f2;\
border-bottom:1px solid #ddd}nav a{margin-right:1em}main{max-width:1180px;margin:0 auto;\
padding:0 1.2em 3em}h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}\
figure{margin:1em 0;max-width:760px}figure svg{width:100%;height:auto;display:block}\
figcaption{font-size:.9em;color:#333}.src{color:#777;word-break:break-all}\
.scroll{overflow-x:auto;max-width:100%}table{border-collapse:collapse;margin:1em 0;\
font-size:.88em}caption{text-align:left;font-weight:600;padding-bottom:.3em}\
th,td{border-bottom:1px solid #ddd;padding:.25em .6em;text-align:left;vertical-align:top}\
td.n{text-align:right;font-variant-numeric:tabular-nums}thead th{border-bottom:2px solid #555}\
.missing{color:#8a4b00;background:#fff6e6;padding:.4em .7em;border-left:3px solid #e69f00}\
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(460px,1fr));gap:1em}\
.grid figure{max-width:none}details{margin:1em 0}summary{cursor:pointer;font-weight:600}\
code{background:#f4f4f4;padding:0 .25em}";

pub(super) fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

pub(super) fn attr(text: &str) -> String {
    esc(text).replace('"', "&quot;")
}

fn is_number(cell: &str) -> bool {
    cell.trim_start_matches(['-', '+', '−'])
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_digit())
}

/// The SVG element of a plotters document (it has no XML prolog, so it inlines as is), with
/// an accessible role.
fn svg_body(svg: &str) -> String {
    svg.replacen("<svg ", "<svg role=\"img\" ", 1)
}
