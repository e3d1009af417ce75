use dbbench_core::{db_bench, Result, Session};

// `like` belongs in a case, `prefix` and `without` in `#[cases]`.
#[db_bench(like = "test_1")]
#[case(name = "test_1", growth = "1MB", prefix = "pg_", without = ["growth"])]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
