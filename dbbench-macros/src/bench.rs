//! The analysis of one `#[db_bench]`: every stage run in order, every error collected.
//!
//! Stages run even after an earlier one found errors, on whatever values are still valid, so
//! that one build reports everything. Code is generated only if nothing was found, because a
//! benchmark with a dropped option would silently measure something else.

use crate::case;
use crate::check;
use crate::errors::Errors;
use crate::matrix::{self, Cell};
use crate::not_on::{self, NotOn};
use crate::options::{self, RunOptions};
use crate::parse;
use crate::signature;
use proc_macro2::TokenStream;
use syn::{Attribute, Expr, ItemFn, Lit, Meta};

/// A benchmark ready to be generated.
#[derive(Debug)]
pub struct Bench {
    /// The first line of the function's documentation, or empty.
    pub title: String,
    /// Options that apply to every cell.
    pub run: RunOptions,
    /// The cells, in order.
    pub cells: Vec<Cell>,
    /// Backends the benchmark's question does not apply to, with the reason (`#[not_on]`).
    pub not_on: Vec<NotOn>,
    /// Each cell of a `#[cases]` case with the cell it was made from (`pg_test_1`, `test_1`),
    /// for the article's columns.
    pub mirrors: Vec<(String, String)>,
}

/// Analyses `#[db_bench(args)]` on `func`, removing the `#[case]` and `#[not_on]` attributes from
/// `func`.
///
/// `func` is stripped of its cases even when there are errors, so that the caller can emit it
/// again without rustc adding "cannot find attribute `case`" to the real errors.
pub fn analyse(args: TokenStream, func: &mut ItemFn) -> syn::Result<Bench> {
    let mut errors = Errors::new();
    let raw = parse::parse_options(args, 0, &mut errors);
    let options = options::bench_options(raw, &mut errors);
    let cases = case::take_cases(&mut func.attrs, &options.storage_keys(), &mut errors);
    let not_on = not_on::take_not_on(&mut func.attrs, &mut errors);
    if let Some(backends) = &options.run.backends {
        for n in not_on
            .iter()
            .filter(|n| !backends.value.contains(&n.backend.value))
        {
            let word = n.backend.value.keyword();
            let message = format!(
                "`#[db_bench]`'s `backends` already leaves {word} out, so there is nothing for \
                 `#[not_on]` to explain: remove `{word}` from `#[not_on]`, or add \"{word}\" to \
                 `backends`"
            );
            errors.error(n.backend.span, message);
        }
    }
    for own in &options.run.per_backend {
        if not_on.iter().any(|n| n.backend.value == own.backend.value) {
            let word = own.backend.value.keyword();
            let message = format!(
                "`#[not_on]` says the question does not apply on {word}, where nothing runs, so \
                 `{word}(...)` has nothing to bound: remove it"
            );
            errors.error(own.backend.span, message);
        }
    }
    signature::check(func, &mut errors);
    let cells = matrix::cells(&options, &cases, &mut errors);
    check::check(&options, &cases, &cells, &mut errors);
    errors.finish()?;
    let mirrors = mirrors(&cases, &cells);
    Ok(Bench {
        title: title(&func.attrs),
        run: options.run,
        cells,
        not_on,
        mirrors,
    })
}

/// `(cell, the cell it mirrors)` for every cell of a case made by `#[cases]`: the case's name
/// replaced by its source's, the matrix part kept (`pg_test_1__data_files_8`, `test_1__data_files_8`).
fn mirrors(cases: &[case::Case], cells: &[Cell]) -> Vec<(String, String)> {
    cells
        .iter()
        .filter_map(|cell| {
            let name = cell.case.as_deref()?;
            let case = cases.iter().find(|c| c.name.value == name)?;
            let source = case.mirrors.as_deref()?;
            Some((
                cell.name.clone(),
                format!("{source}{}", &cell.name[name.len()..]),
            ))
        })
        .collect()
}

/// The first non-empty line of the doc comment: what reports show as the benchmark's title.
pub fn title(attrs: &[Attribute]) -> String {
    attrs
        .iter()
        .filter(|attr| attr.path().is_ident("doc"))
        .filter_map(|attr| match &attr.meta {
            // `#[doc = include_str!(..)]` and the like cannot be read here; they are skipped.
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(lit) => match &lit.lit {
                    Lit::Str(s) => Some(s.value()),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .flat_map(|doc| {
            doc.lines()
                .map(|line| line.trim().to_string())
                .collect::<Vec<_>>()
        })
        // A `/** ... */` block comment starts its lines with ` * `.
        .map(|line| line.trim_start_matches('*').trim().to_string())
        .find(|line| !line.is_empty())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;
    use syn::parse_quote;

    fn analysed(args: TokenStream, func: ItemFn) -> Result<(Bench, ItemFn), Vec<String>> {
        let mut func = func;
        match analyse(args, &mut func) {
            Ok(bench) => Ok((bench, func)),
            Err(error) => Err(error.into_iter().map(|e| e.to_string()).collect()),
        }
    }

    #[test]
    fn analyses_the_example_of_the_documentation() {
        let func: ItemFn = parse_quote! {
            /// Doubling the charge table.
            ///
            /// More text.
            #[case(name = "test_3", growth = "1024MB", log_growth = "1024MB")]
            #[case(name = "test_4", growth = "1024MB", log_pregrow = "4000MB", log_size = "32000MB")]
            async fn double_charges(db: &mut Session) -> Result<()> { Ok(()) }
        };
        let args = quote!(
            growth = "1MB",
            ifi = false,
            data_files = [1, 2, 4, 8],
            repeat = 3,
            fixture = "credit"
        );
        let (bench, func) = analysed(args, func).unwrap();
        assert_eq!(bench.title, "Doubling the charge table.");
        assert_eq!(bench.cells.len(), 8);
        assert_eq!(bench.cells[0].name, "test_3__data_files_1");
        assert_eq!(bench.cells[7].name, "test_4__data_files_8");
        assert!(func.attrs.iter().all(|a| a.path().is_ident("doc")));
    }

    #[test]
    fn reports_errors_of_every_stage_at_once() {
        let func: ItemFn = parse_quote! {
            #[case(name = "a", repeat = 2)]
            fn f(db: &mut Session) -> Result<()> { Ok(()) }
        };
        let args = quote!(grwth = "1MB", log_pregrow = "1GB", baseline = "nope");
        let errors = analysed(args, func).unwrap_err();
        assert_eq!(errors.len(), 5, "{errors:?}");
        assert!(errors[0].starts_with("unknown option `grwth`; did you mean `growth`?"));
        assert!(errors[1].starts_with("`repeat` is a run option"));
        assert!(errors[2].contains("add `async`"));
        assert!(errors[3].starts_with("`log_pregrow` grows the log"));
        assert!(errors[4].starts_with("`baseline` picks the cell"));
    }

    #[test]
    fn strips_cases_even_when_there_are_errors() {
        let func: ItemFn = parse_quote! {
            #[case(name = "Bad")]
            async fn f(db: &mut Session) -> Result<()> { Ok(()) }
        };
        let mut func = func;
        assert!(analyse(quote!(), &mut func).is_err());
        assert!(func.attrs.is_empty());
    }

    #[test]
    fn title_is_the_first_non_empty_doc_line() {
        let attrs: Vec<Attribute> = vec![
            parse_quote!(#[doc = ""]),
            parse_quote!(#[doc = include_str!("x")]),
            parse_quote!(#[doc = "\n * Block title.\n * more\n"]),
        ];
        assert_eq!(title(&attrs), "Block title.");
        assert_eq!(title(&[]), "");
    }
}
