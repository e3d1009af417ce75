//! The schedule driven by recorded results and timings, as the executor would drive it: forks,
//! the balanced order, resume, failures, the allocation, and every reason a benchmark stops.

use super::*;
use crate::model::config::{BackendKind, RunSpec};
use crate::model::results::RunResult;
use crate::model::scale::Scale;
use crate::run::target::NoJudge;

/// ±5%, 3 to 6 forks, 45 s.
const TARGET: Precision = Precision {
    hundredths_of_percent: 500,
    min_rounds: 3,
    max_rounds: 6,
    budget: Duration::from_secs(45),
    fork_rounds: 2,
};

fn fixed(order: Order, warmup: u32, repeat: u32) -> Rules {
    Rules {
        order,
        warmup,
        rounds: repeat,
        precision: None,
        judged: true,
    }
}

fn targeted() -> Rules {
    Rules {
        order: Order::Interleaved,
        warmup: 0,
        rounds: TARGET.min_rounds,
        precision: Some(TARGET),
        judged: true,
    }
}

/// `n` running cells `c0`, `c1`, … with no runs yet (`c0` is the baseline).
fn cells(n: usize) -> Vec<CellResult> {
    (0..n)
        .map(|i| CellResult {
            name: format!("c{i}"),
            config: Default::default(),
            effective: Default::default(),
            status: CellStatus::Ok,
            runs: Vec::new(),
            invocation: None,
            calibration: None,
        })
        .collect()
}

fn kept(cell: &mut CellResult, repetitions: std::ops::Range<u32>, warmup: u32) {
    for index in repetitions {
        cell.runs.push(RunResult {
            index,
            warmup: index < warmup,
            ..RunResult::default()
        });
    }
}

/// Widths recorded per judgement: the `j`-th time the rule asks, every compared cell's interval
/// is `widths[j]` wide; `components` are what the allocation is given.
struct Recorded {
    widths: Vec<f64>,
    asked: std::cell::Cell<usize>,
    components: Option<(f64, f64)>,
}

fn recorded(widths: &[f64]) -> Recorded {
    Recorded {
        widths: widths.to_vec(),
        asked: Default::default(),
        components: None,
    }
}

impl Judge for Recorded {
    fn widths(
        &self,
        cells: &[CellResult],
        baseline: &str,
        _: bool,
        _: usize,
    ) -> Vec<(String, Option<f64>)> {
        let j = self.asked.get();
        self.asked.set(j + 1);
        cells
            .iter()
            .filter(|c| c.name != baseline)
            .map(|c| (c.name.clone(), self.widths.get(j).copied()))
            .collect()
    }

    fn components(
        &self,
        cells: &[CellResult],
        baseline: &str,
        _: usize,
    ) -> Vec<(String, f64, f64)> {
        cells
            .iter()
            .filter(|c| c.name != baseline)
            .filter_map(|c| self.components.map(|(w, b)| (c.name.clone(), w, b)))
            .collect()
    }
}

/// What a drive of the schedule did: the repetitions run as `(cell, repetition)`, the forks
/// started, the forks judged, and why it stopped.
#[derive(Debug)]
struct Driven {
    ran: Vec<(usize, u32)>,
    forks: Vec<u32>,
    judged: Vec<u32>,
    reason: StopReason,
}

/// Carries `schedule` out as the executor does, each repetition taking `each` (`first` in a
/// fork's first round); the repetitions in `failing` fail their cell.
fn drive_timed(
    schedule: &mut Schedule,
    results: &mut [CellResult],
    judge: &dyn Judge,
    (each, first): (Duration, Duration),
    failing: &[(usize, u32)],
) -> Driven {
    let (mut ran, mut forks, mut judged, mut elapsed) =
        (Vec::new(), Vec::new(), Vec::new(), Duration::ZERO);
    loop {
        match schedule.next(results, elapsed, judge) {
            Step::Fork(n) => {
                forks.push(n);
                schedule.took_fork(0.0);
            }
            Step::Run(slot) => {
                let took = if slot.first_in_fork { first } else { each };
                elapsed += took;
                schedule.took(&slot, took.as_secs_f64());
                ran.push((slot.cell, slot.repetition));
                let cell = &mut results[slot.cell];
                if failing.contains(&(slot.cell, slot.repetition)) {
                    cell.status = CellStatus::Failed("recorded failure".into());
                } else {
                    cell.runs.push(RunResult {
                        index: slot.repetition,
                        warmup: slot.warmup,
                        fork: Some(slot.fork),
                        position: Some(slot.position),
                        ..RunResult::default()
                    });
                }
            }
            Step::Judged { forks, .. } => judged.push(forks),
            Step::Done => break,
        }
    }
    assert_eq!(
        schedule.next(results, elapsed, judge),
        Step::Done,
        "done stays done"
    );
    Driven {
        ran,
        forks,
        judged,
        reason: schedule.reason(),
    }
}

