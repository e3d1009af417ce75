//! Runs a benchmark: every selected cell, `warmup + repeat` times each, in interleaved or blocked
//! order, one at a time in the whole process, and gathers a [`BenchmarkResult`].

use crate::engine::Backend;
use crate::model::config::{BackendKind, Order};
use crate::model::error::{Error, Result};
use crate::model::host::HostInfo;
use crate::model::plan::{DatabasePlan, OWNED_PREFIX};
use crate::model::results::{
    BenchmarkResult, CellResult, CellStatus, PrecisionInfo, RunInfo, StopReason, Stopping,
    SCHEMA_VERSION,
};
use crate::model::volume::Volumes;
use crate::run::context::RunContext;
use crate::run::recorder::{NoRecorder, Recorder};
use crate::run::repetition::{run_repetition, Repetition};
use crate::run::spec::{BenchmarkSpec, CellSpec};
use crate::run::target::{Judge, NoJudge};
use crate::util::machine_lock;
use std::path::PathBuf;

/// Runs the cells of `bench` whose names are in `selected` (all when `None`) and returns their
/// results; it writes nothing (the caller hands the results to the output pipeline). Errors of
/// single cells are recorded in their [`CellStatus`]; only errors that stop the whole benchmark
/// (no backend) are returned.
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

