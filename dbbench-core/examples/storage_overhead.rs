//! What the embedded storage layer costs, measured side by side in one run.
//!
//! 1. The credit doubling workload (load the `charge` rows, then double the table three times)
//!    through the storage layer (1 data file, 1024 MB growth, `ifi = true`, a log pre-sized so it
//!    does not grow) against stock SQLite (default VFS), both with the embedded backend's pragmas:
//!    `page_size = 8192`, `journal_mode = WAL`, `synchronous = FULL`. Rounds alternate the order
//!    (A B, B A, …) so drift of the machine favours neither. Target: time ratio ≤ 1.05.
//! 2. A zero-filled growth (`ifi = false`) of the layer against
//!    `dd if=/dev/zero of=FILE bs=1M count=N conv=fdatasync` on the same disk. Target: throughput
//!    ratio ≥ 0.9.
//!
//! Run with `cargo run --release -j2 -p dbbench-core --example storage_overhead`.
//! `ROWS` (default 200000), `ROUNDS` (default 7) and `GROW_MB` (default 256) change the sizes.

use dbbench_core::__internals::config::{Growth, Size, StorageSpec};
use dbbench_core::__internals::embedded::storage::Layout;
use dbbench_core::__internals::Volumes;
use dbbench_core::fixture::{credit_rows, credit_schema, doubling_insert};
use dbbench_core::units::MIB;
use dbbench_core::Dialect;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const PRAGMAS: &str =
    "PRAGMA page_size = 8192; PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;";

