use dbbench_core::{db_bench, Result, Session};

// `#[case]` takes a parenthesised list.
#[db_bench]
#[case = "big"]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
