//! The syntax of an attribute's arguments: `key = value, key = [value, …], …`.
//!
//! This stage only reads tokens; whether a key exists or a value fits it is decided later (in
//! `options.rs` and `value.rs`), so that a misspelt key or a wrong value is reported with a
//! message about that option rather than a generic parse error. A syntax error in one entry is
//! recorded and the parser skips to the next top-level comma, so the other entries are still
//! checked in the same build.

use crate::errors::Errors;
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{bracketed, token, Expr, Ident, Lit, Token, UnOp};

/// One `key = value` entry as written.
#[derive(Debug)]
pub struct RawOption {
    /// The option's name.
    pub key: Ident,
    /// The value after `=`; `None` when the entry is a bare name.
    pub value: Option<RawValue>,
}

/// The right-hand side of an entry.
#[derive(Debug)]
pub enum RawValue {
    /// A single value: `growth = "1MB"`.
    One(Value),
    /// A bracketed list: `data_files = [1, 2, 4]`.
    List(List),
    /// Options in parentheses after the name, `postgres(budget = "5m")`: only a backend takes
    /// them (its own run options); anywhere else `options.rs` says to write `key = value`.
    Nested(Nested),
}

/// The parenthesised options of `postgres(budget = "5m", min_repeat = 3)`, parsed by the caller
/// with [`parse_options`] so that their errors are collected like any others.
#[derive(Debug)]
pub struct Nested {
    /// The span of the whole `(...)`.
    pub span: Span,
    /// The tokens inside the parentheses.
    pub tokens: TokenStream,
}

/// A bracketed list of values.
#[derive(Debug)]
pub struct List {
    /// The span of the whole `[...]`, where errors about the list as a whole point.
    pub span: Span,
    /// The values, in order.
    pub items: Vec<Value>,
}

/// One value token (or expression) with where it came from.
#[derive(Debug, Clone)]
pub struct Value {
    /// What kind of literal it is.
    pub kind: ValueKind,
    /// The span of its first token, where errors about it point.
    pub span: Span,
    /// The span of its last token (`-1` is two tokens), so errors can underline all of it.
    pub end: Span,
    /// The tokens as written, for messages (`1 MX`, `true`, `-1`).
    pub text: String,
    /// Which attribute, entry and list item it is.
    pub id: ValueId,
}

/// The literal kinds the options take; anything else is kept as [`ValueKind::Other`] so that
/// the option can say what it expected instead.
#[derive(Debug, Clone, PartialEq)]
pub enum ValueKind {
    /// A string literal, unescaped.
    Str(String),
    /// An integer literal, possibly negative, with its suffix (`1MB` lexes as `1` + `MB`).
    Int {
        /// The value; huge literals saturate, which the range checks then reject.
        value: i128,
        /// The suffix after the digits, empty if none.
        suffix: String,
    },
    /// `true` or `false`.
    Bool(bool),
    /// Any other expression.
    Other,
}

/// Identifies one written value, so that a check repeated over many cells can tell whether it
/// is looking at the same declaration again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ValueId {
    /// The attribute: 0 for `#[db_bench]`, then one per `#[case]`.
    pub attr: usize,
    /// The entry within the attribute.
    pub entry: usize,
    /// The item within a list (0 for a single value).
    pub item: usize,
}

/// Parses the arguments of attribute number `attr`, recording syntax errors in `errors`.
pub fn parse_options(tokens: TokenStream, attr: usize, errors: &mut Errors) -> Vec<RawOption> {
    let parser = |input: ParseStream| -> syn::Result<Vec<RawOption>> {
        let mut options = Vec::new();
        let mut entry = 0;
        while !input.is_empty() {
            match parse_entry(input, attr, entry) {
                Ok(option) => options.push(option),
                Err(error) => {
                    errors.push(error);
                    skip_past_comma(input);
                    entry += 1;
                    continue;
                }
            }
            entry += 1;
            if input.is_empty() {
                break;
            }
            if let Err(error) = input.parse::<Token![,]>() {
                errors.push(syn::Error::new(
                    error.span(),
                    "expected `,` between options: write `key = value, key = value`",
                ));
                skip_past_comma(input);
            }
        }
        Ok(options)
    };
    // The closure consumes every token itself, so the parser can only fail if syn's own
    // end-of-input check disagrees; keep the error rather than panic if it ever does.
    parser.parse2(tokens).unwrap_or_else(|error| {
        errors.push(error);
        Vec::new()
    })
}

