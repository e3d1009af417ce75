//! What dbbench holds on a server or on this machine right now (a repetition's database, a
//! managed server), so that a run ended by the interrupt's deadline can say what it could not
//! tear down and end what it owns here before it exits.
//!
//! Why a registry: the forced exit (`util::signals`) happens on the signal thread while the
//! runner's thread waits on a server that does not answer; it cannot reach the runner's values.
//! Each owner registers a [`Held`] while the thing exists; dropping the guard (the thing was
//! removed) takes it off the list.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// What ends a held thing from any thread (a managed server's SIGKILL and directory removal).
pub type Ender = Box<dyn Fn() -> Result<(), String> + Send + Sync>;

struct Entry {
    id: u64,
    what: String,
    /// How the next run finishes it when `end` is none or fails.
    next_run: String,
    end: Option<Ender>,
}

static HELD: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(1);

/// One thing held; dropping it says the thing was removed.
#[derive(Debug)]
pub struct Held(u64);

/// Holds `what` (e.g. "database dbbench_x_1 on PostgreSQL at host:5432"); `next_run` says how
/// the next run removes it if this one cannot; `end`, when given, removes it from any thread
/// (without a server's help).
pub fn hold(what: impl Into<String>, next_run: impl Into<String>, end: Option<Ender>) -> Held {
    let id = NEXT.fetch_add(1, Ordering::SeqCst);
    HELD.lock().unwrap_or_else(|p| p.into_inner()).push(Entry {
        id,
        what: what.into(),
        next_run: next_run.into(),
        end,
    });
    Held(id)
}

impl Drop for Held {
    fn drop(&mut self) {
        HELD.lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|e| e.id != self.0);
    }
}

/// Ends what can be ended without a server (newest first: a database before its server) and
/// returns one line per thing held: removed, or left and how the next run removes it.
pub fn end_all() -> Vec<String> {
    let held = std::mem::take(&mut *HELD.lock().unwrap_or_else(|p| p.into_inner()));
    held.iter()
        .rev()
        .map(|entry| match &entry.end {
            Some(end) => match end() {
                Ok(()) => format!("removed {}", entry.what),
                Err(e) => format!("could not remove {} ({e}); {}", entry.what, entry.next_run),
            },
            None => format!("left {}; {}", entry.what, entry.next_run),
        })
        .collect()
}

/// What is held now, one phrase each.
#[cfg(test)]
fn listed() -> Vec<String> {
    HELD.lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .map(|e| e.what.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_things_are_ended_or_named_newest_first_and_dropped_ones_are_gone() {
        let server = hold(
            "test server S1",
            "the next run's sweep removes it",
            Some(Box::new(|| Ok(()))),
        );
        let db = hold("test database D1", "the next run's sweep removes it", None);
        let gone = hold("test database D0", "-", None);
        drop(gone);
        assert!(listed().iter().any(|w| w == "test database D1"));
        assert!(!listed().iter().any(|w| w == "test database D0"));
        let lines: Vec<String> = end_all()
            .into_iter()
            .filter(|l| l.contains("test "))
            .collect();
        assert_eq!(
            lines,
            [
                "left test database D1; the next run's sweep removes it",
                "removed test server S1"
            ]
        );
        drop((server, db));
        assert!(!listed().iter().any(|w| w.starts_with("test ")));
    }
}
