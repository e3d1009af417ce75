use dbbench_core::{db_bench, Result, Session};

// The runner awaits the body, so it must be async.
#[db_bench]
fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
