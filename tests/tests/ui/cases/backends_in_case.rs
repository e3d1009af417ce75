use dbbench_core::{db_bench, Result, Session};

// A case's backends take the same values as the benchmark's: known names, each once, at least one.
#[db_bench(data_files = 2)]
#[case(name = "twice", backends = ["mssql", "mssql"])]
#[case(name = "unknown", backends = "oracle")]
#[case(name = "empty", backends = [])]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
