//! Ownership: dbbench drops only databases it created and marked. A database is dbbench's when
//! both markers are there: the comment `dbbench:owned …` on the database and the table
//! `dbbench_marker.owner` inside it. Both are checked before any `DROP DATABASE`; a database of the same
//! name without them is refused with [`Error::NotOwned`] and left alone.

use super::connection::PostgresConnection;
use super::settings::PgSettings;
use crate::model::error::{Error, Result};
use crate::model::value::Value;

/// The start of the comment dbbench puts on its databases.
pub const COMMENT_PREFIX: &str = "dbbench:owned";

/// `name` as a quoted identifier.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// The statements that mark the database `name`: the comment runs in any database, the table in
/// `name` itself.
pub fn comment_sql(name: &str) -> String {
    // The owner (host, PID, process start time, boot, PID namespace) says who made it, as every
    // dbbench marker does; the sweep of an existing server reads it back (`stale`).
    let owner = crate::util::owner::Owner::this();
    format!(
        "COMMENT ON DATABASE {} IS '{COMMENT_PREFIX} pid={} host={} start={} boot={} pidns={} \
         machine={}'",
        quote_ident(name),
        owner.pid,
        owner.host.replace('\'', "''"),
        owner
            .start
            .map_or_else(|| "unknown".to_string(), |s| s.to_string()),
        owner
            .boot
            .as_deref()
            .unwrap_or("unknown")
            .replace('\'', "''"),
        owner
            .pid_ns
            .map_or_else(|| "unknown".to_string(), |n| n.to_string()),
        owner
            .machine
            .as_deref()
            .unwrap_or("unknown")
            .replace('\'', "''")
    )
}

/// The marker table, created inside the database.
pub fn table_sql() -> String {
    format!(
        "CREATE SCHEMA dbbench_marker; \
         CREATE TABLE dbbench_marker.owner (created_by text NOT NULL, pid integer NOT NULL, \
         created_at timestamptz NOT NULL DEFAULT now()); \
         INSERT INTO dbbench_marker.owner (created_by, pid) VALUES ('dbbench', {})",
        std::process::id()
    )
}

/// Whether a database called `name` exists.
pub async fn exists(admin: &mut PostgresConnection, name: &str) -> Result<bool> {
    let rows = admin
        .query(
            "SELECT 1 FROM pg_database WHERE datname = $1",
            &[Value::Text(name.into())],
        )
        .await?;
    Ok(!rows.is_empty())
}

/// Succeeds only when `name` carries both markers.
pub async fn verify(
    settings: &PgSettings,
    admin: &mut PostgresConnection,
    name: &str,
) -> Result<()> {
    let rows = admin
        .query(
            "SELECT coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database \
             WHERE datname = $1",
            &[Value::Text(name.into())],
        )
        .await?;
    let comment: String = match rows.first() {
        Some(row) => row.get(0)?,
        None => return Err(Error::msg(format!("database `{name}` does not exist"))),
    };
    if !comment.starts_with(COMMENT_PREFIX) {
        return Err(Error::NotOwned(name.to_string()));
    }
    let mut inside = settings.connect(name).await?;
    // Two queries: a subquery on a missing table fails at planning even when it would not run.
    let has_table: bool = inside
        .query(
            "SELECT to_regclass('dbbench_marker.owner') IS NOT NULL",
            &[],
        )
        .await?
        .first()
        .map(|r| r.get(0))
        .transpose()?
        .unwrap_or(false);
    let owned: i64 = if has_table {
        inside
            .query(
                "SELECT count(*) FROM dbbench_marker.owner WHERE created_by = 'dbbench'",
                &[],
            )
            .await?
            .first()
            .map(|r| r.get(0))
            .transpose()?
            .unwrap_or(0)
    } else {
        0
    };
    if owned == 0 {
        return Err(Error::NotOwned(name.to_string()));
    }
    Ok(())
}

/// Drops `name` after [`verify`]; `WITH (FORCE)` ends sessions a failed body left behind.
pub async fn drop_owned(
    settings: &PgSettings,
    admin: &mut PostgresConnection,
    name: &str,
) -> Result<()> {
    verify(settings, admin, name).await?;
    drop_unchecked(admin, name).await
}

/// Drops `name` without looking for markers: only for a database this process has just created
/// and perhaps could not mark.
pub(super) async fn drop_unchecked(admin: &mut PostgresConnection, name: &str) -> Result<()> {
    admin
        .batch(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            quote_ident(name)
        ))
        .await
}

/// The comment on database `name`, or `None` when there is no such database.
pub async fn comment_of(admin: &mut PostgresConnection, name: &str) -> Result<Option<String>> {
    let rows = admin
        .query(
            "SELECT coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database \
             WHERE datname = $1",
            &[Value::Text(name.into())],
        )
        .await?;
    rows.first().map(|row| row.get(0)).transpose()
}

/// Makes room for `name`: a leftover of an earlier run (both markers, its owner gone) is
/// dropped; one whose owner may still run (the same name from another host or container of the
/// same PID) and anything unmarked are refused.
pub async fn claim(
    settings: &PgSettings,
    admin: &mut PostgresConnection,
    name: &str,
) -> Result<()> {
    let Some(comment) = comment_of(admin, name).await? else {
        return Ok(());
    };
    if let Some(owner) = super::stale::owner_of(&comment) {
        owner
            .may_take(&format!("a database named {name}"))
            .map_err(Error::msg)?;
    }
    drop_owned(settings, admin, name).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_quoted() {
        assert_eq!(quote_ident("dbbench_a"), "\"dbbench_a\"");
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
        assert!(comment_sql("x").contains("IS 'dbbench:owned pid="));
        assert!(comment_sql("x").contains(" host="));
        assert!(comment_sql("x").contains(" start="));
    }
}
