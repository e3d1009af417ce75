//! The busy-machine guard and the calibration, measured: the figures behind the thresholds in
//! `docs/busy-machine.md`.
//!
//! 1. Runs the VLF suite's test 1 shape (credit fixture doubled five times, 1 MB growth, IFI off)
//!    on the embedded engine, `N` repetitions on the idle machine and `N` while two CPU burners
//!    run (niced `sh` loops that are not dbbench's descendants, so they count as other
//!    processes), and prints each repetition's elapsed time and interference figures side by
//!    side.
//! 2. Times the guard itself: a window's two counter reads, against the windows measured.
//! 3. Calibrates the work directory five times idle and three times loaded, to show how far a
//!    calibration moves on one machine.
//!
//! `cargo run --release -p dbbench-core --example busy_guard [-- N]`
//!
//! With `server` as the first argument it measures instead a database server on this machine:
//! the plain workload (the credit fixture doubled five times, no storage options, so Babelfish
//! runs it too) at the default scale on the backend of `DBBENCH_BACKEND` (`mssql` with
//! `DBBENCH_MSSQL`, `postgres` with `DBBENCH_POSTGRES`), `N` repetitions idle and `N` beside two
//! CPU burners, printing per window the cores the server used (counted as the workload) and
//! those of other processes (judged).
//!
//! `DBBENCH_BACKEND=mssql DBBENCH_MSSQL=… cargo run -p dbbench-core --example busy_guard -- server 3`

use dbbench_core::__internals::config::{FixtureKind, Growth, RunSpec, Size, StorageSpec};
use dbbench_core::__internals::{
    calibrate, embedded::EmbeddedBackend, run_benchmark, Backend, BodyFuture, CellSpec, Monitor,
    RunContext,
};
use dbbench_core::results::{BenchmarkResult, RunResult};
use dbbench_core::{BenchmarkSpec, Result, Scale, Session};
use std::process::{Command, Stdio};
use std::time::Instant;

fn doubling(db: &mut Session) -> BodyFuture<'_> {
    Box::pin(async move {
        dbbench_core::fixture::double_charges(db, 5).await?;
        Ok(())
    })
}

const ONE_MB: Growth = Growth::Fixed(Size::new(1 << 20, "1MB"));

static BENCH: BenchmarkSpec = BenchmarkSpec {
    name: "busy_guard",
    module_path: "busy_guard::busy_guard",
    manifest_dir: env!("CARGO_MANIFEST_DIR"),
    source_file: file!(),
    title: "VLF test 1",
    run: RunSpec {
        fixture: FixtureKind::Credit,
        repeat: 6,
        warmup: 0,
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

static PLAIN: BenchmarkSpec = BenchmarkSpec {
    name: "busy_guard_server",
    module_path: "busy_guard::busy_guard_server",
    manifest_dir: env!("CARGO_MANIFEST_DIR"),
    source_file: file!(),
    title: "plain doubling",
    run: RunSpec {
        fixture: FixtureKind::Credit,
        repeat: 3,
        warmup: 0,
        ..RunSpec::DEFAULT
    },
    cells: &[CellSpec {
        name: "plain",
        storage: StorageSpec::DEFAULT,
        backends: &[],
    }],
    body: doubling,
};

/// Two niced busy loops, bounded by `timeout`, started through a shell that exits at once so
/// that they are not this process's descendants; returns their process ids.
fn burners() -> Vec<u32> {
    burners_niced(19)
}

/// Two busy loops at `nice` as [`burners`].
fn burners_niced(nice: u32) -> Vec<u32> {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "for i in 1 2; do nice -n {nice} timeout 240 sh -c 'while :; do :; done' \
             >/dev/null 2>&1 & echo $!; done"
        ))
        .stdout(Stdio::piped())
        .output()
        .expect("sh runs");
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

fn stop(pids: &[u32]) {
    for pid in pids {
        let _ = Command::new("kill").arg(pid.to_string()).status();
    }
}

fn show(label: &str, result: &BenchmarkResult) {
    let runs: Vec<&RunResult> = result.cells[0].measured().collect();
    for run in &runs {
        let i = run.interference.clone().unwrap_or_default();
        let pct = |v: Option<f64>| v.map_or("–".into(), |v| format!("{:.0}%", 100.0 * v));
        println!(
            "{label:6} rep {}  elapsed {:7.3} s  other CPU {:>5} cores  steal {:>4}  \
             cpu PSI {:>4}  io PSI {:>4}  load {:>5}  {}",
            run.index + 1,
            run.elapsed_s,
            i.other_cpu_cores.map_or("–".into(), |c| format!("{c:.2}")),
            pct(i.steal),
            pct(i.cpu_pressure),
            pct(i.io_pressure),
            i.load_1m.map_or("–".into(), |l| format!("{l:.2}")),
            if i.disturbed() {
                "DISTURBED"
            } else if i.judged {
                "quiet"
            } else {
                "not judged"
            }
        );
    }
    let mean = runs.iter().map(|r| r.elapsed_s).sum::<f64>() / runs.len() as f64;
    println!("{label:6} mean elapsed {mean:.3} s");
}

/// Each window's figures on a server of this machine: the server's cores beside the others'.
fn show_server(label: &str, result: &BenchmarkResult) {
    let cores = |c: Option<f64>| c.map_or("–".into(), |c| format!("{c:.2}"));
    for run in result.cells[0].measured() {
        let i = run.interference.clone().unwrap_or_default();
        println!(
            "{label:6} rep {}  elapsed {:7.3} s  server CPU {:>5} cores  other CPU {:>5} cores  \
             kernel {:>5}  load {:>5}  {}",
            run.index + 1,
            run.elapsed_s,
            cores(i.server_cpu_cores),
            cores(i.other_cpu_cores),
            cores(i.kernel_cpu_cores),
            i.load_1m.map_or("–".into(), |l| format!("{l:.2}")),
            if i.disturbed() {
                format!("DISTURBED: {}", i.disturbed_by.join("; "))
            } else if i.judged {
                "quiet".into()
            } else {
                "not judged".into()
            }
        );
    }
    for cell in &result.cells {
        if !cell.runs.iter().any(|r| !r.warmup) {
            println!("{label:6} {}: {:?}", cell.name, cell.status);
        }
    }
}

/// The server mode (module docs).
fn server(n: u32) -> Result<()> {
    let work_dir = std::env::temp_dir().join(format!("dbbench-busy-guard-{}", std::process::id()));
    let ctx = RunContext {
        scale: Scale::parse("default")?,
        volumes: Default::default(),
        work_dir: work_dir.clone(),
    };
    let bench: &'static BenchmarkSpec = Box::leak(Box::new(BenchmarkSpec {
        run: RunSpec {
            repeat: n,
            ..PLAIN.run
        },
        ..PLAIN
    }));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let outcome = runtime.block_on(async {
        let mut backend = Backend::from_env().await?;
        match backend.server_on_host() {
            Some(s) => println!("server on this host: {}", s.describe()),
            None => println!("no server on this host: every other process is a neighbour"),
        }
        println!(
            "{n} repetitions of {} at the default scale, idle then beside two burners",
            PLAIN.title
        );
        let idle = run_benchmark(bench, None, &ctx, &mut backend).await?;
        show_server("idle", &idle);
        let pids = burners_niced(0);
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        let loaded = run_benchmark(bench, None, &ctx, &mut backend).await;
        stop(&pids);
        show_server("loaded", &loaded?);
        let roots: Vec<u32> = backend.server_on_host().iter().map(|s| s.pid).collect();
        let reads = 200;
        for (label, roots) in [("without", &[][..]), ("with", &roots[..])] {
            let start = Instant::now();
            for _ in 0..reads {
                std::hint::black_box(Monitor::open_with(roots).close());
            }
            println!(
                "open + close of one window {label} the server's tree: {:.0} µs (mean of {reads})",
                start.elapsed().as_secs_f64() / f64::from(reads) * 1e6
            );
        }
        Ok(())
    });
    let _ = std::fs::remove_dir_all(&work_dir);
    outcome
}

