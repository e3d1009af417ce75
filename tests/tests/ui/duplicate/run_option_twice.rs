use dbbench_core::{db_bench, Result, Session};

// A run option set twice.
#[db_bench(repeat = 3, repeat = 5)]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
