//! T-SQL text building blocks: quoted identifiers, string literals, sizes and growth clauses.
//!
//! Every statement dbbench sends is built from these, so quoting is done in one place: names come
//! from the runner (`dbbench_…`) and paths from `DBBENCH_VOLUMES`, and either may hold a quote.

use crate::model::config::Growth;

/// `name` as a bracket-quoted identifier: `[a]]b]` for `a]b`.
pub fn ident(name: &str) -> String {
    format!("[{}]", name.replace(']', "]]"))
}

/// `text` as a Unicode string literal: `N'it''s'` for `it's`.
pub fn literal(text: &str) -> String {
    format!("N'{}'", text.replace('\'', "''"))
}

/// A byte count as a `SIZE`/`FILEGROWTH` value in whole KB, rounded up (`65536KB`).
///
/// KB rather than MB keeps scaled sizes exact: the scale rounds to 64 KiB extents, which are not
/// always whole megabytes.
pub fn kb(bytes: u64) -> String {
    format!("{}KB", bytes.div_ceil(1024))
}

/// The `FILEGROWTH = …` value for `growth`: `1024KB`, `10%`, or `0` for no growth.
pub fn filegrowth(growth: &Growth) -> String {
    match growth {
        Growth::Fixed(size) => kb(size.bytes),
        Growth::Percent(pct) => format!("{pct}%"),
        Growth::None => "0".to_string(),
    }
}

/// Megabytes for `DBCC SHRINKFILE`, which takes a whole number of MB: rounded up so a shrink
/// never goes below the original size.
pub fn whole_mb_from_pages(pages: u64) -> u64 {
    (pages * crate::model::units::PAGE).div_ceil(crate::model::units::MIB)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::config::Size;

    #[test]
    fn quotes_names_and_text() {
        assert_eq!(ident("dbbench_a"), "[dbbench_a]");
        assert_eq!(ident("a]b"), "[a]]b]");
        assert_eq!(literal("C:\\it's"), "N'C:\\it''s'");
    }

    #[test]
    fn formats_sizes_and_growth() {
        assert_eq!(kb(64 * 1024), "64KB");
        assert_eq!(kb(1), "1KB");
        assert_eq!(
            filegrowth(&Growth::Fixed(Size::new(1 << 20, "1MB"))),
            "1024KB"
        );
        assert_eq!(filegrowth(&Growth::Percent(10)), "10%");
        assert_eq!(filegrowth(&Growth::None), "0");
        assert_eq!(whole_mb_from_pages(128), 1);
        assert_eq!(whole_mb_from_pages(129), 2);
    }
}
