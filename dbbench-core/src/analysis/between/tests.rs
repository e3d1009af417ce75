//! The pooling's formulas against hand-computed values, the agreement check on the runs,
//! and a simulation with known truth of how often a run whose earlier runs follow the model
//! prints any "disagrees" line at all (the family-wise rate the correction bounds).

use super::*;
use crate::analysis::ratio::{Margin, Ratio};
use crate::model::earlier::EarlierRatio;

fn close(a: f64, b: f64, tol: f64) {
    assert!((a - b).abs() <= tol, "{a} is not within {tol} of {b}");
}

fn est(y: f64, v: f64) -> Estimate {
    Estimate { y, v, df: 5.0 }
}

#[test]
fn an_interval_gives_back_its_variance() {
    let t = t_quantile(0.975, 5.0);
    let (y, se) = (0.8f64.ln(), 0.04);
    let e = Estimate::of(0.8, (y - t * se).exp(), (y + t * se).exp(), 5.0).unwrap();
    close(e.y, y, 1e-12);
    close(e.v, se * se, 1e-12);
    assert!(Estimate::of(0.8, 0.0, 1.0, 5.0).is_none());
}

#[test]
fn dersimonian_laird_by_hand() {
    // w = 100 each, mean 0.2, Q = 100 · (0.04 + 0 + 0.04) = 8, C = 300 − 30000/300 = 200:
    // τ² = (8 − 2) / 200.
    let runs = [est(0.0, 0.01), est(0.2, 0.01), est(0.4, 0.01)];
    close(dl_tau2(&runs), 0.03, 1e-12);
    // Runs closer than their own errors say: no spread between them.
    let tight = [est(0.0, 0.01), est(0.01, 0.01), est(0.02, 0.01)];
    assert_eq!(dl_tau2(&tight), 0.0);
    assert_eq!(dl_tau2(&runs[..1]), 0.0);
}

#[test]
fn hartung_knapp_by_hand() {
    // τ² = 0.03, w = 1/0.04 = 25 each, mean 0.2, q = 25 · 0.08 / 2 = 1, se = √(1/75).
    let runs = [est(0.0, 0.01), est(0.2, 0.01), est(0.4, 0.01)];
    let (r, ci) = pooled(&runs).unwrap();
    close(r, 0.2f64.exp(), 1e-12);
    let half = t_quantile(0.975, 2.0) * (1.0f64 / 75.0).sqrt();
    close(ci.low, (0.2 - half).exp(), 1e-9);
    close(ci.high, (0.2 + half).exp(), 1e-9);
    assert!(pooled(&runs[..2]).is_none(), "two runs are not pooled");
}

fn earlier_run(invocation: i64, cell: &str, ratio: f64, se: f64) -> EarlierRun {
    let t = t_quantile(0.975, 5.0);
    EarlierRun {
        invocation,
        started_at_unix_s: 0,
        ratios: vec![EarlierRatio {
            cell: cell.into(),
            ratio,
            low: ratio * (-t * se).exp(),
            high: ratio * (t * se).exp(),
            df: 5.0,
        }],
    }
}

fn ratio_with(ratio: f64, se: f64, df: f64) -> Ratio {
    let t = t_quantile(0.975, df);
    let mut r = Ratio::paired(&[(ratio, 1.0), (ratio, 1.0)], Margin::DEFAULT).unwrap();
    r.ci = Some(Interval {
        low: ratio * (-t * se).exp(),
        high: ratio * (t * se).exp(),
    });
    r.df = Some(df);
    r
}

