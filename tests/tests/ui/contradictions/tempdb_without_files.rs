use dbbench_core::{db_bench, Result, Session};

// tempdb sizes need a number of tempdb files.
#[db_bench(tempdb_size = "1GB", tempdb_growth = "64MB")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
