use dbbench_core::{db_bench, Result, Session};

// An option set twice in one case.
#[db_bench]
#[case(name = "big", growth = "1GB", growth = "2GB")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
