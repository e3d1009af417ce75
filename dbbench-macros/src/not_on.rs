//! The `#[not_on(postgres = "…")]` helper attribute: backends a benchmark's question does not
//! apply to, each with the sentence that says why. There the benchmark runs no cell, and the
//! console, table, report and snapshot show that sentence in one line instead of a skipped row
//! per cell (the data-files suite on PostgreSQL, which has no filegroups).
//!
//! Like `#[case]`, `not_on` is not a registered attribute, so it is always removed from the
//! function, also when there are errors.

use crate::errors::Errors;
use crate::options::Spanned;
use crate::parse::{self, RawValue, ValueKind};
use crate::setting::Backend;
use crate::symbol;
use syn::spanned::Spanned as _;
use syn::{Attribute, Meta};

/// One backend of `#[not_on]` with its reason.
#[derive(Debug, Clone)]
pub struct NotOn {
    /// The backend the question does not apply to.
    pub backend: Spanned<Backend>,
    /// Why, as a sentence for the reader.
    pub reason: String,
}

/// The value id of `#[not_on]`'s values: after every `#[case]` (which count from 1).
const ATTRIBUTE_INDEX: usize = usize::MAX / 2;

/// Removes every `#[not_on]` from `attrs` and returns its valid entries in order.
pub fn take_not_on(attrs: &mut Vec<Attribute>, errors: &mut Errors) -> Vec<NotOn> {
    let (found, others): (Vec<Attribute>, Vec<Attribute>) = std::mem::take(attrs)
        .into_iter()
        .partition(|attr| attr.path().is_ident(symbol::NOT_ON));
    *attrs = others;
    let mut out: Vec<NotOn> = Vec::new();
    for (index, attr) in found.iter().enumerate() {
        if index > 0 {
            let message = "`#[not_on]` is given twice: name every backend in one attribute, \
                           `#[not_on(mssql = \"…\", postgres = \"…\")]`";
            errors.error(attr.path().span(), message);
            continue;
        }
        let Meta::List(list) = &attr.meta else {
            let message = "`#[not_on]` names backends with the reason the benchmark's question \
                           does not apply there: write `#[not_on(postgres = \"PostgreSQL has no \
                           filegroups\")]`";
            errors.spanned(attr, message);
            continue;
        };
        for option in parse::parse_options(list.tokens.clone(), ATTRIBUTE_INDEX, errors) {
            let word = option.key.to_string();
            let Some((_, backend)) = Backend::all().find(|(keyword, _)| *keyword == word) else {
                let known: Vec<String> = Backend::all().map(|(k, _)| format!("`{k}`")).collect();
                let hint = crate::suggest::nearest(&word, Backend::all().map(|(k, _)| k))
                    .map(|k| format!("did you mean `{k}`? "))
                    .unwrap_or_default();
                let message = format!(
                    "`{word}` is not a backend; {hint}`#[not_on]` takes {} with the reason, such \
                     as `postgres = \"PostgreSQL has no filegroups\"`",
                    known.join(", ")
                );
                errors.error(option.key.span(), message);
                continue;
            };
            let reason = match &option.value {
                Some(RawValue::One(value)) => match &value.kind {
                    ValueKind::Str(text) if !text.trim().is_empty() => Some(text.trim().into()),
                    _ => {
                        let message = format!(
                            "`{word}` in `#[not_on]` takes the reason as a non-empty string: \
                             `{word} = \"why the question does not apply on {word}\"`"
                        );
                        errors.range(value.span, value.end, message);
                        None
                    }
                },
                Some(RawValue::List(items)) => {
                    let message = format!(
                        "`{word}` in `#[not_on]` takes one reason, not a list: \
                         `{word} = \"why the question does not apply on {word}\"`"
                    );
                    errors.error(items.span, message);
                    None
                }
                Some(RawValue::Nested(nested)) => {
                    let message = format!(
                        "`{word}` in `#[not_on]` takes its reason after `=`: \
                         `{word} = \"why the question does not apply on {word}\"`"
                    );
                    errors.error(nested.span, message);
                    None
                }
                None => {
                    let message = format!(
                        "`{word}` in `#[not_on]` needs the reason the outputs show: \
                         `{word} = \"why the question does not apply on {word}\"`"
                    );
                    errors.error(option.key.span(), message);
                    None
                }
            };
            if out.iter().any(|n| n.backend.value == backend) {
                let message = format!("`#[not_on]` names {word} twice; remove one of them");
                errors.error(option.key.span(), message);
                continue;
            }
            if let Some(reason) = reason {
                out.push(NotOn {
                    backend: Spanned {
                        value: backend,
                        span: option.key.span(),
                    },
                    reason,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn take(attrs: Vec<Attribute>) -> (Vec<NotOn>, Vec<Attribute>, Vec<String>) {
        let mut attrs = attrs;
        let mut errors = Errors::new();
        let found = take_not_on(&mut attrs, &mut errors);
        (found, attrs, errors.messages())
    }

    #[test]
    fn takes_backends_with_reasons_and_leaves_other_attributes() {
        let (found, rest, errors) = take(vec![
            parse_quote!(#[doc = "x"]),
            parse_quote!(#[not_on(postgres = " no filegroups ", mssql = "why")]),
        ]);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(rest.len(), 1);
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].backend.value.keyword(), "postgres");
        assert_eq!(found[0].reason, "no filegroups");
        assert_eq!(found[1].backend.value.keyword(), "mssql");
    }

    #[test]
    fn reports_every_problem() {
        let (found, rest, errors) = take(vec![
            parse_quote!(#[not_on(oracle = "x", postgres = "", mssql, embedded = ["a"])]),
            parse_quote!(#[not_on(postgres = "again")]),
            parse_quote!(#[not_on]),
        ]);
        assert!(found.is_empty() && rest.is_empty());
        assert_eq!(errors.len(), 6, "{errors:?}");
        assert!(errors[0].starts_with("`oracle` is not a backend; `#[not_on]` takes"));
        assert!(errors[1].starts_with("`postgres` in `#[not_on]` takes the reason"));
        assert!(errors[2].starts_with("`mssql` in `#[not_on]` needs the reason"));
        assert!(errors[3].starts_with("`embedded` in `#[not_on]` takes one reason"));
        assert!(errors[4].starts_with("`#[not_on]` is given twice"));
        assert!(errors[5].starts_with("`#[not_on]` is given twice"));
    }

    #[test]
    fn a_backend_is_named_once() {
        let (found, _, errors) = take(vec![
            parse_quote!(#[not_on(postgres = "a", postgres = "b")]),
        ]);
        assert_eq!(found.len(), 1);
        assert_eq!(
            errors,
            ["`#[not_on]` names postgres twice; remove one of them"]
        );
    }
}
