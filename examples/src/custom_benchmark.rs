//! A custom benchmark: building an index on the charge table with the log pre-sized or left to
//! grow, across two data-file counts, with SQL chosen by dialect.

use dbbench_core::{db_bench, Dialect, Result, Session};

/// Building an index on `charge (member_no, charge_dt)`.
#[db_bench(fixture = "credit", data_files = [1, 2], recovery = "full", repeat = 2)]
#[case(name = "log_grows", log_size = "1MB", log_growth = "1MB")]
#[case(name = "log_presized", log_size = "64MB", log_growth = "64MB")]
pub async fn index_build(db: &mut Session) -> Result<()> {
    let sql = match db.dialect() {
        Dialect::TSql => "CREATE INDEX charge_member ON dbo.charge (member_no, charge_dt)",
        // `Dialect` is non-exhaustive: a backend added later may bring a dialect of its own, so
        // the `_` arm gives the portable SQL (SQLite and PostgreSQL take it as it is).
        _ => "CREATE INDEX charge_member ON charge (member_no, charge_dt)",
    };
    db.execute(sql).await?;
    db.lap("index built");
    let rows: i64 = db.query_scalar("SELECT count(*) FROM charge").await?;
    db.record_count("rows_indexed", rows);
    Ok(())
}
