use dbbench_core::{db_bench, Result, Session};

// The runner calls one fixed signature.
#[db_bench]
async fn double_charges<T: Default>(db: &mut Session) -> Result<()> {
    let _ = T::default();
    db.lap("start");
    Ok(())
}

fn main() {}
