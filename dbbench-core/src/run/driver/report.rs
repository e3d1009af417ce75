//! The report of one load: the workers' reports merged into [`LoadStats`] and a throughput
//! series, and how they land in a repetition's [`RunResult`].

use super::crew::{Execution, Outcome};
use super::latency::Latency;
use super::saturation::{self, Usage};
use super::timeline::Timeline;
use super::workload::Load;
use crate::model::load::{ErrorCounts, LoadStats, WorkerStats};
use crate::model::results::{RunResult, Series};
use std::time::{Duration, Instant};

/// What one load measured, as [`Session::load`](crate::Session::load) returns it.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadReport {
    /// Counts, latency, errors and the saturation check.
    pub stats: LoadStats,
    /// Transactions committed in each second of the measured window (`<name>: transactions/s`).
    pub throughput: Series,
}

/// Merges the workers' reports.
pub(crate) fn assemble(
    load: &Load,
    execution: Execution,
    origin: Instant,
    outcome: Outcome,
) -> LoadReport {
    let mut latency = Latency::new();
    let mut timeline = Timeline::new(origin);
    let mut errors = ErrorCounts::default();
    let mut driver = Duration::ZERO;
    let mut end = outcome.start;
    let mut workers = Vec::with_capacity(outcome.reports.len());
    for r in &outcome.reports {
        latency.merge(&r.latency);
        timeline.merge(&r.timeline);
        errors.merge(&r.errors);
        driver += r.driver;
        end = end.max(r.end);
        workers.push(WorkerStats {
            worker: r.worker,
            transactions: r.transactions,
            statements: r.statements,
            rows: r.rows,
            retries: r.retries,
            errors: r.errors,
            cpu_s: r.cpu.map(|d| d.as_secs_f64()),
            driver_s: r.driver.as_secs_f64(),
        });
    }
    let wall = end - outcome.start;
    let sum = |f: fn(&WorkerStats) -> u64| workers.iter().map(f).sum::<u64>();
    let (transactions, statements) = (sum(|w| w.transactions), sum(|w| w.statements));
    let per_s = |n: u64| {
        if wall.is_zero() {
            0.0
        } else {
            n as f64 / wall.as_secs_f64()
        }
    };
    let saturation = saturation::assess(&Usage {
        execution,
        workers: load.workers,
        wall,
        cores: saturation::cores(),
        process_cpu: outcome.process_cpu,
        driving_thread_cpu: outcome.driving_thread_cpu,
        driver,
    });
    let stats = LoadStats {
        config: load.config(),
        execution: execution.keyword().to_string(),
        started_at_s: outcome
            .start
            .saturating_duration_since(origin)
            .as_secs_f64(),
        elapsed_s: wall.as_secs_f64(),
        transactions,
        statements,
        rows: sum(|w| w.rows),
        transactions_per_s: per_s(transactions),
        statements_per_s: per_s(statements),
        latency: latency.summary(),
        errors,
        retries: sum(|w| w.retries),
        workers,
        saturation,
    };
    LoadReport {
        throughput: timeline.series(format!("{}: transactions/s", load.name)),
        stats,
    }
}

impl LoadReport {
    /// Puts the report into `run`: the stats into `loads`, the throughput into `series`, the
    /// planned (hence deterministic) counts into `counts` as `<name>_transactions`,
    /// `<name>_statements` and `<name>_rows`, and the throughput and 99th-percentile latency
    /// into `values`. A load of fixed duration has no deterministic counts.
    pub(crate) fn record(self, run: &mut RunResult) {
        let name = &self.stats.config.name;
        if self.stats.config.planned_statements.is_some() {
            for (what, n) in [
                ("transactions", self.stats.transactions),
                ("statements", self.stats.statements),
                ("rows", self.stats.rows),
            ] {
                run.counts.insert(format!("{name}_{what}"), n as i64);
            }
        }
        run.record_values([
            (
                format!("{name}_transactions_per_s"),
                self.stats.transactions_per_s,
            ),
            (format!("{name}_latency_p99_ms"), self.stats.latency.p99_ms),
        ]);
        run.series.push(self.throughput);
        run.loads.push(self.stats);
    }
}
