//! The drift between runs that a run's forks cannot see, covered by this host's own history: the
//! verdict's ratio pooled over this run and the earlier runs of the same experiment.
//!
//! Forks re-draw what one invocation shares (its files' places, its fixture, its pre-grown log),
//! so the forks' interval needs no assumed spread. What they cannot re-draw is what moves between
//! invocations minutes or hours apart: the machine itself, its neighbours. The dimensioning
//! experiment of `docs/statistics.md` measured that part at τ ≈ 0.01–0.02 on the log scale on our
//! VM, significant for some ratios and not for others. It is a property of the host and the ratio,
//! so it is never assumed: one run alone cannot know it, and its interval is its forks'. Once the
//! store holds [`MIN_EARLIER_RUNS`] earlier runs of the same experiment on this host
//! (`output::earlier`: same cells and configuration, code, order, precision settings and a
//! calibration that agrees), they are replications of one question, and the verdict stands on
//! all of them:
//!
//! - the random-effects model `y_i = μ + u_i + e_i` (`analysis::between`), with `v_i` each run's
//!   variance from its own forks' interval and `u_i ~ N(0, τ²)` the drift;
//! - τ² by DerSimonian–Laird over the runs, and the interval for `μ`, the ratio on this host, by
//!   Hartung–Knapp–Sidik–Jonkman (`t(k − 1)`, its factor kept at 1 or more).
//!
//! Fewer runs than that do not cover a drift they cannot estimate: with four runs in all, a
//! bimodal drift is missed one time in eight (`analysis::simulation::drift`), so below the
//! minimum the table shows the run's forks alone and says how many runs pooling takes.
//!
//! **Only runs apart in time count.** The model draws each run's drift anew, which holds for runs
//! hours apart and not for runs minutes apart: those share the machine's state (on our VM three
//! runs of one evening read test_3 at 0.661–0.678 and three of an afternoon 0.71–0.77, none of
//! either set inside the other's intervals; `docs/statistics.md`). Pooled as if independent, six
//! runs of one hour gave an interval narrower than one run's that covered the host's ratio in
//! 13–39% of simulated cases (the statistics review, §2.3). So of the earlier runs only those
//! started at least [`APART_S`] before the next run that counts (this run first) are pooled: a
//! burst of runs counts once.

use crate::analysis::between::{dl_tau2, pooled_with, Estimate};
use crate::analysis::ratio::{Method, PooledRuns, Ratio};
use crate::model::earlier::EarlierRun;

/// Fewest earlier runs of the same experiment (this one not counted) over which a ratio is
/// pooled: below it the simulation's coverage of a bimodal drift falls under 93%.
pub const MIN_EARLIER_RUNS: usize = 5;

/// Least time between the starts of two runs pooled as separate draws of the machine's drift:
/// half an hour, the spacing of the runs over two hours (0, 40, 80, 120 minutes); runs
/// closer than that share one draw.
pub const APART_S: u64 = 30 * 60;

/// The `earlier` runs (newest first, as the store gives them) that count as draws of the drift of
/// their own: each started at least [`APART_S`] before the run after it that counts, this run
/// (started at `this_start`, seconds since the epoch) counting first. A run that started after
/// this one (a clock stepped back) never counts.
pub fn apart(this_start: u64, earlier: &[EarlierRun]) -> Vec<EarlierRun> {
    let mut newest_first: Vec<&EarlierRun> = earlier.iter().collect();
    newest_first.sort_by_key(|r| std::cmp::Reverse(r.started_at_unix_s));
    let mut last = this_start;
    let mut kept = Vec::new();
    for run in newest_first {
        if run.started_at_unix_s <= last && last - run.started_at_unix_s >= APART_S {
            last = run.started_at_unix_s;
            kept.push(run.clone());
        }
    }
    kept
}

/// The earlier runs' estimates of `cell`'s ratio.
fn estimates(cell: &str, earlier: &[EarlierRun]) -> Vec<Estimate> {
    earlier
        .iter()
        .filter_map(|run| {
            let r = run.of(cell)?;
            Estimate::of(r.ratio, r.low, r.high, r.df)
        })
        .collect()
}

/// `ratio` (this run's, from its forks, started at `this_start`) of `cell` pooled with the
/// `earlier` runs that have it and count as runs [`apart`], from [`MIN_EARLIER_RUNS`]; `ratio`
/// itself below that or without an interval.
pub fn pooled(cell: &str, ratio: Ratio, this_start: u64, earlier: &[EarlierRun]) -> Ratio {
    pooled_assuming(cell, ratio, &apart(this_start, earlier), None)
}

