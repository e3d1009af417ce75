//! The connection's end of the scripted server: what a [`MssqlConnection`] holds in place of a
//! TDS client when its settings name a [`ScriptedServer`], and the login that opens one. Kept
//! here, beside the server it talks to, so that the production connection carries only the
//! variant that holds it (and only in builds with the double).

use super::{Api, Reply, ScriptedServer, Session};
use crate::engine::mssql::connect::ConnectSettings;
use crate::engine::mssql::connection::{headline, MssqlConnection};
use crate::engine::mssql::errors;
use crate::model::error::{Error, Result};

/// One connection to the scripted server: the server, what it keeps for this connection, and
/// the database the connection was opened to (the server answers catalog queries per database).
pub(crate) struct ScriptedLink {
    server: ScriptedServer,
    session: Session,
    database: String,
}

impl ScriptedLink {
    /// A connection to `database` of `server`; a server that models sessions gives it one, as a
    /// login does.
    pub(crate) fn open(server: ScriptedServer, database: &str) -> ScriptedLink {
        let own = server.open_session("dbbench", "dbbench_login");
        ScriptedLink {
            server,
            session: Session::with_own(own),
            database: database.to_string(),
        }
    }

    /// The server's answer to `sql` sent through `api`, as the connection's result. A connection
    /// whose command timed out sends nothing more, as tiberius refuses it.
    pub(crate) fn reply(
        &mut self,
        settings: &ConnectSettings,
        api: Api,
        sql: &str,
    ) -> Result<Reply> {
        let action = format!("running `{}`", headline(sql));
        // A session ended by KILL has lost its connection: nothing more reaches the server.
        let killed = self
            .session
            .own
            .as_ref()
            .is_some_and(|own| !self.server.session_alive(own));
        if killed {
            return Err(Error::Other(format!(
                "{action}: the connection was closed by the server (its session was ended by KILL)"
            )));
        }
        if self.session.is_dead() {
            return Err(out_of_sync(settings, &action));
        }
        let reply = self
            .server
            .answer_as(api, &self.database, sql, self.session.own.as_ref());
        let own = self.session.answer(api, sql);
        match reply {
            Reply::Error { code, message } => {
                Err(errors::server(settings, code, &message, &action))
            }
            Reply::Timeout => {
                self.session.kill();
                Err(errors::command_timeout(
                    settings,
                    &action,
                    "the server did not send the next part of the command result (scripted)",
                ))
            }
            Reply::Sets(sets) if sets.is_empty() => Ok(own.unwrap_or(Reply::Sets(sets))),
            other => Ok(other),
        }
    }
}

impl ScriptedLink {
    /// As [`reply`](Self::reply), awaited as a server's answer is: a [`Reply::Silent`] server
    /// never answers, so the future stays pending until a deadline drops it.
    pub(crate) async fn answer(
        &mut self,
        settings: &ConnectSettings,
        api: Api,
        sql: &str,
    ) -> Result<Reply> {
        match self.reply(settings, api, sql)? {
            Reply::Silent => std::future::pending().await,
            other => Ok(other),
        }
    }
}

impl Drop for ScriptedLink {
    /// The connection closes: its server session ends. (The connection's own `Drop` has run by
    /// then, so its stop switch no longer points at this session.)
    fn drop(&mut self) {
        if let Some(own) = &self.session.own {
            self.server.close_session(own);
        }
    }
}

/// A login through `settings` to `database` (or master) of `server`: recorded as
/// [`Api::Login`], refused when a rule answers it with an error.
pub(crate) fn login(
    server: &ScriptedServer,
    settings: &ConnectSettings,
    database: Option<&str>,
) -> Result<MssqlConnection> {
    let target = database.unwrap_or("(default)");
    match server.answer(Api::Login, target) {
        Reply::Error { code, message } => Err(errors::server(
            settings,
            code,
            &message,
            &format!("logging in to SQL Server at {}", settings.server()),
        )),
        _ => Ok(MssqlConnection::scripted_in(
            server.clone(),
            settings.clone(),
            database.unwrap_or("master"),
        )),
    }
}

/// The error tiberius gives for a statement on a connection an earlier command timeout left out
/// of sync (its `Connection::ensure_not_poisoned`), in dbbench's wording.
fn out_of_sync(settings: &ConnectSettings, action: &str) -> Error {
    Error::Other(settings.scrub(&format!(
        "{action}: Protocol error: connection was left out of sync with the server by a command \
         timeout (the previous response is only partly read) and can no longer be used; open a \
         new connection"
    )))
}
