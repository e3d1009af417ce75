//! Leftovers of earlier SQL Server runs: databases named `dbbench_…` whose ownership marker names
//! a process of this host that is gone (killed, crashed, stopped by a second Ctrl-C, a machine
//! that lost power mid-repetition). At the start of a run they are dropped with the backend's own
//! teardown, and every database looked at gets one line: removed, or left and why.
//!
//! Only what is provably dbbench's and abandoned is dropped: the name has dbbench's prefix, the
//! database is ONLINE (a RESTORING, OFFLINE or SUSPECT one cannot show its marker), its marker
//! (the property, else the table, read from inside it) parses, names this host, and
//! util::owner finds no process of that PID and start time. A database without a marker, with a
//! marker dbbench cannot read, of another host (the server is shared, and this host cannot see
//! that host's processes) or of another PID namespace or machine of the same host name
//! ([`super::whose`]: containers sharing the host's name cannot see each other's processes),
//! or of a live owner (a concurrent `cargo test`) is never touched. A
//! failure (error 916 on a database another login created, a drop the login may not do) is said
//! in that database's line and the run goes on: a leftover costs disk, not correctness.
//!
//! The growth sessions of databases that no longer exist are dropped too, from any host
//! ([`growth_sessions`]). Every step is bounded by the teardown deadline (`docs/deadlines.md`):
//! the listing, each database's reads and drop, the sessions' sweep. A server that stops
//! answering ends the sweep with one line; the next run looks again.

use super::identity::Product;
use super::marker;
use super::teardown::{self, Dropping, StaleDrop};
use super::tsql::literal;
use super::MssqlConnection;
use crate::model::error::Result;
use crate::model::plan::OWNED_PREFIX;
use crate::model::value::Row;
use crate::util::deadline::{unanswered, Deadline};
use crate::util::owner::{Liveness, Owner};
use std::time::Duration;

mod growth_sessions;

/// The databases that may be dbbench's: its prefix (with `_`, LIKE's any-character, escaped) and
/// no database snapshots (dbbench creates none, and a snapshot of a dbbench database would show
/// its source's marker).
pub fn candidates_sql() -> String {
    format!(
        "SELECT name, state_desc FROM sys.databases WHERE name LIKE {} \
         AND source_database_id IS NULL ORDER BY name;",
        literal(&format!("{}%", OWNED_PREFIX.replace('_', "[_]")))
    )
}

/// Looks at every candidate database through `conn` (connected to master) and drops those whose
/// owner is gone, then the growth sessions whose database is gone; returns one line per
/// database or session, for the console. `this` is this process: where it has no start time,
/// this system cannot tell a live owner from a gone one, and nothing is looked at. `product`
/// decides which statements the drop sends ([`Dropping::leftover`]). Each step waits at most the
/// teardown deadline.
pub async fn sweep(conn: &mut MssqlConnection, this: &Owner, product: &Product) -> Vec<String> {
    match Deadline::Teardown.limit() {
        Ok(limit) => sweep_within(conn, this, product, limit).await,
        Err(e) => vec![format!(
            "mssql: not looking for stale dbbench databases: {e}"
        )],
    }
}

/// The line that ends a sweep whose step got no answer within `limit` while `doing`: the
/// connection may be mid-reply, so nothing more is sent on it.
fn gave_up(limit: Duration, doing: &str) -> String {
    format!(
        "mssql: stopped looking for stale dbbench databases and sessions: {}; the next run looks \
         again",
        unanswered(Deadline::Teardown, limit, doing)
    )
}

