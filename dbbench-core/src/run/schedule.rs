//! The schedule of a benchmark's repetitions: which cell runs which repetition, in which fork and
//! in what order, what a resumed invocation skips, when a precision target adds a fork, and why
//! the benchmark stopped. It only decides: the executor (`run::executor`) runs what it hands out,
//! starts each fork on a fresh work area, records the results and tells the schedule what each
//! repetition cost; the schedule reads the results back to decide the next step, so unit tests
//! drive it with recorded results and timings, with no engine.
//!
//! **Forks** (Kalibera & Jones, *Rigorous Benchmarking in Reasonable Time*, 2013): interleaved
//! rounds are grouped into forks, each started on a fresh work area (`Step::Fork`: the backend
//! drops what it kept — pre-grown logs, the fixture's copy, a managed cluster), so that what one
//! invocation shares (where its files landed, the kept log) is drawn anew in every fork and the
//! interval over the forks' means covers it (`analysis::ratio`). With a fixed `repeat` every
//! round is a fork of its own. A judged precision target runs `min_repeat` pilot forks of
//! `fork_rounds` rounds (two unless the benchmark says otherwise), then forks of the rounds Kalibera and Jones's allocation gives
//! ([`Design`]), judging after each fork.
//!
//! **Order**: in each round the cells run in the order of a Williams design (`run::williams`),
//! balanced for first-order carry-over; blocked order runs every repetition of a cell before the
//! next cell, in one fork. Warm-ups come first, in the first fork.

use crate::model::config::{Order, Precision};
use crate::model::results::{CellResult, CellStatus, Design, StopReason};
use crate::run::cost::Costs;
use crate::run::outlook::Outlook;
use crate::run::target::{decide, Decision, Judge};
use crate::run::williams::williams;
use std::collections::VecDeque;
use std::time::Duration;

mod rules;

pub use rules::Rules;

/// The most rounds a fork gets from the allocation: beyond four, a fork's setup is cheap against
/// its rounds and more forks buy more than more rounds would.
pub const MAX_FORK_ROUNDS: u32 = dbbench_options::defaults::MAX_FORK_ROUNDS;

/// The most times a repetition is measured again after the busy-machine guard found its window
/// disturbed: four, five windows in all. A neighbour's bursts (a shell command, an IDE's indexer,
/// a periodic job) disturb windows independently; where they disturb a fifth of all windows, five
/// in a row happen to one repetition in 0.03% of cases, so a suite of 80 repetitions is voided in
/// about 2.5% of runs rather than in nearly every one (with two, 47%); on average a repetition
/// costs a quarter of a window more. A neighbour that stays, or wakes whenever one cell runs, is
/// not waited out: the fifth disturbed window is kept and makes the verdict "inconclusive: the
/// machine was busy". The budget counts every window (`analysis::simulation::remeasure`).
pub const MAX_REMEASURES: u32 = 4;

/// One repetition to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// The cell, by its index in the results.
    pub cell: usize,
    /// The repetition of the cell, from 0, warm-ups first.
    pub repetition: u32,
    /// A warm-up, excluded from statistics.
    pub warmup: bool,
    /// The fork it runs in, from 0.
    pub fork: u32,
    /// Its position in its round, from 0.
    pub position: u32,
    /// Whether it is in its fork's first round (what a fork's setup costs shows there).
    pub first_in_fork: bool,
}

/// What the executor does next.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Start fork `n`: have the backend drop what it kept, so the fork starts afresh.
    Fork(u32),
    /// Run this repetition, then record it (or the cell's failure) in the results.
    Run(Slot),
    /// `rounds` rounds in `forks` forks are done and the target's rule judged them with these
    /// widths (the executor says them); ask again for what follows.
    Judged {
        /// The measured rounds judged.
        rounds: u32,
        /// The forks they ran in.
        forks: u32,
        /// The target they were judged against.
        target: Precision,
        /// Each compared cell's interval half-width, as [`Judge::widths`] gave them.
        widths: Vec<(String, Option<f64>)>,
        /// After the pilot (once): what the target can still reach, and at what cost.
        outlook: Option<Outlook>,
    },
    /// Nothing more runs; [`Schedule::reason`] says why.
    Done,
}

