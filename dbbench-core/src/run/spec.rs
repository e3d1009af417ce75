//! The static description of a benchmark that the `#[db_bench]` macro emits.

use crate::model::config::{RunSpec, StorageSpec};
use crate::run::session::Session;
use std::future::Future;
use std::pin::Pin;

/// The future returned by a benchmark body.
pub type BodyFuture<'a> = Pin<Box<dyn Future<Output = crate::model::error::Result<()>> + 'a>>;

/// A benchmark body: the user's async function, boxed.
pub type BodyFn = for<'a> fn(&'a mut Session) -> BodyFuture<'a>;

/// One configuration of a benchmark: a named case, a matrix point, or both.
#[derive(Debug, Clone, Copy)]
pub struct CellSpec {
    /// The cell's name, which is also its test's name (`data_files_8`, `test_3`).
    pub name: &'static str,
    /// The storage configuration of this cell.
    pub storage: StorageSpec,
    /// The backends this cell runs on (a `#[case(backends = …)]`); empty means the benchmark's.
    pub backends: &'static [crate::model::config::BackendKind],
}

/// A benchmark: a body and the cells it runs in.
#[derive(Debug, Clone, Copy)]
pub struct BenchmarkSpec {
    /// The function's name.
    pub name: &'static str,
    /// `module_path!()` of the module the macro generates beside the function, so it ends with
    /// the function's name (`suites::vlf::doubling`).
    pub module_path: &'static str,
    /// `env!("CARGO_MANIFEST_DIR")` of the crate that declares it; snapshots go below it.
    pub manifest_dir: &'static str,
    /// `file!()` where the benchmark is declared.
    pub source_file: &'static str,
    /// The first line of the function's doc comment, if any.
    pub title: &'static str,
    /// Options that apply to every cell.
    pub run: RunSpec,
    /// The cells, in declaration order.
    pub cells: &'static [CellSpec],
    /// The body.
    pub body: BodyFn,
}

impl BenchmarkSpec {
    /// The benchmark's path without the crate name, as cargo test prints it (`vlf::doubling`).
    pub fn test_path(&self) -> String {
        let parts: Vec<&str> = self.module_path.split("::").skip(1).collect();
        parts.join("::")
    }

    /// A file-name-safe identifier: the module path and name joined with `.`.
    pub fn file_stem(&self) -> String {
        self.module_path.replace("::", ".")
    }

    /// The cell with this name.
    pub fn cell(&self, name: &str) -> Option<&CellSpec> {
        self.cells.iter().find(|c| c.name == name)
    }

    /// The index of the baseline cell.
    pub fn baseline_index(&self) -> usize {
        self.run
            .baseline
            .and_then(|b| self.cells.iter().position(|c| c.name == b))
            .unwrap_or(0)
    }
}
