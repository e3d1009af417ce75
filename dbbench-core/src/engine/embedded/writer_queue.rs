//! The queue of writers in front of SQLite's write lock: one per database, first come first
//! served.
//!
//! SQLite has one writer at a time, and a connection that finds the lock taken gets `SQLITE_BUSY`
//! and must try again. With the busy handler alone, sixteen workers on two cores poll the lock
//! every millisecond: who gets it next is whoever's sleep ends first after a commit, the lock
//! stands idle between a commit and the next poll, and the sleeping threads' wake-ups compete
//! with the holder for the cores. None of that is the storage setting a suite compares, and no
//! server database waits that way: SQL Server's lock manager and PostgreSQL's heavyweight locks
//! queue their waiters and wake the next one at release. (The population and data-files suites,
//! sixteen writers each, were the noisiest on the embedded engine: `docs/statistics.md`, "Where
//! the variance lives".)
//!
//! So the embedded engine queues its writers as they do: a connection about to write (its
//! statement is not read-only) takes a place in this queue and waits, parked, until the holder
//! before it ends its transaction; the release hands the turn directly to the next waiter. SQLite's
//! own lock is then free whenever a queued writer asks for it (the busy handler stays for
//! connections outside the queue: none while a load runs). Readers never queue, so read-only
//! transactions still run side by side under WAL.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// One parked waiter: its thread, and whether the turn was handed to it.
struct Waiter {
    thread: Thread,
    granted: AtomicBool,
}

#[derive(Default)]
struct State {
    /// A connection holds the turn.
    held: bool,
    /// The waiters in arrival order.
    waiting: VecDeque<Arc<Waiter>>,
}

/// The writers' queue of one database.
#[derive(Default)]
pub(crate) struct WriterQueue {
    state: Mutex<State>,
}

/// Why a place in the queue was given up.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum GaveUp {
    /// The wait passed its limit (the holder never ended its transaction).
    Timeout,
    /// The stop switch fired while waiting.
    Stopped,
}

/// How often a parked waiter looks at the stop switch and the clock.
const CHECK_EVERY: Duration = Duration::from_millis(20);

impl WriterQueue {
    /// Waits for the turn, at most `limit`, giving up when `stopped` says so. On `Ok` the caller
    /// holds the turn until it calls [`release`](Self::release).
    pub(crate) fn acquire(
        &self,
        limit: Duration,
        stopped: &dyn Fn() -> bool,
    ) -> Result<(), GaveUp> {
        let me = {
            let mut state = self.lock();
            if !state.held && state.waiting.is_empty() {
                state.held = true;
                return Ok(());
            }
            let me = Arc::new(Waiter {
                thread: std::thread::current(),
                granted: AtomicBool::new(false),
            });
            state.waiting.push_back(Arc::clone(&me));
            me
        };
        let deadline = Instant::now() + limit;
        loop {
            if me.granted.load(Ordering::Acquire) {
                return Ok(());
            }
            let now = Instant::now();
            let why = if stopped() {
                Some(GaveUp::Stopped)
            } else if now >= deadline {
                Some(GaveUp::Timeout)
            } else {
                None
            };
            if let Some(why) = why {
                return self.leave(&me).ok_or(why);
            }
            std::thread::park_timeout(CHECK_EVERY.min(deadline - now));
        }
    }

    /// Leaves the queue after giving up; `Some(())` when the turn was handed over meanwhile (the
    /// caller then holds it after all).
    fn leave(&self, me: &Arc<Waiter>) -> Option<()> {
        let mut state = self.lock();
        if me.granted.load(Ordering::Acquire) {
            return Some(());
        }
        state.waiting.retain(|w| !Arc::ptr_eq(w, me));
        None
    }

    /// Ends the caller's turn: the next waiter, if any, holds it now and is woken.
    pub(crate) fn release(&self) {
        let mut state = self.lock();
        match state.waiting.pop_front() {
            Some(next) => {
                next.granted.store(true, Ordering::Release);
                next.thread.unpark();
            }
            None => state.held = false,
        }
    }

    /// Whether a connection holds the turn, and how many wait for it.
    #[cfg(test)]
    pub(crate) fn snapshot(&self) -> (bool, usize) {
        let state = self.lock();
        (state.held, state.waiting.len())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is two fields updated together under the lock: a panic elsewhere cannot
        // leave it half-written, so a poisoned lock is still consistent.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    const LONG: Duration = Duration::from_secs(10);

    #[test]
    fn the_turn_goes_in_arrival_order() {
        let queue = Arc::new(WriterQueue::default());
        queue.acquire(LONG, &|| false).unwrap();
        let order = Arc::new(Mutex::new(Vec::new()));
        let mut threads = Vec::new();
        for id in 0..6 {
            let (q, order) = (queue.clone(), order.clone());
            threads.push(std::thread::spawn(move || {
                q.acquire(LONG, &|| false).unwrap();
                order.lock().unwrap().push(id);
                q.release();
            }));
            // The next waiter starts only once this one is queued: arrival order is 0..6.
            while queue.lock().waiting.len() != id + 1 {
                std::thread::yield_now();
            }
        }
        queue.release();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*order.lock().unwrap(), vec![0, 1, 2, 3, 4, 5]);
        assert!(!queue.lock().held, "the last release frees the queue");
    }

    #[test]
    fn one_holder_at_a_time_under_contention() {
        let queue = Arc::new(WriterQueue::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (queue, inside, most) = (queue.clone(), inside.clone(), most.clone());
                std::thread::spawn(move || {
                    for _ in 0..200 {
                        queue.acquire(LONG, &|| false).unwrap();
                        let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::hint::spin_loop();
                        inside.fetch_sub(1, Ordering::SeqCst);
                        queue.release();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 1);
        assert!(!queue.lock().held);
    }

    #[test]
    fn a_wait_gives_up_at_its_limit_and_leaves_the_queue() {
        let queue = WriterQueue::default();
        queue.acquire(LONG, &|| false).unwrap();
        let started = Instant::now();
        let gave_up = queue.acquire(Duration::from_millis(100), &|| false);
        assert_eq!(gave_up, Err(GaveUp::Timeout));
        assert!(started.elapsed() >= Duration::from_millis(100));
        assert!(
            queue.lock().waiting.is_empty(),
            "no ghost left in the queue"
        );
        queue.release();
        assert!(
            !queue.lock().held,
            "the turn is free, not handed to the ghost"
        );
    }

    #[test]
    fn a_stop_ends_the_wait() {
        let queue = WriterQueue::default();
        queue.acquire(LONG, &|| false).unwrap();
        let started = Instant::now();
        assert_eq!(queue.acquire(LONG, &|| true), Err(GaveUp::Stopped));
        assert!(started.elapsed() < Duration::from_secs(1));
    }
}
