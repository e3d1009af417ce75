use super::*;
use crate::case::take_cases;
use crate::matrix::cells;
use crate::options::bench_options;
use crate::parse::parse_options;
use proc_macro2::TokenStream;
use quote::quote;
use syn::{parse_quote, Attribute};

/// The messages of every stage up to and including the checks.
fn errors_of(args: TokenStream, cases: Vec<Attribute>) -> Vec<String> {
    let mut errors = Errors::new();
    let options = bench_options(parse_options(args, 0, &mut errors), &mut errors);
    let mut attrs = cases;
    let cases = take_cases(&mut attrs, &options.storage_keys(), &mut errors);
    let cells = cells(&options, &cases, &mut errors);
    check(&options, &cases, &cells, &mut errors);
    errors.messages()
}

#[test]
fn a_consistent_benchmark_passes() {
    let errors = errors_of(
        quote!(
            data_files = [1, 2],
            data_size = "1GB",
            log_size = "8GB",
            log_pregrow = "1GB",
            tempdb_files = 4,
            tempdb_size = "1GB",
            tempdb_growth = "10%",
            data_on = "fast",
            recovery = "bulk_logged",
            baseline = "data_files_1",
            scale_storage = true
        ),
        vec![],
    );
    assert_eq!(errors, Vec::<String>::new());
}

#[test]
fn log_pregrow_needs_a_log_size_it_does_not_exceed() {
    let errors = errors_of(quote!(log_pregrow = "1GB"), vec![]);
    assert_eq!(
        errors,
        ["`log_pregrow` grows the log to `log_size` in steps, but `log_size` is not set: add `log_size = \"...\"` or remove `log_pregrow`"]
    );
    // Only the value that is too large is reported, once, though two cells contain it.
    let errors = errors_of(
        quote!(
            log_size = "4GB",
            log_pregrow = ["1GB", "8GB"],
            data_files = [1, 2]
        ),
        vec![],
    );
    assert_eq!(
        errors,
        ["`log_pregrow` \"8GB\" is larger than `log_size` \"4GB\"; the log is grown to `log_size` in steps of `log_pregrow`, so make the step at most the size"]
    );
}

