use dbbench_core::{db_bench, Result, Session};

// A case needs a name, and the options it changes.
#[db_bench]
#[case(growth = "1GB")]
#[case]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
