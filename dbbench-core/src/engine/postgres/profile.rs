//! PostgreSQL's [`Profile`]: its SQL for the driver, a thread per worker, the SQLSTATEs retried,
//! the options it honours, and the evidence columns of its results table. Apart from the backend
//! because it is data the runner reads, not behaviour.

use super::{errors, fixture, options};
use crate::engine::profile::{common_kind, Control, DriverSql, Profile};
use crate::model::config::BackendKind;
use crate::model::dialect::Dialect;
use crate::model::error::Error;
use crate::model::load::{ErrorKind, Execution};
use crate::model::presentation::{EvidenceColumn, EvidenceUnit, Presentation};
use dbbench_options::Key;
use std::borrow::Cow;

/// The evidence that answers the storage questions on PostgreSQL (`docs/postgres.md`): whether
/// the WAL's segments were created or recycled, what zero-filling them wrote, how much WAL the
/// window wrote, the checkpoints it forced and the time WAL syncs took.
static EVIDENCE_COLUMNS: [EvidenceColumn; 6] = [
    EvidenceColumn::new(
        "segments created",
        "pg_wal_segments_created",
        EvidenceUnit::Count,
    ),
    EvidenceColumn::new(
        "segments recycled",
        "pg_wal_segments_recycled",
        EvidenceUnit::Count,
    ),
    EvidenceColumn::new("zero-filled", "pg_wal_zero_fill_bytes", EvidenceUnit::Bytes),
    EvidenceColumn::new("WAL written", "pg_wal_bytes", EvidenceUnit::Bytes),
    EvidenceColumn::new(
        "checkpoints requested",
        "pg_checkpoints_req",
        EvidenceUnit::Count,
    ),
    EvidenceColumn::new("WAL sync time", "pg_wal_sync_time_ms", EvidenceUnit::Millis),
];

/// PostgreSQL's profile: its SQL, a thread per worker (as pgbench's `-j C`: one thread driving every
/// connection measured 0.76–0.80 of pgbench's throughput at 4 and 16 connections, a thread each
/// 0.94 and 0.84), serialization failures
/// and deadlocks retried, unbound volumes as directories under the work dir (the managed cluster
/// runs on this machine; on an external server volume options are refused).
pub static PROFILE: Profile = Profile {
    kind: BackendKind::named(dbbench_options::keyword::POSTGRES),
    dialect: Dialect::Postgres,
    fixture: &fixture::SQL,
    execution: Execution::Threads,
    driver_sql: DriverSql {
        begin: "BEGIN",
        commit: "COMMIT",
        // ROLLBACK outside a transaction only warns, so it is safe after any failure.
        rollback: "ROLLBACK",
        warm_up: "SELECT 1",
        // Bind and execute of a cached statement, not a simple query the server parses each
        // time: as pgbench -M prepared sends its BEGIN and END.
        control: Control::Prepared,
    },
    lock_timeout: |wait| format!("SET lock_timeout = {}", wait.as_millis()),
    classify,
    defaults_unbound_volumes: true,
    local_page_cache: true,
    presentation: Presentation {
        segments_label: Cow::Borrowed("WAL segments"),
        evidence_columns: Cow::Borrowed(&EVIDENCE_COLUMNS),
    },
    // What each one means here is `options.rs`'s table; SQL Server's file options have no
    // equivalent (`options::REFUSALS`).
    options: &[
        Key::LogSize,
        Key::LogGrowth,
        Key::LogPregrow,
        Key::Ifi,
        Key::Recovery,
        Key::Maxdop,
        Key::DataOn,
        Key::LogOn,
    ],
    refusals: options::REFUSALS,
};

/// SQLSTATE `serialization_failure`: "could not serialize access due to concurrent update"; the
/// documented remedy is to retry the whole transaction.
const SERIALIZATION_FAILURE: &str = "40001";
/// SQLSTATE `deadlock_detected`.
const DEADLOCK: &str = "40P01";
/// SQLSTATE `lock_not_available` (`lock_timeout` ran out, or `NOWAIT`).
const LOCK_NOT_AVAILABLE: &str = "55P03";

/// Serialization failures count as busy and deadlocks as deadlocks (both retried); a lock
/// timeout as a timeout.
fn classify(error: &Error) -> ErrorKind {
    match errors::sqlstate(error) {
        Some(SERIALIZATION_FAILURE) => ErrorKind::Busy,
        Some(DEADLOCK) => ErrorKind::Deadlock,
        Some(LOCK_NOT_AVAILABLE) => ErrorKind::Timeout,
        Some(_) => ErrorKind::Other,
        None => common_kind(error).unwrap_or(ErrorKind::Other),
    }
}
