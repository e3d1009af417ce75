use dbbench_core::{db_bench, Result, Session};

// A volume named twice; more volumes than data files.
#[db_bench(data_files = 2, data_on = "fast,fast")]
async fn a(db: &mut Session) -> Result<()> {
    db.lap("a");
    Ok(())
}

#[db_bench(data_on = "fast,slow")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
