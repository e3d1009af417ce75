use dbbench_core::{db_bench, Result, Session};

// The reason is what the outputs show instead of the table: it must say something.
#[db_bench(data_files = [1, 2])]
#[not_on(postgres = "  ")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
