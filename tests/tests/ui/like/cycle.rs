use dbbench_core::{db_bench, Result, Session};

// Cases that start from each other in a circle have nothing to start from.
#[db_bench]
#[case(name = "a", like = "c", growth = "1MB")]
#[case(name = "b", like = "a", growth = "2MB")]
#[case(name = "c", like = "b", growth = "3MB")]
#[case(name = "d", like = "d", growth = "4MB")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
