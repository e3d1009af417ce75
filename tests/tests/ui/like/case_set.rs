use dbbench_core::{db_bench, Result, Session};

// `#[cases]` makes a case from each case in `like`, named with `prefix` in front.
#[db_bench(recovery = "full", data_files = [1, 2])]
#[case(name = "test_1", growth = "1MB", backends = ["embedded", "mssql"])]
#[cases(prefix = "pg_", backends = "postgres")]
#[cases(like = ["test_1"], backends = "postgres")]
#[cases(like = ["test_1"], prefix = "PG", backends = "postgres")]
#[cases(like = [], prefix = "a_", name = "x", backends = "postgres")]
#[cases(like = ["test_1"], prefix = "b_", without = ["grwth", "maxdop", "data_files"], backends = "postgres")]
#[cases(like = ["test_1"], prefix = "c_", growth = ["1MB", "2MB"])]
#[cases]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
