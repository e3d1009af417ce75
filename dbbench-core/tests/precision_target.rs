//! A precision target end to end on the embedded engine: the runner adds rounds until the
//! two-stage intervals are narrow enough, the round limit or the budget, records why it stopped
//! with the results, and the table judges with the same intervals. The body sleeps a known time
//! per cell (40 ms and 60 ms), so the verdict is known; the assertions hold whichever limit ends
//! the run on a noisy machine.

mod support;

use dbbench_core::__internals::config::{FixtureKind, Precision, RunSpec, StorageSpec};
use dbbench_core::__internals::{
    embedded::EmbeddedBackend, run_recorded, summary, Backend, BodyFuture, IntervalJudge,
    NoRecorder, RunContext, Volumes,
};
use dbbench_core::results::{BenchmarkResult, StopReason};
use dbbench_core::{Scale, Session};
use std::time::Duration;
use support::*;

fn sleeps(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        let ms = if db.cell() == "slow" { 60 } else { 40 };
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Ok(())
    })
}

const fn run(budget_ms: u64) -> RunSpec {
    RunSpec {
        repeat: 1,
        warmup: 0,
        fixture: FixtureKind::None,
        precision: Some(Precision {
            hundredths_of_percent: 500,
            min_rounds: 3,
            max_rounds: 8,
            budget: Duration::from_millis(budget_ms),
            fork_rounds: 2,
        }),
        ..RunSpec::DEFAULT
    }
}

support::benchmark! {
    static TARGET = sleeps,
    title: "sleeps",
    run: run(60_000),
    cells: [cell("fast", StorageSpec::DEFAULT), cell("slow", StorageSpec::DEFAULT)],
}

support::benchmark! {
    static TIGHT = sleeps,
    title: "sleeps within 200 ms",
    run: run(200),
    cells: [cell("fast", StorageSpec::DEFAULT), cell("slow", StorageSpec::DEFAULT)],
}

fn judged(bench: &'static dbbench_core::BenchmarkSpec, ctx: &RunContext) -> BenchmarkResult {
    judged_by(bench, ctx, &IntervalJudge::default())
}

fn judged_by(
    bench: &'static dbbench_core::BenchmarkSpec,
    ctx: &RunContext,
    judge: &IntervalJudge,
) -> BenchmarkResult {
    exclusively(async {
        let mut backend = Backend::new(EmbeddedBackend::new());
        run_recorded(bench, None, ctx, &mut backend, &mut NoRecorder, judge).await
    })
    .unwrap()
}

fn rounds_of(result: &BenchmarkResult) -> Vec<Vec<u32>> {
    result
        .cells
        .iter()
        .map(|c| c.measured().map(|r| r.index).collect())
        .collect()
}

#[test]
fn rounds_are_added_until_the_target_or_a_limit_and_the_reason_is_kept() {
    let ctx = context(
        "precision",
        Scale::parse("0.001").unwrap(),
        Volumes::default(),
    );
    let result = judged(&TARGET, &ctx);
    let stopping = result.stopping.clone().expect("the reason is recorded");
    assert!(
        matches!(
            stopping.reason,
            StopReason::TargetMet | StopReason::RoundLimit
        ),
        "{stopping:?}"
    );
    // Three to eight forks of two rounds (the allocation keeps at least the pilot's two).
    assert!((6..=32).contains(&stopping.rounds), "{stopping:?}");
    // Every round ran every cell once: the rounds pair.
    let expected: Vec<u32> = (0..stopping.rounds).collect();
    assert_eq!(rounds_of(&result), vec![expected.clone(), expected]);
    if stopping.reason == StopReason::TargetMet {
        assert!(
            stopping.widest.as_ref().is_some_and(|(_, w)| *w <= 0.05),
            "{stopping:?}"
        );
    }
    let text = summary::render(&result);
    assert!(
        text.contains("two-stage log-ratio t over the forks' means (Stein)"),
        "{text}"
    );
    assert!(
        text.contains(&stopping.line(result.run.precision.as_ref())),
        "{text}"
    );
    let slow = text
        .lines()
        .find(|l| l.trim_start().starts_with("slow"))
        .unwrap();
    assert!(slow.contains("slower"), "60 ms against 40 ms: {slow}");
    // Every window started from a flushed machine, and says so.
    for run in result.cells.iter().flat_map(|c| c.measured()) {
        let start = run.start.as_ref().expect("the start is recorded");
        assert!(start.settle_s < 10.0, "{start:?}");
    }
}

