//! The embedded engine's [`Profile`]: SQLite's SQL for the driver, workers on threads, busy and
//! locked databases retried, the options it honours and those it refuses. Apart from the backend
//! and database types because it is data the runner reads, not behaviour.

use super::{errors, fixture};
use crate::engine::profile::{common_kind, Control, DriverSql, Profile};
use crate::model::config::BackendKind;
use crate::model::dialect::Dialect;
use crate::model::error::Error;
use crate::model::load::{ErrorKind, Execution};
use crate::model::presentation::Presentation;
use dbbench_options::Key;

/// The embedded engine's profile: SQLite's SQL, workers on threads (its calls block), busy and
/// locked databases retried, unbound volumes as directories under the work dir.
pub static PROFILE: Profile = Profile {
    kind: BackendKind::named(dbbench_options::keyword::EMBEDDED),
    dialect: Dialect::Sqlite,
    fixture: &fixture::SQL,
    execution: Execution::Threads,
    driver_sql: DriverSql {
        // Deferred, so read-only transactions do not serialise; a transaction that writes first
        // takes the write lock at its first statement.
        begin: "BEGIN",
        commit: "COMMIT",
        rollback: "ROLLBACK",
        // A new connection otherwise reads the schema inside its first measured statement.
        warm_up: "SELECT count(*) FROM sqlite_schema",
        // In process there is no round trip to save.
        control: Control::Batch,
    },
    lock_timeout: |wait| format!("PRAGMA busy_timeout = {}", wait.as_millis()),
    classify,
    defaults_unbound_volumes: true,
    local_page_cache: true,
    presentation: Presentation::PLAIN,
    options: &[
        Key::DataFiles,
        Key::DataSize,
        Key::Growth,
        Key::LogSize,
        Key::LogGrowth,
        Key::LogPregrow,
        Key::Ifi,
        Key::Recovery,
        Key::Maxdop,
        Key::DataOn,
        Key::LogOn,
    ],
    refusals: &[
        (Key::TempdbFiles, NO_TEMPDB),
        (Key::TempdbSize, NO_TEMPDB),
        (Key::TempdbGrowth, NO_TEMPDB),
    ],
};

/// Why the tempdb options are refused.
const NO_TEMPDB: &str = "SQLite has no shared tempdb (each connection has private temporary \
                         files); restrict the benchmark or case with `backends = [\"mssql\"]`";

/// Busy and locked (SQLite's lock wait ran out) are [`ErrorKind::Busy`].
fn classify(error: &Error) -> ErrorKind {
    match errors::sqlite(error) {
        Some(rusqlite::Error::SqliteFailure(e, _))
            if matches!(
                e.code,
                rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
            ) =>
        {
            ErrorKind::Busy
        }
        _ => common_kind(error).unwrap_or(ErrorKind::Other),
    }
}
