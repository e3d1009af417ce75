use dbbench_core::__private::BackendKind;
use dbbench_core::{db_bench, Result, Session};

/// Per-case backends and the benchmark's own scale divisors.
#[db_bench(
    backends = ["embedded", "mssql"],
    data_files = [1, 2],
    smoke_divisor = 65536,
    default_divisor = 1024
)]
#[case(name = "server", recovery = "bulk_logged", backends = "mssql")]
#[case(name = "anywhere", recovery = "full")]
async fn double_charges(db: &mut Session) -> Result<()> {
    db.lap("start");
    Ok(())
}

fn main() {
    let bench = &double_charges::BENCHMARK;
    assert_eq!(bench.run.smoke_divisor, 65536);
    assert_eq!(bench.run.default_divisor, 1024);
    let backends: Vec<(&str, &[BackendKind])> =
        bench.cells.iter().map(|c| (c.name, c.backends)).collect();
    assert_eq!(
        backends,
        [
            ("server__data_files_1", &[BackendKind::named("mssql")][..]),
            ("server__data_files_2", &[BackendKind::named("mssql")][..]),
            ("anywhere__data_files_1", &[][..]),
            ("anywhere__data_files_2", &[][..]),
        ]
    );
}
