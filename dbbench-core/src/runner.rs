//! Runs a benchmark: every selected cell, `warmup + repeat` times each, in interleaved or blocked
//! order, one at a time in the whole process, and gathers a [`BenchmarkResult`].

use crate::backend::{Backend, DatabasePlan, OWNED_PREFIX};
use crate::config::{BackendKind, Order};
use crate::error::{Error, Result};
use crate::host::HostInfo;
use crate::lifecycle::{run_repetition, Repetition};
use crate::results::{BenchmarkResult, CellResult, CellStatus, RunInfo, SCHEMA_VERSION};
use crate::scale::Scale;
use crate::spec::{BenchmarkSpec, CellSpec};
use crate::storage_plan::scaled_storage;
use crate::volume::Volumes;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Mutex;

/// Benchmarks never run at the same time in one process, though cargo test runs tests in parallel.
static RUN_LOCK: Mutex<()> = Mutex::new(());

/// Takes the process-wide benchmark lock; a panic in another benchmark does not poison it.
pub fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    RUN_LOCK
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Settings of one invocation, read from the environment once.
#[derive(Debug, Clone)]
pub struct RunContext {
    /// The data scale.
    pub scale: Scale,
    /// Named volumes.
    pub volumes: Volumes,
    /// dbbench's working directory.
    pub work_dir: PathBuf,
}

impl RunContext {
    /// The context for benchmarks of the crate at `manifest_dir`; `fallback_scale` applies when
    /// `DBBENCH_SCALE` is unset.
    pub fn from_env(manifest_dir: &str, fallback_scale: Scale) -> Result<RunContext> {
        Ok(RunContext {
            scale: Scale::from_env(fallback_scale)?,
            volumes: Volumes::from_env()?,
            work_dir: crate::workdir::work_dir(std::path::Path::new(manifest_dir)),
        })
    }
}

/// Runs the cells of `bench` whose names are in `selected` (all when `None`) and writes the
/// results JSON. Errors of single cells are recorded in their [`CellStatus`]; only errors that stop
/// the whole benchmark (no backend) are returned.
pub async fn run_benchmark(
    bench: &'static BenchmarkSpec,
    selected: Option<&[&str]>,
    ctx: &RunContext,
    backend: &mut Backend,
) -> Result<BenchmarkResult> {
    let cells: Vec<&CellSpec> = bench
        .cells
        .iter()
        .filter(|c| selected.is_none_or(|s| s.contains(&c.name)))
        .collect();
    let scale = ctx.scale.for_benchmark(&bench.run);
    let mut backend_info = backend.info().await?;
    let volumes = match backend.kind() {
        BackendKind::Embedded | BackendKind::Postgres => {
            let defaulted = default_volumes(&cells, ctx)?;
            for (name, dir) in &defaulted.1 {
                backend_info.preconditions.insert(
                    format!("volume {name}"),
                    format!("{} (not bound in DBBENCH_VOLUMES: a directory under the work dir, same disk)", dir.display()),
                );
            }
            defaulted.0
        }
        BackendKind::Mssql => ctx.volumes.clone(),
    };
    let mut results: Vec<CellResult> = cells
        .iter()
        .map(|cell| {
            let storage = scaled_storage(&cell.storage, bench.run.scale_storage, &scale);
            CellResult {
                name: cell.name.to_string(),
                config: cell
                    .storage
                    .describe()
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect(),
                effective: crate::storage_plan::effective_sizes(&storage),
                status: precheck(bench, cell, backend, &storage),
                runs: Vec::new(),
            }
        })
        .collect();

    let per_cell = bench.run.warmup + bench.run.repeat;
    let order: Vec<(usize, u32)> = match bench.run.order {
        Order::Interleaved => (0..per_cell)
            .flat_map(|rep| (0..cells.len()).map(move |c| (c, rep)))
            .collect(),
        Order::Blocked => (0..cells.len())
            .flat_map(|c| (0..per_cell).map(move |rep| (c, rep)))
            .collect(),
    };
    crate::progress::start(&bench.test_path(), order.len());
    for (sequence, &(index, rep)) in order.iter().enumerate() {
        if results[index].status != CellStatus::Ok {
            continue;
        }
        // Cells that failed drop their remaining repetitions, so count what will still run.
        let remaining = order[sequence..]
            .iter()
            .filter(|(i, _)| results[*i].status == CellStatus::Ok)
            .count();
        let cell = cells[index];
        let plan = DatabasePlan {
            name: database_name(bench, cell, rep),
            storage: scaled_storage(&cell.storage, bench.run.scale_storage, &scale),
            volumes: volumes.clone(),
            work_dir: ctx.work_dir.clone(),
            scale: scale.clone(),
        };
        crate::progress::repetition_started(crate::progress::Position {
            cell: cell.name,
            index,
            cells: cells.len(),
            repetition: rep,
            repetitions: per_cell,
            warmup: rep < bench.run.warmup,
            remaining,
        });
        let repetition = Repetition {
            bench,
            cell,
            plan,
            scale: &scale,
        };
        match run_repetition(backend, repetition).await {
            Ok(mut run) => {
                run.index = rep;
                run.sequence = sequence as u32;
                run.warmup = rep < bench.run.warmup;
                results[index].runs.push(run);
            }
            Err(e) => results[index].status = CellStatus::Failed(e.to_string()),
        }
        crate::progress::repetition_finished();
    }
    crate::progress::finished();

    let baseline = bench.cells[bench.baseline_index()].name.to_string();
    let result = BenchmarkResult {
        schema_version: SCHEMA_VERSION,
        dbbench_version: env!("CARGO_PKG_VERSION").to_string(),
        benchmark: bench.test_path(),
        title: bench.title.to_string(),
        started_at_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        scale: ctx.scale.name.clone(),
        backend: backend_info,
        host: HostInfo::detect(&ctx.work_dir, std::path::Path::new(bench.manifest_dir)),
        run: RunInfo {
            repeat: bench.run.repeat,
            warmup: bench.run.warmup,
            fixture: format!("{:?}", bench.run.fixture).to_lowercase(),
            fixture_rows: match bench.run.fixture {
                crate::config::FixtureKind::None => 0,
                crate::config::FixtureKind::Credit => scale.credit_rows(),
            },
            order: format!("{:?}", bench.run.order).to_lowercase(),
            baseline,
            timeout_s: bench.run.timeout.map(|t| t.as_secs_f64()),
            build_profile: crate::results::build_profile().to_string(),
        },
        cells: results,
    };
    result.write(&crate::workdir::results_file(
        &ctx.work_dir,
        &bench.file_stem(),
    ))?;
    crate::report::write_benchmark(&result, &bench.file_stem(), &ctx.work_dir)?;
    Ok(result)
}

