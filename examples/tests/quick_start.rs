//! A new user's first benchmark measures something at the scale `cargo test` runs it: at smoke,
//! 1 MB growth grows the data file more often than 64 MB growth does.

use dbbench_core::__internals::{
    embedded::EmbeddedBackend, exclusive, run_benchmark, Backend, RunContext,
};
use dbbench_core::results::{CellStatus, FileKind};
use dbbench_core::Scale;
use dbbench_examples::quick_start::double_charges;

#[test]
fn small_growth_grows_more_often_at_smoke_scale() {
    let _guard = exclusive();
    let work_dir = std::env::temp_dir().join(format!("dbbench-quick-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work_dir);
    let ctx = RunContext {
        scale: Scale::smoke(),
        volumes: Default::default(),
        work_dir,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let result = runtime.block_on(async {
        let mut backend = Backend::new(EmbeddedBackend::new());
        run_benchmark(&double_charges::BENCHMARK, None, &ctx, &mut backend)
            .await
            .unwrap()
    });
    let _ = std::fs::remove_dir_all(&ctx.work_dir);
    let growths = |cell: &str| -> u64 {
        let cell = result.cells.iter().find(|c| c.name == cell).unwrap();
        assert_eq!(cell.status, CellStatus::Ok, "{:?}", cell.status);
        let run = cell.measured().next().unwrap();
        run.files
            .iter()
            .filter(|f| f.kind == FileKind::Data)
            .map(|f| f.growth_events)
            .sum()
    };
    let (small, large) = (growths("growth_1mb"), growths("growth_64mb"));
    assert!(small > large, "1MB growth: {small} growths, 64MB: {large}");
}
