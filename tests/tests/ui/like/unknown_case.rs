use dbbench_core::{db_bench, Result, Session};

// `like` names a case of the same function; a misspelt name is shown with the nearest one.
#[db_bench]
#[case(name = "test_3", growth = "1024MB")]
#[case(name = "test_4", like = "tset_3", log_size = "32000MB")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
