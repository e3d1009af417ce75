//! The server's own evidence for the measured window, as differences between a snapshot taken when
//! the window opens and one taken when it closes:
//!
//! - `pg_stat_wal`: records, full-page images, bytes, buffers full, writes, syncs and their times;
//! - the checkpointer and background writer (`pg_stat_bgwriter`, or `pg_stat_checkpointer` from
//!   PostgreSQL 17): checkpoints timed and requested, their write and sync time, buffers written;
//! - `pg_stat_database` of the benchmark's database: blocks read and hit, read and write time,
//!   temporary files and bytes, commits, rollbacks, deadlocks, rows inserted;
//! - the database's size and every table's total size before and after;
//! - WAL segment files (the analogue of VLFs and log growth): counted before and after, and the
//!   files *created* in the window told apart from recycled ones by inode on a managed cluster;
//! - wait events sampled from `pg_stat_activity` (see [`super::waits`]).
//!
//! Each metric stands alone: one the server cannot give (an older version, a missing permission)
//! goes to `Evidence::unavailable` with the reason, and the run goes on.

use super::connection::PostgresConnection;
use super::pinned::{self, Activity};
use super::settings::PgSettings;
use super::waits::Sampler;
use crate::model::evidence::Evidence;
use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

mod difference;

use difference::{counter_differences, drop_untimed, size_evidence, wait_evidence, wal_evidence};

/// A metric's value, or why the server could not give it.
type Outcome<T> = std::result::Result<T, String>;

/// What the window needs to know about the database.
pub struct WindowContext<'a> {
    /// The database name.
    pub db: &'a str,
    /// For the sampler's own connection.
    pub settings: &'a PgSettings,
    /// The WAL directory, when dbbench can read it (a managed cluster).
    pub wal_dir: Option<&'a Path>,
    /// `server_version_num`.
    pub version_num: i64,
    /// The server settings declared options set, with the option ([`super::options::Mapping`]).
    pub declared: &'a BTreeMap<String, String>,
}

const WAL_SQL: &str =
    "SELECT wal_records::float8 AS pg_wal_records, wal_fpi::float8 AS pg_wal_fpi, \
    wal_bytes::float8 AS pg_wal_bytes, wal_buffers_full::float8 AS pg_wal_buffers_full, \
    wal_write::float8 AS pg_wal_write, wal_sync::float8 AS pg_wal_sync, \
    wal_write_time AS pg_wal_write_time_ms, wal_sync_time AS pg_wal_sync_time_ms FROM pg_stat_wal";

const BGWRITER_SQL: &str = "SELECT checkpoints_timed::float8 AS pg_checkpoints_timed, \
    checkpoints_req::float8 AS pg_checkpoints_req, \
    checkpoint_write_time AS pg_checkpoint_write_time_ms, \
    checkpoint_sync_time AS pg_checkpoint_sync_time_ms, \
    buffers_checkpoint::float8 AS pg_buffers_checkpoint, buffers_clean::float8 AS pg_buffers_clean, \
    maxwritten_clean::float8 AS pg_maxwritten_clean, buffers_backend::float8 AS pg_buffers_backend, \
    buffers_backend_fsync::float8 AS pg_buffers_backend_fsync, \
    buffers_alloc::float8 AS pg_buffers_alloc FROM pg_stat_bgwriter";

const CHECKPOINTER_SQL: &str = "SELECT c.num_timed::float8 AS pg_checkpoints_timed, \
    c.num_requested::float8 AS pg_checkpoints_req, c.write_time AS pg_checkpoint_write_time_ms, \
    c.sync_time AS pg_checkpoint_sync_time_ms, c.buffers_written::float8 AS pg_buffers_checkpoint, \
    b.buffers_clean::float8 AS pg_buffers_clean, b.maxwritten_clean::float8 AS pg_maxwritten_clean, \
    b.buffers_alloc::float8 AS pg_buffers_alloc FROM pg_stat_checkpointer c, pg_stat_bgwriter b";

