//! Checks of the annotated function: the runner calls it as
//! `async fn(&mut Session) -> dbbench_core::Result<()>`.
//!
//! The generated code would fail to compile for any other shape anyway, but with an error deep
//! inside generated code; checking here puts a sentence saying what to change on the token
//! that is wrong. Types are matched by their last path segment because the macro cannot
//! resolve names: `Session`, `dbbench_core::Session` and an alias all pass, and rustc reports
//! a real type mismatch at the user's own tokens.

use crate::errors::Errors;
use crate::symbol;
use syn::{FnArg, ItemFn, ReturnType, Type};

/// Checks the function's attributes and signature, recording every problem.
pub fn check(func: &ItemFn, errors: &mut Errors) {
    for attr in &func.attrs {
        if attr
            .path()
            .segments
            .last()
            .is_some_and(|s| s.ident == symbol::DB_BENCH)
        {
            let message = "`#[db_bench]` is applied twice; keep one, and declare further configurations with lists or `#[case]`";
            errors.spanned(attr, message);
        }
    }
    let sig = &func.sig;
    if let Some(token) = &sig.constness {
        errors.error(
            token.span,
            "a benchmark cannot be a `const fn`: remove `const`",
        );
    }
    if let Some(token) = &sig.unsafety {
        let message = "a benchmark cannot be `unsafe`: remove `unsafe`, since the runner calls it as a safe function";
        errors.error(token.span, message);
    }
    if let Some(abi) = &sig.abi {
        let message = "a benchmark cannot have an ABI: remove `extern`, since the runner calls it as a Rust function";
        errors.spanned(abi, message);
    }
    if sig.asyncness.is_none() {
        let message = "a benchmark must be an `async fn`: add `async` before `fn`";
        errors.error(sig.fn_token.span, message);
    }
    if !sig.generics.params.is_empty() {
        let message = "a benchmark cannot be generic: remove the generic parameters, since the runner calls it with one fixed signature";
        errors.spanned(&sig.generics, message);
    } else if let Some(clause) = &sig.generics.where_clause {
        errors.spanned(
            clause,
            "a benchmark cannot have a `where` clause: remove it",
        );
    }
    if let Some(variadic) = &sig.variadic {
        errors.spanned(variadic, "a benchmark cannot be variadic: remove `...`");
    }
    arguments(func, errors);
    output(func, errors);
}

