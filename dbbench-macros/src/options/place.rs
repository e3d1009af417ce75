//! Where an option is written (`#[db_bench]`, `#[case]`, `#[cases]`) and the gate every option
//! passes there: its key exists, belongs in this attribute, is not a duplicate and has a value,
//! each refusal with the sentence that says what to write instead. Apart from the interpretation
//! of the values, which only sees options that passed.

use crate::errors::Errors;
use crate::parse::{RawOption, RawValue};
use crate::suggest;
use crate::symbol::Key;
use crate::value;
use std::collections::HashSet;

/// Which attribute an option is in.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Place {
    Bench,
    Case,
    CaseSet,
}

impl Place {
    fn allows(self, key: Key) -> bool {
        match self {
            Place::Bench => key.is_storage() || key.is_run(),
            Place::Case => {
                matches!(key, Key::Name | Key::Like) || key.is_storage() || key.is_per_case()
            }
            Place::CaseSet => {
                matches!(key, Key::Like | Key::Prefix | Key::Without)
                    || key.is_storage()
                    || key.is_per_case()
            }
        }
    }

    fn valid_keys(self) -> Vec<Key> {
        match self {
            Place::Bench => Key::STORAGE.into_iter().chain(Key::RUN).collect(),
            Place::Case => [Key::Name, Key::Like]
                .into_iter()
                .chain(Key::STORAGE)
                .chain(Key::PER_CASE)
                .collect(),
            Place::CaseSet => [Key::Like, Key::Prefix, Key::Without]
                .into_iter()
                .chain(Key::STORAGE)
                .chain(Key::PER_CASE)
                .collect(),
        }
    }
}

/// The key and value of `option` if the key exists here, is not a duplicate and has a value.
pub(super) fn known<'o>(
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
            let message = match place {
                Place::CaseSet => "`#[cases]` names its cases after the ones in `like`, with `prefix` in front: remove `name`, or declare a single case with `#[case(name = ...)]`",
                _ => "`name` belongs in `#[case(...)]`; the benchmark itself is named after its function",
            };
            errors.error(span, message);
            return None;
        }
        Some(key @ (Key::Like | Key::Prefix | Key::Without)) => {
            let message = match (place, key) {
                (Place::Bench, Key::Like) => {
                    "`like` belongs in `#[case(...)]`, where it names the case this one starts from"
                        .to_string()
                }
                _ => format!(
                    "`{key}` belongs in `#[cases(...)]`, which makes cases from others: \
                     `#[cases(like = [\"test_1\", \"test_2\"], prefix = \"pg_\", ...)]`"
                ),
            };
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
                Place::CaseSet => " in `#[cases]`",
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
        Some(RawValue::Nested(nested)) => {
            let message =
                format!("options are set with `=`: write `{key} = value`, not `{key}(value)`");
            errors.error(nested.span, message);
            None
        }
        Some(value) => Some((key, value)),
        None => {
            let message = format!("`{key}` needs a value: write {}", value::example(key, None));
            errors.error(span, message);
            None
        }
    }
}