/// Parses `key`, `key = value` or `key = [values]`.
fn parse_entry(input: ParseStream, attr: usize, entry: usize) -> syn::Result<RawOption> {
    if !input.peek(Ident::peek_any) {
        return Err(input
            .error("expected an option name such as `growth`: write `key = value, key = value`"));
    }
    let key = input.call(Ident::parse_any)?;
    let id = |item| ValueId { attr, entry, item };
    if input.peek(Token![=]) {
        let eq: Token![=] = input.parse()?;
        if input.is_empty() || input.peek(Token![,]) {
            return Err(syn::Error::new(
                eq.span,
                format!("expected a value after `{key} =`"),
            ));
        }
        let value = if input.peek(token::Bracket) {
            let content;
            let bracket = bracketed!(content in input);
            let exprs = Punctuated::<Expr, Token![,]>::parse_terminated(&content)?;
            let items = exprs
                .into_iter()
                .enumerate()
                .map(|(item, expr)| to_value(&expr, id(item)))
                .collect();
            RawValue::List(List {
                span: bracket.span.join(),
                items,
            })
        } else {
            RawValue::One(to_value(&input.parse()?, id(0)))
        };
        Ok(RawOption {
            key,
            value: Some(value),
        })
    } else if input.peek(token::Paren) {
        let group: proc_macro2::Group = input.parse()?;
        Ok(RawOption {
            key,
            value: Some(RawValue::Nested(Nested {
                span: group.span(),
                tokens: group.stream(),
            })),
        })
    } else if input.is_empty() || input.peek(Token![,]) {
        Ok(RawOption { key, value: None })
    } else {
        Err(input.error(format!("expected `=` after `{key}`: write `{key} = value`")))
    }
}

/// Classifies an expression as one of the literal kinds options take.
fn to_value(expr: &Expr, id: ValueId) -> Value {
    let kind = classify(expr);
    // Token text would print `-1` as `- 1`; integers are shown the way they were meant.
    let tokens = expr.to_token_stream().to_string();
    let text = match &kind {
        ValueKind::Int { .. } => tokens.replace(' ', ""),
        _ => tokens,
    };
    let span = expr.span();
    let end = expr
        .to_token_stream()
        .into_iter()
        .last()
        .map_or(span, |token| token.span());
    Value {
        kind,
        span,
        end,
        text,
        id,
    }
}

fn classify(expr: &Expr) -> ValueKind {
    match expr {
        // A value passed through a `macro_rules!` `$x:expr` arrives wrapped in an invisible group.
        Expr::Group(group) => classify(&group.expr),
        Expr::Lit(lit) => match &lit.lit {
            Lit::Str(s) => ValueKind::Str(s.value()),
            Lit::Int(int) => ValueKind::Int {
                value: int.base10_digits().parse().unwrap_or(i128::MAX),
                suffix: int.suffix().to_string(),
            },
            Lit::Bool(b) => ValueKind::Bool(b.value),
            _ => ValueKind::Other,
        },
        Expr::Unary(unary) if matches!(unary.op, UnOp::Neg(_)) => match classify(&unary.expr) {
            ValueKind::Int { value, suffix } => ValueKind::Int {
                value: -value,
                suffix,
            },
            _ => ValueKind::Other,
        },
        _ => ValueKind::Other,
    }
}

/// Skips tokens up to and including the next top-level comma, to resume after a bad entry.
fn skip_past_comma(input: ParseStream) {
    let _ = input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tree, next)) = rest.token_tree() {
            rest = next;
            if matches!(&tree, TokenTree::Punct(p) if p.as_char() == ',') {
                break;
            }
        }
        Ok(((), rest))
    });
}

