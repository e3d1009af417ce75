use dbbench_core::{db_bench, Result, Session};

// A size with an unknown unit.
#[db_bench(growth = "1 MX")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
