use dbbench_core::{db_bench, Result, Session};

// The runner passes the session and nothing else.
#[db_bench]
async fn double_charges(db: &mut Session, rows: u64) -> Result<()> {
    db.record_count("rows", rows as i64);
    Ok(())
}

fn main() {}
