//! One worker: it opens and warms its own connection, waits for the common start, then runs its
//! share of the work in transactions, retrying busy and deadlocked ones, and reports what it
//! counted.
//!
//! The hot path takes two clock readings per transaction and records into the worker's own
//! histogram and timeline: no locks, no shared counters and no allocation per statement.

use super::arrival::Arrivals;
use super::latency::Latency;
use super::timeline::Timeline;
use super::workload::{Load, Work};
use super::Op;
use crate::engine::connection::Connection;
use crate::engine::profile::{Control, DriverSql};
use crate::engine::Database;
use crate::model::error::{Error, Result};
use crate::model::load::ErrorCounts;
use crate::util::rng::SplitMix64;
use crate::util::unwind::CatchUnwind;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// What every worker of one load shares.
pub(crate) struct Shared<F> {
    /// The load.
    pub load: Load,
    /// The measured window's start: the timeline counts from here.
    pub origin: Instant,
    /// The database the workers connect to.
    pub database: Arc<Database>,
    /// The user's statement closure.
    pub statement: F,
    /// Set when the load must end early (a worker failed, or the load was dropped).
    pub stop: AtomicBool,
    /// Whether each worker has its own thread, so its thread CPU time is its own.
    pub own_thread: bool,
}

/// The state of the common start.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Signal {
    /// Workers wait.
    Wait,
    /// The measured load started at this instant.
    Go(Instant),
    /// The load was abandoned before it started.
    Abort,
}

/// What a worker tells the coordinator.
pub(crate) enum Event {
    /// Connected and warmed; waiting for the start.
    Ready,
    /// Finished its work.
    Done(Box<WorkerReport>),
    /// Failed; the load stops.
    Failed {
        /// The worker's number.
        worker: u32,
        /// Why.
        error: Error,
    },
}

/// What one worker counted.
#[derive(Debug)]
pub(crate) struct WorkerReport {
    pub worker: u32,
    pub transactions: u64,
    pub statements: u64,
    pub rows: u64,
    pub retries: u64,
    pub errors: ErrorCounts,
    pub latency: Latency,
    pub timeline: Timeline,
    /// When its last transaction ended (the start if it had none).
    pub end: Instant,
    /// CPU time of its thread during the load, when it has its own thread.
    pub cpu: Option<Duration>,
    /// Time spent in the driver's code between transactions.
    pub driver: Duration,
}

/// One worker before it runs.
pub(crate) struct Worker<F> {
    /// The worker's number.
    pub id: u32,
    /// Its statements, or `None` for a duration.
    pub share: Option<u64>,
    pub shared: Arc<Shared<F>>,
    pub gate: watch::Receiver<Signal>,
    pub events: mpsc::UnboundedSender<Event>,
}

/// A seed for stream `stream` of worker `worker`, so workers draw independent sequences.
fn seed_for(seed: u64, worker: u32, stream: u64) -> u64 {
    SplitMix64::new(seed ^ (u64::from(worker) << 32) ^ stream).next_u64()
}

