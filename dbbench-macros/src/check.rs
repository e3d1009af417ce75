//! Checks that involve more than one option: combinations that parse but cannot be run.
//!
//! Storage checks run on every cell, after `#[db_bench]`, the matrix and the case have been
//! merged, because a contradiction may exist in only some cells (`log_pregrow = ["1GB", "8GB"]`
//! with `log_size = "4GB"`). Each error points at the declared value at fault and is reported
//! once, however many cells inherit that value. Checks of run options and of a case's
//! `backends` run once per benchmark or per case.

use crate::case::Case;
use crate::errors::Errors;
use crate::matrix::Cell;
use crate::options::{BenchOptions, Declared, RunOptions};
use crate::setting::{Backend, Recovery, Setting, SizeValue, StorageValue};
use crate::symbol::Key;
use dbbench_options::size::{self, MIN_FILE};
use std::collections::HashSet;

mod run_options;

use run_options::{baseline, divisors, per_backend, precision, scale_storage};

/// Runs every check, recording what is wrong.
pub fn check(options: &BenchOptions, cases: &[Case], cells: &[Cell], errors: &mut Errors) {
    case_overrides_axis(options, cases, errors);
    case_backends(&options.run, cases, errors);
    for cell in cells {
        log_pregrow(cell, errors);
        data_size(cell, errors);
        tempdb(cell, errors);
        volumes(cell, errors);
        bulk_logged(cell, &options.run, errors);
    }
    baseline(&options.run, cells, errors);
    scale_storage(&options.run, cells, errors);
    divisors(options, errors);
    precision(options, errors);
    per_backend(options, errors);
}

fn size_of(cell: &Cell, key: Key) -> Option<(&SizeValue, &Setting)> {
    let setting = cell.settings.get(&key)?;
    match &setting.value {
        StorageValue::Size(size) => Some((size, setting)),
        _ => None,
    }
}

/// A case that sets an option which `#[db_bench]` gives as a list would replace every value
/// of the list, so the cells named after those values would all be configured alike.
fn case_overrides_axis(options: &BenchOptions, cases: &[Case], errors: &mut Errors) {
    let axes: HashSet<Key> = options
        .storage
        .iter()
        .filter_map(|declared| match declared {
            Declared::Axis(axis) => Some(axis.key),
            Declared::One(_) => None,
        })
        .collect();
    for case in cases {
        // Only what the case writes: an inherited value is reported at the case that wrote it.
        for setting in case.own.iter().filter(|s| axes.contains(&s.key)) {
            let message = format!(
                "`{key}` is a list in `#[db_bench]`, so each cell of this case already takes one of its values; \
                 setting it here would make those cells identical: remove `{key}` from this case or make it a single value in `#[db_bench]`",
                key = setting.key
            );
            errors.once(format!("case-axis {:?}", setting.id), setting.span, message);
        }
        for key in case.without.iter().filter(|k| axes.contains(&k.value)) {
            let message = format!(
                "`{k}` is a list in `#[db_bench]`, whose values name the cells, so `without` \
                 cannot leave it unset: remove {k:?} from `without`",
                k = key.value.as_str()
            );
            errors.once(format!("without-axis {:?}", key.span), key.span, message);
        }
    }
}

/// A case's `backends` that shares no backend with `#[db_bench]`'s describes cells that no
/// run of the benchmark would ever execute.
fn case_backends(run: &RunOptions, cases: &[Case], errors: &mut Errors) {
    let Some(bench) = &run.backends else {
        return;
    };
    for case in cases.iter().filter(|case| case.own_backends) {
        let Some(own) = &case.backends else {
            continue;
        };
        if own
            .value
            .iter()
            .any(|backend| bench.value.contains(backend))
        {
            continue;
        }
        let message = format!(
            "this case can never run: its `backends` allows only {} but `#[db_bench]` allows only {}: \
             add {} to the benchmark's `backends` or remove `backends` from this case",
            backend_list(&own.value, "and"),
            backend_list(&bench.value, "and"),
            backend_list(&own.value, "or"),
        );
        // The cases of one `#[cases]` share the value.
        errors.once(format!("case-backends {:?}", own.span), own.span, message);
    }
}

/// `"embedded"`, `"embedded" and "mssql"`.
fn backend_list(backends: &[Backend], conjunction: &str) -> String {
    let words: Vec<String> = backends
        .iter()
        .map(|backend| format!("{:?}", backend.keyword()))
        .collect();
    match words.split_last() {
        Some((last, rest)) if !rest.is_empty() => {
            format!("{} {conjunction} {last}", rest.join(", "))
        }
        _ => words.concat(),
    }
}

