//! Failed attempts by kind, and which kinds a transaction is retried for: a busy SQLite database
//! (its lock wait ran out), a SQL Server or PostgreSQL deadlock victim and a PostgreSQL
//! serialization failure are retried, since re-running the same transaction is the documented
//! remedy for each; other errors end the load.

use super::stats::ErrorCounts;
use crate::error::Error;

/// SQL Server: "Transaction was deadlocked … and has been chosen as the deadlock victim."
const MSSQL_DEADLOCK: u32 = 1205;
/// SQL Server: "Lock request time out period exceeded."
const MSSQL_LOCK_TIMEOUT: u32 = 1222;

/// PostgreSQL SQLSTATE `serialization_failure`: "could not serialize access due to concurrent
/// update"; the documented remedy is to retry the whole transaction.
const PG_SERIALIZATION_FAILURE: &str = "40001";
/// PostgreSQL SQLSTATE `deadlock_detected`.
const PG_DEADLOCK: &str = "40P01";
/// PostgreSQL SQLSTATE `lock_not_available` (`lock_timeout` ran out, or `NOWAIT`).
const PG_LOCK_NOT_AVAILABLE: &str = "55P03";

/// The kind of a failed attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A deadlock victim.
    Deadlock,
    /// SQLite's `SQLITE_BUSY` or `SQLITE_LOCKED`, or PostgreSQL's serialization failure: the
    /// engine refused the transaction because of a concurrent one.
    Busy,
    /// A lock or command timeout.
    Timeout,
    /// Anything else.
    Other,
}

impl ErrorKind {
    /// The kind of `error`.
    pub fn of(error: &Error) -> ErrorKind {
        match error {
            Error::Sqlite(rusqlite::Error::SqliteFailure(e, _))
                if matches!(
                    e.code,
                    rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked
                ) =>
            {
                ErrorKind::Busy
            }
            Error::Server { code, .. } if *code == MSSQL_DEADLOCK => ErrorKind::Deadlock,
            Error::Server { code, .. } if *code == MSSQL_LOCK_TIMEOUT => ErrorKind::Timeout,
            Error::Postgres { code, .. } => match code.as_str() {
                PG_SERIALIZATION_FAILURE => ErrorKind::Busy,
                PG_DEADLOCK => ErrorKind::Deadlock,
                PG_LOCK_NOT_AVAILABLE => ErrorKind::Timeout,
                _ => ErrorKind::Other,
            },
            Error::Timeout(_) => ErrorKind::Timeout,
            _ => ErrorKind::Other,
        }
    }

    /// Whether re-running the whole transaction is the remedy.
    pub fn retryable(self) -> bool {
        matches!(self, ErrorKind::Busy | ErrorKind::Deadlock)
    }

    /// The kind as it is written in reports.
    pub fn keyword(self) -> &'static str {
        match self {
            ErrorKind::Deadlock => "deadlock",
            ErrorKind::Busy => "busy",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Other => "other",
        }
    }
}

impl ErrorCounts {
    /// Counts one failed attempt of `kind`.
    pub(crate) fn add(&mut self, kind: ErrorKind) {
        match kind {
            ErrorKind::Deadlock => self.deadlock += 1,
            ErrorKind::Busy => self.busy += 1,
            ErrorKind::Timeout => self.timeout += 1,
            ErrorKind::Other => self.other += 1,
        }
    }

    /// Adds `other`'s counts.
    pub(crate) fn merge(&mut self, other: &ErrorCounts) {
        self.deadlock += other.deadlock;
        self.busy += other.busy;
        self.timeout += other.timeout;
        self.other += other.other;
    }

    /// All failed attempts.
    pub fn total(&self) -> u64 {
        self.deadlock + self.busy + self.timeout + self.other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sqlite(code: i32) -> Error {
        Error::Sqlite(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(code),
            None,
        ))
    }

    fn server(code: u32) -> Error {
        Error::Server {
            code,
            message: "m".into(),
        }
    }

    #[test]
    fn kinds_of_backend_errors() {
        assert_eq!(
            ErrorKind::of(&sqlite(rusqlite::ffi::SQLITE_BUSY)),
            ErrorKind::Busy
        );
        assert_eq!(
            ErrorKind::of(&sqlite(rusqlite::ffi::SQLITE_LOCKED)),
            ErrorKind::Busy
        );
        // SQLITE_BUSY_SNAPSHOT is an extended busy code.
        assert_eq!(ErrorKind::of(&sqlite(517)), ErrorKind::Busy);
        assert_eq!(
            ErrorKind::of(&sqlite(rusqlite::ffi::SQLITE_FULL)),
            ErrorKind::Other
        );
        assert_eq!(ErrorKind::of(&server(1205)), ErrorKind::Deadlock);
        assert_eq!(ErrorKind::of(&server(1222)), ErrorKind::Timeout);
        assert_eq!(ErrorKind::of(&server(2627)), ErrorKind::Other);
        let pg = |code: &str| Error::Postgres {
            code: code.into(),
            message: "m".into(),
        };
        assert_eq!(ErrorKind::of(&pg("40001")), ErrorKind::Busy);
        assert_eq!(ErrorKind::of(&pg("40P01")), ErrorKind::Deadlock);
        assert_eq!(ErrorKind::of(&pg("55P03")), ErrorKind::Timeout);
        assert_eq!(ErrorKind::of(&pg("23505")), ErrorKind::Other);
        assert!(ErrorKind::of(&pg("40001")).retryable() && ErrorKind::of(&pg("40P01")).retryable());
        let timeout = Error::Timeout(std::time::Duration::from_secs(1));
        assert_eq!(ErrorKind::of(&timeout), ErrorKind::Timeout);
        assert_eq!(ErrorKind::of(&Error::msg("x")), ErrorKind::Other);
    }

    #[test]
    fn only_busy_and_deadlock_are_retried() {
        let retried: Vec<&str> = [
            ErrorKind::Deadlock,
            ErrorKind::Busy,
            ErrorKind::Timeout,
            ErrorKind::Other,
        ]
        .into_iter()
        .filter(|k| k.retryable())
        .map(ErrorKind::keyword)
        .collect();
        assert_eq!(retried, ["deadlock", "busy"]);
    }

    #[test]
    fn counts_add_and_merge() {
        let mut a = ErrorCounts::default();
        a.add(ErrorKind::Busy);
        a.add(ErrorKind::Busy);
        a.add(ErrorKind::Other);
        let mut b = ErrorCounts::default();
        b.add(ErrorKind::Deadlock);
        b.add(ErrorKind::Timeout);
        a.merge(&b);
        assert_eq!(
            a,
            ErrorCounts {
                deadlock: 1,
                busy: 2,
                timeout: 1,
                other: 1
            }
        );
        assert_eq!(a.total(), 5);
    }
}
