use dbbench_core::{db_bench, Result, Session};

// `name` is for cases; the benchmark is named after its function.
#[db_bench(name = "doubling")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