fn drive(
    schedule: &mut Schedule,
    results: &mut [CellResult],
    judge: &dyn Judge,
    each: Duration,
    failing: &[(usize, u32)],
) -> Driven {
    drive_timed(schedule, results, judge, (each, each), failing)
}

const SECOND: Duration = Duration::from_secs(1);

#[test]
fn a_fixed_repeat_runs_every_round_in_a_fork_of_its_own_in_a_balanced_order() {
    let mut results = cells(2);
    let mut schedule = Schedule::new(fixed(Order::Interleaved, 1, 2), "c0", &results);
    assert_eq!(schedule.planned(), 6);
    assert_eq!(schedule.per_cell(), Some(3));
    let driven = drive(&mut schedule, &mut results, &NoJudge, SECOND, &[]);
    // The warm-up and round 0 in fork 0, round 1 in fork 1; Williams: 0 1, then 1 0.
    assert_eq!(driven.ran, [(0, 0), (1, 0), (0, 1), (1, 1), (1, 2), (0, 2)]);
    assert_eq!(driven.forks, [0, 1]);
    assert!(driven.judged.is_empty());
    assert_eq!(driven.reason, StopReason::Fixed);
    assert!(results.iter().all(|c| schedule.complete(c)));
    assert!(results
        .iter()
        .all(|c| c.runs[0].warmup && !c.runs[1].warmup));
    assert_eq!(results[1].runs[2].position, Some(0), "c1 first in round 1");
    assert_eq!(results[1].runs[2].fork, Some(1));
    assert_eq!(measured_rounds(&results), 2);
}

#[test]
fn blocked_order_runs_a_cell_s_repetitions_together() {
    let mut results = cells(2);
    let mut schedule = Schedule::new(fixed(Order::Blocked, 1, 2), "c0", &results);
    let driven = drive(&mut schedule, &mut results, &NoJudge, SECOND, &[]);
    assert_eq!(driven.ran, [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]);
    assert_eq!(driven.forks, [0], "one fork");
}

#[test]
fn a_resume_skips_the_repetitions_kept() {
    let mut results = cells(3);
    kept(&mut results[0], 0..3, 0);
    kept(&mut results[1], 0..1, 0);
    let mut schedule = Schedule::new(fixed(Order::Interleaved, 0, 3), "c0", &results);
    assert_eq!(schedule.planned(), 5);
    assert!(schedule.complete(&results[0]), "all of c0 was kept");
    assert!(!schedule.complete(&results[1]));
    let driven = drive(&mut schedule, &mut results, &NoJudge, SECOND, &[]);
    // Williams for three cells: 0 2 1, 1 0 2, 2 1 0, …
    assert_eq!(driven.ran, [(2, 0), (1, 1), (2, 1), (2, 2), (1, 2)]);
    assert!(results.iter().all(|c| schedule.complete(c)));
}

#[test]
fn a_failed_cell_drops_its_remaining_repetitions() {
    let mut results = cells(2);
    let mut schedule = Schedule::new(fixed(Order::Interleaved, 0, 3), "c0", &results);
    assert_eq!(
        schedule.next(&results, Duration::ZERO, &NoJudge),
        Step::Fork(0)
    );
    let Step::Run(first) = schedule.next(&results, Duration::ZERO, &NoJudge) else {
        panic!("a first repetition")
    };
    assert_eq!((first.cell, first.repetition), (0, 0));
    assert_eq!(schedule.remaining(&results), 6);
    results[1].status = CellStatus::Failed("recorded failure".into());
    assert_eq!(schedule.remaining(&results), 3, "c1's three are dropped");
    let driven = drive(&mut schedule, &mut results, &NoJudge, SECOND, &[]);
    assert_eq!(driven.ran, [(0, 1), (0, 2)]);
    assert!(!schedule.complete(&results[1]));
}

