use dbbench_core::{db_bench, Result, Session};

// A case's backends must share one with the benchmark's, or its cells never run.
#[db_bench(backends = ["embedded"], data_files = [1, 2])]
#[case(name = "server", backends = "mssql")]
#[case(name = "both", backends = ["embedded", "mssql"])]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
