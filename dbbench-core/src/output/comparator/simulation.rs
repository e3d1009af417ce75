//! The ratio check ([`super::ratio::moved`]) checked as a statistic: pairs of recordings drawn
//! from a model with known ratios, judged as a snapshot check judges them, with the rates that
//! `docs/statistics.md` reports. Deterministic (fixed seeds).
//!
//! One recording of a benchmark of a baseline and five cells: `F` forks of `R` rounds, each
//! round's log-ratio of cell `c` to the baseline
//!
//! ```text
//! d = ln(true ratio_c) + drift_c + fork_ck + e,   drift_c ~ N(0, τ²), fork_ck ~ N(0, σ_f²), e ~ N(0, σ_r²)
//! ```
//!
//! and the baseline's time `exp(machine + round)`, so each time carries the machine's speed
//! (which the ratio cancels). `drift_c` is what a recording's machine (or machine state) does to
//! the cell beyond its forks, drawn anew for every recording: τ = 0.02 between invocations on one
//! machine state (the dimensioning experiment, `docs/statistics.md`), τ = 0.10 between the
//! machine states the check allows for by default ([`Tolerance::DRIFT`]). The ratio and its
//! interval are [`Ratio::forked`]'s, rounded to three digits as the snapshot writes them; the
//! check is [`moved`] with the default allowance: five ratios, 10%, τ = 0.10.

use super::ratio::{moved, Allowance, RecordedRatio};
use super::Tolerance;
use crate::analysis::ratio::{Margin, Ratio};

const CELLS: usize = 5;
const PAIRS: usize = 2000;

struct Draw(fastrand::Rng);