/// The repetitions still to run and the forks so far; see the module's documentation.
#[derive(Debug)]
pub struct Schedule {
    rules: Rules,
    baseline: String,
    cells: usize,
    /// The fork of every measured round queued so far, by round.
    round_fork: Vec<u32>,
    /// Rounds in each fork still to be queued.
    fork_rounds: u32,
    queue: VecDeque<Slot>,
    /// The fork the executor was last told to start.
    started: Option<u32>,
    costs: Costs,
    design: Option<Design>,
    planned: usize,
    /// How often each `(cell, repetition)` was measured again.
    remeasured: std::collections::BTreeMap<(usize, u32), u32>,
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
        let pilot = rules.pilot_rounds();
        let rounds = match rules.target() {
            Some(_) => measured_rounds(results).max(pilot),
            None => pilot,
        };
        let per_fork = rules.pilot_fork_rounds();
        // A round kept by a resumed invocation stays in its fork; the others follow the pilot.
        let round_fork: Vec<u32> = (0..rounds)
            .map(|r| kept_fork(results, rules.warmup + r).unwrap_or(r / per_fork))
            .collect();
        let cells = results.len();
        let mut schedule = Schedule {
            rules,
            baseline: baseline.to_string(),
            cells,
            round_fork,
            fork_rounds: per_fork,
            queue: VecDeque::new(),
            started: None,
            costs: Costs::default(),
            design: None,
            planned: 0,
            remeasured: Default::default(),
            stop: None,
            done: false,
        };
        let order = schedule.order(0..rounds);
        schedule.queue = order
            .into_iter()
            .filter(|s| {
                !results[s.cell]
                    .runs
                    .iter()
                    .any(|r| r.index == s.repetition && r.set_aside.is_none())
            })
            .collect();
        // The progress line's total: what is queued, and the forks a target may still add (of
        // the pilot's rounds: the allocation may make them longer).
        schedule.planned = match rules.target() {
            Some(t) => {
                let forks = t.max_rounds.saturating_sub(schedule.forks());
                schedule.queue.len() + (forks * per_fork) as usize * cells
            }
            None => schedule.queue.len(),
        };
        schedule
    }

    /// The slots of the warm-ups (before round 0) and of `rounds`, in order.
    fn order(&self, rounds: std::ops::Range<u32>) -> Vec<Slot> {
        let warmup = self.rules.warmup;
        let cells = self.cells;
        match self.rules.order {
            Order::Interleaved => {
                let sequences = williams(cells);
                let warmups = if rounds.start == 0 { 0..warmup } else { 0..0 };
                let mut slots = Vec::new();
                for rep in warmups {
                    slots.extend(self.round(&sequences[0], rep, 0, false));
                }
                for r in rounds {
                    let fork = self.round_fork[r as usize];
                    let first = r == 0 || self.round_fork[r as usize - 1] != fork;
                    let sequence = &sequences[r as usize % sequences.len()];
                    slots.extend(self.round(sequence, warmup + r, fork, first));
                }
                slots
            }
            Order::Blocked => (0..cells)
                .flat_map(|c| {
                    (0..warmup + rounds.end).map(move |rep| Slot {
                        cell: c,
                        repetition: rep,
                        warmup: rep < warmup,
                        fork: 0,
                        position: 0,
                        first_in_fork: false,
                    })
                })
                .collect(),
        }
    }

    /// One round's slots: `sequence` gives the cells' order.
    fn round(&self, sequence: &[usize], repetition: u32, fork: u32, first: bool) -> Vec<Slot> {
        sequence
            .iter()
            .enumerate()
            .map(|(position, &cell)| Slot {
                cell,
                repetition,
                warmup: repetition < self.rules.warmup,
                fork,
                position: position as u32,
                first_in_fork: first,
            })
            .collect()
    }

    /// Forks queued so far.
    fn forks(&self) -> u32 {
        self.round_fork.last().map_or(0, |f| f + 1)
    }

    /// The next step, from the results so far. `elapsed` is the time since the first repetition
    /// started (the target's budget counts it); `judge` gives the widths the target's rule needs.
    /// A cell that failed drops its remaining repetitions.
    pub fn next(&mut self, results: &[CellResult], elapsed: Duration, judge: &dyn Judge) -> Step {
        while !self.done {
            match self.queue.front().copied() {
                Some(slot) if results[slot.cell].status == CellStatus::Ok => {
                    if self.started != Some(slot.fork) {
                        self.started = Some(slot.fork);
                        return Step::Fork(slot.fork);
                    }
                    self.queue.pop_front();
                    return Step::Run(slot);
                }
                Some(_) => {
                    self.queue.pop_front();
                }
                None => return self.judge(results, elapsed, judge),
            }
        }
        Step::Done
    }

    /// What `slot` took, in seconds from the lock to its teardown's end: the rounds'
    /// and the forks' costs that the allocation and the budget use.
    pub fn took(&mut self, slot: &Slot, seconds: f64) {
        if !slot.warmup {
            self.costs
                .repetition(slot.cell, slot.first_in_fork, seconds);
        }
    }

    /// `slot`'s window was disturbed: its repetition runs again next, in its place (the same
    /// fork, the same position in its round, so pairing and the balanced order hold), unless it
    /// was measured again [`MAX_REMEASURES`] times already. Returns whether it runs again; the
    /// executor then sets the disturbed window aside. A warm-up is never measured again (it
    /// counts for nothing).
    pub fn remeasure(&mut self, slot: &Slot) -> bool {
        if slot.warmup {
            return false;
        }
        let times = self
            .remeasured
            .entry((slot.cell, slot.repetition))
            .or_default();
        if *times >= MAX_REMEASURES {
            return false;
        }
        *times += 1;
        self.queue.push_front(*slot);
        self.planned += 1;
        true
    }

    /// What starting a fork took, in seconds.
    pub fn took_fork(&mut self, seconds: f64) {
        self.costs.fork(seconds);
    }

    /// The last fork is done: a precision target decides whether another runs; without one the
    /// schedule is done.
    fn judge(&mut self, results: &[CellResult], elapsed: Duration, judge: &dyn Judge) -> Step {
        let Some(target) = self.rules.target() else {
            self.done = true;
            return Step::Done;
        };
        let pilot = self.rules.rounds as usize;
        let widths = judge.widths(results, &self.baseline, self.paired(), pilot);
        let rounds = self.round_fork.len() as u32;
        let forks = self.forks();
        let mut outlook = None;
        if self.design.is_none() {
            self.design = Some(self.allocate(results, judge, &widths));
            let fork_s = self.costs.fork_s(self.fork_rounds, elapsed, forks);
            outlook = crate::run::target::widest(&widths)
                .filter(|w| w.1.is_finite())
                .map(|(cell, width)| Outlook {
                    cell,
                    width,
                    forks,
                    elapsed_s: elapsed.as_secs_f64(),
                    fork_s,
                    target,
                });
        }
        let next_fork_s = self.costs.fork_s(self.fork_rounds, elapsed, forks);
        match decide(&target, forks, elapsed, &widths, next_fork_s) {
            Decision::Continue => {
                let fork = forks;
                let start = rounds;
                self.round_fork
                    .extend(std::iter::repeat_n(fork, self.fork_rounds as usize));
                let slots = self.order(start..start + self.fork_rounds);
                self.queue.extend(
                    slots
                        .into_iter()
                        .filter(|s| results[s.cell].status == CellStatus::Ok),
                );
                // No cell left to run the fork: done, without a reason of the rule's.
                self.done = self.queue.is_empty();
            }
            Decision::Stop(reason) => {
                self.stop = Some(reason);
                self.done = true;
            }
        }
        Step::Judged {
            rounds,
            forks,
            target,
            widths,
            outlook,
        }
    }

    /// Kalibera and Jones's allocation after the pilot: the rounds per fork that give the
    /// narrowest interval for the time, from the measured costs of a round and of a fork's setup
    /// and the variance components of the widest ratio.
    fn allocate(
        &mut self,
        results: &[CellResult],
        judge: &dyn Judge,
        widths: &[(String, Option<f64>)],
    ) -> Design {
        let pilot = self.rules.rounds as usize;
        let components = judge.components(results, &self.baseline, pilot);
        let widest = crate::run::target::widest(widths).map(|w| w.0);
        let chosen = widest
            .as_ref()
            .and_then(|w| components.iter().find(|c| &c.0 == w))
            .or(components.first());
        let design = Design::allocate(
            self.costs.round_s(),
            self.costs.setup_s(),
            chosen.map(|c| (c.0.clone(), c.1, c.2)),
            self.rules.pilot_fork_rounds(),
            MAX_FORK_ROUNDS,
        );
        self.fork_rounds = design.rounds_per_fork;
        design
    }

    /// Each compared cell's interval half-width for `results`, as the target's rule sees them.
    pub fn widths(&self, results: &[CellResult], judge: &dyn Judge) -> Vec<(String, Option<f64>)> {
        judge.widths(
            results,
            &self.baseline,
            self.paired(),
            self.rules.rounds as usize,
        )
    }

    /// Rounds pair when the order interleaves them.
    fn paired(&self) -> bool {
        self.rules.order == Order::Interleaved
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
            + self.rules.target().map_or(self.rules.rounds, |t| {
                self.rules.pilot_rounds()
                    + t.max_rounds.saturating_sub(self.rules.rounds) * self.fork_rounds
            })
    }

    /// See [`Rules::per_cell`].
    pub fn per_cell(&self) -> Option<u32> {
        self.rules.per_cell()
    }

    /// See [`Rules::complete`].
    pub fn complete(&self, cell: &CellResult) -> bool {
        self.rules.complete(cell)
    }

    /// The design the target's allocation chose, with the costs and components it rests on;
    /// `None` without a judged target.
    pub fn design(&self) -> Option<Design> {
        self.design.clone().map(|d| Design {
            forks: self.forks(),
            rounds: self.round_fork.len() as u32,
            ..d
        })
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

/// The fork a resumed invocation recorded for repetition `index`, if any cell kept it.
fn kept_fork(results: &[CellResult], index: u32) -> Option<u32> {
    results
        .iter()
        .flat_map(|c| c.runs.iter())
        .find(|r| r.index == index)
        .and_then(|r| r.fork)
}

#[cfg(test)]
mod tests;