fn arguments(func: &ItemFn, errors: &mut Errors) {
    let sig = &func.sig;
    let mut typed = Vec::new();
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(receiver) => {
                let message = "a benchmark cannot be a method: remove `self` and make it a free function that takes `db: &mut Session`";
                errors.spanned(receiver, message);
            }
            FnArg::Typed(arg) => typed.push(arg),
        }
    }
    // A receiver was already reported; counting it again as an extra argument adds nothing.
    let has_receiver = sig.receiver().is_some();
    match typed.as_slice() {
        [] if !has_receiver => {
            let message =
                "a benchmark takes one argument, the database session: write `(db: &mut Session)`";
            errors.error(sig.paren_token.span.join(), message);
        }
        [] => {}
        [first, rest @ ..] => {
            if !is_mut_session(&first.ty) {
                let message = "a benchmark's argument must be `&mut Session`, a mutable reference to `dbbench_core::Session`: change this type";
                errors.spanned(&first.ty, message);
            }
            if !rest.is_empty() {
                let message =
                    "a benchmark takes exactly one argument, `db: &mut Session`: remove the others";
                errors.spanned(quote::quote!(#(#rest),*), message);
            }
        }
    }
}

/// `&mut Session`, `&'a mut dbbench_core::Session`, …
fn is_mut_session(ty: &Type) -> bool {
    match ty {
        Type::Group(group) => is_mut_session(&group.elem),
        Type::Paren(paren) => is_mut_session(&paren.elem),
        Type::Reference(reference) if reference.mutability.is_some() => {
            last_segment_is(&reference.elem, "Session")
        }
        _ => false,
    }
}

fn last_segment_is(ty: &Type, name: &str) -> bool {
    match ty {
        Type::Group(group) => last_segment_is(&group.elem, name),
        Type::Path(path) => path.path.segments.last().is_some_and(|s| s.ident == name),
        _ => false,
    }
}

fn output(func: &ItemFn, errors: &mut Errors) {
    match &func.sig.output {
        ReturnType::Default => {
            let message = "a benchmark must return `dbbench_core::Result<()>`: add `-> Result<()>` after the arguments";
            errors.error(func.sig.paren_token.span.close(), message);
        }
        ReturnType::Type(_, ty) if !last_segment_is(ty, "Result") => {
            let message = "a benchmark must return `dbbench_core::Result<()>`: change this type to `Result<()>`";
            errors.spanned(ty, message);
        }
        ReturnType::Type(..) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn errors_of(func: ItemFn) -> Vec<String> {
        let mut errors = Errors::new();
        check(&func, &mut errors);
        errors.messages()
    }

    #[test]
    fn accepts_the_expected_shape() {
        let ok: Vec<ItemFn> = vec![
            parse_quote!(
                async fn a(db: &mut Session) -> Result<()> {}
            ),
            parse_quote!(
                pub async fn b(_: &mut dbbench_core::Session) -> dbbench_core::Result<()> {}
            ),
            parse_quote!(
                async fn c(mut db: &'static mut Session) -> Result<()> {}
            ),
        ];
        for func in ok {
            assert_eq!(errors_of(func), Vec::<String>::new());
        }
    }

    #[test]
    fn reports_each_problem_of_the_signature() {
        let errors = errors_of(parse_quote!(
            const unsafe extern "C" fn f<T>(db: &Session, x: u32) {}
        ));
        assert_eq!(errors.len(), 8, "{errors:?}");
        assert!(errors[0].contains("remove `const`"));
        assert!(errors[1].contains("remove `unsafe`"));
        assert!(errors[2].contains("remove `extern`"));
        assert!(errors[3].contains("add `async` before `fn`"));
        assert!(errors[4].contains("cannot be generic"));
        assert!(errors[5].contains("must be `&mut Session`"));
        assert!(errors[6].contains("exactly one argument"));
        assert!(errors[7].contains("add `-> Result<()>`"));
        assert!(errors_of(parse_quote!(
            async fn f(db: &mut Session) {}
        ))[0]
            .contains("add `-> Result<()>`"));
    }

    #[test]
    fn rejects_methods_missing_arguments_and_other_return_types() {
        let errors = errors_of(parse_quote!(
            async fn f(&mut self) -> Result<()> {}
        ));
        assert_eq!(errors.len(), 1);
        assert!(errors[0].contains("cannot be a method"));
        let errors = errors_of(parse_quote!(
            async fn f() -> Result<()> {}
        ));
        assert!(errors[0].contains("takes one argument"));
        let errors = errors_of(parse_quote!(
            async fn f(db: &mut Session) -> u32 {}
        ));
        assert!(errors[0].contains("change this type to `Result<()>`"));
        let errors = errors_of(parse_quote!(
            async fn f(db: Session) -> Result<()> {}
        ));
        assert!(errors[0].contains("must be `&mut Session`"));
        let errors = errors_of(parse_quote!(
            async fn f(db: &mut Session) -> Result<()>
            where
                u8: Copy,
            {
            }
        ));
        assert!(errors[0].contains("`where` clause"));
    }

    #[test]
    fn rejects_a_second_db_bench() {
        let errors = errors_of(parse_quote! {
            #[dbbench_core::db_bench(repeat = 2)]
            async fn f(db: &mut Session) -> Result<()> {}
        });
        assert_eq!(errors.len(), 1);
        assert!(errors[0].contains("applied twice"));
    }
}
