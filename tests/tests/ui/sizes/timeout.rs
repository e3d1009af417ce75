use dbbench_core::{db_bench, Result, Session};

// Durations need a unit and must be positive.
#[db_bench(timeout = "30 sec")]
async fn a(db: &mut Session) -> Result<()> {
    db.lap("a");
    Ok(())
}

#[db_bench(timeout = "0s")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
