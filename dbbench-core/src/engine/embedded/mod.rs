//! The embedded engine: SQLite (bundled, in-process), one database directory per repetition under
//! `target/dbbench/db/`, 8 KiB pages and write-ahead logging, stored through dbbench's storage
//! layer ([`crate::engine::embedded::storage`], described in `docs/embedded-storage.md`).
//!
//! Every database, with default options too, is opened through the `dbbench` VFS: SQLite's database
//! file is spread over data files in 64 KiB extents and its WAL lives in a pre-sized log file. How
//! each storage option maps (default in parentheses):
//!
//! - `data_files` (1): physical data files (`NAME_data_1.mdf`, `NAME_data_2.ndf`, …); new extents
//!   go to them in proportion to their free space (proportional fill).
//! - `data_size` (one 64 KiB extent per file): initial size, `data_size / data_files` per file.
//! - `growth` (64 MB): when every data file is full, one grows (round robin) by this many bytes or
//!   percent; `none` fails the statement with "file … is full" ([`Error::FileFull`]).
//! - `ifi` (true): `false` writes zeros over new data-file space and flushes before use; `true`
//!   allocates it with `fallocate`.
//! - `log_size` (8 MB), `log_pregrow`, `log_growth` (64 MB): the log file (`NAME_log.ldf`) is
//!   created at `log_size` (in `log_pregrow` steps), always zero-initialised, grows by
//!   `log_growth`, never shrinks; its growths and segments (the counterpart of VLFs, SQL Server
//!   2014+'s rule) are reported in [`crate::model::evidence::LogStats`].
//! - `recovery` (simple): `simple` checkpoints the WAL automatically (every 1000 pages) so log
//!   space is reused; `full` turns automatic checkpoints off for the measured window, so the log
//!   only grows; `bulk_logged` is refused.
//! - `data_on`, `log_on`: named volumes (`DBBENCH_VOLUMES`); data files go round robin over the
//!   `data_on` directories, the log to the `log_on` directory. A missing directory fails the cell
//!   naming it; teardown removes every file wherever it is.
//! - `maxdop`: `PRAGMA threads`.
//! - `tempdb_files`, `tempdb_size`, `tempdb_growth`: refused (SQLite has no shared tempdb).
//!
//! Each measured window also reads back the pragmas and storage parameters in force (`settings`,
//! for the confounder check).
//!
//! Each measured window records per-file statistics for `data_1`… and `log` (reads, writes, bytes,
//! stalls, flushes, growth events with bytes and durations, zero-fill bytes, sizes).

mod connection;
mod errors;
mod fixture;
mod plugin;
mod profile;
mod settings;
pub mod space;
pub mod stale;
pub mod storage;
mod template;
mod writer_queue;

pub use connection::EmbeddedConnection;
pub use plugin::REGISTRATION;
pub use profile::PROFILE;

use super::plugin::{EngineBackend, EngineDatabase};
use super::profile::Profile;
use crate::model::config::{FixtureKind, Recovery, StorageSpec};
use crate::model::error::{Error, Result};
use crate::model::evidence::{BackendInfo, Evidence};
#[cfg(test)]
use crate::model::load::ErrorKind;
use crate::model::plan::DatabasePlan;
use crate::model::scale::Scale;
use crate::model::start::CacheState;
use crate::util::space::Shortfall;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// The marker file that proves dbbench created a database directory.
pub const OWNER_MARKER: &str = ".dbbench-owned";

/// The embedded backend. Each database is its own directory; the backend keeps only the
/// pre-grown logs its databases left for the next of their shape ([`storage::log_pool`]) and
/// the fixtures they copy (`template`).
#[derive(Debug, Default)]
pub struct EmbeddedBackend {
    pool: Option<std::sync::Arc<storage::log_pool::LogPool>>,
    templates: std::sync::Arc<template::Templates>,
}

impl EmbeddedBackend {
    /// The embedded backend.
    pub fn new() -> Self {
        EmbeddedBackend::default()
    }
}

