//! Settling the undo that dead dbbench processes left owed on a server: the user's ledger
//! ([`owed::home`]) read for this server, its statements run under the server-wide lock
//! ([`applock`]) so that no live run is in the middle of its own instance changes, and the one
//! console line that says what was found; an older version's work-directory ledger is taken over
//! first.

use super::{applock, owed, ConnectSettings};
use crate::model::error::Result;

/// How long settling owed undo waits for another dbbench process's instance changes: not the
/// whole of its repetition (a run without instance changes of its own need not wait); the undo
/// is tried again at the next start.
const SETTLE_PATIENCE: std::time::Duration = std::time::Duration::from_secs(10);

/// Takes over into the user's ledger directory `ledger` ([`owed::home`]) what an older version
/// of dbbench left owed in `work_dir`'s own ledger, saying so.
pub(super) fn ledger_dir(work_dir: &std::path::Path, ledger: &std::path::Path) -> Result<()> {
    let moved = owed::adopt(work_dir, ledger)?;
    if moved > 0 {
        crate::util::console::say(&format!(
            "dbbench › mssql: moved {moved} owed undo statement(s) from {} to {}, where every \
             work directory's runs find them",
            owed::path(work_dir).display(),
            owed::path(ledger).display()
        ));
    }
    Ok(())
}

/// Runs the undo that dead dbbench processes left in the ledger in `work_dir` (the user's
/// [`owed::home`], or a test's own directory) for this server ([`owed::settle`]), holding the
/// server-wide lock so that no live run is in the middle of its own changes; returns the one
/// console line that says what it found.
pub async fn settle_owed(
    settings: &ConnectSettings,
    work_dir: &std::path::Path,
) -> Result<Option<String>> {
    let owed = owed::owed(work_dir, settings.server())?;
    if owed.is_empty() {
        return Ok(None);
    }
    let lock = match applock::ServerLock::acquire(settings, SETTLE_PATIENCE).await {
        Ok(lock) => lock,
        Err(e) => {
            return Ok(Some(format!(
                "dbbench › mssql: the undo owed on {} ({} statement(s) in {}) waits: {e}; it is \
                 tried again at the next start",
                settings.server(),
                owed.len(),
                owed::path(work_dir).display()
            )))
        }
    };
    let mut admin = settings.connect(Some("master")).await?;
    let settled = owed::settle(&mut admin, work_dir, settings.server()).await;
    drop(lock);
    Ok(settled?.line(settings.server()))
}

