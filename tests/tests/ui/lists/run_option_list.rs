use dbbench_core::{db_bench, Result, Session};

// Only storage options make a matrix.
#[db_bench(data_files = [1, 2], repeat = [1, 3], fixture = ["none", "credit"])]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
