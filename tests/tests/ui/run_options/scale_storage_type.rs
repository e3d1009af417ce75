use dbbench_core::{db_bench, Result, Session};

// scale_storage is a boolean; baseline a string.
#[db_bench(scale_storage = 1, baseline = data_files_1)]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
