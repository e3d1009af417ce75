//! Declares benchmarks the way a suite does, in nested modules, and inspects what
//! `#[db_bench]` generated: the `BENCHMARK` static and the untouched function.
//!
//! The generated cell tests also run, at smoke scale on the embedded engine: a benchmark declared
//! in a nested module, with a matrix, cases and every run option, must work end to end.

use dbbench_core::__private::{
    BackendKind, BenchmarkSpec, FixtureKind, Growth, Order, Recovery, Size, StorageSpec,
};
use dbbench_core::{Result, Scale, Session};
use std::future::Future;
use std::time::Duration;

mod suites {
    pub mod vlf {
        use dbbench_core::{db_bench, Result, Session};

        /// Doubling the charge table.
        ///
        /// Grows the log by doubling the table five times.
        #[db_bench(
            growth = "1MB",
            ifi = false,
            data_files = [1, 8],
            log_growth = ["64MB", "10%"],
            repeat = 3,
            fixture = "credit",
            scale_storage = true,
            baseline = "test_3__data_files_1__log_growth_64mb"
        )]
        #[case(name = "test_3", growth = "1024MB")]
        #[case(name = "test_4", log_pregrow = "4000MB", log_size = "32000MB")]
        pub async fn double_charges(db: &mut Session) -> Result<()> {
            db.lap("start");
            Ok(())
        }

        /// A plain benchmark: one cell, every run option.
        #[db_bench(
            backends = "mssql",
            timeout = "500ms",
            warmup = 2,
            order = "blocked",
            recovery = "bulk_logged",
            data_on = "fast,slow",
            data_files = 2,
            log_on = "slow",
            data_size = "1GB",
            scale_storage = true
        )]
        pub(crate) async fn everything(_: &mut dbbench_core::Session) -> dbbench_core::Result<()> {
            Ok(())
        }

        /// Cases on backends of their own, at the benchmark's own scale.
        #[db_bench(
            backends = ["embedded", "mssql"],
            data_size = "1GB",
            scale_storage = true,
            smoke_divisor = 65536,
            default_divisor = 1024
        )]
        #[case(name = "server", recovery = "bulk_logged", backends = "mssql")]
        #[case(name = "local", backends = ["embedded"])]
        #[case(name = "inherited", recovery = "full")]
        pub async fn per_case(db: &mut Session) -> Result<()> {
            db.lap("start");
            Ok(())
        }

        pub mod deeper {
            use dbbench_core::{db_bench, Result, Session};

            // Names that the expansion itself uses must not clash with the user's.
            #[allow(dead_code)]
            const BENCHMARK: u8 = 0;
            #[allow(dead_code)]
            fn __dbbench_body() {}
            #[allow(dead_code)]
            struct Option;

            #[db_bench]
            pub async fn defaults(db: &mut Session) -> Result<()> {
                let _ = db.cell();
                Ok(())
            }
        }
    }
}

use suites::vlf;

fn names(bench: &BenchmarkSpec) -> Vec<&'static str> {
    bench.cells.iter().map(|cell| cell.name).collect()
}

fn size(bytes: u64, text: &'static str) -> Size {
    Size::new(bytes, text)
}

const MB: u64 = 1024 * 1024;

#[test]
fn cells_are_cases_crossed_with_the_matrix_in_declaration_order() {
    let bench = &vlf::double_charges::BENCHMARK;
    assert_eq!(
        names(bench),
        [
            "test_3__data_files_1__log_growth_64mb",
            "test_3__data_files_1__log_growth_10pct",
            "test_3__data_files_8__log_growth_64mb",
            "test_3__data_files_8__log_growth_10pct",
            "test_4__data_files_1__log_growth_64mb",
            "test_4__data_files_1__log_growth_10pct",
            "test_4__data_files_8__log_growth_64mb",
            "test_4__data_files_8__log_growth_10pct",
        ]
    );
}

#[test]
fn each_cell_merges_the_attribute_the_matrix_and_its_case() {
    let bench = &vlf::double_charges::BENCHMARK;
    let test_3 = bench
        .cell("test_3__data_files_8__log_growth_10pct")
        .unwrap();
    assert_eq!(
        test_3.storage,
        StorageSpec {
            data_files: 8,
            growth: Some(Growth::Fixed(size(1024 * MB, "1024MB"))),
            log_growth: Some(Growth::Percent(10)),
            ifi: Some(false),
            ..StorageSpec::DEFAULT
        }
    );
    let test_4 = bench.cell("test_4__data_files_1__log_growth_64mb").unwrap();
    assert_eq!(
        test_4.storage,
        StorageSpec {
            data_files: 1,
            growth: Some(Growth::Fixed(size(MB, "1MB"))),
            log_growth: Some(Growth::Fixed(size(64 * MB, "64MB"))),
            log_pregrow: Some(size(4000 * MB, "4000MB")),
            log_size: Some(size(32000 * MB, "32000MB")),
            ifi: Some(false),
            ..StorageSpec::DEFAULT
        }
    );
}

