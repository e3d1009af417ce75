//! A table of text cells with a header row, rendered as aligned plain text for the terminal or as
//! an HTML `<table>` for the report. Numbers are right-aligned, words left-aligned.

use std::fmt::Write;

/// Horizontal alignment of a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Words.
    Left,
    /// Numbers.
    Right,
}

/// A header row and rows of text cells.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Grid {
    /// Column titles.
    pub headers: Vec<String>,
    /// Alignment per column.
    pub align: Vec<Align>,
    /// Rows; each has one cell per header.
    pub rows: Vec<Vec<String>>,
}

impl Grid {
    /// Adds a column; every row added later must have a cell for it.
    pub fn column(&mut self, title: impl Into<String>, align: Align) {
        self.headers.push(title.into());
        self.align.push(align);
    }

    /// Adds a row.
    pub fn row(&mut self, cells: Vec<String>) {
        debug_assert_eq!(cells.len(), self.headers.len(), "one cell per column");
        self.rows.push(cells);
    }

    /// The table as aligned text with a rule under the header; every line starts with `indent`.
    pub fn to_text(&self, indent: &str) -> String {
        let widths: Vec<usize> = (0..self.headers.len())
            .map(|c| {
                self.rows
                    .iter()
                    .map(|r| r[c].chars().count())
                    .chain(std::iter::once(self.headers[c].chars().count()))
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let line = |cells: &[String]| {
            let parts: Vec<String> = cells
                .iter()
                .enumerate()
                .map(|(c, text)| {
                    let pad = widths[c] - text.chars().count();
                    match self.align[c] {
                        Align::Left => format!("{text}{}", " ".repeat(pad)),
                        Align::Right => format!("{}{text}", " ".repeat(pad)),
                    }
                })
                .collect();
            format!("{indent}{}", parts.join("  ").trim_end())
        };
        let mut out = String::new();
        let _ = writeln!(out, "{}", line(&self.headers));
        let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
        let _ = writeln!(out, "{indent}{}", rule.join("  "));
        for row in &self.rows {
            let _ = writeln!(out, "{}", line(row));
        }
        out
    }

    /// The table as HTML, every cell escaped.
    pub fn to_html(&self) -> String {
        let mut out = String::from("<table>\n<thead><tr>");
        for (title, align) in self.headers.iter().zip(&self.align) {
            let _ = write!(
                out,
                "<th class=\"{}\">{}</th>",
                class(*align),
                escape(title)
            );
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for row in &self.rows {
            out.push_str("<tr>");
            for (text, align) in row.iter().zip(&self.align) {
                let _ = write!(out, "<td class=\"{}\">{}</td>", class(*align), escape(text));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
        out
    }
}

fn class(align: Align) -> &'static str {
    match align {
        Align::Left => "l",
        Align::Right => "r",
    }
}

/// Escapes `&`, `<`, `>` and quotes for HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Grid {
        let mut g = Grid::default();
        g.column("cell", Align::Left);
        g.column("elapsed", Align::Right);
        g.row(vec!["test_1".into(), "1074 s".into()]);
        g.row(vec!["t<2>".into(), "71 s".into()]);
        g
    }

    #[test]
    fn text_is_aligned_per_column() {
        let text = sample().to_text("  ");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "  cell    elapsed");
        assert_eq!(lines[1], "  ──────  ───────");
        assert_eq!(lines[2], "  test_1   1074 s");
        assert_eq!(lines[3], "  t<2>       71 s");
    }

    #[test]
    fn html_escapes_cells() {
        let html = sample().to_html();
        assert!(html.contains("<td class=\"l\">t&lt;2&gt;</td>"));
        assert!(html.contains("<th class=\"r\">elapsed</th>"));
        assert_eq!(html.matches("<tr>").count(), 3);
    }
}
