//! The server's own record of owed undo: one extended property of master per undo, named
//! `dbbench_owed:<when>:<pid>:<n>`, whose value is the structured entry ([`Entry`]); written
//! before its change and dropped once its undo is verified, and replayed by whoever next holds
//! the server lock exclusively ([`replay`]).
//!
//! Why (finding N2 of the fourth review): the user's ledger ([`super::owed`]) dies with a CI
//! container, and a run from another machine, user or spelling of the server never sees it, while
//! the trace flags and tempdb's files stay changed. The server outlives all of them.
//!
//! Why an extended property of master: only a member of master's `db_owner` (so a sysadmin,
//! which every changer is: TRACEON and SHRINKFILE need it) may add a property to the database
//! itself (sp_addextendedproperty, Permissions: "Members of the db_owner and db_ddladmin fixed
//! database roles can add extended properties to any object with the following exception:
//! db_ddladmin cannot add properties to the database itself",
//! https://learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-addextendedproperty-transact-sql),
//! it needs no table of dbbench's own in a system database, and `master.sys.extended_properties`
//! (class 0, the database) is readable by any later run with the rights to undo. A value is a
//! `sql_variant` of at most 7,500 bytes, far above an entry's size.
//!
//! Why replaying under the exclusive lock is safe: a live changer holds the lock exclusively from
//! before its first change until its last verified undo ([`super::applock`]); whoever is granted
//! it exclusively therefore finds only entries whose writer no longer holds it.

use super::applock::ServerLock;
use super::tsql::literal;
use super::undo::Undo;
use super::MssqlConnection;
use crate::model::error::{Error, Result};
use serde::{Deserialize, Serialize};

/// The prefix of every record's property name.
pub const PREFIX: &str = "dbbench_owed:";

/// One record's value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The undo owed.
    pub undo: Undo,
    /// Who wrote it (host, process), for the line that says it was replayed.
    pub by: String,
}

/// Every record on the server, newest first (undo runs last-first).
pub const LIST_SQL: &str = "SELECT CAST(name AS nvarchar(128)) AS name, \
     CAST(value AS nvarchar(4000)) AS value FROM master.sys.extended_properties \
     WHERE class = 0 AND name LIKE N'dbbench[_]owed:%' ORDER BY name DESC;";

/// A new record name: the time and process make it unique among writers, `n` within one.
pub fn name(n: u64) -> String {
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    format!("{PREFIX}{ms:013}:{}:{n:04}", std::process::id())
}

/// Adds record `name` with `entry` as its value.
pub fn add_sql(name: &str, entry: &Entry) -> String {
    let value = serde_json::to_string(entry).unwrap_or_default();
    format!(
        "EXEC master.sys.sp_addextendedproperty @name = {}, @value = {};",
        literal(name),
        literal(&value)
    )
}

/// Drops record `name`.
pub fn drop_sql(name: &str) -> String {
    format!(
        "EXEC master.sys.sp_dropextendedproperty @name = {};",
        literal(name)
    )
}

/// Writes record `name` for `undo` through `conn`, before the change it undoes.
pub async fn write(conn: &mut MssqlConnection, name: &str, undo: &Undo) -> Result<()> {
    let entry = Entry {
        undo: undo.clone(),
        by: super::whose::Whose::this().describe(),
    };
    conn.batch(&add_sql(name, &entry)).await.map_err(|e| {
        Error::msg(format!(
            "could not record the undo of an instance change on the server ({e}); dbbench \
             makes no instance change that only this machine would remember"
        ))
    })
}

/// Drops record `name`; a record already gone (another run replayed it) is no error.
pub async fn forget(conn: &mut MssqlConnection, name: &str) -> Result<()> {
    match conn.batch(&drop_sql(name)).await {
        // Msg 15217: "Property cannot be updated or deleted. Property '…' does not exist".
        Err(e) if super::errors::code_of(&e) == Some(15217) => Ok(()),
        other => other,
    }
}

/// The records on the server: each name with its entry, or why the value is no entry dbbench
/// would run ([`Undo::check`]).
pub async fn list(
    conn: &mut MssqlConnection,
) -> Result<Vec<(String, std::result::Result<Entry, String>)>> {
    let rows = conn.query(LIST_SQL, &[]).await?;
    rows.iter()
        .map(|r| {
            let name: String = r.get_named("name")?;
            let value: Option<String> = r.get_named("value")?;
            let entry = serde_json::from_str::<Entry>(value.as_deref().unwrap_or_default())
                .map_err(|e| format!("not an entry dbbench writes ({e})"))
                .and_then(|entry| entry.undo.check().map(|()| entry));
            Ok((name.trim().to_string(), entry))
        })
        .collect()
}

/// Replays through the exclusive `lock`'s connection every record on the server: their writers
/// no longer hold the lock. Each verified undo drops its record and the user's ledger entry in
/// `ledger` that names it; what fails stays recorded. Returns the one line that says what was
/// found, or `None` when nothing was.
pub async fn replay(
    lock: &mut ServerLock,
    ledger: Option<&std::path::Path>,
    server: &str,
) -> Result<Option<String>> {
    let major = lock.major();
    let conn = lock.conn();
    let records = list(conn).await?;
    if records.is_empty() {
        return Ok(None);
    }
    let (mut done, mut still, mut refused) = (Vec::new(), Vec::new(), Vec::new());
    for (name, entry) in records {
        let entry = match entry {
            Ok(entry) => entry,
            Err(why) => {
                refused.push(format!("{name} ({why})"));
                continue;
            }
        };
        match super::attempt::attempt(conn, &entry.undo, major).await {
            super::attempt::Outcome::Done => {
                forget(conn, &name).await?;
                if let Some(dir) = ledger {
                    super::owed::clear_record(dir, &name)?;
                }
                done.push(format!("{} (by {})", entry.undo.what(), entry.by));
            }
            super::attempt::Outcome::Owed(why) | super::attempt::Outcome::Failed(why) => {
                still.push(format!("{} ({why})", entry.undo.what()));
            }
        }
    }
    let mut parts = Vec::new();
    if !done.is_empty() {
        parts.push(format!(
            "undid from the server's record what dbbench runs that no longer hold its lock left \
             on {server}: {}",
            done.join("; ")
        ));
    }
    if !still.is_empty() {
        parts.push(format!(
            "still owed there, tried again by the next run: {}",
            still.join("; ")
        ));
    }
    if !refused.is_empty() {
        parts.push(format!(
            "not run, as dbbench never writes them: {}",
            refused.join("; ")
        ));
    }
    Ok(Some(format!("dbbench › mssql: {}", parts.join("; "))))
}