/// Flushes every dirty page of the machine, so that a measurement does not pay for the
/// write-back of the previous one.
fn settle() {
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Loads `rows` credit rows and doubles the table three times; returns (load, doubling) times.
fn workload(conn: &mut rusqlite::Connection, rows: u64) -> (Duration, Duration) {
    conn.execute_batch(PRAGMAS).unwrap();
    conn.execute_batch(credit_schema(Dialect::Sqlite)).unwrap();
    settle();
    let started = Instant::now();
    let tx = conn.transaction().unwrap();
    {
        let mut stmt = tx
            .prepare(
                "INSERT INTO charge (member_no, provider_no, category_no, charge_dt, charge_amt, \
                 statement_no, charge_code) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )
            .unwrap();
        for r in credit_rows(rows) {
            stmt.execute(rusqlite::params![
                r.member_no,
                r.provider_no,
                r.category_no,
                r.charge_dt,
                r.charge_amt,
                r.statement_no,
                r.charge_code
            ])
            .unwrap();
        }
    }
    tx.commit().unwrap();
    let loaded = started.elapsed();
    let started = Instant::now();
    for n in 1..=3 {
        conn.execute_batch(&doubling_insert(Dialect::Sqlite, n))
            .unwrap();
    }
    (loaded, started.elapsed())
}

const LAYERED: StorageSpec = StorageSpec {
    growth: Some(Growth::Fixed(Size::new(1024 * MIB, "1024MB"))),
    ifi: Some(true),
    log_size: Some(Size::new(128 * MIB, "128MB")),
    ..StorageSpec::DEFAULT
};

fn run_layered(dir: &Path, rows: u64) -> (Duration, Duration) {
    let layout = Layout::create(&dir.join("layered.db"), &LAYERED, &Volumes::default()).unwrap();
    let times = workload(&mut layout.open().unwrap(), rows);
    layout.remove().unwrap();
    times
}

fn run_stock(dir: &Path, rows: u64) -> (Duration, Duration) {
    let path = dir.join("stock.db");
    let times = workload(&mut rusqlite::Connection::open(&path).unwrap(), rows);
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.clone().into_os_string();
        p.push(suffix);
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
    times
}

/// Seconds of one zero-filled growth of `mb` MiB through the layer.
fn layer_zero_fill(dir: &Path, mb: u64) -> f64 {
    let spec = StorageSpec {
        growth: Some(Growth::Fixed(Size::new(mb * MIB, "N MB"))),
        ifi: Some(false),
        ..StorageSpec::DEFAULT
    };
    let layout = Layout::create(&dir.join("grow.db"), &spec, &Volumes::default()).unwrap();
    let conn = layout.open().unwrap();
    conn.execute_batch(PRAGMAS).unwrap();
    conn.execute_batch("CREATE TABLE t (x BLOB)").unwrap();
    settle();
    layout.open_window();
    // 100 KB of rows need a second extent: the first 64 KiB extent is full, the file grows once.
    conn.execute_batch("INSERT INTO t VALUES (zeroblob(100000))")
        .unwrap();
    let run = layout.close_window();
    drop(conn);
    layout.remove().unwrap();
    let data = &run.files[0];
    assert_eq!(
        (data.growth_events, data.zero_fill_bytes),
        (1, mb * MIB),
        "one zero-filled growth"
    );
    data.growth_total_ms / 1000.0
}

/// Seconds `dd` reports for writing `mb` MiB of zeros with a final fdatasync.
fn dd_zero_fill(dir: &Path, mb: u64) -> f64 {
    let file = dir.join("dd.out");
    settle();
    let out = std::process::Command::new("dd")
        .arg("if=/dev/zero")
        .arg(format!("of={}", file.display()))
        .args(["bs=1M", &format!("count={mb}"), "conv=fdatasync"])
        .output()
        .expect("dd runs");
    let _ = std::fs::remove_file(&file);
    let text = String::from_utf8_lossy(&out.stderr);
    // "268435456 bytes (268 MB, 256 MiB) copied, 0.93 s, 288 MB/s"
    text.lines()
        .find(|l| l.contains("copied"))
        .and_then(|l| l.split(", ").find(|p| p.ends_with(" s")))
        .and_then(|p| p.trim_end_matches(" s").replace(',', ".").parse().ok())
        .unwrap_or_else(|| panic!("cannot read dd's time from: {text}"))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let rows = env_number("ROWS", 200_000);
    let rounds = env_number("ROUNDS", 7) as usize;
    let grow_mb = env_number("GROW_MB", 256);
    let dir = dbbench_core::__internals::paths::work_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .join("storage_overhead");
    std::fs::create_dir_all(&dir).unwrap();
    println!("work directory: {}", dir.display());

    println!("\n1. credit doubling: {rows} rows loaded, doubled 3 times; {rounds} rounds");
    let (mut layered, mut stock) = (Vec::new(), Vec::new());
    let _ = run_stock(&dir, rows / 4); // warm the page cache and the allocator
    for round in 0..rounds {
        let (l, s) = if round % 2 == 0 {
            let l = run_layered(&dir, rows);
            (l, run_stock(&dir, rows))
        } else {
            let s = run_stock(&dir, rows);
            (run_layered(&dir, rows), s)
        };
        println!(
            "   round {round}: layer load {:.3} s doubling {:.3} s | stock load {:.3} s doubling {:.3} s | ratio {:.3}",
            l.0.as_secs_f64(),
            l.1.as_secs_f64(),
            s.0.as_secs_f64(),
            s.1.as_secs_f64(),
            (l.0 + l.1).as_secs_f64() / (s.0 + s.1).as_secs_f64()
        );
        layered.push(l);
        stock.push(s);
    }
    let total = |v: &[(Duration, Duration)], f: fn(&(Duration, Duration)) -> Duration| {
        v.iter().map(f).sum::<Duration>().as_secs_f64()
    };
    let ratios: Vec<f64> = layered
        .iter()
        .zip(&stock)
        .map(|(l, s)| (l.0 + l.1).as_secs_f64() / (s.0 + s.1).as_secs_f64())
        .collect();
    println!(
        "   time ratio layer / stock: total {:.3} (load {:.3}, doubling {:.3}), median of rounds {:.3}  [target <= 1.05]",
        total(&layered, |t| t.0 + t.1) / total(&stock, |t| t.0 + t.1),
        total(&layered, |t| t.0) / total(&stock, |t| t.0),
        total(&layered, |t| t.1) / total(&stock, |t| t.1),
        median(ratios)
    );

    println!("\n2. zero-filled growth of {grow_mb} MiB vs dd conv=fdatasync; {rounds} rounds");
    let (mut ours, mut dds) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        let (o, d) = if round % 2 == 0 {
            let o = layer_zero_fill(&dir, grow_mb);
            (o, dd_zero_fill(&dir, grow_mb))
        } else {
            let d = dd_zero_fill(&dir, grow_mb);
            (layer_zero_fill(&dir, grow_mb), d)
        };
        let mbps = |s: f64| (grow_mb * MIB) as f64 / s / 1e6;
        println!(
            "   round {round}: layer {:.3} s ({:.0} MB/s) | dd {:.3} s ({:.0} MB/s) | ratio {:.3}",
            o,
            mbps(o),
            d,
            mbps(d),
            d / o
        );
        ours.push(o);
        dds.push(d);
    }
    let (o, d): (f64, f64) = (ours.iter().sum(), dds.iter().sum());
    println!(
        "   throughput ratio layer / dd: total {:.3}, median of rounds {:.3}  [target >= 0.9]",
        d / o,
        median(ours.iter().zip(&dds).map(|(o, d)| d / o).collect())
    );
    let _ = std::fs::remove_dir(&dir);
}
