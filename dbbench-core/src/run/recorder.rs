//! What the runner tells whoever keeps its results, as it goes: the benchmark's header, each
//! cell's start, each repetition as soon as it finishes (with when its window was open) and each
//! cell's outcome. The results store implements it, so a repetition, once measured, is kept even
//! if the run stops later; the runner itself writes nothing. When an interrupted invocation is
//! resumed, the recorder also tells the runner which repetitions it kept ([`Recorder::kept`]), so
//! only the missing ones run.

use crate::model::calibration::Calibration;
use crate::model::earlier::EarlierRun;
use crate::model::error::Result;
use crate::model::results::{
    BenchmarkResult, CellResult, CellStatus, RunResult, Stopping, WindowTimes,
};

/// Receives a run's results while it runs. An error stops the benchmark: a result that cannot be
/// kept is not worth measuring.
pub trait Recorder {
    /// The benchmark starts: its file stem (`dbbench_suites.vlf.doubling`), its header (`cells`
    /// empty) and every cell it declares.
    fn benchmark_started(
        &mut self,
        stem: &str,
        header: &BenchmarkResult,
        declared: &[&str],
    ) -> Result<()>;

    /// A selected cell is about to run (or was skipped or refused before running: see its
    /// status).
    fn cell_started(&mut self, cell: &CellResult) -> Result<()>;

    /// One repetition of `cell` finished and was measured.
    fn repetition_finished(
        &mut self,
        cell: &str,
        run: &RunResult,
        window: WindowTimes,
    ) -> Result<()>;

    /// `cell` has no more repetitions to run; this is its outcome.
    fn cell_finished(&mut self, cell: &str, status: &CellStatus) -> Result<()>;

    /// The benchmark ran every round it will: how many, and why no more. Required, so that a
    /// recorder that wraps another passes it on (the results would otherwise not say why the
    /// benchmark stopped).
    fn benchmark_finished(&mut self, stopping: &Stopping) -> Result<()>;

    /// The repetitions of `cell` already measured and kept for this run (asked after
    /// [`Recorder::cell_started`]): a resumed invocation's finished repetitions, which the
    /// runner does not run again. None for a new run. Required, so a recorder that wraps another
    /// cannot forget to pass it on (a resume would then run everything again).
    fn kept(&mut self, cell: &str) -> Result<Vec<RunResult>>;

    /// The calibration an earlier benchmark of this invocation took (asked before
    /// [`Recorder::benchmark_started`]), so that the processes of one invocation (nextest runs
    /// each cell in its own) calibrate once. None when there is none yet. Required for the same
    /// reason as [`Recorder::kept`].
    fn calibration(&mut self) -> Result<Option<Calibration>>;

    /// The earlier runs of the same experiment as `probe` (the header, with its cells as
    /// admitted and its calibration) that the store holds for this host, newest first: what the
    /// precision target's rule and the tables pool the forks' interval with
    /// (`analysis::drift`). None without a store. Required for the same reason as
    /// [`Recorder::kept`].
    fn earlier(&mut self, probe: &BenchmarkResult) -> Result<Vec<EarlierRun>>;
}

/// A recorder that keeps nothing, for runs whose caller only wants the returned results.
#[derive(Debug, Default)]
pub struct NoRecorder;

impl Recorder for NoRecorder {
    fn benchmark_started(&mut self, _: &str, _: &BenchmarkResult, _: &[&str]) -> Result<()> {
        Ok(())
    }

    fn cell_started(&mut self, _: &CellResult) -> Result<()> {
        Ok(())
    }

    fn repetition_finished(&mut self, _: &str, _: &RunResult, _: WindowTimes) -> Result<()> {
        Ok(())
    }

    fn cell_finished(&mut self, _: &str, _: &CellStatus) -> Result<()> {
        Ok(())
    }

    fn benchmark_finished(&mut self, _: &Stopping) -> Result<()> {
        Ok(())
    }

    fn kept(&mut self, _: &str) -> Result<Vec<RunResult>> {
        Ok(Vec::new())
    }

    fn calibration(&mut self) -> Result<Option<Calibration>> {
        Ok(None)
    }

    fn earlier(&mut self, _: &BenchmarkResult) -> Result<Vec<EarlierRun>> {
        Ok(Vec::new())
    }
}
