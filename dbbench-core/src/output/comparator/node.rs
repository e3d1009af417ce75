//! What a node of a snapshot's YAML is (a ratio, a measurement, a statistic) and how its scalars
//! read and print: apart from the comparison's walk, which asks these questions of every node.

use yaml_rust2::{Yaml, YamlLoader};

/// The text of `key` in `h`.
pub(super) fn text(h: &yaml_rust2::yaml::Hash, key: &str) -> Option<String> {
    h.get(&Yaml::String(key.into()))
        .and_then(|v| v.as_str())
        .map(str::to_string)
}

/// Why measurements of either side cannot be judged because the machine was busy.
pub(super) fn busy_sides(
    old: &yaml_rust2::yaml::Hash,
    new: &yaml_rust2::yaml::Hash,
) -> Option<String> {
    match (text(new, "busy"), text(old, "busy")) {
        (Some(now), then) => Some(format!(
            "inconclusive: the machine was busy in {now}{}",
            then.map_or(String::new(), |then| format!(
                " (and in {then} of the recording)"
            ))
        )),
        (None, Some(then)) => Some(format!(
            "inconclusive: the recording's machine was busy in {then}"
        )),
        (None, None) => None,
    }
}

/// A ratio node: `baseline` and `value` ([`crate::output::snapshot`]).
pub(super) fn is_ratio(map: &yaml_rust2::yaml::Hash) -> bool {
    map.contains_key(&Yaml::String("baseline".into()))
        && map.contains_key(&Yaml::String("value".into()))
}

/// The number of ratio nodes in `doc`: how many ratios one snapshot check judges at once.
pub(super) fn count_ratios(doc: &Yaml) -> usize {
    match doc {
        Yaml::Hash(h) if is_ratio(h) => 1,
        Yaml::Hash(h) => h.values().map(count_ratios).sum(),
        Yaml::Array(a) => a.iter().map(count_ratios).sum(),
        _ => 0,
    }
}

/// The ratios a recorded snapshot body holds (the Bonferroni count of a check of one cell).
pub fn ratios_in(body: &str) -> usize {
    YamlLoader::load_from_str(body)
        .ok()
        .and_then(|docs| docs.first().map(count_ratios))
        .unwrap_or(0)
}

pub(super) fn is_measurement(map: &yaml_rust2::yaml::Hash) -> bool {
    map.contains_key(&Yaml::String("mean_s".into()))
}

pub(super) fn is_statistic(key: &Yaml) -> bool {
    matches!(key.as_str(), Some("mean_s" | "ci95_s"))
}

pub(super) fn number(value: &Yaml) -> Option<f64> {
    match value {
        Yaml::Real(_) => value.as_f64(),
        Yaml::Integer(i) => Some(*i as f64),
        _ => None,
    }
}

pub(super) fn interval(value: &Yaml) -> Option<crate::analysis::stats::Interval> {
    match value.as_vec()?.as_slice() {
        [low, high] => Some(crate::analysis::stats::Interval {
            low: number(low)?,
            high: number(high)?,
        }),
        _ => None,
    }
}

pub(super) fn key_text(key: &Yaml) -> String {
    scalar_text(key)
}

pub(super) fn scalar_text(value: &Yaml) -> String {
    match value {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        Yaml::Null => "~".into(),
        Yaml::Array(_) => "a list".into(),
        Yaml::Hash(_) => "a mapping".into(),
        other => format!("{other:?}"),
    }
}

/// A list entry is named by its `name` field where it has one (cells, files, laps).
pub(super) fn entry_label(entry: &Yaml, index: usize) -> String {
    entry["name"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| index.to_string())
}

pub(super) fn display(path: &str) -> &str {
    if path.is_empty() {
        "the snapshot"
    } else {
        path.trim_start_matches('.')
    }
}

/// The snapshot without its `table`: the table is derived from the fields below it, which are
/// compared, and its elapsed column is a measurement the timing block already judges. Snapshots
/// recorded before it existed still match.
pub(super) fn without_table(doc: &Yaml) -> Yaml {
    match doc {
        Yaml::Hash(h) => {
            let mut h = h.clone();
            h.remove(&Yaml::String("table".into()));
            Yaml::Hash(h)
        }
        other => other.clone(),
    }
}
