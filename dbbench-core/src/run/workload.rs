//! The articles' workloads as helpers a benchmark body calls, built on the session.

use crate::engine::registry::doubling_insert;
use crate::model::error::Result;
use crate::run::session::Session;

/// The VLF article's workload: doubles `charge` `loops` times with [`doubling_insert`], recording a
/// lap `loop N` after each, then records and returns the final row count as `rows_after`.
pub async fn double_charges(db: &mut Session, loops: u32) -> Result<i64> {
    for n in 1..=loops {
        let sql = doubling_insert(db.dialect(), n);
        db.execute(&sql).await?;
        db.lap(format!("loop {n}"));
    }
    let rows: i64 = db.query_scalar("SELECT count(*) FROM charge").await?;
    db.record_count("rows_after", rows);
    Ok(rows)
}
