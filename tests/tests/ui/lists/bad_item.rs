use dbbench_core::{db_bench, Result, Session};

// Each item of a list is checked.
#[db_bench(data_files = [1, 2, 128], growth = ["1MB", "1MX"])]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
