//! Views of the store: a benchmark's current results, the results of one invocation (a saved
//! baseline), and the history of invocations.
//!
//! The **current results** of a benchmark on a host are, per cell it declares, the newest
//! completed cell run on that host, backend and scale (the backend and scale of the host's newest
//! run of the benchmark). A partial run so refreshes only the cells it ran. A cell whose newest run
//! failed is shown as failed, with the runs of its last good result kept beside the error.

use super::Store;
use crate::model::error::Result;
use crate::model::results::{BenchmarkResult, CellResult, CellStatus, RunResult};
use rusqlite::{params, OptionalExtension};
use std::collections::BTreeMap;

/// One benchmark the store holds results for, on one host.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct StoredBenchmark {
    /// Its path (`vlf::doubling`).
    pub benchmark: String,
    /// Its file stem (`dbbench_suites.vlf.doubling`).
    pub stem: String,
    /// The host that ran it.
    pub host: String,
}

/// One invocation, as `history` lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct InvocationRow {
    /// Its id.
    pub id: i64,
    /// When it started, ms since the Unix epoch.
    pub started_at_unix_ms: i64,
    /// When it (or its last process) ended.
    pub ended_at_unix_ms: Option<i64>,
    /// `running`, `completed`, `failed` or `interrupted`.
    pub status: String,
    /// Why it failed, if it says.
    pub detail: Option<String>,
    /// Where it ran.
    pub host: String,
    /// On which backend.
    pub backend: String,
    /// At which scale.
    pub scale: String,
    /// The command.
    pub command_line: String,
    /// The git commit of the benchmarks' source.
    pub git_commit: Option<String>,
    /// The baseline name it is saved as.
    pub baseline: Option<String>,
    /// The store it was merged from.
    pub origin: Option<String>,
    /// Repetitions it kept.
    pub repetitions: i64,
}

/// A cell run as [`Store::cell_runs`] reads it.
type CellRunRow = (
    i64,
    String,
    String,
    String,
    Option<String>,
    i64,
    Option<String>,
);

/// Which cell runs a view draws from.
enum Scope<'a> {
    /// Runs on this host, backend and scale.
    Current {
        host: &'a str,
        backend: &'a str,
        scale: &'a str,
    },
    /// Runs of this invocation.
    Invocation(i64),
}

