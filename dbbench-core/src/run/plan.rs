//! Each cell's database plan: what to create and where, built once per benchmark (the admission
//! checks and every repetition use the same one) and renamed per repetition.

use crate::engine::Backend;
use crate::model::plan::{DatabasePlan, OWNED_PREFIX};
use crate::model::scale::Scale;
use crate::model::volume::Volumes;
use crate::run::context::RunContext;
use crate::run::spec::{BenchmarkSpec, CellSpec};

/// The plan of each of `cells`, in order: its storage scaled to `scale` (where the benchmark
/// scales storage) and raised to the backend's floor, named for its first repetition.
pub(crate) fn plans(
    bench: &BenchmarkSpec,
    cells: &[&CellSpec],
    backend: &Backend,
    volumes: &Volumes,
    ctx: &RunContext,
    scale: &Scale,
) -> Vec<DatabasePlan> {
    cells
        .iter()
        .map(|cell| DatabasePlan {
            name: database_name(bench, cell, 0),
            storage: backend.floor_storage(&cell.storage.scaled(bench.run.scale_storage, scale)),
            volumes: volumes.clone(),
            work_dir: ctx.work_dir.clone(),
            scale: scale.clone(),
        })
        .collect()
}

/// `plan` for repetition `rep` of `cell`: the same database under that repetition's name.
pub(crate) fn for_repetition(
    plan: &DatabasePlan,
    bench: &BenchmarkSpec,
    cell: &CellSpec,
    rep: u32,
) -> DatabasePlan {
    DatabasePlan {
        name: database_name(bench, cell, rep),
        ..plan.clone()
    }
}

/// `dbbench_<module>_<bench>_<cell>_r<rep>_<pid><nonce>` (`util::owner::process_tag`), with
/// every character outside `[a-z0-9_]` replaced, so it is a valid database name on every backend.
pub fn database_name(bench: &BenchmarkSpec, cell: &CellSpec, rep: u32) -> String {
    let raw = format!(
        "{}_{}_r{}_{}",
        bench.file_stem(),
        cell.name,
        rep,
        crate::util::owner::process_tag()
    );
    let clean: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect();
    // Names longer than 100 characters keep their tail, which holds cell, repetition and pid.
    let tail: String = clean
        .chars()
        .rev()
        .take(100)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    format!("{OWNED_PREFIX}{tail}")
}
