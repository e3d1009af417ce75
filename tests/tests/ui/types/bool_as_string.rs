use dbbench_core::{db_bench, Result, Session};

// A boolean written as a string.
#[db_bench(ifi = "yes")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
