use super::*;
use crate::parse::parse_options;
use quote::quote;

fn bench(tokens: proc_macro2::TokenStream) -> (BenchOptions, Vec<String>) {
    let mut errors = Errors::new();
    let raw = parse_options(tokens, 0, &mut errors);
    let options = bench_options(raw, &mut errors);
    (options, errors.messages())
}

fn case(tokens: proc_macro2::TokenStream) -> (CaseOptions, Vec<String>) {
    let mut errors = Errors::new();
    let raw = parse_options(tokens, 1, &mut errors);
    let options = case_options(raw, &mut errors);
    (options, errors.messages())
}

#[test]
fn reads_storage_values_axes_and_run_options() {
    let (options, errors) = bench(quote!(
        growth = "1MB",
        data_files = [1, 2, 4],
        repeat = 3,
        warmup = 1,
        fixture = "credit",
        backends = ["embedded", "mssql"],
        timeout = "30s",
        order = "blocked",
        baseline = "data_files_1",
        scale_storage = true,
        smoke_divisor = 4096,
        default_divisor = 64
    ));
    assert!(errors.is_empty(), "{errors:?}");
    assert!(matches!(&options.storage[0], Declared::One(s) if s.key == Key::Growth));
    let Declared::Axis(axis) = &options.storage[1] else {
        panic!("expected an axis");
    };
    assert_eq!(axis.key, Key::DataFiles);
    assert_eq!(axis.values.len(), 3);
    let run = &options.run;
    assert_eq!(run.repeat.as_ref().unwrap().value, 3);
    assert_eq!(run.warmup.as_ref().unwrap().value, 1);
    assert_eq!(run.fixture.as_ref().unwrap().value, Fixture::Credit);
    assert_eq!(
        run.backends.as_ref().unwrap().value,
        [Backend::Embedded, Backend::Mssql]
    );
    assert_eq!(run.timeout.as_ref().unwrap().value, 30_000);
    assert_eq!(run.order.as_ref().unwrap().value, Order::Blocked);
    assert_eq!(run.baseline.as_ref().unwrap().value, "data_files_1");
    assert!(run.scale_storage.as_ref().unwrap().value);
    assert_eq!(run.smoke_divisor.as_ref().unwrap().value, 4096);
    assert_eq!(run.default_divisor.as_ref().unwrap().value, 64);
    assert!(options.given.contains(&Key::DefaultDivisor));
    assert!(!options.given.contains(&Key::Ifi));
}

#[test]
fn divisors_are_integers_up_to_a_mebi() {
    let (options, errors) = bench(quote!(smoke_divisor = 1048576, default_divisor = 1));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(options.run.smoke_divisor.unwrap().value, 1 << 20);
    assert_eq!(options.run.default_divisor.unwrap().value, 1);
    let (options, errors) = bench(quote!(smoke_divisor = 0, default_divisor = 1048577));
    assert_eq!(
        errors,
        [
            "`smoke_divisor` must be between 1 and 1048576; found 0",
            "`default_divisor` must be between 1 and 1048576; found 1048577",
        ]
    );
    assert!(options.run.smoke_divisor.is_none());
    assert!(options.given.contains(&Key::SmokeDivisor));
    let (_, errors) = bench(quote!(smoke_divisor = "512"));
    assert_eq!(
        errors,
        ["`smoke_divisor` takes an integer: write `smoke_divisor = 4096`"]
    );
    let (_, errors) = bench(quote!(default_divisor = [16, 64]));
    assert!(errors[0]
        .starts_with("`default_divisor` applies to the whole benchmark and cannot be a list"));
}

#[test]
fn a_single_backend_needs_no_list() {
    let (options, errors) = bench(quote!(backends = "mssql"));
    assert!(errors.is_empty());
    assert_eq!(options.run.backends.unwrap().value, [Backend::Mssql]);
}

#[test]
fn unknown_options_list_the_valid_ones_and_suggest_the_nearest() {
    let (_, errors) = bench(quote!(grwth = "1MB"));
    assert!(
        errors[0].starts_with(
            "unknown option `grwth`; did you mean `growth`? valid options are: `data_files`, `data_size`, `growth`,"
        ),
        "{errors:?}"
    );
    assert!(errors[0].ends_with(
        "`baseline`, `scale_storage`, `smoke_divisor`, `default_divisor`, `precision`, \
         `min_repeat`, `max_repeat`, `budget`, `fork_rounds`, `cache`"
    ));
    let (_, errors) = bench(quote!(speed = 1));
    assert!(errors[0].starts_with("unknown option `speed`; valid options are: `data_files`"));
    let (_, errors) = case(quote!(nme = "a"));
    assert!(errors[0].starts_with(
        "unknown option `nme` in `#[case]`; did you mean `name`? valid options are: `name`, `like`, `data_files`"
    ));
    assert!(errors[0].ends_with("`log_on`, `backends`"), "{errors:?}");
}

