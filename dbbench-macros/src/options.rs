//! The options of one attribute: which keys exist where, duplicates, and which may be lists.
//!
//! `#[db_bench]` takes storage options (single values or lists, which make a matrix), run
//! options, and per backend the run options that may differ there (`postgres(budget = "5m")`).
//! `#[case]` takes a `name`, the case it starts from (`like`), single storage values and
//! `backends`, the one run option a case may set for its own cells. `#[cases]` takes the cases it
//! makes others from (`like = [...]`), the `prefix` of their names, the values they change and
//! the options they leave unset (`without`). Values are converted by `value.rs`; this module
//! decides whether a key is allowed at all in its place.

use crate::errors::Errors;
use crate::parse::{RawOption, RawValue, Value};
use crate::setting::{Backend, Cache, Fixture, Order, Setting};
use crate::suggest;
use crate::symbol::{self, Key};
use crate::value;
use proc_macro2::Span;
use std::collections::HashSet;

mod place;
mod sets;

use place::{known, Place};

pub use sets::{
    Axis, BackendRun, BenchOptions, CaseOptions, CaseSetOptions, Declared, RunOptions, Spanned,
    DEFAULT_DEFAULT_DIVISOR, DEFAULT_SMOKE_DIVISOR, MAX_DIVISOR,
};

/// Interprets the options of `#[db_bench(...)]`.
pub fn bench_options(raw: Vec<RawOption>, errors: &mut Errors) -> BenchOptions {
    let mut out = BenchOptions::default();
    let mut seen = HashSet::new();
    for option in raw {
        let name = option.key.to_string();
        if let Some((_, backend)) = Backend::all().find(|(word, _)| *word == name) {
            let backend = Spanned::new(backend, option.key.span());
            if let Some(run) = backend_run(backend, &option, &out.run.per_backend, errors) {
                out.run.per_backend.push(run);
            }
            continue;
        }
        let Some((key, value)) = known(&option, Place::Bench, &mut seen, errors) else {
            continue;
        };
        if key.is_storage() {
            if let Some(declared) = storage(key, &option, value, errors) {
                out.storage.push(declared);
            }
        } else {
            run(key, value, &mut out.run, errors);
        }
    }
    out.given = seen;
    out
}

/// Interprets the options of one `#[case(...)]`.
pub fn case_options(raw: Vec<RawOption>, errors: &mut Errors) -> CaseOptions {
    let mut out = CaseOptions::default();
    let mut seen = HashSet::new();
    for option in raw {
        let Some((key, value)) = known(&option, Place::Case, &mut seen, errors) else {
            continue;
        };
        if key == Key::Backends {
            out.backends = backends(value, Place::Case, errors);
            continue;
        }
        let value = match value {
            RawValue::One(value) => value,
            RawValue::List(list) => {
                let message = format!(
                    "`#[case]` takes one value per option, not a list: declare one `#[case]` \
                     per value, or move `{key} = [...]` to `#[db_bench]` to cross it with every case"
                );
                errors.error(list.span, message);
                continue;
            }
            // `known` reports `key(...)` and passes on no value for it.
            RawValue::Nested(_) => continue,
        };
        if key == Key::Name {
            out.name = value::case_name(value, errors).map(|name| Spanned {
                value: name,
                span: value.span,
            });
        } else if key == Key::Like {
            out.like = value::string(key, value, errors)
                .map(|name| Spanned::new(name.to_string(), value.span));
        } else if let Some(setting) = value::storage(key, value, errors) {
            out.storage.push(setting);
        }
    }
    out
}

/// Interprets the options of one `#[cases(...)]`.
pub fn case_set_options(raw: Vec<RawOption>, errors: &mut Errors) -> CaseSetOptions {
    let mut out = CaseSetOptions::default();
    let mut seen = HashSet::new();
    for option in raw {
        let Some((key, value)) = known(&option, Place::CaseSet, &mut seen, errors) else {
            continue;
        };
        let items: &[Value] = match value {
            RawValue::One(value) => std::slice::from_ref(value),
            RawValue::List(list) => &list.items,
            RawValue::Nested(_) => continue,
        };
        match key {
            Key::Backends => out.backends = backends(value, Place::CaseSet, errors),
            Key::Like | Key::Without => {
                if items.is_empty() {
                    let message = format!(
                        "`{key}` has an empty list: name at least one {}",
                        if key == Key::Like {
                            "case, such as `like = [\"test_1\"]`"
                        } else {
                            "option, such as `without = [\"data_size\"]`"
                        }
                    );
                    let span = match value {
                        RawValue::List(list) => list.span,
                        _ => option.key.span(),
                    };
                    errors.error(span, message);
                }
                for item in items {
                    let Some(text) = value::string(key, item, errors) else {
                        continue;
                    };
                    if key == Key::Like {
                        out.like.push(Spanned::new(text.to_string(), item.span));
                        continue;
                    }
                    match Key::lookup(text).filter(|k| k.is_storage()) {
                        Some(k) => out.without.push(Spanned::new(k, item.span)),
                        None => {
                            let names = Key::STORAGE.iter().map(|k| k.as_str());
                            let message = format!(
                                "`without` names storage options, and {text:?} is not one{}",
                                suggest::did_you_mean(text, names, suggest::Quote::Str)
                            );
                            value::report(item, errors, message);
                        }
                    }
                }
            }
            _ => {
                let RawValue::One(value) = value else {
                    let message = format!(
                        "`#[cases]` takes one value per option, not a list: the cases it makes \
                         all change `{key}` to that value"
                    );
                    if let RawValue::List(list) = value {
                        errors.error(list.span, message);
                    }
                    continue;
                };
                if key == Key::Prefix {
                    out.prefix = value::string(key, value, errors)
                        .map(|p| Spanned::new(p.to_string(), value.span));
                } else if let Some(setting) = value::storage(key, value, errors) {
                    out.storage.push(setting);
                }
            }
        }
    }
    out
}

