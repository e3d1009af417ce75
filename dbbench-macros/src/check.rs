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
use crate::options::{self, BenchOptions, Declared, RunOptions};
use crate::setting::{Backend, GrowthValue, Recovery, Setting, SizeValue, StorageValue};
use crate::suggest::{self, Quote};
use crate::symbol::Key;
use dbbench_options::size::{self, MIN_FILE};
use std::collections::HashSet;

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

/// `baseline` must name a cell, and there must be another cell to compare it with.
fn baseline(run: &RunOptions, cells: &[Cell], errors: &mut Errors) {
    let Some(baseline) = &run.baseline else {
        return;
    };
    // Without cells the options had errors of their own; a baseline message would only add noise.
    if cells.is_empty() {
        return;
    }
    let names = cells.iter().map(|cell| cell.name.as_str());
    if cells.len() == 1 {
        let message = format!(
            "`baseline` picks the cell the others are compared with, but this benchmark has only one cell, `{}`: remove `baseline` or add cells with a list or `#[case]`",
            cells[0].name
        );
        errors.error(baseline.span, message);
    } else if !names.clone().any(|name| name == baseline.value) {
        const SHOWN: usize = 10;
        let mut list: Vec<String> = names
            .clone()
            .take(SHOWN)
            .map(|n| format!("`{n}`"))
            .collect();
        if cells.len() > SHOWN {
            list.push(format!("and {} more", cells.len() - SHOWN));
        }
        let message = format!(
            "`baseline` {:?} is not a cell of this benchmark, whose cells are: {}{}",
            baseline.value,
            list.join(", "),
            suggest::did_you_mean(&baseline.value, names, Quote::Str),
        );
        errors.error(baseline.span, message);
    }
}

/// `scale_storage` multiplies sizes; with no size anywhere it would silently do nothing.
fn scale_storage(run: &RunOptions, cells: &[Cell], errors: &mut Errors) {
    let Some(scale) = run.scale_storage.as_ref().filter(|s| s.value) else {
        return;
    };
    let has_size = cells
        .iter()
        .flat_map(|cell| cell.settings.values())
        .any(|s| {
            matches!(
                s.value,
                StorageValue::Size(_) | StorageValue::Growth(GrowthValue::Fixed(_))
            )
        });
    if !cells.is_empty() && !has_size {
        let message = "`scale_storage = true` multiplies the storage sizes, but no size is set: add a size such as `data_size = \"1000MB\"` or remove `scale_storage`";
        errors.error(scale.span, message);
    }
}

/// `DBBENCH_SCALE=smoke` is for quick runs, so its fraction of the articles' sizes must not be
/// larger than the default scale's: `default_divisor` may not exceed `smoke_divisor`. A divisor
/// that is not written counts with its default.
fn divisors(options: &BenchOptions, errors: &mut Errors) {
    let run = &options.run;
    let rejected = |key, value: &Option<_>| value.is_none() && options.given.contains(&key);
    // A divisor written with a wrong value is already reported; its default would mislead here.
    if rejected(Key::SmokeDivisor, &run.smoke_divisor)
        || rejected(Key::DefaultDivisor, &run.default_divisor)
    {
        return;
    }
    let smoke = run
        .smoke_divisor
        .as_ref()
        .map_or(options::DEFAULT_SMOKE_DIVISOR, |d| d.value);
    let default = run
        .default_divisor
        .as_ref()
        .map_or(options::DEFAULT_DEFAULT_DIVISOR, |d| d.value);
    if default <= smoke {
        return;
    }
    let note = |given: bool| if given { "" } else { " (its default)" };
    let message = format!(
        "smoke must be the smaller scale: `default_divisor` is {default}{} but `smoke_divisor` is {smoke}{}, \
         so `DBBENCH_SCALE=smoke` would use more data than the default scale: \
         raise `smoke_divisor` to at least {default} or lower `default_divisor` to at most {smoke}",
        note(run.default_divisor.is_some()),
        note(run.smoke_divisor.is_some()),
    );
    // The defaults are in order, so at least one divisor is written; point at the one that is.
    let span = match (&run.default_divisor, &run.smoke_divisor) {
        (Some(d), _) | (None, Some(d)) => d.span,
        (None, None) => return,
    };
    errors.error(span, message);
}

