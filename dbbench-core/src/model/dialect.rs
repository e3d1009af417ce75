//! The SQL dialect a backend speaks, so a benchmark body can choose its SQL.

/// The SQL dialect of a backend, so a body can choose its SQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite's SQL (parameters `?1`, `?2`…).
    Sqlite,
    /// Transact-SQL (parameters `@P1`, `@P2`…).
    TSql,
    /// PostgreSQL's SQL (parameters `$1`, `$2`…).
    Postgres,
}
