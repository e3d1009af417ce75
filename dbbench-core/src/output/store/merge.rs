//! Merging stores: the pieces of a sweep split over machines (or nextest partitions) brought
//! back into one store. Each invocation keeps its own id across stores (`uid`), so merging the
//! same store twice adds nothing; hosts stay apart because every view is per host.

use super::Store;
use crate::model::error::{Error, Result};
use rusqlite::{params, Connection, OptionalExtension};
use std::collections::BTreeMap;
use std::path::Path;

/// What a merge added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Merged {
    /// Invocations added.
    pub invocations: usize,
    /// Invocations that were already in the store.
    pub already_present: usize,
    /// Repetitions added.
    pub repetitions: usize,
}

impl Store {
    /// Imports every invocation of the store at `other` that this one does not hold yet, in one
    /// transaction.
    pub fn merge(&mut self, other: &Path) -> Result<Merged> {
        if !other.is_file() {
            return Err(Error::Config(format!(
                "`{}` is not a results store (a `results.sqlite` file)",
                other.display()
            )));
        }
        // Opening migrates a store, so stores of older versions merge: a copy is opened, and
        // the other store's file is left as it was.
        let copy = Scratch::of(other)?;
        let source = Store::open_file(&copy.file)?;
        let origin = other.display().to_string();
        let path = self.path.clone();
        let fail = |e: rusqlite::Error| {
            Error::msg(format!("merging `{origin}` into `{}`: {e}", path.display()))
        };
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(fail)?;
        let mut merged = Merged::default();
        let invocations = read_invocations(&source.conn).map_err(fail)?;
        for (old_id, columns) in invocations {
            let present: Option<i64> = tx
                .query_row(
                    "SELECT id FROM invocations WHERE uid = ?1",
                    [&columns.uid],
                    |r| r.get(0),
                )
                .optional()
                .map_err(fail)?;
            if present.is_some() {
                merged.already_present += 1;
                continue;
            }
            tx.execute(
                "INSERT INTO invocations (uid, run_key, started_at_unix_ms, ended_at_unix_ms, \
                 command_line, git_commit, host, backend, scale, status, detail, baseline, origin) \
                 VALUES (?1, NULL, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, NULL, ?11)",
                params![
                    columns.uid,
                    columns.started,
                    columns.ended,
                    columns.command_line,
                    columns.git_commit,
                    crate::util::paths::file_safe(&columns.host),
                    columns.backend,
                    columns.scale,
                    columns.status,
                    columns.detail,
                    columns.origin.clone().unwrap_or_else(|| origin.clone()),
                ],
            )
            .map_err(fail)?;
            let new_id = tx.last_insert_rowid();
            merged.invocations += 1;
            merged.repetitions += copy_runs(&source.conn, &tx, old_id, new_id).map_err(fail)?;
        }
        tx.commit().map_err(fail)?;
        Ok(merged)
    }
}

struct InvocationColumns {
    uid: String,
    started: i64,
    ended: Option<i64>,
    command_line: String,
    git_commit: Option<String>,
    host: String,
    backend: String,
    scale: String,
    status: String,
    detail: Option<String>,
    origin: Option<String>,
}

fn read_invocations(conn: &Connection) -> rusqlite::Result<Vec<(i64, InvocationColumns)>> {
    let mut stmt = conn.prepare(
        "SELECT id, uid, started_at_unix_ms, ended_at_unix_ms, command_line, git_commit, host, \
         backend, scale, status, detail, origin FROM invocations ORDER BY id",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get(0)?,
            InvocationColumns {
                uid: r.get(1)?,
                started: r.get(2)?,
                ended: r.get(3)?,
                command_line: r.get(4)?,
                git_commit: r.get(5)?,
                host: r.get(6)?,
                backend: r.get(7)?,
                scale: r.get(8)?,
                status: r.get(9)?,
                detail: r.get(10)?,
                origin: r.get(11)?,
            },
        ))
    })?;
    rows.collect()
}

