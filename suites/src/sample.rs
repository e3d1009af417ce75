//! The sample suite: the smallest useful storage benchmark, and the one to copy when writing your
//! own. It doubles the credit `charge` table twice under each recovery model and records a lap per
//! doubling.

use dbbench_core::fixture::doubling_insert;
use dbbench_core::{db_bench, Result, Session};

/// Doubling the charge table under each recovery model.
#[db_bench(fixture = "credit", recovery = ["simple", "full"], repeat = 3)]
pub async fn doubling(db: &mut Session) -> Result<()> {
    for n in 1..=2 {
        let sql = doubling_insert(db.dialect(), n);
        db.execute(&sql).await?;
        db.lap(format!("loop {n}"));
    }
    let rows: i64 = db.query_scalar("SELECT count(*) FROM charge").await?;
    db.record_count("rows_after", rows);
    Ok(())
}
