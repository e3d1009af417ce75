use dbbench_core::{db_bench, Result, Session};

/// The smallest benchmark: one cell with the backend's defaults.
#[db_bench]
async fn minimal(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {
    let bench = &minimal::BENCHMARK;
    assert_eq!(bench.name, "minimal");
    assert_eq!(bench.title, "The smallest benchmark: one cell with the backend's defaults.");
    assert_eq!(bench.cells.len(), 1);
    assert_eq!(bench.cells[0].name, "default_config");
    assert_eq!(bench.run.repeat, 1);
    // The function is still an ordinary async function.
    let _future_of = |db: &'static mut Session| minimal(db);
}
