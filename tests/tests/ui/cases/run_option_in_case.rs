use dbbench_core::{db_bench, Result, Session};

// Run options apply to every cell, so they belong in #[db_bench].
#[db_bench(repeat = 3)]
#[case(name = "big", growth = "1GB", warmup = 2, fixture = "credit")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