/// `postgres(budget = "5m", min_repeat = 3)` in `#[db_bench]`: the run options of one backend.
fn backend_run(
    backend: Spanned<Backend>,
    option: &RawOption,
    earlier: &[BackendRun],
    errors: &mut Errors,
) -> Option<BackendRun> {
    let word = backend.value.keyword();
    let Some(RawValue::Nested(nested)) = &option.value else {
        let message = format!(
            "`{word}` takes the run options that differ on that backend, in parentheses: write \
             `{word}(budget = \"5m\", min_repeat = 3)`"
        );
        errors.error(backend.span, message);
        return None;
    };
    if earlier.iter().any(|r| r.backend.value == backend.value) {
        let message =
            format!("`{word}(...)` is given twice; put all of {word}'s run options in one");
        errors.error(backend.span, message);
        return None;
    }
    let mut run = BackendRun {
        backend,
        precision: None,
        min_repeat: None,
        max_repeat: None,
        budget: None,
        fork_rounds: None,
    };
    let raw = crate::parse::parse_options(nested.tokens.clone(), 0, errors);
    let mut seen = HashSet::new();
    for inner in raw {
        let name = inner.key.to_string();
        let span = inner.key.span();
        let key = match Key::lookup(&name) {
            Some(key) if key.is_per_backend() => key,
            _ => {
                let names = Key::PER_BACKEND.iter().map(|k| k.as_str());
                let hint = match suggest::nearest(&name, names.clone()) {
                    Some(near) => format!("; did you mean `{near}`? In"),
                    None => ": in".to_string(),
                };
                let message = format!(
                    "`{name}` cannot be given per backend{hint} `{word}(...)` only {} can \
                         differ; set anything else for the whole benchmark",
                    suggest::one_of(names, suggest::Quote::Code)
                );
                errors.error(span, message);
                continue;
            }
        };
        if !seen.insert(key) {
            errors.error(
                span,
                format!("`{key}` is set twice in `{word}(...)`; remove one of them"),
            );
            continue;
        }
        let value = match &inner.value {
            Some(RawValue::One(value)) => value,
            _ => {
                let message = format!(
                    "`{key}` needs one value: write {}",
                    value::example(key, None)
                );
                errors.error(span, message);
                continue;
            }
        };
        let at = |v| Spanned::new(v, value.span);
        match key {
            Key::Precision => run.precision = value::percent(key, value, errors).map(at),
            Key::MinRepeat => run.min_repeat = value::int(key, value, 2, 1000, errors).map(at),
            Key::MaxRepeat => run.max_repeat = value::int(key, value, 2, 1000, errors).map(at),
            Key::ForkRounds => run.fork_rounds = fork_rounds(key, value, errors).map(at),
            Key::Budget => {
                run.budget =
                    value::duration(key, value, errors).map(|v| Spanned::new(v, value.span))
            }
            _ => unreachable!("`{key}` is not a per-backend option"),
        }
    }
    if seen.is_empty() {
        let message = format!(
            "`{word}()` changes nothing: give the run options that differ on {word}, such as \
             `{word}(budget = \"5m\")`, or remove it"
        );
        errors.error(nested.span, message);
    }
    Some(run)
}

/// A storage option of `#[db_bench]`: one value or an axis.
fn storage(
    key: Key,
    option: &RawOption,
    value: &RawValue,
    errors: &mut Errors,
) -> Option<Declared> {
    match value {
        RawValue::One(value) => value::storage(key, value, errors).map(Declared::One),
        RawValue::Nested(_) => None,
        RawValue::List(list) => {
            if list.items.is_empty() {
                let message = format!(
                    "`{key}` has an empty list, which would make no cells: put at least one value in the brackets, or remove `{key}` to keep its default"
                );
                errors.error(list.span, message);
                return None;
            }
            let values: Vec<Setting> = list
                .items
                .iter()
                .filter_map(|item| value::storage(key, item, errors))
                .collect();
            // A bad item is already reported; dropping the axis avoids follow-up errors about
            // cells that would not exist once the item is fixed.
            (values.len() == list.items.len()).then(|| {
                Declared::Axis(Axis {
                    key,
                    key_span: option.key.span(),
                    values,
                })
            })
        }
    }
}

