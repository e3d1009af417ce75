//! Helpers shared by the integration tests of `dbbench-core`: scratch directories, run contexts,
//! running a benchmark the way `#[db_bench]` tests do, declaring benchmarks by hand as the macro
//! would emit them, direct access to the storage layer under SQLite, and the owners that SQL
//! Server ownership markers name.
//!
//! Each test file includes this module with `mod support;` and uses what it needs.
#![allow(dead_code)]

pub mod conformance;
#[cfg(feature = "postgres")]
pub mod existing_postgres;
pub mod neighbour;
pub mod proxy;
pub mod silent;

#[allow(unused_imports)]
pub(crate) use conformance::backend_conformance;

use dbbench_core::__internals::config::{Growth, Size, StorageSpec};
#[cfg(feature = "embedded")]
use dbbench_core::__internals::embedded::storage::Layout;
#[cfg(feature = "embedded")]
use dbbench_core::__internals::embedded::EmbeddedBackend;
use dbbench_core::__internals::Backend;
use dbbench_core::__internals::Volumes;
use dbbench_core::__internals::{exclusive, publish, run_benchmark, RunContext};
use dbbench_core::__internals::{BenchmarkSpec, CellSpec};
use dbbench_core::results::BenchmarkResult;
use dbbench_core::{Scale, Session};
use std::path::{Path, PathBuf};

