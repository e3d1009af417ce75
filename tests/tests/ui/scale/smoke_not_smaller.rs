use dbbench_core::{db_bench, Result, Session};

// Smoke must divide the articles' sizes at least as much as the default scale.
#[db_bench(smoke_divisor = 64, default_divisor = 128)]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

// A divisor that is not written counts with its default: 512 for smoke.
#[db_bench(default_divisor = 1024)]
async fn halve_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

// ... and 16 for the default scale.
#[db_bench(smoke_divisor = 8)]
async fn triple_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
