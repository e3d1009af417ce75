//! Stopping a statement in flight: MariaDB has no cancel request in its protocol, so the stop
//! switch (`util::cancel`) sends `KILL QUERY <id>` for each of the database's connections from a
//! second connection of its own, on a thread of its own (the fire comes from the watchdog or the
//! signal thread, outside any runtime).
//!
//! Why the guard: a server id names whatever connection has it now, and a `KILL QUERY` of an id
//! that is not this run's would stop someone else's statement on an existing server. So each
//! database keeps the ids its connections read from `CONNECTION_ID()` when they opened
//! ([`OpenIds`]), a connection's id leaves the set when the connection closes (its
//! [`Registered`] is dropped), and the kill is sent only for an id still in the set, checked
//! again on the killer's connection just before the statement goes.

use super::errors::from_driver;
use crate::util::cancel::Cancel;
use crate::util::deadline::Deadline;
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts};
use std::collections::HashSet;
use std::sync::{Arc, Mutex};

/// The server ids of the connections a database opened and that are still open.
#[derive(Debug, Default)]
pub struct OpenIds(Mutex<HashSet<u32>>);

impl OpenIds {
    fn set(&self) -> std::sync::MutexGuard<'_, HashSet<u32>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records `id` as open; the returned value drops it again.
    pub fn opened(self: &Arc<Self>, id: u32) -> Registered {
        self.set().insert(id);
        Registered {
            id,
            ids: self.clone(),
        }
    }

    /// Whether `id` is one of this database's open connections.
    pub fn is_open(&self, id: u32) -> bool {
        self.set().contains(&id)
    }

    /// The statement that stops connection `id`'s statement in flight, or `None` when `id` is
    /// not (or no longer) one of this database's open connections.
    pub fn kill_statement(&self, id: u32) -> Option<String> {
        self.is_open(id).then(|| format!("KILL QUERY {id}"))
    }
}

/// A connection's id in its database's [`OpenIds`], removed when the connection closes.
#[derive(Debug)]
pub struct Registered {
    id: u32,
    ids: Arc<OpenIds>,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.ids.set().remove(&self.id);
    }
}

/// Registers connection `id` with `cancel`: firing it sends the guarded `KILL QUERY` from a new
/// connection made with `opts`. A failed kill leaves the statement running; the body's later
/// statements are still refused by the switch, and teardown ends the session.
pub fn register(cancel: &Cancel, ids: &Arc<OpenIds>, id: u32, opts: Opts) {
    let ids = ids.clone();
    cancel.register(move || {
        if !ids.is_open(id) {
            return;
        }
        let ids = ids.clone();
        let opts = opts.clone();
        let _ = std::thread::Builder::new()
            .name("dbbench-mdb-kill".into())
            .spawn(move || {
                let Ok(rt) = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                else {
                    return;
                };
                let grace = Deadline::Cancel
                    .limit()
                    .unwrap_or(Deadline::Cancel.default_limit());
                let _ =
                    rt.block_on(async { tokio::time::timeout(grace, kill(opts, &ids, id)).await });
            });
    });
}

/// Sends `KILL QUERY id` from a new connection, if `id` is still open once it is connected.
async fn kill(opts: Opts, ids: &OpenIds, id: u32) -> crate::model::error::Result<()> {
    let mut conn = Conn::new(opts).await.map_err(from_driver)?;
    if let Some(sql) = ids.kill_statement(id) {
        // The statement may have ended meanwhile: "Unknown thread id" (1094) is harmless.
        let _ = conn.query_drop(sql).await;
    }
    let _ = conn.disconnect().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_open_connections_id_is_killed() {
        let ids = Arc::new(OpenIds::default());
        let first = ids.opened(41);
        let second = ids.opened(42);
        assert_eq!(ids.kill_statement(41).as_deref(), Some("KILL QUERY 41"));
        drop(first);
        assert_eq!(ids.kill_statement(41), None, "a closed connection's id");
        assert_eq!(
            ids.kill_statement(7),
            None,
            "an id this database never opened"
        );
        assert_eq!(ids.kill_statement(42).as_deref(), Some("KILL QUERY 42"));
        drop(second);
        assert_eq!(ids.kill_statement(42), None);
    }
}