impl Draw {
    fn normal(&mut self) -> f64 {
        let (u, v) = (1.0 - self.0.f64(), self.0.f64());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

/// The noise of one recording.
#[derive(Clone, Copy)]
struct Noise {
    tau: f64,
    fork_sd: f64,
    round_sd: f64,
    forks: usize,
    rounds: usize,
}

/// Tight intervals: the practical tolerance has to carry the drift.
const TIGHT: Noise = Noise {
    tau: 0.02,
    fork_sd: 0.01,
    round_sd: 0.02,
    forks: 7,
    rounds: 2,
};

/// Intervals of about ±4%, as the VLF suite's at default scale.
const TYPICAL: Noise = Noise {
    tau: 0.02,
    fork_sd: 0.04,
    round_sd: 0.03,
    forks: 7,
    rounds: 2,
};

/// One recording of the five ratios `truth` on a machine of speed `machine` (log scale).
fn record(draw: &mut Draw, truth: &[f64; CELLS], noise: Noise, machine: f64) -> Vec<RecordedRatio> {
    let three = |x: f64| {
        let scale = 10f64.powi(2 - x.abs().log10().floor() as i32);
        (x * scale).round() / scale
    };
    truth
        .iter()
        .map(|ratio| {
            let drift = noise.tau * draw.normal();
            let forks: Vec<Vec<(f64, f64)>> = (0..noise.forks)
                .map(|_| {
                    let fork = noise.fork_sd * draw.normal();
                    (0..noise.rounds)
                        .map(|_| {
                            let round = 0.15 * draw.normal();
                            let base = (machine + round).exp();
                            let d = ratio.ln() + drift + fork + noise.round_sd * draw.normal();
                            (base * d.exp(), base)
                        })
                        .collect()
                })
                .collect();
            let r = Ratio::forked(&forks, None, Margin::DEFAULT).expect("positive times");
            let ci = r.ci.expect("seven forks");
            RecordedRatio {
                value: three(r.ratio),
                ci: Some(crate::analysis::stats::Interval {
                    low: three(ci.low),
                    high: three(ci.high),
                }),
            }
        })
        .collect()
}

/// The share of snapshot checks that fail (any of the five ratios moved) when the recording has
/// ratios `then` and the check `now`, the check on a machine 1.6 times slower.
fn failure_rate(seed: u64, then: [f64; CELLS], now: [f64; CELLS], noise: Noise) -> f64 {
    failure_rate_allowing(
        seed,
        then,
        now,
        noise,
        Tolerance::default().allowance(CELLS),
    )
}

/// [`failure_rate`] of a check with another allowance.
fn failure_rate_allowing(
    seed: u64,
    then: [f64; CELLS],
    now: [f64; CELLS],
    noise: Noise,
    allowance: Allowance,
) -> f64 {
    let mut draw = Draw(fastrand::Rng::with_seed(seed));
    let failed = (0..PAIRS)
        .filter(|_| {
            let recorded = record(&mut draw, &then, noise, 0.0);
            let checked = record(&mut draw, &now, noise, 1.6f64.ln());
            recorded
                .iter()
                .zip(&checked)
                .any(|(a, b)| moved(*a, *b, allowance).is_some())
        })
        .count();
    failed as f64 / PAIRS as f64
}

const VLF: [f64; CELLS] = [0.88, 0.74, 0.60, 0.60, 0.61];

#[test]
fn unchanged_ratios_on_another_machine_rarely_fail() {
    // Up to the drift the check allows for, in both models.
    for (noise, what) in [(TIGHT, "tight"), (TYPICAL, "typical")] {
        for tau in [0.02, Tolerance::DRIFT] {
            let rate = failure_rate(1, VLF, VLF, Noise { tau, ..noise });
            assert!(
                rate <= 0.05,
                "{what} intervals with drift τ = {tau}: {:.1}% of unchanged snapshots failed",
                100.0 * rate
            );
        }
    }
}

#[test]
fn without_the_drift_term_unchanged_ratios_of_another_machine_fail() {
    // The check that ignored the drift between machines (the rule before it): most unchanged
    // snapshots checked on another machine state fail, as the front door did after a reboot.
    let blind = Allowance {
        drift: 0.0,
        ..Tolerance::default().allowance(CELLS)
    };
    let noise = Noise {
        tau: Tolerance::DRIFT,
        ..TYPICAL
    };
    let rate = failure_rate_allowing(1, VLF, VLF, noise, blind);
    assert!(rate >= 0.5, "{:.1}%", 100.0 * rate);
}

#[test]
fn a_moved_ratio_is_found() {
    // A storage change that slows the baseline (test_1, which zero-fills) to twice its time
    // and nothing else: every ratio halves; found across machine states.
    let slower_baseline = VLF.map(|r| r / 2.0);
    let across = Noise {
        tau: Tolerance::DRIFT,
        ..TYPICAL
    };
    let rate = failure_rate(2, VLF, slower_baseline, across);
    assert!(rate >= 0.95, "found in {:.1}%", 100.0 * rate);
    // One cell's ratio 60% up, the others unchanged, checked on the recording's machine state.
    let mut one = VLF;
    one[1] *= 1.6;
    let rate = failure_rate(3, VLF, one, TYPICAL);
    assert!(rate >= 0.95, "found in {:.1}%", 100.0 * rate);
    // Not every move is found: a ratio 25% up is within what machines do to it.
    let mut small = VLF;
    small[1] *= 1.25;
    let rate = failure_rate(3, VLF, small, TYPICAL);
    assert!(rate <= 0.5, "found in {:.1}%", 100.0 * rate);
}

/// The rates `docs/statistics.md` reports: `cargo test -p dbbench-core --lib ratio_check_rates
/// -- --ignored --nocapture`.
#[test]
#[ignore = "prints the rates for the docs"]
fn ratio_check_rates() {
    for (noise, what) in [(TIGHT, "tight"), (TYPICAL, "typical")] {
        for tau in [0.0, 0.02, 0.05, 0.10, 0.15] {
            let noise = Noise { tau, ..noise };
            println!(
                "{what}, τ = {tau}: unchanged fails {:.1}%",
                100.0 * failure_rate(4, VLF, VLF, noise)
            );
        }
    }
    for tau in [0.02, Tolerance::DRIFT] {
        for factor in [1.25, 1.4, 1.6, 2.0] {
            let mut one = VLF;
            one[1] *= factor;
            let noise = Noise { tau, ..TYPICAL };
            println!(
                "typical, τ = {tau}: one ratio ×{factor} found {:.1}%",
                100.0 * failure_rate(5, VLF, one, noise)
            );
        }
    }
}
