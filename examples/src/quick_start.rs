//! The README's first benchmark: does a 1 MB autogrowth cost more than 64 MB when the credit
//! table doubles?

use dbbench_core::fixture::doubling_insert;
use dbbench_core::{db_bench, Result, Session};

/// Doubling the charge table with small and large autogrowth.
#[db_bench(fixture = "credit", growth = ["1MB", "64MB"], ifi = false, repeat = 2)]
pub async fn double_charges(db: &mut Session) -> Result<()> {
    let sql = doubling_insert(db.dialect(), 1);
    db.execute(&sql).await?;
    db.lap("loop 1");
    Ok(())
}
