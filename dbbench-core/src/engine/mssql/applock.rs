//! The server-wide lock around instance changes: an application lock `dbbench:instance` taken
//! with `sp_getapplock` at session scope on a connection of its own, held from the first
//! instance change of a repetition until its last undo is verified.
//!
//! Why (finding B4 of the third review): trace flags and tempdb belong to the whole instance,
//! and two dbbench processes on one server (nextest runs tests as processes; two people can
//! share a lab server) would otherwise turn off the flags the other measures under, end the
//! other's zeroing proof in the middle of its `CREATE DATABASE`, or number added tempdb files
//! alike. The lock is exclusive, so at most one dbbench process has instance changes on a
//! server at any time; a flag therefore never serves two runs at once, and the reference count
//! a shared flag would need is never above one. A session-scope lock is released by the server
//! when the session ends (sp_getapplock docs: "Locks associated with the current session are
//! released when the session logs out"), so a killed dbbench cannot leave it held.
//!
//! sp_getapplock, https://learn.microsoft.com/sql/relational-databases/system-stored-procedures/sp-getapplock-transact-sql:
//! return value 0 granted, 1 granted after waiting, -1 timed out, -2 cancelled, -3 deadlock
//! victim, -999 parameter or call error; permission: membership in the public role.

use super::{ConnectSettings, MssqlConnection};
use crate::model::error::{Error, Result};
use std::time::{Duration, Instant};

/// The lock's resource name.
pub const RESOURCE: &str = "dbbench:instance";

/// Asks for the lock, waiting at most `wait_ms` on the server.
pub fn get_sql(wait_ms: u64) -> String {
    format!(
        "DECLARE @r int; EXEC @r = sp_getapplock @Resource = N'{RESOURCE}', \
         @LockMode = N'Exclusive', @LockOwner = N'Session', @LockTimeout = {wait_ms}, \
         @DbPrincipal = N'public'; SELECT @r AS result;"
    )
}

/// Gives the lock back (the end of the session does too).
pub const RELEASE_SQL: &str = "EXEC sp_releaseapplock @Resource = N'dbbench:instance', \
     @LockOwner = N'Session', @DbPrincipal = N'public';";

/// How long a repetition waits for another process's instance changes to be undone.
pub const PATIENCE: Duration = Duration::from_secs(3600);

/// The lock, held while this value lives (its connection's session owns it).
pub struct ServerLock {
    conn: MssqlConnection,
}

impl std::fmt::Debug for ServerLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ServerLock({RESOURCE})")
    }
}

impl ServerLock {
    /// Takes the lock on a new connection to master, waiting (one line on the console when it
    /// has to) up to `patience` for the process that holds it.
    pub async fn acquire(settings: &ConnectSettings, patience: Duration) -> Result<ServerLock> {
        let mut conn = settings.connect(Some("master")).await?;
        let started = Instant::now();
        let mut said = false;
        loop {
            let rows = conn.query(&get_sql(1000), &[]).await?;
            // A server that answers no row (the scripted server without a session model)
            // grants: a real one always returns the procedure's value.
            let result = match rows.first() {
                Some(row) => row.get_named::<Option<i64>>("result")?.unwrap_or(-999),
                None => 0,
            };
            match result {
                0 | 1 => return Ok(ServerLock { conn }),
                -1 if started.elapsed() < patience => {
                    if !said {
                        said = true;
                        crate::util::console::say(&format!(
                            "dbbench › mssql: another dbbench process has instance changes on {} \
                             (application lock {RESOURCE}); waiting until it has undone them",
                            settings.server()
                        ));
                    }
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                other => {
                    return Err(Error::msg(format!(
                        "could not take the application lock {RESOURCE} on {} (sp_getapplock \
                         returned {other}{}); dbbench makes no instance change without it, so \
                         that no two dbbench processes change the instance at once",
                        settings.server(),
                        if other == -1 {
                            format!(
                                ": another dbbench process held it for {} s",
                                patience.as_secs()
                            )
                        } else {
                            String::new()
                        }
                    )))
                }
            }
        }
    }

    /// Gives the lock back and closes its connection.
    pub async fn release(mut self) {
        let _ = self.conn.batch(RELEASE_SQL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::mssql::double::{InstanceModel, ScriptedServer};
    use crate::engine::mssql::ifi::trace_flags_change;
    use crate::engine::mssql::instance::InstanceChanges;

    fn position(server: &ScriptedServer, needle: &str) -> usize {
        server
            .calls()
            .iter()
            .position(|c| c.sql.contains(needle))
            .unwrap_or_else(|| panic!("no `{needle}` sent"))
    }

    /// Finding B4 of the third review: two dbbench processes on one server. While the first has
    /// instance changes (IFI off for the instance), the second's changes wait for the lock, and
    /// are applied only after the first's undo was verified.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_second_process_waits_until_the_first_has_undone_its_changes() {
        let server = ScriptedServer::new()
            .with_sessions()
            .with_instance(InstanceModel::sql_server_2022_linux());
        let settings =
            ConnectSettings::scripted("Server=tcp:h,1433;User Id=u;Password=p", &server).unwrap();
        let mut first_conn = settings.connect(Some("master")).await.unwrap();
        let mut first = InstanceChanges::new(settings.clone());
        first
            .apply(&mut first_conn, &trace_flags_change(&[1805, 1806], "first"))
            .await
            .unwrap();
        let holder = server
            .lock_holder(RESOURCE)
            .expect("the first holds the lock");

        let second_settings = settings.clone();
        let second = tokio::spawn(async move {
            let mut conn = second_settings.connect(Some("master")).await.unwrap();
            let mut second = InstanceChanges::new(second_settings);
            second
                .apply(&mut conn, &trace_flags_change(&[3004, 3605], "second"))
                .await
                .unwrap();
            second.restore(&mut conn).await.unwrap();
        });
        tokio::time::sleep(Duration::from_millis(600)).await;
        assert!(
            server.calls_with("DBCC TRACEON(3004").is_empty(),
            "the second changed the instance while the first held the lock"
        );
        assert!(server.calls_with("sp_getapplock").len() >= 2, "it asked");

        first.restore(&mut first_conn).await.unwrap();
        assert!(!server.session_alive(&holder), "the lock's session ended");
        second.await.unwrap();
        assert!(
            position(&server, "DBCC TRACESTATUS(1806") < position(&server, "DBCC TRACEON(3004"),
            "the first's undo was verified before the second's change"
        );
        assert!(server.lock_holder(RESOURCE).is_none(), "given back");
        assert!(server.instance().unwrap().flags_on.is_empty());
    }
}