const DATABASE_SQL: &str = "SELECT blks_read::float8 AS pg_db_blks_read, \
    blks_hit::float8 AS pg_db_blks_hit, blk_read_time AS pg_db_blk_read_time_ms, \
    blk_write_time AS pg_db_blk_write_time_ms, temp_files::float8 AS pg_db_temp_files, \
    temp_bytes::float8 AS pg_db_temp_bytes, xact_commit::float8 AS pg_db_xact_commit, \
    xact_rollback::float8 AS pg_db_xact_rollback, deadlocks::float8 AS pg_db_deadlocks, \
    tup_inserted::float8 AS pg_db_tup_inserted \
    FROM pg_stat_database WHERE datname = current_database()";

const TABLES_SQL: &str = "SELECT c.relname::text, pg_total_relation_size(c.oid)::float8 \
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
    WHERE c.relkind IN ('r', 'p', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'dbbench_marker') \
    AND n.nspname NOT LIKE 'pg_toast%' AND n.nspname NOT LIKE 'pg_temp%'";

/// WAL segment files: name → (inode, or 0 when unknown; size).
#[derive(Debug, Clone, Default)]
struct WalListing {
    files: BTreeMap<String, (u64, u64)>,
    /// The segment of the insert position.
    current: String,
    /// Whether inodes are known (the directory was read directly).
    by_inode: bool,
}

impl WalListing {
    fn ahead(&self) -> u64 {
        self.files.keys().filter(|n| **n > self.current).count() as u64
    }
    fn bytes(&self) -> u64 {
        self.files.values().map(|f| f.1).sum()
    }
}

