//! SQL Server's profile: what the generic layers know of the backend without calling it (its
//! dialect, driver statements, error classes, presentation and the options it honours).

use super::{errors, fixture};
use crate::engine::profile::{common_kind, Control, DriverSql, Profile};
use crate::model::config::BackendKind;
use crate::model::dialect::Dialect;
use crate::model::error::Error;
use crate::model::load::{ErrorKind, Execution};
use crate::model::presentation::Presentation;
use std::borrow::Cow;

/// SQL Server's profile: T-SQL, workers as tasks on one thread (they wait on sockets), deadlock
/// victims retried, lock timeouts counted, volumes only where `DBBENCH_VOLUMES` binds them (the
/// server's disks are not this machine's).
pub static PROFILE: Profile = Profile {
    kind: BackendKind::named(dbbench_options::keyword::MSSQL),
    dialect: Dialect::TSql,
    fixture: &fixture::SQL,
    execution: Execution::Tasks,
    driver_sql: DriverSql {
        begin: "BEGIN TRANSACTION",
        commit: "COMMIT TRANSACTION",
        rollback: "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION",
        warm_up: "SELECT 1",
        // A prepared statement goes as an RPC (sp_executesql), which may not change the
        // transaction count (error 266).
        control: Control::Batch,
    },
    lock_timeout: |wait| format!("SET LOCK_TIMEOUT {}", wait.as_millis()),
    classify,
    defaults_unbound_volumes: false,
    local_page_cache: false,
    presentation: Presentation {
        segments_label: Cow::Borrowed("VLFs"),
        evidence_columns: Cow::Borrowed(&[]),
    },
    // The storage options are SQL Server's own vocabulary: it honours every one.
    options: &dbbench_options::Key::STORAGE,
    refusals: &[],
};

/// SQL Server: "Transaction was deadlocked … and has been chosen as the deadlock victim."
const DEADLOCK: u32 = 1205;
/// SQL Server: "Lock request time out period exceeded."
const LOCK_TIMEOUT: u32 = 1222;

/// Error 1205 is a deadlock (retried), 1222 a lock timeout, 40501/40613 transient (retried).
fn classify(error: &Error) -> ErrorKind {
    match errors::code_of(error) {
        Some(DEADLOCK) => ErrorKind::Deadlock,
        Some(LOCK_TIMEOUT) => ErrorKind::Timeout,
        // Azure SQL throttling / briefly unavailable: retrying the transaction is the remedy.
        Some(code) if errors::is_transient(code) => ErrorKind::Busy,
        _ => common_kind(error).unwrap_or(ErrorKind::Other),
    }
}

#[cfg(test)]
mod tests;