/// `log_pregrow` grows the log up to `log_size`, so it needs one and must not exceed it.
fn log_pregrow(cell: &Cell, errors: &mut Errors) {
    let Some((step, pregrow)) = size_of(cell, Key::LogPregrow) else {
        return;
    };
    match size_of(cell, Key::LogSize) {
        None => {
            let message = "`log_pregrow` grows the log to `log_size` in steps, but `log_size` is not set: add `log_size = \"...\"` or remove `log_pregrow`";
            errors.once(
                format!("pregrow-alone {:?}", pregrow.id),
                pregrow.span,
                message,
            );
        }
        Some((target, log_size)) if step.bytes > target.bytes => {
            let message = format!(
                "`log_pregrow` {:?} is larger than `log_size` {:?}; the log is grown to `log_size` in steps of `log_pregrow`, so make the step at most the size",
                step.text, target.text
            );
            let key = format!("pregrow-larger {:?} {:?}", pregrow.id, log_size.id);
            errors.once(key, pregrow.span, message);
        }
        Some(_) => {}
    }
}

/// Each data file needs at least one extent of the total `data_size`.
fn data_size(cell: &Cell, errors: &mut Errors) {
    let Some((total, setting)) = size_of(cell, Key::DataSize) else {
        return;
    };
    let files = match cell.settings.get(&Key::DataFiles).map(|s| &s.value) {
        Some(StorageValue::Count(n)) => u64::from(*n),
        _ => 1,
    };
    let needed = files * MIN_FILE;
    if total.bytes < needed {
        let message = format!(
            "`data_size` {:?} is too small for {files} data files: each file needs at least \"{}\", so use at least \"{}\" or fewer `data_files`",
            total.text,
            size::format_size(MIN_FILE),
            size::format_size(needed)
        );
        errors.once(format!("data-size {:?}", setting.id), setting.span, message);
    }
}

/// `tempdb_size` and `tempdb_growth` describe tempdb files, whose number is `tempdb_files`;
/// without it the benchmark would reconfigure files it does not own.
fn tempdb(cell: &Cell, errors: &mut Errors) {
    if cell.settings.contains_key(&Key::TempdbFiles) {
        return;
    }
    for key in [Key::TempdbSize, Key::TempdbGrowth] {
        if let Some(setting) = cell.settings.get(&key) {
            let message = format!(
                "`{key}` configures the tempdb files, but `tempdb_files` is not set: add `tempdb_files = N` to say how many files it applies to"
            );
            errors.once(format!("tempdb {:?}", setting.id), setting.span, message);
        }
    }
}

/// `data_on` spreads the data files over its volumes round robin: a volume named twice, or more
/// volumes than files, means some volume would not get the files the list suggests.
fn volumes(cell: &Cell, errors: &mut Errors) {
    let Some(setting) = cell.settings.get(&Key::DataOn) else {
        return;
    };
    let StorageValue::Volumes(names) = &setting.value else {
        return;
    };
    let mut seen = HashSet::new();
    if let Some(twice) = names.iter().find(|name| !seen.insert(name.as_str())) {
        let message = format!("`data_on` names the volume {twice:?} twice; name each volume once");
        errors.once(
            format!("volume-twice {:?}", setting.id),
            setting.span,
            message,
        );
        return;
    }
    let files = match cell.settings.get(&Key::DataFiles).map(|s| &s.value) {
        Some(StorageValue::Count(n)) => *n as usize,
        _ => 1,
    };
    if names.len() > files {
        let message = format!(
            "`data_on` names {} volumes but there {} only {files} data file{}, so {:?} would hold no file: set `data_files` to at least {} or name fewer volumes",
            names.len(),
            if files == 1 { "is" } else { "are" },
            if files == 1 { "" } else { "s" },
            names[files],
            names.len()
        );
        errors.once(
            format!("volumes-files {:?}", setting.id),
            setting.span,
            message,
        );
    }
}

/// The bulk-logged recovery model exists only on SQL Server; a cell runs on its case's
/// `backends` if the case sets them, else on the benchmark's.
fn bulk_logged(cell: &Cell, run: &RunOptions, errors: &mut Errors) {
    let Some(setting) = cell.settings.get(&Key::Recovery) else {
        return;
    };
    if setting.value != StorageValue::Recovery(Recovery::BulkLogged) {
        return;
    }
    let (backends, case) = match &cell.backends {
        Some(backends) => (Some(backends), cell.case.as_deref()),
        None => (run.backends.as_ref(), None),
    };
    if !backends.is_some_and(|b| b.value == [Backend::Embedded]) {
        return;
    }
    let message = match case {
        None => "`recovery = \"bulk_logged\"` exists only on SQL Server, but `backends` allows only \"embedded\": add \"mssql\" to `backends` or choose \"simple\" or \"full\"".to_string(),
        Some(case) => format!(
            "`recovery = \"bulk_logged\"` exists only on SQL Server, but case `{case}` sets `backends` to only \"embedded\": add \"mssql\" to that case's `backends` or choose \"simple\" or \"full\""
        ),
    };
    errors.once(
        format!("bulk-logged {:?} {case:?}", setting.id),
        setting.span,
        message,
    );
}

#[cfg(test)]
mod tests;