#[test]
fn duplicates_are_reported_at_the_second_occurrence() {
    let (options, errors) = bench(quote!(
        growth = "1MB",
        growth = "2MB",
        repeat = 1,
        repeat = 2
    ));
    assert_eq!(
        errors,
        [
            "`growth` is set twice in this attribute; remove one of them, or give a list such as `growth = [a, b]` to try several values",
            "`repeat` is set twice in this attribute; remove one of them",
        ]
    );
    assert_eq!(options.storage.len(), 1);
    assert_eq!(options.run.repeat.unwrap().value, 1);
}

#[test]
fn an_option_without_a_value_says_how_to_write_it() {
    let (_, errors) = bench(quote!(ifi, growth));
    assert_eq!(
        errors,
        [
            "`ifi` needs a value: write `ifi = true` or `ifi = false`",
            "`growth` needs a value: write `growth = \"64MB\"`, `growth = \"10%\"` or `growth = \"none\"`",
        ]
    );
}

#[test]
fn lists_are_for_storage_options_of_db_bench_only() {
    let (_, errors) = bench(quote!(repeat = [1, 2], data_files = [], backends = []));
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert!(errors[0].starts_with("`repeat` applies to the whole benchmark and cannot be a list"));
    assert!(errors[1].starts_with("`data_files` has an empty list, which would make no cells"));
    assert!(errors[2].starts_with("`backends` has an empty list"));
    let (_, errors) = case(quote!(name = "a", growth = ["1MB"]));
    assert!(errors[0].starts_with("`#[case]` takes one value per option, not a list"));
}

#[test]
fn a_bad_list_item_drops_the_axis_after_reporting_it() {
    let (options, errors) = bench(quote!(data_files = [1, 0, 65]));
    assert_eq!(errors.len(), 2);
    assert!(options.storage.is_empty());
}

#[test]
fn options_in_the_wrong_attribute() {
    let (_, errors) = bench(quote!(name = "x"));
    assert!(errors[0].starts_with("`name` belongs in `#[case(...)]`"));
    let (options, errors) = case(quote!(name = "a", warmup = 2, growth = "1MB"));
    assert_eq!(
        errors,
        ["`warmup` is a run option and belongs in `#[db_bench(...)]`: it applies to every cell, so it cannot differ per case"]
    );
    assert_eq!(options.name.unwrap().value, "a");
    assert_eq!(options.storage.len(), 1);
    let (_, errors) = case(quote!(name = "a", smoke_divisor = 64));
    assert_eq!(
        errors,
        ["`smoke_divisor` is a run option and belongs in `#[db_bench(...)]`: it applies to every cell, so it cannot differ per case"]
    );
}

#[test]
fn a_case_may_set_its_own_backends() {
    let (options, errors) = case(quote!(name = "a", backends = "mssql", growth = "1MB"));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(options.backends.unwrap().value, [Backend::Mssql]);
    assert_eq!(options.storage.len(), 1);
    let (options, errors) = case(quote!(name = "a", backends = ["embedded", "mssql"]));
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(
        options.backends.unwrap().value,
        [Backend::Embedded, Backend::Mssql]
    );
    let (options, errors) = case(quote!(name = "a", backends = ["mssql", "mssql"]));
    assert_eq!(
        errors,
        ["`backends` lists \"mssql\" twice; remove one of them"]
    );
    assert!(options.backends.is_none());
    let (_, errors) = case(quote!(name = "a", backends = []));
    assert_eq!(
        errors,
        ["`backends` has an empty list; name at least one backend, such as `backends = [\"mssql\"]`, or remove it to run this case on the benchmark's backends"]
    );
    let (_, errors) = case(quote!(
        name = "a",
        backends = "mssql",
        backends = "embedded"
    ));
    assert_eq!(
        errors,
        ["`backends` is set twice in this attribute; remove one of them"]
    );
}

#[test]
fn backends_are_named_once_each() {
    let (_, errors) = bench(quote!(backends = ["mssql", "mssql", "oracle"]));
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert_eq!(
        errors[0],
        "`backends` lists \"mssql\" twice; remove one of them"
    );
    let expected = format!("`backends` must be {}", backend_list());
    assert!(errors[1].starts_with(&expected), "{}", errors[1]);
}

/// `"embedded", "mssql" or "postgres"`: the backends of the name table as the macro lists them.
fn backend_list() -> String {
    let names: Vec<String> = dbbench_options::keyword::BACKENDS
        .iter()
        .map(|b| format!("\"{}\"", b.keyword))
        .collect();
    let (last, rest) = names.split_last().unwrap();
    format!("{} or {last}", rest.join(", "))
}