impl Store {
    /// Every benchmark with results, per host, sorted.
    pub fn benchmarks(&self) -> Result<Vec<StoredBenchmark>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT DISTINCT br.benchmark, br.stem, i.host FROM benchmark_runs br \
                 JOIN invocations i ON i.id = br.invocation_id ORDER BY 1, 3",
            )
            .map_err(|e| self.fail(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(StoredBenchmark {
                    benchmark: r.get(0)?,
                    stem: r.get(1)?,
                    host: r.get(2)?,
                })
            })
            .map_err(|e| self.fail(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.fail(e))
    }

    /// The current results of `benchmark` on `host`, or `None` when it never ran there.
    pub fn current(&self, benchmark: &str, host: &str) -> Result<Option<BenchmarkResult>> {
        let newest: Option<(String, String, String, String)> = self
            .conn
            .query_row(
                "SELECT br.header, br.declared, i.backend, i.scale FROM benchmark_runs br \
                 JOIN invocations i ON i.id = br.invocation_id \
                 WHERE br.benchmark = ?1 AND i.host = ?2 ORDER BY br.id DESC LIMIT 1",
                params![benchmark, host],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()
            .map_err(|e| self.fail(e))?;
        let Some((header, declared, backend, scale)) = newest else {
            return Ok(None);
        };
        let scope = Scope::Current {
            host,
            backend: &backend,
            scale: &scale,
        };
        self.assemble(benchmark, &header, &declared, scope)
            .map(Some)
    }

    /// The results of `benchmark` in invocation `invocation` (every process of it), or `None`
    /// when it did not run the benchmark.
    pub fn of_invocation(
        &self,
        invocation: i64,
        benchmark: &str,
    ) -> Result<Option<BenchmarkResult>> {
        let newest: Option<(String, String)> = self
            .conn
            .query_row(
                "SELECT header, declared FROM benchmark_runs \
                 WHERE benchmark = ?1 AND invocation_id = ?2 ORDER BY id DESC LIMIT 1",
                params![benchmark, invocation],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(|e| self.fail(e))?;
        match newest {
            Some((header, declared)) => self
                .assemble(benchmark, &header, &declared, Scope::Invocation(invocation))
                .map(Some),
            None => Ok(None),
        }
    }

    /// The names of the benchmarks invocation `invocation` ran.
    pub fn benchmarks_of(&self, invocation: i64) -> Result<Vec<String>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT DISTINCT benchmark FROM benchmark_runs WHERE invocation_id = ?1 ORDER BY 1",
            )
            .map_err(|e| self.fail(e))?;
        let rows = stmt
            .query_map([invocation], |r| r.get(0))
            .map_err(|e| self.fail(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.fail(e))
    }

    /// Every invocation, oldest first.
    pub fn history(&self) -> Result<Vec<InvocationRow>> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT i.id, i.started_at_unix_ms, i.ended_at_unix_ms, i.status, i.detail, i.host, \
                 i.backend, i.scale, i.command_line, i.git_commit, i.baseline, i.origin, \
                 (SELECT count(*) FROM repetitions r JOIN cell_runs c ON c.id = r.cell_run_id \
                  JOIN benchmark_runs b ON b.id = c.benchmark_run_id WHERE b.invocation_id = i.id) \
                 FROM invocations i ORDER BY i.id",
            )
            .map_err(|e| self.fail(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok(InvocationRow {
                    id: r.get(0)?,
                    started_at_unix_ms: r.get(1)?,
                    ended_at_unix_ms: r.get(2)?,
                    status: r.get(3)?,
                    detail: r.get(4)?,
                    host: r.get(5)?,
                    backend: r.get(6)?,
                    scale: r.get(7)?,
                    command_line: r.get(8)?,
                    git_commit: r.get(9)?,
                    baseline: r.get(10)?,
                    origin: r.get(11)?,
                    repetitions: r.get(12)?,
                })
            })
            .map_err(|e| self.fail(e))?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(|e| self.fail(e))
    }

    /// The header with the cells of `scope`, in the declared order.
    fn assemble(
        &self,
        benchmark: &str,
        header: &str,
        declared: &str,
        scope: Scope<'_>,
    ) -> Result<BenchmarkResult> {
        let mut result: BenchmarkResult = serde_json::from_str(header)?;
        let declared: Vec<String> = serde_json::from_str(declared)?;
        result.cells = Vec::new();
        for cell in &declared {
            if let Some(found) = self.cell(benchmark, cell, &scope)? {
                result.cells.push(found);
            }
        }
        Ok(result)
    }

    /// The measured (not warm-up) elapsed times of `cell` of `benchmark` in invocation
    /// `invocation`, from the cell run [`Store::of_invocation`] would show; `None` when it has
    /// none. Read straight from the store, without decoding whole repetitions: the report's
    /// history asks this of every invocation, and decoding them all made every report slower
    /// than the last (0.3 s per benchmark with 30 stored invocations).
    pub fn elapsed_in(
        &self,
        invocation: i64,
        benchmark: &str,
        cell: &str,
    ) -> Result<Option<Vec<f64>>> {
        let rows = self.cell_runs(benchmark, cell, &Scope::Invocation(invocation))?;
        let Some(chosen) = rows.iter().find(|r| r.3 != "failed") else {
            return Ok(None);
        };
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT elapsed_s FROM repetitions \
                 WHERE cell_run_id = ?1 AND NOT warmup AND NOT set_aside ORDER BY id",
            )
            .map_err(|e| self.fail(e))?;
        let elapsed = stmt
            .query_map([chosen.0], |r| r.get::<_, f64>(0))
            .map_err(|e| self.fail(e))?
            .collect::<rusqlite::Result<Vec<f64>>>()
            .map_err(|e| self.fail(e))?;
        Ok(Some(elapsed))
    }

    /// The cell's newest completed run in `scope`, marked failed when a newer run failed.
    fn cell(&self, benchmark: &str, cell: &str, scope: &Scope<'_>) -> Result<Option<CellResult>> {
        let rows = self.cell_runs(benchmark, cell, scope)?;
        let newer_failure = rows
            .iter()
            .take_while(|r| r.3 == "failed")
            .map(|r| (r.4.clone().unwrap_or_default(), r.5))
            .next();
        let good = rows.iter().find(|r| r.3 != "failed");
        let Some(chosen) = good.or(rows.first()) else {
            return Ok(None);
        };
        let (id, config, effective, status, detail, invocation, calibration) = chosen;
        let config: BTreeMap<String, String> = serde_json::from_str(config)?;
        let effective: BTreeMap<String, u64> = serde_json::from_str(effective)?;
        let status = match (status.as_str(), &newer_failure, good.is_some()) {
            (_, Some((why, failed_in)), true) => CellStatus::Failed(format!(
                "{why} (in invocation {failed_in}; the runs shown are the last good ones, from \
                 invocation {invocation})"
            )),
            ("failed", ..) => CellStatus::Failed(detail.clone().unwrap_or_default()),
            ("skipped", ..) => CellStatus::Skipped(detail.clone().unwrap_or_default()),
            _ => CellStatus::Ok,
        };
        let runs = if good.is_some() {
            self.runs(*id)?
        } else {
            Vec::new()
        };
        Ok(Some(CellResult {
            name: cell.to_string(),
            config,
            effective,
            status,
            runs,
            invocation: Some(*invocation),
            // The calibration of the benchmark run the chosen cell run belongs to.
            calibration: calibration
                .as_deref()
                .map(serde_json::from_str)
                .transpose()?,
        }))
    }

    /// The runs of `cell` in `scope`, newest first: (id, config, effective, status, detail,
    /// invocation, the benchmark run's calibration).
    fn cell_runs(&self, benchmark: &str, cell: &str, scope: &Scope<'_>) -> Result<Vec<CellRunRow>> {
        let base = "SELECT c.id, c.config, c.effective, c.status, c.detail, i.id, \
                    json_extract(b.header, '$.calibration') \
                    FROM cell_runs c JOIN benchmark_runs b ON b.id = c.benchmark_run_id \
                    JOIN invocations i ON i.id = b.invocation_id \
                    WHERE b.benchmark = ?1 AND c.cell = ?2 AND c.status IN ('ok', 'skipped', 'failed')";
        let map = |r: &rusqlite::Row<'_>| -> rusqlite::Result<CellRunRow> {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ))
        };
        let rows: Vec<CellRunRow> = match scope {
            Scope::Current {
                host,
                backend,
                scale,
            } => {
                let sql = format!(
                    "{base} AND i.host = ?3 AND i.backend = ?4 AND i.scale = ?5 ORDER BY c.id DESC"
                );
                let mut stmt = self.conn.prepare(&sql).map_err(|e| self.fail(e))?;
                let rows = stmt
                    .query_map(params![benchmark, cell, host, backend, scale], map)
                    .map_err(|e| self.fail(e))?
                    .collect::<rusqlite::Result<_>>();
                rows.map_err(|e| self.fail(e))?
            }
            Scope::Invocation(id) => {
                let sql = format!("{base} AND i.id = ?3 ORDER BY c.id DESC");
                let mut stmt = self.conn.prepare(&sql).map_err(|e| self.fail(e))?;
                let rows = stmt
                    .query_map(params![benchmark, cell, id], map)
                    .map_err(|e| self.fail(e))?
                    .collect::<rusqlite::Result<_>>();
                rows.map_err(|e| self.fail(e))?
            }
        };
        Ok(rows)
    }

    fn runs(&self, cell_run: i64) -> Result<Vec<RunResult>> {
        let mut stmt = self
            .conn
            .prepare("SELECT run FROM repetitions WHERE cell_run_id = ?1 ORDER BY id")
            .map_err(|e| self.fail(e))?;
        let texts: Vec<String> = stmt
            .query_map([cell_run], |r| r.get(0))
            .map_err(|e| self.fail(e))?
            .collect::<rusqlite::Result<_>>()
            .map_err(|e| self.fail(e))?;
        texts
            .iter()
            .map(|t| serde_json::from_str(t).map_err(Into::into))
            .collect()
    }
}