fn main() -> Result<()> {
    if std::env::args().nth(1).as_deref() == Some("server") {
        return server(
            std::env::args()
                .nth(2)
                .and_then(|a| a.parse().ok())
                .unwrap_or(3),
        );
    }
    let n: u32 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(6);
    let work_dir = std::env::temp_dir().join(format!("dbbench-busy-guard-{}", std::process::id()));
    let ctx = RunContext {
        scale: Scale::parse("0.03125")?,
        volumes: Default::default(),
        work_dir: work_dir.clone(),
    };
    let bench: &'static BenchmarkSpec = Box::leak(Box::new(BenchmarkSpec {
        run: RunSpec {
            repeat: n,
            ..BENCH.run
        },
        ..BENCH
    }));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let run = |label: &str| -> Result<BenchmarkResult> {
        let result = runtime.block_on(async {
            let mut backend = Backend::new(EmbeddedBackend::new());
            run_benchmark(bench, None, &ctx, &mut backend).await
        })?;
        show(label, &result);
        Ok(result)
    };
    println!(
        "1. {n} repetitions of {} at scale 1/32, idle then loaded",
        BENCH.title
    );
    let idle = run("idle")?;
    let pids = burners();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let loaded = run("loaded");
    stop(&pids);
    let loaded = loaded?;

    println!("\n2. the guard's own cost");
    let reads = 200;
    let start = Instant::now();
    for _ in 0..reads {
        std::hint::black_box(Monitor::open().close());
    }
    let per_window = start.elapsed().as_secs_f64() / reads as f64;
    let windows: Vec<f64> = idle.cells[0]
        .measured()
        .chain(loaded.cells[0].measured())
        .map(|r| r.elapsed_s)
        .collect();
    let mean_window = windows.iter().sum::<f64>() / windows.len() as f64;
    println!(
        "open + close of one window: {:.0} µs (mean of {reads}); {:.3}% of the mean window \
         ({mean_window:.3} s), outside it: the runner reads before its clock starts and after it \
         stops.",
        per_window * 1e6,
        100.0 * per_window / mean_window
    );

    println!("\n3. calibrations of {}", work_dir.display());
    let dirs = [("default".to_string(), work_dir.join("db"))];
    for i in 0..5 {
        let start = Instant::now();
        let c = calibrate(&dirs)?;
        println!(
            "idle   {}  {}  ({:.2} s)",
            i + 1,
            c.line(),
            start.elapsed().as_secs_f64()
        );
    }
    let pids = burners();
    std::thread::sleep(std::time::Duration::from_millis(300));
    for i in 0..3 {
        let c = calibrate(&dirs);
        match c {
            Ok(c) => println!("loaded {}  {}", i + 1, c.line()),
            Err(e) => println!("loaded {}  failed: {e}", i + 1),
        }
    }
    stop(&pids);
    let _ = std::fs::remove_dir_all(&work_dir);
    Ok(())
}
