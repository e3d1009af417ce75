//! A/A checks: a cell the suite expects to equal another cell, its control, because nothing that
//! runs differs between them (PostgreSQL 15's `pg_test_5` against `pg_test_4`: no parallel plan
//! for `INSERT … SELECT`, so the declared MAXDOP changes nothing). The suite declares the pair
//! ([`crate::model::reference::Reference::expect_equivalent`]); this measures it with the same
//! interval and verdict as a ratio to the baseline, so that a verdict other than "equivalent" is
//! shown as the finding it is (a confounder left, or noise wider than the interval says) rather
//! than left to a reader to compute.

use crate::analysis::ratio::{Margin, Ratio, Verdict};
use crate::model::results::BenchmarkResult;

/// One A/A pair as measured.
#[derive(Debug, Clone, PartialEq)]
pub struct ControlCheck {
    /// The cell expected to equal its control.
    pub cell: String,
    /// The cell it is expected to equal.
    pub control: String,
    /// The cell's time over the control's, judged as the table judges ratios (busy windows and
    /// calibrations overrule); `None` without measured runs on both sides.
    pub ratio: Option<Ratio>,
}

/// The A/A pairs of `result` whose two cells both ran, in the reference's order.
pub fn checks(result: &BenchmarkResult) -> Vec<ControlCheck> {
    let Some(reference) = &result.reference else {
        return Vec::new();
    };
    let paired_order = result.run.order == crate::model::config::Order::Interleaved.keyword();
    let pilot = result.run.precision.as_ref().map(|p| p.min_rounds as usize);
    let cell = |name: &str| result.cells.iter().find(|c| c.name == name);
    reference
        .cases
        .iter()
        .filter(|case| !case.equivalent_to.is_empty())
        .filter_map(|case| {
            let (this, control) = (cell(&case.cell)?, cell(&case.equivalent_to)?);
            let ratio = Ratio::between(this, control, paired_order, pilot, Margin::from_env())
                .map(|r| crate::analysis::table::judge(r, this, control).0);
            Some(ControlCheck {
                cell: case.cell.clone(),
                control: case.equivalent_to.clone(),
                ratio,
            })
        })
        .collect()
}

impl ControlCheck {
    /// "measured against pg_test_4: 0.98 [0.93, 1.04], equivalent (within ±10%), as expected",
    /// or, for any other verdict, what it means for the check.
    pub fn describe(&self) -> String {
        let Some(ratio) = &self.ratio else {
            return format!(
                "measured against {}: no ratio (too few measured runs)",
                self.control
            );
        };
        let interval = ratio
            .ci
            .map(|ci| format!(" [{:.2}, {:.2}]", ci.low, ci.high))
            .unwrap_or_default();
        // The A/A expectation is "no difference worth reporting": an interval inside the margin
        // meets it even where a tight interval also excludes 1 (the table's "slower" by 1%).
        let inside = ratio
            .ci
            .is_some_and(|ci| ci.low >= 1.0 - ratio.margin.0 && ci.high <= 1.0 + ratio.margin.0);
        let outcome = match ratio.verdict {
            Verdict::Equivalent => "as expected".to_string(),
            Verdict::Faster | Verdict::Slower if inside => format!(
                "within {}, as expected (the difference is smaller than the margin)",
                ratio.margin.describe()
            ),
            Verdict::Faster | Verdict::Slower => {
                "NOT equivalent: a finding (something besides the declared option differs, or \
                 the noise is wider than the interval says)"
                    .to_string()
            }
            _ => "the A/A check does not conclude".to_string(),
        };
        format!(
            "measured against {}: {:.2}{interval}, {}; {outcome}",
            self.control,
            ratio.ratio,
            ratio.verdict_text()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::reference::{Reference, ReferenceCase};

    /// The sample VLF result with `cells[2]` declared an A/A pair of `cells[1]`, its rounds
    /// scaled from `cells[1]`'s by `factor`.
    fn pair(factor: f64) -> BenchmarkResult {
        let mut result = crate::model::sample::vlf();
        let (control, cell) = (result.cells[1].name.clone(), result.cells[2].name.clone());
        let control_runs = result.cells[1].runs.clone();
        for (run, base) in result.cells[2].runs.iter_mut().zip(&control_runs) {
            run.elapsed_s = base.elapsed_s * factor;
        }
        result.reference = Some(
            Reference::new("vlf::doubling", "source", &result.cells[0].name)
                .case(ReferenceCase::cell(&cell))
                .expect_equivalent(&cell, &control, "expected equivalent"),
        );
        result
    }

    #[test]
    fn a_pair_within_the_margin_meets_the_expectation() {
        let checks = checks(&pair(1.01));
        assert_eq!(checks.len(), 1);
        let text = checks[0].describe();
        assert!(text.contains("1.01 [1.01, 1.01]"), "{text}");
        assert!(
            text.ends_with("within ±10%, as expected (the difference is smaller than the margin)"),
            "{text}"
        );
    }

    #[test]
    fn a_noisy_pair_inside_the_margin_reads_equivalent() {
        let mut result = pair(1.0);
        let factors = [1.02, 0.99, 1.0];
        for (run, f) in result.cells[2].runs.iter_mut().zip(factors) {
            run.elapsed_s *= f;
        }
        let text = checks(&result)[0].describe();
        assert!(
            text.contains("equivalent (within ±10%); as expected"),
            "{text}"
        );
    }

    #[test]
    fn a_pair_that_differs_is_called_a_finding() {
        let text = checks(&pair(0.7))[0].describe();
        assert!(text.contains("0.70"), "{text}");
        assert!(text.contains("faster; NOT equivalent: a finding"), "{text}");
    }

    #[test]
    fn a_pair_whose_cell_did_not_run_is_not_listed() {
        let mut result = pair(1.0);
        result.cells.remove(2);
        assert!(checks(&result).is_empty());
    }
}
