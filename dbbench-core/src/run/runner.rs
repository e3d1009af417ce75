//! Runs a benchmark: prepares it (the cells this backend runs, their volumes, the calibration,
//! each cell's plan and admission), then has the executor (`run::executor`) carry out its
//! schedule (`run::schedule`: `warmup + repeat` repetitions of every cell, or a precision
//! target's rounds, in interleaved or blocked order), and gathers a [`BenchmarkResult`].

use crate::engine::Backend;
use crate::model::config::{BackendKind, Precision};
use crate::model::error::{Error, Result};
use crate::model::host::HostInfo;
use crate::model::results::{
    BackendInfo, BenchmarkResult, PrecisionInfo, RunInfo, StopReason, Stopping, SCHEMA_VERSION,
};
use crate::model::scale::Scale;
use crate::model::volume::Volumes;
use crate::run::admission::admit;
use crate::run::calibration::calibrate;
use crate::run::context::RunContext;
use crate::run::executor::Executor;
use crate::run::plan::plans;
use crate::run::recorder::{NoRecorder, Recorder};
use crate::run::schedule::{measured_rounds, Rules, Schedule};
use crate::run::spec::{BenchmarkSpec, CellSpec};
use crate::run::target::{widest, Judge, NoJudge};
use std::path::PathBuf;

/// Runs the cells of `bench` whose names are in `selected` (all when `None`) and returns their
/// results; it writes nothing (the caller hands the results to the output pipeline). Errors of
/// single cells are recorded in their [`CellStatus`](crate::model::results::CellStatus); only
/// errors that stop the whole benchmark (no backend) are returned.
pub async fn run_benchmark(
    bench: &'static BenchmarkSpec,
    selected: Option<&[&str]>,
    ctx: &RunContext,
    backend: &mut Backend,
) -> Result<BenchmarkResult> {
    run_recorded(bench, selected, ctx, backend, &mut NoRecorder, &NoJudge).await
}

/// [`run_benchmark`], telling `recorder` about every repetition as soon as it finishes, and
/// asking `judge` for the intervals' widths when a precision target decides whether another round
/// runs. Each repetition holds the machine-wide measurement lock, so no other dbbench process
/// measures at the same time.
pub async fn run_recorded(
    bench: &'static BenchmarkSpec,
    selected: Option<&[&str]>,
    ctx: &RunContext,
    backend: &mut Backend,
    recorder: &mut dyn Recorder,
    judge: &dyn Judge,
) -> Result<BenchmarkResult> {
    let result = run_cells(bench, selected, ctx, backend, recorder, judge).await;
    // What the backend kept for the next repetition (pre-grown logs) is released however the
    // benchmark ended; a release that fails does not hide the benchmark's own outcome.
    let released = backend.release_kept();
    let result = result?;
    released?;
    Ok(result)
}

