use dbbench_core::{db_bench, Result, Session};

// Backends: known names, each once, at least one.
#[db_bench(backends = ["mssql", "mssql", "oracle"])]
async fn a(db: &mut Session) -> Result<()> {
    db.lap("a");
    Ok(())
}

#[db_bench(backends = [])]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
