use dbbench_core::{db_bench, Result};

// The body receives the session.
#[db_bench]
async fn double_charges() -> Result<()> {
    Ok(())
}

fn main() {}
