//! The few statements the driver itself sends, in each dialect: transaction control, the lock
//! wait, and the warm-up query that runs before the measured start.

use crate::connection::Dialect;
use std::time::Duration;

/// Transaction control and warm-up in one dialect.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DriverSql {
    /// Starts a transaction. SQLite's is deferred, so read-only transactions do not serialise;
    /// a transaction that writes first takes the write lock at its first statement.
    pub begin: &'static str,
    /// Commits it.
    pub commit: &'static str,
    /// Rolls back whatever is open; harmless when the server already rolled back.
    pub rollback: &'static str,
    /// Runs once per connection before the measured start. On SQLite it reads the schema, which
    /// a new connection otherwise does inside its first measured statement.
    pub warm_up: &'static str,
}

impl DriverSql {
    /// The statements of `dialect`.
    pub(crate) fn of(dialect: Dialect) -> DriverSql {
        match dialect {
            Dialect::Sqlite => DriverSql {
                begin: "BEGIN",
                commit: "COMMIT",
                rollback: "ROLLBACK",
                warm_up: "SELECT count(*) FROM sqlite_schema",
            },
            Dialect::TSql => DriverSql {
                begin: "BEGIN TRANSACTION",
                commit: "COMMIT TRANSACTION",
                rollback: "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION",
                warm_up: "SELECT 1",
            },
            // ROLLBACK outside a transaction only warns, so it is safe after any failure.
            Dialect::Postgres => DriverSql {
                begin: "BEGIN",
                commit: "COMMIT",
                rollback: "ROLLBACK",
                warm_up: "SELECT 1",
            },
        }
    }
}

/// The statement that makes a connection wait at most `wait` for a lock.
pub(crate) fn lock_timeout(dialect: Dialect, wait: Duration) -> String {
    let ms = wait.as_millis();
    match dialect {
        Dialect::Sqlite => format!("PRAGMA busy_timeout = {ms}"),
        Dialect::TSql => format!("SET LOCK_TIMEOUT {ms}"),
        Dialect::Postgres => format!("SET lock_timeout = {ms}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_per_dialect() {
        let sqlite = DriverSql::of(Dialect::Sqlite);
        assert_eq!((sqlite.begin, sqlite.commit), ("BEGIN", "COMMIT"));
        let tsql = DriverSql::of(Dialect::TSql);
        assert!(tsql.rollback.starts_with("IF @@TRANCOUNT > 0"));
        let wait = Duration::from_millis(250);
        assert_eq!(
            lock_timeout(Dialect::Sqlite, wait),
            "PRAGMA busy_timeout = 250"
        );
        assert_eq!(lock_timeout(Dialect::TSql, wait), "SET LOCK_TIMEOUT 250");
        let pg = DriverSql::of(Dialect::Postgres);
        assert_eq!((pg.begin, pg.rollback), ("BEGIN", "ROLLBACK"));
        assert_eq!(
            lock_timeout(Dialect::Postgres, wait),
            "SET lock_timeout = 250"
        );
    }
}
