use dbbench_core::{db_bench, Result, Session};

// A keyword value without quotes.
#[db_bench(recovery = full, fixture = credit)]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
