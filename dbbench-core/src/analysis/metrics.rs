//! The per-cell numbers the results table shows beside the elapsed time: the storage metrics the
//! VLF article tabulates (growth events, VLFs or log segments, final file sizes), the top waits,
//! and for load benchmarks the throughput and latency percentiles pgbench prints.

use crate::model::results::{CellResult, FileKind};
use std::collections::BTreeMap;

/// The metrics of a cell. Storage metrics come from its first measured run (they are
/// deterministic on the embedded engine and nearly so on SQL Server); waits sum every measured
/// run and load figures average them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CellMetrics {
    /// Autogrowth events of the data files.
    pub data_growths: Option<u64>,
    /// Autogrowth events of the log.
    pub log_growths: Option<u64>,
    /// VLFs (log segments) when the window closed.
    pub log_segments: Option<u64>,
    /// Size of all data files when the window closed.
    pub data_size_bytes: Option<u64>,
    /// Size of the log when the window closed.
    pub log_size_bytes: Option<u64>,
    /// Up to three wait types with the largest share of wait time, with their percent.
    pub top_waits: Vec<(String, f64)>,
    /// Concurrent loads: the mean over measured runs of the committed transactions per second.
    pub transactions_per_s: Option<f64>,
    /// Concurrent loads: mean p50, p95 and p99 transaction latency in milliseconds.
    pub latency_ms: Option<[f64; 3]>,
    /// Concurrent loads: transactions re-run after a retryable error, over all measured runs.
    pub retries: Option<u64>,
}

impl CellMetrics {
    /// The metrics of `cell`'s measured runs.
    pub fn of(cell: &CellResult) -> CellMetrics {
        let Some(first) = cell.measured().next() else {
            return CellMetrics::default();
        };
        let data: Vec<_> = first
            .files
            .iter()
            .filter(|f| f.kind == FileKind::Data)
            .collect();
        let log_file = first.files.iter().find(|f| f.kind == FileKind::Log);
        let loads: Vec<_> = cell.measured().flat_map(|r| r.loads.iter()).collect();
        let mean = |f: &dyn Fn(&crate::model::load::LoadStats) -> f64| {
            loads.iter().map(|l| f(l)).sum::<f64>() / loads.len() as f64
        };
        CellMetrics {
            data_growths: (!data.is_empty()).then(|| data.iter().map(|f| f.growth_events).sum()),
            log_growths: first
                .log
                .as_ref()
                .map(|l| l.growths)
                .or(log_file.map(|f| f.growth_events)),
            log_segments: first.log.as_ref().map(|l| l.segments_after),
            data_size_bytes: (!data.is_empty())
                .then(|| data.iter().map(|f| f.size_after_bytes).sum()),
            log_size_bytes: log_file
                .map(|f| f.size_after_bytes)
                .or(first.log.as_ref().map(|l| l.size_after_bytes)),
            top_waits: top_waits(cell, 3),
            transactions_per_s: (!loads.is_empty()).then(|| mean(&|l| l.transactions_per_s)),
            latency_ms: (!loads.is_empty()).then(|| {
                [
                    mean(&|l| l.latency.p50_ms),
                    mean(&|l| l.latency.p95_ms),
                    mean(&|l| l.latency.p99_ms),
                ]
            }),
            retries: (!loads.is_empty()).then(|| loads.iter().map(|l| l.retries).sum()),
        }
    }
}

/// Wait types of `cell` by their share of all wait time in the measured runs, largest first,
/// at most `limit`.
pub fn top_waits(cell: &CellResult, limit: usize) -> Vec<(String, f64)> {
    let mut totals: BTreeMap<&str, f64> = BTreeMap::new();
    for run in cell.measured() {
        for w in &run.waits {
            *totals.entry(&w.wait_type).or_default() += w.wait_time_s;
        }
    }
    let sum: f64 = totals.values().sum();
    if sum <= 0.0 {
        return Vec::new();
    }
    let mut shares: Vec<(String, f64)> = totals
        .into_iter()
        .map(|(name, t)| (name.to_string(), 100.0 * t / sum))
        .collect();
    shares.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    shares.truncate(limit);
    shares
}

/// The measured runs' elapsed times of a cell.
pub fn elapsed_of(cell: &CellResult) -> Vec<f64> {
    cell.measured().map(|r| r.elapsed_s).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_are_the_three_largest_shares() {
        let result = crate::model::sample::vlf();
        let waits = top_waits(&result.cells[0], 3);
        assert_eq!(waits.len(), 3.min(result.cells[0].runs[1].waits.len()));
        assert!(waits.windows(2).all(|w| w[0].1 >= w[1].1), "{waits:?}");
        assert_eq!(CellMetrics::of(&result.cells[0]).top_waits, waits);
    }

    #[test]
    fn a_cell_without_loads_has_no_throughput() {
        let result = crate::model::sample::vlf();
        let m = CellMetrics::of(&result.cells[0]);
        assert_eq!(
            (m.transactions_per_s, m.latency_ms, m.retries),
            (None, None, None)
        );
        assert_eq!(m.data_growths, Some(1200));
    }
}
