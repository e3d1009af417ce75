//! The per-cell snapshot check that a process running only some cells makes (a filtered
//! `cargo test`, every nextest process), against the real committed smoke snapshot of the VLF
//! suite: an unchanged cell matches its part, a changed deterministic value does not.

use dbbench_core::__internals::{
    check_cell, embedded::EmbeddedBackend, exclusive, run_benchmark, Backend, CellCheck,
    RunContext, TimingMode, Tolerance,
};
use dbbench_core::Scale;
use dbbench_suites::vlf;

#[test]
fn one_cell_is_checked_against_its_part_of_the_committed_snapshot() {
    let _guard = exclusive();
    let work_dir =
        std::env::temp_dir().join(format!("dbbench-snapshot-cells-{}", std::process::id()));
    let ctx = RunContext {
        scale: Scale::smoke(),
        volumes: Default::default(),
        work_dir: work_dir.clone(),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let bench = &vlf::doubling::BENCHMARK;
    let mut result = runtime.block_on(async {
        let mut backend = Backend::new(EmbeddedBackend::new());
        run_benchmark(bench, Some(&["test_3"]), &ctx, &mut backend)
            .await
            .unwrap()
    });
    let _ = std::fs::remove_dir_all(&work_dir);
    let tolerance = Tolerance {
        mode: TimingMode::Ignore,
        ..Tolerance::default()
    };
    let check = |result: &dbbench_core::results::BenchmarkResult| {
        check_cell(
            result,
            "test_3",
            &bench.file_stem(),
            bench.manifest_dir,
            &ctx.work_dir,
            &tolerance,
        )
    };
    assert!(matches!(check(&result), CellCheck::Matches(_)));
    // test_1 did not run here: it has no current results to check.
    assert!(matches!(
        check_cell(
            &result,
            "test_1",
            &bench.file_stem(),
            bench.manifest_dir,
            &ctx.work_dir,
            &tolerance
        ),
        CellCheck::Differs(_)
    ));
    let run = result.cells[0].runs.iter_mut().find(|r| !r.warmup).unwrap();
    *run.counts.get_mut("rows_after").unwrap() += 1;
    match check(&result) {
        CellCheck::Differs(differences) => {
            assert!(
                differences.iter().any(|d| d.contains("rows_after")),
                "{differences:?}"
            )
        }
        other => panic!("a changed row count must differ, not {other:?}"),
    }
}
