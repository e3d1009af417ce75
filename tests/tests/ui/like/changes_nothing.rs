use dbbench_core::{db_bench, Result, Session};

// A case like another with nothing changed would measure the same configuration twice.
#[db_bench]
#[case(name = "test_2", growth = "1MB", ifi = true)]
#[case(name = "copy", like = "test_2")]
#[case(name = "same", like = "test_2", ifi = true)]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
