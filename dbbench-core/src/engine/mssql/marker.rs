//! The ownership marker: how dbbench proves, before any `DROP DATABASE`, that a database is one it
//! created. The marker is the extended property `dbbench_owner` on the database itself, added with
//! `EXEC [db].sys.sp_addextendedproperty` (a three-part procedure name runs in that database).
//! A server that speaks TDS may run that procedure in the current database instead (Babelfish put
//! it on master, so teardown later refused to drop the database and the next run found a stale
//! property on master); so the marker is always read back from inside the new database. When the
//! property cannot be held there, dbbench falls back to a marker table it creates inside the
//! database (`dbo.__dbbench_owner`, with host, pid and start time) and reads that back. When
//! neither can be verified the database is dropped (this connection has just created it, under a
//! `dbbench_` name) and the cell is refused before any work.

use super::tsql::{ident, literal};
use super::MssqlConnection;
use crate::model::error::{Error, Result};

/// The name of the extended property that marks a database as created by dbbench.
pub const OWNER_PROPERTY: &str = "dbbench_owner";

/// The marker table used where the property cannot be held inside the database.
pub const MARKER_TABLE: &str = "__dbbench_owner";

/// The marker text of this process: unique per host, process and start time.
pub fn marker_text(host: &str, pid: u32, started_unix_s: u64) -> String {
    format!(
        "created by dbbench {} on {host} (pid {pid}, started {started_unix_s})",
        env!("CARGO_PKG_VERSION")
    )
}

/// Adds the property to database `db`.
pub fn add_property_sql(db: &str, marker: &str) -> String {
    format!(
        "EXEC {}.sys.sp_addextendedproperty @name = {}, @value = {};",
        ident(db),
        literal(OWNER_PROPERTY),
        literal(marker)
    )
}

/// Reads the property from inside database `db` (no row when it has none).
pub fn read_property_sql(db: &str) -> String {
    format!(
        "SELECT CAST(value AS nvarchar(4000)) AS marker FROM {}.sys.extended_properties \
         WHERE class = 0 AND name = {};",
        ident(db),
        literal(OWNER_PROPERTY)
    )
}

/// Removes a property this process put on master by mistake (a server that ran the three-part
/// procedure in the current database): only the exact marker of this process is removed.
pub fn stray_property_cleanup_sql(marker: &str) -> String {
    format!(
        "IF EXISTS (SELECT 1 FROM master.sys.extended_properties WHERE class = 0 AND name = {0} \
         AND CAST(value AS nvarchar(4000)) = {1}) EXEC master.sys.sp_dropextendedproperty @name = {0};",
        literal(OWNER_PROPERTY),
        literal(marker)
    )
}

/// Creates the marker table inside `db` (three-part names, so it cannot land elsewhere).
pub fn add_table_sql(db: &str, marker: &str, host: &str, pid: u32, started: u64) -> String {
    let table = format!("{}.dbo.{}", ident(db), ident(MARKER_TABLE));
    format!(
        "CREATE TABLE {table} (marker nvarchar(4000) NOT NULL, host nvarchar(256) NOT NULL, \
         pid int NOT NULL, started_unix_s bigint NOT NULL);\n\
         INSERT INTO {table} (marker, host, pid, started_unix_s) VALUES ({}, {}, {pid}, {started});",
        literal(marker),
        literal(host)
    )
}

/// Reads the marker table of `db` (error 208 when it does not exist).
pub fn read_table_sql(db: &str) -> String {
    format!(
        "SELECT CAST(marker AS nvarchar(4000)) AS marker FROM {}.dbo.{};",
        ident(db),
        ident(MARKER_TABLE)
    )
}

/// Where the marker of a database was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// The extended property inside the database.
    Property(String),
    /// The marker table inside the database.
    Table(String),
}

/// The first marker value in `rows`, if any.
fn first_marker(rows: &[crate::model::value::Row]) -> Option<String> {
    rows.first()
        .and_then(|r| r.get::<Option<String>>(0).ok().flatten())
        .map(|m| m.trim().to_string())
        .filter(|m| !m.is_empty())
}

/// The marker of existing database `db`, looked up inside it: the property, else the table.
/// `Err` carries what each lookup said, for the refusal.
pub async fn find(conn: &mut MssqlConnection, db: &str) -> std::result::Result<Held, String> {
    let property = match conn.query(&read_property_sql(db), &[]).await {
        Ok(rows) => match first_marker(&rows) {
            Some(m) => return Ok(Held::Property(m)),
            None => "no dbbench_owner property inside the database".to_string(),
        },
        Err(e) => e.to_string(),
    };
    let table = match conn.query(&read_table_sql(db), &[]).await {
        Ok(rows) => match first_marker(&rows) {
            Some(m) => return Ok(Held::Table(m)),
            None => format!("dbo.{MARKER_TABLE} is empty"),
        },
        Err(e) => e.to_string(),
    };
    Err(format!("property: {property}; table: {table}"))
}

/// Marks the database `db` that this connection has just created, and proves the mark is inside
/// it. Returns where it is held; `Err` when no marker could be verified (the caller drops the
/// database it just created and refuses the cell).
pub async fn mark(
    conn: &mut MssqlConnection,
    db: &str,
    marker: &str,
    host: &str,
    pid: u32,
    started: u64,
) -> Result<Held> {
    let added = conn.batch(&add_property_sql(db, marker)).await;
    let property = match conn.query(&read_property_sql(db), &[]).await {
        Ok(rows) if first_marker(&rows).as_deref() == Some(marker) => {
            return Ok(Held::Property(marker.to_string()))
        }
        Ok(_) => match added {
            Ok(()) => "sp_addextendedproperty was accepted, but the property is not inside the \
                       new database"
                .to_string(),
            Err(e) => e.to_string(),
        },
        Err(e) => e.to_string(),
    };
    // The property may have landed on master: remove it there, or the next run would find it.
    let _ = conn.batch(&stray_property_cleanup_sql(marker)).await;
    let created = conn
        .batch(&add_table_sql(db, marker, host, pid, started))
        .await;
    let table = match conn.query(&read_table_sql(db), &[]).await {
        Ok(rows) if first_marker(&rows).as_deref() == Some(marker) => {
            return Ok(Held::Table(marker.to_string()))
        }
        Ok(_) => "the marker table holds no marker of this run".to_string(),
        Err(e) => match created {
            Err(c) => c.to_string(),
            Ok(()) => e.to_string(),
        },
    };
    Err(Error::Unsupported {
        option: "database",
        backend: "mssql",
        reason: format!(
            "this server cannot hold dbbench's ownership marker inside the new database \
             (property: {property}; table: {table}), so dbbench could not later prove the \
             database is its own before dropping it: it dropped the database it had just created \
             and runs nothing on this server"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_statements() {
        let marker = marker_text("bench-host", 4242, 1_780_000_000);
        assert!(marker.contains("bench-host (pid 4242, started 1780000000)"));
        insta::assert_snapshot!([
            add_property_sql("dbbench_a", "m"),
            read_property_sql("dbbench_a"),
            stray_property_cleanup_sql("m"),
            add_table_sql("dbbench_a", "m", "bench-host", 4242, 1_780_000_000),
            read_table_sql("dbbench_a"),
        ]
        .join("\n"));
    }
}
