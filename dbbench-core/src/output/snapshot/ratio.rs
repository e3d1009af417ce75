//! A cell's ratio to the benchmark's baseline as the snapshot records it: what travels between
//! machines.
//!
//! Absolute seconds measure the machine as much as the configuration (the same work ran 1.7 times
//! slower on one VM than on another of its kind), but the cells of one run share that machine, so
//! their ratio to the baseline cell does not carry it. Each cell's ratio is the one the results
//! table shows ([`crate::analysis::ratio::Ratio::between`]): paired within each fork, its 95%
//! interval a t interval over the forks' mean log-ratios, so it covers what one invocation
//! shares. It is this run's own ratio, never pooled with the store's earlier runs
//! (`analysis::drift`): a snapshot must read the same from a fresh clone, which has none. The
//! comparator judges these ratios on any machine
//! ([`crate::output::comparator`]) and the seconds only on the machine that recorded them.

use crate::analysis::ratio::{Margin, Ratio};
use crate::model::interference::Busy;
use crate::model::results::{BenchmarkResult, CellResult};
use serde::Serialize;

/// `ratio: {baseline: test_1, value: 0.742, ci95: [0.712, 0.771]}` in the YAML; a mapping with
/// `baseline` and `value` is what the comparator judges as a ratio.
#[derive(Debug, Serialize)]
pub(super) struct RatioView {
    /// The cell the ratio is to.
    pub(super) baseline: String,
    /// The cell's time over the baseline's, to three significant digits.
    pub(super) value: f64,
    /// The 95% interval (over forks where the benchmark ran them); null without one.
    pub(super) ci95: Option<[f64; 2]>,
    /// "2 of 28 runs" when runs of the cell or the baseline were measured while the machine was
    /// busy: such a ratio is not judged, in either direction.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) busy: Option<String>,
}

/// The ratio of `cell` to the baseline of `result`; `None` for the baseline itself, or without
/// measured runs on both sides.
pub(super) fn of(result: &BenchmarkResult, cell: &CellResult) -> Option<RatioView> {
    let base = result.cells.get(result.baseline_index())?;
    if base.name == cell.name {
        return None;
    }
    // As the results table computes it (`analysis::table`): one ratio, wherever it is shown.
    let paired_order = result.run.order == crate::model::config::Order::Interleaved.keyword();
    let pilot = result.run.precision.as_ref().map(|p| p.min_rounds as usize);
    let ratio = Ratio::between(cell, base, paired_order, pilot, Margin::from_env())?;
    let busy = Busy::of(cell.measured()).plus(Busy::of(base.measured()));
    Some(RatioView {
        baseline: base.name.clone(),
        value: three(ratio.ratio),
        ci95: ratio.ci.map(|ci| [three(ci.low), three(ci.high)]),
        busy: busy
            .any()
            .then(|| format!("{} of {} runs", busy.disturbed, busy.runs)),
    })
}

/// `0.742 [0.712, 0.771]`, or the ratio alone without an interval: the table's column.
pub(super) fn text(view: &RatioView) -> String {
    match view.ci95 {
        Some([low, high]) => format!("{} [{low}, {high}]", view.value),
        None => view.value.to_string(),
    }
}

/// `x` to three significant digits: the ratio's interval is a few percent wide, so a fourth digit
/// would only make every diff line change.
fn three(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let scale = 10f64.powi(2 - x.abs().log10().floor() as i32);
    (x * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_cell_but_the_baseline_has_the_tables_ratio() {
        let result = crate::model::sample::vlf();
        assert!(of(&result, &result.cells[0]).is_none(), "the baseline");
        let view = of(&result, &result.cells[2]).unwrap();
        assert_eq!(view.baseline, result.cells[0].name);
        let table = crate::analysis::table::BenchmarkTable::of(&result);
        let shown = table.rows[2].ratio.as_ref().unwrap();
        assert_eq!(view.value, three(shown.ratio));
        let ci = shown.ci.unwrap();
        assert_eq!(view.ci95, Some([three(ci.low), three(ci.high)]));
        assert!(text(&view).starts_with(&format!("{} [", view.value)));
    }

    #[test]
    fn three_digits() {
        assert_eq!(three(0.74123), 0.741);
        assert_eq!(three(1.0049), 1.0);
        assert_eq!(three(12.345), 12.3);
    }
}