impl<F> Worker<F>
where
    F: AsyncFn(&mut Connection, Op) -> Result<u64>,
{
    /// Runs the worker and reports its outcome; a panic in the user's closure becomes an error.
    pub(crate) async fn run(self) {
        let (id, events) = (self.id, self.events.clone());
        let event = match CatchUnwind::new(self.work()).await {
            Ok(Ok(report)) => Event::Done(Box::new(report)),
            Ok(Err(error)) => Event::Failed { worker: id, error },
            Err(panic) => Event::Failed {
                worker: id,
                error: Error::Panic(panic),
            },
        };
        // The coordinator is gone only when the load was dropped; nobody needs the outcome then.
        let _ = events.send(event);
    }

    /// Connects, warms up, waits for the start and works. Consumes the worker, so its connection
    /// and database handle are closed before the coordinator hears the outcome.
    async fn work(mut self) -> Result<WorkerReport> {
        let mut conn = self.shared.database.connect_worker().await?;
        let profile = self.shared.database.profile();
        if let Some(wait) = self.shared.load.lock_timeout {
            conn.batch(&(profile.lock_timeout)(wait)).await?;
        }
        for setup in &self.shared.load.setup {
            conn.batch(setup).await?;
        }
        let driver_sql = profile.driver_sql;
        conn.query(driver_sql.warm_up).await?;
        let _ = self.events.send(Event::Ready);
        let start = self.wait_for_start().await?;
        let cpu_before = self.thread_cpu();
        let mut report = self.transactions(&mut conn, driver_sql, start).await?;
        report.cpu = cpu_before
            .zip(self.thread_cpu())
            .map(|(before, after)| after.saturating_sub(before));
        // Before the connection closes, what the backend reads from its session (SQL Server: its
        // waits). Not the worker's failure when it cannot: the window then says it is missing.
        let _ = conn.engine().finish().outcome().await;
        Ok(report)
    }

    fn thread_cpu(&self) -> Option<Duration> {
        self.shared
            .own_thread
            .then(super::saturation::thread_cpu)
            .flatten()
    }

    async fn wait_for_start(&mut self) -> Result<Instant> {
        loop {
            let signal = *self.gate.borrow_and_update();
            match signal {
                Signal::Go(start) => return Ok(start),
                Signal::Abort => break,
                Signal::Wait => {}
            }
            if self.gate.changed().await.is_err() {
                break;
            }
        }
        Err(Error::msg("the load was abandoned before it started"))
    }

    /// The transaction loop.
    async fn transactions(
        &self,
        conn: &mut Connection,
        sql: DriverSql,
        start: Instant,
    ) -> Result<WorkerReport> {
        let load = &self.shared.load;
        let per_tx = u64::from(load.statements_per_transaction);
        let deadline = match load.work {
            Work::Duration(d) => Some(start + d),
            _ => None,
        };
        let mut arrivals = load.target_rate.map(|rate| {
            let per_worker = rate / f64::from(load.workers);
            Arrivals::new(start, per_worker, seed_for(load.seed, self.id, 0))
        });
        let mut backoff = SplitMix64::new(seed_for(load.seed, self.id, 1));
        let mut report = WorkerReport {
            worker: self.id,
            transactions: 0,
            statements: 0,
            rows: 0,
            retries: 0,
            errors: ErrorCounts::default(),
            latency: Latency::new(),
            timeline: Timeline::new(self.shared.origin),
            end: start,
            cpu: None,
            driver: Duration::ZERO,
        };
        let mut done = 0u64;
        // Driver time counts from when this worker resumed, not from the common start: the wake-up
        // of a waiting thread is start skew, which the elapsed time already includes.
        let mut last_end = Instant::now();
        loop {
            if self.shared.stop.load(Ordering::Relaxed) {
                break;
            }
            let n = match self.share {
                Some(share) if done >= share => break,
                Some(share) => (share - done).min(per_tx),
                None => per_tx,
            };
            let arrival = arrivals.as_mut().map(Arrivals::next_arrival);
            let pause_end = match (arrival, load.think_time) {
                (Some(at), _) => Some(at),
                (None, Some(think)) if report.transactions > 0 => Some(last_end + think),
                _ => None,
            };
            let ready = Instant::now();
            report.driver += ready - last_end;
            let next_start = pause_end.map_or(ready, |at| at.max(ready));
            if deadline.is_some_and(|d| next_start >= d) {
                break;
            }
            let began = match pause_end {
                Some(at) if at > ready => {
                    tokio::time::sleep_until(at.into()).await;
                    Instant::now()
                }
                _ => ready,
            };
            let rows = self
                .transaction(conn, sql, &mut report, done, n, &mut backoff)
                .await?;
            let end = Instant::now();
            report.latency.record(end - arrival.unwrap_or(began));
            report.timeline.record(end);
            report.transactions += 1;
            report.statements += n;
            report.rows += rows;
            done += n;
            last_end = end;
        }
        report.end = last_end;
        Ok(report)
    }

    /// One transaction of `n` statements from the worker's statement `first`, retried after busy
    /// and deadlock errors; returns the rows its statements reported.
    async fn transaction(
        &self,
        conn: &mut Connection,
        sql: DriverSql,
        report: &mut WorkerReport,
        first: u64,
        n: u64,
        backoff: &mut SplitMix64,
    ) -> Result<u64> {
        let mut attempt = 0u32;
        loop {
            match self
                .attempt(conn, sql, report.transactions, first, n, attempt)
                .await
            {
                Ok(rows) => return Ok(rows),
                Err(error) => {
                    let kind = (self.shared.database.profile().classify)(&error);
                    report.errors.add(kind);
                    // The transaction may be open (a statement failed) or gone already (BEGIN
                    // failed, or the server rolled it back); in both cases the connection must
                    // leave it, and a failing rollback means there was nothing left to undo.
                    let _ = conn.batch(sql.rollback).await;
                    let stopping = self.shared.stop.load(Ordering::Relaxed);
                    if !kind.retryable() || attempt >= self.shared.load.max_retries || stopping {
                        return Err(Error::msg(format!(
                            "transaction {} failed ({}) after {attempt} retries: {error}",
                            report.transactions,
                            kind.keyword()
                        )));
                    }
                    attempt += 1;
                    report.retries += 1;
                    // Full jitter up to 2^attempt ms (capped at 32 ms) keeps retrying workers from
                    // colliding again in lockstep.
                    let cap_us = 1000u64 << attempt.min(5);
                    let wait = Duration::from_micros(backoff.next_u64() % (cap_us + 1));
                    tokio::time::sleep(wait).await;
                }
            }
        }
    }

    async fn attempt(
        &self,
        conn: &mut Connection,
        sql: DriverSql,
        transaction: u64,
        first: u64,
        n: u64,
        attempt: u32,
    ) -> Result<u64> {
        let workers = u64::from(self.shared.load.workers);
        control(conn, sql, sql.begin).await?;
        let mut rows = 0;
        for position in 0..n {
            let sequence = first + position;
            let op = Op {
                worker: self.id,
                workers: self.shared.load.workers,
                sequence,
                id: sequence * workers + u64::from(self.id),
                transaction,
                position: position as u32,
                attempt,
            };
            rows += (self.shared.statement)(conn, op).await?;
        }
        control(conn, sql, sql.commit).await?;
        Ok(rows)
    }
}

/// Sends `statement` (the profile's `begin` or `commit`) the way the engine's profile says.
async fn control(conn: &mut Connection, sql: DriverSql, statement: &str) -> Result<()> {
    match sql.control {
        Control::Batch => conn.batch(statement).await,
        Control::Prepared => conn.execute(statement).await.map(|_| ()),
    }
}
