//! Results that look like a real run of the VLF article's experiment, for unit tests of the
//! code that summarises, exports and draws results. Test-only: production code never invents
//! measurements.

use crate::model::results::{
    BackendInfo, BenchmarkResult, CellResult, CellStatus, FileKind, FileStats, Lap, LogStats,
    RunInfo, RunResult, Series, WaitStat, SCHEMA_VERSION,
};
use std::collections::BTreeMap;

const MIB: u64 = 1024 * 1024;

/// One cell: its options, the elapsed time of each measured run, and its growth behaviour.
pub struct CellPlan<'a> {
    pub name: &'a str,
    pub config: &'a [(&'a str, &'a str)],
    pub elapsed: &'a [f64],
    pub growth_events: u64,
    pub segments: u64,
}

/// The three-cell VLF benchmark: 1 MB growth without IFI, 1 GB growth with IFI, pre-grown log.
pub fn vlf() -> BenchmarkResult {
    benchmark(&[
        CellPlan {
            name: "test_1",
            config: &[("growth", "1MB"), ("ifi", "false"), ("log_growth", "1MB")],
            elapsed: &[10.74, 10.52, 10.91],
            growth_events: 1200,
            segments: 4800,
        },
        CellPlan {
            name: "test_3",
            config: &[
                ("growth", "1024MB"),
                ("ifi", "true"),
                ("log_growth", "1024MB"),
            ],
            elapsed: &[7.71, 7.80, 7.62],
            growth_events: 2,
            segments: 24,
        },
        CellPlan {
            name: "test_4",
            config: &[
                ("growth", "1024MB"),
                ("ifi", "true"),
                ("log_growth", "1024MB"),
                ("log_pregrow", "4000MB"),
            ],
            elapsed: &[7.11, 7.95, 7.40],
            growth_events: 1,
            segments: 16,
        },
    ])
}

