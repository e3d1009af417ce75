use dbbench_core::{db_bench, Result, Session};

// Each data file needs at least one extent.
#[db_bench(data_size = "128KB", data_files = [1, 2, 4])]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
