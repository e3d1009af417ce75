use dbbench_core::{db_bench, Result, Session};

// A name far from every option lists the valid ones.
#[db_bench(speed = 10)]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
