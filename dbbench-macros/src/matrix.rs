//! Cells: the configurations a benchmark runs in, and their names.
//!
//! Each list in `#[db_bench]` is an axis; the cells are the cartesian product of the axes with
//! the first-declared axis varying slowest, crossed with the cases (each case slowest of all).
//! Names are built from the options and values so that they are readable in test output and
//! stable when unrelated options change: `data_files_8__growth_1mb`, `test_3__data_files_8`.

use crate::case::Case;
use crate::errors::Errors;
use crate::options::{Axis, BenchOptions, Declared, Spanned};
use crate::setting::{Backend, Setting};
use crate::symbol::Key;
use proc_macro2::Span;
use std::collections::{BTreeMap, HashMap};

/// The name of the only cell of a benchmark without lists or cases.
pub const DEFAULT_CELL: &str = "default_config";

/// The most cells one benchmark may have. Each cell is a test that creates a database, so a
/// larger product is almost certainly an accident (three lists of 64 values).
pub const MAX_CELLS: usize = 1000;

/// One configuration of a benchmark.
#[derive(Debug, Clone)]
pub struct Cell {
    /// The cell's name, which is also its test's name.
    pub name: String,
    /// The storage options that are set, by option.
    pub settings: BTreeMap<Key, Setting>,
    /// The values this cell takes on each axis, in axis order (for naming conflicts).
    pub point: Vec<Setting>,
    /// The name of the `#[case]` the cell belongs to, if any.
    pub case: Option<String>,
    /// The backends the cell runs on, from its case; `None` means the benchmark's.
    pub backends: Option<Spanned<Vec<Backend>>>,
}

/// The cells of a benchmark, in order; duplicate names are reported.
pub fn cells(options: &BenchOptions, cases: &[Case], errors: &mut Errors) -> Vec<Cell> {
    let mut base = BTreeMap::new();
    let mut axes: Vec<&Axis> = Vec::new();
    for declared in &options.storage {
        match declared {
            Declared::One(setting) => {
                base.insert(setting.key, setting.clone());
            }
            Declared::Axis(axis) => axes.push(axis),
        }
    }

    let count = axes.iter().fold(cases.len().max(1), |n, axis| {
        n.saturating_mul(axis.values.len())
    });
    if count > MAX_CELLS {
        let message = format!(
            "this benchmark would have {count} cells, one test each; at most {MAX_CELLS} are allowed: shorten the lists or split the benchmark"
        );
        errors.error(
            axes.first().map_or_else(Span::call_site, |a| a.key_span),
            message,
        );
        return Vec::new();
    }

    let points = product(&axes);
    let mut cells = Vec::new();
    if cases.is_empty() {
        for point in points {
            let name = if axes.is_empty() {
                DEFAULT_CELL.to_string()
            } else {
                point_name(&point)
            };
            cells.push(cell(name, &base, point, None));
        }
    } else {
        for case in cases {
            for point in &points {
                let name = if axes.is_empty() {
                    case.name.value.clone()
                } else {
                    format!("{}__{}", case.name.value, point_name(point))
                };
                cells.push(cell(name, &base, point.clone(), Some(case)));
            }
        }
    }
    report_duplicates(&cells, errors);
    cells
}

/// Every combination of one value per axis, the first axis varying slowest.
fn product(axes: &[&Axis]) -> Vec<Vec<Setting>> {
    let mut points = vec![Vec::new()];
    for axis in axes {
        points = points
            .into_iter()
            .flat_map(|point| {
                axis.values.iter().map(move |value| {
                    let mut next = point.clone();
                    next.push(value.clone());
                    next
                })
            })
            .collect();
    }
    points
}

/// A cell's settings: `#[db_bench]`'s single values, then the axis values, then the case's,
/// less what the case leaves unset.
fn cell(
    name: String,
    base: &BTreeMap<Key, Setting>,
    point: Vec<Setting>,
    case: Option<&Case>,
) -> Cell {
    let mut settings = base.clone();
    let overrides = case.map_or(&[][..], |case| &case.storage);
    for setting in point.iter().chain(overrides) {
        settings.insert(setting.key, setting.clone());
    }
    // `without` leaves a `#[db_bench]` value unset in this case's cells (an axis it may not
    // remove, which `check` reports).
    for key in case.iter().flat_map(|case| &case.without) {
        if !point.iter().any(|s| s.key == key.value) {
            settings.remove(&key.value);
        }
    }
    Cell {
        name,
        settings,
        point,
        case: case.map(|case| case.name.value.clone()),
        backends: case.and_then(|case| case.backends.clone()),
    }
}

/// `data_files_8__growth_1mb`
fn point_name(point: &[Setting]) -> String {
    point
        .iter()
        .map(|setting| format!("{}_{}", setting.key, slug(&setting.value.name_text())))
        .collect::<Vec<_>>()
        .join("__")
}

/// A value as part of an identifier: lowercase, `%` → `pct`, anything else not `[a-z0-9_]`
/// → `_`. `"1MB"` → `1mb`, `"10%"` → `10pct`, `"fast,slow"` → `fast_slow`.
pub fn slug(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars().flat_map(char::to_lowercase) {
        match c {
            'a'..='z' | '0'..='9' | '_' => out.push(c),
            '%' => out.push_str("pct"),
            _ => out.push('_'),
        }
    }
    out
}

/// Reports cells whose names collide, at the value that makes the later one.
///
/// Case names are unique and axis values differ, so a collision means two values of one list
/// slug to the same text (`"1MB"` and `"1mb"`) or a value is listed twice.
fn report_duplicates(cells: &[Cell], errors: &mut Errors) {
    let mut first: HashMap<&str, &Cell> = HashMap::new();
    for cell in cells {
        let Some(earlier) = first.get(cell.name.as_str()) else {
            first.insert(&cell.name, cell);
            continue;
        };
        let differing = earlier
            .point
            .iter()
            .zip(&cell.point)
            .find(|(a, b)| a.id != b.id);
        match differing {
            Some((a, b)) => {
                let message = format!(
                    "`{key}` values \"{}\" and \"{}\" both give the cell name `{}`; remove one of them",
                    a.value.name_text(),
                    b.value.name_text(),
                    cell.name,
                    key = b.key,
                );
                errors.once(format!("duplicate-cell {:?}", b.id), b.span, message);
            }
            None => {
                let message = format!("two cells are named `{}`; rename one of them", cell.name);
                errors.once(
                    format!("duplicate-cell {}", cell.name),
                    Span::call_site(),
                    message,
                );
            }
        }
    }
}

#[cfg(test)]
mod tests;