#[test]
fn the_benchmark_describes_itself() {
    let bench = &vlf::double_charges::BENCHMARK;
    assert_eq!(bench.name, "double_charges");
    assert_eq!(bench.title, "Doubling the charge table.");
    assert_eq!(bench.module_path, "expansion::suites::vlf::double_charges");
    assert_eq!(bench.test_path(), "suites::vlf::double_charges");
    assert_eq!(bench.manifest_dir, env!("CARGO_MANIFEST_DIR"));
    assert!(
        bench.source_file.ends_with("expansion.rs"),
        "{}",
        bench.source_file
    );
    assert_eq!(bench.run.repeat, 3);
    assert_eq!(bench.run.warmup, 0);
    assert_eq!(bench.run.fixture, FixtureKind::Credit);
    assert_eq!(bench.run.backends, &[] as &[BackendKind]);
    assert_eq!(bench.run.timeout, None);
    assert_eq!(bench.run.order, Order::Interleaved);
    assert_eq!(
        bench.run.baseline,
        Some("test_3__data_files_1__log_growth_64mb")
    );
    assert_eq!(bench.baseline_index(), 0);
    assert!(bench.run.scale_storage);
    assert_eq!(bench.run.smoke_divisor, 512);
    assert_eq!(bench.run.default_divisor, 16);
    assert!(bench.cells.iter().all(|cell| cell.backends.is_empty()));
}

#[test]
fn a_case_runs_on_its_own_backends_and_the_benchmark_at_its_own_scale() {
    let bench = &vlf::per_case::BENCHMARK;
    assert_eq!(names(bench), ["server", "local", "inherited"]);
    let backends: Vec<&[BackendKind]> = bench.cells.iter().map(|cell| cell.backends).collect();
    assert_eq!(
        backends,
        [
            &[BackendKind::named("mssql")][..],
            &[BackendKind::named("embedded")][..],
            &[][..],
        ]
    );
    assert_eq!(
        bench.run.backends,
        &[BackendKind::named("embedded"), BackendKind::named("mssql")]
    );
    assert_eq!(
        bench.cell("server").unwrap().storage.recovery,
        Some(Recovery::BulkLogged)
    );
    assert_eq!(bench.run.smoke_divisor, 65536);
    assert_eq!(bench.run.default_divisor, 1024);
    // The runtime turns the divisors into this benchmark's fractions of the articles' sizes.
    assert_eq!(
        Scale::smoke().for_benchmark(&bench.run).factor,
        1.0 / 65536.0
    );
    assert_eq!(
        Scale::default_scale().for_benchmark(&bench.run).factor,
        1.0 / 1024.0
    );
    assert_eq!(Scale::full().for_benchmark(&bench.run).factor, 1.0);
}

#[test]
fn run_options_and_the_remaining_storage_options() {
    let bench = &vlf::everything::BENCHMARK;
    assert_eq!(
        bench.title,
        "A plain benchmark: one cell, every run option."
    );
    assert_eq!(bench.run.backends, &[BackendKind::named("mssql")]);
    assert_eq!(bench.run.timeout, Some(Duration::from_millis(500)));
    assert_eq!(bench.run.warmup, 2);
    assert_eq!(bench.run.order, Order::Blocked);
    assert!(bench.run.scale_storage);
    assert_eq!(names(bench), ["default_config"]);
    let storage = &bench.cells[0].storage;
    assert_eq!(storage.recovery, Some(Recovery::BulkLogged));
    assert_eq!(storage.data_on, &["fast", "slow"]);
    assert_eq!(storage.log_on, Some("slow"));
    assert_eq!(storage.data_size, Some(size(1024 * MB, "1GB")));
}

#[test]
fn defaults_fill_every_field() {
    let bench = &vlf::deeper::defaults::BENCHMARK;
    assert_eq!(bench.title, "");
    assert_eq!(
        bench.module_path,
        "expansion::suites::vlf::deeper::defaults"
    );
    assert_eq!(names(bench), ["default_config"]);
    assert_eq!(bench.cells[0].storage, StorageSpec::DEFAULT);
    assert_eq!(bench.run, dbbench_core::__private::RunSpec::DEFAULT);
}

/// Accepts exactly the functions the runner can call.
fn is_body<'a, F>(_: fn(&'a mut Session) -> F)
where
    F: Future<Output = Result<()>> + 'a,
{
}

#[test]
fn the_functions_stay_plain_callable_functions() {
    is_body(vlf::double_charges);
    is_body(vlf::everything);
    is_body(vlf::per_case);
    is_body(vlf::deeper::defaults);
    // The body the runner calls is a different item that forwards to the function.
    let body: dbbench_core::__internals::BodyFn = vlf::double_charges::BENCHMARK.body;
    let _ = body;
}