/// A run option of `#[db_bench]`, stored into `run`.
fn run(key: Key, value: &RawValue, run: &mut RunOptions, errors: &mut Errors) {
    if key == Key::Backends {
        run.backends = backends(value, Place::Bench, errors);
        return;
    }
    let value = match value {
        RawValue::One(value) => value,
        RawValue::List(list) => {
            let message = format!(
                "`{key}` applies to the whole benchmark and cannot be a list; only storage options such as `data_files` or `growth` make a matrix"
            );
            errors.error(list.span, message);
            return;
        }
        RawValue::Nested(_) => return,
    };
    let span = value.span;
    match key {
        Key::Repeat => {
            run.repeat = value::int(key, value, 1, 1000, errors).map(|v| Spanned::new(v, span))
        }
        Key::Warmup => {
            run.warmup = value::int(key, value, 0, 100, errors).map(|v| Spanned::new(v, span))
        }
        Key::ScaleStorage => {
            run.scale_storage = value::boolean(key, value, errors).map(|v| Spanned::new(v, span))
        }
        Key::SmokeDivisor => {
            run.smoke_divisor =
                value::int(key, value, 1, MAX_DIVISOR, errors).map(|v| Spanned::new(v, span))
        }
        Key::DefaultDivisor => {
            run.default_divisor =
                value::int(key, value, 1, MAX_DIVISOR, errors).map(|v| Spanned::new(v, span))
        }
        Key::Timeout => {
            run.timeout = value::duration(key, value, errors).map(|v| Spanned::new(v, span))
        }
        Key::Precision => {
            run.precision = value::percent(key, value, errors).map(|v| Spanned::new(v, span))
        }
        Key::MinRepeat => {
            run.min_repeat = value::int(key, value, 2, 1000, errors).map(|v| Spanned::new(v, span))
        }
        Key::MaxRepeat => {
            run.max_repeat = value::int(key, value, 2, 1000, errors).map(|v| Spanned::new(v, span))
        }
        Key::ForkRounds => {
            run.fork_rounds = fork_rounds(key, value, errors).map(|v| Spanned::new(v, span))
        }
        Key::Budget => {
            run.budget = value::duration(key, value, errors).map(|v| Spanned::new(v, span))
        }
        Key::Cache => {
            let choices = [(symbol::WARM, Cache::Warm), (symbol::COLD, Cache::Cold)];
            run.cache = value::keyword(key, value, &choices, errors).map(|v| Spanned::new(v, span));
        }
        Key::Baseline => {
            run.baseline =
                value::string(key, value, errors).map(|s| Spanned::new(s.to_string(), span));
        }
        Key::Fixture => {
            let choices = [
                (symbol::FIXTURE_NONE, Fixture::None),
                (symbol::CREDIT, Fixture::Credit),
            ];
            run.fixture =
                value::keyword(key, value, &choices, errors).map(|v| Spanned::new(v, span));
        }
        Key::Order => {
            let choices = [
                (symbol::INTERLEAVED, Order::Interleaved),
                (symbol::BLOCKED, Order::Blocked),
            ];
            run.order = value::keyword(key, value, &choices, errors).map(|v| Spanned::new(v, span));
        }
        _ => unreachable!("`{key}` is not a run option"),
    }
}

/// `backends = "mssql"` or `backends = ["embedded", "mssql"]`, in `#[db_bench]` or `#[case]`.
fn backends(value: &RawValue, place: Place, errors: &mut Errors) -> Option<Spanned<Vec<Backend>>> {
    let (items, span): (&[Value], Span) = match value {
        RawValue::One(value) => (std::slice::from_ref(value), value.span),
        RawValue::List(list) => (&list.items, list.span),
        RawValue::Nested(_) => return None,
    };
    if items.is_empty() {
        let without = match place {
            Place::Bench => "to allow every backend",
            Place::Case | Place::CaseSet => "to run this case on the benchmark's backends",
        };
        let message = format!(
            "`backends` has an empty list; name at least one backend, such as `backends = [\"mssql\"]`, or remove it {without}"
        );
        errors.error(span, message);
        return None;
    }
    let mut out = Vec::new();
    let mut ok = true;
    for item in items {
        match value::backend(item, errors) {
            Some(backend) if out.contains(&backend) => {
                let message = format!("`backends` lists {} twice; remove one of them", item.text);
                value::report(item, errors, message);
                ok = false;
            }
            Some(backend) => out.push(backend),
            None => ok = false,
        }
    }
    ok.then_some(Spanned { value: out, span })
}

#[cfg(test)]
mod tests;

/// `fork_rounds`: 1 to the most rounds a later fork may get, since later forks have at least the
/// pilot's rounds (the two-stage interval relies on it).
fn fork_rounds(key: Key, value: &Value, errors: &mut Errors) -> Option<u32> {
    value::int(
        key,
        value,
        1,
        dbbench_options::defaults::MAX_FORK_ROUNDS,
        errors,
    )
}
