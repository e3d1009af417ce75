use dbbench_core::{db_bench, Result, Session};

// bulk_logged exists only on SQL Server, also when a case limits its cells to the embedded engine.
#[db_bench(recovery = "bulk_logged", data_files = [1, 2])]
#[case(name = "server", backends = "mssql")]
#[case(name = "local", backends = ["embedded"])]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
