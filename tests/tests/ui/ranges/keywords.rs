use dbbench_core::{db_bench, Result, Session};

// Keyword values that do not exist, with the nearest suggested.
#[db_bench(recovery = "fulll", fixture = "credits", order = "random", backends = ["oracle"])]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
