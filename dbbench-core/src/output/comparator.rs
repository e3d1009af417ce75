//! The noise-aware snapshot comparison: deterministic fields must be equal; ratios between cells
//! need only be statistically and practically unchanged on any machine; seconds are compared only
//! on the machine that recorded them.
//!
//! A snapshot is YAML. Three kinds of node are measurements, every other node is compared
//! exactly, structure included:
//!
//! * **A ratio** — a mapping with `baseline` and `value` (a cell's time over the baseline cell's,
//!   with its forks interval `ci95`; [`crate::output::snapshot`]). The cells of one run share
//!   their machine, so a ratio travels between machines: it is judged wherever timings are
//!   compared, and fails only when it moved beyond both intervals and the drift of a ratio between
//!   machines (`DBBENCH_SNAPSHOT_DRIFT`, an assumption the console states; Bonferroni over the
//!   snapshot's ratios) *and* beyond the practical tolerance `DBBENCH_TOLERANCE` (default 10%)
//!   together ([`ratio`] has the rule and why). A ratio with `busy` on either side is not judged.
//! * **A timing block** — a mapping with a `machine` key: the cell's seconds (elapsed and laps),
//!   with the `calibration` of the machine that measured them ([`crate::model::calibration`]) and,
//!   when some runs were measured while the machine was busy, `busy: 3 of 5 runs`
//!   ([`crate::model::interference`]). Seconds measure the machine as much as the code, so they
//!   are compared only when neither side was busy and both calibrations agree within the
//!   tolerance that licenses the seconds check (every probe within `1 + DBBENCH_TOLERANCE`:
//!   [`crate::model::calibration::Tolerance::licensing`], derived in `docs/busy-machine.md`).
//!   Otherwise the block is skipped with a note ("seconds not compared: another machine (commit
//!   ×1.68, fsync ×1.57)"): a machine difference is never a regression. The machine's name is for
//!   the reader: machines of one name differ.
//! * **A measurement in seconds** — a mapping with `mean_s` inside a compared timing block: it
//!   passes when the recorded mean lies in the new interval, the new mean in the recorded
//!   interval, or the intervals overlap, or when the new mean is within `DBBENCH_TOLERANCE`
//!   (relative, default 10%) plus `DBBENCH_TOLERANCE_ABS` (seconds, default 0.05 s) of the
//!   recorded one.
//!
//! What was compared and what was not is gathered in [`Findings`], for the console's one line.
//! `DBBENCH_TIMING=ignore` skips every measurement and checks deterministic fields only.
//!
//! [`NoiseComparator`] plugs this into insta as its `Comparator`, so a passing comparison leaves
//! the `.snap` untouched and a failing one goes through insta's normal path: a pending
//! `.snap.new` for `cargo insta review` and a diff of old and new values.

use crate::model::error::{Error, Result};
use yaml_rust2::{Yaml, YamlLoader};

mod adapter;
mod findings;
mod node;
pub(crate) mod ratio;
#[cfg(test)]
mod simulation;

pub use adapter::NoiseComparator;
pub use findings::Findings;
pub use node::ratios_in;
use node::{
    busy_sides, count_ratios, display, entry_label, interval, is_measurement, is_ratio,
    is_statistic, key_text, number, scalar_text, text, without_table,
};

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
    /// The drift of a ratio between machines, τ on the log scale on each side
    /// (`DBBENCH_SNAPSHOT_DRIFT`, [`Tolerance::DRIFT`] by default; `output/comparator/ratio.rs`
    /// says why).
    pub drift: f64,
    /// Whether timings are compared at all.
    pub mode: TimingMode,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance {
            relative: 0.10,
            absolute_s: 0.05,
            drift: Tolerance::DRIFT,
            mode: TimingMode::Compare,
        }
    }
}

impl Tolerance {
    /// The drift between machines assumed when `DBBENCH_SNAPSHOT_DRIFT` is not set: the largest
    /// move of a ratio between two states of our VM, `|ln Δ|` 0.28, as `1.96 · √2 · τ`
    /// (`docs/statistics.md`, "The snapshot's ratio check").
    pub const DRIFT: f64 = 0.10;