#[test]
fn the_budget_stops_a_target_not_yet_met() {
    // Three pilot forks of two rounds of two windows of 40 and 60 ms take more than 200 ms: no
    // fourth fork starts.
    let ctx = context(
        "precision-budget",
        Scale::parse("0.001").unwrap(),
        Volumes::default(),
    );
    let result = judged(&TIGHT, &ctx);
    let stopping = result.stopping.expect("recorded");
    assert_eq!(stopping.rounds, 6, "{stopping:?}");
    assert!(
        matches!(stopping.reason, StopReason::Budget | StopReason::TargetMet),
        "{stopping:?}"
    );
    assert!(stopping.elapsed_s >= 0.2, "{stopping:?}");
}

#[test]
fn at_smoke_scale_the_minimum_runs_and_says_why() {
    let ctx = context("precision-smoke", Scale::smoke(), Volumes::default());
    let result = judged(&TARGET, &ctx);
    let stopping = result.stopping.expect("recorded");
    assert_eq!(stopping.rounds, 3);
    assert!(
        matches!(&stopping.reason, StopReason::Unjudged(why) if why.contains("smoke")),
        "{stopping:?}"
    );
}

/// The benchmark's target is generous (60 s); the embedded backend's own is the tight one, so
/// the run on the embedded engine must stop on the backend's budget and say whose it was.
const EMBEDDED_OWN: &[(dbbench_core::BackendKind, Precision)] = &[(
    dbbench_core::BackendKind::named("embedded"),
    Precision {
        hundredths_of_percent: 500,
        min_rounds: 3,
        max_rounds: 8,
        budget: Duration::from_millis(200),
        fork_rounds: 2,
    },
)];

const fn own_on_embedded() -> RunSpec {
    RunSpec {
        precision_on: EMBEDDED_OWN,
        ..run(60_000)
    }
}

support::benchmark! {
    static OWN = sleeps,
    title: "sleeps within the embedded engine's own 200 ms",
    run: own_on_embedded(),
    cells: [cell("fast", StorageSpec::DEFAULT), cell("slow", StorageSpec::DEFAULT)],
}

#[test]
fn a_backend_s_own_run_options_apply_there_and_the_stop_line_says_so() {
    let ctx = context(
        "precision-own",
        Scale::parse("0.001").unwrap(),
        Volumes::default(),
    );
    let result = judged(&OWN, &ctx);
    let precision = result.run.precision.clone().expect("a target");
    assert_eq!(precision.budget_s, 0.2);
    assert_eq!(precision.backend.as_deref(), Some("embedded"));
    let stopping = result.stopping.clone().expect("recorded");
    // The benchmark's 60 s would have allowed up to 8 forks; the backend's 200 ms allows the
    // pilot's 3 (of two rounds each).
    assert_eq!(stopping.rounds, 6, "{stopping:?}");
    if stopping.reason == StopReason::Budget {
        let line = stopping.line(Some(&precision));
        assert!(
            line.contains("the time budget under embedded's own run options"),
            "{line}"
        );
    }
    assert!(
        summary::render(&result).contains("within 0.2 s, embedded's own"),
        "{}",
        summary::render(&result)
    );
}

#[test]
fn a_target_runs_forks_of_two_rounds_and_records_its_design() {
    let ctx = context(
        "precision-forks",
        Scale::parse("0.001").unwrap(),
        Volumes::default(),
    );
    let result = judged(&TARGET, &ctx);
    let stopping = result.stopping.clone().expect("recorded");
    let design = stopping
        .design
        .clone()
        .expect("a judged target records its design");
    assert!(design.forks >= 3, "{design:?}");
    assert_eq!(design.pilot_rounds_per_fork, 2);
    assert_eq!(design.rounds, stopping.rounds);
    // Every measured run says its fork and position; the pilot's forks have two rounds each.
    let fast = &result.cells[0];
    let forks: Vec<u32> = fast.measured().map(|r| r.fork.unwrap()).collect();
    assert_eq!(&forks[..6], [0, 0, 1, 1, 2, 2], "{forks:?}");
    assert!(fast.measured().all(|r| r.position.is_some()));
    assert!(
        stopping
            .line(result.run.precision.as_ref())
            .starts_with(&format!(
                "stopped after {} forks ({} rounds)",
                design.forks, design.rounds
            )),
        "{}",
        stopping.line(result.run.precision.as_ref())
    );
    let text = summary::render(&result);
    assert!(text.contains("over the forks' means"), "{text}");
}