async fn run_cells(
    bench: &'static BenchmarkSpec,
    selected: Option<&[&str]>,
    ctx: &RunContext,
    backend: &mut Backend,
    recorder: &mut dyn Recorder,
    judge: &dyn Judge,
) -> Result<BenchmarkResult> {
    let started_at_unix_s = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    // Cells whose case names other backends are left out here (listed under the table), and a
    // benchmark whose question does not apply here (`#[not_on]`) runs none.
    let kind = backend.kind();
    let cells: Vec<&CellSpec> = bench
        .cells
        .iter()
        .filter(|c| selected.is_none_or(|s| s.contains(&c.name)))
        .filter(|c| bench.runs_on(c, kind))
        .collect();
    let scale = ctx.scale.for_benchmark(&bench.run);
    for line in backend.sweep_stale(&ctx.work_dir).await {
        crate::util::console::say(&format!("dbbench › {line}"));
    }
    let mut backend_info = backend.info().await?;
    let volumes = if backend.profile().defaults_unbound_volumes {
        let (volumes, defaulted) = default_volumes(&cells, ctx)?;
        for (name, dir) in &defaulted {
            backend_info.preconditions.insert(
                format!("volume {name}"),
                format!(
                    "{} (not bound in DBBENCH_VOLUMES: a directory under the work dir, same disk)",
                    dir.display()
                ),
            );
        }
        volumes
    } else {
        ctx.volumes.clone()
    };
    let names: Vec<&str> = cells
        .iter()
        .flat_map(|c| c.storage.data_on.iter().copied().chain(c.storage.log_on))
        .collect();
    let dirs = backend.local_dirs(&ctx.work_dir, &volumes, &names);
    let mut header = header(bench, ctx, &scale, backend_info, started_at_unix_s);
    header.server_on_host = backend.server_on_host().cloned();
    if let Some(server) = &header.server_on_host {
        say_once(&format!(
            "dbbench › server processes on this host: {}",
            server.describe()
        ));
    }
    let server_roots: Vec<u32> = header.server_on_host.iter().map(|s| s.pid).collect();
    if let Some(why) = &header.not_applicable {
        // Nothing to measure, so nothing to calibrate: the sentence is the whole result.
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
        };
        recorder.benchmark_finished(&stopping)?;
        header.stopping = Some(stopping);
        return Ok(header);
    }
    let calibration = calibrate(recorder, &dirs, &server_roots)?;
    header.calibration = calibration.clone();
    let declared: Vec<&str> = bench
        .cells
        .iter()
        .filter(|c| bench.runs_on(c, kind))
        .map(|c| c.name)
        .collect();
    recorder.benchmark_started(&bench.file_stem(), &header, &declared)?;
    let fixture_rows = header.run.fixture_rows;
    let mut results: Vec<CellResult> = Vec::with_capacity(cells.len());
    for cell in &cells {
        let storage = backend.floor_storage(&cell.storage.scaled(bench.run.scale_storage, &scale));
        let plan = DatabasePlan {
            name: database_name(bench, cell, 0),
            storage,
            volumes: volumes.clone(),
            work_dir: ctx.work_dir.clone(),
            scale: scale.clone(),
        };
        let status = match precheck(bench, backend, &storage) {
            CellStatus::Ok => {
                let short = backend.space_shortfalls(&plan, fixture_rows).await;
                space_check(bench, &short, &scale)
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
            effective: storage.effective_sizes(),
            status,
            runs: Vec::new(),
            invocation: None,
            calibration: calibration.clone(),
        });
    }
    // The rounds that always run (`repeat`, or a precision target's minimum); a target then adds
    // rounds one at a time until its rule stops it.
    // A backend may have run options of its own (`postgres(budget = "5m")`).
    let (precision, _) = bench.run.precision_on(kind);
    let per_cell = bench.run.warmup + bench.run.rounds_on(kind);
    let target = precision.filter(|_| scale.name != "smoke");
    for cell in &mut results {
        recorder.cell_started(cell)?;
        if cell.status != CellStatus::Ok {
            recorder.cell_finished(&cell.name, &cell.status)?;
            continue;
        }
        // A resumed invocation's finished repetitions are kept and not run again.
        cell.runs = recorder.kept(&cell.name)?;
        if target.is_none() && cell.runs.len() == per_cell as usize {
            recorder.cell_finished(&cell.name, &CellStatus::Ok)?;
        }
    }
    let is_kept = |results: &[CellResult], index: usize, rep: u32| {
        results[index].runs.iter().any(|r| r.index == rep)
    };

    // A resumed target continues after the rounds it kept, first completing the round an
    // interruption cut short, so that every cell has the same rounds again (they pair).
    let mut rounds = match target {
        Some(_) => results
            .iter()
            .map(|c| c.runs.iter().filter(|r| !r.warmup).count() as u32)
            .max()
            .unwrap_or(0)
            .max(bench.run.rounds_on(kind)),
        None => bench.run.rounds_on(kind),
    };
    let fixed = bench.run.warmup + rounds;
    let order: Vec<(usize, u32)> = match bench.run.order {
        Order::Interleaved => (0..fixed)
            .flat_map(|rep| (0..cells.len()).map(move |c| (c, rep)))
            .collect(),
        Order::Blocked => (0..cells.len())
            .flat_map(|c| (0..fixed).map(move |rep| (c, rep)))
            .collect(),
    };
    let mut queue: std::collections::VecDeque<(usize, u32)> = order
        .into_iter()
        .filter(|&(index, rep)| !is_kept(&results, index, rep))
        .collect();
    let planned = match target {
        Some(t) => queue.len() + (t.max_rounds.saturating_sub(rounds) as usize) * cells.len(),
        None => queue.len(),
    };
    crate::util::progress::start(&bench.test_path(), planned);
    let baseline_name = bench
        .baseline_on(kind)
        .unwrap_or(bench.cells[bench.baseline_index()].name);
    let paired = bench.run.order == Order::Interleaved;
    let pilot = bench.run.rounds_on(kind) as usize;
    let started = std::time::Instant::now();
    let mut stop_reason = None;
    let mut interrupted = None;
    let mut sequence = results
        .iter()
        .flat_map(|c| c.runs.iter().map(|r| r.sequence + 1))
        .max()
        .unwrap_or(0);
    loop {
        let Some((index, rep)) = queue.pop_front() else {
            // The fixed rounds are done: a precision target decides whether another runs.
            let Some(t) = target else {
                break;
            };
            let widths = judge.widths(&results, baseline_name, paired, pilot);
            crate::util::console::say(&widths_line(&bench.test_path(), rounds, &t, &widths));
            let floors = judge.floors(&results, baseline_name, paired, pilot);
            match crate::run::target::decide(&t, rounds, started.elapsed(), &widths, &floors) {
                crate::run::target::Decision::Continue => {
                    let next = bench.run.warmup + rounds;
                    queue.extend(
                        (0..cells.len())
                            .filter(|&i| results[i].status == CellStatus::Ok)
                            .map(|i| (i, next)),
                    );
                    rounds += 1;
                    if queue.is_empty() {
                        break;
                    }
                    continue;
                }
                crate::run::target::Decision::Stop(reason) => {
                    stop_reason = Some(reason);
                    break;
                }
            }
        };
        if results[index].status != CellStatus::Ok {
            continue;
        }
        // After Ctrl-C or SIGTERM nothing new starts.
        if let Some(signal) = crate::util::signals::received() {
            interrupted = Some(signal);
            break;
        }
        // Cells that failed drop their remaining repetitions, so count what will still run.
        let remaining = 1 + queue
            .iter()
            .filter(|(i, _)| results[*i].status == CellStatus::Ok)
            .count();
        let cell = cells[index];
        let plan = DatabasePlan {
            name: database_name(bench, cell, rep),
            storage: backend.floor_storage(&cell.storage.scaled(bench.run.scale_storage, &scale)),
            volumes: volumes.clone(),
            work_dir: ctx.work_dir.clone(),
            scale: scale.clone(),
        };
        crate::util::progress::repetition_started(crate::util::progress::Position {
            cell: cell.name,
            index,
            cells: cells.len(),
            repetition: rep,
            repetitions: target.map_or(per_cell, |t| bench.run.warmup + t.max_rounds),
            warmup: rep < bench.run.warmup,
            remaining,
        });
        let repetition = Repetition {
            bench,
            cell,
            plan,
            scale: &scale,
            number: rep + 1,
        };
        let waiting = std::time::Instant::now();
        let lock = machine_lock::acquire(&format!("{}::{}", bench.test_path(), cell.name))?;
        let lock_wait_s = waiting.elapsed().as_secs_f64();
        let outcome = run_repetition(backend, repetition).await;
        drop(lock);
        match outcome {
            Ok((mut run, window)) => {
                if let Some(preparation) = run.start.as_mut().and_then(|s| s.preparation.as_mut()) {
                    preparation.lock_wait_s = lock_wait_s;
                }
                run.index = rep;
                run.sequence = sequence;
                run.warmup = rep < bench.run.warmup;
                recorder.repetition_finished(cell.name, &run, window)?;
                results[index].runs.push(run);
            }
            Err(Error::Interrupted { signal, .. }) => {
                // Not the cell's failure: it keeps its finished repetitions and stays unfinished.
                interrupted = Some(signal);
                break;
            }
            Err(e) => {
                results[index].status = CellStatus::Failed(e.to_string());
                recorder.cell_finished(cell.name, &results[index].status)?;
            }
        }
        sequence += 1;
        if target.is_none()
            && results[index].status == CellStatus::Ok
            && results[index].runs.len() == per_cell as usize
        {
            recorder.cell_finished(cell.name, &CellStatus::Ok)?;
        }
        crate::util::progress::repetition_finished();
    }
    crate::util::progress::finished();
    if let Some(signal) = interrupted {
        return Err(Error::Interrupted {
            signal,
            detail: kept(&results, target.is_none().then_some(per_cell)),
        });
    }
    if target.is_some() {
        for cell in results.iter().filter(|c| c.status == CellStatus::Ok) {
            recorder.cell_finished(&cell.name, &CellStatus::Ok)?;
        }
    }
    let reason = stop_reason.unwrap_or_else(|| match precision {
        Some(_) if target.is_none() => StopReason::Unjudged(
            "at smoke scale windows last milliseconds, which measure scheduler noise: the target \
             applies at the default and larger scales"
                .into(),
        ),
        Some(_) => StopReason::Unjudged("no cell could run another round".into()),
        None => StopReason::Fixed,
    });
    let stopping = Stopping {
        rounds: results
            .iter()
            .map(|c| c.runs.iter().filter(|r| !r.warmup).count() as u32)
            .max()
            .unwrap_or(0),
        reason,
        widest: crate::run::target::widest(&judge.widths(&results, baseline_name, paired, pilot))
            .filter(|(_, w)| w.is_finite()),
        elapsed_s: started.elapsed().as_secs_f64(),
    };
    recorder.benchmark_finished(&stopping)?;
    header.cells = results;
    header.stopping = Some(stopping);
    Ok(header)
}

