//! Examples of dbbench benchmarks. Each module is a benchmark that `cargo test -p dbbench-examples`
//! runs on the embedded engine; read them in this order:
//!
//! 1. [`quick_start`]: the first benchmark from the README.
//! 2. [`custom_benchmark`]: a workload of your own, with a matrix, named cases, dialect-specific
//!    SQL, laps and recorded counts.

pub mod custom_benchmark;
pub mod quick_start;
