use dbbench_core::{db_bench, Result, Session};

// A case cannot replace a list of #[db_bench].
#[db_bench(growth = ["1MB", "64MB"])]
#[case(name = "big", growth = "1GB")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
