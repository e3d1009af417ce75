//! Items the `#[db_bench]` expansion uses. Not part of the public API: names may change in any
//! release.

pub use crate::config::{
    BackendKind, FixtureKind, Growth, Order, Recovery, RunSpec, Size, StorageSpec,
};
pub use crate::session::Session;
pub use crate::spec::{BenchmarkSpec, BodyFuture, CellSpec};
pub use crate::test_entry::run_test;
