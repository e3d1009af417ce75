//! Items the `#[db_bench]` expansion uses. Not part of the public API: names may change in any
//! release.

pub use crate::cli::harness::run_test;
pub use crate::model::config::{
    BackendKind, FixtureKind, Growth, Order, Precision, Recovery, RunSpec, Size, StorageSpec,
};
pub use crate::model::start::CacheState;
pub use crate::run::session::Session;
pub use crate::run::spec::{BenchmarkSpec, BodyFuture, CellSpec};
