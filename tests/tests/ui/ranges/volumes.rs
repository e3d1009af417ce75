use dbbench_core::{db_bench, Result, Session};

// Volume names: lowercase, no empty names, one volume for the log.
#[db_bench(data_on = "Fast,slow", log_on = "fast,slow")]
async fn a(db: &mut Session) -> Result<()> {
    db.lap("a");
    Ok(())
}

#[db_bench(data_on = "fast,,slow")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
