//! The table of Paul Randal's benchmarking series: one row of about 4.1 KB per insert, so each row
//! fills most of an 8 KB page (`c3 char(4100)` on SQL Server and PostgreSQL, a 4100-byte blob on SQLite and MariaDB), and a
//! concurrent load that inserts such rows in transactions of ten.

use dbbench_core::driver::{Load, LoadReport, Op, Work};
use dbbench_core::units::PAGE;
use dbbench_core::{Connection, Dialect, Error, Result, Scale, ScaleKind, Session};

/// Bytes of the payload column of one row.
pub const ROW_PAYLOAD_BYTES: u64 = 4100;

/// `CREATE TABLE big` in `dialect` (one or more statements, for `batch`); rows get their key and
/// payload from column defaults, as the article's `INSERT … DEFAULT VALUES` does. A dialect this
/// suite has no table for (one a later backend brings) is an error that names it: the defaults
/// have no portable form.
pub fn create_table(dialect: Dialect) -> Result<&'static str> {
    Ok(match dialect {
        Dialect::Sqlite => {
            "CREATE TABLE big (c1 INTEGER PRIMARY KEY, \
             c2 TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP, \
             c3 BLOB NOT NULL DEFAULT (zeroblob(4100)))"
        }
        Dialect::TSql => {
            "CREATE TABLE dbo.big (c1 bigint IDENTITY NOT NULL, \
             c2 datetime NOT NULL DEFAULT GETDATE(), \
             c3 char(4100) NOT NULL DEFAULT 'a')"
        }
        // char(4100) pads to 4100 bytes as on SQL Server, but PostgreSQL would compress the
        // blanks or move them out of line: PLAIN storage keeps each row whole in its page.
        Dialect::Postgres => {
            "CREATE TABLE big (c1 bigint GENERATED ALWAYS AS IDENTITY, \
             c2 timestamp NOT NULL DEFAULT now(), \
             c3 char(4100) NOT NULL DEFAULT 'a'); \
             ALTER TABLE big ALTER COLUMN c3 SET STORAGE PLAIN"
        }
        // MariaDB's char holds at most 255 characters, so the payload is a blob filled by its
        // default expression; 4.1 KB rows stay in their page (InnoDB's DYNAMIC rows move a column
        // out only when the row passes half a 16 KB page), three to a page rather than one.
        mysql if mysql.name() == "mysql" => {
            "CREATE TABLE big (c1 bigint NOT NULL AUTO_INCREMENT PRIMARY KEY, \
             c2 datetime NOT NULL DEFAULT CURRENT_TIMESTAMP, \
             c3 blob NOT NULL DEFAULT (repeat('a', 4100)))"
        }
        other => {
            return Err(Error::msg(format!(
                "big_rows has no `CREATE TABLE big` for the {other:?} dialect"
            )))
        }
    })
}

/// The insert of one row.
pub fn insert_row(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::TSql => "INSERT INTO dbo.big DEFAULT VALUES",
        // MySQL's grammar has no DEFAULT VALUES: an empty column list takes every default.
        mysql if mysql.name() == "mysql" => "INSERT INTO big () VALUES ()",
        // The standard form, as SQLite and PostgreSQL take it (and a later dialect likely does).
        _ => "INSERT INTO big DEFAULT VALUES",
    }
}

/// Connections for a load whose article used `full` of them: all of them at `full` scale, at most
/// 16 at the default scale and 4 at `smoke` (a 2-core machine gains nothing from more threads
/// queuing for SQLite's single write lock, and the smaller tables would give each only a few rows).
pub fn workers_at(scale: &Scale, full: u32) -> u32 {
    match scale.kind() {
        ScaleKind::Full => full,
        ScaleKind::Smoke => full.min(4),
        ScaleKind::Default | ScaleKind::Factor => full.min(16),
    }
}

/// Rows that make a table of `table_bytes`: one row per 8 KB page.
pub fn rows_for(table_bytes: u64) -> u64 {
    table_bytes.div_ceil(PAGE).max(1)
}

/// Creates the table, then `workers` connections insert `rows` rows in transactions of ten, in
/// equal shares; records `rows_after` and returns the driver's report.
pub async fn populate(db: &mut Session, workers: u32, rows: u64) -> Result<LoadReport> {
    let dialect = db.dialect();
    db.batch(create_table(dialect)?).await?;
    let insert = insert_row(dialect);
    let load = Load::new(workers, Work::Statements(rows)).statements_per_transaction(10);
    let report = db
        .load(load)
        .run(async move |conn: &mut Connection, _op: Op| conn.execute(insert).await)
        .await?;
    let count: i64 = db.query_scalar("SELECT count(*) FROM big").await?;
    db.record_count("rows_after", count);
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_follow_the_scale() {
        assert_eq!(workers_at(&Scale::full(), 128), 128);
        assert_eq!(workers_at(&Scale::default_scale(), 128), 16);
        assert_eq!(workers_at(&Scale::smoke(), 16), 4);
    }

    #[test]
    fn one_row_per_page() {
        assert_eq!(rows_for(1 << 30), 131_072);
        assert_eq!(rows_for(1), 1);
    }
}