/// `precision` chooses the number of rounds, so it cannot be combined with `repeat`, which fixes
/// it; `min_repeat`, `max_repeat` and `budget` bound it and mean nothing without it.
fn precision(options: &BenchOptions, errors: &mut Errors) {
    let run = &options.run;
    let given = |key| options.given.contains(&key);
    if !given(Key::Precision) {
        let bounds = [
            (Key::MinRepeat, run.min_repeat.as_ref().map(|v| v.span)),
            (Key::MaxRepeat, run.max_repeat.as_ref().map(|v| v.span)),
            (Key::Budget, run.budget.as_ref().map(|v| v.span)),
        ];
        for (key, span) in bounds {
            if let Some(span) = span {
                let message = format!(
                    "`{key}` bounds the rounds of a benchmark with a precision target, but none is \
                     set: add `precision = \"5%\"` to repeat until every ratio is that precise, \
                     or use `repeat = 3` for a fixed count"
                );
                errors.error(span, message);
            }
        }
        return;
    }
    if let (Some(repeat), true) = (&run.repeat, given(Key::Precision)) {
        let message = "`repeat` fixes the number of rounds, but `precision` repeats until every \
                       ratio's interval is narrow enough: remove `repeat`, or bound the rounds \
                       with `min_repeat` and `max_repeat`";
        errors.error(repeat.span, message);
    }
    if let Some(order) = run
        .order
        .as_ref()
        .filter(|o| o.value == crate::setting::Order::Blocked)
    {
        let message = "`precision` pairs the cells of each round, which needs every round to \
                       run every cell once: remove `order = \"blocked\"`, or use a fixed \
                       `repeat` with blocked order";
        errors.error(order.span, message);
    }
    let min = run
        .min_repeat
        .as_ref()
        .map_or(dbbench_options::defaults::MIN_REPEAT, |m| m.value);
    if let Some(max) = &run.max_repeat {
        if max.value < min {
            let message = format!(
                "`max_repeat` is {} but the fewest rounds are {min}{}: raise `max_repeat` to at \
                 least {min}",
                max.value,
                if run.min_repeat.is_some() {
                    " (`min_repeat`)"
                } else {
                    " (the default `min_repeat`)"
                }
            );
            errors.error(max.span, message);
        }
    } else if let Some(m) = run
        .min_repeat
        .as_ref()
        .filter(|m| m.value > dbbench_options::defaults::MAX_REPEAT)
    {
        let message = format!(
            "`min_repeat` is {} but the default `max_repeat` is {}: set `max_repeat` to at least {}",
            m.value,
            dbbench_options::defaults::MAX_REPEAT,
            m.value
        );
        errors.error(m.span, message);
    }
}

/// `postgres(budget = "5m")` changes the bounds of the precision target on one backend, so it
/// needs a target, a backend the benchmark runs on, and bounds that still fit together.
fn per_backend(options: &BenchOptions, errors: &mut Errors) {
    let run = &options.run;
    for own in &run.per_backend {
        let word = own.backend.value.keyword();
        if !options.given.contains(&Key::Precision) {
            let message = format!(
                "`{word}(...)` changes the bounds of the precision target on {word}, but none is \
                 set: add `precision = \"5%\"` to `#[db_bench]`"
            );
            errors.error(own.backend.span, message);
            continue;
        }
        if let Some(all) = run
            .backends
            .as_ref()
            .filter(|b| !b.value.contains(&own.backend.value))
        {
            let message = format!(
                "`{word}(...)` sets run options for {word}, but `backends` allows only {}: \
                 remove `{word}(...)` or add \"{word}\" to `backends`",
                backend_list(&all.value, "and")
            );
            errors.error(own.backend.span, message);
            continue;
        }
        let min = own
            .min_repeat
            .as_ref()
            .or(run.min_repeat.as_ref())
            .map_or(dbbench_options::defaults::MIN_REPEAT, |m| m.value);
        let max = own
            .max_repeat
            .as_ref()
            .or(run.max_repeat.as_ref())
            .map_or(dbbench_options::defaults::MAX_REPEAT, |m| m.value);
        if max < min {
            let (span, fix) = match (&own.max_repeat, &own.min_repeat) {
                (Some(m), _) => (m.span, format!("raise `max_repeat` to at least {min}")),
                (None, Some(m)) => (
                    m.span,
                    format!(
                        "lower `min_repeat` to at most {max}, or set `max_repeat` in `{word}(...)`"
                    ),
                ),
                (None, None) => continue,
            };
            let message =
                format!("on {word} the fewest rounds would be {min} but the most {max}: {fix}");
            errors.error(span, message);
        }
    }
}

#[cfg(test)]
mod tests;
