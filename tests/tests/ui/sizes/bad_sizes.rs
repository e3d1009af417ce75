use dbbench_core::{db_bench, Result, Session};

// Sizes without a unit, zero, and above 64TB.
#[db_bench(data_size = "100", log_size = "0MB", tempdb_files = 2, tempdb_size = "65TB", log_pregrow = "1.5GB")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
