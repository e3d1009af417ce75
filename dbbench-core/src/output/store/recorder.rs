//! The store as the runner's [`Recorder`]: each call is one committed write, so what the runner
//! reported is on disk before the next repetition starts.

use super::Store;
use crate::model::error::{Error, Result};
use crate::model::results::{BenchmarkResult, CellResult, CellStatus, RunResult, WindowTimes};
use crate::run::recorder::Recorder;
use rusqlite::params;
use std::collections::BTreeMap;

/// Writes one invocation's runs into a [`Store`].
#[derive(Debug)]
pub struct StoreRecorder<'s> {
    store: &'s Store,
    invocation: i64,
    benchmark_run: Option<i64>,
    cells: BTreeMap<String, i64>,
    /// Continuing an interrupted invocation: its benchmark and cell runs are reused, so the
    /// repetitions measured before and after the interruption are one cell run.
    resuming: bool,
}

impl<'s> StoreRecorder<'s> {
    pub(super) fn new(store: &'s Store, invocation: i64, resuming: bool) -> StoreRecorder<'s> {
        StoreRecorder {
            store,
            invocation,
            benchmark_run: None,
            cells: BTreeMap::new(),
            resuming,
        }
    }

    /// The invocation's newest run of `benchmark`, when resuming.
    fn earlier_benchmark_run(&self, benchmark: &str) -> Result<Option<i64>> {
        if !self.resuming {
            return Ok(None);
        }
        self.store
            .conn
            .query_row(
                "SELECT max(id) FROM benchmark_runs WHERE invocation_id = ?1 AND benchmark = ?2",
                params![self.invocation, benchmark],
                |r| r.get(0),
            )
            .map_err(|e| self.store.fail(e))
    }

    /// The cell run of `cell` in the reused benchmark run, when resuming.
    fn earlier_cell_run(&self, run: i64, cell: &str) -> Result<Option<i64>> {
        if !self.resuming {
            return Ok(None);
        }
        self.store
            .conn
            .query_row(
                "SELECT max(id) FROM cell_runs WHERE benchmark_run_id = ?1 AND cell = ?2",
                params![run, cell],
                |r| r.get(0),
            )
            .map_err(|e| self.store.fail(e))
    }

    fn cell_run(&self, cell: &str) -> Result<i64> {
        self.cells
            .get(cell)
            .copied()
            .ok_or_else(|| Error::msg(format!("the store was not told that cell `{cell}` started")))
    }
}

/// The status column of a cell run and its detail.
/// The detail passes through the scrubber (`util::secret`), as everything the store keeps.
pub(super) fn status_columns(status: &CellStatus) -> (&'static str, Option<String>) {
    let scrub = crate::util::secret::scrub;
    match status {
        CellStatus::Ok => ("ok", None),
        CellStatus::Failed(why) => ("failed", Some(scrub(why))),
        CellStatus::Skipped(why) => ("skipped", Some(scrub(why))),
    }
}

impl Recorder for StoreRecorder<'_> {
    fn earlier(
        &mut self,
        probe: &BenchmarkResult,
    ) -> Result<Vec<crate::model::earlier::EarlierRun>> {
        let key = crate::output::earlier::Key::of(probe);
        crate::output::earlier::earlier_runs(self.store, self.invocation, &key)
    }

    fn calibration(&mut self) -> Result<Option<crate::model::calibration::Calibration>> {
        let mut stmt = self
            .store
            .conn
            .prepare("SELECT header FROM benchmark_runs WHERE invocation_id = ?1 ORDER BY id DESC")
            .map_err(|e| self.store.fail(e))?;
        let headers: Vec<String> = stmt
            .query_map([self.invocation], |r| r.get(0))
            .map_err(|e| self.store.fail(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.store.fail(e))?;
        for header in headers {
            let header: BenchmarkResult = serde_json::from_str(&header)?;
            if header.calibration.is_some() {
                return Ok(header.calibration);
            }
        }
        Ok(None)
    }

    fn benchmark_started(
        &mut self,
        stem: &str,
        header: &BenchmarkResult,
        declared: &[&str],
    ) -> Result<()> {
        if let Some(run) = self.earlier_benchmark_run(&header.benchmark)? {
            self.benchmark_run = Some(run);
            self.cells.clear();
            return Ok(());
        }
        let header_json = crate::util::secret::scrub(&serde_json::to_string(header)?);
        let declared_json = serde_json::to_string(declared)?;
        self.store
            .conn
            .execute(
                "INSERT INTO benchmark_runs (invocation_id, benchmark, stem, header, declared) \
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    self.invocation,
                    header.benchmark,
                    stem,
                    header_json,
                    declared_json
                ],
            )
            .map_err(|e| self.store.fail(e))?;
        self.benchmark_run = Some(self.store.conn.last_insert_rowid());
        self.cells.clear();
        Ok(())
    }