/// A fresh, empty directory for one test, below cargo's scratch directory for tests.
/// Directories that earlier runs of the same test left are removed.
pub fn scratch(name: &str) -> PathBuf {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    for entry in std::fs::read_dir(tmp).into_iter().flatten().flatten() {
        let file_name = entry.file_name().to_string_lossy().into_owned();
        let earlier = file_name
            .strip_prefix(name)
            .and_then(|rest| rest.strip_prefix('-'))
            .is_some_and(|pid| pid.chars().all(|c| c.is_ascii_digit()));
        if earlier {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
    let dir = tmp.join(format!("{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A run context with the work directory `scratch(name)`.
pub fn context(name: &str, scale: Scale, volumes: Volumes) -> RunContext {
    RunContext {
        scale,
        volumes,
        work_dir: scratch(name),
    }
}

/// A run context with scale and volumes from the environment (`DBBENCH_SCALE`, smoke when unset;
/// `DBBENCH_VOLUMES`), as `#[db_bench]` tests get, but the work directory `scratch(name)`: test runs
/// must not mix with the user's results.
pub fn context_from_env(name: &str) -> RunContext {
    context(
        name,
        Scale::from_env(Scale::smoke()).unwrap(),
        Volumes::from_env().unwrap(),
    )
}

/// Volumes named `names`, each bound to a new directory `base/<name>`.
pub fn volumes(base: &Path, names: &[&str]) -> Volumes {
    let mut volumes = Volumes::default();
    for name in names {
        let dir = base.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        volumes.bind(name, dir);
    }
    volumes
}

/// Runs every cell of `bench` in `ctx` on the backend `DBBENCH_BACKEND` names (embedded by
/// default), holding the process-wide benchmark lock, on a two-thread runtime, and publishes the
/// results (JSON, CSV, report) as the harness does.
pub fn run(bench: &'static BenchmarkSpec, ctx: &RunContext) -> BenchmarkResult {
    try_run(bench, ctx).unwrap()
}

/// [`run`], returning the error of a benchmark that could not run instead of panicking.
pub fn try_run(
    bench: &'static BenchmarkSpec,
    ctx: &RunContext,
) -> dbbench_core::Result<BenchmarkResult> {
    exclusively(async {
        let mut backend = Backend::from_env().await?;
        let result = run_benchmark(bench, None, ctx, &mut backend).await?;
        publish(&result, &bench.file_stem(), &ctx.work_dir)?;
        Ok(result)
    })
}

/// [`run`] on the embedded backend whatever `DBBENCH_BACKEND` says.
#[cfg(feature = "embedded")]
pub fn run_embedded(bench: &'static BenchmarkSpec, ctx: &RunContext) -> BenchmarkResult {
    exclusively(async {
        let mut backend = Backend::new(EmbeddedBackend::new());
        let result = run_benchmark(bench, None, ctx, &mut backend).await?;
        publish(&result, &bench.file_stem(), &ctx.work_dir)?;
        Ok::<_, dbbench_core::Error>(result)
    })
    .unwrap()
}

/// Runs `work` to completion on a new two-thread runtime, holding the process-wide benchmark lock.
pub fn exclusively<T>(work: impl std::future::Future<Output = T>) -> T {
    let _lock = exclusive();
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
        .block_on(work)
}

/// The article's doubling insert on the credit fixture, `loops` times (loop `n` copies every row
/// of `charge`, `30 * n` days later), with a lap `loop <n>` after each.
pub async fn double(db: &mut Session, loops: u32) -> dbbench_core::Result<()> {
    for n in 1..=loops {
        let sql = dbbench_core::fixture::doubling_insert(db.dialect(), n);
        db.execute(&sql).await?;
        db.lap(format!("loop {n}"));
    }
    Ok(())
}

/// A cell named `name` with storage options `storage`, on the benchmark's backends.
pub const fn cell(name: &'static str, storage: StorageSpec) -> CellSpec {
    CellSpec {
        name,
        storage,
        backends: &[],
    }
}

/// Declares `static $NAME: BenchmarkSpec` for the body function `$body` of this test crate, as
/// `#[db_bench]` would: named after the body, with module path `<test crate>::<body>`, the file
/// the macro is invoked in and this crate's manifest directory.
///
/// ```ignore
/// support::benchmark! {
///     static CONTENDED = contended,
///     title: "Eight writers with no busy timeout",
///     run: RunSpec::DEFAULT,
///     cells: [cell("one_file", StorageSpec::DEFAULT)],
/// }
/// ```
#[allow(unused_macros)] // See the `use` below.
macro_rules! benchmark {
    // `module`: the path the benchmark is named under, in place of its module's. A database is
    // named after it (`<path>_<cell>_r<repetition>_<pid>`), and Babelfish keeps only 63
    // characters of a database name, so the conformance suite's benchmarks, deep in modules,
    // give a short one.
    (
        static $name:ident = $body:ident,
        module: $module:literal,
        title: $title:expr,
        run: $run:expr,
        cells: [$($cell:expr),+ $(,)?] $(,)?
    ) => {
        static $name: ::dbbench_core::__internals::BenchmarkSpec = ::dbbench_core::__internals::BenchmarkSpec {
            name: stringify!($body),
            module_path: concat!($module, "::", stringify!($body)),
            manifest_dir: env!("CARGO_MANIFEST_DIR"),
            source_file: file!(),
            title: $title,
            run: $run,
            cells: &[$($cell),+],
            body: $body,
        };
    };
    (
        static $name:ident = $body:ident,
        title: $title:expr,
        run: $run:expr,
        cells: [$($cell:expr),+ $(,)?] $(,)?
    ) => {
        static $name: ::dbbench_core::__internals::BenchmarkSpec = ::dbbench_core::__internals::BenchmarkSpec {
            name: stringify!($body),
            module_path: concat!(module_path!(), "::", stringify!($body)),
            manifest_dir: env!("CARGO_MANIFEST_DIR"),
            source_file: file!(),
            title: $title,
            run: $run,
            cells: &[$($cell),+],
            body: $body,
        };
    };
}
// Makes the macro a path, `support::benchmark!`; the allows are for the test files without one.
#[allow(unused_imports)]
pub(crate) use benchmark;

/// `mib` mebibytes, as a fixed size.
pub const fn mib(mib: u64, text: &'static str) -> Size {
    Size::new(mib << 20, text)
}

/// A fixed growth of `mib` mebibytes.
pub const fn grow_mib(mib: u64, text: &'static str) -> Growth {
    Growth::Fixed(Size::new(mib << 20, text))
}

/// Creates a layout for `spec` at `dir/db.db`.
#[cfg(feature = "embedded")]
pub fn layout(dir: &Path, spec: &StorageSpec, volumes: &Volumes) -> Layout {
    Layout::create(&dir.join("db.db"), spec, volumes).unwrap()
}

/// Opens a connection with the embedded backend's settings.
#[cfg(feature = "embedded")]
pub fn connect(layout: &Layout) -> rusqlite::Connection {
    let c = layout.open().unwrap();
    c.busy_timeout(std::time::Duration::from_secs(60)).unwrap();
    c.execute_batch(
        "PRAGMA page_size = 8192; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;",
    )
    .unwrap();
    c
}

/// Creates table `t` and inserts `rows` rows of 200 bytes in one transaction.
pub fn fill(c: &mut rusqlite::Connection, rows: u64) {
    c.execute_batch("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, pad BLOB)")
        .unwrap();
    insert(c, rows);
}

/// Inserts `rows` rows of 200 bytes into `t` in one transaction.
pub fn insert(c: &mut rusqlite::Connection, rows: u64) {
    let tx = c.transaction().unwrap();
    {
        let mut stmt = tx
            .prepare("INSERT INTO t (pad) VALUES (randomblob(200))")
            .unwrap();
        for _ in 0..rows {
            stmt.execute([]).unwrap();
        }
    }
    tx.commit().unwrap();
}

/// `PRAGMA integrity_check` must say ok.
pub fn assert_intact(c: &rusqlite::Connection) {
    let verdict: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(verdict, "ok");
}

/// The files in `dir`, sorted.
pub fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[cfg(feature = "postgres")]
/// [`run`] on a managed PostgreSQL cluster whatever `DBBENCH_BACKEND` says; the cluster is stopped
/// and removed when the backend is dropped at the end.
pub fn run_postgres(bench: &'static BenchmarkSpec, ctx: &RunContext) -> BenchmarkResult {
    exclusively(async {
        let backend = dbbench_core::__internals::postgres::PostgresBackend::managed()?;
        let mut backend = Backend::new(backend);
        run_benchmark(bench, None, ctx, &mut backend).await
    })
    .unwrap()
}

#[cfg(feature = "postgres")]
/// [`run`] on the existing PostgreSQL server `settings` reaches, as `DBBENCH_POSTGRES` would name
/// it; the error of a benchmark that could not run (the server unreachable) is returned.
pub fn try_run_external(
    bench: &'static BenchmarkSpec,
    ctx: &RunContext,
    settings: dbbench_core::__internals::postgres::settings::PgSettings,
) -> dbbench_core::Result<BenchmarkResult> {
    exclusively(async {
        let backend =
            dbbench_core::__internals::postgres::PostgresBackend::external(settings).await?;
        let mut backend = Backend::new(backend);
        run_benchmark(bench, None, ctx, &mut backend).await
    })
}

/// The PID of the managed cluster's postmaster that `db` is connected to (the first line of
/// `postmaster.pid` in the data directory the server reports).
pub async fn postmaster_pid(db: &mut Session) -> i32 {
    let data_dir: String = db.query_scalar("SHOW data_directory").await.unwrap();
    let pid_file = std::fs::read_to_string(format!("{data_dir}/postmaster.pid")).unwrap();
    pid_file.lines().next().unwrap().trim().parse().unwrap()
}

/// SIGKILLs process `pid` from a thread of its own once `after` has passed.
pub fn kill_after(pid: i32, after: std::time::Duration) {
    std::thread::spawn(move || {
        std::thread::sleep(after);
        // SAFETY: kill has no memory preconditions; the pid is the test's own cluster's.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    });
}

/// Processes whose working directory is under `dir` (a managed cluster's server processes work in
/// its data directory).
pub fn processes_under(dir: &Path) -> Vec<u32> {
    let Ok(dir) = std::fs::canonicalize(dir) else {
        return Vec::new();
    };
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(&dir))
        })
        .collect()
}

/// Asserts that no managed cluster is left in `ctx`'s work dir: no directory, no process.
#[cfg(feature = "postgres")]
pub fn assert_no_cluster_left(ctx: &RunContext) {
    use dbbench_core::__internals::postgres::{cluster, place};
    // Where the clusters went: under the work dir, or dbbench's directory under the temp dir when
    // the server's user cannot reach the work dir, which other processes' clusters share.
    let (base, moved) = place::work_base(&ctx.work_dir, cluster::run_as().unwrap());
    let ours = format!("pg-{}-", std::process::id());
    let left: Vec<String> = listing(&base)
        .into_iter()
        .filter(|name| moved.is_none() || name.starts_with(&ours))
        .collect();
    assert!(
        processes_under(&ctx.work_dir).is_empty() && processes_under(&base).is_empty(),
        "server processes left"
    );
    assert!(
        left.is_empty(),
        "cluster directories left in {}: {left:?}",
        base.display()
    );
}

/// This process's start in clock ticks since boot (field 22 of `/proc/self/stat`), as ownership
/// markers record it.
pub fn my_start() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 1..];
    after.split_whitespace().nth(19).unwrap().parse().unwrap()
}

/// A PID no process can have: one above the kernel's largest.
pub fn no_such_pid() -> u32 {
    let max: u32 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    max + 1
}

/// The SQL Server ownership marker that dbbench process `pid`, started at tick `start` on this
/// host, writes (engine/mssql/marker.rs).
pub fn mssql_marker(pid: u32, start: u64) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let host = host.trim();
    format!(
        "created by dbbench {} on {host} (pid {pid}, started 1780000000) owner_host={host} \
         owner_pid={pid} owner_start={start}",
        env!("CARGO_PKG_VERSION")
    )
}
