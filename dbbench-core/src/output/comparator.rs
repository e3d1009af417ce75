//! The noise-aware snapshot comparison: deterministic fields must be equal, timings need only be
//! statistically indistinguishable from the recorded ones.
//!
//! A snapshot is YAML. Any mapping with a `mean_s` key is a *measurement*: its `mean_s` and
//! `ci95_s` (a `[low, high]` pair, or null for a single run) are compared by [`Tolerance`], its
//! other keys exactly. Every other node is compared exactly, structure included. A measurement
//! passes when
//!
//! * the recorded mean lies in the new interval, the new mean in the recorded interval, or the
//!   two intervals overlap (the runs cannot be told apart), or
//! * the new mean is within the tolerance band around the recorded one: `DBBENCH_TOLERANCE`
//!   (relative, default 10%) plus `DBBENCH_TOLERANCE_ABS` (seconds, default 0.05 s, so that the
//!   millisecond runs and laps of smoke-scale `cargo test` runs, which are dominated by
//!   scheduler noise, do not fail; a doubling of anything longer than 50 ms still does).
//!
//! A mapping with a `machine` key is a block of timings (with `runs` where a precision target chose
//! how many), with the `calibration` of the machine that measured them ([`crate::model::calibration`]) and, when some runs were measured while the
//! machine was busy, `busy: 3 of 5 runs` ([`crate::model::interference`]). Its measurements are
//! compared only when neither side was busy and both calibrations agree; otherwise the block is
//! skipped with a note ("inconclusive: the machine was busy in 3 of 5 runs", "not comparable:
//! this machine's calibration differs from the recording's (fsync 0.35 ms vs 0.54 ms)"), so a
//! run on another or a busy machine checks the deterministic fields only and leaves the recorded
//! timings in place. The machine's name is for the reader: machines of one name differ.
//!
//! `DBBENCH_TIMING=ignore` skips measurements entirely and checks deterministic fields only, for
//! CI on hardware other than the one that recorded the snapshot.
//!
//! [`NoiseComparator`] plugs this into insta as its `Comparator`, so a passing comparison leaves
//! the `.snap` untouched and a failing one goes through insta's normal path: a pending
//! `.snap.new` for `cargo insta review` and a diff of old and new values.

use crate::model::error::{Error, Result};
use yaml_rust2::{Yaml, YamlLoader};

/// Whether timing fields take part in the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimingMode {
    /// Compare measurements statistically (the default).
    Compare,
    /// Check deterministic fields only (`DBBENCH_TIMING=ignore`).
    Ignore,
}

/// How far a new measurement may move before it counts as a change.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Allowed relative change of the mean (0.10 = 10%).
    pub relative: f64,
    /// Allowed absolute change of the mean in seconds, added to the relative band.
    pub absolute_s: f64,
    /// Whether timings are compared at all.
    pub mode: TimingMode,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            relative: 0.10,
            absolute_s: 0.05,
            mode: TimingMode::Compare,
        }
    }
}

