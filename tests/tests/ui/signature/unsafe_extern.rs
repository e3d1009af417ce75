use dbbench_core::{db_bench, Result, Session};

// Qualifiers the runner cannot honour.
#[db_bench]
async unsafe fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

#[db_bench]
const fn constant(db: &mut Session) -> Result<()> {
    let _ = db;
    Ok(())
}

fn main() {}
