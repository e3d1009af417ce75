use super::*;
use crate::case::take_cases;
use crate::options::bench_options;
use crate::parse::parse_options;
use crate::setting::{Backend, StorageValue};
use proc_macro2::TokenStream;
use quote::quote;
use syn::{parse_quote, Attribute};

/// The cells of `#[db_bench(args)]` with `cases`, and the messages recorded.
fn cells_of(args: TokenStream, cases: Vec<Attribute>) -> (Vec<Cell>, Vec<String>) {
    let mut errors = Errors::new();
    let options = bench_options(parse_options(args, 0, &mut errors), &mut errors);
    let mut attrs = cases;
    let cases = take_cases(&mut attrs, &options.storage_keys(), &mut errors);
    let cells = cells(&options, &cases, &mut errors);
    (cells, errors.messages())
}

fn names(cells: &[Cell]) -> Vec<&str> {
    cells.iter().map(|cell| cell.name.as_str()).collect()
}

#[test]
fn no_lists_and_no_cases_make_the_default_cell() {
    let (cells, errors) = cells_of(quote!(growth = "1MB", repeat = 2), vec![]);
    assert!(errors.is_empty());
    assert_eq!(names(&cells), ["default_config"]);
    assert!(cells[0].settings.contains_key(&Key::Growth));
}

#[test]
fn one_list_makes_one_cell_per_value() {
    let (cells, _) = cells_of(quote!(data_files = [1, 2, 4, 8]), vec![]);
    assert_eq!(
        names(&cells),
        [
            "data_files_1",
            "data_files_2",
            "data_files_4",
            "data_files_8"
        ]
    );
    assert_eq!(
        cells[3].settings[&Key::DataFiles].value,
        StorageValue::Count(8)
    );
}

#[test]
fn several_lists_make_their_product_first_slowest() {
    let (cells, _) = cells_of(
        quote!(
            data_files = [1, 8],
            ifi = true,
            growth = ["1MB", "10%", "none"]
        ),
        vec![],
    );
    assert_eq!(
        names(&cells),
        [
            "data_files_1__growth_1mb",
            "data_files_1__growth_10pct",
            "data_files_1__growth_none",
            "data_files_8__growth_1mb",
            "data_files_8__growth_10pct",
            "data_files_8__growth_none",
        ]
    );
    assert!(cells.iter().all(|c| c.settings.contains_key(&Key::Ifi)));
}

#[test]
fn cases_alone_are_named_after_themselves_and_override() {
    let (cells, errors) = cells_of(
        quote!(growth = "1MB", log_growth = "1MB"),
        vec![
            parse_quote!(#[case(name = "test_3", growth = "1024MB")]),
            parse_quote!(#[case(name = "test_4")]),
        ],
    );
    assert!(errors.is_empty());
    assert_eq!(names(&cells), ["test_3", "test_4"]);
    assert_eq!(cells[0].settings[&Key::Growth].value.name_text(), "1024MB");
    assert_eq!(cells[1].settings[&Key::Growth].value.name_text(), "1MB");
    assert_eq!(cells[0].settings[&Key::LogGrowth].value.name_text(), "1MB");
}

#[test]
fn cases_are_crossed_with_the_matrix() {
    let (cells, _) = cells_of(
        quote!(data_files = [1, 8]),
        vec![
            parse_quote!(#[case(name = "test_3", growth = "1024MB")]),
            parse_quote!(#[case(name = "test_4", log_size = "1GB")]),
        ],
    );
    assert_eq!(
        names(&cells),
        [
            "test_3__data_files_1",
            "test_3__data_files_8",
            "test_4__data_files_1",
            "test_4__data_files_8",
        ]
    );
    assert!(cells[2].settings.contains_key(&Key::LogSize));
    assert!(!cells[2].settings.contains_key(&Key::Growth));
}

#[test]
fn every_cell_of_a_case_takes_its_backends() {
    let (cells, errors) = cells_of(
        quote!(data_files = [1, 8], backends = ["embedded", "mssql"]),
        vec![
            parse_quote!(#[case(name = "server", backends = "mssql")]),
            parse_quote!(#[case(name = "both")]),
        ],
    );
    assert!(errors.is_empty(), "{errors:?}");
    let backends: Vec<Option<Vec<Backend>>> = cells
        .iter()
        .map(|cell| cell.backends.as_ref().map(|b| b.value.clone()))
        .collect();
    let mssql = Some(vec![Backend::Mssql]);
    assert_eq!(backends, [mssql.clone(), mssql, None, None]);
    assert_eq!(cells[1].case.as_deref(), Some("server"));
    assert_eq!(cells[3].case.as_deref(), Some("both"));
    let (cells, _) = cells_of(quote!(backends = "mssql"), vec![]);
    assert!(cells[0].backends.is_none() && cells[0].case.is_none());
}

#[test]
fn slugs_are_lowercase_identifiers() {
    assert_eq!(slug("1MB"), "1mb");
    assert_eq!(slug("10%"), "10pct");
    assert_eq!(slug("fast,slow"), "fast_slow");
    assert_eq!(slug("bulk_logged"), "bulk_logged");
    assert_eq!(slug("a-b.c"), "a_b_c");
    let (cells, _) = cells_of(quote!(data_on = ["fast", "fast, slow"]), vec![]);
    assert_eq!(names(&cells), ["data_on_fast", "data_on_fast_slow"]);
}

#[test]
fn values_that_slug_alike_are_reported_once_at_the_later_value() {
    let (cells, errors) = cells_of(quote!(growth = ["1MB", "1mb"], data_files = [1, 2]), vec![]);
    assert_eq!(cells.len(), 4);
    assert_eq!(
        errors,
        ["`growth` values \"1MB\" and \"1mb\" both give the cell name `growth_1mb__data_files_1`; remove one of them"]
    );
    let (_, errors) = cells_of(quote!(data_files = [2, 2]), vec![]);
    assert_eq!(errors.len(), 1);
}

#[test]
fn too_many_cells_is_an_error() {
    let (cells, errors) = cells_of(
        quote!(
            data_files = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
            maxdop = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
            tempdb_files = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
        ),
        vec![],
    );
    assert!(cells.is_empty());
    assert_eq!(
        errors,
        ["this benchmark would have 1210 cells, one test each; at most 1000 are allowed: shorten the lists or split the benchmark"]
    );
}