#[test]
fn a_target_runs_its_pilot_forks_then_stops_when_met() {
    let mut results = cells(2);
    let judge = recorded(&[0.04]);
    let mut schedule = Schedule::new(targeted(), "c0", &results);
    assert_eq!(
        schedule.planned(),
        12 + 3 * 2 * 2,
        "the pilot (3 forks of 2 rounds), and what the limit may add"
    );
    assert_eq!(schedule.per_cell(), None);
    assert_eq!(schedule.repetitions(), 12);
    let driven = drive(&mut schedule, &mut results, &judge, SECOND, &[]);
    assert_eq!(driven.judged, [3], "not judged before the pilot's forks");
    assert_eq!(driven.forks, [0, 1, 2]);
    assert_eq!(driven.reason, StopReason::TargetMet);
    assert_eq!(measured_rounds(&results), 6);
    assert!(
        !schedule.complete(&results[0]),
        "a target's cells finish with the schedule"
    );
    let design = schedule.design().unwrap();
    assert_eq!(
        (design.forks, design.rounds, design.rounds_per_fork),
        (3, 6, 2)
    );
}

#[test]
fn a_target_adds_forks_one_at_a_time_until_met() {
    let mut results = cells(2);
    let judge = recorded(&[0.3, 0.2, 0.05]);
    let mut schedule = Schedule::new(targeted(), "c0", &results);
    let driven = drive(&mut schedule, &mut results, &judge, SECOND, &[]);
    assert_eq!(driven.judged, [3, 4, 5]);
    assert_eq!(driven.reason, StopReason::TargetMet);
    assert_eq!(driven.forks, [0, 1, 2, 3, 4]);
    assert_eq!(
        &driven.ran[12..],
        [
            (0, 6),
            (1, 6),
            (1, 7),
            (0, 7),
            (0, 8),
            (1, 8),
            (1, 9),
            (0, 9)
        ],
        "whole forks of whole rounds"
    );
}

/// `fork_rounds = 1`: pilot forks of one round each, and later forks of one round too (with one
/// round a fork has no spread of its own, so the allocation has nothing to weigh).
#[test]
fn forks_of_one_round_when_the_benchmark_asks() {
    let mut results = cells(2);
    let judge = recorded(&[0.3, 0.2, 0.05]);
    let rules = Rules {
        precision: Some(Precision {
            fork_rounds: 1,
            ..TARGET
        }),
        ..targeted()
    };
    let mut schedule = Schedule::new(rules, "c0", &results);
    assert_eq!(schedule.repetitions(), 6, "six forks of one round at most");
    let driven = drive(&mut schedule, &mut results, &judge, SECOND, &[]);
    assert_eq!(driven.forks, [0, 1, 2, 3, 4]);
    assert_eq!(driven.judged, [3, 4, 5]);
    assert_eq!(driven.ran.len(), 5 * 2, "one round in each of five forks");
    let forks_of =
        |cell: &CellResult| -> Vec<u32> { cell.runs.iter().map(|r| r.fork.unwrap()).collect() };
    assert_eq!(forks_of(&results[0]), [0, 1, 2, 3, 4]);
    assert_eq!(forks_of(&results[1]), [0, 1, 2, 3, 4]);
    let design = schedule.design().unwrap();
    assert_eq!(
        (design.pilot_rounds_per_fork, design.rounds_per_fork),
        (1, 1)
    );
    assert!(
        design
            .line()
            .starts_with("5 forks (5 rounds) of one round each (`fork_rounds = 1`"),
        "{}",
        design.line()
    );
}

#[test]
fn the_allocation_sizes_the_forks_after_the_pilot() {
    // A fork's first round costs 5 s more a repetition than a later one (a costly setup) and
    // rounds vary far more within forks than forks do: √(c₂σ²/(c₁τ²)) = √(10·0.04/(2·0.0025))
    // is about 9, kept at 4.
    let mut results = cells(2);
    let judge = Recorded {
        components: Some((0.04, 0.0025)),
        ..recorded(&[0.3, 0.01])
    };
    let rules = Rules {
        precision: Some(Precision {
            budget: Duration::from_secs(600),
            ..TARGET
        }),
        ..targeted()
    };
    let mut schedule = Schedule::new(rules, "c0", &results);
    let timing = (SECOND, Duration::from_secs(6));
    let driven = drive_timed(&mut schedule, &mut results, &judge, timing, &[]);
    assert_eq!(driven.judged, [3, 4]);
    assert_eq!(
        driven.ran.len(),
        12 + 4 * 2,
        "a fork of four rounds after the pilot"
    );
    let design = schedule.design().unwrap();
    assert_eq!(design.rounds_per_fork, 4);
    assert_eq!(
        (design.round_s, design.fork_setup_s),
        (Some(2.0), Some(10.0))
    );
    assert!((design.optimal_rounds.unwrap() - 80f64.sqrt()).abs() < 1e-9);
    assert!(design
        .line()
        .starts_with("4 forks (10 rounds): 2 rounds per fork in the pilot, then 4"));
}

