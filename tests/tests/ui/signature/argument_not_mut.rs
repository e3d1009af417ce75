use dbbench_core::{db_bench, Result, Session};

// The session is borrowed mutably.
#[db_bench]
async fn double_charges(db: &Session) -> Result<()> {
    let _ = db.cell();
    Ok(())
}

fn main() {}
