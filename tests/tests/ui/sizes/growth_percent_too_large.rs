use dbbench_core::{db_bench, Result, Session};

// A percent growth above 1000%.
#[db_bench(log_growth = "1500%")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
