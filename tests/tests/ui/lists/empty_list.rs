use dbbench_core::{db_bench, Result, Session};

// An empty list would make no cells.
#[db_bench(data_files = [], growth = ["1MB"])]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