/// [`pooled`] over `earlier` as given (every run counted, apart or not), with the drift's τ²
/// given instead of estimated when `tau2` is `Some` (the simulation's broken variants: runs
/// minutes apart counted, an assumed spread).
pub(crate) fn pooled_assuming(
    cell: &str,
    ratio: Ratio,
    earlier: &[EarlierRun],
    tau2: Option<f64>,
) -> Ratio {
    let theirs = estimates(cell, earlier);
    let Some(own) = Estimate::of_ratio(&ratio) else {
        return ratio;
    };
    if theirs.len() < MIN_EARLIER_RUNS {
        return ratio;
    }
    let mut all = vec![own];
    all.extend(theirs);
    let tau2 = tau2.unwrap_or_else(|| dl_tau2(&all));
    let Some((centre, ci)) = pooled_with(&all, tau2) else {
        return ratio;
    };
    let mut out = Ratio::judged_interval(centre, Some(ci), Method::Pooled, ratio.margin);
    out.df = Some((all.len() - 1) as f64);
    out.pooled = Some(PooledRuns {
        runs: all.len(),
        tau: tau2.sqrt(),
        own: ratio.ratio,
    });
    out
}

/// The line under a table that says what its intervals stand on beyond this run's forks: the
/// runs pooled and each ratio's drift, or, where there are none or too few, what this run's
/// intervals cover and how many more runs pooling takes. `None` for a table with no interval.
/// `this_start` is this run's start, from which the runs [`apart`] are counted.
pub fn line(this_start: u64, earlier: &[EarlierRun], ratios: &[(&str, &Ratio)]) -> Option<String> {
    if !ratios.iter().any(|(_, r)| r.ci.is_some()) {
        return None;
    }
    let minutes = APART_S / 60;
    if earlier.is_empty() {
        // A first run's interval is honest about this run only: the machine drifts over hours
        // by an amount no single run can see (docs/statistics.md, "Where the variance lives").
        return Some(format!(
            "intervals: this run's alone; they cover this run, on this machine, at this time, \
             not what a run hours later would read: the machine drifts by an amount one run \
             cannot measure. Run again in a few hours with the same work dir: from \
             {MIN_EARLIER_RUNS} earlier runs of this experiment on this host, each started at \
             least {minutes} min before the next, the ratios are pooled over the runs, covering \
             that drift"
        ));
    }
    let pooled: Vec<String> = ratios
        .iter()
        .filter_map(|(cell, r)| {
            let p = r.pooled?;
            Some(format!("{cell} {:.2} (τ {:.3})", p.own, p.tau))
        })
        .collect();
    let counted = apart(this_start, earlier);
    let (n, k) = (earlier.len(), counted.len());
    if pooled.is_empty() {
        return Some(format!(
            "intervals: this run's forks only, covering this run's time; with {MIN_EARLIER_RUNS} \
             earlier runs of this experiment on this host, each started at least {minutes} min \
             before the next ({k} so far; runs closer together share the machine's state and \
             count once, {n} stored), the ratios are pooled over the runs, covering the drift \
             between them"
        ));
    }
    let span_h = counted.last().map_or(0.0, |r| {
        this_start.saturating_sub(r.started_at_unix_s) as f64 / 3600.0
    });
    Some(format!(
        "ratios pooled over this run and the {k} earlier runs of this experiment on this host \
         started at least {minutes} min apart, over {span_h:.1} h (random effects), covering the \
         drift between runs; this run alone, with the drift τ: {}",
        pooled.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_run_says_its_intervals_cover_its_own_time_only() {
        let r = Ratio::judged_interval(
            0.9,
            Some(crate::analysis::stats::Interval {
                low: 0.85,
                high: 0.95,
            }),
            Method::Forks,
            crate::analysis::ratio::Margin::DEFAULT,
        );
        let line = line(NOW, &[], &[("test_3", &r)]).expect("a line for a first run");
        assert!(
            line.contains("this run, on this machine, at this time"),
            "{line}"
        );
        assert!(line.contains("Run again in a few hours"), "{line}");
        let none = Ratio::judged_interval(0.9, None, Method::Forks, r.margin);
        assert_eq!(
            super::line(NOW, &[], &[("test_3", &none)]),
            None,
            "no interval, no line"
        );
    }
    use crate::analysis::ratio::{Margin, Verdict};
    use crate::analysis::stats::{t_quantile, Interval};
    use crate::model::earlier::EarlierRatio;

    /// This run's start in the tests.
    const NOW: u64 = 1_800_000_000;

    /// Earlier run `id`, started `id + 1` hours before this one.
    fn run(id: i64, ratio: f64, half: f64) -> EarlierRun {
        EarlierRun {
            invocation: id,
            started_at_unix_s: NOW - 3600 * (id as u64 + 1),
            ratios: vec![EarlierRatio {
                cell: "c".into(),
                ratio,
                low: ratio * (-half).exp(),
                high: ratio * half.exp(),
                df: 6.0,
            }],
        }
    }

    fn this(ratio: f64, half: f64) -> Ratio {
        let ci = Interval {
            low: ratio * (-half).exp(),
            high: ratio * half.exp(),
        };
        let mut r = Ratio::judged_interval(ratio, Some(ci), Method::Forks, Margin::DEFAULT);
        r.df = Some(6.0);
        r
    }

    #[test]
    fn too_few_earlier_runs_leave_the_forks_interval() {
        let earlier: Vec<EarlierRun> = (0..4).map(|i| run(i, 0.75, 0.03)).collect();
        let r = this(0.75, 0.03);
        assert_eq!(pooled("c", r.clone(), NOW, &earlier), r);
        let text = line(NOW, &earlier, &[("c", &r)]).unwrap();
        assert!(
            text.contains("with 5 earlier runs of this experiment on this host, each started at least 30 min before the next (4 so far;"),
            "{text}"
        );
        assert_eq!(line(NOW, &[], &[]), None);
        let more: Vec<EarlierRun> = (0..5).map(|i| run(i, 0.75, 0.03)).collect();
        assert_eq!(
            pooled("other", r.clone(), NOW, &more),
            r,
            "a cell they lack"
        );
    }

    #[test]
    fn runs_that_agree_pool_to_a_narrower_interval() {
        let earlier: Vec<EarlierRun> = (0..5).map(|i| run(i, 0.75, 0.03)).collect();
        let p = pooled("c", this(0.75, 0.03), NOW, &earlier);
        assert_eq!(p.method, Method::Pooled);
        let info = p.pooled.unwrap();
        assert_eq!((info.runs, info.tau, info.own), (6, 0.0, 0.75));
        // Six runs of equal variance v: half-width t(5) · √(v / 6).
        let v = (0.03 / t_quantile(0.975, 6.0)).powi(2);
        let half = t_quantile(0.975, 5.0) * (v / 6.0).sqrt();
        let ci = p.ci.unwrap();
        assert!(((ci.high / 0.75).ln() - half).abs() < 1e-9, "{ci:?}");
        assert_eq!(p.df, Some(5.0));
    }

    #[test]
    fn runs_that_disagree_cover_their_spread_and_change_the_verdict() {
        // Runs at 0.90 … 1.10, each ±3%: they differ far more than their intervals allow.
        let earlier: Vec<EarlierRun> = [1.10, 0.92, 1.05, 0.90, 1.08]
            .iter()
            .enumerate()
            .map(|(i, &r)| run(i as i64, r, 0.03))
            .collect();
        let own = this(0.95, 0.03);
        assert_eq!(own.verdict, Verdict::Faster, "this run alone says faster");
        let p = pooled("c", own, NOW, &earlier);
        let ci = p.ci.unwrap();
        assert!(ci.low < 1.0 && ci.high > 1.0, "{ci:?}");
        assert_ne!(p.verdict, Verdict::Faster);
        let tau = p.pooled.unwrap().tau;
        assert!(tau > 0.05, "τ {tau}");
        let text = line(NOW, &earlier, &[("c", &p)]).unwrap();
        assert!(text.contains("c 0.95 (τ 0.0"), "{text}");
        // An assumed τ of 0.5 instead: absurdly wide.
        let assumed = pooled_assuming("c", this(0.95, 0.03), &earlier, Some(0.25));
        let wide = assumed.ci.unwrap();
        assert!(wide.high / wide.low > 2.0, "{wide:?}");
    }

    #[test]
    fn runs_minutes_apart_count_once() {
        // Ten runs, one every five minutes over the 50 minutes before this one: they share the
        // machine's state, so one counts, the run 30 minutes back; none is 30 minutes before it.
        let burst: Vec<EarlierRun> = (0..10)
            .map(|i| EarlierRun {
                started_at_unix_s: NOW - 300 * (i as u64 + 1),
                ..run(i, 0.75, 0.03)
            })
            .collect();
        let counted: Vec<i64> = apart(NOW, &burst).iter().map(|r| r.invocation).collect();
        assert_eq!(
            counted,
            vec![5],
            "30 min back counts; 5–25 and 35–50 min back do not"
        );
        let r = this(0.75, 0.03);
        assert_eq!(
            pooled("c", r.clone(), NOW, &burst),
            r,
            "one run apart: not pooled"
        );
        let text = line(NOW, &burst, &[("c", &r)]).unwrap();
        assert!(
            text.contains("(1 so far;") && text.contains("10 stored"),
            "{text}"
        );
        // Five runs an hour apart among them: pooled over those five and this run.
        let mut mixed = burst.clone();
        mixed.extend((0..5).map(|i| EarlierRun {
            started_at_unix_s: NOW - 3600 * (i as u64 + 1),
            ..run(100 + i, 0.75, 0.03)
        }));
        let counted = apart(NOW, &mixed);
        assert_eq!(counted.len(), 6, "30 min back, then 1 … 5 h back");
        let p = pooled("c", r.clone(), NOW, &mixed);
        assert_eq!(p.pooled.map(|p| p.runs), Some(7));
        let text = line(NOW, &mixed, &[("c", &p)]).unwrap();
        assert!(
            text.contains("the 6 earlier runs of this experiment on this host started at least 30 min apart, over 5.0 h"),
            "{text}"
        );
        // A run stamped after this one (a clock stepped back) never counts.
        let future = vec![EarlierRun {
            started_at_unix_s: NOW + 7200,
            ..run(0, 0.75, 0.03)
        }];
        assert!(apart(NOW, &future).is_empty());
    }
}