/// A benchmark result with one warm-up and the given measured runs per cell.
pub fn benchmark(cells: &[CellPlan<'_>]) -> BenchmarkResult {
    let mut sequence = 0;
    let cells: Vec<CellResult> = cells
        .iter()
        .map(|plan| {
            let mut runs = vec![run(plan, 0, plan.elapsed[0] * 1.3, true, &mut sequence)];
            for (i, &elapsed) in plan.elapsed.iter().enumerate() {
                runs.push(run(plan, i as u32 + 1, elapsed, false, &mut sequence));
            }
            CellResult {
                name: plan.name.to_string(),
                config: plan
                    .config
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .chain([("data_files".to_string(), "1".to_string())])
                    .collect(),
                effective: BTreeMap::from([("data_size_bytes".to_string(), 64 * MIB)]),
                status: CellStatus::Ok,
                runs,
                invocation: None,
                calibration: Some(calibration()),
            }
        })
        .collect();
    BenchmarkResult {
        schema_version: SCHEMA_VERSION,
        dbbench_version: "0.1.0".into(),
        benchmark: "vlf::doubling".into(),
        title: "Doubling the charge table".into(),
        started_at_unix_s: 1_700_000_000,
        scale: "default".into(),
        backend: BackendInfo {
            kind: "embedded".into(),
            version: "SQLite 3.50.2".into(),
            preconditions: BTreeMap::from([("journal_mode".into(), "wal".into())]),
            ..Default::default()
        },
        host: crate::model::host::HostInfo {
            cpu_model: "Test CPU".into(),
            cores: 2,
            memory_bytes: 24 << 30,
            kernel: "6.1.0".into(),
            file_system: "ext4".into(),
            ..Default::default()
        },
        run: RunInfo {
            repeat: cells_len(&cells),
            warmup: 1,
            fixture: "credit".into(),
            fixture_rows: 10_000,
            order: "interleaved".into(),
            baseline: "test_1".into(),
            timeout_s: None,
            build_profile: "release".into(),
            precision: None,
            cache: crate::model::start::CacheState::Warm,
            forked: false,
        },
        cells,
        reference: None,
        calibration: Some(calibration()),
        server_on_host: None,
        stopping: None,
        not_applicable: None,
        elsewhere: Vec::new(),
        earlier: Vec::new(),
    }
}

/// The calibration of the sample's machine.
pub fn calibration() -> crate::model::calibration::Calibration {
    crate::model::calibration::Calibration {
        build_profile: "release".into(),
        cpu_loop_ms: 41.2,
        volumes: vec![crate::model::calibration::VolumeCalibration {
            name: "default".into(),
            fsync_ms: 0.354,
            write_mb_s: 812.0,
            commit_ms: 0.52,
        }],
    }
}

fn cells_len(cells: &[CellResult]) -> u32 {
    cells
        .first()
        .map(|c| c.measured().count() as u32)
        .unwrap_or(0)
}

fn run(plan: &CellPlan<'_>, index: u32, elapsed: f64, warmup: bool, seq: &mut u32) -> RunResult {
    *seq += 1;
    let laps = (1..=5)
        .map(|n| Lap {
            name: format!("loop {n}"),
            at_s: elapsed * f64::from(1 << n) / 62.0 * 2.0 - elapsed * 2.0 / 62.0,
            split_s: elapsed * f64::from(1 << (n - 1)) / 31.0,
        })
        .collect();
    let file = |name: &str, kind, growths: u64| FileStats {
        name: name.into(),
        kind,
        volume: None,
        size_before_bytes: 64 * MIB,
        size_after_bytes: 64 * MIB + growths * MIB,
        reads: 10,
        writes: 1000 + growths,
        bytes_read: 80 * 1024,
        bytes_written: 300 * MIB,
        read_stall_ms: 1.5,
        write_stall_ms: 2000.0,
        flushes: 40 + growths,
        growth_events: growths,
        growth_bytes: growths * MIB,
        zero_fill_bytes: if kind == FileKind::Log {
            growths * MIB
        } else {
            0
        },
        growth_total_ms: growths as f64 * 0.8,
        growth_max_ms: 3.0,
    };
    let samples = (elapsed / 0.5).ceil() as usize;
    RunResult {
        index,
        sequence: *seq - 1,
        warmup,
        fork: None,
        position: None,
        elapsed_s: elapsed,
        laps,
        files: vec![
            file("data_1", FileKind::Data, plan.growth_events),
            file("log", FileKind::Log, plan.growth_events / 2),
        ],
        log: Some(LogStats {
            growths: plan.growth_events / 2,
            segments_before: 4,
            segments_after: plan.segments,
            size_before_bytes: 64 * MIB,
            size_after_bytes: 64 * MIB + plan.growth_events / 2 * MIB,
        }),
        autogrowths: Vec::new(),
        loads: Vec::new(),
        facts: BTreeMap::new(),
        settings: BTreeMap::new(),
        start: None,
        set_aside: None,
        interference: Some(crate::model::interference::Interference {
            window_s: elapsed,
            other_cpu_cores: Some(0.03),
            kernel_cpu_cores: Some(0.02),
            server_cpu_cores: None,
            steal: Some(0.0),
            cpu_pressure: Some(0.01),
            io_pressure: Some(0.12),
            load_1m: Some(1.1),
            judged: true,
            disturbed_by: Vec::new(),
            server: None,
        }),
        waits: vec![
            wait("WRITELOG", 3.2 * elapsed / 10.0, 70.0),
            wait("PREEMPTIVE_OS_FLUSHFILEBUFFERS", 1.0, 22.0),
            wait("PAGEIOLATCH_EX", 0.4, 8.0),
        ],
        series: vec![Series {
            name: "Log Bytes Flushed/sec".into(),
            unit: "bytes/s".into(),
            interval_s: 0.5,
            values: (0..samples)
                .map(|i| 4.0e6 + 1.5e6 * (i as f64 * 0.9 + f64::from(index)).sin())
                .collect(),
        }],
        counts: BTreeMap::from([("rows_after".into(), 320_000)]),
        values: BTreeMap::from([("throughput_rows_per_s".into(), 310_000.0 / elapsed)]),
        unavailable: BTreeMap::new(),
    }
}

fn wait(name: &str, time: f64, pct: f64) -> WaitStat {
    WaitStat {
        wait_type: name.into(),
        wait_time_s: time,
        waiting_tasks: 100,
        pct,
        running_pct: pct,
    }
}

/// Two cells of a concurrent load: each measured run holds one load of `tps[cell]` transactions
/// per second for four seconds, its per-second throughput series and its latency percentiles.
pub fn load(tps: &[f64]) -> BenchmarkResult {
    use crate::model::load::{LatencyStats, LoadConfig, LoadStats, SaturationStats, WorkConfig};
    let mut result = benchmark(&[
        CellPlan {
            name: "same_volume",
            config: &[],
            elapsed: &[4.1, 4.2],
            growth_events: 3,
            segments: 8,
        },
        CellPlan {
            name: "separate_volumes",
            config: &[("data_on", "data"), ("log_on", "log")],
            elapsed: &[4.0, 4.1],
            growth_events: 3,
            segments: 8,
        },
    ]);
    result.benchmark = "population::population".into();
    for (cell, &rate) in result.cells.iter_mut().zip(tps) {
        for run in &mut cell.runs {
            run.series = vec![Series {
                name: "insert: transactions/s".into(),
                unit: "1/s".into(),
                interval_s: 1.0,
                values: vec![rate * 0.9, rate, rate * 1.1, rate],
            }];
            run.loads = vec![LoadStats {
                config: LoadConfig {
                    name: "insert".into(),
                    workers: 4,
                    work: WorkConfig::Duration { duration_s: 4.0 },
                    statements_per_transaction: 10,
                    planned_statements: None,
                    planned_transactions: None,
                    worker_statements: Vec::new(),
                    think_time_ms: None,
                    target_rate_per_s: None,
                    lock_timeout_ms: None,
                    setup: Vec::new(),
                    max_retries: 3,
                    seed: 1,
                },
                execution: "threads".into(),
                started_at_s: 0.1,
                elapsed_s: 4.0,
                transactions: (rate * 4.0) as u64,
                statements: (rate * 40.0) as u64,
                rows: (rate * 40.0) as u64,
                transactions_per_s: rate,
                statements_per_s: rate * 10.0,
                latency: LatencyStats {
                    transactions: (rate * 4.0) as u64,
                    mean_ms: 1.2,
                    p50_ms: 1.0,
                    p95_ms: 2.5,
                    p99_ms: 4.0,
                    max_ms: 9.0,
                },
                errors: Default::default(),
                retries: 2,
                workers: Vec::new(),
                saturation: SaturationStats::default(),
            }];
        }
    }
    result.run.baseline = "same_volume".into();
    result
}