/// [`run_recorded`] but for releasing what the backend kept: prepare, admit the cells, carry out
/// their schedule, and say how it stopped.
async fn run_cells(
    bench: &'static BenchmarkSpec,
    selected: Option<&[&str]>,
    ctx: &RunContext,
    backend: &mut Backend,
    recorder: &mut dyn Recorder,
    judge: &dyn Judge,
) -> Result<BenchmarkResult> {
    // Cells whose case names other backends are left out here (listed under the table), and a
    // benchmark whose question does not apply here (`#[not_on]`) runs none.
    let kind = backend.kind();
    let cells: Vec<&'static CellSpec> = bench
        .cells
        .iter()
        .filter(|c| selected.is_none_or(|s| s.contains(&c.name)))
        .filter(|c| bench.runs_on(c, kind))
        .collect();
    let scale = ctx.scale.for_benchmark(&bench.run);
    let Ground {
        mut header,
        volumes,
        dirs,
    } = prepare(bench, &cells, ctx, &scale, backend).await?;
    if let Some(why) = header.not_applicable.clone() {
        return not_applicable(bench, kind, &why, header, recorder);
    }
    let server_roots: Vec<u32> = header.server_on_host.iter().map(|s| s.pid).collect();
    let calibration = calibrate(recorder, &dirs, &server_roots)?;
    header.calibration = calibration.clone();
    let declared: Vec<&str> = bench
        .cells
        .iter()
        .filter(|c| bench.runs_on(c, kind))
        .map(|c| c.name)
        .collect();
    let mut rules = Rules::of(&bench.run, kind, &scale);
    if let (Some(forks), Some(p)) = (crate::run::context::forks_from_env()?, rules.precision) {
        rules.precision = Some(Precision {
            min_rounds: forks,
            max_rounds: forks,
            // The components need two rounds in every fork.
            fork_rounds: p.fork_rounds.max(2),
            ..p
        });
        rules.rounds = forks;
        if let Some(info) = header.run.precision.as_mut() {
            (info.min_rounds, info.max_rounds) = (forks, forks);
        }
        header.run.repeat = forks;
    }
    recorder.benchmark_started(&bench.file_stem(), &header, &declared)?;
    let plans = plans(bench, &cells, backend, &volumes, ctx, &scale);
    let fixture_rows = header.run.fixture_rows;
    let mut results = admit(bench, backend, &cells, &plans, fixture_rows, &calibration).await;
    // The earlier runs of this experiment on this host: the rule judges the intervals the tables
    // will show, pooled with them where there are enough.
    let earlier = recorder.earlier(&BenchmarkResult {
        cells: results.clone(),
        ..header.clone()
    })?;
    let knowing = judge.knowing(header.started_at_unix_s, &earlier);
    let judge: &dyn Judge = knowing.as_deref().unwrap_or(judge);

    let mut executor = Executor {
        bench,
        cells: &cells,
        plans: &plans,
        scale: &scale,
        backend,
        recorder,
    };
    executor.resume(&rules, &mut results)?;
    let baseline = bench
        .baseline_on(kind)
        .unwrap_or(bench.cells[bench.baseline_index()].name);
    let mut schedule = Schedule::new(rules, baseline, &results);
    let started = std::time::Instant::now();
    executor
        .carry_out(&mut schedule, &mut results, judge, started)
        .await?;
    let stopping = Stopping {
        rounds: measured_rounds(&results),
        reason: schedule.reason(),
        widest: widest(&schedule.widths(&results, judge)).filter(|(_, w)| w.is_finite()),
        elapsed_s: started.elapsed().as_secs_f64(),
        design: schedule.design(),
    };
    recorder.benchmark_finished(&stopping)?;
    header.cells = results;
    header.stopping = Some(stopping);
    Ok(header)
}

/// What a benchmark runs on, found before any of it runs.
struct Ground {
    /// The result's header: everything but the cells and how they stopped.
    header: BenchmarkResult,
    /// The volumes the cells' files go on, every name bound.
    volumes: Volumes,
    /// The local directories the cells' files go in, by volume, for the calibration.
    dirs: Vec<(String, PathBuf)>,
}

/// Sweeps what killed runs of this host left, reads the backend's facts, binds the volumes of
/// `cells` and starts the header, naming the server processes on this host.
async fn prepare(
    bench: &'static BenchmarkSpec,
    cells: &[&CellSpec],
    ctx: &RunContext,
    scale: &Scale,
    backend: &mut Backend,
) -> Result<Ground> {
    let started_at_unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    for line in backend.sweep_stale(&ctx.work_dir).await {
        crate::util::console::say(&format!("dbbench › {line}"));
    }
    let mut backend_info = backend.info().await?;
    // The result says how it is shown, so that a build without this backend renders it alike.
    backend_info.presentation = Some(backend.profile().presentation.clone());
    let volumes = volumes(backend, cells, ctx, &mut backend_info)?;
    let names: Vec<&str> = cells
        .iter()
        .flat_map(|c| c.storage.data_on.iter().copied().chain(c.storage.log_on))
        .collect();
    let dirs = backend.local_dirs(&ctx.work_dir, &volumes, &names);
    let mut header = header(bench, ctx, scale, backend_info, started_at_unix_s);
    header.server_on_host = backend.server_on_host().cloned();
    if let Some(server) = &header.server_on_host {
        say_once(&format!(
            "dbbench › server processes on this host: {}",
            server.describe()
        ));
    }
    Ok(Ground {
        header,
        volumes,
        dirs,
    })
}

/// The result of a benchmark whose question does not apply on this backend (`#[not_on]`):
/// nothing to measure, so nothing to calibrate; the sentence is the whole result.
fn not_applicable(
    bench: &BenchmarkSpec,
    kind: BackendKind,
    why: &str,
    mut header: BenchmarkResult,
    recorder: &mut dyn Recorder,
) -> Result<BenchmarkResult> {
    crate::util::console::say(&format!(
        "dbbench › {}: does not apply on {}: {why}",
        bench.test_path(),
        kind.keyword()
    ));
    recorder.benchmark_started(&bench.file_stem(), &header, &[])?;
    let stopping = Stopping {
        rounds: 0,
        reason: StopReason::Fixed,
        widest: None,
        elapsed_s: 0.0,
        design: None,
    };
    recorder.benchmark_finished(&stopping)?;
    header.stopping = Some(stopping);
    Ok(header)
}

