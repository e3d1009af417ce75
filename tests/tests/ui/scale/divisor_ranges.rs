use dbbench_core::{db_bench, Result, Session};

// The divisors are integers from 1 to 1048576.
#[db_bench(smoke_divisor = 0, default_divisor = 2097152)]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

#[db_bench(smoke_divisor = "4096", default_divisor = [16, 64])]
async fn halve_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
