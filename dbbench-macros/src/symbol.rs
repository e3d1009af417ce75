//! Every keyword the attribute understands, in one place: the attribute names here, the option
//! names and value keywords from `dbbench-options`, which the runtime shares.

pub use dbbench_options::keyword::*;
pub use dbbench_options::Key;

/// The attribute that declares a benchmark.
pub const DB_BENCH: &str = "db_bench";
/// The helper attribute that declares one named cell.
pub const CASE: &str = "case";
/// The helper attribute that makes a case from each of several others.
pub const CASES: &str = "cases";
/// The helper attribute that names backends a benchmark's question does not apply to.
pub const NOT_ON: &str = "not_on";
