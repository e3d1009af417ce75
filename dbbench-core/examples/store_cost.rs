//! What keeping every repetition in the results store costs: runs the VLF suite's test 1 shape
//! (credit fixture doubled five times, 1 MB growth, IFI off) at smoke scale, recording into a
//! fresh store, and times every write the store makes for a repetition against the repetition's
//! measured window.
//!
//! `cargo run --release -p dbbench-core --example store_cost [-- REPETITIONS]`

use dbbench_core::__internals::config::{FixtureKind, Growth, RunSpec, Size, StorageSpec};
use dbbench_core::__internals::{
    embedded::EmbeddedBackend, run_recorded, Backend, BodyFuture, CellSpec, InvocationStart,
    NoJudge, Recorder, RunContext, Store,
};
use dbbench_core::results::{BenchmarkResult, CellResult, CellStatus, RunResult, WindowTimes};
use dbbench_core::{BenchmarkSpec, Result, Scale, Session};
use std::time::{Duration, Instant};

fn doubling(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        dbbench_core::fixture::double_charges(db, 5).await?;
        Ok(())
    })
}

const ONE_MB: Growth = Growth::Fixed(Size::new(1 << 20, "1MB"));

static BENCH: BenchmarkSpec = BenchmarkSpec {
    name: "store_cost",
    module_path: "store_cost::store_cost",
    manifest_dir: env!("CARGO_MANIFEST_DIR"),
    source_file: file!(),
    title: "VLF test 1",
    run: RunSpec {
        fixture: FixtureKind::Credit,
        repeat: 20,
        ..RunSpec::DEFAULT
    },
    cells: &[CellSpec {
        name: "test_1",
        storage: StorageSpec {
            growth: Some(ONE_MB),
            log_growth: Some(ONE_MB),
            ifi: Some(false),
            ..StorageSpec::DEFAULT
        },
        backends: &[],
    }],
    body: doubling,
};

/// Times every call of the wrapped recorder; `windows` adds up the measured windows.
struct Timed<R> {
    inner: R,
    spent: Duration,
    per_repetition: Vec<Duration>,
    windows: Duration,
    json_bytes: usize,
}

impl<R: Recorder> Recorder for Timed<R> {
    fn benchmark_started(&mut self, s: &str, h: &BenchmarkResult, d: &[&str]) -> Result<()> {
        let t = Instant::now();
        let out = self.inner.benchmark_started(s, h, d);
        self.spent += t.elapsed();
        out
    }

    fn cell_started(&mut self, cell: &CellResult) -> Result<()> {
        let t = Instant::now();
        let out = self.inner.cell_started(cell);
        self.spent += t.elapsed();
        out
    }

    fn repetition_finished(&mut self, cell: &str, run: &RunResult, w: WindowTimes) -> Result<()> {
        let t = Instant::now();
        let out = self.inner.repetition_finished(cell, run, w);
        let took = t.elapsed();
        self.spent += took;
        self.per_repetition.push(took);
        self.windows += Duration::from_nanos(w.end_unix_ns - w.start_unix_ns);
        self.json_bytes += serde_json::to_string(run).map(|s| s.len()).unwrap_or(0);
        out
    }

    fn cell_finished(&mut self, cell: &str, status: &CellStatus) -> Result<()> {
        let t = Instant::now();
        let out = self.inner.cell_finished(cell, status);
        self.spent += t.elapsed();
        out
    }

    fn kept(&mut self, cell: &str) -> Result<Vec<RunResult>> {
        self.inner.kept(cell)
    }

    fn benchmark_finished(&mut self, stopping: &dbbench_core::results::Stopping) -> Result<()> {
        self.inner.benchmark_finished(stopping)
    }

    fn calibration(&mut self) -> Result<Option<dbbench_core::results::Calibration>> {
        self.inner.calibration()
    }

    fn earlier(
        &mut self,
        probe: &dbbench_core::results::BenchmarkResult,
    ) -> Result<Vec<dbbench_core::results::EarlierRun>> {
        self.inner.earlier(probe)
    }
}

fn main() -> Result<()> {
    let work_dir = std::env::temp_dir().join(format!("dbbench-store-cost-{}", std::process::id()));
    let ctx = RunContext {
        scale: Scale::smoke(),
        volumes: Default::default(),
        work_dir: work_dir.clone(),
    };
    let store = Store::open(&work_dir)?;
    let invocation = store.begin(&InvocationStart {
        command_line: "store_cost".into(),
        git_commit: None,
        host: "example".into(),
        backend: "embedded".into(),
        scale: "smoke".into(),
        run_key: None,
    })?;
    let mut timed = Timed {
        inner: store.recorder(invocation),
        spent: Duration::ZERO,
        per_repetition: Vec::new(),
        windows: Duration::ZERO,
        json_bytes: 0,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let result = runtime.block_on(async {
        let mut backend = Backend::new(EmbeddedBackend::new());
        run_recorded(&BENCH, None, &ctx, &mut backend, &mut timed, &NoJudge).await
    })?;
    assert_eq!(result.cells[0].status, CellStatus::Ok);
    let n = timed.per_repetition.len() as f64;
    let mut sorted = timed.per_repetition.clone();
    sorted.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{} repetitions of {} at smoke scale; mean window {:.1} ms",
        timed.per_repetition.len(),
        BENCH.title,
        ms(timed.windows) / n
    );
    println!(
        "store write per repetition: mean {:.2} ms, median {:.2} ms, max {:.2} ms ({:.0} bytes of JSON)",
        ms(timed.per_repetition.iter().sum::<Duration>()) / n,
        ms(sorted[sorted.len() / 2]),
        ms(*sorted.last().unwrap()),
        timed.json_bytes as f64 / n
    );
    println!(
        "all store writes of the run: {:.1} ms = {:.2}% of the measured windows (they happen \
         between windows, never inside one)",
        ms(timed.spent),
        100.0 * timed.spent.as_secs_f64() / timed.windows.as_secs_f64()
    );
    drop(timed);
    drop(store);
    let _ = std::fs::remove_dir_all(&work_dir);
    Ok(())
}
