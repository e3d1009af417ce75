use dbbench_core::{db_bench, Result, Session};

// `#[not_on]` takes backend names, each with the reason.
#[db_bench(data_files = [1, 2])]
#[not_on(postgress = "PostgreSQL has no filegroups")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
