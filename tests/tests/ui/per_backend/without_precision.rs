use dbbench_core::{db_bench, Result, Session};

// A backend's run options bound the precision target, so they need one; a backend where the
// question does not apply runs nothing to bound.
#[db_bench(repeat = 3, postgres(budget = "5m"), mssql = "5m")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

#[db_bench(precision = "5%", postgres(budget = "5m"))]
#[not_on(postgres = "PostgreSQL has no filegroups")]
async fn equal_shares(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
