//! Ready-made dbbench suites. Each module is one experiment; `cargo test -p dbbench-suites` runs
//! them at `smoke` scale and checks their snapshots, and the `dbbench-suites` binary runs them at
//! the default scale with progress, tables and the HTML report.

pub mod big_rows;
pub mod data_files;
pub mod population;
pub mod sample;
pub mod vlf;

/// Every benchmark of the suites, in the order the main job runs them.
pub fn all() -> Vec<&'static dbbench_core::BenchmarkSpec> {
    vec![
        &vlf::doubling::BENCHMARK,
        &population::population::BENCHMARK,
        &data_files::equal_shares::BENCHMARK,
    ]
}

/// What the articles reported, for the report's article columns.
pub fn references() -> Vec<dbbench_core::cli::Reference> {
    vec![vlf::article(), population::article(), data_files::article()]
}
