use dbbench_core::{db_bench, Result, Session};

// Two values that give the same cell name.
#[db_bench(growth = ["1MB", "64MB", "1mb"])]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
