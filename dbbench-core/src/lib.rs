//! # dbbench
//!
//! Declarative database storage-configuration benchmarks. Write an ordinary async function, annotate
//! it with [`db_bench`], and `cargo test` creates a database in each declared configuration, loads a
//! baseline, runs and times the function, collects file, log and server statistics, tears the
//! database down, and records the results as JSON and a reviewable `insta` snapshot.
//!
//! ```ignore
//! use dbbench_core::{db_bench, Result, Session};
//!
//! /// Doubling the charge table.
//! #[db_bench(fixture = "credit", data_files = [1, 4], repeat = 3)]
//! async fn doubling(db: &mut Session) -> Result<()> {
//!     for n in 1..=5 {
//!         let sql = dbbench_core::fixture::doubling_insert(db.dialect(), n);
//!         db.execute(&sql).await?;
//!         db.lap(format!("loop {n}"));
//!     }
//!     Ok(())
//! }
//! ```
//!
//! The default backend is the embedded engine (SQLite in-process with dbbench's storage layer);
//! `DBBENCH_BACKEND=mssql` with `DBBENCH_MSSQL` runs the same benchmarks on SQL Server.

#![warn(missing_docs)]

pub mod backend;
pub mod calendar;
pub mod chart;
pub mod cli;
pub mod comparator;
pub mod compare;
pub mod config;
pub mod connection;
pub mod driver;
pub mod error;
pub mod fixture;
pub mod grid;
pub mod host;
mod lifecycle;
pub mod notation;
mod progress;
pub mod ratio;
pub mod report;
pub mod results;
pub mod runner;
pub mod runs_csv;
pub mod scale;
pub mod selection;
pub mod session;
pub mod snapshot;
pub mod spec;
pub mod stats;
pub mod storage;
pub mod storage_plan;
pub mod summary;
pub mod table;
mod test_entry;
pub mod units;
mod unwind;
pub mod value;
pub mod volume;
pub mod workdir;

#[cfg(test)]
mod sample;

#[doc(hidden)]
pub mod __private;

pub use config::{BackendKind, Growth, Recovery, Size, StorageSpec};
pub use connection::{Connection, Dialect};
pub use dbbench_macros::db_bench;
pub use error::{Error, Result};
pub use scale::Scale;
pub use session::Session;
pub use value::{FromValue, Row, Value};
