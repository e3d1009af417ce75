use dbbench_core::{db_bench, Result, Session};

// A size without quotes: the message quotes it.
#[db_bench(growth = 1MB, data_size = 100GB)]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
