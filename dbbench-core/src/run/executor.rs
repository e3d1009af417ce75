//! Carries out a benchmark's schedule (`run::schedule`): runs each repetition it hands out, one at
//! a time under the machine-wide measurement lock, records it in the results and tells the
//! recorder, keeps the progress line, says the precision target's widths after each judged
//! round, and starts nothing new after Ctrl-C or SIGTERM. What runs next and when it stops is
//! the schedule's to decide.

use crate::engine::Backend;
use crate::model::config::Precision;
use crate::model::error::{Error, Result};
use crate::model::plan::DatabasePlan;
use crate::model::results::{CellResult, CellStatus};
use crate::model::scale::Scale;
use crate::run::plan::for_repetition;
use crate::run::recorder::Recorder;
use crate::run::repetition::{run_repetition, Repetition};
use crate::run::schedule::{Rules, Schedule, Slot, Step};
use crate::run::spec::{BenchmarkSpec, CellSpec};
use crate::run::target::Judge;
use crate::util::{machine_lock, progress};
use std::time::Instant;

/// What the executor runs on: the benchmark's cells with their plans (built once, one per cell,
/// in the order of the results), the backend, and the recorder it reports to.
pub(crate) struct Executor<'a> {
    pub bench: &'static BenchmarkSpec,
    pub cells: &'a [&'static CellSpec],
    pub plans: &'a [DatabasePlan],
    pub scale: &'a Scale,
    pub backend: &'a mut Backend,
    pub recorder: &'a mut dyn Recorder,
}

