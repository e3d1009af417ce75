//! The `#[case(name = "...", ...)]` helper attributes: named cells with their own overrides of
//! storage options and, optionally, their own `backends`; a case may start from another
//! (`like`). And `#[cases(like = [...], prefix = "pg_", ...)]`: a case made from each case
//! named, `pg_test_1` from `test_1`, with the changes written once for all of them (another
//! backend's terms for the same question), which also pairs each with its case in the article's
//! columns.
//!
//! `case` and `cases` are not registered attributes, so every one must be removed from the
//! function before it is emitted again, also when there are errors; otherwise rustc would add a
//! "cannot find attribute `case`" error to the ones reported here.

use crate::errors::Errors;
use crate::like::{self, Written};
use crate::options::{self, Spanned};
use crate::parse;
use crate::symbol::{self, Key};
use proc_macro2::Span;
use std::collections::{HashMap, HashSet};
use syn::spanned::Spanned as _;
use syn::{Attribute, Meta};

pub use crate::like::Case;

/// Removes every `#[case]` and `#[cases]` from `attrs` and returns the valid cases in order,
/// each with what it inherits resolved; `bench_keys` are the storage options `#[db_bench]` sets.
///
/// A case with an invalid or duplicate name, or whose `like` cannot be resolved, is reported
/// and left out.
pub fn take_cases(
    attrs: &mut Vec<Attribute>,
    bench_keys: &HashSet<Key>,
    errors: &mut Errors,
) -> Vec<Case> {
    let (cases, others): (Vec<Attribute>, Vec<Attribute>) =
        std::mem::take(attrs).into_iter().partition(|attr| {
            attr.path().is_ident(symbol::CASE) || attr.path().is_ident(symbol::CASES)
        });
    *attrs = others;

    let mut written: Vec<Written> = Vec::new();
    let mut names: HashMap<String, Span> = HashMap::new();
    // Attribute number 0 is `#[db_bench]`; cases count from 1 so their values have distinct ids.
    for (index, attr) in cases.iter().enumerate() {
        let made = if attr.path().is_ident(symbol::CASES) {
            parse_case_set(attr, index + 1, errors)
        } else {
            parse_case(attr, index + 1, errors).into_iter().collect()
        };
        for case in made {
            if names.contains_key(&case.name.value) {
                let message = format!(
                    "duplicate case name {:?}: each case becomes a test, so names must be unique; rename this case",
                    case.name.value
                );
                errors.error(case.name.span, message);
                continue;
            }
            names.insert(case.name.value.clone(), case.name.span);
            written.push(case);
        }
    }
    like::resolve(&written, bench_keys, errors)
}

/// The tokens of `#[case(...)]` or `#[cases(...)]`, or the error for another form.
fn list_tokens(attr: &Attribute, errors: &mut Errors) -> Option<proc_macro2::TokenStream> {
    let set = attr.path().is_ident(symbol::CASES);
    match &attr.meta {
        Meta::List(list) => Some(list.tokens.clone()),
        _ if set => {
            let message = "`#[cases]` makes a case from each case it names: write \
                           `#[cases(like = [\"test_1\", \"test_2\"], prefix = \"pg_\", ...)]` \
                           with the options those cases change";
            errors.spanned(attr, message);
            None
        }
        Meta::NameValue(nv) => {
            // `#[case = "big"]` most likely meant the name; show it in the fix.
            let name = match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(name),
                    ..
                }) => name.value(),
                _ => "big_growth".to_string(),
            };
            let message = format!(
                "`#[case]` takes its options in parentheses: write `#[case(name = {name:?}, ...)]` with the options this case changes"
            );
            errors.spanned(attr, message);
            None
        }
        Meta::Path(_) => {
            let message = "`#[case]` needs a name and the options it changes: write `#[case(name = \"big_growth\", growth = \"1024MB\")]`";
            errors.spanned(attr, message);
            None
        }
    }
}

/// Parses one `#[case(...)]`.
fn parse_case(attr: &Attribute, index: usize, errors: &mut Errors) -> Option<Written> {
    let tokens = list_tokens(attr, errors)?;
    let before = errors.count();
    let raw = parse::parse_options(tokens, index, errors);
    let has_name = raw.iter().any(|option| option.key == "name");
    let options = options::case_options(raw, errors);
    if !has_name {
        let message = "this `#[case]` has no name: add `name = \"...\"` with a snake_case name, which becomes the name of the case's test";
        errors.error(attr.path().span(), message);
    }
    Some(Written {
        name: options.name?,
        like: options.like,
        storage: options.storage,
        backends: options.backends,
        without: Vec::new(),
        mirrors: None,
        complete: errors.count() == before,
    })
}

