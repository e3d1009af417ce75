use dbbench_core::{db_bench, Result, Session};

// Options given without `= value`.
#[db_bench(ifi, growth, repeat)]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