impl EngineBackend for EmbeddedBackend {
    type Database = EmbeddedDatabase;

    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    /// Removes the logs kept for later databases and the loaded fixtures (a benchmark ended);
    /// the next database makes its log anew and the next fixture is loaded again.
    fn release_kept(&mut self) -> Result<()> {
        self.templates = Default::default();
        match self.pool.take() {
            Some(pool) => pool.clear().map_err(|e| e.into_error()),
            None => Ok(()),
        }
    }

    /// SQLite's version and the fixed settings every embedded database uses.
    fn info(&self) -> BackendInfo {
        let mut preconditions = std::collections::BTreeMap::new();
        preconditions.insert("page_size".into(), "8192".into());
        preconditions.insert("journal_mode".into(), "wal".into());
        preconditions.insert("synchronous".into(), "full".into());
        preconditions.insert(
            "vfs".into(),
            "dbbench (extent-mapped data files, log file)".into(),
        );
        BackendInfo {
            kind: "embedded".into(),
            version: format!("SQLite {}", rusqlite::version()),
            preconditions,
            ..BackendInfo::default()
        }
    }

    /// Refuses values SQLite cannot honour of the options it supports (the options themselves
    /// are its profile's, whose absent ones the dispatcher refuses).
    fn check(&self, storage: &StorageSpec) -> Result<()> {
        if storage.recovery == Some(Recovery::BulkLogged) {
            return Err(Error::Unsupported {
                option: "recovery",
                backend: "embedded",
                reason: "SQLite has no minimally logged operations, so `bulk_logged` would \
                         silently behave as `full`; use `full` or restrict the cell to \
                         `backends = [\"mssql\"]`"
                    .to_string(),
            });
        }
        crate::engine::embedded::storage::check(storage)
    }

    fn files_are_local(&self) -> bool {
        true
    }

    async fn sweep_stale(&mut self, work_dir: &Path) -> Vec<String> {
        stale::sweep(work_dir)
    }

    async fn space_shortfalls(&mut self, plan: &DatabasePlan, fixture_rows: u64) -> Vec<Shortfall> {
        crate::util::space::shortfalls(&space::needs(plan, fixture_rows))
    }

