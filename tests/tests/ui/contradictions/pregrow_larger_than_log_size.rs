use dbbench_core::{db_bench, Result, Session};

// Only the case whose step exceeds the size is reported.
#[db_bench(log_size = "4GB")]
#[case(name = "small_steps", log_pregrow = "1GB")]
#[case(name = "big_steps", log_pregrow = "8GB")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