/// Parses `tokens` as the value of one option, for tests of the later stages.
#[cfg(test)]
pub fn test_value(tokens: TokenStream) -> Value {
    let mut errors = Errors::new();
    let mut options = parse_options(quote::quote!(x = #tokens), 0, &mut errors);
    assert!(errors.is_empty(), "{:?}", errors.messages());
    match options.pop().and_then(|option| option.value) {
        Some(RawValue::One(value)) => value,
        other => panic!("expected one value, got {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn parse(tokens: TokenStream) -> (Vec<RawOption>, Vec<String>) {
        let mut errors = Errors::new();
        let options = parse_options(tokens, 0, &mut errors);
        (options, errors.messages())
    }

    fn one(option: &RawOption) -> &ValueKind {
        match &option.value {
            Some(RawValue::One(value)) => &value.kind,
            other => panic!("expected one value, got {other:?}"),
        }
    }

    #[test]
    fn reads_each_literal_kind() {
        let (options, errors) = parse(quote!(
            growth = "1MB",
            ifi = false,
            data_files = 4,
            maxdop = -1,
            x = 1.5
        ));
        assert!(errors.is_empty(), "{errors:?}");
        let keys: Vec<String> = options.iter().map(|o| o.key.to_string()).collect();
        assert_eq!(keys, ["growth", "ifi", "data_files", "maxdop", "x"]);
        assert_eq!(one(&options[0]), &ValueKind::Str("1MB".into()));
        assert_eq!(one(&options[1]), &ValueKind::Bool(false));
        let int = |value, suffix: &str| ValueKind::Int {
            value,
            suffix: suffix.into(),
        };
        assert_eq!(one(&options[2]), &int(4, ""));
        assert_eq!(one(&options[3]), &int(-1, ""));
        assert_eq!(one(&options[4]), &ValueKind::Other);
    }

    #[test]
    fn keeps_the_suffix_of_an_unquoted_size() {
        let (options, _) = parse(quote!(growth = 1MB));
        assert_eq!(
            one(&options[0]),
            &ValueKind::Int {
                value: 1,
                suffix: "MB".into()
            }
        );
    }

    #[test]
    fn reads_lists_with_ids() {
        let (options, errors) = parse(quote!(repeat = 3, data_files = [1, 2, 4,]));
        assert!(errors.is_empty());
        let Some(RawValue::List(list)) = &options[1].value else {
            panic!("expected a list");
        };
        assert_eq!(list.items.len(), 3);
        assert_eq!(
            list.items[2].id,
            ValueId {
                attr: 0,
                entry: 1,
                item: 2
            }
        );
    }

    #[test]
    fn a_bare_name_has_no_value() {
        let (options, errors) = parse(quote!(ifi, repeat = 2));
        assert!(errors.is_empty());
        assert!(options[0].value.is_none());
        assert_eq!(options.len(), 2);
    }

    #[test]
    fn recovers_after_a_syntax_error() {
        let (options, errors) =
            parse(quote!(growth = , ifi(true), "x" = 1, repeat = 2 3, warmup = 1));
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].contains("expected a value after `growth =`"));
        assert!(errors[1].contains("expected an option name"));
        assert!(errors[2].contains("expected `,` between options"));
        let keys: Vec<String> = options.iter().map(|o| o.key.to_string()).collect();
        assert_eq!(keys, ["ifi", "repeat", "warmup"]);
        assert!(matches!(options[0].value, Some(RawValue::Nested(_))));
    }

    #[test]
    fn accepts_keywords_as_names_so_they_can_be_reported_as_unknown() {
        let (options, errors) = parse(quote!(type = 1));
        assert!(errors.is_empty());
        assert_eq!(options[0].key.to_string(), "type");
    }

    #[test]
    fn empty_input_has_no_options() {
        let (options, errors) = parse(TokenStream::new());
        assert!(options.is_empty() && errors.is_empty());
    }
}
