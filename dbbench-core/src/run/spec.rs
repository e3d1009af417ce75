//! The static description of a benchmark that the `#[db_bench]` macro emits.

use crate::model::config::{BackendKind, RunSpec, StorageSpec};
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

    /// Why the benchmark's question does not apply on `kind` (`#[not_on]`), if it does not.
    pub fn not_applicable_on(&self, kind: BackendKind) -> Option<&'static str> {
        self.run
            .not_on
            .iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, why)| *why)
    }

    /// Whether `cell` is part of a run on `kind`: the benchmark's question applies there and the
    /// cell's case does not name only other backends. (A benchmark whose own `backends` leave
    /// `kind` out still runs its cells' checks there and reports each as skipped, with why.)
    pub fn runs_on(&self, cell: &CellSpec, kind: BackendKind) -> bool {
        self.not_applicable_on(kind).is_none()
            && (cell.backends.is_empty() || cell.backends.contains(&kind))
    }

    /// The cells that run on `kind`, in declaration order.
    pub fn cells_on(&self, kind: BackendKind) -> Vec<&CellSpec> {
        self.cells
            .iter()
            .filter(|c| self.runs_on(c, kind))
            .collect()
    }

    /// The baseline on `kind`: the declared one where it runs there, else the first cell that
    /// does (a suite with cases per backend compares each backend's cells with its own first
    /// case); `None` when no cell runs on `kind`.
    pub fn baseline_on(&self, kind: BackendKind) -> Option<&'static str> {
        let cells = self.cells_on(kind);
        let declared = self.cells[self.baseline_index()].name;
        cells
            .iter()
            .find(|c| c.name == declared)
            .or(cells.first())
            .map(|c| c.name)
    }

    /// The cells left out on `kind` because their case names other backends, as
    /// `test_6 (mssql)`, for the line under the table.
    pub fn elsewhere_on(&self, kind: BackendKind) -> Vec<String> {
        if self.not_applicable_on(kind).is_some() {
            return Vec::new();
        }
        self.cells
            .iter()
            .filter(|c| !self.runs_on(c, kind))
            .map(|c| {
                let names: Vec<&str> = c.backends.iter().map(|b| b.keyword()).collect();
                format!("{} ({})", c.name, names.join(", "))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(_: &mut Session) -> BodyFuture<'_> {
        Box::pin(async { Ok(()) })
    }

    const fn cell(name: &'static str, backends: &'static [BackendKind]) -> CellSpec {
        CellSpec {
            name,
            storage: StorageSpec::DEFAULT,
            backends,
        }
    }

    static CELLS: [CellSpec; 4] = [
        cell(
            "test_1",
            &[BackendKind::named("embedded"), BackendKind::named("mssql")],
        ),
        cell("test_6", &[BackendKind::named("mssql")]),
        cell("pg_test_1", &[BackendKind::named("postgres")]),
        cell("pg_test_2", &[BackendKind::named("postgres")]),
    ];

    const fn bench(run: RunSpec) -> BenchmarkSpec {
        BenchmarkSpec {
            name: "doubling",
            module_path: "suites::vlf::doubling",
            manifest_dir: "",
            source_file: "",
            title: "",
            run,
            cells: &CELLS,
            body,
        }
    }

    #[test]
    fn each_backend_runs_its_own_cases_against_its_own_baseline() {
        let b = bench(RunSpec {
            baseline: Some("test_1"),
            ..RunSpec::DEFAULT
        });
        let names = |kind| -> Vec<&str> { b.cells_on(kind).iter().map(|c| c.name).collect() };
        assert_eq!(names(BackendKind::named("embedded")), ["test_1"]);
        assert_eq!(names(BackendKind::named("mssql")), ["test_1", "test_6"]);
        assert_eq!(
            names(BackendKind::named("postgres")),
            ["pg_test_1", "pg_test_2"]
        );
        assert_eq!(b.baseline_on(BackendKind::named("mssql")), Some("test_1"));
        assert_eq!(
            b.baseline_on(BackendKind::named("postgres")),
            Some("pg_test_1")
        );
        assert_eq!(
            b.elsewhere_on(BackendKind::named("postgres")),
            ["test_1 (embedded, mssql)", "test_6 (mssql)"]
        );
    }

    #[test]
    fn a_question_that_does_not_apply_runs_nothing_and_lists_nothing() {
        const NOT_ON: &[(BackendKind, &str)] = &[(BackendKind::named("postgres"), "no filegroups")];
        let b = bench(RunSpec {
            not_on: NOT_ON,
            ..RunSpec::DEFAULT
        });
        assert_eq!(
            b.not_applicable_on(BackendKind::named("postgres")),
            Some("no filegroups")
        );
        assert_eq!(b.not_applicable_on(BackendKind::named("mssql")), None);
        assert!(b.cells_on(BackendKind::named("postgres")).is_empty());
        assert!(b.elsewhere_on(BackendKind::named("postgres")).is_empty());
        assert_eq!(b.baseline_on(BackendKind::named("postgres")), None);
    }
}
