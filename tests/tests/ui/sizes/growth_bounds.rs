use dbbench_core::{db_bench, Result, Session};

// Growths below one extent, above 1TB, and percents out of range.
#[db_bench(growth = "32KB", log_growth = "2TB", tempdb_files = 2, tempdb_growth = "0%")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
