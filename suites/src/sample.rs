//! The sample suite: the smallest useful storage benchmark, and the one to copy when writing your
//! own. It doubles the credit `charge` table twice under each recovery model and records a lap per
//! doubling.

use dbbench_core::fixture::double_charges;
use dbbench_core::{db_bench, Result, Session};

/// Doubling the charge table under each recovery model.
#[db_bench(fixture = "credit", recovery = ["simple", "full"], repeat = 3)]
pub async fn doubling(db: &mut Session) -> Result<()> {
    double_charges(db, 2).await?;
    Ok(())
}