impl Executor<'_> {
    /// Starts every cell with the recorder: a refused cell is finished at once, a running one
    /// takes the repetitions a resumed invocation kept (they are not run again), and is finished
    /// at once when they are all of its fixed ones.
    pub fn resume(&mut self, rules: &Rules, results: &mut [CellResult]) -> Result<()> {
        for cell in results {
            self.recorder.cell_started(cell)?;
            if cell.status != CellStatus::Ok {
                self.recorder.cell_finished(&cell.name, &cell.status)?;
                continue;
            }
            cell.runs = self.recorder.kept(&cell.name)?;
            if rules.complete(cell) {
                self.recorder.cell_finished(&cell.name, &CellStatus::Ok)?;
            }
        }
        Ok(())
    }

    /// Runs `schedule` to its end over `results`; `started` is when the rounds began (a target's
    /// budget counts from it). A signal ends it with [`Error::Interrupted`], saying what was
    /// kept; the cells of a target are finished when it stops.
    pub async fn carry_out(
        &mut self,
        schedule: &mut Schedule,
        results: &mut [CellResult],
        judge: &dyn Judge,
        started: Instant,
    ) -> Result<()> {
        progress::start(&self.bench.test_path(), schedule.planned());
        let interrupted = self.steps(schedule, results, judge, started).await?;
        progress::finished();
        if let Some(signal) = interrupted {
            return Err(Error::Interrupted {
                signal,
                detail: kept(results, schedule.per_cell()),
            });
        }
        if schedule.per_cell().is_none() {
            for cell in results.iter().filter(|c| c.status == CellStatus::Ok) {
                self.recorder.cell_finished(&cell.name, &CellStatus::Ok)?;
            }
        }
        Ok(())
    }

    /// The schedule's steps until it is done (`None`) or a signal stops it (its name).
    async fn steps(
        &mut self,
        schedule: &mut Schedule,
        results: &mut [CellResult],
        judge: &dyn Judge,
        started: Instant,
    ) -> Result<Option<&'static str>> {
        // Sequence numbers go on after those of the repetitions a resume kept.
        let mut sequence = results
            .iter()
            .flat_map(|c| c.runs.iter().map(|r| r.sequence + 1))
            .max()
            .unwrap_or(0);
        loop {
            let slot = match schedule.next(results, started.elapsed(), judge) {
                Step::Run(slot) => slot,
                Step::Fork(fork) => {
                    let begun = Instant::now();
                    self.backend.new_fork(fork)?;
                    schedule.took_fork(begun.elapsed().as_secs_f64());
                    continue;
                }
                Step::Judged {
                    rounds,
                    forks,
                    target,
                    widths,
                    outlook,
                } => {
                    // No cell ran to have an interval (all skipped): nothing to say.
                    if !widths.is_empty() {
                        let line =
                            widths_line(&self.bench.test_path(), rounds, forks, &target, &widths);
                        crate::util::console::say(&line);
                    }
                    if let Some(outlook) = outlook {
                        crate::util::console::say(&outlook.line(&self.bench.test_path()));
                    }
                    continue;
                }
                Step::Done => return Ok(None),
            };
            if let Some(signal) = crate::util::signals::received() {
                return Ok(Some(signal));
            }
            progress::repetition_started(progress::Position {
                cell: self.cells[slot.cell].name,
                index: slot.cell,
                cells: self.cells.len(),
                repetition: slot.repetition,
                repetitions: schedule.repetitions(),
                warmup: slot.warmup,
                remaining: schedule.remaining(results),
            });
            let begun = Instant::now();
            let ran = self.run(slot, sequence, results, schedule).await?;
            sequence += 1;
            match ran {
                Ran::Interrupted(signal) => return Ok(Some(signal)),
                // Its replacement is next in the queue; the budget counts the time all the same
                // (it is wall time), the costs of the design only the window that counts.
                Ran::SetAside => {
                    progress::repetition_finished();
                    continue;
                }
                Ran::Kept => {}
            }
            schedule.took(&slot, begun.elapsed().as_secs_f64());
            if schedule.complete(&results[slot.cell]) {
                let name = self.cells[slot.cell].name;
                self.recorder.cell_finished(name, &CellStatus::Ok)?;
            }
            progress::repetition_finished();
        }
    }

    /// Runs the repetition in `slot` as number `sequence` of the benchmark and records it, or the
    /// cell's failure, in `results` and with the recorder. A signal during it is returned: it is
    /// not the cell's failure (the cell keeps its finished repetitions and stays unfinished).
    async fn run(
        &mut self,
        slot: Slot,
        sequence: u32,
        results: &mut [CellResult],
        schedule: &mut Schedule,
    ) -> Result<Ran> {
        let cell = self.cells[slot.cell];
        let repetition = Repetition {
            bench: self.bench,
            cell,
            plan: for_repetition(&self.plans[slot.cell], self.bench, cell, slot.repetition),
            scale: self.scale,
            number: slot.repetition + 1,
        };
        let waiting = Instant::now();
        let lock = machine_lock::acquire(&format!("{}::{}", self.bench.test_path(), cell.name))?;
        let lock_wait_s = waiting.elapsed().as_secs_f64();
        let outcome = run_repetition(self.backend, repetition).await;
        drop(lock);
        let result = &mut results[slot.cell];
        match outcome {
            Ok((mut run, window)) => {
                if let Some(preparation) = run.start.as_mut().and_then(|s| s.preparation.as_mut()) {
                    preparation.lock_wait_s = lock_wait_s;
                }
                run.index = slot.repetition;
                run.sequence = sequence;
                run.warmup = slot.warmup;
                run.fork = Some(slot.fork);
                run.position = Some(slot.position);
                let disturbed = run.interference.as_ref().filter(|i| i.disturbed());
                if let Some(seen) = disturbed.filter(|_| schedule.remeasure(&slot)) {
                    run.set_aside =
                        Some(format!("measured again: {}", seen.disturbed_by.join("; ")));
                }
                let ran = if run.set_aside.is_some() {
                    Ran::SetAside
                } else {
                    Ran::Kept
                };
                self.recorder.repetition_finished(cell.name, &run, window)?;
                result.runs.push(run);
                Ok(ran)
            }
            Err(Error::Interrupted { signal, .. }) => Ok(Ran::Interrupted(signal)),
            Err(e) => {
                result.status = CellStatus::Failed(e.to_string());
                self.recorder.cell_finished(cell.name, &result.status)?;
                Ok(Ran::Kept)
            }
        }
    }
}

