//! A cell's configuration in the words a DBA uses ("1MB growth · IFI off · log 400MB"), built from
//! the options that differ between a benchmark's cells.
//!
//! Tables, charts and snapshots label cells with it instead of one column per option: most
//! options are the same in every cell (or unset), and a column each pushed the article's headline
//! metrics off a 1400 px page.

use crate::model::results::{BenchmarkResult, CellResult};

/// Separator between the options of one label.
pub const SEPARATOR: &str = " · ";

/// Options whose value is not the same in every cell, in the order [`readable`] lists them.
pub fn differing_options(result: &BenchmarkResult) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for cell in &result.cells {
        for key in cell.config.keys() {
            if !keys.contains(key) {
                keys.push(key.clone());
            }
        }
    }
    keys.retain(|key| {
        let mut values = result.cells.iter().map(|c| c.config.get(key));
        let first = values.next().flatten();
        values.any(|v| v != first)
    });
    // Growth first, as the article names its tests; unknown options keep their place at the end.
    keys.sort_by_key(|k| ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()));
    keys
}

/// The order options are named in a label.
const ORDER: &[&str] = &[
    "growth",
    "ifi",
    "data_size",
    "data_files",
    "log_size",
    "log_pregrow",
    "log_growth",
    "recovery",
    "maxdop",
    "tempdb_files",
    "tempdb_size",
    "tempdb_growth",
    "data_on",
    "log_on",
];

/// One option's value as a phrase: `1MB growth`, `IFI off`, `log 400MB`.
pub fn readable(key: &str, value: &str) -> String {
    match key {
        "growth" => format!("{value} growth"),
        "ifi" => match value {
            "true" => "IFI on".into(),
            "false" => "IFI off".into(),
            other => format!("IFI {other}"),
        },
        "data_size" => format!("data {value}"),
        "data_files" if value == "1" => "1 data file".into(),
        "data_files" => format!("{value} data files"),
        "log_size" => format!("log {value}"),
        "log_pregrow" => format!("log pre-grown in {value} steps"),
        "log_growth" => format!("log growth {value}"),
        "recovery" => format!("{} recovery", value.to_uppercase()),
        "maxdop" => format!("MAXDOP {value}"),
        "tempdb_files" => format!("{value} tempdb files"),
        "tempdb_size" => format!("tempdb {value}"),
        "tempdb_growth" => format!("tempdb growth {value}"),
        "data_on" => format!("data on {value}"),
        "log_on" => format!("log on {value}"),
        other => format!("{other} {value}"),
    }
}

/// `cell`'s label over `keys` (options the cell leaves unset are left out: they are the
/// backend's default, which the other cells' labels imply). Empty for a cell that sets none of
/// them: tables say `defaults` there, charts give the cell's name alone.
pub fn label(cell: &CellResult, keys: &[String]) -> String {
    let parts: Vec<String> = keys
        .iter()
        .filter_map(|k| cell.config.get(k).map(|v| readable(k, v)))
        .collect();
    parts.join(SEPARATOR)
}

/// Every cell's label, in the cells' order.
pub fn labels(result: &BenchmarkResult) -> Vec<(String, String)> {
    let keys = differing_options(result);
    result
        .cells
        .iter()
        .map(|c| (c.name.clone(), label(c, &keys)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vlf_cells_read_as_the_article_names_them() {
        let result = crate::model::sample::vlf();
        let labels = labels(&result);
        assert_eq!(labels[0].1, "1MB growth · IFI off · log growth 1MB");
        assert_eq!(
            labels[2].1,
            "1024MB growth · IFI on · log pre-grown in 4000MB steps · log growth 1024MB"
        );
    }

    #[test]
    fn options_equal_in_every_cell_are_left_out() {
        let mut result = crate::model::sample::vlf();
        for cell in &mut result.cells {
            cell.config.insert("recovery".into(), "full".into());
        }
        assert!(!differing_options(&result).contains(&"recovery".to_string()));
        result.cells[1]
            .config
            .insert("recovery".into(), "simple".into());
        assert!(labels(&result)[1].1.contains("SIMPLE recovery"));
    }

    #[test]
    fn a_cell_without_differing_options_has_an_empty_label() {
        let mut result = crate::model::sample::vlf();
        result.cells.truncate(1);
        assert_eq!(labels(&result)[0].1, "");
        let result = crate::model::sample::load(&[1.0, 2.0]);
        assert_eq!(labels(&result)[0].1, "");
        assert_eq!(labels(&result)[1].1, "data on data · log on log");
    }
}
