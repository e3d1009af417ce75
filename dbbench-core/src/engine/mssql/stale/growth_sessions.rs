//! Extended Events sessions that killed runs left on the server (finding N7 of the fourth review).
//!
//! Each window records its database's growths through a server-scoped session named
//! `dbbench_growth_<database>` ([`growth_events`]), dropped when the window closes or, at the
//! latest, just before the database itself is dropped ([`super::teardown`]). A run killed in
//! between (a CI container cancelled mid-repetition) leaves the session running: it stays defined
//! until someone drops it, and once its database is gone the next new database reuses the
//! `database_id` its filter names, so it records another database's growths into up to five
//! 1 GB event files in the error-log directory.
//!
//! Whose a session is, and whether its owner is gone, is read from the name: it carries its
//! database's name, which carries the owner's process tag (`…_r<rep>_<pid><nonce>`), and the
//! database carries the owner's marker. While the database exists, the session is the
//! database's: the database sweep judges its marker by `util::owner`'s liveness rule and drops
//! the two together when the owner is gone, and leaves both otherwise (a live owner, or one on
//! another host or PID namespace). Once the database no longer exists, no run can be measuring
//! through the session (a run drops its session before its database), so any run, on any host,
//! drops it: in one batch that checks again that the database is gone, so a session is never
//! dropped while its database exists. Only names of exactly dbbench's form are looked at
//! (`dbbench_growth_` and a name dbbench gives its databases, compared byte for byte, since a
//! case-insensitive collation's `LIKE` also matches other spellings), and never this process's own.

use super::super::evidence::growth_events;
use super::super::tsql::{ident, literal};
use super::super::MssqlConnection;
use crate::model::plan::OWNED_PREFIX;

/// What every growth session's name starts with ([`growth_events::session_name`]).
pub const PREFIX: &str = "dbbench_growth_";

/// The sessions that may be dbbench's growth sessions, each with whether its database exists.
/// `STUFF(name, 1, 15, N'')` is the database's name (`PREFIX` is 15 characters).
pub fn listing_sql() -> String {
    format!(
        "SELECT name, CAST(CASE WHEN DB_ID(STUFF(name, 1, {}, N'')) IS NULL THEN 0 ELSE 1 END \
         AS int) AS database_exists FROM sys.server_event_sessions WHERE name LIKE {} \
         ORDER BY name;",
        PREFIX.len(),
        literal(&format!("{PREFIX}{OWNED_PREFIX}%").replace('_', "[_]"))
    )
}

/// Drops session `session` only while database `database` does not exist, then says whether the
/// session remains (`remains`: 1 when it does).
pub fn drop_orphan_sql(session: &str, database: &str) -> String {
    format!(
        "IF DB_ID({db}) IS NULL AND EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = \
         {name}) DROP EVENT SESSION {session_id} ON SERVER; \
         SELECT CAST(CASE WHEN EXISTS (SELECT 1 FROM sys.server_event_sessions WHERE name = \
         {name}) THEN 1 ELSE 0 END AS int) AS remains;",
        db = literal(database),
        name = literal(session),
        session_id = ident(session)
    )
}

/// The database `session` is the growth session of, when its name is exactly of dbbench's form:
/// [`PREFIX`], then a name as `run::plan::database_name` makes them (`dbbench_` and lowercase
/// ASCII letters, digits and `_` only).
pub fn database_of(session: &str) -> Option<&str> {
    let database = session.strip_prefix(PREFIX)?;
    let rest = database.strip_prefix(OWNED_PREFIX)?;
    let ours = !rest.is_empty()
        && rest
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    ours.then_some(database)
}

/// Drops, through `conn` (connected to master), every growth session whose database no longer
/// exists, with its event files; returns one line per session removed or that could not be.
pub async fn sweep(conn: &mut MssqlConnection) -> Vec<String> {
    let rows = match conn.query(&listing_sql(), &[]).await {
        Ok(rows) => rows,
        Err(e) => {
            return vec![format!(
                "could not list Extended Events sessions to look for stale growth sessions: {e}"
            )]
        }
    };
    let mut lines = Vec::new();
    for row in rows {
        let (Ok(name), Ok(exists)) = (
            row.get_named::<String>("name"),
            row.get_named::<i64>("database_exists"),
        ) else {
            lines.push("could not read a row of sys.server_event_sessions".to_string());
            continue;
        };
        let Some(database) = database_of(&name) else {
            continue;
        };
        // The database's own sweep judges a session whose database exists; this process's own
        // sessions are its windows'.
        if exists != 0 || database.ends_with(crate::util::owner::process_tag()) {
            continue;
        }
        lines.push(drop_orphan(conn, &name, database).await);
    }
    lines
}

/// Drops `session`, whose database `database` was gone when listed, and its event files.
async fn drop_orphan(conn: &mut MssqlConnection, session: &str, database: &str) -> String {
    // Read while the session runs: a dropped session no longer names its file.
    let file = growth_events::running_file(conn, session)
        .await
        .ok()
        .flatten();
    let remains = match conn.query(&drop_orphan_sql(session, database), &[]).await {
        Ok(rows) => rows
            .first()
            .and_then(|r| r.get_named::<i64>("remains").ok())
            .unwrap_or(0),
        Err(e) => {
            return format!(
                "could not remove Extended Events session {session}, whose database {database} \
                 no longer exists: {e}"
            )
        }
    };
    if remains != 0 {
        return format!(
            "left Extended Events session {session}: its database {database} exists again"
        );
    }
    let mut line = format!(
        "removed Extended Events session {session}, left by a run whose database {database} no \
         longer exists"
    );
    if let Some((file, _)) = file {
        let files = growth_events::own_files(conn, &file, session)
            .await
            .unwrap_or_else(|_| vec![file.clone()]);
        for path in files {
            if let Err(e) = conn.batch(&growth_events::delete_file_sql(&path)).await {
                line.push_str(&format!(
                    "; its event file {path} remains on the server, delete it by hand ({e})"
                ));
            }
        }
    }
    line
}

#[cfg(test)]
mod tests;
