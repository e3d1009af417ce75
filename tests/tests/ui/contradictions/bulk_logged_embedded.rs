use dbbench_core::{db_bench, Result, Session};

// bulk_logged exists only on SQL Server.
#[db_bench(recovery = "bulk_logged", backends = ["embedded"])]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
