use dbbench_core::{db_bench, Result, Session};

// A case lists the options a case accepts.
#[db_bench(data_files = 2)]
#[case(name = "big", log_grwoth = "1GB")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