/// What became of one repetition the executor ran.
enum Ran {
    /// Recorded (or the cell's failure recorded): the schedule goes on.
    Kept,
    /// Recorded and set aside: its window was disturbed and it runs again next.
    SetAside,
    /// A signal stopped it: nothing recorded.
    Interrupted(&'static str),
}

/// "vlf::doubling: after fork 4 (8 rounds), intervals test_2 ±7.2%, … (target ±5%)".
fn widths_line(
    benchmark: &str,
    rounds: u32,
    forks: u32,
    target: &Precision,
    widths: &[(String, Option<f64>)],
) -> String {
    let pct = |w: &Option<f64>| match w {
        Some(w) => format!("±{:.1}%", w * 100.0),
        None => "no interval".to_string(),
    };
    let all: Vec<String> = widths
        .iter()
        .map(|(cell, w)| format!("{cell} {}", pct(w)))
        .collect();
    format!(
        "dbbench › {benchmark}: after fork {forks} ({rounds} rounds), intervals {} (target ±{}%)",
        all.join(", "),
        crate::model::units::percent_text(target.target())
    )
}

/// The repetitions of `cell` that count (warm-ups included, set-aside windows not).
fn counted(cell: &CellResult) -> usize {
    cell.runs.iter().filter(|r| r.set_aside.is_none()).count()
}

/// What an interrupted run kept: "kept 2 of 4 repetitions of `a`, 1 of 4 repetitions of `b`"
/// (or "kept 5 repetitions of `a`" where a precision target leaves the count open).
fn kept(results: &[CellResult], per_cell: Option<u32>) -> String {
    let counts: Vec<String> = results
        .iter()
        .filter(|c| c.status == CellStatus::Ok)
        .map(|c| match per_cell {
            Some(n) => format!("{} of {n} repetitions of `{}`", counted(c), c.name),
            None => format!("{} repetitions of `{}`", counted(c), c.name),
        })
        .collect();
    if counts.is_empty() {
        return "no repetition had finished".to_string();
    }
    format!("kept {}", counts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::results::RunResult;
    use std::time::Duration;

    fn cell(name: &str, runs: usize, status: CellStatus) -> CellResult {
        CellResult {
            name: name.into(),
            config: Default::default(),
            effective: Default::default(),
            status,
            runs: vec![RunResult::default(); runs],
            invocation: None,
            calibration: None,
        }
    }

    #[test]
    fn an_interruption_says_what_each_running_cell_kept() {
        let results = [
            cell("a", 2, CellStatus::Ok),
            cell("b", 1, CellStatus::Ok),
            cell("c", 0, CellStatus::Failed("broken".into())),
        ];
        assert_eq!(
            kept(&results, Some(4)),
            "kept 2 of 4 repetitions of `a`, 1 of 4 repetitions of `b`"
        );
        assert_eq!(
            kept(&results, None),
            "kept 2 repetitions of `a`, 1 repetitions of `b`"
        );
        assert_eq!(kept(&results[2..], Some(4)), "no repetition had finished");
    }

    #[test]
    fn the_widths_line_names_every_cell_and_the_target() {
        let target = Precision {
            hundredths_of_percent: 500,
            min_rounds: 3,
            max_rounds: 10,
            budget: Duration::from_secs(60),
            fork_rounds: 2,
        };
        let widths = vec![("b".to_string(), Some(0.072)), ("c".to_string(), None)];
        assert_eq!(
            widths_line("vlf::doubling", 8, 4, &target, &widths),
            "dbbench › vlf::doubling: after fork 4 (8 rounds), intervals b ±7.2%, c no interval \
             (target ±5%)"
        );
    }
}
