//! The README's first benchmark: does a 1 MB autogrowth cost more than 64 MB when the credit
//! table doubles?
//!
//! The work grows with the scale: the `credit` fixture holds 3,125 rows at `smoke`, 100,000 by
//! default and 1.6 million at `full`, and five doublings make it 32 times larger at every
//! scale, so even the smoke run of `cargo test` grows the 1 MB data file several times. Work that
//! is not relative to the fixture scales with `db.scale().count(full_scale_amount)`.

use dbbench_core::fixture::doubling_insert;
use dbbench_core::{db_bench, Result, Session};

/// Doubling the charge table five times with small and large autogrowth.
#[db_bench(
    fixture = "credit",
    data_size = "1MB",
    growth = ["1MB", "64MB"],
    ifi = false,
    repeat = 2
)]
pub async fn double_charges(db: &mut Session) -> Result<()> {
    for n in 1..=5 {
        let sql = doubling_insert(db.dialect(), n);
        db.execute(&sql).await?;
        db.lap(format!("loop {n}"));
    }
    Ok(())
}
