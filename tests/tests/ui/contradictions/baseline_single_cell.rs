use dbbench_core::{db_bench, Result, Session};

// A baseline needs something to be compared with.
#[db_bench(baseline = "default_config")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
