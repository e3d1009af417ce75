//! The workers of one load as a crew: how they run (an OS thread each for engines whose calls
//! block, asynchronous tasks for network engines), the common start after every connection is
//! warmed, and collecting their reports. Dropping a crew mid-load (a body timeout) stops the
//! workers after their current transaction and waits for their threads, so no worker outlives
//! the load or keeps the database open.

use super::saturation;
use super::worker::{Event, Shared, Signal, Worker, WorkerReport};
use super::Op;
use crate::backend::Database;
use crate::connection::Connection;
use crate::error::{Error, Result};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, watch};

/// How the workers of a load run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Execution {
    /// One OS thread per worker, each with its own single-threaded runtime: the embedded
    /// engine's calls block, so only threads run them in parallel.
    Threads,
    /// Asynchronous tasks on the calling thread: network engines wait on sockets, and one thread
    /// drives many connections.
    Tasks,
}

impl Execution {
    /// The execution that suits `database`'s engine.
    pub(crate) fn for_database(database: &Database) -> Execution {
        match database {
            Database::Embedded(_) => Execution::Threads,
            Database::Mssql(_) | Database::Postgres(_) => Execution::Tasks,
        }
    }

    /// The name recorded in the results.
    pub(crate) fn keyword(self) -> &'static str {
        match self {
            Execution::Threads => "threads",
            Execution::Tasks => "tasks",
        }
    }
}

/// What the crew measured.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// When the measured load started.
    pub start: Instant,
    /// One report per worker, by worker number.
    pub reports: Vec<WorkerReport>,
    /// Process CPU time from the start until every worker reported.
    pub process_cpu: Option<Duration>,
    /// CPU time of the calling thread over the same span, when it drove the tasks.
    pub driving_thread_cpu: Option<Duration>,
}

/// The running crew: stops and joins its workers when dropped.
struct Crew<F> {
    shared: Arc<Shared<F>>,
    gate: watch::Sender<Signal>,
    threads: Vec<JoinHandle<()>>,
}

impl<F> Drop for Crew<F> {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.gate.send_if_modified(|signal| match signal {
            Signal::Wait => {
                *signal = Signal::Abort;
                true
            }
            _ => false,
        });
        for thread in self.threads.drain(..) {
            // A worker's panics are caught inside it; a thread that still panicked has nothing
            // left to report.
            let _ = thread.join();
        }
    }
}

/// Runs one worker per entry of `shares` under `execution` and collects their reports.
pub(crate) async fn run<F>(
    execution: Execution,
    shared: Arc<Shared<F>>,
    shares: Vec<Option<u64>>,
) -> Result<Outcome>
where
    F: AsyncFn(&mut Connection, Op) -> Result<u64> + Send + Sync + 'static,
{
    let (gate, gate_rx) = watch::channel(Signal::Wait);
    let (events_tx, mut events) = mpsc::unbounded_channel();
    let workers: Vec<Worker<F>> = shares
        .into_iter()
        .enumerate()
        .map(|(id, share)| Worker {
            id: id as u32,
            share,
            shared: shared.clone(),
            gate: gate_rx.clone(),
            events: events_tx.clone(),
        })
        .collect();
    // Only workers hold senders now, so the channel closes if every worker is gone.
    drop(events_tx);
    let count = workers.len();
    let mut crew = Crew {
        shared,
        gate,
        threads: Vec::with_capacity(count),
    };
    match execution {
        Execution::Threads => {
            for worker in workers {
                crew.threads.push(spawn_thread(worker)?);
            }
            coordinate(&crew, &mut events, count, execution).await
        }
        Execution::Tasks => {
            let tasks = tokio::task::LocalSet::new();
            for worker in workers {
                tasks.spawn_local(worker.run());
            }
            tasks
                .run_until(coordinate(&crew, &mut events, count, execution))
                .await
        }
    }
}

fn spawn_thread<F>(worker: Worker<F>) -> Result<JoinHandle<()>>
where
    F: AsyncFn(&mut Connection, Op) -> Result<u64> + Send + Sync + 'static,
{
    std::thread::Builder::new()
        .name(format!("dbbench-worker-{}", worker.id))
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            match runtime {
                Ok(runtime) => runtime.block_on(worker.run()),
                Err(e) => {
                    let _ = worker.events.send(Event::Failed {
                        worker: worker.id,
                        error: Error::msg(format!("cannot start the worker's runtime: {e}")),
                    });
                }
            }
        })
        .map_err(|e| Error::msg(format!("cannot start a worker thread: {e}")))
}

/// Waits until every worker is ready, starts the load, and gathers the reports. The first
/// failure stops the other workers and is returned once they have all ended.
async fn coordinate<F>(
    crew: &Crew<F>,
    events: &mut mpsc::UnboundedReceiver<Event>,
    count: usize,
    execution: Execution,
) -> Result<Outcome> {
    let name = &crew.shared.load.name;
    let failed =
        |worker: u32, error: Error| Error::msg(format!("load `{name}`: worker {worker}: {error}"));
    let vanished = || Error::msg(format!("load `{name}`: a worker ended without reporting"));
    let mut ready = 0;
    while ready < count {
        match events.recv().await {
            Some(Event::Ready) => ready += 1,
            Some(Event::Failed { worker, error }) => return Err(failed(worker, error)),
            Some(Event::Done(_)) | None => return Err(vanished()),
        }
    }
    let driving = || match execution {
        Execution::Tasks => saturation::thread_cpu(),
        Execution::Threads => None,
    };
    let (process_before, driving_before) = (saturation::process_cpu(), driving());
    let start = Instant::now();
    crew.gate.send_replace(Signal::Go(start));

    let mut reports = Vec::with_capacity(count);
    let mut first_error = None;
    let mut ended = 0;
    while ended < count {
        match events.recv().await {
            Some(Event::Done(report)) => reports.push(*report),
            Some(Event::Failed { worker, error }) => {
                crew.shared.stop.store(true, Ordering::Relaxed);
                first_error.get_or_insert(failed(worker, error));
            }
            Some(Event::Ready) => continue,
            None => {
                first_error.get_or_insert(vanished());
                break;
            }
        }
        ended += 1;
    }
    let spent = |before: Option<Duration>, after: Option<Duration>| {
        before.zip(after).map(|(b, a)| a.saturating_sub(b))
    };
    let process_cpu = spent(process_before, saturation::process_cpu());
    let driving_thread_cpu = spent(driving_before, driving());
    if let Some(error) = first_error {
        return Err(error);
    }
    reports.sort_by_key(|r| r.worker);
    Ok(Outcome {
        start,
        reports,
        process_cpu,
        driving_thread_cpu,
    })
}
