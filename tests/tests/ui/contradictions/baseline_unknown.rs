use dbbench_core::{db_bench, Result, Session};

// The baseline must name a cell.
#[db_bench(data_files = [1, 8], baseline = "data_files_2")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