#[test]
fn agreement_uses_a_corrected_prediction_bound() {
    // The test_3 runs: 0.82, then 0.71, 0.76, 0.79, each ±0.02 on the log scale.
    let earlier = [
        earlier_run(7, "test_3", 0.76, 0.02),
        earlier_run(6, "test_3", 0.71, 0.02),
        earlier_run(5, "test_3", 0.79, 0.02),
        earlier_run(4, "test_4", 0.70, 0.02),
    ];
    let this = ratio_with(0.82, 0.02, 5.0);
    let b = BetweenRuns::of("test_3", &this, &earlier).unwrap();
    assert_eq!(b.earlier, 3, "test_4's run has no test_3");
    // Four runs spread more than their ±2% allow: drift τ > 0 from the host's history.
    let drift = b.drift.unwrap();
    assert!(drift > 0.03, "{b:?}");
    // With that drift in the bound (√(2·0.02² + 2τ²) · t(1 − 0.025/3, 5)), none is beyond it.
    assert!(b.disagreeing.is_empty(), "{b:?}");
    let lines = b.lines().join("\n");
    assert!(
        lines.contains("agrees with the 3 earlier runs of this experiment (95% prediction bound, corrected for 3 comparisons)"),
        "{lines}"
    );
    assert!(
        lines.contains("pooled across 4 runs of this host"),
        "{lines}"
    );
    assert!(
        lines.contains("drift between runs beyond their intervals τ = 0.0"),
        "{lines}"
    );
    // One earlier run: no drift estimate, and 0.71 against 0.82 ± 2% each is far beyond the
    // bound (z = 5.1 on √2 · 0.02).
    let b = BetweenRuns::of("test_3", &this, &earlier[1..2]).unwrap();
    assert_eq!(b.drift, None);
    assert_eq!(b.disagreeing, vec![(6, 0.71)]);
    let lines = b.lines().join("\n");
    assert!(
        lines.contains("disagrees with 1 of 1 earlier runs beyond the 95% prediction bound (corrected for 1 comparison): invocation 6 at 0.71"),
        "{lines}"
    );
    assert!(!lines.contains("pooled"), "{lines}");
}

#[test]
fn the_bound_is_a_prediction_bound_not_a_confidence_interval() {
    // Two runs of equal precision, 2.2 standard errors of one run apart: outside either's own
    // confidence interval (t(5) = 2.57 · 0.02 = ±5.3% — 0.82 vs 0.71 is 14%) but, at 2.2
    // σ_one, inside the prediction bound √2 · t · σ_one of their difference.
    let this = est(0.0, 0.0004);
    let other = est(2.2 * 0.02, 0.0004);
    assert!(!disagrees(&this, &other, 0.0, 1));
    assert!(disagrees(&this, &est(0.11, 0.0004), 0.0, 1));
    // The correction: one of ten comparisons needs more to count.
    let borderline = est(0.075, 0.0004);
    assert!(disagrees(&this, &borderline, 0.0, 1));
    assert!(!disagrees(&this, &borderline, 0.0, 10));
}

#[test]
fn a_run_alone_shows_nothing() {
    let result = crate::model::sample::vlf();
    assert!(lines(&result).is_empty());
}

/// Under the model (each run's estimate off by its own stated error), how often a run compared
/// with `k` earlier ones prints at least one "disagrees": at most 5% (family-wise), where the
/// uncorrected confidence-interval check of before flagged 15–33%.
#[test]
fn disagreement_is_printed_in_at_most_five_percent_of_runs_under_the_model() {
    let mut rng = fastrand::Rng::with_seed(41);
    let mut normal = || {
        let (u, v) = (1.0 - rng.f64(), rng.f64());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    };
    const TRIALS: usize = 4000;
    for k in [1usize, 4, 9] {
        let mut flagged = 0;
        for _ in 0..TRIALS {
            // Each run: a fork-level interval on 6 df whose variance is estimated (χ² draws).
            let run = |normal: &mut dyn FnMut() -> f64| {
                let se = 0.04;
                let y = se * normal();
                let chi2: f64 = (0..6).map(|_| normal().powi(2)).sum();
                Estimate {
                    y,
                    v: se * se * chi2 / 6.0,
                    df: 6.0,
                }
            };
            let this = run(&mut normal);
            let others: Vec<Estimate> = (0..k).map(|_| run(&mut normal)).collect();
            if others.iter().any(|o| disagrees(&this, o, 0.0, k)) {
                flagged += 1;
            }
        }
        let rate = flagged as f64 / TRIALS as f64;
        println!("{k} earlier runs: some disagreement printed in {rate:.3} of runs");
        // 5% plus three simulation standard errors.
        assert!(
            rate <= 0.05 + 3.0 * (0.05f64 * 0.95 / TRIALS as f64).sqrt(),
            "k = {k}: {rate}"
        );
        // A check that cannot fail is a defect: the check of before (an earlier estimate
        // outside this run's confidence interval, uncorrected) flags far more.
        if k == 9 {
            let mut uncorrected = 0;
            for _ in 0..TRIALS {
                let se = 0.04;
                let y0 = se * normal();
                let half = t_quantile(0.975, 6.0) * se;
                if (0..k).any(|_| (se * normal() - y0).abs() > half) {
                    uncorrected += 1;
                }
            }
            assert!(uncorrected as f64 / TRIALS as f64 > 0.2, "{uncorrected}");
        }
    }
}
