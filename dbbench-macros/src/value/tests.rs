use super::*;
use crate::parse::test_value;
use quote::quote;

/// Runs `convert` on `tokens` and returns the result with the messages recorded.
fn run<T>(
    tokens: proc_macro2::TokenStream,
    convert: impl FnOnce(&Value, &mut Errors) -> Option<T>,
) -> (Option<T>, Vec<String>) {
    let value = test_value(tokens);
    let mut errors = Errors::new();
    let out = convert(&value, &mut errors);
    (out, errors.messages())
}

fn error_of<T: std::fmt::Debug>(
    tokens: proc_macro2::TokenStream,
    convert: impl FnOnce(&Value, &mut Errors) -> Option<T>,
) -> String {
    let (out, errors) = run(tokens, convert);
    assert!(out.is_none(), "expected an error, got {out:?}");
    assert_eq!(errors.len(), 1, "{errors:?}");
    errors.into_iter().next().unwrap()
}

fn storage_of(key: Key, tokens: proc_macro2::TokenStream) -> StorageValue {
    let (out, errors) = run(tokens, |v, e| storage(key, v, e));
    assert!(errors.is_empty(), "{errors:?}");
    out.unwrap().value
}

#[test]
fn storage_values_of_every_kind() {
    assert_eq!(
        storage_of(Key::DataFiles, quote!(8)),
        StorageValue::Count(8)
    );
    assert_eq!(storage_of(Key::Maxdop, quote!(0)), StorageValue::Count(0));
    assert_eq!(
        storage_of(Key::DataSize, quote!("1000MB")),
        StorageValue::Size(SizeValue {
            bytes: 1000 * 1024 * 1024,
            text: "1000MB".into()
        })
    );
    assert_eq!(
        storage_of(Key::LogGrowth, quote!("10%")),
        StorageValue::Growth(GrowthValue::Percent(10))
    );
    assert_eq!(
        storage_of(Key::Growth, quote!("none")),
        StorageValue::Growth(GrowthValue::None)
    );
    assert_eq!(
        storage_of(Key::Ifi, quote!(false)),
        StorageValue::Bool(false)
    );
    assert_eq!(
        storage_of(Key::Recovery, quote!("bulk_logged")),
        StorageValue::Recovery(Recovery::BulkLogged)
    );
    assert_eq!(
        storage_of(Key::DataOn, quote!("fast, slow")),
        StorageValue::Volumes(vec!["fast".into(), "slow".into()])
    );
    assert_eq!(
        storage_of(Key::LogOn, quote!("slow")),
        StorageValue::Volume("slow".into())
    );
}

#[test]
fn name_text_is_what_cell_names_are_made_of() {
    assert_eq!(storage_of(Key::Growth, quote!("1MB")).name_text(), "1MB");
    assert_eq!(storage_of(Key::Growth, quote!("10%")).name_text(), "10%");
    assert_eq!(storage_of(Key::DataOn, quote!("a , b")).name_text(), "a,b");
    assert_eq!(storage_of(Key::Ifi, quote!(true)).name_text(), "true");
}

#[test]
fn wrong_types_say_how_to_write_the_option() {
    assert_eq!(
        error_of(quote!("yes"), |v, e| boolean(Key::Ifi, v, e)),
        "`ifi` takes a boolean: write `ifi = true` or `ifi = false`"
    );
    assert_eq!(
        error_of(quote!("4"), |v, e| int(Key::DataFiles, v, 1, 64, e)),
        "`data_files` takes an integer: write `data_files = 4`"
    );
    assert_eq!(
        error_of(quote!(1MB), |v, e| growth(Key::Growth, v, e)),
        "`growth` takes a string: write `growth = \"1MB\"`"
    );
    assert_eq!(
        error_of(quote!(full), |v, e| storage(Key::Recovery, v, e)),
        "`recovery` takes a string: write `recovery = \"full\"`"
    );
    assert_eq!(
        error_of(quote!(fast), |v, e| storage(Key::Recovery, v, e)),
        "`recovery` takes a string: write `recovery = \"simple\"`, \
         `recovery = \"full\"` or `recovery = \"bulk_logged\"`"
    );
    assert_eq!(
        error_of(quote!(data_files_1), |v, e| string(Key::Baseline, v, e)
            .map(str::to_string)),
        "`baseline` takes a string: write `baseline = \"data_files_1\"`"
    );
    assert_eq!(
        error_of(quote!(4x), |v, e| int(Key::Repeat, v, 1, 1000, e)),
        "`repeat` takes an integer: write `repeat = 3`"
    );
    assert_eq!(
        error_of(quote!(true), |v, e| int(
            Key::DefaultDivisor,
            v,
            1,
            1 << 20,
            e
        )),
        "`default_divisor` takes an integer: write `default_divisor = 64`"
    );
}