    fn cell_started(&mut self, cell: &CellResult) -> Result<()> {
        let run = self
            .benchmark_run
            .ok_or_else(|| Error::msg("the store was not told that the benchmark started"))?;
        // A cell refused or skipped before running is final at once; others run until told.
        let (status, detail) = match &cell.status {
            CellStatus::Ok => ("running", None),
            other => status_columns(other),
        };
        if let Some(earlier) = self.earlier_cell_run(run, &cell.name)? {
            // A cell that had finished keeps its outcome; an unfinished one runs on.
            self.store
                .conn
                .execute(
                    "UPDATE cell_runs SET status = ?2, detail = ?3 \
                     WHERE id = ?1 AND status = 'running'",
                    params![earlier, status, detail],
                )
                .map_err(|e| self.store.fail(e))?;
            self.cells.insert(cell.name.clone(), earlier);
            return Ok(());
        }
        self.store
            .conn
            .execute(
                "INSERT INTO cell_runs (benchmark_run_id, cell, config, effective, status, detail) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    run,
                    cell.name,
                    serde_json::to_string(&cell.config)?,
                    serde_json::to_string(&cell.effective)?,
                    status,
                    detail
                ],
            )
            .map_err(|e| self.store.fail(e))?;
        self.cells
            .insert(cell.name.clone(), self.store.conn.last_insert_rowid());
        Ok(())
    }

    fn repetition_finished(
        &mut self,
        cell: &str,
        run: &RunResult,
        window: WindowTimes,
    ) -> Result<()> {
        let cell_run = self.cell_run(cell)?;
        self.store
            .conn
            .execute(
                "INSERT INTO repetitions (cell_run_id, repetition, sequence, warmup, \
                 window_start_unix_ns, window_end_unix_ns, run, elapsed_s, set_aside) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                params![
                    cell_run,
                    run.index,
                    run.sequence,
                    run.warmup,
                    window.start_unix_ns as i64,
                    window.end_unix_ns as i64,
                    crate::util::secret::scrub(&serde_json::to_string(run)?),
                    run.elapsed_s,
                    run.set_aside.is_some()
                ],
            )
            .map_err(|e| self.store.fail(e))?;
        Ok(())
    }

    fn kept(&mut self, cell: &str) -> Result<Vec<RunResult>> {
        if !self.resuming {
            return Ok(Vec::new());
        }
        let cell_run = self.cell_run(cell)?;
        let mut stmt = self
            .store
            .conn
            .prepare("SELECT run FROM repetitions WHERE cell_run_id = ?1 ORDER BY sequence")
            .map_err(|e| self.store.fail(e))?;
        let texts: Vec<String> = stmt
            .query_map([cell_run], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.store.fail(e))?;
        texts
            .iter()
            .map(|t| serde_json::from_str(t).map_err(Error::from))
            .collect()
    }

    fn cell_finished(&mut self, cell: &str, status: &CellStatus) -> Result<()> {
        let cell_run = self.cell_run(cell)?;
        let (status, detail) = status_columns(status);
        self.store
            .conn
            .execute(
                "UPDATE cell_runs SET status = ?2, detail = ?3 WHERE id = ?1",
                params![cell_run, status, detail],
            )
            .map_err(|e| self.store.fail(e))?;
        Ok(())
    }

    fn benchmark_finished(&mut self, stopping: &crate::model::results::Stopping) -> Result<()> {
        let run = self
            .benchmark_run
            .ok_or_else(|| Error::msg("the store was not told that the benchmark started"))?;
        // The header was written before the first round; why the rounds stopped is known now.
        // A resumed benchmark run's header gets the resumed run's reason.
        let stopping = serde_json::to_string(stopping)?;
        self.store
            .conn
            .execute(
                "UPDATE benchmark_runs SET header = json_set(header, '$.stopping', json(?2)) \
                 WHERE id = ?1",
                params![run, stopping],
            )
            .map_err(|e| self.store.fail(e))?;
        Ok(())
    }
}
