//! The schedule driven by recorded results and timings, as the executor would drive it: order,
//! resume, failures, and every reason a benchmark stops.

use super::*;
use crate::model::results::RunResult;
use crate::run::target::NoJudge;

/// ±5%, 3 to 6 rounds, 45 s.
const TARGET: Precision = Precision {
    hundredths_of_percent: 500,
    min_rounds: 3,
    max_rounds: 6,
    budget: Duration::from_secs(45),
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

/// Widths recorded per round: after round `r`, every compared cell's interval is
/// `widths[r - 1]` wide; `floor` is a between-run floor for every compared cell.
struct Recorded {
    widths: Vec<f64>,
    floor: Option<f64>,
}

impl Judge for Recorded {
    fn widths(
        &self,
        cells: &[CellResult],
        baseline: &str,
        _: bool,
        _: usize,
    ) -> Vec<(String, Option<f64>)> {
        let round = measured_rounds(cells) as usize;
        cells
            .iter()
            .filter(|c| c.name != baseline)
            .map(|c| {
                (
                    c.name.clone(),
                    round
                        .checked_sub(1)
                        .and_then(|r| self.widths.get(r).copied()),
                )
            })
            .collect()
    }

    fn floors(
        &self,
        cells: &[CellResult],
        baseline: &str,
        _: bool,
        _: usize,
    ) -> Vec<(String, f64)> {
        cells
            .iter()
            .filter(|c| c.name != baseline)
            .filter_map(|c| self.floor.map(|f| (c.name.clone(), f)))
            .collect()
    }
}

/// What a drive of the schedule did: the repetitions run as `(cell, repetition)`, the rounds
/// judged, and why it stopped.
#[derive(Debug)]
struct Driven {
    ran: Vec<(usize, u32)>,
    judged: Vec<u32>,
    reason: StopReason,
}

/// Carries `schedule` out as the executor does, each repetition taking `each`; the repetitions
/// in `failing` fail their cell.
fn drive(
    schedule: &mut Schedule,
    results: &mut [CellResult],
    judge: &dyn Judge,
    each: Duration,
    failing: &[(usize, u32)],
) -> Driven {
    let (mut ran, mut judged, mut elapsed) = (Vec::new(), Vec::new(), Duration::ZERO);
    loop {
        match schedule.next(results, elapsed, judge) {
            Step::Run(slot) => {
                elapsed += each;
                ran.push((slot.cell, slot.repetition));
                let cell = &mut results[slot.cell];
                if failing.contains(&(slot.cell, slot.repetition)) {
                    cell.status = CellStatus::Failed("recorded failure".into());
                } else {
                    cell.runs.push(RunResult {
                        index: slot.repetition,
                        warmup: slot.warmup,
                        ..RunResult::default()
                    });
                }
            }
            Step::Judged { rounds, .. } => judged.push(rounds),
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
        judged,
        reason: schedule.reason(),
    }
}

const SECOND: Duration = Duration::from_secs(1);

#[test]
fn interleaved_order_runs_a_repetition_of_every_cell_before_the_next() {
    let mut results = cells(2);
    let mut schedule = Schedule::new(fixed(Order::Interleaved, 1, 2), "c0", &results);
    assert_eq!(schedule.planned(), 6);
    assert_eq!(schedule.per_cell(), Some(3));
    let driven = drive(&mut schedule, &mut results, &NoJudge, SECOND, &[]);
    assert_eq!(driven.ran, [(0, 0), (1, 0), (0, 1), (1, 1), (0, 2), (1, 2)]);
    assert!(driven.judged.is_empty());
    assert_eq!(driven.reason, StopReason::Fixed);
    assert!(results.iter().all(|c| schedule.complete(c)));
    assert!(results
        .iter()
        .all(|c| c.runs[0].warmup && !c.runs[1].warmup));
    assert_eq!(measured_rounds(&results), 2);
}

#[test]
fn blocked_order_runs_a_cell_s_repetitions_together() {
    let mut results = cells(2);
    let mut schedule = Schedule::new(fixed(Order::Blocked, 1, 2), "c0", &results);
    let driven = drive(&mut schedule, &mut results, &NoJudge, SECOND, &[]);
    assert_eq!(driven.ran, [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]);
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
    assert_eq!(driven.ran, [(2, 0), (1, 1), (2, 1), (1, 2), (2, 2)]);
    assert!(results.iter().all(|c| schedule.complete(c)));
}

#[test]
fn a_failed_cell_drops_its_remaining_repetitions() {
    let mut results = cells(2);
    let mut schedule = Schedule::new(fixed(Order::Interleaved, 0, 3), "c0", &results);
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
fn a_target_runs_its_minimum_then_stops_when_met() {
    let mut results = cells(2);
    let judge = Recorded {
        widths: vec![0.01, 0.01, 0.04],
        floor: None,
    };
    let mut schedule = Schedule::new(targeted(), "c0", &results);
    assert_eq!(
        schedule.planned(),
        6 + 3 * 2,
        "the minimum, and what the limit may add"
    );
    assert_eq!(schedule.per_cell(), None);
    assert_eq!(schedule.repetitions(), 6);
    let driven = drive(&mut schedule, &mut results, &judge, SECOND, &[]);
    assert_eq!(driven.judged, [3], "not judged before the minimum");
    assert_eq!(driven.reason, StopReason::TargetMet);
    assert_eq!(measured_rounds(&results), 3);
    assert!(
        !schedule.complete(&results[0]),
        "a target's cells finish with the schedule"
    );
}

#[test]
fn a_target_adds_rounds_one_at_a_time_until_met() {
    let mut results = cells(2);
    let judge = Recorded {
        widths: vec![0.3, 0.2, 0.2, 0.1, 0.05],
        floor: None,
    };
    let mut schedule = Schedule::new(targeted(), "c0", &results);
    let driven = drive(&mut schedule, &mut results, &judge, SECOND, &[]);
    assert_eq!(driven.judged, [3, 4, 5]);
    assert_eq!(driven.reason, StopReason::TargetMet);
    assert_eq!(
        &driven.ran[6..],
        [(0, 3), (1, 3), (0, 4), (1, 4)],
        "whole rounds"
    );
}

#[test]
fn the_round_limit_stops_a_target_not_met() {
    let mut results = cells(2);
    let judge = Recorded {
        widths: vec![0.2; 10],
        floor: None,
    };
    let mut schedule = Schedule::new(targeted(), "c0", &results);
    let driven = drive(&mut schedule, &mut results, &judge, SECOND, &[]);
    assert_eq!(driven.judged, [3, 4, 5, 6]);
    assert_eq!(driven.reason, StopReason::RoundLimit);
    assert_eq!(measured_rounds(&results), TARGET.max_rounds);
}

#[test]
fn the_budget_stops_a_target_not_met() {
    // Rounds of 10 s against 45 s: after four rounds (40 s) a fifth would end at 50 s.
    let mut results = cells(2);
    let judge = Recorded {
        widths: vec![0.2; 10],
        floor: None,
    };
    let mut schedule = Schedule::new(targeted(), "c0", &results);
    let each = Duration::from_secs(5);
    let driven = drive(&mut schedule, &mut results, &judge, each, &[]);
    assert_eq!(driven.judged, [3, 4]);
    assert_eq!(driven.reason, StopReason::Budget);
}

#[test]
fn a_between_run_floor_above_the_target_stops_within_its_reach() {
    // A 10% floor: rounds go on until the interval is within √2 times it (14.4%).
    let mut results = cells(2);
    let judge = Recorded {
        widths: vec![0.3, 0.3, 0.2, 0.14],
        floor: Some(0.10),
    };
    let mut schedule = Schedule::new(targeted(), "c0", &results);
    let driven = drive(&mut schedule, &mut results, &judge, SECOND, &[]);
    assert_eq!(driven.judged, [3, 4]);
    assert_eq!(
        driven.reason,
        StopReason::BetweenRuns {
            cell: "c1".into(),
            floor: 0.10
        }
    );
}

#[test]
fn a_target_with_nothing_to_judge_stops_at_its_minimum() {
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
fn a_target_stops_when_no_cell_can_run_another_round() {
    let mut results = cells(2);
    let judge = Recorded {
        widths: vec![0.2; 10],
        floor: None,
    };
    let mut schedule = Schedule::new(targeted(), "c0", &results);
    let driven = drive(
        &mut schedule,
        &mut results,
        &judge,
        SECOND,
        &[(0, 2), (1, 2)],
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
    kept(&mut results[0], 0..4, 0);
    kept(&mut results[1], 0..3, 0);
    let judge = Recorded {
        widths: vec![0.2, 0.2, 0.2, 0.04],
        floor: None,
    };
    let mut schedule = Schedule::new(targeted(), "c0", &results);
    assert_eq!(schedule.planned(), 1 + 2 * 2);
    let driven = drive(&mut schedule, &mut results, &judge, SECOND, &[]);
    assert_eq!(driven.ran, [(1, 3)]);
    assert_eq!(driven.judged, [4]);
    assert_eq!(driven.reason, StopReason::TargetMet);
}

#[test]
fn at_smoke_scale_a_target_runs_its_minimum_and_says_why() {
    let run = RunSpec {
        precision: Some(TARGET),
        ..RunSpec::DEFAULT
    };
    let rules = Rules::of(&run, BackendKind::Embedded, &Scale::smoke());
    assert!(!rules.judged);
    let mut results = cells(2);
    let judge = Recorded {
        widths: vec![0.2; 10],
        floor: None,
    };
    let mut schedule = Schedule::new(rules, "c0", &results);
    assert_eq!(schedule.per_cell(), Some(TARGET.min_rounds));
    let driven = drive(&mut schedule, &mut results, &judge, SECOND, &[]);
    assert!(driven.judged.is_empty());
    assert_eq!(driven.ran.len(), 2 * TARGET.min_rounds as usize);
    assert!(matches!(&driven.reason, StopReason::Unjudged(why) if why.contains("smoke")));
    assert!(results.iter().all(|c| schedule.complete(c)));
}

#[test]
fn a_backend_s_own_run_options_apply_there_only() {
    static OWN: [(BackendKind, Precision); 1] = [(BackendKind::Postgres, TARGET)];
    let run = RunSpec {
        repeat: 2,
        precision_on: &OWN,
        ..RunSpec::DEFAULT
    };
    let scale = Scale::default_scale();
    let here = Rules::of(&run, BackendKind::Embedded, &scale);
    assert_eq!((here.rounds, here.precision), (2, None));
    let there = Rules::of(&run, BackendKind::Postgres, &scale);
    assert_eq!((there.rounds, there.precision), (3, Some(TARGET)));
    let mut results = cells(2);
    let judge = Recorded {
        widths: vec![0.2; 10],
        floor: None,
    };
    let mut schedule = Schedule::new(here, "c0", &results);
    let fixed = drive(&mut schedule, &mut results, &judge, SECOND, &[]);
    assert_eq!((fixed.ran.len(), fixed.reason), (4, StopReason::Fixed));
    let mut results = cells(2);
    let mut schedule = Schedule::new(there, "c0", &results);
    let judged = drive(&mut schedule, &mut results, &judge, SECOND, &[]);
    assert_eq!(judged.reason, StopReason::RoundLimit);
}