    /// Creates the database directory, its ownership marker and the empty database.
    async fn create(&mut self, plan: &DatabasePlan) -> Result<EmbeddedDatabase> {
        let dir = crate::util::paths::database_dir(&plan.work_dir, &plan.name);
        claim_directory(&dir)?;
        let path = dir.join(format!("{}.db", plan.name));
        let autocheckpoint = match plan.storage.recovery {
            Some(Recovery::Full) | Some(Recovery::BulkLogged) => 0,
            _ => 1000,
        };
        let db_dir = dir.parent().unwrap_or(&plan.work_dir).to_path_buf();
        let pool = self
            .pool
            .get_or_insert_with(|| std::sync::Arc::new(storage::log_pool::LogPool::new(&db_dir)))
            .clone();
        let layout = match crate::engine::embedded::storage::Layout::create_pooled(
            &path,
            &plan.storage,
            &plan.volumes,
            Some(pool),
        ) {
            Ok(layout) => layout,
            Err(e) => {
                // The layout removed what it made; the directory is ours too.
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
        };
        Ok(EmbeddedDatabase {
            dir,
            path,
            threads: plan.storage.maxdop.unwrap_or(0),
            autocheckpoint,
            window_open: AtomicBool::new(false),
            layout: Some(layout),
            cancel: crate::util::cancel::Cancel::new(),
            templates: self.templates.clone(),
            fixture_copied: AtomicBool::new(false),
            writers: Default::default(),
        })
    }
}

/// Creates `dir` with an ownership marker; a leftover directory of an earlier dbbench run (marker
/// present, its owner gone) is removed first; one whose owner may still run (another container
/// of the same PID on a shared work dir) and any other existing directory are refused.
fn claim_directory(dir: &Path) -> Result<()> {
    if dir.exists() {
        let marker = dir.join(OWNER_MARKER);
        let Ok(text) = std::fs::read_to_string(&marker) else {
            return Err(Error::NotOwned(dir.display().to_string()));
        };
        if let Some(owner) = crate::util::owner::Owner::parse(&text) {
            owner
                .may_take(&format!("the database directory {}", dir.display()))
                .map_err(Error::msg)?;
        }
        std::fs::remove_dir_all(dir)
            .map_err(|e| Error::io("cannot remove stale database", dir, e))?;
    }
    std::fs::create_dir_all(dir)
        .map_err(|e| Error::io("cannot create database directory", dir, e))?;
    let marker = dir.join(OWNER_MARKER);
    std::fs::write(
        &marker,
        format!(
            "created by dbbench\n{}",
            crate::util::owner::Owner::this().lines()
        ),
    )
    .map_err(|e| Error::io("cannot write ownership marker", &marker, e))
}

/// How long a connection keeps retrying a locked database before it reports busy.
const BUSY_LIMIT: std::time::Duration = std::time::Duration::from_secs(60);

/// The busy handler of every connection. SQLite's own (`busy_timeout`) sleeps up to 100 ms
/// between tries, so a writer waiting on the WAL write lock would measure those sleeps; this one
/// polls every 100 µs to 1 ms, for up to [`BUSY_LIMIT`]. A load's writers wait in the
/// database's queue instead (`writer_queue`), so this serves only connections outside it.
fn poll_while_busy(attempt: i32) -> bool {
    let pause_us = (100u64 << attempt.clamp(0, 4)).min(1000);
    // After the first tries every pause is 1 ms, so the attempt count bounds the total wait.
    if attempt as u128 > BUSY_LIMIT.as_millis() {
        return false;
    }
    std::thread::sleep(std::time::Duration::from_micros(pause_us));
    true
}

/// One embedded database: a directory that dbbench owns.
pub struct EmbeddedDatabase {
    dir: PathBuf,
    path: PathBuf,
    threads: u32,
    autocheckpoint: u32,
    window_open: AtomicBool,
    layout: Option<crate::engine::embedded::storage::Layout>,
    cancel: std::sync::Arc<crate::util::cancel::Cancel>,
    templates: std::sync::Arc<template::Templates>,
    /// The fixture was copied from one an earlier database loaded.
    fixture_copied: AtomicBool,
    /// Its connections' writers, served in arrival order (`writer_queue`).
    writers: std::sync::Arc<writer_queue::WriterQueue>,
}

impl EmbeddedDatabase {
    /// The main database file's path (the name SQLite opens).
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn layout(&self) -> Result<&crate::engine::embedded::storage::Layout> {
        self.layout
            .as_ref()
            .ok_or_else(|| Error::msg("the embedded database was already dropped"))
    }
}

impl EngineDatabase for EmbeddedDatabase {
    type Connection = EmbeddedConnection;

    fn profile(&self) -> &'static Profile {
        &PROFILE
    }

    /// The switch that stops every connection of this database.
    fn cancel(&self) -> &std::sync::Arc<crate::util::cancel::Cancel> {
        &self.cancel
    }

    /// Opens a connection with the benchmark's settings.
    async fn connect(&self) -> Result<EmbeddedConnection> {
        let layout = self.layout()?;
        let conn = layout.open()?;
        let setup = || -> rusqlite::Result<()> {
            conn.busy_handler(Some(poll_while_busy))?;
            conn.execute_batch(&format!(
                "PRAGMA page_size = 8192; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; \
                 PRAGMA threads = {}; PRAGMA wal_autocheckpoint = {};",
                self.threads,
                if self.window_open.load(Ordering::SeqCst) {
                    self.autocheckpoint
                } else {
                    1000
                }
            ))
        };
        setup().map_err(|e| layout.explain(e))?;
        Ok(EmbeddedConnection::new(conn)
            .with_storage(layout.errors())
            .with_cancel(self.cancel.clone())
            .with_writer_queue(self.writers.clone()))
    }

