use dbbench_core::{db_bench, Result, Session};

// Each case becomes a test, so its name must be unique.
#[db_bench]
#[case(name = "big", growth = "1GB")]
#[case(name = "big", growth = "2GB")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
