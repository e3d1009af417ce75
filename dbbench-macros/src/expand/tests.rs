use super::*;
use quote::quote;

/// The expansion pretty-printed, as a reader would see it with `cargo expand`.
fn expand(args: TokenStream, item: TokenStream) -> String {
    let tokens = db_bench(args, item);
    let file: syn::File = syn::parse2(tokens).expect("the expansion parses as a file");
    prettyplease::unparse(&file)
}

#[test]
fn expands_the_documented_example() {
    let expanded = expand(
        quote!(data_files = [1, 8], repeat = 3, fixture = "credit"),
        quote! {
            /// Doubling the charge table.
            pub async fn double_charges(db: &mut Session) -> Result<()> {
                db.execute("UPDATE charge SET amount = amount * 2").await?;
                Ok(())
            }
        },
    );
    insta::assert_snapshot!(expanded);
}

#[test]
fn expands_every_option_kind_with_cases() {
    let expanded = expand(
        quote!(
            growth = "1MB",
            ifi = false,
            recovery = "full",
            maxdop = 0,
            log_on = "slow",
            data_on = ["fast", "fast,slow"],
            log_growth = "10%",
            tempdb_files = 4,
            tempdb_size = "1GB",
            tempdb_growth = "none",
            data_size = "2GB",
            data_files = 2,
            warmup = 1,
            backends = ["embedded", "mssql"],
            timeout = "10m",
            order = "blocked",
            baseline = "test_3__data_on_fast",
            scale_storage = true,
            smoke_divisor = 65536,
            default_divisor = 1024
        ),
        quote! {
            #[case(name = "test_3", growth = "1024MB", log_growth = "1024MB")]
            #[case(name = "test_4", log_pregrow = "4000MB", log_size = "32000MB", recovery = "bulk_logged", backends = "mssql")]
            #[ignore = "slow"]
            pub(crate) async fn all_options(db: &mut Session) -> Result<()> {
                Ok(())
            }
        },
    );
    insta::assert_snapshot!(expanded);
}

#[test]
fn the_function_is_emitted_unchanged_but_for_its_cases() {
    let item = quote! {
        #[inline(never)]
        async fn f(db: &mut Session) -> Result<()> { Ok(()) }
    };
    let expanded = expand(quote!(), item.clone());
    let function = prettyplease::unparse(&syn::parse2(item).unwrap());
    assert!(expanded.starts_with(&function), "{expanded}");
    assert!(expanded.contains("fn default_config()"));
}

#[test]
fn errors_are_emitted_with_the_function_and_the_module_s_shape_without_cells() {
    let tokens = db_bench(
        quote!(grwth = "1MB", repeat = 0),
        quote! {
            #[case(name = "a")]
            async fn f(db: &mut Session) -> Result<()> { Ok(()) }
        },
    )
    .to_string();
    assert_eq!(tokens.matches("compile_error").count(), 2, "{tokens}");
    assert!(tokens.contains("async fn f"));
    assert!(!tokens.contains("case"));
    // The module exists, so `f::BENCHMARK` resolves, with defaults, no cells and no tests.
    assert!(tokens.contains("mod f"));
    assert!(tokens.contains("RunSpec :: DEFAULT"), "{tokens}");
    assert!(tokens.contains("cells : & []"), "{tokens}");
    assert!(!tokens.contains("test"), "{tokens}");
    assert!(!tokens.contains("super :: f"), "{tokens}");
}

#[test]
fn rejects_items_other_than_functions() {
    let tokens = db_bench(
        quote!(),
        quote!(
            struct S;
        ),
    )
    .to_string();
    assert!(tokens.contains("can only be applied to an `async fn`"));
    assert!(tokens.contains("struct S"));
}

#[test]
fn names_and_attributes_of_the_module() {
    let expanded = expand(
        quote!(),
        quote! {
            #[cfg(feature = "slow")]
            async fn r#Match(db: &mut Session) -> Result<()> { Ok(()) }
        },
    );
    assert!(expanded.contains("#[cfg(feature = \"slow\")]\n///dbbench cells of [`Match()`].\n#[allow(non_snake_case)]\nmod r#Match {"), "{expanded}");
    assert!(expanded.contains("name: \"Match\","));
    assert!(expanded.contains("super::r#Match(session)"));
}

#[test]
fn snake_case_as_rustc_sees_it() {
    assert!(is_snake_case("data_files_8"));
    assert!(is_snake_case("__private"));
    assert!(!is_snake_case("data_files_8__growth_1mb"));
    assert!(!is_snake_case("Match"));
}

#[test]
fn expands_cases_made_from_others_and_a_backend_s_run_options() {
    let expanded = expand(
        quote!(
            recovery = "full",
            data_files = [1, 2],
            precision = "5%",
            min_repeat = 5,
            budget = "130s",
            postgres(min_repeat = 3, budget = "300s")
        ),
        quote! {
            async fn f(db: &mut Session) -> Result<()> { Ok(()) }
        },
    );
    // Without cases: only the backend's target is new.
    assert!(expanded.contains("precision_on: &["), "{expanded}");
    assert!(expanded.contains("min_rounds: 3"), "{expanded}");
    assert!(expanded.contains("from_millis(300000)"), "{expanded}");
    assert!(!expanded.contains("mirrors"), "{expanded}");
    let tokens = db_bench(
        quote!(recovery = "full", data_files = [1, 2]),
        quote! {
            #[case(name = "t_1", growth = "1MB", backends = "embedded")]
            #[case(name = "t_2", like = "t_1", growth = "2MB")]
            #[cases(like = ["t_1", "t_2"], prefix = "pg_", backends = "postgres", without = ["growth"])]
            async fn f(db: &mut Session) -> Result<()> { Ok(()) }
        },
    );
    let file: syn::File = syn::parse2(tokens).expect("the expansion parses as a file");
    let expanded = prettyplease::unparse(&file);
    insta::assert_snapshot!(expanded);
}

#[test]
fn no_module_is_added_where_it_would_be_a_second_error() {
    for item in [
        quote!(
            async fn f(&mut self, db: &mut Session) -> Result<()> {
                Ok(())
            }
        ),
        quote!(
            #[db_bench]
            async fn f(db: &mut Session) -> Result<()> {
                Ok(())
            }
        ),
    ] {
        let tokens = db_bench(quote!(grwth = "1MB"), item).to_string();
        assert!(!tokens.contains("mod f"), "{tokens}");
    }
}
