//! Code generation: the user's function, unchanged, and beside it a module of the same name
//! holding the `BENCHMARK` static and one `#[test]` per cell.
//!
//! A function and a module may share a name because they live in different namespaces, which
//! keeps the function callable as before while `double_charges::BENCHMARK` and the test path
//! `double_charges::data_files_8` read naturally. Every path in the output is absolute and every
//! private helper starts with `__dbbench_`, so the expansion works in any module whatever it
//! imports or defines. The module reaches the function as `super::name`, so a benchmark must be
//! declared at module level, not inside a function body (the same holds for `rstest`).

use crate::bench::{self, Bench};
use crate::matrix::Cell;
use crate::options::{DEFAULT_DEFAULT_DIVISOR, DEFAULT_SMOKE_DIVISOR};
use crate::setting::{Backend, Fixture, GrowthValue, Order, Recovery, SizeValue, StorageValue};
use crate::symbol::Key;
use proc_macro2::{Literal, Span, TokenStream};
use quote::{format_ident, quote, quote_spanned, ToTokens};
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Item, ItemFn, LitStr};

/// The `#[db_bench]` attribute on `proc_macro2` tokens.
pub fn db_bench(args: TokenStream, item: TokenStream) -> TokenStream {
    let mut func = match syn::parse2::<Item>(item.clone()) {
        Ok(Item::Fn(func)) => func,
        Ok(other) => {
            let message = "`#[db_bench]` can only be applied to an `async fn` that takes `&mut Session`: move it onto such a function";
            let error = syn::Error::new(other.span(), message).to_compile_error();
            return quote!(#error #other);
        }
        Err(error) => {
            let error = error.to_compile_error();
            return quote!(#error #item);
        }
    };
    match bench::analyse(args, &mut func) {
        Ok(bench) => generate(&func, &bench),
        Err(error) => {
            let error = error.to_compile_error();
            quote!(#error #func)
        }
    }
}

/// The function followed by its module of cells.
pub fn generate(func: &ItemFn, bench: &Bench) -> TokenStream {
    let ident = &func.sig.ident;
    let name = ident.unraw().to_string();
    let vis = &func.vis;
    // The module must exist exactly when the function does, or it would refer to nothing.
    let cfgs = func.attrs.iter().filter(|attr| attr.path().is_ident("cfg"));
    // `#[ignore]` on the benchmark makes its cells opt-in, like on a plain test.
    let ignores: Vec<_> = func
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("ignore"))
        .collect();
    // The module repeats the function's name, and cell names join their parts with `__`,
    // which rustc's snake-case lint rejects though the names are deliberate.
    let allow_case = (!is_snake_case(&name) || bench.cells.iter().any(|c| !is_snake_case(&c.name)))
        .then(|| quote!(#[allow(non_snake_case)]));
    let module_doc = format!("dbbench cells of [`{name}()`].");
    let title = LitStr::new(&bench.title, Span::call_site());
    let run = run_spec(bench);
    let cells = bench.cells.iter().map(cell_spec);
    // Spanning the call with the return type points a type mismatch at the user's `-> ...`.
    let output_span = match &func.sig.output {
        syn::ReturnType::Type(_, ty) => ty.span(),
        syn::ReturnType::Default => ident.span(),
    };
    let call = quote_spanned!(output_span=> ::std::boxed::Box::pin(super::#ident(session)));
    let tests = bench.cells.iter().map(|cell| {
        let test = format_ident!("{}", cell.name, span = ident.span());
        let cell_name = LitStr::new(&cell.name, ident.span());
        quote_spanned! {ident.span()=>
            #[::core::prelude::v1::test]
            #(#ignores)*
            fn #test() {
                ::dbbench_core::__private::run_test(&BENCHMARK, #cell_name)
            }
        }
    });

    quote! {
        #func

        #(#cfgs)*
        #[doc = #module_doc]
        #allow_case
        #vis mod #ident {
            /// The benchmark description that runners use.
            // Outside `cargo test` no test refers to it; it is still the benchmark's entry point.
            #[allow(dead_code)]
            pub static BENCHMARK: ::dbbench_core::__private::BenchmarkSpec =
                ::dbbench_core::__private::BenchmarkSpec {
                    name: #name,
                    module_path: ::core::module_path!(),
                    manifest_dir: ::core::env!("CARGO_MANIFEST_DIR"),
                    source_file: ::core::file!(),
                    title: #title,
                    run: #run,
                    cells: &[#(#cells),*],
                    body: __dbbench_body,
                };

            fn __dbbench_body<'a>(
                session: &'a mut ::dbbench_core::__private::Session,
            ) -> ::dbbench_core::__private::BodyFuture<'a> {
                #call
            }

            #(#tests)*
        }
    }
}

/// Whether rustc's `non_snake_case` lint accepts `name`: no uppercase letter and, after any
/// leading underscores, no `__`.
fn is_snake_case(name: &str) -> bool {
    let name = name.trim_start_matches('_');
    !name.contains("__") && !name.chars().any(char::is_uppercase)
}

fn some(value: TokenStream) -> TokenStream {
    quote!(::core::option::Option::Some(#value))
}

fn none() -> TokenStream {
    quote!(::core::option::Option::None)
}

fn run_spec(bench: &Bench) -> TokenStream {
    let run = &bench.run;
    let repeat = Literal::u32_unsuffixed(run.repeat.as_ref().map_or(1, |r| r.value));
    let warmup = Literal::u32_unsuffixed(run.warmup.as_ref().map_or(0, |w| w.value));
    let fixture = match run.fixture.as_ref().map_or(Fixture::None, |f| f.value) {
        Fixture::None => quote!(None),
        Fixture::Credit => quote!(Credit),
    };
    let backends = backend_kinds(run.backends.iter().flat_map(|b| &b.value));
    let timeout = match &run.timeout {
        Some(ms) => {
            let ms = Literal::u64_unsuffixed(ms.value);
            some(quote!(::core::time::Duration::from_millis(#ms)))
        }
        None => none(),
    };
    let order = match run.order.as_ref().map_or(Order::Interleaved, |o| o.value) {
        Order::Interleaved => quote!(Interleaved),
        Order::Blocked => quote!(Blocked),
    };
    let baseline = match &run.baseline {
        Some(name) => some(name.value.to_token_stream()),
        None => none(),
    };
    let scale_storage = run.scale_storage.as_ref().is_some_and(|s| s.value);
    // The defaults are written out so that the expansion shows the fractions each scale uses.
    let smoke_divisor = Literal::u32_unsuffixed(
        run.smoke_divisor
            .as_ref()
            .map_or(DEFAULT_SMOKE_DIVISOR, |d| d.value),
    );
    let default_divisor = Literal::u32_unsuffixed(
        run.default_divisor
            .as_ref()
            .map_or(DEFAULT_DEFAULT_DIVISOR, |d| d.value),
    );
    quote! {
        ::dbbench_core::__private::RunSpec {
            repeat: #repeat,
            warmup: #warmup,
            fixture: ::dbbench_core::__private::FixtureKind::#fixture,
            backends: #backends,
            timeout: #timeout,
            order: ::dbbench_core::__private::Order::#order,
            baseline: #baseline,
            scale_storage: #scale_storage,
            smoke_divisor: #smoke_divisor,
            default_divisor: #default_divisor,
        }
    }
}

/// `&[…]` of the runtime's `BackendKind`s; empty when there are none.
fn backend_kinds<'b>(backends: impl IntoIterator<Item = &'b Backend>) -> TokenStream {
    let kinds = backends.into_iter().map(|backend| match backend {
        Backend::Embedded => quote!(::dbbench_core::__private::BackendKind::Embedded),
        Backend::Mssql => quote!(::dbbench_core::__private::BackendKind::Mssql),
        Backend::Postgres => quote!(::dbbench_core::__private::BackendKind::Postgres),
    });
    quote!(&[#(#kinds),*])
}

fn cell_spec(cell: &Cell) -> TokenStream {
    let get = |key: Key| cell.settings.get(&key).map(|s| &s.value);
    let opt = |key: Key| get(key).map_or_else(none, |value| some(storage_value(value)));
    let data_files = match get(Key::DataFiles) {
        Some(StorageValue::Count(n)) => Literal::u32_unsuffixed(*n),
        _ => Literal::u32_unsuffixed(1),
    };
    let data_on = match get(Key::DataOn) {
        Some(StorageValue::Volumes(names)) => quote!(&[#(#names),*]),
        _ => quote!(&[]),
    };
    let name = &cell.name;
    let backends = backend_kinds(cell.backends.iter().flat_map(|b| &b.value));
    let (data_size, growth, log_size, log_growth, log_pregrow, ifi, recovery, maxdop) = (
        opt(Key::DataSize),
        opt(Key::Growth),
        opt(Key::LogSize),
        opt(Key::LogGrowth),
        opt(Key::LogPregrow),
        opt(Key::Ifi),
        opt(Key::Recovery),
        opt(Key::Maxdop),
    );
    let (tempdb_files, tempdb_size, tempdb_growth, log_on) = (
        opt(Key::TempdbFiles),
        opt(Key::TempdbSize),
        opt(Key::TempdbGrowth),
        opt(Key::LogOn),
    );
    quote! {
        ::dbbench_core::__private::CellSpec {
            name: #name,
            storage: ::dbbench_core::__private::StorageSpec {
                data_files: #data_files,
                data_size: #data_size,
                growth: #growth,
                log_size: #log_size,
                log_growth: #log_growth,
                log_pregrow: #log_pregrow,
                ifi: #ifi,
                recovery: #recovery,
                maxdop: #maxdop,
                tempdb_files: #tempdb_files,
                tempdb_size: #tempdb_size,
                tempdb_growth: #tempdb_growth,
                data_on: #data_on,
                log_on: #log_on,
            },
            backends: #backends,
        }
    }
}

/// A storage value as the expression of its runtime type.
fn storage_value(value: &StorageValue) -> TokenStream {
    match value {
        StorageValue::Count(n) => Literal::u32_unsuffixed(*n).into_token_stream(),
        StorageValue::Size(size) => size_expr(size),
        StorageValue::Growth(GrowthValue::Fixed(size)) => {
            let size = size_expr(size);
            quote!(::dbbench_core::__private::Growth::Fixed(#size))
        }
        StorageValue::Growth(GrowthValue::Percent(pct)) => {
            let pct = Literal::u32_unsuffixed(*pct);
            quote!(::dbbench_core::__private::Growth::Percent(#pct))
        }
        StorageValue::Growth(GrowthValue::None) => quote!(::dbbench_core::__private::Growth::None),
        StorageValue::Bool(b) => quote!(#b),
        StorageValue::Recovery(recovery) => {
            let variant = match recovery {
                Recovery::Simple => quote!(Simple),
                Recovery::Full => quote!(Full),
                Recovery::BulkLogged => quote!(BulkLogged),
            };
            quote!(::dbbench_core::__private::Recovery::#variant)
        }
        StorageValue::Volumes(names) => quote!(&[#(#names),*]),
        StorageValue::Volume(name) => quote!(#name),
    }
}

fn size_expr(size: &SizeValue) -> TokenStream {
    let bytes = Literal::u64_unsuffixed(size.bytes);
    let text = &size.text;
    quote!(::dbbench_core::__private::Size::new(#bytes, #text))
}

#[cfg(test)]
mod tests;
