use dbbench_core::{db_bench, Result, Session};

// Case names become test names.
#[db_bench]
#[case(name = "Test3")]
#[case(name = "match")]
#[case(name = "3rd")]
#[case(name = 4)]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
