use dbbench_core::{db_bench, Result, Session};

// A case is one configuration.
#[db_bench]
#[case(name = "big", growth = ["1GB", "2GB"])]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
