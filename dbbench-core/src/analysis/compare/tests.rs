use super::*;
use crate::analysis::ratio::Verdict;

#[test]
fn each_side_is_measured_in_forks() {
    let mut cell = crate::model::sample::vlf().cells[0].clone();
    let times: Vec<f64> = elapsed_of(&cell);
    assert_eq!(fork_times(&cell), times, "without forks: the repetitions");
    for (i, run) in cell.runs.iter_mut().filter(|r| !r.warmup).enumerate() {
        run.fork = Some(i as u32 / 2);
    }
    let forks = fork_times(&cell);
    assert_eq!(forks.len(), times.len().div_ceil(2));
    assert!((forks[0] - (times[0] + times[1]) / 2.0).abs() < 1e-12);
}

#[test]
fn a_doubled_cell_is_slower_and_an_unchanged_one_is_not() {
    let baseline = crate::model::sample::vlf();
    let mut current = baseline.clone();
    for run in &mut current.cells[1].runs {
        run.elapsed_s *= 2.0;
    }
    for (run, wobble) in current.cells[2]
        .runs
        .iter_mut()
        .zip([1.01, 0.98, 1.0, 1.02])
    {
        run.elapsed_s *= wobble;
    }
    current.host.cpu_model = "Other CPU".into();
    let c = compare(&current, &baseline);
    let verdict = |i: usize| c.rows[i].ratio.as_ref().unwrap().verdict;
    assert_eq!(verdict(0), Verdict::Baseline);
    assert_eq!(verdict(1), Verdict::Slower);
    assert!((c.rows[1].ratio.as_ref().unwrap().ratio - 2.0).abs() < 1e-9);
    assert_ne!(verdict(2), Verdict::Slower);
    assert_ne!(verdict(2), Verdict::Faster);
    assert_eq!(c.environment_changes, ["CPU: `Test CPU` → `Other CPU`"]);
    insta::assert_snapshot!(c.render());
}

#[test]
fn a_slower_machine_moves_the_seconds_not_the_verdicts() {
    let baseline = crate::model::sample::vlf();
    let mut current = baseline.clone();
    for run in current.cells.iter_mut().flat_map(|c| c.runs.iter_mut()) {
        run.elapsed_s *= 1.6;
    }
    let calibrated = |mut r: crate::model::results::BenchmarkResult, slower: f64| {
        let c = crate::model::calibration::Calibration {
            build_profile: "release".into(),
            cpu_loop_ms: 70.4,
            volumes: vec![crate::model::calibration::VolumeCalibration {
                name: "default".into(),
                fsync_ms: 0.124 * slower,
                write_mb_s: 1753.0,
                commit_ms: 0.23 * slower,
            }],
        };
        r.calibration = Some(c.clone());
        for cell in &mut r.cells {
            cell.calibration = Some(c.clone());
        }
        r
    };
    let (baseline, current) = (calibrated(baseline, 1.0), calibrated(current, 1.6));
    let same = compare(&baseline, &baseline);
    let moved = compare(&current, &baseline);
    for (a, b) in same.rows.iter().zip(&moved.rows) {
        let (a, b) = (a.ratio.as_ref().unwrap(), b.ratio.as_ref().unwrap());
        assert_eq!(a.verdict, b.verdict);
        assert!(
            (a.ratio - b.ratio).abs() < 1e-9,
            "{} vs {}",
            a.ratio,
            b.ratio
        );
    }
    assert_eq!(same.seconds_note, None);
    assert_eq!(
        moved.seconds_note.as_deref(),
        Some(
            "seconds not compared: another machine (commit ×1.6, fsync ×1.6); the verdicts \
                 judge the ratios between cells, which the machine does not move"
        )
    );
    // Judged by the seconds, every cell would be "slower" by 1.6.
    assert!(moved
        .rows
        .iter()
        .all(|r| r.ratio.as_ref().unwrap().verdict != Verdict::Slower));
}

#[test]
fn the_ratio_of_ratios_adds_both_runs_variances() {
    let margin = Margin::DEFAULT;
    let side = |ratio: f64, half: f64, df: f64| {
        let q = crate::analysis::stats::t_quantile(0.975, df);
        let mut r = Ratio::welch(
            &Summary::of(&[1.0, 1.0]).unwrap(),
            &Summary::of(&[1.0, 1.0]).unwrap(),
            margin,
        )
        .unwrap();
        r.ratio = ratio;
        r.ci = Some(crate::analysis::stats::Interval {
            low: ratio * (-half * q).exp(),
            high: ratio * (half * q).exp(),
        });
        r.df = Some(df);
        r
    };
    // Two ratios of standard error 0.03 and 0.04 on the log scale: 0.05 together.
    let r = Ratio::of_ratios(&side(0.8, 0.03, 6.0), &side(0.74, 0.04, 6.0), margin).unwrap();
    assert!((r.ratio - 0.8 / 0.74).abs() < 1e-12);
    let df = 0.05f64.powi(4) / ((0.03f64.powi(4) + 0.04f64.powi(4)) / 6.0);
    let half = crate::analysis::stats::t_quantile(0.975, df) * 0.05;
    let ci = r.ci.unwrap();
    assert!(((ci.high / r.ratio).ln() - half).abs() < 1e-9, "{ci:?}");
    assert!((r.df.unwrap() - df).abs() < 1e-9);
}

