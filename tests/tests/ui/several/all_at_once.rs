use dbbench_core::{db_bench, Result, Session};

// Every mistake is reported in one build, each at its own token.
#[db_bench(grwth = "1MB", log_size = "1 GB", repeat = 0, data_files = [1, 2], baseline = "data_files_3")]
#[case(growth = "1GB")]
#[case(name = "big", log_pregrow = "1GB", warmup = 1)]
fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
