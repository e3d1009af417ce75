use dbbench_core::{db_bench, Result, Session};

// The divisors apply to the whole benchmark; only `backends` may differ per case.
#[db_bench(smoke_divisor = 4096)]
#[case(name = "big", growth = "1GB", default_divisor = 64)]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