/// [`sweep`] with each step bounded by `limit`.
async fn sweep_within(
    conn: &mut MssqlConnection,
    this: &Owner,
    product: &Product,
    limit: Duration,
) -> Vec<String> {
    if this.start.is_none() || this.host.is_empty() {
        return vec![
            "mssql: not looking for stale dbbench databases: this system shows no host name or \
             process start time (/proc), so dbbench cannot tell whether their owners still run"
                .to_string(),
        ];
    }
    let listed = tokio::time::timeout(limit, conn.query(&candidates_sql(), &[])).await;
    let rows = match listed {
        Ok(Ok(rows)) => rows,
        Ok(Err(e)) => {
            return vec![format!(
                "mssql: could not list databases to look for stale ones: {e}"
            )]
        }
        Err(_) => return vec![gave_up(limit, "listing dbbench's databases")],
    };
    let mut lines = Vec::new();
    for row in &rows {
        let line = match candidate(row) {
            // A case-insensitive collation also matches `DBBENCH_…`, which dbbench never creates.
            Ok((name, _)) if !name.starts_with(OWNED_PREFIX) => continue,
            Ok((name, state)) => {
                match tokio::time::timeout(limit, judge(conn, &name, &state, product)).await {
                    Ok(line) => line,
                    Err(_) => {
                        lines.push(gave_up(limit, &format!("looking at database {name}")));
                        return lines;
                    }
                }
            }
            Err(e) => format!("mssql: could not read a row of sys.databases: {e}"),
        };
        lines.push(conn.settings().scrub(&format!("mssql: {line}")));
    }
    if product.has_server_event_sessions() {
        match tokio::time::timeout(limit, growth_sessions::sweep(conn)).await {
            Ok(more) => lines.extend(
                more.iter()
                    .map(|line| conn.settings().scrub(&format!("mssql: {line}"))),
            ),
            Err(_) => lines.push(gave_up(limit, "looking for growth sessions left behind")),
        }
    }
    lines
}

/// The name and state of one row of [`candidates_sql`].
fn candidate(row: &Row) -> Result<(String, String)> {
    Ok((
        row.get_named::<String>("name")?,
        row.get_named::<String>("state_desc")?.trim().to_string(),
    ))
}

/// What becomes of candidate `name` in `state`, in words.
async fn judge(conn: &mut MssqlConnection, name: &str, state: &str, product: &Product) -> String {
    if state != "ONLINE" {
        return format!(
            "left database {name}: it is {state}, not ONLINE, so its marker cannot be read"
        );
    }
    let held = match marker::read(conn, name).await {
        Ok(Some(held)) => held,
        Ok(None) => {
            return format!(
                "left database {name}: it has no {} marker, so it may not be dbbench's",
                marker::OWNER_PROPERTY
            )
        }
        Err(e) => return format!("left database {name}: its marker could not be read: {e}"),
    };
    let Some(owner) = marker::owner_of(held.text()) else {
        let text: String = held.text().chars().take(200).collect();
        return format!(
            "left database {name}: its marker `{text}` names no owner dbbench can read"
        );
    };
    let whose = super::whose::Whose::from_marker(&owner, held.text());
    match whose.liveness() {
        Liveness::Alive => {
            return format!(
                "left database {name}: its owner, {}, still runs",
                owner.describe()
            )
        }
        Liveness::Elsewhere => {
            return format!(
                "left database {name}: its owner, {}, ran on another host, machine or PID \
                 namespace, whose processes this one cannot see",
                whose.describe()
            )
        }
        Liveness::Gone => {}
    }
    let who = owner.describe();
    match teardown::drop_if_marked(conn, name, held.text(), Dropping::leftover(product)).await {
        StaleDrop::Refused(why) => format!("left database {name}: {why}"),
        StaleDrop::Ran(Ok(())) => format!("removed database {name} left by {who}, which is gone"),
        // A step after the drop (the growth session's clean-up) may fail with the database gone.
        StaleDrop::Ran(Err(e)) => match teardown::exists(conn, name).await {
            Ok(false) => format!("removed database {name} left by {who}, which is gone ({e})"),
            _ => format!("could not remove database {name} left by {who}, which is gone: {e}"),
        },
    }
}

#[cfg(test)]
mod tests;
