//! Stopping a repetition's statements from outside them: a [`Cancel`] per database, fired by the
//! timeout watchdog or by a signal.
//!
//! Why a registry of closures: the embedded engine's calls block the thread that runs the body,
//! so nothing on that thread (an async timeout included) can stop a runaway statement. Each
//! connection therefore registers, when it opens, a closure that stops its statement in flight
//! from any thread (SQLite's interrupt, PostgreSQL's cancel request, SQL Server's `KILL` from a
//! second connection); firing the `Cancel` runs them all, and every later statement of those
//! connections is refused ([`Cancel::check`]), so a body that loops over short statements stops
//! too. The engines supply the closures; this module knows nothing of them.

use crate::model::error::{Error, Result};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::{Duration, Instant};

/// Why a run was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The cell's `timeout` passed.
    Timeout(Duration),
    /// A signal arrived (its name).
    Signal(&'static str),
}

type Interrupt = Box<dyn Fn() + Send + Sync>;

/// The stop switch of one database's connections.
#[derive(Default)]
pub struct Cancel {
    fired: AtomicBool,
    why: Mutex<Option<Stop>>,
    interrupts: Mutex<Vec<Interrupt>>,
    /// Wakes [`Cancel::wait`]: the repetition races its body against the switch, so that a body
    /// whose server does not answer the cancel is abandoned after the grace.
    woken: tokio::sync::Notify,
}

impl std::fmt::Debug for Cancel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cancel({:?})", self.fired())
    }
}

/// Every `Cancel` of a database that exists now, so a signal reaches them all.
static LIVE: Mutex<Vec<Weak<Cancel>>> = Mutex::new(Vec::new());

impl Cancel {
    /// A new switch, reachable by [`fire_all`] while it lives.
    pub fn new() -> Arc<Cancel> {
        let cancel = Arc::new(Cancel::default());
        let mut live = LIVE.lock().unwrap_or_else(|p| p.into_inner());
        live.retain(|w| w.strong_count() > 0);
        live.push(Arc::downgrade(&cancel));
        drop(live);
        // A signal that arrived before this database existed stops it at its first statement.
        if let Some(signal) = crate::util::signals::received() {
            cancel.fire(Stop::Signal(signal));
        }
        cancel
    }

    /// Adds what stops one connection's statement in flight; runs it at once if already fired.
    pub fn register(&self, interrupt: impl Fn() + Send + Sync + 'static) {
        let mut interrupts = self.interrupts.lock().unwrap_or_else(|p| p.into_inner());
        if self.fired.load(Ordering::SeqCst) {
            interrupt();
        }
        interrupts.push(Box::new(interrupt));
    }

    /// Stops every registered connection's statement and refuses their later ones. The first
    /// reason is kept.
    pub fn fire(&self, why: Stop) {
        self.why
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(why);
        self.fired.store(true, Ordering::SeqCst);
        self.woken.notify_waiters();
        let interrupts = self.interrupts.lock().unwrap_or_else(|p| p.into_inner());
        for interrupt in interrupts.iter() {
            interrupt();
        }
    }

    /// Returns once the switch was fired (at once if it was already).
    pub async fn wait(&self) {
        loop {
            let woken = self.woken.notified();
            if self.is_fired() {
                return;
            }
            woken.await;
        }
    }

    /// Whether it was fired: one atomic load, cheap enough for SQLite's progress handler.
    pub fn is_fired(&self) -> bool {
        self.fired.load(Ordering::SeqCst)
    }