#[test]
fn the_fork_limit_stops_a_target_not_met() {
    let mut results = cells(2);
    let judge = recorded(&[0.2; 10]);
    let mut schedule = Schedule::new(targeted(), "c0", &results);
    let driven = drive(&mut schedule, &mut results, &judge, SECOND, &[]);
    assert_eq!(driven.judged, [3, 4, 5, 6]);
    assert_eq!(driven.reason, StopReason::RoundLimit);
    assert_eq!(measured_rounds(&results), 12);
}

#[test]
fn the_budget_stops_a_target_not_met() {
    // Repetitions of 2 s, forks of 8 s against 45 s: after five forks (40 s) a sixth would end
    // at 48 s.
    let mut results = cells(2);
    let judge = recorded(&[0.2; 10]);
    let mut schedule = Schedule::new(targeted(), "c0", &results);
    let each = Duration::from_secs(2);
    let driven = drive(&mut schedule, &mut results, &judge, each, &[]);
    assert_eq!(driven.judged, [3, 4, 5]);
    assert_eq!(driven.reason, StopReason::Budget);
}

#[test]
fn a_target_with_nothing_to_judge_stops_after_its_pilot() {
    let mut results = cells(2);
    let mut schedule = Schedule::new(targeted(), "c0", &results);
    let driven = drive(&mut schedule, &mut results, &NoJudge, SECOND, &[]);
    assert_eq!(driven.judged, [3]);
    assert!(
        matches!(&driven.reason, StopReason::Unjudged(why) if why.contains("no cell of this run has a ratio")),
        "{:?}",
        driven.reason
    );
}

#[test]
fn a_target_stops_when_no_cell_can_run_another_fork() {
    let mut results = cells(2);
    let judge = recorded(&[0.2; 10]);
    let mut schedule = Schedule::new(targeted(), "c0", &results);
    let driven = drive(
        &mut schedule,
        &mut results,
        &judge,
        SECOND,
        &[(0, 5), (1, 5)],
    );
    assert_eq!(driven.judged, [3]);
    assert_eq!(
        driven.reason,
        StopReason::Unjudged("no cell could run another round".into())
    );
}

#[test]
fn a_resumed_target_completes_the_round_cut_short_first() {
    let mut results = cells(2);
    kept(&mut results[0], 0..7, 0);
    kept(&mut results[1], 0..6, 0);
    let judge = recorded(&[0.04]);
    let mut schedule = Schedule::new(targeted(), "c0", &results);
    let driven = drive(&mut schedule, &mut results, &judge, SECOND, &[]);
    assert_eq!(driven.ran, [(1, 6)]);
    assert_eq!(
        driven.forks,
        [3],
        "round 6 is in the fork after the pilot's three"
    );
    assert_eq!(driven.judged, [4]);
    assert_eq!(driven.reason, StopReason::TargetMet);
}

#[test]
fn at_smoke_scale_a_target_runs_its_minimum_and_says_why() {
    let run = RunSpec {
        precision: Some(TARGET),
        ..RunSpec::DEFAULT
    };
    let rules = Rules::of(&run, BackendKind::named("embedded"), &Scale::smoke());
    assert!(!rules.judged);
    let mut results = cells(2);
    let judge = recorded(&[0.2; 10]);
    let mut schedule = Schedule::new(rules, "c0", &results);
    assert_eq!(schedule.per_cell(), Some(TARGET.min_rounds));
    let driven = drive(&mut schedule, &mut results, &judge, SECOND, &[]);
    assert!(driven.judged.is_empty());
    assert_eq!(driven.ran.len(), 2 * TARGET.min_rounds as usize);
    assert_eq!(
        driven.forks.len(),
        TARGET.min_rounds as usize,
        "a round a fork"
    );
    assert!(matches!(&driven.reason, StopReason::Unjudged(why) if why.contains("smoke")));
    assert!(results.iter().all(|c| schedule.complete(c)));
}