/// The volumes the cells' files go on: those of `DBBENCH_VOLUMES`, and where the backend gives
/// unbound volumes a directory, one under the work dir for each, which `info`'s preconditions
/// then name.
fn volumes(
    backend: &Backend,
    cells: &[&CellSpec],
    ctx: &RunContext,
    info: &mut BackendInfo,
) -> Result<Volumes> {
    if !backend.profile().defaults_unbound_volumes {
        return Ok(ctx.volumes.clone());
    }
    let (volumes, defaulted) = default_volumes(cells, ctx)?;
    for (name, dir) in &defaulted {
        info.preconditions.insert(
            format!("volume {name}"),
            format!(
                "{} (not bound in DBBENCH_VOLUMES: a directory under the work dir, same disk)",
                dir.display()
            ),
        );
    }
    Ok(volumes)
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
            let dir = crate::util::paths::default_volume_dir(&ctx.work_dir, name);
            std::fs::create_dir_all(&dir)
                .map_err(|e| Error::io("cannot create volume directory", &dir, e))?;
            crate::util::console::say(&format!(
                "dbbench › volume `{name}` is not bound in DBBENCH_VOLUMES; using {} (same disk)",
                dir.display()
            ));
            volumes.bind(name, &dir);
            defaulted.push((name.to_string(), dir));
        }
    }
    Ok((volumes, defaulted))
}

/// Says `line` unless it was the last line said this way: a benchmark process says which
/// processes are the server once, not at every benchmark's start.
fn say_once(line: &str) {
    static LAST: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);
    let mut last = LAST.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if last.as_deref() != Some(line) {
        crate::util::console::say(line);
        *last = Some(line.to_string());
    }
}

/// The benchmark's header: everything of its results but the cells.
fn header(
    bench: &'static BenchmarkSpec,
    ctx: &RunContext,
    scale: &Scale,
    backend: BackendInfo,
    started_at_unix_s: u64,
) -> BenchmarkResult {
    let kind = BackendKind::from_keyword(&backend.kind).unwrap_or(BackendKind::DEFAULT);
    let baseline = bench
        .baseline_on(kind)
        .unwrap_or(bench.cells[bench.baseline_index()].name)
        .to_string();
    BenchmarkResult {
        schema_version: SCHEMA_VERSION,
        dbbench_version: env!("CARGO_PKG_VERSION").to_string(),
        benchmark: bench.test_path(),
        title: bench.title.to_string(),
        started_at_unix_s,
        scale: ctx.scale.name.clone(),
        backend,
        host: HostInfo::detect(&ctx.work_dir, std::path::Path::new(bench.manifest_dir)),
        run: RunInfo {
            repeat: bench.run.rounds_on(kind),
            warmup: bench.run.warmup,
            fixture: bench.run.fixture.keyword().to_string(),
            fixture_rows: match bench.run.fixture {
                crate::model::config::FixtureKind::None => 0,
                crate::model::config::FixtureKind::Credit => scale.credit_rows(),
            },
            order: bench.run.order.keyword().to_string(),
            baseline,
            timeout_s: bench.run.timeout.map(|t| t.as_secs_f64()),
            build_profile: crate::model::results::build_profile().to_string(),
            precision: {
                let (precision, own) = bench.run.precision_on(kind);
                precision.map(|p| PrecisionInfo {
                    target: p.target(),
                    min_rounds: p.min_rounds,
                    max_rounds: p.max_rounds,
                    budget_s: p.budget.as_secs_f64(),
                    backend: own.then(|| kind.keyword().to_string()),
                })
            },
            cache: bench.run.cache,
            forked: bench.run.order == crate::model::config::Order::Interleaved,
        },
        cells: Vec::new(),
        reference: None,
        calibration: None,
        server_on_host: None,
        stopping: None,
        not_applicable: bench.not_applicable_on(kind).map(str::to_string),
        elsewhere: bench.elsewhere_on(kind),
        earlier: Vec::new(),
    }
}
