//! Settling the undo that dead dbbench processes left owed on a server: the server's own record
//! and the user's ledger ([`owed::home`]) for this server, run under the server-wide lock
//! ([`applock`]) so that no live run is in the middle of its own instance changes, and the lines
//! that say what was found; an older version's work-directory ledger is taken over first.

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
/// [`owed::home`], or a test's own directory) for this server, holding the server-wide lock
/// exclusively so that no live run is in the middle of its own changes: first the server's own
/// record ([`super::record::replay`]), then what the ledger still names under the server's own
/// name and under the connection string's ([`owed::settle`]). Every statement is bounded, and the
/// whole by the teardown deadline (security finding 12). Returns the lines that say what it found.
pub async fn settle_owed(
    settings: &ConnectSettings,
    work_dir: &std::path::Path,
) -> Result<Option<String>> {
    if !owed::any(work_dir)? {
        return Ok(None);
    }
    let work = async {
        let mut lock =
            match applock::ServerLock::acquire(settings, applock::Mode::Exclusive, SETTLE_PATIENCE)
                .await
            {
                Ok(lock) => lock,
                Err(e) => {
                    return Ok(Some(format!(
                        "dbbench › mssql: the undo owed in {} waits: {e}; it is tried again at \
                         the next start",
                        owed::path(work_dir).display()
                    )))
                }
            };
        let mut lines = Vec::new();
        lines.extend(super::record::replay(&mut lock, Some(work_dir), settings.server()).await?);
        let mut keys = vec![settings.server().to_string()];
        if let Some(identity) = lock.identity() {
            keys.insert(0, identity.to_string());
        }
        let mut admin = settings.connect(Some("master")).await?;
        for key in &keys {
            let settled = owed::settle(&mut admin, work_dir, key, lock.major()).await?;
            lines.extend(settled.line(settings.server()));
        }
        drop(lock);
        Ok((!lines.is_empty()).then(|| lines.join("\n")))
    };
    crate::util::deadline::bounded(
        crate::util::deadline::Deadline::Teardown,
        "undoing the instance changes an earlier run left owed",
        work,
    )
    .await
}