    /// What this database reused instead of making anew (a kept log, a loaded fixture), one
    /// phrase each.
    fn reused(&self) -> Vec<String> {
        let mut reused = self.layout.as_ref().map(|l| l.reused()).unwrap_or_default();
        if self.fixture_copied.load(Ordering::Relaxed) {
            reused.push(
                "fixture copied page for page (SQLite backup API) from the one loaded for an \
                 earlier repetition"
                    .to_string(),
            );
        }
        reused
    }

    /// Gives the new database `fixture`: a page-for-page copy of the fixture as the backend's
    /// first database of this kind and size loaded it, in one transaction with a prepared
    /// statement (`template`).
    async fn load_fixture(
        &self,
        conn: &mut EmbeddedConnection,
        fixture: FixtureKind,
        scale: &Scale,
    ) -> Result<u64> {
        match fixture {
            FixtureKind::None => Ok(0),
            FixtureKind::Credit => {
                let rows = scale.credit_rows();
                let copied = self
                    .templates
                    .copy_into(fixture, rows, &mut conn.conn, |c| {
                        fixture::load_credit(c, rows)
                    })
                    .map_err(|e| conn.explain(e))?;
                self.fixture_copied.store(copied, Ordering::Relaxed);
                Ok(rows)
            }
        }
    }

    /// Checkpoints the fixture into the data files, applies the recovery model's checkpoint
    /// policy and snapshots the storage statistics.
    async fn open_window(&self, conn: &mut EmbeddedConnection, _: CacheState) -> Result<()> {
        let prepare = |c: &rusqlite::Connection| -> rusqlite::Result<()> {
            c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
            c.execute_batch(&format!(
                "PRAGMA wal_autocheckpoint = {};",
                self.autocheckpoint
            ))
        };
        prepare(&conn.conn).map_err(|e| conn.explain(e))?;
        self.window_open.store(true, Ordering::SeqCst);
        if let Some(layout) = &self.layout {
            layout.open_window();
        }
        Ok(())
    }

    /// The window's file statistics and the database's page count.
    ///
    /// The window's connection is the database's last: it is closed next and the database
    /// dropped. So it is told not to checkpoint as it closes (`SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE`):
    /// copying what the window left in the WAL into data files about to be removed was 0.16 s
    /// a repetition of the VLF suite's time outside its windows, for nothing. The WAL stays a
    /// valid one (a later connection would recover it), and the kept log is re-zeroed over the
    /// range written either way (`storage::log_pool`).
    async fn close_window(&self, conn: &mut EmbeddedConnection) -> Result<Evidence> {
        self.window_open.store(false, Ordering::SeqCst);
        let pages: i64 = conn
            .conn
            .query_row("PRAGMA page_count", [], |r| r.get(0))
            .map_err(|e| conn.explain(e))?;
        conn.conn
            .set_db_config(
                rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
                true,
            )
            .map_err(|e| conn.explain(e))?;
        let mut evidence = self
            .layout
            .as_ref()
            .map(|layout| layout.close_window())
            .unwrap_or_default();
        evidence.counts.insert("data_pages".into(), pages);
        // Read on the window's connection, as the body left it: a pragma the body changed shows.
        evidence.settings = settings::pragmas(&conn.conn).map_err(|e| conn.explain(e))?;
        if let Some(layout) = &self.layout {
            evidence.settings.extend(settings::storage(layout.plan()));
        }
        Ok(evidence)
    }

    /// Removes the database directory and every file the storage layer placed elsewhere.
    async fn drop_database(mut self) -> Result<()> {
        if let Some(layout) = self.layout.take() {
            layout.remove()?;
        }
        if self.dir.join(OWNER_MARKER).exists() {
            std::fs::remove_dir_all(&self.dir)
                .map_err(|e| Error::io("cannot remove database directory", &self.dir, e))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod profile_tests;

/// Asserts SQLite finds the database behind `conn` intact (`PRAGMA integrity_check`).
#[cfg(test)]
fn assert_intact(conn: &rusqlite::Connection) {
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(ok, "ok");
}

#[cfg(test)]
mod window_tests;

#[cfg(test)]
mod fixture_tests;

#[cfg(test)]
mod claim_tests;
