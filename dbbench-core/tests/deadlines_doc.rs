//! `docs/deadlines.md` lists exactly the deadlines of `util::deadline`, in their order, each with
//! its variable, its default and what it bounds, as the code has them.

use dbbench_core::__internals::deadline::{spoken, Deadline};

/// The rows of the table under "## The deadlines": (variable, default, bounds).
fn rows() -> Vec<(String, String, String)> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/deadlines.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let section = doc
        .split("\n## ")
        .find(|s| s.starts_with("The deadlines"))
        .expect("docs/deadlines.md has a section `The deadlines`");
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|row| {
            let cells: Vec<&str> = row.split('|').map(str::trim).collect();
            (
                cells[1].trim_matches('`').to_string(),
                cells[2].to_string(),
                cells[3].to_string(),
            )
        })
        .collect()
}

/// `30 min` in the docs for 30 minutes (10 minutes and more); otherwise as the code says them.
fn documented(limit: std::time::Duration) -> String {
    let s = limit.as_secs();
    if s >= 600 && s.is_multiple_of(60) {
        format!("{} min", s / 60)
    } else {
        spoken(limit)
    }
}

#[test]
fn every_deadline_is_documented_with_its_variable_default_and_meaning() {
    let rows = rows();
    let variables: Vec<&str> = rows.iter().map(|(v, _, _)| v.as_str()).collect();
    let expected: Vec<&str> = Deadline::ALL.iter().map(|d| d.env()).collect();
    assert_eq!(variables, expected, "the table's variables, in order");
    for ((variable, default, bounds), deadline) in rows.iter().zip(Deadline::ALL) {
        assert_eq!(
            default,
            &documented(deadline.default_limit()),
            "the default of {variable}"
        );
        assert!(
            bounds.starts_with(deadline.bounds()),
            "what {variable} bounds: the docs say `{bounds}`, the code `{}`",
            deadline.bounds()
        );
    }
}
