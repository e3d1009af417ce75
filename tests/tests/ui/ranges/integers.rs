use dbbench_core::{db_bench, Result, Session};

// Integers outside their ranges.
#[db_bench(data_files = 0, maxdop = 65, tempdb_files = -1, repeat = 0, warmup = 101)]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}


// A pilot fork of more rounds than any later fork may get, and of none.
#[db_bench(precision = "5%", fork_rounds = 5, postgres(fork_rounds = 0))]
async fn fork_rounds(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