    /// Why it was fired, if it was.
    pub fn fired(&self) -> Option<Stop> {
        if !self.fired.load(Ordering::SeqCst) {
            return None;
        }
        *self.why.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `Err(Cancelled)` once fired: a statement about to start is not started.
    pub fn check(&self, sql: &str) -> Result<()> {
        if self.fired.load(Ordering::Relaxed) {
            return Err(Error::Cancelled {
                statement: headline(sql),
            });
        }
        Ok(())
    }

    /// A statement's result: its error becomes `Cancelled` when the switch was fired (the
    /// backend's own message, "interrupted" or "canceling statement due to user request", says
    /// less than the reason).
    pub fn explain<T>(&self, result: Result<T>, sql: &str) -> Result<T> {
        match result {
            Err(_) if self.fired.load(Ordering::SeqCst) => Err(Error::Cancelled {
                statement: headline(sql),
            }),
            other => other,
        }
    }
}

/// Fires every live `Cancel` (a signal arrived).
pub fn fire_all(why: Stop) {
    let live: Vec<Arc<Cancel>> = LIVE
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .filter_map(Weak::upgrade)
        .collect();
    for cancel in live {
        cancel.fire(why);
    }
}

/// The first line of `sql`, at most 80 characters, for error messages.
pub fn headline(sql: &str) -> String {
    let line = sql.trim().lines().next().unwrap_or("").trim();
    match line.char_indices().nth(80) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

/// A thread that fires `cancel` with [`Stop::Timeout`] when `limit` has passed, unless stopped
/// first. A thread, not a tokio timer: the body may block the runtime's thread.
pub struct Watchdog {
    state: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watchdog {
    /// Starts watching.
    pub fn start(limit: Duration, cancel: Arc<Cancel>) -> Watchdog {
        let state = Arc::new((Mutex::new(false), Condvar::new()));
        let watched = state.clone();
        let thread = std::thread::Builder::new()
            .name("dbbench-watchdog".into())
            .spawn(move || {
                let deadline = Instant::now() + limit;
                let (done, wake) = &*watched;
                let mut finished = done.lock().unwrap_or_else(|p| p.into_inner());
                while !*finished {
                    let now = Instant::now();
                    if now >= deadline {
                        drop(finished);
                        cancel.fire(Stop::Timeout(limit));
                        return;
                    }
                    finished = wake
                        .wait_timeout(finished, deadline - now)
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
            })
            .ok();
        Watchdog { state, thread }
    }

    /// Stops watching (the body returned); waits for the thread.
    pub fn stop(mut self) {
        let (done, wake) = &*self.state;
        *done.lock().unwrap_or_else(|p| p.into_inner()) = true;
        wake.notify_all();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn firing_runs_every_interrupt_and_refuses_later_statements() {
        let cancel = Cancel::new();
        let hits = Arc::new(AtomicUsize::new(0));
        let h = hits.clone();
        cancel.register(move || {
            h.fetch_add(1, Ordering::SeqCst);
        });
        assert!(cancel.check("SELECT 1").is_ok());
        cancel.fire(Stop::Timeout(Duration::from_millis(500)));
        cancel.fire(Stop::Signal("SIGINT"));
        assert_eq!(hits.load(Ordering::SeqCst), 2);
        assert_eq!(
            cancel.fired(),
            Some(Stop::Timeout(Duration::from_millis(500)))
        );
        let err = cancel.check("SELECT 2\nFROM t").unwrap_err().to_string();
        assert_eq!(err, "cancelled (statement: SELECT 2)");
        // A connection that opens after the fire is stopped at once.
        let h = hits.clone();
        cancel.register(move || {
            h.fetch_add(10, Ordering::SeqCst);
        });
        assert_eq!(hits.load(Ordering::SeqCst), 12);
    }

    #[test]
    fn the_watchdog_fires_after_its_limit_and_not_when_stopped() {
        let cancel = Cancel::new();
        let started = Instant::now();
        let dog = Watchdog::start(Duration::from_millis(50), cancel.clone());
        while cancel.fired().is_none() && started.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(5));
        }
        dog.stop();
        assert!(started.elapsed() >= Duration::from_millis(50));
        assert!(cancel.fired().is_some());

        let calm = Cancel::new();
        let dog = Watchdog::start(Duration::from_millis(50), calm.clone());
        dog.stop();
        std::thread::sleep(Duration::from_millis(80));
        assert_eq!(calm.fired(), None);
    }

    #[tokio::test]
    async fn waiting_ends_when_another_thread_fires() {
        let cancel = Cancel::new();
        let fired = cancel.clone();
        let thread = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            fired.fire(Stop::Signal("SIGINT"));
        });
        tokio::time::timeout(Duration::from_secs(5), cancel.wait())
            .await
            .expect("the wait ends when the switch is fired");
        thread.join().unwrap();
        // Fired before the wait: it returns at once.
        tokio::time::timeout(Duration::from_millis(100), cancel.wait())
            .await
            .unwrap();
        let calm = Cancel::new();
        assert!(tokio::time::timeout(Duration::from_millis(50), calm.wait())
            .await
            .is_err());
    }

    #[test]
    fn headlines_are_one_short_line() {
        assert_eq!(headline("  WITH RECURSIVE r\n SELECT"), "WITH RECURSIVE r");
        assert_eq!(headline(&"x".repeat(100)).chars().count(), 81);
    }
}
