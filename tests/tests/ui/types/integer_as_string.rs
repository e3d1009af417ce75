use dbbench_core::{db_bench, Result, Session};

// An integer written as a string.
#[db_bench(data_files = "4")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
