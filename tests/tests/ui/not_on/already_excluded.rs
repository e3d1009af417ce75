use dbbench_core::{db_bench, Result, Session};

// `backends` already keeps the benchmark off PostgreSQL: nothing to explain there.
#[db_bench(backends = ["embedded", "mssql"], data_files = [1, 2])]
#[not_on(postgres = "PostgreSQL has no filegroups")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
