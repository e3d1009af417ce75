use dbbench_core::{db_bench, Result, Session};

// A broken attribute still expands the module with its `BENCHMARK`, so code that refers to it
// shows no second error beside the real one.
mod my_bench {
    use super::*;

    #[db_bench(grwth = "1MB")]
    pub async fn my_bench(db: &mut Session) -> Result<()> {
        db.lap("start");
        Ok(())
    }
}

fn main() {
    let spec: &dbbench_core::BenchmarkSpec = &my_bench::my_bench::BENCHMARK;
    let _ = spec.name;
}
