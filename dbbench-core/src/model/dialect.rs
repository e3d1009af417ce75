//! The SQL dialect a backend speaks, so a benchmark body can choose its SQL.

/// The SQL dialect of a backend, so a body can choose its SQL.
///
/// A new backend may bring a new dialect, so a `match` on it needs a `_` arm: SQL that is
/// portable where there is some, or an error naming the dialect the body has no SQL for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Dialect {
    /// SQLite's SQL (parameters `?1`, `?2`…).
    Sqlite,
    /// Transact-SQL (parameters `@P1`, `@P2`…).
    TSql,
    /// PostgreSQL's SQL (parameters `$1`, `$2`…).
    Postgres,
}
