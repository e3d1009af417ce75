use dbbench_core::{db_bench, Result, Session};

#[db_bench(precision = "5%", repeat = 3, growth = ["1MB", "64MB"])]
async fn fixed_and_adaptive(_db: &mut Session) -> Result<()> {
    Ok(())
}

#[db_bench(max_repeat = 10, growth = ["1MB", "64MB"])]
async fn bound_without_target(_db: &mut Session) -> Result<()> {
    Ok(())
}

#[db_bench(precision = "5 %", cache = "cool", growth = ["1MB", "64MB"])]
async fn bad_values(_db: &mut Session) -> Result<()> {
    Ok(())
}

fn main() {}
