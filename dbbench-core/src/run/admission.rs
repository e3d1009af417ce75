//! Which cells may run here, decided before anything is created: a benchmark restricted to other
//! backends, an option the backend cannot honour, a cold cache the machine cannot give, files that
//! would not fit on their volumes. Each refused cell says why in its status.

use crate::engine::Backend;
use crate::model::calibration::Calibration;
use crate::model::config::{BackendKind, StorageSpec};
use crate::model::error::Error;
use crate::model::plan::DatabasePlan;
use crate::model::results::{CellResult, CellStatus};
use crate::model::scale::Scale;
use crate::run::spec::{BenchmarkSpec, CellSpec};
use crate::util::space::Shortfall;

/// The results each of `cells` starts from, in order, with no runs yet: its declared options,
/// the sizes its plan (in `plans`, one per cell) uses, and whether it may run.
pub(crate) async fn admit(
    bench: &BenchmarkSpec,
    backend: &mut Backend,
    cells: &[&CellSpec],
    plans: &[DatabasePlan],
    fixture_rows: u64,
    calibration: &Option<Calibration>,
) -> Vec<CellResult> {
    let mut results = Vec::with_capacity(cells.len());
    for (cell, plan) in cells.iter().zip(plans) {
        let status = match precheck(bench, backend, &plan.storage) {
            CellStatus::Ok => {
                let short = backend.space_shortfalls(plan, fixture_rows).await;
                space_check(bench, &short, &plan.scale)
            }
            refused => refused,
        };
        results.push(CellResult {
            name: cell.name.to_string(),
            config: cell
                .storage
                .describe()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            effective: plan.storage.effective_sizes(),
            status,
            runs: Vec::new(),
            invocation: None,
            calibration: calibration.clone(),
        });
    }
    results
}

/// `Ok`, or why the cell cannot run on this backend (skipped: the benchmark is restricted to other
/// backends, or an option the backend cannot honour) or is wrong (failed), before anything is
/// created. Cells whose case names other backends never get here: they are left out of the run.
fn precheck(bench: &BenchmarkSpec, backend: &Backend, storage: &StorageSpec) -> CellStatus {
    let kind: BackendKind = backend.kind();
    let backends = bench.run.backends;
    if !backends.is_empty() && !backends.contains(&kind) {
        let allowed: Vec<&str> = backends.iter().map(|b| b.keyword()).collect();
        return CellStatus::Skipped(format!(
            "this benchmark runs on {} only; the current backend is {} (DBBENCH_BACKEND)",
            allowed.join(", "),
            kind.keyword()
        ));
    }
    if bench.run.cache == crate::model::start::CacheState::Cold
        && backend.profile().local_page_cache
    {
        if let Some(refusal) = crate::util::settle::cold_cache_refusal() {
            return CellStatus::Failed(format!("nothing was created: {refusal}"));
        }
    }
    match backend
        .check(storage)
        .and_then(|()| backend.check_cache(bench.run.cache))
    {
        Ok(()) => CellStatus::Ok,
        // An option this backend has no honest equivalent for: the cell cannot run here, as a
        // cell restricted to other backends cannot, and says which option and why (the seed
        // suites' data-file cells on PostgreSQL). Never silently: the reason is in the status.
        Err(e @ (Error::Unsupported { .. } | Error::NotOnProduct { .. })) => {
            CellStatus::Skipped(e.to_string())
        }
        Err(e) => CellStatus::Failed(e.to_string()),
    }
}

/// `Ok`, or the cell refused because its files would not fit on their volumes: both numbers, and
/// the scale at which they would.
fn space_check(bench: &BenchmarkSpec, short: &[Shortfall], scale: &Scale) -> CellStatus {
    if short.is_empty() {
        return CellStatus::Ok;
    }
    let what: Vec<String> = short.iter().map(|s| s.describe()).collect();
    let remedy = if bench.run.scale_storage {
        format!(
            "try DBBENCH_SCALE={} (this run is at scale {}, factor {})",
            crate::util::space::show_factor(crate::util::space::scale_that_fits(
                scale.factor,
                short
            )),
            scale.name,
            scale.factor
        )
    } else {
        "its sizes do not follow the scale (scale_storage is off): lower them, or bind the \
         volumes to larger disks in DBBENCH_VOLUMES"
            .to_string()
    };
    CellStatus::Failed(format!(
        "not enough space, nothing was created: the cell {}; {remedy}",
        what.join("; ")
    ))
}
