//! The options of one attribute: which keys exist where, duplicates, and which may be lists.
//!
//! `#[db_bench]` takes storage options (single values or lists, which make a matrix) and run
//! options. `#[case]` takes a `name`, single storage values and `backends`, the one run option a
//! case may set for its own cells. Values are converted by `value.rs`; this module decides
//! whether a key is allowed at all in its place.

use crate::errors::Errors;
use crate::parse::{RawOption, RawValue, Value};
use crate::setting::{Backend, Cache, Fixture, Order, Setting};
use crate::suggest;
use crate::symbol::{self, Key};
use crate::value;
use proc_macro2::Span;
use std::collections::HashSet;

/// A value with the span of its token.
#[derive(Debug, Clone)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where it was written.
    pub span: Span,
}

impl<T> Spanned<T> {
    /// `value` written at `span`.
    pub fn new(value: T, span: Span) -> Self {
        Spanned { value, span }
    }
}

/// A storage option of `#[db_bench]`.
#[derive(Debug, Clone)]
pub enum Declared {
    /// One value, shared by every cell.
    One(Setting),
    /// A list: one matrix axis.
    Axis(Axis),
}

/// A storage option given a list: every value makes its own cells.
#[derive(Debug, Clone)]
pub struct Axis {
    /// The option.
    pub key: Key,
    /// The span of the option's name.
    pub key_span: Span,
    /// The values, in the order written.
    pub values: Vec<Setting>,
}

pub use dbbench_options::defaults::{
    DEFAULT_DIVISOR as DEFAULT_DEFAULT_DIVISOR, MAX_DIVISOR, SMOKE_DIVISOR as DEFAULT_SMOKE_DIVISOR,
};

/// The run options of a benchmark; `None` means the runtime's default.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// `repeat`
    pub repeat: Option<Spanned<u32>>,
    /// `warmup`
    pub warmup: Option<Spanned<u32>>,
    /// `fixture`
    pub fixture: Option<Spanned<Fixture>>,
    /// `backends`, without duplicates.
    pub backends: Option<Spanned<Vec<Backend>>>,
    /// `timeout`, in milliseconds.
    pub timeout: Option<Spanned<u64>>,
    /// `order`
    pub order: Option<Spanned<Order>>,
    /// `baseline`: a cell name, checked once the cells are known.
    pub baseline: Option<Spanned<String>>,
    /// `scale_storage`
    pub scale_storage: Option<Spanned<bool>>,
    /// `smoke_divisor`; [`DEFAULT_SMOKE_DIVISOR`] when not given.
    pub smoke_divisor: Option<Spanned<u32>>,
    /// `default_divisor`; [`DEFAULT_DEFAULT_DIVISOR`] when not given.
    pub default_divisor: Option<Spanned<u32>>,
    /// `precision`, in hundredths of a percent.
    pub precision: Option<Spanned<u32>>,
    /// `min_repeat`
    pub min_repeat: Option<Spanned<u32>>,
    /// `max_repeat`
    pub max_repeat: Option<Spanned<u32>>,
    /// `budget`, in milliseconds.
    pub budget: Option<Spanned<u64>>,
    /// `cache`
    pub cache: Option<Spanned<Cache>>,
}

/// The options of `#[db_bench(...)]`.
#[derive(Debug, Clone, Default)]
pub struct BenchOptions {
    /// Storage options in the order written; the order of axes decides the order of cells.
    pub storage: Vec<Declared>,
    /// Run options.
    pub run: RunOptions,
    /// Every known option written in the attribute, including those whose value was rejected,
    /// so that a check can tell an option left to its default from one already reported.
    pub given: HashSet<Key>,
}

/// The options of one `#[case(...)]`.
#[derive(Debug, Clone, Default)]
pub struct CaseOptions {
    /// `name`, if given and valid.
    pub name: Option<Spanned<String>>,
    /// The storage overrides.
    pub storage: Vec<Setting>,
    /// `backends`: the backends this case's cells run on instead of the benchmark's.
    pub backends: Option<Spanned<Vec<Backend>>>,
}

/// Interprets the options of `#[db_bench(...)]`.
pub fn bench_options(raw: Vec<RawOption>, errors: &mut Errors) -> BenchOptions {
    let mut out = BenchOptions::default();
    let mut seen = HashSet::new();
    for option in raw {
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
        };
        if key == Key::Name {
            out.name = value::case_name(value, errors).map(|name| Spanned {
                value: name,
                span: value.span,
            });
        } else if let Some(setting) = value::storage(key, value, errors) {
            out.storage.push(setting);
        }
    }
    out
}

/// Which attribute an option is in.
#[derive(Clone, Copy, PartialEq)]
enum Place {
    Bench,
    Case,
}

impl Place {
    fn allows(self, key: Key) -> bool {
        match self {
            Place::Bench => key.is_storage() || key.is_run(),
            Place::Case => key == Key::Name || key.is_storage() || key.is_per_case(),
        }
    }

    fn valid_keys(self) -> Vec<Key> {
        match self {
            Place::Bench => Key::STORAGE.into_iter().chain(Key::RUN).collect(),
            Place::Case => std::iter::once(Key::Name)
                .chain(Key::STORAGE)
                .chain(Key::PER_CASE)
                .collect(),
        }
    }
}

/// The key and value of `option` if the key exists here, is not a duplicate and has a value.
fn known<'o>(
    option: &'o RawOption,
    place: Place,
    seen: &mut HashSet<Key>,
    errors: &mut Errors,
) -> Option<(Key, &'o RawValue)> {
    let name = option.key.to_string();
    let span = option.key.span();
    let key = match Key::lookup(&name) {
        Some(key) if place.allows(key) => key,
        Some(Key::Name) => {
            let message = "`name` belongs in `#[case(...)]`; the benchmark itself is named after its function";
            errors.error(span, message);
            return None;
        }
        Some(key) => {
            let message = format!(
                "`{key}` is a run option and belongs in `#[db_bench(...)]`: it applies to every cell, so it cannot differ per case"
            );
            errors.error(span, message);
            return None;
        }
        None => {
            let valid = place.valid_keys();
            let names = valid.iter().map(|key| key.as_str());
            let attribute = match place {
                Place::Bench => "",
                Place::Case => " in `#[case]`",
            };
            let hint = match suggest::nearest(&name, names.clone()) {
                Some(near) => format!("did you mean `{near}`? "),
                None => String::new(),
            };
            let list: Vec<String> = names.map(|n| format!("`{n}`")).collect();
            let message = format!(
                "unknown option `{name}`{attribute}; {hint}valid options are: {}",
                list.join(", ")
            );
            errors.error(span, message);
            return None;
        }
    };
    if !seen.insert(key) {
        let hint = if key.is_storage() && place == Place::Bench {
            format!(", or give a list such as `{key} = [a, b]` to try several values")
        } else {
            String::new()
        };
        let message = format!("`{key}` is set twice in this attribute; remove one of them{hint}");
        errors.error(span, message);
        return None;
    }
    match &option.value {
        Some(value) => Some((key, value)),
        None => {
            let message = format!("`{key}` needs a value: write {}", value::example(key, None));
            errors.error(span, message);
            None
        }
    }
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
    };
    if items.is_empty() {
        let without = match place {
            Place::Bench => "to allow every backend",
            Place::Case => "to run this case on the benchmark's backends",
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
