//! `docs/options.md` documents exactly the options the attribute accepts, in their groups and
//! order, with the defaults dbbench applies: the tables are read back and compared with
//! `dbbench-options`, the one source of both.

use dbbench_options::{defaults, Key};

/// The option names of the table under the heading that starts with `heading`: the backticked
/// names of each row's first cell, in order.
fn table_options(doc: &str, heading: &str) -> Vec<(String, String)> {
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with(heading))
        .unwrap_or_else(|| panic!("docs/options.md has no section `{heading}`"));
    let mut out = Vec::new();
    for row in section.lines().filter(|l| l.starts_with("| `")) {
        let first = row.split('|').nth(1).unwrap_or_default();
        let values = row.split('|').nth(2).unwrap_or_default().to_string();
        for name in first.split(',') {
            let name = name.trim().trim_matches('`');
            out.push((name.to_string(), values.clone()));
        }
    }
    out
}

fn doc() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/options.md");
    std::fs::read_to_string(path).unwrap()
}

#[test]
fn every_option_is_documented_in_its_group_and_order() {
    let doc = doc();
    let names = |rows: Vec<(String, String)>| rows.into_iter().map(|(n, _)| n).collect::<Vec<_>>();
    let storage: Vec<&str> = Key::STORAGE.iter().map(|k| k.as_str()).collect();
    let run: Vec<&str> = Key::RUN.iter().map(|k| k.as_str()).collect();
    assert_eq!(names(table_options(&doc, "Storage options")), storage);
    assert_eq!(names(table_options(&doc, "Run options")), run);
}

#[test]
fn documented_defaults_are_the_applied_ones() {
    let doc = doc();
    let rows: Vec<(String, String)> = table_options(&doc, "Storage options")
        .into_iter()
        .chain(table_options(&doc, "Run options"))
        .collect();
    let values = |name: &str| {
        rows.iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    let expect = |name: &str, text: String| {
        assert!(
            values(name).contains(&text),
            "`{name}` should say `{text}`: {}",
            values(name)
        )
    };
    expect("data_files", format!("default {}", defaults::DATA_FILES));
    expect("repeat", format!("default {}", defaults::REPEAT));
    expect("warmup", format!("default {}", defaults::WARMUP));
    expect(
        "smoke_divisor",
        format!(
            "defaults {} and {}",
            defaults::SMOKE_DIVISOR,
            defaults::DEFAULT_DIVISOR
        ),
    );
    expect("smoke_divisor", format!("1..={}", defaults::MAX_DIVISOR));
    expect("order", format!("`\"{}\"` (default)", defaults::ORDER));
    expect("min_repeat", format!("default {}", defaults::MIN_REPEAT));
    expect("max_repeat", format!("default {}", defaults::MAX_REPEAT));
    expect(
        "budget",
        format!("default `\"{}m\"`", defaults::BUDGET_MS / 60_000),
    );
    expect("cache", format!("`\"{}\"` (default)", defaults::CACHE));
}