impl Tolerance {
    /// The tolerance from `DBBENCH_TOLERANCE`, `DBBENCH_TOLERANCE_ABS` and `DBBENCH_TIMING`.
    pub fn from_env() -> Result<Tolerance> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        Tolerance::parse(
            var("DBBENCH_TOLERANCE").as_deref(),
            var("DBBENCH_TOLERANCE_ABS").as_deref(),
            var("DBBENCH_TIMING").as_deref(),
        )
    }

    /// The tolerance from the variables' values: `relative` as `10%` or `0.1`, `absolute` in
    /// seconds as `0.01`, `10ms` or `0.01s`, `timing` as `compare` or `ignore`.
    pub fn parse(
        relative: Option<&str>,
        absolute: Option<&str>,
        timing: Option<&str>,
    ) -> Result<Tolerance> {
        let mut t = Tolerance::default();
        if let Some(text) = relative {
            let text = text.trim();
            t.relative = match text.strip_suffix('%') {
                Some(pct) => pct.trim().parse::<f64>().map(|p| p / 100.0),
                None => text.parse::<f64>(),
            }
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| {
                Error::Config(format!(
                    "DBBENCH_TOLERANCE must be a percentage like `10%` or a fraction like `0.1`; \
                     found `{text}`"
                ))
            })?;
        }
        if let Some(text) = absolute {
            let text = text.trim();
            t.absolute_s = if let Some(ms) = text.strip_suffix("ms") {
                ms.trim().parse::<f64>().map(|v| v / 1000.0)
            } else {
                text.strip_suffix('s').unwrap_or(text).trim().parse::<f64>()
            }
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| {
                Error::Config(format!(
                    "DBBENCH_TOLERANCE_ABS must be a duration like `0.01`, `10ms` or `0.5s`; \
                     found `{text}`"
                ))
            })?;
        }
        if let Some(text) = timing {
            t.mode = match text.trim() {
                "compare" => TimingMode::Compare,
                "ignore" => TimingMode::Ignore,
                other => {
                    return Err(Error::Config(format!(
                        "DBBENCH_TIMING must be `compare` or `ignore`; found `{other}`"
                    )))
                }
            };
        }
        Ok(t)
    }

    /// Compares a recorded snapshot text with a new one; `Err` lists every difference found.
    pub fn compare(&self, recorded: &str, new: &str) -> std::result::Result<(), Vec<String>> {
        self.compare_noting(recorded, new).0
    }

    /// [`Tolerance::compare`], with the notes on timing blocks that were not compared and why.
    pub fn compare_noting(
        &self,
        recorded: &str,
        new: &str,
    ) -> (std::result::Result<(), Vec<String>>, Vec<String>) {
        let mut notes = Vec::new();
        let outcome = self.compare_into(recorded, new, &mut notes);
        (outcome, notes)
    }

    fn compare_into(
        &self,
        recorded: &str,
        new: &str,
        notes: &mut Vec<String>,
    ) -> std::result::Result<(), Vec<String>> {
        let parse = |text: &str| {
            YamlLoader::load_from_str(text)
                .ok()
                .filter(|d| d.len() == 1)
        };
        let (Some(old), Some(new_doc)) = (parse(recorded), parse(new)) else {
            // Not YAML: only an exact match can pass.
            return if recorded.trim() == new.trim() {
                Ok(())
            } else {
                Err(vec!["the snapshot text differs".into()])
            };
        };
        let mut differences = Vec::new();
        let timings = self.mode == TimingMode::Compare;
        let (old, new_doc) = (without_table(&old[0]), without_table(&new_doc[0]));
        self.walk(&old, &new_doc, "", timings, &mut differences, notes);
        if differences.is_empty() {
            Ok(())
        } else {
            Err(differences)
        }
    }

    /// Compares `old` with `new` below `path`; measurements are compared only when `timings`.
    fn walk(
        &self,
        old: &Yaml,
        new: &Yaml,
        path: &str,
        timings: bool,
        out: &mut Vec<String>,
        notes: &mut Vec<String>,
    ) {
        let machine = Yaml::String("machine".into());
        match (old, new) {
            (Yaml::Hash(o), Yaml::Hash(n)) if o.contains_key(&machine) => {
                let judged = timings && {
                    match timing_block_comparable(o, n) {
                        Ok(()) => true,
                        Err(why) => {
                            notes.push(format!("{}: timings not compared: {why}", display(path)));
                            false
                        }
                    }
                };
                let strip = |h: &yaml_rust2::yaml::Hash| {
                    let mut h = h.clone();
                    // `runs` here is a count a precision target chose: for the reader.
                    for key in ["machine", "calibration", "busy", "runs"] {
                        h.remove(&Yaml::String(key.into()));
                    }
                    Yaml::Hash(h)
                };
                self.walk(&strip(o), &strip(n), path, judged, out, notes);
            }
            (Yaml::Hash(o), Yaml::Hash(n)) if is_measurement(o) && is_measurement(n) => {
                for (key, value) in o {
                    if !is_statistic(key) && n.get(key) != Some(value) {
                        out.push(format!("{}: `{}` differs", display(path), key_text(key)));
                    }
                }
                if o.len() != n.len() {
                    out.push(format!("{}: fields differ", display(path)));
                }
                if timings {
                    if let Some(why) = self.measurement_differs(o, n) {
                        out.push(format!("{}: {why}", display(path)));
                    }
                }
            }
            (Yaml::Hash(o), Yaml::Hash(n)) => {
                let old_keys: Vec<&Yaml> = o.keys().collect();
                let new_keys: Vec<&Yaml> = n.keys().collect();
                if old_keys != new_keys {
                    out.push(format!(
                        "{}: fields differ: [{}] became [{}]",
                        display(path),
                        old_keys
                            .iter()
                            .map(|k| key_text(k))
                            .collect::<Vec<_>>()
                            .join(", "),
                        new_keys
                            .iter()
                            .map(|k| key_text(k))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                    return;
                }
                for (key, value) in o {
                    let child = format!("{path}.{}", key_text(key));
                    self.walk(value, &n[key], &child, timings, out, notes);
                }
            }
            (Yaml::Array(o), Yaml::Array(n)) => {
                if o.len() != n.len() {
                    out.push(format!(
                        "{}: {} entries became {}",
                        display(path),
                        o.len(),
                        n.len()
                    ));
                    return;
                }
                for (i, (a, b)) in o.iter().zip(n).enumerate() {
                    let child = format!("{path}[{}]", entry_label(a, i));
                    self.walk(a, b, &child, timings, out, notes);
                }
            }
            (o, n) if o == n => {}
            (o, n) => out.push(format!(
                "{}: {} became {}",
                display(path),
                scalar_text(o),
                scalar_text(n)
            )),
        }
    }

    /// Why the new measurement is a real change, or `None` when it is within the noise.
    fn measurement_differs(
        &self,
        old: &yaml_rust2::yaml::Hash,
        new: &yaml_rust2::yaml::Hash,
    ) -> Option<String> {
        let mean_key = Yaml::String("mean_s".into());
        let ci_key = Yaml::String("ci95_s".into());
        let (Some(old_mean), Some(new_mean)) = (
            old.get(&mean_key).and_then(number),
            new.get(&mean_key).and_then(number),
        ) else {
            return Some("mean_s is not a number".into());
        };
        let old_ci = old.get(&ci_key).and_then(interval);
        let new_ci = new.get(&ci_key).and_then(interval);
        let indistinguishable = new_ci.is_some_and(|ci| ci.contains(old_mean))
            || old_ci.is_some_and(|ci| ci.contains(new_mean))
            || matches!((old_ci, new_ci), (Some(a), Some(b)) if a.overlaps(&b));
        let band = self.relative * old_mean.abs() + self.absolute_s;
        if indistinguishable || (new_mean - old_mean).abs() <= band {
            return None;
        }
        let show = |ci: Option<crate::analysis::stats::Interval>| {
            ci.map(|c| format!(" [{}, {}]", c.low, c.high))
                .unwrap_or_default()
        };
        Some(format!(
            "mean {old_mean} s{} became {new_mean} s{} ({:+.1}%): the 95% intervals do not \
             overlap and the change exceeds the tolerance of {:.0}% + {} s",
            show(old_ci),
            show(new_ci),
            100.0 * (new_mean / old_mean - 1.0),
            100.0 * self.relative,
            self.absolute_s
        ))
    }
}

/// Whether the measurements of a recorded and a new timing block may be compared: neither was
/// measured on a busy machine, and their machines' calibrations agree.
fn timing_block_comparable(
    old: &yaml_rust2::yaml::Hash,
    new: &yaml_rust2::yaml::Hash,
) -> std::result::Result<(), String> {
    use crate::model::calibration::{comparable, Calibration, Tolerance};
    let text = |h: &yaml_rust2::yaml::Hash, key: &str| {
        h.get(&Yaml::String(key.into()))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    match (text(new, "busy"), text(old, "busy")) {
        (Some(now), _) => {
            return Err(format!(
                "inconclusive: the machine was busy in {now}{}",
                text(old, "busy").map_or(String::new(), |then| format!(
                    " (and in {then} of the recording)"
                ))
            ))
        }
        (None, Some(then)) => {
            return Err(format!(
                "inconclusive: the recording's machine was busy in {then}"
            ))
        }
        (None, None) => {}
    }
    let calibration = |h| text(h, "calibration").and_then(|l| Calibration::parse_line(&l));
    comparable(
        calibration(new).as_ref(),
        calibration(old).as_ref(),
        &Tolerance::DEFAULT,
    )
    .map_err(|why| format!("not comparable: {why}"))
}

fn is_measurement(map: &yaml_rust2::yaml::Hash) -> bool {
    map.contains_key(&Yaml::String("mean_s".into()))
}

fn is_statistic(key: &Yaml) -> bool {
    matches!(key.as_str(), Some("mean_s" | "ci95_s"))
}

fn number(value: &Yaml) -> Option<f64> {
    match value {
        Yaml::Real(_) => value.as_f64(),
        Yaml::Integer(i) => Some(*i as f64),
        _ => None,
    }
}

fn interval(value: &Yaml) -> Option<crate::analysis::stats::Interval> {
    match value.as_vec()?.as_slice() {
        [low, high] => Some(crate::analysis::stats::Interval {
            low: number(low)?,
            high: number(high)?,
        }),
        _ => None,
    }
}

fn key_text(key: &Yaml) -> String {
    scalar_text(key)
}

fn scalar_text(value: &Yaml) -> String {
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
fn entry_label(entry: &Yaml, index: usize) -> String {
    entry["name"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| index.to_string())
}

fn display(path: &str) -> &str {
    if path.is_empty() {
        "the snapshot"
    } else {
        path.trim_start_matches('.')
    }
}

/// insta's `Comparator` applying a [`Tolerance`] to text snapshots; binary snapshots compare as
/// insta's default does.
#[derive(Debug, Clone)]
pub struct NoiseComparator {
    /// The tolerance applied.
    pub tolerance: Tolerance,
    /// The notes of every comparison made, for the caller to show once (timing blocks not
    /// compared, and why).
    pub notes: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl insta::Comparator for NoiseComparator {
    fn matches(&self, reference: &insta::Snapshot, test: &insta::Snapshot) -> bool {
        match (reference.as_text(), test.as_text()) {
            (Some(old), Some(new)) => {
                let (outcome, notes) = self
                    .tolerance
                    .compare_noting(&old.to_string(), &new.to_string());
                if let Ok(mut kept) = self.notes.lock() {
                    kept.extend(notes);
                }
                match outcome {
                    Ok(()) => true,
                    Err(differences) => {
                        // Printed before insta's diff (and captured with it by the test
                        // harness), so the output says which change was judged real and why.
                        eprintln!("dbbench: the snapshot differs:");
                        for d in differences {
                            eprintln!("  {d}");
                        }
                        false
                    }
                }
            }
            _ => insta::DefaultComparator.matches(reference, test),
        }
    }

    fn dyn_clone(&self) -> Box<dyn insta::Comparator> {
        Box::new(self.clone())
    }
}

/// The snapshot without its `table`: the table is derived from the fields below it, which are
/// compared, and its elapsed column is a measurement the timing block already judges. Snapshots
/// recorded before it existed still match.
fn without_table(doc: &Yaml) -> Yaml {
    match doc {
        Yaml::Hash(h) => {
            let mut h = h.clone();
            h.remove(&Yaml::String("table".into()));
            Yaml::Hash(h)
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests;
