use dbbench_core::{db_bench, Result, Session};

// A product of lists limited to 1000 cells.
#[db_bench(data_files = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], maxdop = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], tempdb_files = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
