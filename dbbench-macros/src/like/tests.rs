use crate::case::take_cases;
use crate::errors::Errors;
use crate::matrix::{cells, Cell};
use crate::options::bench_options;
use crate::parse::parse_options;
use crate::setting::Backend;
use crate::symbol::Key;
use proc_macro2::TokenStream;
use quote::quote;
use syn::{parse_quote, Attribute};

fn cells_of(args: TokenStream, cases: Vec<Attribute>) -> (Vec<Cell>, Vec<String>) {
    let mut errors = Errors::new();
    let options = bench_options(parse_options(args, 0, &mut errors), &mut errors);
    let mut attrs = cases;
    let cases = take_cases(&mut attrs, &options.storage_keys(), &mut errors);
    let cells = cells(&options, &cases, &mut errors);
    (cells, errors.messages())
}

/// `key=value` of every option a cell sets, in key order.
fn config(cell: &Cell) -> Vec<String> {
    cell.settings
        .values()
        .map(|s| format!("{}={}", s.key, s.value.name_text()))
        .collect()
}

#[test]
fn a_chain_takes_every_option_of_the_cases_before() {
    let (cells, errors) = cells_of(
        quote!(recovery = "full"),
        vec![
            parse_quote!(#[case(name = "test_1", growth = "1MB", ifi = false, backends = "embedded")]),
            parse_quote!(#[case(name = "test_2", like = "test_1", ifi = true)]),
            parse_quote!(#[case(name = "test_3", like = "test_2", growth = "1024MB")]),
        ],
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        config(&cells[2]),
        ["growth=1024MB", "ifi=true", "recovery=full"]
    );
    assert_eq!(
        cells[2].backends.as_ref().map(|b| b.value.clone()),
        Some(vec![Backend::Embedded])
    );
}

#[test]
fn a_case_may_start_from_one_declared_after_it() {
    let (cells, errors) = cells_of(
        quote!(),
        vec![
            parse_quote!(#[case(name = "b", like = "a", maxdop = 4)]),
            parse_quote!(#[case(name = "a", maxdop = 1, ifi = true)]),
        ],
    );
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(config(&cells[0]), ["ifi=true", "maxdop=4"]);
}

#[test]
fn a_case_set_mirrors_each_case_with_its_changes() {
    let (cells, errors) = cells_of(
        quote!(recovery = "full", log_size = "400MB"),
        vec![
            parse_quote!(#[case(name = "t_1", data_size = "1000MB", log_growth = "1MB", backends = "embedded")]),
            parse_quote!(#[case(name = "t_2", like = "t_1", log_growth = "1024MB")]),
            parse_quote!(#[cases(
                like = ["t_1", "t_2"],
                prefix = "pg_",
                backends = "postgres",
                recovery = "simple",
                without = ["data_size", "log_size"]
            )]),
        ],
    );
    assert!(errors.is_empty(), "{errors:?}");
    let names: Vec<&str> = cells.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["t_1", "t_2", "pg_t_1", "pg_t_2"]);
    // `log_size` comes from `#[db_bench]`, `data_size` from the case: both are left unset.
    assert_eq!(config(&cells[3]), ["log_growth=1024MB", "recovery=simple"]);
    assert!(!cells[3].settings.contains_key(&Key::LogSize));
}

#[test]
fn an_unknown_like_suggests_the_nearest_case() {
    let (cells, errors) = cells_of(
        quote!(),
        vec![
            parse_quote!(#[case(name = "test_3", ifi = true)]),
            parse_quote!(#[case(name = "test_4", like = "tset_3", maxdop = 2)]),
        ],
    );
    assert_eq!(cells.len(), 1);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("`like` names \"tset_3\", which is not a case of this benchmark; did you mean \"test_3\"?"),
        "{errors:?}"
    );
}

#[test]
fn a_cycle_is_reported_once() {
    let (cells, errors) = cells_of(
        quote!(),
        vec![
            parse_quote!(#[case(name = "a", like = "c", ifi = true)]),
            parse_quote!(#[case(name = "b", like = "a", maxdop = 2)]),
            parse_quote!(#[case(name = "c", like = "b", maxdop = 3)]),
            parse_quote!(#[case(name = "d", like = "c", maxdop = 4)]),
            parse_quote!(#[case(name = "e", like = "e", maxdop = 4)]),
        ],
    );
    let names: Vec<&str> = cells.iter().map(|c| c.name.as_str()).collect();
    // No case is left, so the benchmark would have only its default cell.
    assert_eq!(names, ["default_config"], "{errors:?}");
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].contains("(a → c → b → a)"), "{errors:?}");
    assert!(
        errors[1].starts_with("case `e` cannot be like itself"),
        "{errors:?}"
    );
}

#[test]
fn a_like_that_changes_nothing_is_an_error() {
    let (_, errors) = cells_of(
        quote!(),
        vec![
            parse_quote!(#[case(name = "a", ifi = true)]),
            parse_quote!(#[case(name = "b", like = "a")]),
            parse_quote!(#[case(name = "c", like = "a", ifi = true)]),
            parse_quote!(#[cases(like = ["a"], prefix = "x_", without = ["growth"])]),
        ],
    );
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors[0].starts_with("case `b` is `a` with nothing changed"));
    assert!(errors[1].starts_with("case `c` sets only values `a` already has"));
    assert!(errors[2].starts_with("`without` removes `growth`, but neither `a` nor"));
}

#[test]
fn a_case_set_needs_like_and_a_valid_prefix() {
    let (cells, errors) = cells_of(
        quote!(),
        vec![
            parse_quote!(#[case(name = "a", ifi = true)]),
            parse_quote!(#[cases(prefix = "pg_", ifi = false)]),
            parse_quote!(#[cases(like = ["a"], ifi = false)]),
            parse_quote!(#[cases(like = ["a"], prefix = "Pg", ifi = false)]),
            parse_quote!(#[cases(like = ["a"], prefix = "p_", name = "x", without = ["grwth"])]),
        ],
    );
    // `p_a`, whose rejected options are reported, is not also reported as a copy of `a`.
    assert_eq!(cells.len(), 2, "{errors:?}");
    assert_eq!(errors.len(), 5, "{errors:?}");
    assert!(
        errors[0].starts_with("this `#[cases]` names no case"),
        "{errors:?}"
    );
    assert!(
        errors[1].starts_with("this `#[cases]` has no `prefix`"),
        "{errors:?}"
    );
    assert!(
        errors[2].starts_with("`prefix` \"Pg\" would not make"),
        "{errors:?}"
    );
    assert!(
        errors[3].starts_with("`#[cases]` names its cases after"),
        "{errors:?}"
    );
    assert!(errors[4].contains("did you mean \"growth\"?"), "{errors:?}");
}

/// The example of `docs/options.md`, with the cells its table says it expands to.
#[test]
fn the_documented_example_expands_as_its_table_says() {
    let (cells, errors) = cells_of(
        quote!(
            fixture = "credit",
            recovery = "full",
            log_size = "400MB",
            scale_storage = true
        ),
        vec![
            parse_quote!(#[case(name = "test_1", data_size = "1000MB", growth = "1MB", log_growth = "1MB", ifi = false, backends = ["embedded", "mssql"])]),
            parse_quote!(#[case(name = "test_2", like = "test_1", ifi = true)]),
            parse_quote!(#[case(name = "test_3", like = "test_2", growth = "1024MB", log_growth = "1024MB")]),
            parse_quote!(#[case(name = "test_4", like = "test_3", log_size = "32000MB", log_pregrow = "4000MB")]),
            parse_quote!(#[cases(like = ["test_1", "test_3", "test_4"], prefix = "pg_", backends = "postgres", recovery = "simple", log_size = "32000MB", without = ["data_size", "growth"])]),
        ],
    );
    assert!(errors.is_empty(), "{errors:?}");
    let table: Vec<(String, Vec<String>)> =
        cells.iter().map(|c| (c.name.clone(), config(c))).collect();
    let row = |name: &str, options: &[&str]| {
        (
            name.to_string(),
            options.iter().map(|o| o.to_string()).collect::<Vec<_>>(),
        )
    };
    assert_eq!(
        table,
        [
            row(
                "test_1",
                &[
                    "data_size=1000MB",
                    "growth=1MB",
                    "log_size=400MB",
                    "log_growth=1MB",
                    "ifi=false",
                    "recovery=full"
                ]
            ),
            row(
                "test_2",
                &[
                    "data_size=1000MB",
                    "growth=1MB",
                    "log_size=400MB",
                    "log_growth=1MB",
                    "ifi=true",
                    "recovery=full"
                ]
            ),
            row(
                "test_3",
                &[
                    "data_size=1000MB",
                    "growth=1024MB",
                    "log_size=400MB",
                    "log_growth=1024MB",
                    "ifi=true",
                    "recovery=full"
                ]
            ),
            row(
                "test_4",
                &[
                    "data_size=1000MB",
                    "growth=1024MB",
                    "log_size=32000MB",
                    "log_growth=1024MB",
                    "log_pregrow=4000MB",
                    "ifi=true",
                    "recovery=full"
                ]
            ),
            row(
                "pg_test_1",
                &[
                    "log_size=32000MB",
                    "log_growth=1MB",
                    "ifi=false",
                    "recovery=simple"
                ]
            ),
            row(
                "pg_test_3",
                &[
                    "log_size=32000MB",
                    "log_growth=1024MB",
                    "ifi=true",
                    "recovery=simple"
                ]
            ),
            row(
                "pg_test_4",
                &[
                    "log_size=32000MB",
                    "log_growth=1024MB",
                    "log_pregrow=4000MB",
                    "ifi=true",
                    "recovery=simple"
                ]
            ),
        ]
    );
    let backends: Vec<Vec<Backend>> = cells
        .iter()
        .map(|c| c.backends.as_ref().unwrap().value.clone())
        .collect();
    assert_eq!(backends[3], [Backend::Embedded, Backend::Mssql]);
    assert_eq!(backends[6].len(), 1);
    assert_ne!(backends[6][0], Backend::Embedded);
}