#[test]
fn the_case_value_is_checked_where_it_overrides() {
    let errors = errors_of(
        quote!(log_size = "4GB"),
        vec![
            parse_quote!(#[case(name = "ok", log_pregrow = "1GB")]),
            parse_quote!(#[case(name = "bad", log_pregrow = "4000MB", log_size = "1GB")]),
        ],
    );
    assert_eq!(errors.len(), 1);
    assert!(errors[0].starts_with("`log_pregrow` \"4000MB\" is larger than `log_size` \"1GB\""));
}

#[test]
fn data_size_must_hold_an_extent_per_file() {
    let errors = errors_of(
        quote!(data_size = "128KB", data_files = [1, 2, 4, 8]),
        vec![],
    );
    assert_eq!(
        errors,
        ["`data_size` \"128KB\" is too small for 4 data files: each file needs at least \"64KB\", so use at least \"256KB\" or fewer `data_files`"]
    );
}

#[test]
fn tempdb_sizes_need_tempdb_files() {
    let errors = errors_of(quote!(tempdb_size = "1GB", tempdb_growth = "64MB"), vec![]);
    assert_eq!(errors.len(), 2);
    assert!(errors[0]
        .starts_with("`tempdb_size` configures the tempdb files, but `tempdb_files` is not set"));
    assert!(errors[1].starts_with("`tempdb_growth` configures"));
}

#[test]
fn data_on_names_each_volume_once_and_no_more_than_files() {
    let errors = errors_of(quote!(data_files = 2, data_on = "fast,fast"), vec![]);
    assert_eq!(
        errors,
        ["`data_on` names the volume \"fast\" twice; name each volume once"]
    );
    let errors = errors_of(quote!(data_on = "fast,slow"), vec![]);
    assert_eq!(
        errors,
        ["`data_on` names 2 volumes but there is only 1 data file, so \"slow\" would hold no file: set `data_files` to at least 2 or name fewer volumes"]
    );
}

#[test]
fn bulk_logged_needs_sql_server() {
    let errors = errors_of(
        quote!(recovery = "bulk_logged", backends = "embedded"),
        vec![],
    );
    assert_eq!(errors.len(), 1);
    assert!(errors[0].starts_with("`recovery = \"bulk_logged\"` exists only on SQL Server"));
}

#[test]
fn bulk_logged_considers_the_backends_of_the_case() {
    let errors = errors_of(
        quote!(recovery = "bulk_logged", data_files = [1, 2]),
        vec![
            parse_quote!(#[case(name = "server")]),
            parse_quote!(#[case(name = "local", backends = "embedded")]),
        ],
    );
    assert_eq!(
        errors,
        ["`recovery = \"bulk_logged\"` exists only on SQL Server, but case `local` sets `backends` to only \"embedded\": add \"mssql\" to that case's `backends` or choose \"simple\" or \"full\""]
    );
    // The case's backends replace the benchmark's, so this case may use bulk_logged.
    let errors = errors_of(
        quote!(backends = ["embedded", "mssql"]),
        vec![
            parse_quote!(#[case(name = "server", recovery = "bulk_logged", backends = "mssql")]),
            parse_quote!(#[case(name = "local", recovery = "full")]),
        ],
    );
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn a_case_must_share_a_backend_with_the_benchmark() {
    let errors = errors_of(
        quote!(backends = "embedded"),
        vec![
            parse_quote!(#[case(name = "a", backends = ["mssql"])]),
            parse_quote!(#[case(name = "b", backends = ["embedded", "mssql"])]),
            parse_quote!(#[case(name = "c")]),
        ],
    );
    assert_eq!(
        errors,
        ["this case can never run: its `backends` allows only \"mssql\" but `#[db_bench]` allows only \"embedded\": add \"mssql\" to the benchmark's `backends` or remove `backends` from this case"]
    );
    // Without `backends` in `#[db_bench]` every backend is allowed.
    let errors = errors_of(
        quote!(),
        vec![parse_quote!(#[case(name = "a", backends = "mssql")])],
    );
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn backend_lists_read_as_english() {
    assert_eq!(backend_list(&[Backend::Mssql], "and"), "\"mssql\"");
    assert_eq!(
        backend_list(&[Backend::Embedded, Backend::Mssql], "or"),
        "\"embedded\" or \"mssql\""
    );
}

#[test]
fn smoke_must_divide_at_least_as_much_as_the_default_scale() {
    assert!(errors_of(
        quote!(smoke_divisor = 65536, default_divisor = 1024),
        vec![]
    )
    .is_empty());
    assert!(errors_of(quote!(smoke_divisor = 64, default_divisor = 64), vec![]).is_empty());
    assert!(errors_of(quote!(default_divisor = 512), vec![]).is_empty());
    assert!(errors_of(quote!(smoke_divisor = 16), vec![]).is_empty());
    let errors = errors_of(quote!(smoke_divisor = 64, default_divisor = 128), vec![]);
    assert_eq!(
        errors,
        ["smoke must be the smaller scale: `default_divisor` is 128 but `smoke_divisor` is 64, so `DBBENCH_SCALE=smoke` would use more data than the default scale: raise `smoke_divisor` to at least 128 or lower `default_divisor` to at most 64"]
    );
    // A divisor that is not written counts with its default, 512 for smoke and 16 for default.
    let errors = errors_of(quote!(default_divisor = 1024), vec![]);
    assert_eq!(
        errors,
        ["smoke must be the smaller scale: `default_divisor` is 1024 but `smoke_divisor` is 512 (its default), so `DBBENCH_SCALE=smoke` would use more data than the default scale: raise `smoke_divisor` to at least 1024 or lower `default_divisor` to at most 512"]
    );
    let errors = errors_of(quote!(smoke_divisor = 8), vec![]);
    assert_eq!(
        errors,
        ["smoke must be the smaller scale: `default_divisor` is 16 (its default) but `smoke_divisor` is 8, so `DBBENCH_SCALE=smoke` would use more data than the default scale: raise `smoke_divisor` to at least 16 or lower `default_divisor` to at most 8"]
    );
    // A rejected divisor is reported once, not compared with the other as if it were the default.
    let errors = errors_of(quote!(smoke_divisor = 0, default_divisor = 1024), vec![]);
    assert_eq!(
        errors,
        ["`smoke_divisor` must be between 1 and 1048576; found 0"]
    );
}

#[test]
fn baseline_names_one_of_several_cells() {
    let errors = errors_of(
        quote!(data_files = [1, 8], baseline = "data_files_2"),
        vec![],
    );
    assert_eq!(
        errors,
        ["`baseline` \"data_files_2\" is not a cell of this benchmark, whose cells are: `data_files_1`, `data_files_8`; did you mean \"data_files_1\"?"]
    );
    let errors = errors_of(quote!(baseline = "default_config"), vec![]);
    assert!(errors[0].contains("has only one cell, `default_config`"));
    let errors = errors_of(
        quote!(baseline = "b"),
        vec![
            parse_quote!(#[case(name = "a")]),
            parse_quote!(#[case(name = "b")]),
        ],
    );
    assert!(errors.is_empty());
}

#[test]
fn a_case_cannot_override_a_matrix_axis() {
    let errors = errors_of(
        quote!(growth = ["1MB", "64MB"]),
        vec![parse_quote!(#[case(name = "a", growth = "1GB", ifi = true)])],
    );
    assert_eq!(errors.len(), 1);
    assert!(errors[0].starts_with("`growth` is a list in `#[db_bench]`, so each cell of this case"));
}

#[test]
fn scale_storage_needs_a_size() {
    let errors = errors_of(quote!(scale_storage = true, growth = "10%"), vec![]);
    assert_eq!(errors.len(), 1);
    assert!(errors[0].starts_with("`scale_storage = true` multiplies the storage sizes"));
    assert!(errors_of(quote!(scale_storage = false), vec![]).is_empty());
}

#[test]
fn precision_replaces_repeat_and_bounds_need_it() {
    let errors = errors_of(
        quote!(
            precision = "5%",
            min_repeat = 4,
            max_repeat = 12,
            budget = "2m",
            cache = "cold"
        ),
        vec![],
    );
    assert_eq!(errors, Vec::<String>::new());
    let errors = errors_of(quote!(precision = "5%", repeat = 3), vec![]);
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].starts_with("`repeat` fixes the number of rounds"),
        "{errors:?}"
    );
    let errors = errors_of(quote!(max_repeat = 9, budget = "1m"), vec![]);
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors
            .iter()
            .all(|e| e.contains("add `precision = \"5%\"`")),
        "{errors:?}"
    );
    let errors = errors_of(
        quote!(precision = "5%", min_repeat = 6, max_repeat = 4),
        vec![],
    );
    assert_eq!(
        errors,
        vec!["`max_repeat` is 4 but the fewest rounds are 6 (`min_repeat`): raise `max_repeat` to at least 6"]
    );
    let errors = errors_of(quote!(precision = "5%", order = "blocked"), vec![]);
    assert!(
        errors[0].starts_with("`precision` pairs the cells"),
        "{errors:?}"
    );
    let errors = errors_of(quote!(precision = "5%", min_repeat = 30), vec![]);
    assert!(
        errors[0].contains("the default `max_repeat` is 20"),
        "{errors:?}"
    );
}

#[test]
fn precision_and_cache_values_are_checked() {
    let errors = errors_of(quote!(precision = "0%"), vec![]);
    assert_eq!(
        errors,
        vec!["`precision` must be more than 0% and at most 50%; found \"0%\""]
    );
    let errors = errors_of(quote!(precision = 5), vec![]);
    assert!(
        errors[0].starts_with("`precision` takes a percentage string"),
        "{errors:?}"
    );
    let errors = errors_of(quote!(cache = "cool"), vec![]);
    assert!(errors[0].starts_with("`cache` must be"), "{errors:?}");
}
