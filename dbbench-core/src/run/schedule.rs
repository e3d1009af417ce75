//! The schedule of a benchmark's repetitions: which cell runs which repetition in what order, what
//! a resumed invocation skips, when a precision target adds a round, and why the benchmark
//! stopped. It only decides: the executor (`run::executor`) runs what it hands out and records
//! the results, which the schedule reads back (a cell's status and its runs) to decide the next
//! step, so unit tests drive it with recorded results and timings, with no engine.
//!
//! The order is that of `order`: interleaved runs repetition `r` of every cell before `r + 1` of
//! any (so rounds pair), blocked runs every repetition of a cell before the next cell. Warm-ups
//! come first in each cell. A precision target runs its minimum rounds, then asks its rule
//! (`run::target::decide`) after each round whether another runs.

use crate::model::config::{BackendKind, Order, Precision, RunSpec};
use crate::model::results::{CellResult, CellStatus, StopReason};
use crate::model::scale::Scale;
use crate::run::target::{decide, Decision, Judge};
use std::collections::VecDeque;
use std::time::Duration;

/// The run options the schedule follows, as they apply on one backend at one scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rules {
    /// Interleaved or blocked.
    pub order: Order,
    /// Warm-up repetitions of each cell, before its measured ones.
    pub warmup: u32,
    /// The measured rounds that always run: `repeat`, or a precision target's minimum.
    pub rounds: u32,
    /// The precision target declared for this backend (its own, or the benchmark's).
    pub precision: Option<Precision>,
    /// Whether the target's rule applies: not at smoke scale, whose windows of milliseconds
    /// measure scheduler noise; the target then runs its minimum and says why.
    pub judged: bool,
}

impl Rules {
    /// The rules of `run` on `kind` at `scale` (a backend may have run options of its own:
    /// `postgres(budget = "5m")`).
    pub fn of(run: &RunSpec, kind: BackendKind, scale: &Scale) -> Rules {
        Rules {
            order: run.order,
            warmup: run.warmup,
            rounds: run.rounds_on(kind),
            precision: run.precision_on(kind).0,
            judged: !scale.is_smoke(),
        }
    }

    /// The target whose rule decides the rounds, if any.
    fn target(&self) -> Option<Precision> {
        self.precision.filter(|_| self.judged)
    }

    /// The repetitions of every cell when they are fixed; `None` where a target leaves the count
    /// open (until the schedule is done).
    pub fn per_cell(&self) -> Option<u32> {
        match self.target() {
            Some(_) => None,
            None => Some(self.warmup + self.rounds),
        }
    }

    /// Whether `cell` has run everything it will: a running cell with all its fixed repetitions.
    /// Under a target no cell is complete before the schedule is done.
    pub fn complete(&self, cell: &CellResult) -> bool {
        cell.status == CellStatus::Ok
            && self
                .per_cell()
                .is_some_and(|n| cell.runs.len() == n as usize)
    }
}

/// One repetition to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// The cell, by its index in the results.
    pub cell: usize,
    /// The repetition of the cell, from 0, warm-ups first.
    pub repetition: u32,
    /// A warm-up, excluded from statistics.
    pub warmup: bool,
}

/// What the executor does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Run this repetition, then record it (or the cell's failure) in the results.
    Run(Slot),
    /// `rounds` rounds are done and the target's rule judged them with these widths (the
    /// executor says them); ask again for what follows.
    Judged {
        /// The measured rounds judged.
        rounds: u32,
        /// The target they were judged against.
        target: Precision,
        /// Each compared cell's interval half-width, as [`Judge::widths`] gave them.
        widths: Vec<(String, Option<f64>)>,
    },
    /// Nothing more runs; [`Schedule::reason`] says why.
    Done,
}

/// The repetitions still to run and the rounds so far; see the module's documentation.
#[derive(Debug)]
pub struct Schedule {
    rules: Rules,
    baseline: String,
    cells: usize,
    rounds: u32,
    queue: VecDeque<Slot>,
    planned: usize,
    stop: Option<StopReason>,
    done: bool,
}

impl Schedule {
    /// The schedule for `results` (one per cell, in order), whose runs are those a resumed
    /// invocation kept: those repetitions are not run again. A resumed target continues after
    /// the rounds it kept, first completing the round an interruption cut short, so that every
    /// cell has the same rounds again (they pair). `baseline` is the cell the others' ratios are
    /// to.
    pub fn new(rules: Rules, baseline: &str, results: &[CellResult]) -> Schedule {
        let rounds = match rules.target() {
            Some(_) => measured_rounds(results).max(rules.rounds),
            None => rules.rounds,
        };
        let fixed = rules.warmup + rounds;
        let cells = results.len();
        let order: Vec<(usize, u32)> = match rules.order {
            Order::Interleaved => (0..fixed)
                .flat_map(|rep| (0..cells).map(move |c| (c, rep)))
                .collect(),
            Order::Blocked => (0..cells)
                .flat_map(|c| (0..fixed).map(move |rep| (c, rep)))
                .collect(),
        };
        let queue: VecDeque<Slot> = order
            .into_iter()
            .filter(|&(cell, rep)| !results[cell].runs.iter().any(|r| r.index == rep))
            .map(|(cell, repetition)| slot(&rules, cell, repetition))
            .collect();
        // The progress line's total: what is queued, and the rounds a target may still add.
        let planned = match rules.target() {
            Some(t) => queue.len() + (t.max_rounds.saturating_sub(rounds) as usize) * cells,
            None => queue.len(),
        };
        Schedule {
            rules,
            baseline: baseline.to_string(),
            cells,
            rounds,
            queue,
            planned,
            stop: None,
            done: false,
        }
    }

