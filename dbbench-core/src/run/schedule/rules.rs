//! The run options the schedule follows, as they apply on one backend at one scale: the order,
//! the warm-up, the forks that always run and the precision target, with what they fix before
//! anything runs. Apart from the schedule because they are the given, never the decisions.

use crate::model::config::{BackendKind, Order, Precision, RunSpec};
use crate::model::results::{CellResult, CellStatus};
use crate::model::scale::Scale;

/// The run options the schedule follows, as they apply on one backend at one scale.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rules {
    /// Interleaved or blocked.
    pub order: Order,
    /// Warm-up repetitions of each cell, before its measured ones.
    pub warmup: u32,
    /// The forks that always run: `repeat` (one round each), or a precision target's minimum.
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

    /// The target whose rule decides the forks, if any.
    pub(super) fn target(&self) -> Option<Precision> {
        self.precision.filter(|_| self.judged)
    }

    /// Rounds in each pilot fork: the judged target's `fork_rounds`, else one.
    pub fn pilot_fork_rounds(&self) -> u32 {
        match self.target() {
            Some(t) => t.fork_rounds.max(1),
            None => 1,
        }
    }

    /// The measured rounds of the pilot (or of the fixed design).
    pub(super) fn pilot_rounds(&self) -> u32 {
        self.rounds * self.pilot_fork_rounds()
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
            && self.per_cell().is_some_and(|n| {
                cell.runs.iter().filter(|r| r.set_aside.is_none()).count() == n as usize
            })
    }
}
