use dbbench_core::{db_bench, Result, Session};

// The second `growth` is reported; a list tries several values.
#[db_bench(growth = "1MB", ifi = true, growth = "64MB")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
