//! Checks of the run options, once per benchmark: the baseline names a cell, `scale_storage` has
//! storage to scale, the divisors and the precision target are coherent, and a backend's own run
//! options name a backend the benchmark runs on. Apart from the storage checks, which run on
//! every cell.

use super::backend_list;
use crate::errors::Errors;
use crate::matrix::Cell;
use crate::options::{self, BenchOptions, RunOptions};
use crate::setting::{GrowthValue, StorageValue};
use crate::suggest::{self, Quote};
use crate::symbol::Key;

/// `baseline` must name a cell, and there must be another cell to compare it with.
pub(super) fn baseline(run: &RunOptions, cells: &[Cell], errors: &mut Errors) {
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
pub(super) fn scale_storage(run: &RunOptions, cells: &[Cell], errors: &mut Errors) {
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
pub(super) fn divisors(options: &BenchOptions, errors: &mut Errors) {
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
/// it; `min_repeat`, `max_repeat`, `budget` and `fork_rounds` shape it and mean nothing without it.
pub(super) fn precision(options: &BenchOptions, errors: &mut Errors) {
    let run = &options.run;
    let given = |key| options.given.contains(&key);
    if !given(Key::Precision) {
        let bounds = [
            (Key::MinRepeat, run.min_repeat.as_ref().map(|v| v.span)),
            (Key::MaxRepeat, run.max_repeat.as_ref().map(|v| v.span)),
            (Key::Budget, run.budget.as_ref().map(|v| v.span)),
            (Key::ForkRounds, run.fork_rounds.as_ref().map(|v| v.span)),
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
pub(super) fn per_backend(options: &BenchOptions, errors: &mut Errors) {
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