/// Parses one `#[cases(...)]` into the cases it makes.
fn parse_case_set(attr: &Attribute, index: usize, errors: &mut Errors) -> Vec<Written> {
    let Some(tokens) = list_tokens(attr, errors) else {
        return Vec::new();
    };
    let before = errors.count();
    let raw = parse::parse_options(tokens, index, errors);
    let given = |key: Key| raw.iter().any(|option| option.key == key.as_str());
    let (has_like, has_prefix) = (given(Key::Like), given(Key::Prefix));
    let options = options::case_set_options(raw, errors);
    if !has_like {
        let message =
            "this `#[cases]` names no case to start from: add `like = [\"test_1\", \"test_2\"]` \
                       with the cases it makes others from";
        errors.error(attr.path().span(), message);
    }
    if !has_prefix {
        let message = "this `#[cases]` has no `prefix`: add `prefix = \"pg_\"`, which goes before \
                       each case's name to name the new case (`pg_test_1` from `test_1`)";
        errors.error(attr.path().span(), message);
    }
    let Some(prefix) = options.prefix.filter(|p| prefix_ok(p, errors)) else {
        return Vec::new();
    };
    let complete = errors.count() == before;
    options
        .like
        .into_iter()
        .map(|source| Written {
            name: Spanned::new(format!("{}{}", prefix.value, source.value), source.span),
            like: Some(source.clone()),
            storage: options.storage.clone(),
            backends: options.backends.clone(),
            without: options.without.clone(),
            mirrors: Some(source.value),
            complete,
        })
        .collect()
}

/// A prefix makes valid case names from valid ones: lowercase letters, digits and `_`, starting
/// with a letter.
fn prefix_ok(prefix: &Spanned<String>, errors: &mut Errors) -> bool {
    let mut chars = prefix.value.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if !ok {
        let message = format!(
            "`prefix` {:?} would not make snake_case case names: use lowercase letters, digits \
             and `_`, starting with a letter, such as \"pg_\"",
            prefix.value
        );
        errors.error(prefix.span, message);
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn cases(attrs: Vec<Attribute>) -> (Vec<Case>, Vec<Attribute>, Vec<String>) {
        let mut attrs = attrs;
        let mut errors = Errors::new();
        let cases = take_cases(&mut attrs, &HashSet::new(), &mut errors);
        (cases, attrs, errors.messages())
    }

    #[test]
    fn takes_cases_and_leaves_other_attributes() {
        let (cases, rest, errors) = cases(vec![
            parse_quote!(#[doc = "x"]),
            parse_quote!(#[case(name = "test_3", growth = "1024MB", log_growth = "1024MB")]),
            parse_quote!(#[case(name = "test_4")]),
            parse_quote!(#[inline]),
        ]);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(rest.len(), 2);
        assert_eq!(cases.len(), 2);
        assert_eq!(cases[0].name.value, "test_3");
        let keys: Vec<Key> = cases[0].storage.iter().map(|s| s.key).collect();
        assert_eq!(keys, [Key::Growth, Key::LogGrowth]);
        assert!(cases[1].storage.is_empty());
        assert_eq!(cases[1].storage.len(), 0);
    }

    #[test]
    fn reports_every_problem_of_every_case() {
        let (cases, rest, errors) = cases(vec![
            parse_quote!(#[case]),
            parse_quote!(#[case(growth = "1MB")]),
            parse_quote!(#[case(name = "a", repeat = 3, growth = ["1MB", "2MB"])]),
            parse_quote!(#[case(name = "a")]),
            parse_quote!(#[case(name = "Bad")]),
        ]);
        assert!(rest.is_empty());
        assert_eq!(cases.len(), 1);
        assert_eq!(errors.len(), 6, "{errors:?}");
        assert!(errors[0].starts_with("`#[case]` needs a name"));
        assert!(errors[1].starts_with("this `#[case]` has no name"));
        assert!(errors[2].starts_with("`repeat` is a run option"));
        assert!(errors[3].starts_with("`#[case]` takes one value per option"));
        assert!(errors[4].starts_with("duplicate case name \"a\""));
        assert!(errors[5].starts_with("case name \"Bad\" is not a snake_case identifier"));
    }

    #[test]
    fn a_name_value_case_is_shown_with_parentheses() {
        let (cases, _, errors) = cases(vec![parse_quote!(#[case = "big"])]);
        assert!(cases.is_empty());
        assert_eq!(
            errors,
            ["`#[case]` takes its options in parentheses: write `#[case(name = \"big\", ...)]` with the options this case changes"]
        );
    }

    #[test]
    fn values_of_different_cases_have_different_ids() {
        let (cases, _, _) = cases(vec![
            parse_quote!(#[case(name = "a", growth = "1MB")]),
            parse_quote!(#[case(name = "b", growth = "1MB")]),
        ]);
        assert_ne!(cases[0].storage[0].id, cases[1].storage[0].id);
    }
}
