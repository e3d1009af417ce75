use dbbench_core::{db_bench, Result, Session};

/// Doubling the charge table.
#[db_bench(growth = "1MB", ifi = false, data_files = [1, 2, 4, 8], repeat = 3, fixture = "credit")]
#[case(name = "test_3", growth = "1024MB", log_growth = "1024MB")]
#[case(name = "test_4", growth = "1024MB", log_pregrow = "4000MB", log_size = "32000MB")]
async fn double_charges(db: &mut Session) -> Result<()> {
    for n in 1..=5 {
        db.lap(format!("loop {n}"));
    }
    Ok(())
}

fn main() {
    let names: Vec<&str> = double_charges::BENCHMARK.cells.iter().map(|c| c.name).collect();
    assert_eq!(
        names,
        [
            "test_3__data_files_1",
            "test_3__data_files_2",
            "test_3__data_files_4",
            "test_3__data_files_8",
            "test_4__data_files_1",
            "test_4__data_files_2",
            "test_4__data_files_4",
            "test_4__data_files_8",
        ]
    );
}