#[test]
fn a_backend_s_own_run_options_apply_there_only() {
    static OWN: [(BackendKind, Precision); 1] = [(BackendKind::named("postgres"), TARGET)];
    let run = RunSpec {
        repeat: 2,
        precision_on: &OWN,
        ..RunSpec::DEFAULT
    };
    let scale = Scale::default_scale();
    let here = Rules::of(&run, BackendKind::named("embedded"), &scale);
    assert_eq!((here.rounds, here.precision), (2, None));
    let there = Rules::of(&run, BackendKind::named("postgres"), &scale);
    assert_eq!((there.rounds, there.precision), (3, Some(TARGET)));
    let mut results = cells(2);
    let judge = recorded(&[0.2; 10]);
    let mut schedule = Schedule::new(here, "c0", &results);
    let fixed = drive(&mut schedule, &mut results, &judge, SECOND, &[]);
    assert_eq!((fixed.ran.len(), fixed.reason), (4, StopReason::Fixed));
    let mut results = cells(2);
    let mut schedule = Schedule::new(there, "c0", &results);
    let judged = drive(&mut schedule, &mut results, &judge, SECOND, &[]);
    assert_eq!(judged.reason, StopReason::RoundLimit);
}

#[test]
fn a_disturbed_repetition_runs_again_in_its_place_up_to_the_bound() {
    let mut results = cells(2);
    let mut schedule = Schedule::new(fixed(Order::Interleaved, 1, 2), "c0", &results);
    let judge = NoJudge;
    // The warm-up round: a disturbed warm-up is never measured again.
    for _ in 0..2 {
        let Step::Run(slot) = next_run(&mut schedule, &results, &judge) else {
            panic!("a run")
        };
        assert!(slot.warmup);
        assert!(!schedule.remeasure(&slot));
        push(&mut results, &slot, None);
    }
    // Round 0, c0 first: disturbed every time, it runs again in its place MAX_REMEASURES times,
    // then its window is kept.
    let Step::Run(first) = next_run(&mut schedule, &results, &judge) else {
        panic!("a run")
    };
    assert_eq!((first.cell, first.repetition), (0, 1));
    for _ in 0..MAX_REMEASURES {
        assert!(schedule.remeasure(&first));
        push(&mut results, &first, Some("measured again"));
        let Step::Run(again) = next_run(&mut schedule, &results, &judge) else {
            panic!("a run")
        };
        assert_eq!(again, first, "the same fork, position and repetition");
    }
    assert!(!schedule.remeasure(&first), "the bound holds");
    push(&mut results, &first, None);
    assert_eq!(schedule.planned(), 6 + MAX_REMEASURES as usize);
    // The rest runs as planned, and the cells pair.
    let driven = drive(&mut schedule, &mut results, &judge, SECOND, &[]);
    assert_eq!(driven.ran, [(1, 1), (1, 2), (0, 2)]);
    assert!(results.iter().all(|c| schedule.complete(c)));
    assert_eq!(results[0].set_aside().count(), MAX_REMEASURES as usize);
    assert_eq!(measured_rounds(&results), 2);
}

#[test]
fn a_resume_runs_again_a_repetition_whose_only_window_was_set_aside() {
    let mut results = cells(2);
    kept(&mut results[0], 0..2, 0);
    kept(&mut results[1], 0..2, 0);
    results[1].runs[1].set_aside = Some("measured again".into());
    let mut schedule = Schedule::new(fixed(Order::Interleaved, 0, 2), "c0", &results);
    assert!(schedule.complete(&results[0]));
    assert!(
        !schedule.complete(&results[1]),
        "a set-aside window does not count"
    );
    let driven = drive(&mut schedule, &mut results, &NoJudge, SECOND, &[]);
    assert_eq!(driven.ran, [(1, 1)]);
}

fn next_run(schedule: &mut Schedule, results: &[CellResult], judge: &dyn Judge) -> Step {
    loop {
        match schedule.next(results, Duration::ZERO, judge) {
            Step::Fork(_) => schedule.took_fork(0.0),
            step => return step,
        }
    }
}

fn push(results: &mut [CellResult], slot: &Slot, set_aside: Option<&str>) {
    results[slot.cell].runs.push(RunResult {
        index: slot.repetition,
        warmup: slot.warmup,
        fork: Some(slot.fork),
        position: Some(slot.position),
        set_aside: set_aside.map(str::to_string),
        ..RunResult::default()
    });
}
