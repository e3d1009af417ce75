//! The `#[case(name = "...", ...)]` helper attributes: named cells with their own overrides of
//! storage options and, optionally, their own `backends`.
//!
//! `case` is not a registered attribute, so every `#[case]` must be removed from the function
//! before it is emitted again, also when there are errors; otherwise rustc would add a
//! "cannot find attribute `case`" error to the ones reported here.

use crate::errors::Errors;
use crate::options::{self, Spanned};
use crate::parse;
use crate::setting::{Backend, Setting};
use crate::symbol;
use proc_macro2::Span;
use std::collections::HashMap;
use syn::spanned::Spanned as _;
use syn::{Attribute, Meta};

/// One `#[case]`.
#[derive(Debug, Clone)]
pub struct Case {
    /// The case's name, which starts the names of its cells.
    pub name: Spanned<String>,
    /// The storage options this case sets, overriding `#[db_bench]`'s.
    pub storage: Vec<Setting>,
    /// The backends this case's cells run on, replacing `#[db_bench]`'s `backends`.
    pub backends: Option<Spanned<Vec<Backend>>>,
}

/// Removes every `#[case]` from `attrs` and returns the valid ones in order.
///
/// A case with an invalid or duplicate name is reported and left out.
pub fn take_cases(attrs: &mut Vec<Attribute>, errors: &mut Errors) -> Vec<Case> {
    let (cases, others): (Vec<Attribute>, Vec<Attribute>) = std::mem::take(attrs)
        .into_iter()
        .partition(|attr| attr.path().is_ident(symbol::CASE));
    *attrs = others;

    let mut out = Vec::new();
    let mut names: HashMap<String, Span> = HashMap::new();
    // Attribute number 0 is `#[db_bench]`; cases count from 1 so their values have distinct ids.
    for (index, attr) in cases.iter().enumerate() {
        let Some(case) = parse_case(attr, index + 1, errors) else {
            continue;
        };
        if names.contains_key(&case.name.value) {
            let message = format!(
                "duplicate case name {:?}: each case becomes a test, so names must be unique; rename this case",
                case.name.value
            );
            errors.error(case.name.span, message);
            continue;
        }
        names.insert(case.name.value.clone(), case.name.span);
        out.push(case);
    }
    out
}

/// Parses one `#[case(...)]`.
fn parse_case(attr: &Attribute, index: usize, errors: &mut Errors) -> Option<Case> {
    let tokens = match &attr.meta {
        Meta::List(list) => list.tokens.clone(),
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
            return None;
        }
        Meta::Path(_) => {
            let message = "`#[case]` needs a name and the options it changes: write `#[case(name = \"big_growth\", growth = \"1024MB\")]`";
            errors.spanned(attr, message);
            return None;
        }
    };
    let raw = parse::parse_options(tokens, index, errors);
    let has_name = raw.iter().any(|option| option.key == "name");
    let options = options::case_options(raw, errors);
    if !has_name {
        let message = "this `#[case]` has no name: add `name = \"...\"` with a snake_case name, which becomes the name of the case's test";
        errors.error(attr.path().span(), message);
    }
    Some(Case {
        name: options.name?,
        storage: options.storage,
        backends: options.backends,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbol::Key;
    use syn::parse_quote;

    fn cases(attrs: Vec<Attribute>) -> (Vec<Case>, Vec<Attribute>, Vec<String>) {
        let mut attrs = attrs;
        let mut errors = Errors::new();
        let cases = take_cases(&mut attrs, &mut errors);
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
