//! A collector of compile errors.
//!
//! Stopping at the first mistake would make the user fix an attribute one error per build, so
//! every stage records what it finds here and carries on with the values that are still
//! usable. At the end the errors are joined with [`syn::Error::combine`], which makes rustc
//! report each one at its own token.

use proc_macro2::{Punct, Spacing, Span, TokenStream, TokenTree};
use quote::ToTokens;
use std::collections::HashSet;
use std::fmt::Display;

/// The errors found so far.
#[derive(Default)]
pub struct Errors {
    errors: Vec<syn::Error>,
    /// Keys of errors already reported by [`Errors::once`].
    seen: HashSet<String>,
}

impl Errors {
    /// An empty collector.
    pub fn new() -> Self {
        Errors::default()
    }

    /// Records an error.
    pub fn push(&mut self, error: syn::Error) {
        self.errors.push(error);
    }

    /// Records `message` at `span`.
    pub fn error(&mut self, span: Span, message: impl Display) {
        self.push(syn::Error::new(span, message));
    }

    /// Records `message` under all of `tokens`.
    ///
    /// Stable rustc cannot join spans inside a proc macro, but an error built from tokens
    /// keeps its first and last span, so the whole of `&mut self` or `<T>` is underlined.
    pub fn spanned(&mut self, tokens: impl ToTokens, message: impl Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    /// Records `message` from the start of `start` to the end of `end`.
    pub fn range(&mut self, start: Span, end: Span, message: impl Display) {
        let mark = |span| {
            let mut punct = Punct::new('.', Spacing::Alone);
            punct.set_span(span);
            TokenTree::Punct(punct)
        };
        let tokens: TokenStream = [mark(start), mark(end)].into_iter().collect();
        self.spanned(tokens, message);
    }

    /// Records `message` at `span` unless an error with the same `key` was recorded before.
    ///
    /// Checks run once per cell, and a matrix repeats one declared value in many cells; the
    /// key names the check and the declared values involved so that each mistake is reported
    /// once however many cells inherit it.
    pub fn once(&mut self, key: String, span: Span, message: impl Display) {
        if self.seen.insert(key) {
            self.error(span, message);
        }
    }

    /// How many errors were recorded so far, to tell whether one stage found any.
    pub fn count(&self) -> usize {
        self.errors.len()
    }

    /// Whether nothing was recorded.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }

    /// The messages recorded, for tests.
    #[cfg(test)]
    pub fn messages(&self) -> Vec<String> {
        self.errors.iter().map(ToString::to_string).collect()
    }

    /// `Ok` if nothing was recorded, else every error combined into one.
    pub fn finish(self) -> syn::Result<()> {
        let mut errors = self.errors.into_iter();
        match errors.next() {
            None => Ok(()),
            Some(mut first) => {
                for error in errors {
                    first.combine(error);
                }
                Err(first)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finish_combines_every_error() {
        let mut errors = Errors::new();
        assert!(errors.is_empty());
        errors.error(Span::call_site(), "first");
        errors.error(Span::call_site(), "second");
        let combined = errors.finish().unwrap_err();
        let messages: Vec<String> = combined.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(messages, ["first", "second"]);
    }

    #[test]
    fn once_reports_a_key_a_single_time() {
        let mut errors = Errors::new();
        errors.once("a".into(), Span::call_site(), "x");
        errors.once("a".into(), Span::call_site(), "x");
        errors.once("b".into(), Span::call_site(), "y");
        assert_eq!(errors.messages(), ["x", "y"]);
    }

    #[test]
    fn spanned_and_range_record_a_message() {
        let mut errors = Errors::new();
        errors.spanned(quote::quote!(&mut self), "a");
        errors.range(Span::call_site(), Span::call_site(), "b");
        assert_eq!(errors.messages(), ["a", "b"]);
    }

    #[test]
    fn nothing_recorded_is_ok() {
        assert!(Errors::new().finish().is_ok());
    }
}