/// Whether `name` is a WAL segment file name (24 hex digits).
pub(super) fn is_segment(name: &str) -> bool {
    name.len() == 24 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

struct Snapshot {
    groups: Vec<(&'static str, Outcome<BTreeMap<String, f64>>)>,
    db_size: Outcome<f64>,
    tables: Outcome<BTreeMap<String, f64>>,
    wal: Outcome<WalListing>,
}

async fn one_row(conn: &mut PostgresConnection, sql: &str) -> Outcome<BTreeMap<String, f64>> {
    let rows = conn.query(sql, &[]).await.map_err(|e| e.to_string())?;
    let row = rows.first().ok_or("the view returned no row")?;
    let mut out = BTreeMap::new();
    for (i, name) in row.columns().iter().enumerate() {
        let value: Option<f64> = row.get(i).map_err(|e| e.to_string())?;
        out.insert(name.clone(), value.unwrap_or(0.0));
    }
    Ok(out)
}

async fn wal_listing(conn: &mut PostgresConnection, dir: Option<&Path>) -> Outcome<WalListing> {
    let current: String = conn
        .query("SELECT pg_walfile_name(pg_current_wal_insert_lsn())", &[])
        .await
        .map_err(|e| e.to_string())?
        .first()
        .ok_or("no insert position")?
        .get(0)
        .map_err(|e| e.to_string())?;
    let mut listing = WalListing {
        current,
        ..WalListing::default()
    };
    if let Some(dir) = dir {
        let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if let (true, Ok(meta)) = (is_segment(&name), entry.metadata()) {
                listing.files.insert(name, (meta.ino(), meta.len()));
            }
        }
        listing.by_inode = true;
    } else {
        let rows = conn
            .query("SELECT name, size FROM pg_ls_waldir()", &[])
            .await
            .map_err(|e| e.to_string())?;
        for row in rows {
            let name: String = row.get(0).map_err(|e| e.to_string())?;
            if is_segment(&name) {
                listing
                    .files
                    .insert(name, (0, row.get(1).map_err(|e| e.to_string())?));
            }
        }
    }
    Ok(listing)
}

async fn snapshot(conn: &mut PostgresConnection, ctx: &WindowContext<'_>) -> Snapshot {
    // A session reports its statistics at most once a second; make the next report immediate,
    // so the snapshot includes everything this connection did (PostgreSQL 15 and later).
    if ctx.version_num >= 150_000 {
        let _ = conn.batch("SELECT pg_stat_force_next_flush()").await;
    }
    let checkpointer = if ctx.version_num >= 170_000 {
        CHECKPOINTER_SQL
    } else {
        BGWRITER_SQL
    };
    let groups = vec![
        ("pg_stat_wal", one_row(conn, WAL_SQL).await),
        ("checkpointer", one_row(conn, checkpointer).await),
        ("pg_stat_database", one_row(conn, DATABASE_SQL).await),
    ];
    let db_size = match conn
        .query("SELECT pg_database_size(current_database())::float8", &[])
        .await
    {
        Ok(rows) => rows
            .first()
            .map(|r| r.get(0))
            .transpose()
            .map_err(|e| e.to_string())
            .and_then(|v| v.ok_or_else(|| "no size".to_string())),
        Err(e) => Err(e.to_string()),
    };
    let tables = match conn.query(TABLES_SQL, &[]).await {
        Ok(rows) => rows
            .iter()
            .map(|r| Ok((r.get::<String>(0)?, r.get::<f64>(1)?)))
            .collect::<crate::model::error::Result<BTreeMap<_, _>>>()
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    let wal = wal_listing(conn, ctx.wal_dir).await;
    Snapshot {
        groups,
        db_size,
        tables,
        wal,
    }
}

/// Waits (up to two seconds) for the other sessions of the database to end: the driver's workers
/// have closed their connections, but a backend reports its statistics only as it exits.
async fn settle(conn: &mut PostgresConnection) {
    let started = std::time::Instant::now();
    while started.elapsed() < std::time::Duration::from_secs(2) {
        let others = conn
            .query(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                 AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
                &[],
            )
            .await
            .ok()
            .and_then(|rows| rows.first().and_then(|r| r.get::<i64>(0).ok()));
        if others.is_none_or(|n| n == 0) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// The snapshot taken when the window opened, and the running wait sampler.
pub struct Window {
    before: Snapshot,
    sampler: Outcome<Sampler>,
    wal_init_zero: Option<bool>,
    timing: BTreeMap<&'static str, bool>,
    settings: Outcome<crate::model::setting::Settings>,
    activity: Outcome<Activity>,
    jit: Option<bool>,
    /// Segments made ahead that [`super::ahead::reset`] removed before the window, if it ran.
    pub(super) removed_ahead: Option<u64>,
    /// Tables whose autovacuum was turned off before the window (an existing server).
    pub(super) autovacuum_tables: Option<Outcome<u64>>,
    /// Other databases' counters at the open (an existing server).
    pub(super) others: Option<super::others::Reading>,
}

async fn setting_on(conn: &mut PostgresConnection, name: &str) -> Option<bool> {
    let rows = conn
        .query(&format!("SELECT current_setting('{name}', true)"), &[])
        .await
        .ok()?;
    let value: Option<String> = rows.first()?.get(0).ok()?;
    value.map(|v| v == "on")
}

impl Window {
    /// Snapshots everything, then starts the sampler (last, closest to the body's start).
    pub async fn open(conn: &mut PostgresConnection, ctx: &WindowContext<'_>) -> Window {
        let wal_init_zero = setting_on(conn, "wal_init_zero").await;
        let mut timing = BTreeMap::new();
        for name in ["track_wal_io_timing", "track_io_timing"] {
            timing.insert(name, setting_on(conn, name).await.unwrap_or(false));
        }
        let jit = setting_on(conn, "jit").await;
        let settings = super::effective::read(conn, ctx.declared).await;
        let activity = Activity::read(conn).await;
        let before = snapshot(conn, ctx).await;
        let sampler = Sampler::start(ctx.settings, ctx.db).await;
        Window {
            before,
            sampler,
            wal_init_zero,
            timing,
            settings,
            activity,
            jit,
            removed_ahead: None,
            autovacuum_tables: None,
            others: None,
        }
    }

    /// Stops the sampler, takes the closing snapshot and writes the differences into `run`.
    pub async fn close(
        self,
        conn: &mut PostgresConnection,
        ctx: &WindowContext<'_>,
        evidence: &mut Evidence,
    ) {
        let Window {
            before,
            sampler,
            wal_init_zero,
            timing,
            settings,
            activity,
            jit,
            removed_ahead,
            autovacuum_tables,
            others: _,
        } = self;
        let samples = match sampler {
            Ok(sampler) => sampler.finish().await,
            Err(e) => Err(e),
        };
        settle(conn).await;
        let after = snapshot(conn, ctx).await;
        let mut missing = BTreeMap::new();
        match (settings, super::effective::read(conn, ctx.declared).await) {
            (Ok(open), Ok(close)) => evidence.settings = super::effective::merge(open, close),
            (Err(e), _) | (_, Err(e)) => {
                missing.insert("settings".into(), format!("cannot read pg_settings: {e}"));
            }
        }
        autovacuum_evidence(conn, activity, autovacuum_tables, evidence, &mut missing).await;
        if let Some(removed) = removed_ahead {
            evidence
                .values
                .insert("pg_wal_segments_removed_ahead".into(), removed as f64);
        }
        evidence.facts.insert("jit".into(), jit_fact(jit).into());
        counter_differences(&before, &after, evidence, &mut missing);
        drop_untimed(&timing, evidence, &mut missing);
        size_evidence(&before, &after, evidence, &mut missing);
        match (&before.wal, &after.wal) {
            (Ok(b), Ok(a)) => wal_evidence(wal_init_zero, b, a, evidence, &mut missing),
            (Err(e), _) | (_, Err(e)) => {
                missing.insert("log".into(), format!("cannot list the WAL segments: {e}"));
            }
        }
        wait_evidence(samples, evidence, &mut missing);
        missing.insert(
            "files".into(),
            "PostgreSQL keeps no I/O statistics per file; the window's I/O is in the pg_wal_*, \
             pg_db_* and checkpointer values, and the WAL segments in `log`"
                .into(),
        );
        evidence.unavailable.extend(missing);
    }
}

/// Whether a statement in the window could have been JIT-compiled, in words.
fn jit_fact(jit: Option<bool>) -> &'static str {
    match jit {
        Some(false) => {
            "off (pinned: ALTER DATABASE … SET jit = off), so no statement \
                        in the window was JIT-compiled"
        }
        Some(true) => {
            "on: a statement whose cost passed jit_above_cost was compiled \
                       inside the window"
        }
        None => "unknown (the session could not read it)",
    }
}

/// Whether autovacuum ran inside the window: the database's autovacuum and autoanalyze runs
/// (`pg_stat_user_tables`, differences), the workers still running at the close, and the tables
/// dbbench turned it off on (an existing server).
async fn autovacuum_evidence(
    conn: &mut PostgresConnection,
    before: Outcome<Activity>,
    tables: Option<Outcome<u64>>,
    evidence: &mut Evidence,
    missing: &mut BTreeMap<String, String>,
) {
    match (before, Activity::read(conn).await) {
        (Ok(b), Ok(a)) => {
            evidence
                .counts
                .insert("pg_autovacuum_runs".into(), a.vacuums - b.vacuums);
            evidence
                .counts
                .insert("pg_autoanalyze_runs".into(), a.analyzes - b.analyzes);
        }
        (Err(e), _) | (_, Err(e)) => {
            missing.insert("pg_autovacuum_runs".into(), e);
        }
    }
    match pinned::workers(conn).await {
        Ok(n) => {
            evidence
                .counts
                .insert("pg_autovacuum_workers_at_close".into(), n);
        }
        Err(e) => {
            missing.insert("pg_autovacuum_workers_at_close".into(), e);
        }
    }
    match tables {
        Some(Ok(n)) => {
            evidence
                .values
                .insert("pg_autovacuum_disabled_tables".into(), n as f64);
        }
        Some(Err(e)) => {
            missing.insert(
                "pg_autovacuum_disabled_tables".into(),
                format!("autovacuum could not be turned off on the database's tables: {e}"),
            );
        }
        None => {}
    }
}

#[cfg(test)]
mod tests;
