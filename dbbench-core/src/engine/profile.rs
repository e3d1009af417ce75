//! What the layers above may know about an engine, in one value per engine: its dialect and the
//! fixture's statements in it, how its results are shown (what its log segments are called, its
//! evidence columns), how a concurrent load's workers run on it, the statements the driver sends,
//! which errors a transaction is retried for, whether unbound volume names get a directory of
//! their own, and which storage options it honours (the rest are refused by the dispatcher, in
//! one sentence, before the backend's own `check` sees the cell). Upper layers read the profile
//! instead of testing backend names.

use crate::model::config::{BackendKind, StorageSpec};
use crate::model::dialect::Dialect;
use crate::model::error::Error;
use crate::model::load::{ErrorKind, Execution};
use crate::model::presentation::Presentation;
use dbbench_options::Key;
use std::time::Duration;

/// The facts of one engine.
#[derive(Debug)]
pub struct Profile {
    /// Which backend.
    pub kind: BackendKind,
    /// The SQL it speaks.
    pub dialect: Dialect,
    /// The `credit` fixture's statements in that SQL.
    pub fixture: &'static FixtureSql,
    /// How the workers of a concurrent load run.
    pub execution: Execution,
    /// The statements the driver itself sends.
    pub driver_sql: DriverSql,
    /// The statement that makes a connection wait at most this long for a lock.
    pub lock_timeout: fn(Duration) -> String,
    /// The kind of a failed attempt, which decides whether its transaction is retried.
    pub classify: fn(&Error) -> ErrorKind,
    /// Volume names not bound in `DBBENCH_VOLUMES` get a directory under the work dir (an
    /// in-process engine on this machine's disk); otherwise they are an error of the cell.
    pub defaults_unbound_volumes: bool,
    /// The database's files are cached by this machine's kernel, so `cache = "cold"` drops this
    /// machine's page cache (root only); otherwise the server empties its own cache.
    pub local_page_cache: bool,
    /// How its results are shown (what its log segments are called, its own evidence columns):
    /// every result records these, so any build renders it alike.
    pub presentation: Presentation,
    /// The storage options it honours ([`Key::STORAGE`]). A cell that sets any other is refused
    /// before anything is created ([`Profile::refuse_unlisted`]), so an option added later is
    /// refused by every backend that does not list it, never silently ignored; the backend's own
    /// `check` refuses only values of options listed here (`recovery = "bulk_logged"`).
    pub options: &'static [Key],
    /// Why it has no equivalent of some options it leaves out, in its own words (what to do
    /// instead); an option without a reason here is refused with a generic one.
    pub refusals: &'static [(Key, &'static str)],
}

impl Profile {
    /// Refuses the first storage option that `storage` sets (gives a value other than the
    /// default) and this engine does not honour, in [`Key::STORAGE`]'s order:
    /// [`Error::Unsupported`] with the profile's reason for it, or a generic one.
    pub fn refuse_unlisted(&self, storage: &StorageSpec) -> Result<(), Error> {
        let Some(option) = storage
            .set_options()
            .find(|key| !self.options.contains(key))
        else {
            return Ok(());
        };
        let reason = match self.refusals.iter().find(|(key, _)| *key == option) {
            Some((_, reason)) => reason.to_string(),
            None => format!(
                "this backend ({}) has no equivalent of it; remove it, or limit the case to \
                 backends that have one with `backends = [...]`",
                self.kind.title()
            ),
        };
        Err(Error::Unsupported {
            option: option.as_str(),
            backend: self.kind.keyword(),
            reason,
        })
    }
}

/// The `credit` fixture's statements in one engine's SQL; [`crate::engine::fixture`] makes the
/// rows, the same for every engine.
#[derive(Debug)]
pub struct FixtureSql {
    /// `CREATE TABLE charge` (its identity column `charge_no` assigned by the database).
    pub credit_schema: &'static str,
    /// The article's doubling statement for loop `n` (1-based): copies every row with
    /// `charge_dt` moved `30 * n` days later.
    pub doubling_insert: fn(u32) -> String,
}

/// Transaction control and warm-up in one dialect.
#[derive(Debug, Clone, Copy)]
pub struct DriverSql {
    /// Starts a transaction.
    pub begin: &'static str,
    /// Commits it.
    pub commit: &'static str,
    /// Rolls back whatever is open; harmless when the server already rolled back.
    pub rollback: &'static str,
    /// Runs once per connection before the measured start, so that work a new connection does
    /// lazily (reading the schema) is not measured.
    pub warm_up: &'static str,
    /// How `begin` and `commit` are sent.
    pub control: Control,
}

/// How the driver sends `begin` and `commit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// As a batch of plain SQL, parsed by the server each time.
    Batch,
    /// As a statement of the connection's prepared-statement cache, like the body's statements.
    Prepared,
}

/// The kind of errors every engine shares: a dbbench timeout or a cancelled statement, which
/// are never retried (the run is stopping).
pub fn common_kind(error: &Error) -> Option<ErrorKind> {
    matches!(
        error,
        Error::Timeout { .. } | Error::Cancelled { .. } | Error::Interrupted { .. }
    )
    .then_some(ErrorKind::Timeout)
}
