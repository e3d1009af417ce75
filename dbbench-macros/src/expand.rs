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
use crate::options::{self, BackendRun, RunOptions};
use crate::setting::{
    Backend, Cache, Fixture, GrowthValue, Order, Recovery, SizeValue, StorageValue,
};
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
            let shape = shape(&func);
            quote!(#error #func #shape)
        }
    }
}

/// The module a benchmark with errors would have had, with a `BENCHMARK` of defaults and no
/// cells, so that code referring to `name::BENCHMARK` compiles and only the real errors show (as
/// tokio's macros expand the full function on an error). Its body never calls the function,
/// whose signature may be what is wrong.
///
/// Left out where the module itself would be a second error: for a method (an `impl` cannot hold
/// a module) and under a second `#[db_bench]` (which generates the module already).
fn shape(func: &ItemFn) -> TokenStream {
    let applied_again = func.attrs.iter().any(|attr| {
        attr.path()
            .segments
            .last()
            .is_some_and(|s| s.ident == crate::symbol::DB_BENCH)
    });
    if applied_again || func.sig.receiver().is_some() {
        return TokenStream::new();
    }
    let ident = &func.sig.ident;
    let name = ident.unraw().to_string();
    let vis = &func.vis;
    let cfgs = func.attrs.iter().filter(|attr| attr.path().is_ident("cfg"));
    let allow_case = (!is_snake_case(&name)).then(|| quote!(#[allow(non_snake_case)]));
    quote! {
        #(#cfgs)*
        #[doc(hidden)]
        #allow_case
        #vis mod #ident {
            #[allow(dead_code)]
            pub static BENCHMARK: ::dbbench_core::__private::BenchmarkSpec =
                ::dbbench_core::__private::BenchmarkSpec {
                    name: #name,
                    module_path: ::core::module_path!(),
                    manifest_dir: ::core::env!("CARGO_MANIFEST_DIR"),
                    source_file: ::core::file!(),
                    title: "",
                    run: ::dbbench_core::__private::RunSpec::DEFAULT,
                    cells: &[],
                    body: __dbbench_body,
                };

            fn __dbbench_body<'a>(
                _: &'a mut ::dbbench_core::__private::Session,
            ) -> ::dbbench_core::__private::BodyFuture<'a> {
                ::core::unreachable!("a benchmark whose attribute has errors does not compile")
            }
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
        let off_default = if ignores.is_empty() {
            off_default_backend(bench, cell)
        } else {
            None
        };
        quote_spanned! {ident.span()=>
            #[::core::prelude::v1::test]
            #(#ignores)*
            #off_default
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

/// `#[ignore = "…"]` for a cell that cannot run on the default backend: on it the cell is
/// skipped, and an ignored test is what test runners (libtest, nextest) show as skipped instead
/// of as a pass. Runs on its own backend include ignored tests.
fn off_default_backend(bench: &Bench, cell: &Cell) -> Option<TokenStream> {
    let backends: Vec<Backend> = match (&cell.backends, &bench.run.backends) {
        (Some(own), _) => own.value.clone(),
        (None, Some(all)) => all.value.clone(),
        (None, None) => return None,
    };
    if backends.is_empty()
        || backends
            .iter()
            .any(|b| b.keyword() == dbbench_options::defaults::BACKEND)
    {
        return None;
    }
    let names: Vec<&str> = backends.iter().map(|b| b.keyword()).collect();
    let reason = format!(
        "runs on {} only: with DBBENCH_BACKEND set, include ignored tests \
         (`cargo test -- --include-ignored`, `cargo nextest run --run-ignored all`)",
        names.join(", ")
    );
    Some(quote!(#[ignore = #reason]))
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

fn run_spec(bench: &Bench) -> TokenStream {
    let run = &bench.run;
    // Only what the attribute sets is written; the rest is `RunSpec::DEFAULT`, whose values come
    // from `dbbench-options`, as the macro's checks do.
    let mut fields = Vec::new();
    if let Some(repeat) = &run.repeat {
        let n = Literal::u32_unsuffixed(repeat.value);
        fields.push(quote!(repeat: #n));
    }
    if let Some(warmup) = &run.warmup {
        let n = Literal::u32_unsuffixed(warmup.value);
        fields.push(quote!(warmup: #n));
    }
    if let Some(fixture) = &run.fixture {
        let variant = match fixture.value {
            Fixture::None => quote!(None),
            Fixture::Credit => quote!(Credit),
        };
        fields.push(quote!(fixture: ::dbbench_core::__private::FixtureKind::#variant));
    }
    if let Some(backends) = &run.backends {
        let kinds = backend_kinds(&backends.value);
        fields.push(quote!(backends: #kinds));
    }
    if let Some(ms) = &run.timeout {
        let ms = Literal::u64_unsuffixed(ms.value);
        let value = some(quote!(::core::time::Duration::from_millis(#ms)));
        fields.push(quote!(timeout: #value));
    }
    if let Some(order) = &run.order {
        let variant = match order.value {
            Order::Interleaved => quote!(Interleaved),
            Order::Blocked => quote!(Blocked),
        };
        fields.push(quote!(order: ::dbbench_core::__private::Order::#variant));
    }
    if !bench.not_on.is_empty() {
        let entries = bench.not_on.iter().map(|n| {
            let kind = backend_kind(n.backend.value);
            let reason = LitStr::new(&n.reason, n.backend.span);
            quote!((#kind, #reason))
        });
        fields.push(quote!(not_on: &[#(#entries),*]));
    }
    if let Some(name) = &run.baseline {
        let value = some(name.value.to_token_stream());
        fields.push(quote!(baseline: #value));
    }
    if let Some(scale) = &run.scale_storage {
        let b = scale.value;
        fields.push(quote!(scale_storage: #b));
    }
    if let Some(d) = &run.smoke_divisor {
        let n = Literal::u32_unsuffixed(d.value);
        fields.push(quote!(smoke_divisor: #n));
    }
    if let Some(d) = &run.default_divisor {
        let n = Literal::u32_unsuffixed(d.value);
        fields.push(quote!(default_divisor: #n));
    }
    if let Some(precision) = precision(run, None) {
        fields.push(quote!(precision: ::core::option::Option::Some(#precision)));
    }
    if !run.per_backend.is_empty() {
        let entries = run.per_backend.iter().filter_map(|own| {
            let kind = backend_kind(own.backend.value);
            let precision = precision(run, Some(own))?;
            Some(quote!((#kind, #precision)))
        });
        fields.push(quote!(precision_on: &[#(#entries),*]));
    }
    if !bench.mirrors.is_empty() {
        let pairs = bench
            .mirrors
            .iter()
            .map(|(cell, source)| quote!((#cell, #source)));
        fields.push(quote!(mirrors: &[#(#pairs),*]));
    }
    if let Some(cache) = &run.cache {
        let variant = match cache.value {
            Cache::Warm => quote!(Warm),
            Cache::Cold => quote!(Cold),
        };
        fields.push(quote!(cache: ::dbbench_core::__private::CacheState::#variant));
    }
    quote! {
        ::dbbench_core::__private::RunSpec {
            #(#fields,)*
            ..::dbbench_core::__private::RunSpec::DEFAULT
        }
    }
}

/// The precision target, on one backend (`own`) or on all: every bound is written, with the
/// benchmark's where the backend leaves it out and the defaults where both do, so the runtime
/// sees one complete `Precision`.
fn precision(run: &RunOptions, own: Option<&BackendRun>) -> Option<TokenStream> {
    let pick = |own: Option<&Option<options::Spanned<u32>>>,
                all: &Option<options::Spanned<u32>>,
                default: u32| {
        own.and_then(Option::as_ref)
            .or(all.as_ref())
            .map_or(default, |v| v.value)
    };
    let hundredths = own
        .and_then(|o| o.precision.as_ref())
        .or(run.precision.as_ref())?
        .value;
    let hundredths = Literal::u32_unsuffixed(hundredths);
    let min = Literal::u32_unsuffixed(pick(
        own.map(|o| &o.min_repeat),
        &run.min_repeat,
        dbbench_options::defaults::MIN_REPEAT,
    ));
    let max = Literal::u32_unsuffixed(pick(
        own.map(|o| &o.max_repeat),
        &run.max_repeat,
        dbbench_options::defaults::MAX_REPEAT,
    ));
    let budget = own
        .and_then(|o| o.budget.as_ref())
        .or(run.budget.as_ref())
        .map_or(dbbench_options::defaults::BUDGET_MS, |b| b.value);
    let budget = Literal::u64_unsuffixed(budget);
    let fork_rounds = Literal::u32_unsuffixed(pick(
        own.map(|o| &o.fork_rounds),
        &run.fork_rounds,
        dbbench_options::defaults::FORK_ROUNDS,
    ));
    Some(quote!(::dbbench_core::__private::Precision {
        hundredths_of_percent: #hundredths,
        min_rounds: #min,
        max_rounds: #max,
        budget: ::core::time::Duration::from_millis(#budget),
        fork_rounds: #fork_rounds,
    }))
}

/// `&[…]` of the runtime's `BackendKind`s; empty when there are none.
fn backend_kinds<'b>(backends: impl IntoIterator<Item = &'b Backend>) -> TokenStream {
    let kinds = backends.into_iter().map(|backend| backend_kind(*backend));
    quote!(&[#(#kinds),*])
}

/// The runtime's `BackendKind` of `backend`, by its name: the runtime has no list of backends to
/// name a variant of.
fn backend_kind(backend: Backend) -> TokenStream {
    let keyword = backend.keyword();
    quote!(::dbbench_core::__private::BackendKind::named(#keyword))
}

fn cell_spec(cell: &Cell) -> TokenStream {
    // Storage options in their declaration order; only those the cell sets are written, the rest
    // is `StorageSpec::DEFAULT`.
    let fields = Key::STORAGE.into_iter().filter_map(|key| {
        let value = &cell.settings.get(&key)?.value;
        let field = format_ident!("{}", key.as_str());
        let value = match (key, value) {
            // Counts and volume lists are plain fields; every other option is optional.
            (Key::DataFiles | Key::DataOn, value) => storage_value(value),
            (_, value) => some(storage_value(value)),
        };
        Some(quote!(#field: #value))
    });
    let name = &cell.name;
    let backends = backend_kinds(cell.backends.iter().flat_map(|b| &b.value));
    quote! {
        ::dbbench_core::__private::CellSpec {
            name: #name,
            storage: ::dbbench_core::__private::StorageSpec {
                #(#fields,)*
                ..::dbbench_core::__private::StorageSpec::DEFAULT
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