#[test]
fn integers_outside_their_range() {
    assert_eq!(
        error_of(quote!(0), |v, e| int(Key::DataFiles, v, 1, 64, e)),
        "`data_files` must be between 1 and 64; found 0"
    );
    assert_eq!(
        error_of(quote!(-1), |v, e| storage(Key::Maxdop, v, e)),
        "`maxdop` must be between 0 and 64 (0 means the server's default); found -1"
    );
    let (ok, _) = run(quote!(64u32), |v, e| int(Key::DataFiles, v, 1, 64, e));
    assert_eq!(ok, Some(64));
}

#[test]
fn sizes_and_growths_explain_the_form() {
    assert_eq!(
        error_of(quote!("1 MX"), |v, e| growth(Key::Growth, v, e)),
        "`growth` must be a size such as \"64MB\", a percent such as \"10%\", or \"none\"; found \"1 MX\""
    );
    assert_eq!(
        error_of(quote!("32KB"), |v, e| growth(Key::LogGrowth, v, e)),
        "`log_growth` must grow by at least \"64KB\", one extent; found \"32KB\""
    );
    assert_eq!(
        error_of(quote!("2TB"), |v, e| growth(Key::Growth, v, e)),
        "`growth` must grow by at most \"1TB\"; found \"2TB\""
    );
    assert_eq!(
        error_of(quote!("0%"), |v, e| growth(Key::Growth, v, e)),
        "`growth` must be a percent between \"1%\" and \"1000%\"; found \"0%\""
    );
    assert_eq!(
        error_of(quote!("0MB"), |v, e| size(Key::DataSize, v, e)),
        "`data_size` must be greater than zero; found \"0MB\""
    );
    assert_eq!(
        error_of(quote!("65TB"), |v, e| size(Key::LogSize, v, e)),
        "`log_size` must be at most \"64TB\"; found \"65TB\""
    );
    assert!(error_of(quote!("12"), |v, e| size(Key::LogSize, v, e))
        .starts_with("`log_size` must be a size such as \"64MB\""));
}

#[test]
fn durations() {
    let (ms, _) = run(quote!("10m"), |v, e| duration(Key::Timeout, v, e));
    assert_eq!(ms, Some(600_000));
    assert_eq!(
        error_of(quote!("0s"), |v, e| duration(Key::Timeout, v, e)),
        "`timeout` must be longer than zero; found \"0s\""
    );
    assert_eq!(
        error_of(quote!(30s), |v, e| duration(Key::Timeout, v, e)),
        "`timeout` takes a duration string with a unit: write `timeout = \"30s\"`"
    );
}

#[test]
fn keywords_suggest_the_nearest() {
    assert_eq!(
        error_of(quote!("fulll"), |v, e| storage(Key::Recovery, v, e)),
        "`recovery` must be \"simple\", \"full\" or \"bulk_logged\"; found \"fulll\"; did you mean \"full\"?"
    );
    assert_eq!(
        error_of(quote!("oracle"), backend),
        format!("`backends` must be {}; found \"oracle\"", backend_list())
    );
}

#[test]
fn volume_names() {
    assert!(
        error_of(quote!("fast,,slow"), |v, e| volumes(Key::DataOn, v, e))
            .contains("found an empty volume name in \"fast,,slow\"")
    );
    assert!(error_of(quote!("Fast"), |v, e| volumes(Key::DataOn, v, e))
        .starts_with("`data_on` has the volume name \"Fast\""));
    assert_eq!(
        error_of(quote!("a,b"), |v, e| volume(Key::LogOn, v, e)),
        "`log_on` takes a single volume because the log is one file; found \"a,b\""
    );
    assert!(error_of(quote!(""), |v, e| volume(Key::LogOn, v, e)).contains("needs a volume"));
}

#[test]
fn case_names_must_be_snake_case_identifiers() {
    let (name, _) = run(quote!("test_3"), case_name);
    assert_eq!(name.as_deref(), Some("test_3"));
    assert_eq!(
        error_of(quote!("Test3"), case_name),
        "case name \"Test3\" is not a snake_case identifier: use lowercase letters, digits \
         and `_`, starting with a letter, such as \"test3\""
    );
    assert!(error_of(quote!("3rd"), case_name).ends_with("such as \"case_3rd\""));
    assert!(error_of(quote!("big file"), case_name).ends_with("such as \"big_file\""));
    assert!(error_of(quote!("bigFile"), case_name).ends_with("such as \"big_file\""));
    assert!(error_of(quote!("match"), case_name).contains("is a Rust keyword"));
    assert!(error_of(quote!(test_3), case_name).starts_with("`name` takes a string"));
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
