//! MariaDB's [`Profile`]: its SQL, how its results are shown, the options it honours, and
//! which of its errors a transaction is retried for.

use super::{errors, fixture, DIALECT};
use crate::engine::profile::{common_kind, Control, DriverSql, Profile};
use crate::model::config::BackendKind;
use crate::model::error::Error;
use crate::model::load::{ErrorKind, Execution};
use crate::model::presentation::{EvidenceColumn, EvidenceUnit, Presentation};
use dbbench_options::Key;
use std::borrow::Cow;

/// The evidence that answers the storage questions on MariaDB (`docs/mariadb.md`).
static EVIDENCE_COLUMNS: [EvidenceColumn; 5] = [
    EvidenceColumn::new("redo written", "mdb_redo_bytes", EvidenceUnit::Bytes),
    EvidenceColumn::new("redo writes", "mdb_redo_writes", EvidenceUnit::Count),
    EvidenceColumn::new("data fsyncs", "mdb_data_fsyncs", EvidenceUnit::Count),
    EvidenceColumn::new(
        "tablespace extensions",
        "mdb_tablespace_extensions",
        EvidenceUnit::Count,
    ),
    EvidenceColumn::new(
        "checkpoint age",
        "mdb_checkpoint_age_bytes",
        EvidenceUnit::Bytes,
    ),
];

/// MariaDB's profile: its SQL, the workers as tasks on one thread (network connections), deadlock
/// victims retried, lock-wait timeouts as timeouts, unbound volumes as directories under the work
/// dir (the managed instance runs on this machine).
pub static PROFILE: Profile = Profile {
    kind: BackendKind::named(dbbench_options::keyword::MARIADB),
    dialect: DIALECT,
    fixture: &fixture::SQL,
    execution: Execution::Tasks,
    driver_sql: DriverSql {
        begin: "START TRANSACTION",
        commit: "COMMIT",
        // ROLLBACK outside a transaction does nothing, so it is safe after any failure.
        rollback: "ROLLBACK",
        warm_up: "SELECT 1",
        control: Control::Batch,
    },
    lock_timeout: |wait| {
        // Whole seconds, at least one (0 would mean NOWAIT).
        let secs = wait.as_millis().div_ceil(1000).max(1);
        format!("SET SESSION innodb_lock_wait_timeout = {secs}")
    },
    classify,
    defaults_unbound_volumes: true,
    // A managed instance's files are this machine's: `cache = "cold"` drops them from the OS
    // page cache after the instance's restart has emptied the buffer pool (`database.rs`).
    local_page_cache: true,
    presentation: Presentation {
        segments_label: Cow::Borrowed("redo log files"),
        evidence_columns: Cow::Borrowed(&EVIDENCE_COLUMNS),
    },
    // What each one means here is `options.rs`'s table; why the others are refused,
    // `refusals.rs`.
    options: &[
        Key::DataFiles,
        Key::DataSize,
        Key::Growth,
        Key::LogSize,
        Key::Recovery,
        Key::LogOn,
    ],
    refusals: super::refusals::REFUSALS,
};

/// Deadlock victims are retried; a lock wait timeout is a timeout.
fn classify(error: &Error) -> ErrorKind {
    if let Some(kind) = common_kind(error) {
        return kind;
    }
    match errors::code(error) {
        Some(errors::DEADLOCK) => ErrorKind::Deadlock,
        Some(errors::LOCK_WAIT_TIMEOUT) => ErrorKind::Timeout,
        _ => ErrorKind::Other,
    }
}

#[cfg(test)]
mod profile_tests {
    use super::*;

    #[test]
    fn deadlocks_are_retried_and_lock_waits_time_out() {
        let kind = PROFILE.classify;
        let e = |code| errors::server(code, "HY000", "m");
        assert_eq!(kind(&e(1213)), ErrorKind::Deadlock);
        assert_eq!(kind(&e(1205)), ErrorKind::Timeout);
        assert_eq!(kind(&e(1062)), ErrorKind::Other);
        let wait = std::time::Duration::from_millis(250);
        assert_eq!(
            (PROFILE.lock_timeout)(wait),
            "SET SESSION innodb_lock_wait_timeout = 1"
        );
    }
}