/// A copy of a store (its file and write-ahead log) in a private directory of its own, removed
/// when dropped.
struct Scratch {
    dir: std::path::PathBuf,
    file: std::path::PathBuf,
}

impl Scratch {
    fn of(store: &Path) -> Result<Scratch> {
        use std::os::unix::fs::DirBuilderExt;
        let dir = std::env::temp_dir().join(format!(
            "dbbench-merge-{}-{:08x}",
            std::process::id(),
            fastrand::u32(..)
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| Error::io("cannot create directory", &dir, e))?;
        let scratch = Scratch {
            file: dir.join("results.sqlite"),
            dir,
        };
        std::fs::copy(store, &scratch.file)
            .map_err(|e| Error::io("cannot copy the results store", store, e))?;
        let mut wal = store.as_os_str().to_owned();
        wal.push("-wal");
        let wal = std::path::PathBuf::from(wal);
        if wal.is_file() {
            std::fs::copy(&wal, scratch.dir.join("results.sqlite-wal"))
                .map_err(|e| Error::io("cannot copy the results store", &wal, e))?;
        }
        Ok(scratch)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Copies the benchmark runs, cell runs and repetitions of invocation `from` (in `source`) to
/// invocation `to`; returns the repetitions copied.
fn copy_runs(
    source: &Connection,
    target: &Connection,
    from: i64,
    to: i64,
) -> rusqlite::Result<usize> {
    let mut repetitions = 0;
    let mut benchmark_runs = source.prepare(
        "SELECT id, benchmark, stem, header, declared FROM benchmark_runs WHERE invocation_id = ?1 \
         ORDER BY id",
    )?;
    let runs: Vec<(i64, String, String, String, String)> = benchmark_runs
        .query_map([from], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    for (old_run, benchmark, stem, header, declared) in runs {
        target.execute(
            "INSERT INTO benchmark_runs (invocation_id, benchmark, stem, header, declared) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
            params![
                to,
                benchmark,
                crate::util::paths::file_safe(&stem),
                header,
                declared
            ],
        )?;
        let new_run = target.last_insert_rowid();
        let mut cells = source.prepare(
            "SELECT id, cell, config, effective, status, detail FROM cell_runs \
             WHERE benchmark_run_id = ?1 ORDER BY id",
        )?;
        type Cell = (i64, String, String, String, String, Option<String>);
        let cell_rows: Vec<Cell> = cells
            .query_map([old_run], |r| {
                Ok((
                    r.get(0)?,
                    r.get(1)?,
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                    r.get(5)?,
                ))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut ids = BTreeMap::new();
        for (old_cell, cell, config, effective, status, detail) in cell_rows {
            target.execute(
                "INSERT INTO cell_runs (benchmark_run_id, cell, config, effective, status, detail) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![new_run, cell, config, effective, status, detail],
            )?;
            ids.insert(old_cell, target.last_insert_rowid());
        }
        for (old_cell, new_cell) in ids {
            let mut reps = source.prepare(
                // Whether a window was set aside is read from the run itself, which every
                // version of the store holds.
                "SELECT repetition, sequence, warmup, window_start_unix_ns, window_end_unix_ns, \
                 run, elapsed_s, json_extract(run, '$.set_aside') IS NOT NULL \
                 FROM repetitions WHERE cell_run_id = ?1 ORDER BY id",
            )?;
            type Rep = (i64, i64, bool, i64, i64, String, Option<f64>, bool);
            let rows: Vec<Rep> = reps
                .query_map([old_cell], |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                        r.get(6)?,
                        r.get(7)?,
                    ))
                })?
                .collect::<rusqlite::Result<_>>()?;
            for (repetition, sequence, warmup, start, end, run, elapsed, aside) in rows {
                target.execute(
                    "INSERT INTO repetitions (cell_run_id, repetition, sequence, warmup, \
                     window_start_unix_ns, window_end_unix_ns, run, elapsed_s, set_aside) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    params![
                        new_cell, repetition, sequence, warmup, start, end, run, elapsed, aside
                    ],
                )?;
                repetitions += 1;
            }
        }
    }
    Ok(repetitions)
}
