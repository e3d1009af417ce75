//! Cleaning up after a failed creation, on a fresh connection: the statement that timed out ended,
//! the database this run made dropped (also one whose `CREATE DATABASE` finished after its
//! timeout, when it is provably this run's), the instance changes undone. Apart from the creation
//! because it runs after it failed, with only what [`Build`] kept.

use super::super::identity::Product;
use super::super::{cancel, teardown, MssqlConnection};
use super::Build;
use crate::model::error::Error;
use crate::model::plan::OWNED_PREFIX;

/// Who created database `name`: its id, and 1 in `created_by_this_session` when its owner is
/// this login and it was created after `session` logged in. `claim` proved the name free after
/// that login, and the name is this run's (`dbbench_…_r<rep>_<pid>`), so such a database is the
/// one this run's `CREATE DATABASE` made, even when that statement finished after a timeout and
/// never got its marker.
fn created_by_sql(name: &str, session: &cancel::SessionId) -> String {
    format!(
        "SELECT CAST(d.database_id AS int) AS database_id, \
         CAST(CASE WHEN d.owner_sid = SUSER_SID() \
         AND d.create_date >= CONVERT(datetime, {}, 126) THEN 1 ELSE 0 END AS int) \
         AS created_by_this_session FROM sys.databases AS d WHERE d.name = {};",
        super::super::tsql::literal(&session.login_time),
        super::super::tsql::literal(name)
    )
}

/// Cleans up after a failed creation of `name`, on a fresh connection (the creating one, `admin`,
/// may be dead: tiberius refuses every statement after a command timeout). After a command
/// timeout the statement that timed out may still run on the server, so its session is ended
/// first ([`cancel::end_statement`]); then the database this run created is dropped, also one
/// that `CREATE DATABASE` finished after the timeout without a marker, when it is provably this
/// run's ([`created_by_sql`]); then the instance changes are undone. Returns what could not be
/// done; undo that failed stays owed (see [`InstanceChanges::restore`](crate::engine::mssql::instance::InstanceChanges::restore)).
#[allow(clippy::too_many_arguments)]
pub(in crate::engine::mssql) async fn clean_up(
    settings: &super::super::ConnectSettings,
    product: &Product,
    name: &str,
    build: &mut Build,
    admin: MssqlConnection,
    session: Option<&cancel::SessionId>,
    error: &Error,
    patience: cancel::Patience,
) -> Vec<String> {
    let mut problems = Vec::new();
    let mut conn = match settings.connect(Some("master")).await {
        Ok(fresh) => {
            // Closed, so the server ends that session once its statement is over.
            drop(admin);
            fresh
        }
        Err(e) => {
            problems.push(format!(
                "could not open a fresh connection to clean up ({e}); cleaning up on the \
                 creating one"
            ));
            admin
        }
    };
    let timed_out = super::super::errors::is_command_timeout(error);
    let mut ended = true;
    if timed_out {
        let outcome = match session {
            Some(session) => cancel::end_statement(&mut conn, session, patience).await,
            None => Err(
                "the server did not name the creating session, so the statement that \
                 timed out could not be ended"
                    .to_string(),
            ),
        };
        if let Err(why) = outcome {
            problems.push(format!("the statement that timed out may still run: {why}"));
            ended = false;
        }
    }
    let how = teardown::Dropping::own(product, false);
    if build.created {
        if let Err(d) = teardown::drop_owned(&mut conn, name, false, how).await {
            problems.push(format!("dropping the half-made database: {d}"));
        }
    } else if build.create_sent && timed_out {
        problems.extend(drop_late_creation(&mut conn, name, session, ended, how).await);
    }
    if let Err(r) = build.probe.restore(&mut conn).await {
        problems.push(r.to_string());
    }
    if let Err(r) = build.changes.restore(&mut conn).await {
        problems.push(r.to_string());
    }
    problems
}

/// A `CREATE DATABASE` that timed out may have finished on the server anyway, without the marker
/// that would let a sweep recognise it: dropped when it is provably this run's, reported
/// otherwise. Never drops a database dbbench cannot prove it created.
async fn drop_late_creation(
    conn: &mut MssqlConnection,
    name: &str,
    session: Option<&cancel::SessionId>,
    ended: bool,
    how: teardown::Dropping,
) -> Option<String> {
    let maybe = |what: &str| {
        Some(format!(
            "CREATE DATABASE {name} timed out and {what}; if a database of that name appears, \
             it is dbbench's, unmarked: drop it by hand"
        ))
    };
    let Some(session) = session.filter(|_| name.starts_with(OWNED_PREFIX)) else {
        return maybe("dbbench cannot prove who created a database of that name");
    };
    let rows = match conn.query(&created_by_sql(name, session), &[]).await {
        Ok(rows) => rows,
        Err(e) => return maybe(&format!("looking for it failed ({e})")),
    };
    let Some(row) = rows.first() else {
        return (!ended).then(|| maybe("may still finish")).flatten();
    };
    if row
        .get_named::<Option<i64>>("created_by_this_session")
        .ok()
        .flatten()
        != Some(1)
    {
        return Some(format!(
            "a database named {name} exists that this run cannot prove it created (another \
             owner, or created before this run's session); dbbench leaves it alone"
        ));
    }
    match teardown::drop_owned(conn, name, false, how).await {
        Ok(()) => {
            crate::util::console::say(&format!(
                "dbbench › mssql: CREATE DATABASE {name} finished after its command timeout; \
                 dropped it (created by this run's session, not yet marked)"
            ));
            None
        }
        Err(d) => Some(format!(
            "CREATE DATABASE {name} finished after its command timeout and dropping it failed: \
             {d}; drop it by hand"
        )),
    }
}