/// The volumes with every name the cells use bound: names missing from `DBBENCH_VOLUMES` get a
/// directory of their own under `<work_dir>/volumes/`, so suites that separate data and log run
/// on a fresh clone; the second value lists those defaults so the results can say so.
fn default_volumes(
    cells: &[&CellSpec],
    ctx: &RunContext,
) -> Result<(Volumes, Vec<(String, PathBuf)>)> {
    let mut volumes = ctx.volumes.clone();
    let mut defaulted = Vec::new();
    let names = cells
        .iter()
        .flat_map(|c| c.storage.data_on.iter().copied().chain(c.storage.log_on));
    for name in names {
        if volumes.resolve(name).is_err() {
            let dir = ctx.work_dir.join("volumes").join(name);
            std::fs::create_dir_all(&dir)
                .map_err(|e| Error::io("cannot create volume directory", &dir, e))?;
            crate::test_entry::say(&format!(
                "dbbench › volume `{name}` is not bound in DBBENCH_VOLUMES; using {} (same disk)",
                dir.display()
            ));
            volumes.bind(name, &dir);
            defaulted.push((name.to_string(), dir));
        }
    }
    Ok((volumes, defaulted))
}

/// `Ok`, or why the cell cannot run on this backend (skipped or failed before creating anything).
fn precheck(
    bench: &BenchmarkSpec,
    cell: &CellSpec,
    backend: &Backend,
    storage: &crate::config::StorageSpec,
) -> CellStatus {
    let kind: BackendKind = backend.kind();
    // A case narrows the benchmark's backends; it never widens them.
    let allowed_here = |list: &[BackendKind]| list.is_empty() || list.contains(&kind);
    let (backends, what) = if allowed_here(bench.run.backends) {
        (cell.backends, "cell")
    } else {
        (bench.run.backends, "benchmark")
    };
    if !allowed_here(backends) {
        let allowed: Vec<&str> = backends.iter().map(|b| b.keyword()).collect();
        return CellStatus::Skipped(format!(
            "this {what} runs on {} only; the current backend is {} (DBBENCH_BACKEND)",
            allowed.join(", "),
            kind.keyword()
        ));
    }
    match backend.check(storage) {
        Ok(()) => CellStatus::Ok,
        Err(e) => CellStatus::Failed(e.to_string()),
    }
}

/// `dbbench_<module>_<bench>_<cell>_r<rep>_<pid>`, with every character outside `[a-z0-9_]`
/// replaced, so it is a valid database name on every backend.
pub fn database_name(bench: &BenchmarkSpec, cell: &CellSpec, rep: u32) -> String {
    let raw = format!(
        "{}_{}_r{}_{}",
        bench.file_stem(),
        cell.name,
        rep,
        std::process::id()
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

/// The outcome of one cell as a test sees it.
pub fn cell_outcome(result: &BenchmarkResult, cell: &str) -> Result<()> {
    let found = result
        .cells
        .iter()
        .find(|c| c.name == cell)
        .ok_or_else(|| Error::msg(format!("cell `{cell}` did not run")))?;
    match &found.status {
        CellStatus::Failed(e) => Err(Error::msg(e.clone())),
        _ => Ok(()),
    }
}

/// Counts per status, for summaries.
pub fn status_counts(result: &BenchmarkResult) -> BTreeMap<&'static str, usize> {
    let mut counts = BTreeMap::new();
    for cell in &result.cells {
        let key = match cell.status {
            CellStatus::Ok => "ok",
            CellStatus::Failed(_) => "failed",
            CellStatus::Skipped(_) => "skipped",
        };
        *counts.entry(key).or_insert(0) += 1;
    }
    counts
}
