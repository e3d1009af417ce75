//! The load workers' own waits: each driver worker's session reads its
//! `sys.dm_exec_session_wait_stats` just before it closes (the counters of a session end with
//! it), and the database sums them for the window. Recorded as
//! `counts.load_session_wait_ms.<WAIT_TYPE>`, benign waits left out as for the server's waits.
//!
//! Why (finding C5 of the third review): the body's window connection has its own waits
//! (`session_waits`), but a concurrent load runs on connections of its own, opened and closed
//! inside the window, whose waits only the instance-wide `sys.dm_os_wait_stats` had, mixed with
//! every other workload on a shared server. A worker's session starts at zero, so its waits are
//! read once, at its end; they include its login and the statements of its setup.
//!
//! A worker that fails or is stopped closes without reading them; the window then records how
//! many of its workers' sessions reported (`unavailable.load_session_waits`).

use super::waits::{self, WaitSnapshot};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

/// The prefix of the counts this module records.
pub const PREFIX: &str = "load_session_wait_ms.";

/// The waits the workers of one window reported, summed.
#[derive(Debug, Default)]
pub struct LoadWaits {
    /// Summed counters by wait type.
    sum: WaitSnapshot,
    /// Worker sessions opened since the window opened.
    opened: u32,
    /// Of them, those that reported their waits.
    reported: u32,
}

/// Shared between a database and its workers' connections.
pub type Shared = Arc<Mutex<LoadWaits>>;

fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, LoadWaits> {
    shared.lock().unwrap_or_else(|p| p.into_inner())
}

/// A worker's session was opened.
pub fn opened(shared: &Shared) {
    lock(shared).opened += 1;
}

/// A worker's session reported `waits` before closing.
pub fn reported(shared: &Shared, waits: &WaitSnapshot) {
    let mut all = lock(shared);
    all.reported += 1;
    for (wait, c) in waits {
        let sum = all.sum.entry(wait.clone()).or_default();
        sum.tasks += c.tasks;
        sum.wait_ms += c.wait_ms;
        sum.signal_ms += c.signal_ms;
    }
}

/// The window opens: what earlier windows' workers reported is forgotten.
pub fn reset(shared: &Shared) {
    *lock(shared) = LoadWaits::default();
}

/// The window closes: its workers' waits in milliseconds per wait type, and a sentence when some
/// of its workers' sessions did not report theirs. Nothing when no worker ran.
pub fn take(shared: &Shared) -> (BTreeMap<String, i64>, Option<String>) {
    let all = std::mem::take(&mut *lock(shared));
    let counts = waits::window_delta(&WaitSnapshot::new(), &all.sum)
        .into_iter()
        .map(|(wait, c)| (format!("{PREFIX}{wait}"), c.wait_ms as i64))
        .collect();
    let missing = (all.reported < all.opened).then(|| {
        format!(
            "{} of {} load worker sessions reported their waits before closing (a worker that \
             failed or was stopped closes without)",
            all.reported, all.opened
        )
    });
    (counts, missing)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mssql::evidence::waits::WaitCounters;

    fn at(ms: u64) -> WaitCounters {
        WaitCounters {
            tasks: 1,
            wait_ms: ms,
            signal_ms: 0,
        }
    }

    #[test]
    fn workers_waits_are_summed_per_window() {
        let shared = Shared::default();
        assert_eq!(take(&shared), (BTreeMap::new(), None), "no worker: nothing");
        for ms in [30, 12] {
            opened(&shared);
            reported(
                &shared,
                &BTreeMap::from([
                    ("WRITELOG".to_string(), at(ms)),
                    ("SLEEP_TASK".to_string(), at(5000)),
                ]),
            );
        }
        opened(&shared);
        let (counts, missing) = take(&shared);
        assert_eq!(
            counts,
            BTreeMap::from([("load_session_wait_ms.WRITELOG".to_string(), 42)]),
            "summed, benign waits left out"
        );
        assert!(missing.unwrap().starts_with("2 of 3 load worker sessions"));
        // Taken: the next window starts from nothing, as after a reset.
        opened(&shared);
        reset(&shared);
        assert_eq!(take(&shared), (BTreeMap::new(), None));
    }
}
