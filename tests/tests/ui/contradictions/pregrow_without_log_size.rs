use dbbench_core::{db_bench, Result, Session};

// log_pregrow grows the log to log_size.
#[db_bench(log_pregrow = "1GB")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
