//! The pooling's formulas against hand-computed values, and a simulation with known truth: runs
//! whose true log-ratio moves by `N(0, τ²)` from one invocation to the next, each stopped by the
//! real stopping rule ([`crate::run::target::decide`]) on the real intervals. The rates it prints
//! are those `docs/statistics.md` ("Between runs") reports.

use super::*;
use crate::analysis::ratio::{Margin, Ratio};
use crate::model::config::Precision;
use crate::model::earlier::EarlierRatio;
use crate::run::target::{decide, Decision};
use std::time::Duration;

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

#[test]
fn a_run_alone_is_widened_by_the_floor() {
    let this = est(0.8f64.ln(), 0.0001);
    let spread = Spread::of(&this, &[est(0.0, 0.01)]);
    assert_eq!(spread.estimated_from, None);
    assert_eq!(spread.tau, TAU_FLOOR);
    close(
        spread.floor_at(f64::INFINITY),
        (1.959_964 * TAU_FLOOR).exp_m1(),
        1e-6,
    );
    let (ci, df) = widened(&this, &spread);
    // v = 1e-4 on 5 df, τ² = 25e-4 known: Satterthwaite's 26e-4² / (1e-4² / 5) = 3380, held at
    // the run's own 5 so the interval is never narrower than the run's.
    close(df, 5.0, 1e-12);
    let half = t_quantile(0.975, df) * 0.0026f64.sqrt();
    close(ci.high, (this.y + half).exp(), 1e-12);
    // An estimated τ² from 3 runs: (26e-4)² / (1e-4² / 5 + 25e-4² / 2) = 2.16 degrees of freedom.
    let estimated = Spread {
        tau: TAU_FLOOR,
        estimated_from: Some(3),
    };
    close(
        widened(&this, &estimated).1,
        0.0026f64.powi(2) / (1e-8 / 5.0 + 0.0025f64.powi(2) / 2.0),
        1e-9,
    );
    // With no spread the interval is the run's own.
    let none = Spread {
        tau: 0.0,
        estimated_from: Some(3),
    };
    assert_eq!(widened(&this, &none).1, 5.0);
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
fn earlier_runs_outside_the_widened_interval_disagree() {
    // The first rows of issue 33's table: test_3 at 0.82, then 0.71, 0.76, 0.79.
    let earlier = [
        earlier_run(7, "test_3", 0.76, 0.02),
        earlier_run(6, "test_3", 0.71, 0.02),
        earlier_run(5, "test_3", 0.79, 0.02),
        earlier_run(4, "test_4", 0.70, 0.02),
    ];
    let this = ratio_with(0.82, 0.02, 5.0);
    let b = BetweenRuns::of("test_3", &this, &earlier).unwrap();
    assert_eq!(b.earlier, 3, "test_4's run has no test_3");
    // Three earlier runs are too few to estimate τ from: the prior floor stands in.
    assert_eq!(b.spread.estimated_from, None);
    assert_eq!(b.spread.tau, TAU_FLOOR);
    // 0.82 widened by the floor is about [0.714, 0.942]: the second run (0.71) is out.
    assert_eq!(b.disagreeing, vec![(6, 0.71)], "{b:?}");
    let lines = b.lines().join("\n");
    assert!(
        lines.contains("disagrees with 1 of 3 earlier runs: invocation 6 at 0.71"),
        "{lines}"
    );
    assert!(
        lines.contains("pooled across 4 runs (random effects)"),
        "{lines}"
    );
    // Five earlier runs: τ is estimated from all six, and these spread more than the floor.
    let mut more = earlier.to_vec();
    more.push(earlier_run(3, "test_3", 0.66, 0.02));
    more.push(earlier_run(2, "test_3", 0.74, 0.02));
    let b = BetweenRuns::of("test_3", &this, &more).unwrap();
    assert_eq!(b.spread.estimated_from, Some(6));
    assert!(b.spread.tau > TAU_FLOOR, "{:?}", b.spread);
    // One earlier run: the floor (0.82 widened to about [0.74, 0.91]), no pooled estimate.
    let b = BetweenRuns::of("test_3", &this, &earlier[1..2]).unwrap();
    assert_eq!(b.disagreeing, vec![(6, 0.71)]);
    let lines = b.lines().join("\n");
    assert!(lines.contains("prior floor"), "{lines}");
    assert!(
        lines.contains("disagrees with 1 of 1 earlier runs: invocation 6 at 0.71"),
        "{lines}"
    );
    assert!(!lines.contains("pooled"), "{lines}");
}

#[test]
fn a_run_alone_without_a_between_run_stop_shows_nothing() {
    // The outputs of a run without earlier runs stay as they were (their snapshots unchanged).
    let result = crate::model::sample::vlf();
    assert!(lines(&result).is_empty());
    let mut floored = result.clone();
    if let Some(s) = floored.stopping.as_mut() {
        s.reason = crate::model::results::StopReason::BetweenRuns {
            cell: "test_3".into(),
            floor: 0.103,
        };
        let text = lines(&floored).join("\n");
        assert!(
            text.contains("test_3") && text.contains("prior floor"),
            "{text}"
        );
    }
}

// ---- simulation ----------------------------------------------------------------------------

const TRIALS: usize = 3000;

/// The within-run round-to-round sd of a VLF log-ratio, as measured (≈ 0.03).
const SIGMA: f64 = 0.03;

struct Draw(fastrand::Rng);

impl Draw {
    fn normal(&mut self) -> f64 {
        let (u, v) = (1.0 - self.0.f64(), self.0.f64());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

fn target() -> Precision {
    Precision {
        hundredths_of_percent: 500,
        min_rounds: dbbench_options::defaults::MIN_REPEAT,
        max_rounds: 30,
        budget: Duration::from_secs(3600),
    }
}

/// One simulated run of true log-ratio `truth` plus its invocation's `N(0, τ²)`, stopped by the
/// rule: today's (within-run widths, `earlier` `None`) or the between-run one (widened widths and
/// the floor, from `earlier`). Returns the run's within-run ratio and its rounds.
fn one_run(
    d: &mut Draw,
    truth: f64,
    tau: f64,
    earlier: Option<&[Estimate]>,
    t: &Precision,
) -> (Ratio, usize) {
    let run_truth = truth + tau * d.normal();
    let mut pairs = Vec::new();
    loop {
        let shared = 0.15 * d.normal();
        let e = SIGMA / 2f64.sqrt();
        let cell = (run_truth + shared + e * d.normal()).exp();
        let base = (shared + e * d.normal()).exp();
        pairs.push((cell, base));
        let r = Ratio::two_stage(&pairs, t.min_rounds as usize, Margin::DEFAULT).unwrap();
        let (width, floors) = match (earlier, Estimate::of_ratio(&r)) {
            (Some(earlier), Some(this)) => {
                let spread = Spread::of(&this, earlier);
                let (ci, _) = widened(&this, &spread);
                let w = (ci.high / r.ratio - 1.0).max(1.0 - ci.low / r.ratio);
                let df = r.df.unwrap_or(f64::INFINITY);
                (Some(w), vec![("cell".to_string(), spread.floor_at(df))])
            }
            _ => (r.relative_half_width(), Vec::new()),
        };
        let widths = vec![("cell".to_string(), width)];
        let elapsed = Duration::from_secs(pairs.len() as u64);
        if let Decision::Stop(_) = decide(t, pairs.len() as u32, elapsed, &widths, &floors) {
            return (r, pairs.len());
        }
    }
}

/// Coverage of the true ratio by: today's within-run interval, this run's widened interval,
/// and (with `history` earlier runs, at least 2) the pooled interval; and the share of widened
/// intervals that exclude 1 (a false positive when the truth is 1). Also the mean rounds.
struct Rates {
    today: f64,
    widened: f64,
    pooled: Option<f64>,
    excludes_one: f64,
    rounds_today: f64,
    rounds_new: f64,
}

fn simulate(truth_ratio: f64, tau: f64, history: usize, seed: u64) -> Rates {
    let mut d = Draw(fastrand::Rng::with_seed(seed));
    let t = target();
    let truth = truth_ratio.ln();
    let (mut today, mut wide, mut pool, mut excl) = (0, 0, 0, 0);
    let (mut rounds_today, mut rounds_new) = (0, 0);
    for _ in 0..TRIALS {
        // Today's rule and interval, on its own invocation.
        let (r, n) = one_run(&mut d, truth, tau, None, &t);
        rounds_today += n;
        today += usize::from(r.ci.unwrap().contains(truth_ratio));
        // The earlier runs, each stopped by the new rule with what the store held before it.
        let mut earlier: Vec<Estimate> = Vec::new();
        for _ in 0..history {
            let (r, _) = one_run(&mut d, truth, tau, Some(&earlier), &t);
            earlier.push(Estimate::of_ratio(&r).unwrap());
        }
        let (r, n) = one_run(&mut d, truth, tau, Some(&earlier), &t);
        rounds_new += n;
        let this = Estimate::of_ratio(&r).unwrap();
        let (ci, _) = widened(&this, &Spread::of(&this, &earlier));
        wide += usize::from(ci.contains(truth_ratio));
        excl += usize::from(!ci.contains(1.0));
        let mut all = vec![this];
        all.extend(earlier);
        if let Some((_, ci)) = pooled(&all) {
            pool += usize::from(ci.contains(truth_ratio));
        }
    }
    let share = |n: usize| n as f64 / TRIALS as f64;
    Rates {
        today: share(today),
        widened: share(wide),
        pooled: (history + 1 >= MIN_RUNS_POOLED).then(|| share(pool)),
        excludes_one: share(excl),
        rounds_today: rounds_today as f64 / TRIALS as f64,
        rounds_new: rounds_new as f64 / TRIALS as f64,
    }
}

#[test]
fn widened_intervals_cover_the_truth_under_an_invocation_level_effect() {
    let mut report = Vec::new();
    for (ratio, tau, history, seed) in [
        (0.72, 0.05, 0, 31),
        (0.72, 0.05, 2, 32),
        (0.72, 0.05, 4, 33),
        (0.72, 0.05, 9, 34),
        (1.00, 0.0, 0, 35),
        (1.00, 0.0, 4, 36),
    ] {
        let r = simulate(ratio, tau, history, seed);
        let line = format!(
            "ratio {ratio}, τ {tau}, {history} earlier runs: today's interval covers {:.3} \
             ({:.1} rounds), widened {:.3} ({:.1} rounds), pooled {}, widened excludes 1 in {:.3}",
            r.today,
            r.rounds_today,
            r.widened,
            r.rounds_new,
            r.pooled.map_or("–".into(), |p| format!("{p:.3}")),
            r.excludes_one
        );
        println!("{line}");
        report.push(line);
        assert!(r.widened >= 0.93, "widened coverage below 93%: {report:?}");
        if let Some(p) = r.pooled {
            assert!(p >= 0.93, "pooled coverage below 93%: {report:?}");
        }
        if tau > 0.0 && history == 0 {
            assert!(
                r.today < 0.85,
                "today's interval was expected to undercover: {report:?}"
            );
        }
        if ratio == 1.0 {
            assert!(r.excludes_one <= 0.05, "false positives: {report:?}");
        }
    }
}
