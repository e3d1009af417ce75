use dbbench_core::{db_bench, Result, Session};

// Syntax errors are reported per entry and the rest is still checked.
#[db_bench(repeat = 3 warmup = 1, growth("1MB"), log_size = , data_files = 0)]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
