use dbbench_core::{db_bench, Result, Session};

// A backend's own run options: only the precision target's, once per backend, with bounds that
// fit together.
#[db_bench(
    backends = ["embedded", "postgres"],
    precision = "5%",
    min_repeat = 5,
    max_repeat = 8,
    postgres(min_repeat = 10, repeat = 3, budgt = "5m"),
    postgres(budget = "5m"),
    mssql(budget = "5m"),
    embedded(),
    ifi(true)
)]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {}
