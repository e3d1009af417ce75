use dbbench_core::{db_bench, Result, Session};

// The values of a list name the cells, so a case made from another cannot leave it unset.
#[db_bench(data_files = [1, 2], data_size = "1GB")]
#[case(name = "test_1", growth = "1MB", backends = ["embedded", "mssql"])]
#[cases(like = ["test_1"], prefix = "pg_", backends = "postgres", without = ["growth", "data_files"])]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