    /// The tolerance from `DBBENCH_TOLERANCE`, `DBBENCH_TOLERANCE_ABS`, `DBBENCH_TIMING` and
    /// `DBBENCH_SNAPSHOT_DRIFT`.
    pub fn from_env() -> Result<Tolerance> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let mut t = Tolerance::parse(
            var("DBBENCH_TOLERANCE").as_deref(),
            var("DBBENCH_TOLERANCE_ABS").as_deref(),
            var("DBBENCH_TIMING").as_deref(),
        )?;
        if let Some(text) = var("DBBENCH_SNAPSHOT_DRIFT") {
            t.drift = Tolerance::parse_drift(&text)?;
        }
        Ok(t)
    }

    /// `DBBENCH_SNAPSHOT_DRIFT`'s value: τ on the log scale, `0.05` (a ratio drifting by about 5%
    /// between machines), at least 0.
    pub fn parse_drift(text: &str) -> Result<f64> {
        let text = text.trim();
        text.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && (0.0..=2.0).contains(v))
            .ok_or_else(|| {
                Error::Config(format!(
                    "DBBENCH_SNAPSHOT_DRIFT must be the standard deviation of a ratio's logarithm \
                     between machines, a number from 0 to 2 like `0.1`; found `{text}`"
                ))
            })
    }

    /// What a ratio of a snapshot of `ratios` ratios may move by.
    pub fn allowance(&self, ratios: usize) -> ratio::Allowance {
        ratio::Allowance {
            ratios,
            tolerance: self.relative,
            drift: self.drift,
        }
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

    /// [`Tolerance::compare`], with what was compared and what was not, and why.
    pub fn compare_noting(
        &self,
        recorded: &str,
        new: &str,
    ) -> (std::result::Result<(), Vec<String>>, Findings) {
        self.compare_among(recorded, new, None)
    }

    /// [`Tolerance::compare_noting`] of a part of a snapshot (one cell) whose whole holds `ratios`
    /// ratios (the Bonferroni count); `None` counts the ratios of `recorded`.
    pub fn compare_among(
        &self,
        recorded: &str,
        new: &str,
        ratios: Option<usize>,
    ) -> (std::result::Result<(), Vec<String>>, Findings) {
        let mut findings = Findings::default();
        let outcome = self.compare_into(recorded, new, ratios, &mut findings);
        (outcome, findings)
    }

    fn compare_into(
        &self,
        recorded: &str,
        new: &str,
        ratios: Option<usize>,
        findings: &mut Findings,
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
        let m = ratios.unwrap_or_else(|| count_ratios(&old));
        self.walk(&old, &new_doc, "", timings, m, &mut differences, findings);
        if differences.is_empty() {
            Ok(())
        } else {
            Err(differences)
        }
    }

    /// Compares `old` with `new` below `path`; measurements are compared only when `timings`,
    /// ratios with the Bonferroni count `m`.
    #[allow(clippy::too_many_arguments)]
    fn walk(
        &self,
        old: &Yaml,
        new: &Yaml,
        path: &str,
        timings: bool,
        m: usize,
        out: &mut Vec<String>,
        findings: &mut Findings,
    ) {
        let machine = Yaml::String("machine".into());
        match (old, new) {
            (Yaml::Hash(o), Yaml::Hash(n)) if is_ratio(o) && is_ratio(n) => {
                let key = Yaml::String("baseline".into());
                if o.get(&key) != n.get(&key) {
                    out.push(format!(
                        "{}.baseline: {} became {}",
                        display(path),
                        o.get(&key).map_or("~".into(), scalar_text),
                        n.get(&key).map_or("~".into(), scalar_text)
                    ));
                }
                if !timings {
                    return;
                }
                if let Some(why) = busy_sides(o, n) {
                    findings
                        .notes
                        .push(format!("{}: ratio not judged: {why}", display(path)));
                    return;
                }
                findings.ratios += 1;
                findings.drift = Some(self.drift);
                let side = |h: &yaml_rust2::yaml::Hash| {
                    Some(ratio::RecordedRatio {
                        value: h.get(&Yaml::String("value".into())).and_then(number)?,
                        ci: h.get(&Yaml::String("ci95".into())).and_then(interval),
                    })
                };
                match (side(o), side(n)) {
                    (Some(a), Some(b)) => {
                        let (_, bound) = ratio::bound(a, b, self.allowance(m));
                        findings.found_beyond(bound.exp());
                        if let Some(why) = ratio::moved(a, b, self.allowance(m)) {
                            out.push(format!("{}: {why}", display(path)));
                        }
                    }
                    _ => out.push(format!("{}: the ratio is not a number", display(path))),
                }
            }
            (Yaml::Hash(o), Yaml::Hash(n)) if o.contains_key(&machine) => {
                let judged = timings && {
                    match self.seconds_comparable(o, n) {
                        Ok(()) => {
                            findings.seconds += 1;
                            true
                        }
                        Err(why) => {
                            findings
                                .notes
                                .push(format!("{}: seconds not compared: {why}", display(path)));
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
                self.walk(&strip(o), &strip(n), path, judged, m, out, findings);
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
                    self.walk(value, &n[key], &child, timings, m, out, findings);
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
                    self.walk(a, b, &child, timings, m, out, findings);
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

impl Tolerance {
    /// Whether the seconds of a recorded and a new timing block may be compared: neither was
    /// measured on a busy machine, and their calibrations say one machine, within the tolerance
    /// that licenses this seconds check ([`crate::model::calibration::Tolerance::licensing`]).
    fn seconds_comparable(
        &self,
        old: &yaml_rust2::yaml::Hash,
        new: &yaml_rust2::yaml::Hash,
    ) -> std::result::Result<(), String> {
        use crate::model::calibration::{Calibration, Tolerance};
        // Another machine first: a quiet rerun there would not be compared either.
        let calibration = |h| text(h, "calibration").and_then(|l| Calibration::parse_line(&l));
        match (calibration(new), calibration(old)) {
            (Some(now), Some(then)) => now
                .factors(&then, &Tolerance::licensing(self.relative))
                .map_err(|why| format!("another machine ({why})"))?,
            (Some(_), None) => return Err("the recording has no calibration of its machine".into()),
            (None, _) => return Err("this run has no calibration of its machine".into()),
        }
        match busy_sides(old, new) {
            Some(why) => Err(why),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;