/// "vlf::doubling: round 4: widest interval ±7.2% (test_2), target ±5%; test_2 ±7.2%, …".
fn widths_line(
    benchmark: &str,
    rounds: u32,
    target: &crate::model::config::Precision,
    widths: &[(String, Option<f64>)],
) -> String {
    let pct = |w: &Option<f64>| match w {
        Some(w) => format!("±{:.1}%", w * 100.0),
        None => "no interval".to_string(),
    };
    let all: Vec<String> = widths
        .iter()
        .map(|(cell, w)| format!("{cell} {}", pct(w)))
        .collect();
    format!(
        "dbbench › {benchmark}: after round {rounds}, intervals {} (target ±{}%)",
        all.join(", "),
        crate::model::units::percent_text(target.target())
    )
}

/// What an interrupted run kept: "kept 2 of 4 repetitions of `a`, 1 of 4 repetitions of `b`"
/// (or "kept 5 repetitions of `a`" where a precision target leaves the count open).
fn kept(results: &[CellResult], per_cell: Option<u32>) -> String {
    let counts: Vec<String> = results
        .iter()
        .filter(|c| c.status == CellStatus::Ok)
        .map(|c| match per_cell {
            Some(n) => format!("{} of {n} repetitions of `{}`", c.runs.len(), c.name),
            None => format!("{} repetitions of `{}`", c.runs.len(), c.name),
        })
        .collect();
    if counts.is_empty() {
        return "no repetition had finished".to_string();
    }
    format!("kept {}", counts.join(", "))
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
    scale: &crate::model::scale::Scale,
    backend: crate::model::results::BackendInfo,
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

/// This invocation's calibration of the machine and of `dirs`: the one an earlier benchmark of
/// the invocation took, with any directory it lacks probed now, or a new one. Taken under the
/// measurement lock, since it is a measurement. A calibration that cannot be taken is said and
/// left out (the run's timings are then compared with none), rather than stopping the run.
fn calibrate(
    recorder: &mut dyn Recorder,
    dirs: &[(String, PathBuf)],
    server_roots: &[u32],
) -> Result<Option<crate::model::calibration::Calibration>> {
    let earlier = recorder.calibration()?;
    let missing: Vec<&(String, PathBuf)> = dirs
        .iter()
        .filter(|(name, _)| {
            earlier
                .as_ref()
                .is_none_or(|c| !c.volumes.iter().any(|v| &v.name == name))
        })
        .collect();
    if earlier.is_some() && missing.is_empty() {
        return Ok(earlier);
    }
    // The work dir's database directory is dbbench's own to create; volumes are not.
    if let Some((_, default)) = dirs.first() {
        std::fs::create_dir_all(default)
            .map_err(|e| Error::io("cannot create the database directory", default, e))?;
    }
    let lock = machine_lock::acquire("calibration")?;
    let started = std::time::Instant::now();
    // A calibration is a measurement too: a busy machine distorts it (a local server idles
    // meanwhile, and is told apart as in the windows).
    let monitor = crate::util::monitor::Monitor::open_with(server_roots);
    let measured = match earlier {
        Some(mut c) => missing
            .iter()
            .map(|(name, dir)| crate::util::probe::volume(name, dir))
            .collect::<Result<Vec<_>>>()
            .map(|probed| {
                c.volumes.extend(probed);
                c
            }),
        None => crate::util::probe::calibrate(dirs),
    };
    let seen = monitor.close();
    drop(lock);
    Ok(match measured {
        Ok(c) => {
            crate::util::console::say(&format!(
                "dbbench › calibrated this machine in {:.1} s: {}",
                started.elapsed().as_secs_f64(),
                c.line()
            ));
            if seen.disturbed() {
                crate::util::console::say(&format!(
                    "dbbench › warning: the machine was busy while it was calibrated ({}); \
                     timings of this run may be judged not comparable with a quiet recording",
                    seen.disturbed_by.join("; ")
                ));
            }
            Some(c)
        }
        Err(e) => {
            crate::util::console::say(&format!(
                "dbbench › warning: the calibration failed ({e}); this run's timings will not be \
                 compared with other recordings"
            ));
            None
        }
    })
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

/// `Ok`, or why the cell cannot run on this backend (skipped: the benchmark is restricted to other
/// backends, or an option the backend cannot honour) or is wrong (failed), before anything is
/// created. Cells whose case names other backends never get here: they are left out of the run.
fn precheck(
    bench: &BenchmarkSpec,
    backend: &Backend,
    storage: &crate::model::config::StorageSpec,
) -> CellStatus {
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
    match backend.check(storage) {
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
fn space_check(
    bench: &BenchmarkSpec,
    short: &[crate::util::space::Shortfall],
    scale: &crate::model::scale::Scale,
) -> CellStatus {
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
