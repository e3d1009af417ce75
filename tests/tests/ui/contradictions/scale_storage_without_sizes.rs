use dbbench_core::{db_bench, Result, Session};

// scale_storage would do nothing.
#[db_bench(scale_storage = true, growth = "10%")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