    /// The next step, from the results so far. `elapsed` is the time since the first repetition
    /// started (the target's budget counts it); `judge` gives the widths the target's rule needs.
    /// A cell that failed drops its remaining repetitions.
    pub fn next(&mut self, results: &[CellResult], elapsed: Duration, judge: &dyn Judge) -> Step {
        while !self.done {
            match self.queue.pop_front() {
                Some(slot) if results[slot.cell].status == CellStatus::Ok => {
                    return Step::Run(slot)
                }
                Some(_) => continue,
                None => return self.judge(results, elapsed, judge),
            }
        }
        Step::Done
    }

    /// The fixed rounds (or the last added one) are done: a precision target decides whether
    /// another runs; without one the schedule is done.
    fn judge(&mut self, results: &[CellResult], elapsed: Duration, judge: &dyn Judge) -> Step {
        let Some(target) = self.rules.target() else {
            self.done = true;
            return Step::Done;
        };
        let widths = self.widths(results, judge);
        let floors = judge.floors(results, &self.baseline, self.paired(), self.pilot());
        let rounds = self.rounds;
        match decide(&target, rounds, elapsed, &widths, &floors) {
            Decision::Continue => {
                let next = self.rules.warmup + rounds;
                self.queue.extend(
                    (0..self.cells)
                        .filter(|&i| results[i].status == CellStatus::Ok)
                        .map(|i| slot(&self.rules, i, next)),
                );
                self.rounds += 1;
                // No cell left to run the round: done, without a reason of the rule's.
                self.done = self.queue.is_empty();
            }
            Decision::Stop(reason) => {
                self.stop = Some(reason);
                self.done = true;
            }
        }
        Step::Judged {
            rounds,
            target,
            widths,
        }
    }

    /// Each compared cell's interval half-width for `results`, as the target's rule sees them.
    pub fn widths(&self, results: &[CellResult], judge: &dyn Judge) -> Vec<(String, Option<f64>)> {
        judge.widths(results, &self.baseline, self.paired(), self.pilot())
    }

    /// Rounds pair when the order interleaves them.
    fn paired(&self) -> bool {
        self.rules.order == Order::Interleaved
    }

    /// The rounds whose spread a two-stage interval uses: those that always run.
    fn pilot(&self) -> usize {
        self.rules.rounds as usize
    }

    /// Repetitions the progress line expects in all (a target's may end sooner).
    pub fn planned(&self) -> usize {
        self.planned
    }

    /// Repetitions still to run counting the one just handed out, for the progress line (cells
    /// that failed have dropped theirs).
    pub fn remaining(&self, results: &[CellResult]) -> usize {
        1 + self
            .queue
            .iter()
            .filter(|s| results[s.cell].status == CellStatus::Ok)
            .count()
    }

    /// Repetitions a cell may run, warm-ups included: all of them, or a target's limit.
    pub fn repetitions(&self) -> u32 {
        self.rules.warmup
            + self
                .rules
                .target()
                .map_or(self.rules.rounds, |t| t.max_rounds)
    }

    /// See [`Rules::per_cell`].
    pub fn per_cell(&self) -> Option<u32> {
        self.rules.per_cell()
    }

    /// See [`Rules::complete`].
    pub fn complete(&self, cell: &CellResult) -> bool {
        self.rules.complete(cell)
    }

    /// Why the benchmark stopped: the target's rule, or why it had no say.
    pub fn reason(&self) -> StopReason {
        if let Some(reason) = &self.stop {
            return reason.clone();
        }
        match self.rules.precision {
            Some(_) if !self.rules.judged => StopReason::Unjudged(
                "at smoke scale windows last milliseconds, which measure scheduler noise: the \
                 target applies at the default and larger scales"
                    .into(),
            ),
            Some(_) => StopReason::Unjudged("no cell could run another round".into()),
            None => StopReason::Fixed,
        }
    }
}

/// The most measured rounds any cell has.
pub fn measured_rounds(results: &[CellResult]) -> u32 {
    results
        .iter()
        .map(|c| c.measured().count() as u32)
        .max()
        .unwrap_or(0)
}

fn slot(rules: &Rules, cell: usize, repetition: u32) -> Slot {
    Slot {
        cell,
        repetition,
        warmup: repetition < rules.warmup,
    }
}

#[cfg(test)]
mod tests;