#[test]
fn cells_in_one_run_only_are_listed() {
    let baseline = crate::model::sample::vlf();
    let mut current = baseline.clone();
    current.cells.remove(2);
    current.cells[1].name = "test_5".into();
    let text = compare(&current, &baseline).render();
    assert!(text.contains("new cell"), "{text}");
    assert!(text.contains("not in the current run"), "{text}");
}

#[test]
fn sets_compare_namesakes() {
    let vlf = crate::model::sample::vlf();
    let mut other = vlf.clone();
    other.benchmark = "other::bench".into();
    let all = compare_all(&[vlf.clone(), other.clone()], std::slice::from_ref(&vlf)).unwrap();
    assert_eq!(all.len(), 1);
    assert!(all[0].rows.iter().all(|r| matches!(
        r.ratio.as_ref().unwrap().verdict,
        Verdict::Baseline | Verdict::Equivalent | Verdict::Imprecise
    )));
    let mut third = vlf.clone();
    third.benchmark = "third::bench".into();
    let err = compare_all(&[other, third], &[vlf.clone(), vlf]).unwrap_err();
    assert!(err.to_string().contains("no benchmark is in both"), "{err}");
}

/// Simulated pairs of unchanged runs of `k` cells: each side's log-ratio is off by a normal error
/// of sd 0.02 and states that error's standard deviation estimated from 6 degrees of freedom
/// (its interval as the forks make it); each side's invocation also drifts by a normal error of sd
/// `drift` that its interval does not see. The share of pairs where any cell says faster or
/// slower, with each interval at `confidence` and `allowed` the τ the comparison allows for.
fn family_false_alarms(k: usize, confidence: f64, drift: f64, allowed: f64) -> f64 {
    let margin = Margin::DEFAULT;
    let (sd, df) = (0.02, 6.0);
    let q = crate::analysis::stats::t_quantile(0.975, df);
    let mut rng = fastrand::Rng::with_seed(4711);
    let mut normal = move || {
        let (u, v) = (rng.f64().max(1e-300), rng.f64());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    let trials = 4000;
    let mut alarms = 0;
    for _ in 0..trials {
        let mut any = false;
        for _ in 0..k {
            let mut side = || {
                let ratio = (sd * normal() + drift * normal()).exp();
                let chi2: f64 = (0..6).map(|_| normal().powi(2)).sum();
                let se = sd * (chi2 / df).sqrt();
                let mut r = Ratio::judged_interval(
                    ratio,
                    Some(crate::analysis::stats::Interval {
                        low: ratio * (-se * q).exp(),
                        high: ratio * (se * q).exp(),
                    }),
                    crate::analysis::ratio::Method::Forks,
                    margin,
                );
                r.df = Some(df);
                r
            };
            let (now, then) = (side(), side());
            let r = Ratio::of_ratios_drifting(&now, &then, margin, confidence, allowed * allowed)
                .unwrap();
            any |= matches!(r.verdict, Verdict::Faster | Verdict::Slower);
        }
        alarms += usize::from(any);
    }
    alarms as f64 / trials as f64
}

#[test]
fn compare_holds_the_chance_of_any_false_verdict_among_its_cells_within_five_percent() {
    // Five cells, the VLF suite's count: corrected, at most 5% (three standard errors of 4,000).
    let corrected = family_false_alarms(5, family_confidence(5), 0.0, 0.0);
    assert!(
        corrected <= 0.05 + 3.0 * (0.05f64 * 0.95 / 4000.0).sqrt(),
        "{corrected}"
    );
    // Each interval at 95% instead (the broken variant): one false alarm or more in about 1 − 0.95⁵.
    let uncorrected = family_false_alarms(5, 0.95, 0.0, 0.0);
    println!(
        "any false faster/slower among 5 cells: {corrected:.3} corrected, {uncorrected:.3} not"
    );
    assert!(uncorrected > 0.15, "{uncorrected}");
    assert!((family_confidence(5) - 0.99).abs() < 1e-12);
    assert!((family_confidence(1) - 0.95).abs() < 1e-12);
}

#[test]
fn compare_allows_for_the_drift_between_its_two_invocations() {
    // Each side's invocation drifts by τ_i = 0.02 beyond its forks (our VM measured up to 0.017):
    // with 2τ² in the variance, any false faster/slower among five unchanged cells stays within
    // 5% (three standard errors of 4,000); without it (the broken variant) it is far above.
    let bound = 0.05 + 3.0 * (0.05f64 * 0.95 / 4000.0).sqrt();
    let allowed = family_false_alarms(5, family_confidence(5), 0.02, 0.02);
    let dropped = family_false_alarms(5, family_confidence(5), 0.02, 0.0);
    println!("drift 0.02 between invocations: any false verdict {allowed:.3} allowed for, {dropped:.3} not");
    assert!(allowed <= bound, "{allowed}");
    assert!(dropped > 0.15, "{dropped}");
    // A deliberate ×1.25 regression of one cell is still found with the allowance.
    let margin = Margin::DEFAULT;
    let side = |ratio: f64| {
        let mut r = Ratio::judged_interval(
            ratio,
            Some(crate::analysis::stats::Interval {
                low: ratio * (-0.03f64).exp(),
                high: ratio * 0.03f64.exp(),
            }),
            crate::analysis::ratio::Method::Forks,
            margin,
        );
        r.df = Some(6.0);
        r
    };
    let r = Ratio::of_ratios_drifting(
        &side(0.75),
        &side(0.6),
        margin,
        family_confidence(5),
        0.0004,
    )
    .unwrap();
    assert_eq!(r.verdict, Verdict::Slower, "{r:?}");
}
