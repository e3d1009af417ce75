use dbbench_core::{db_bench, Result, Session};

// Two attributes would generate two modules of the same name.
#[db_bench(data_files = 1)]
#[db_bench(data_files = 8)]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
