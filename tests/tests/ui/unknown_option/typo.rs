use dbbench_core::{db_bench, Result, Session};

// A misspelt option suggests the nearest valid one.
#[db_bench(grwth = "1MB", data_files = 2)]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
