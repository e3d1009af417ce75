//! A scripted stand-in for SQL Server, for tests that cannot reach a real one: every statement a
//! connection sends is recorded with the tiberius API it would have taken (a plain batch through
//! `simple_query`, an RPC through `sp_executesql` for `execute`/`query` with parameters, a bulk
//! load), and answered from rules the test sets up (result sets as the product's documentation,
//! or for Babelfish a recorded server, gives them; an affected-row count; or a server error
//! number and message). Where each modelled answer comes from is said beside it: the catalog
//! here, `instance` (IFI, trace flags, error log, tempdb), `sessions` (session ids, KILL,
//! application locks), `settings` (the settings read-back).
//!
//! [`ConnectSettings::scripted`](super::ConnectSettings::scripted) makes every connection of the
//! backend talk to one `ScriptedServer`, so whole lifecycles (start-up, creation, teardown) run
//! against recorded server behaviour. The routing rule matters on a real server: transaction
//! control sent as an RPC fails with error 266, so tests assert which API each statement took.
//!
//! Test support only: the module is compiled for the library's own unit tests and with the
//! private feature `_mssql_scripted` (which the workspace's test builds turn on for the
//! integration tests), never into a user's `mssql` build. The `compile_error!` below makes that a
//! build failure rather than a convention.

// Reached only if the module's gate in `mssql/mod.rs` is dropped or widened: `.ci/run` builds the
// library with `mssql` alone, where this line then fails the build.
#[cfg(not(any(test, feature = "_mssql_scripted")))]
compile_error!(
    "the scripted SQL Server double is test support: it must be compiled only for tests or with \
     the private feature `_mssql_scripted`, never into a user's `mssql` build"
);

use crate::model::value::Value;
use std::sync::{Arc, Mutex};

mod catalog;
mod exchange;
pub mod instance;
pub(super) mod link;
pub mod sessions;
pub mod settings;

pub(crate) use catalog::literal_after;
use catalog::Catalog;
pub use exchange::{rows, Api, Call, Recorded, Reply};
pub use instance::{InstanceModel, TempdbFileModel};
pub use sessions::{SessionRow, SessionTable};

/// What SQL Server keeps for one connection between statements, as far as the double models it:
/// the transaction isolation level and whether the connection is still usable.
///
/// SQL Server 2008–2022 (SET Statements (Transact-SQL)): "if a SET statement is specified in a
/// dynamic SQL string that is run by using either sp_executesql or EXECUTE, the value of the SET
/// option is restored after control is returned from the batch"; in a plain batch it lasts for
/// the session. `sys.dm_exec_sessions.transaction_isolation_level` reports it: 1 READ
/// UNCOMMITTED, 2 READ COMMITTED (the default), 3 REPEATABLE READ, 4 SERIALIZABLE, 5 SNAPSHOT.
#[derive(Debug, Clone, Default)]
pub struct Session {
    isolation: Option<i64>,
    /// A command timed out on this connection (see [`Reply::Timeout`]).
    dead: bool,
    /// The server's session of this connection, when the server models sessions.
    pub(crate) own: Option<SessionRow>,
}

impl Session {
    /// The state of a new connection whose server session is `own`.
    pub(crate) fn with_own(own: Option<SessionRow>) -> Session {
        Session {
            own,
            ..Session::default()
        }
    }

    /// Whether the connection may still be used.
    pub fn is_dead(&self) -> bool {
        self.dead
    }

    /// Marks the connection unusable, as tiberius does after a command timeout.
    pub(crate) fn kill(&mut self) {
        self.dead = true;
    }

    /// The isolation level `sql` sets, if it sets one.
    fn isolation_set_by(sql: &str) -> Option<i64> {
        let upper = sql.to_ascii_uppercase();
        let rest = &upper[upper.find("SET TRANSACTION ISOLATION LEVEL")? + 31..];
        let rest = rest.trim_start();
        [
            ("READ UNCOMMITTED", 1),
            ("READ COMMITTED", 2),
            ("REPEATABLE READ", 3),
            ("SERIALIZABLE", 4),
            ("SNAPSHOT", 5),
        ]
        .into_iter()
        .find(|(name, _)| rest.starts_with(name))
        .map(|(_, level)| level)
    }

    /// Applies `sql` sent through `api` to the session, and answers the session's own view.
    pub(crate) fn answer(&mut self, api: Api, sql: &str) -> Option<Reply> {
        if api == Api::Batch {
            if let Some(level) = Session::isolation_set_by(sql) {
                self.isolation = Some(level);
            }
        }
        if sql.contains("transaction_isolation_level") && sql.contains("sys.dm_exec_sessions") {
            return Some(Reply::rows(
                &["transaction_isolation_level"],
                vec![vec![Value::Int(self.isolation.unwrap_or(2))]],
            ));
        }
        None
    }
}

struct Rule {
    needle: String,
    /// Only statements from connections to this database match (`None`: any).
    database: Option<String>,
    reply: Reply,
    /// `Some(n)`: answers only n more times.
    remaining: Option<usize>,
}

#[derive(Default)]
struct Inner {
    rules: Vec<Rule>,
    calls: Vec<Call>,
    catalog: Option<Catalog>,
    instance: Option<InstanceModel>,
    sessions: Option<SessionTable>,
}

/// A scripted server shared by every connection made from its settings.
#[derive(Clone, Default)]
pub struct ScriptedServer {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for ScriptedServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ScriptedServer({} calls)", self.calls().len())
    }
}

impl ScriptedServer {
    /// A server that answers every statement with an empty result until told otherwise.
    pub fn new() -> ScriptedServer {
        ScriptedServer::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Answers every statement containing `needle` with `reply`. Later rules win, so a test can
    /// override a default answer.
    pub fn on(&self, needle: &str, reply: Reply) -> &ScriptedServer {
        self.push(None, needle, reply, None)
    }

    /// As [`on`](Self::on), for statements sent through a connection to `database` only (a
    /// login to it is answered by a rule on the needle `database` with [`Api::Login`]'s text).
    pub fn on_in(&self, database: &str, needle: &str, reply: Reply) -> &ScriptedServer {
        self.push(Some(database), needle, reply, None)
    }

    /// Answers only the next `times` statements containing `needle` with `reply`.
    pub fn times(&self, needle: &str, times: usize, reply: Reply) -> &ScriptedServer {
        self.push(None, needle, reply, Some(times))
    }

    /// As [`times`](Self::times), through a connection to `database` only.
    pub fn times_in(
        &self,
        database: &str,
        needle: &str,
        times: usize,
        reply: Reply,
    ) -> &ScriptedServer {
        self.push(Some(database), needle, reply, Some(times))
    }

    fn push(
        &self,
        database: Option<&str>,
        needle: &str,
        reply: Reply,
        remaining: Option<usize>,
    ) -> &ScriptedServer {
        self.lock().rules.push(Rule {
            needle: needle.to_string(),
            database: database.map(str::to_string),
            reply,
            remaining,
        });
        self
    }

    /// Keeps a model of the server's databases (created, dropped, marked) to answer `DB_ID` and
    /// ownership-marker queries per database, as `product` was recorded to answer them; rules
    /// still win over it.
    pub fn with_catalog(self, product: Recorded) -> ScriptedServer {
        self.lock().catalog = Some(Catalog {
            product,
            ..Catalog::default()
        });
        self
    }

    /// Answers instance-level statements (IFI state, trace flags, error log, tempdb, `KILL`) as
    /// `model` says the product does; rules still win over it.
    pub fn with_instance(self, model: InstanceModel) -> ScriptedServer {
        self.lock().instance = Some(model);
        self
    }

    /// Models the server's sessions ([`sessions`]): each login opens one with the lowest free
    /// id, closing a connection ends it, `KILL` ends whichever session has the id now.
    pub fn with_sessions(self) -> ScriptedServer {
        self.lock().sessions = Some(SessionTable::default());
        self
    }

    /// Opens a session of `program` for `login` (another application on the same server), if
    /// sessions are modelled.
    pub fn open_session(&self, program: &str, login: &str) -> Option<SessionRow> {
        Some(self.lock().sessions.as_mut()?.open(program, login))
    }

    /// `session` did work (another application's): CPU ms, reads and writes, if sessions are
    /// modelled.
    pub fn session_worked(&self, session: &SessionRow, cpu_ms: i64, reads: i64, writes: i64) {
        if let Some(table) = self.lock().sessions.as_mut() {
            table.worked(session, cpu_ms, reads, writes);
        }
    }

    /// Takes VIEW SERVER STATE from the login, if sessions are modelled.
    pub fn deny_view_server_state(&self) {
        if let Some(table) = self.lock().sessions.as_mut() {
            table.deny_view_server_state();
        }
    }

    /// Ends `session` as if its client had closed the connection.
    pub fn close_session(&self, session: &SessionRow) {
        if let Some(table) = self.lock().sessions.as_mut() {
            table.close(session.spid, &session.login_time);
        }
    }

    /// Whether exactly `session` (id and login time) still exists.
    pub fn session_alive(&self, session: &SessionRow) -> bool {
        self.lock()
            .sessions
            .as_ref()
            .is_some_and(|t| t.alive(session))
    }

    /// The session holding application lock `resource`, if sessions are modelled.
    pub fn lock_holder(&self, resource: &str) -> Option<SessionRow> {
        self.lock()
            .sessions
            .as_ref()?
            .lock_holder(resource)
            .cloned()
    }

    /// The session that has id `spid` now, if sessions are modelled and one has it.
    pub fn session_by_id(&self, spid: i64) -> Option<SessionRow> {
        self.lock().sessions.as_ref()?.by_id(spid).cloned()
    }

    /// The instance model's state now (flags on, error log, tempdb), if there is one.
    pub fn instance(&self) -> Option<InstanceModel> {
        self.lock().instance.clone()
    }

    /// The value in use of server option `name` in the catalog's settings model (changed by
    /// `sp_configure` and `RECONFIGURE`).
    pub fn server_option(&self, name: &str) -> Option<String> {
        let inner = self.lock();
        let catalog = inner.catalog.as_ref()?;
        catalog.settings.in_use(name).map(str::to_string)
    }

    /// The databases the catalog holds now.
    pub fn databases(&self) -> Vec<String> {
        self.lock()
            .catalog
            .as_ref()
            .map(|c| c.databases.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The trace flags the catalog holds on globally now.
    pub fn trace_flags(&self) -> Vec<u32> {
        self.lock()
            .catalog
            .as_ref()
            .map(|c| c.trace_flags.iter().copied().collect())
            .unwrap_or_default()
    }

    /// Every statement so far, in order.
    pub fn calls(&self) -> Vec<Call> {
        self.lock().calls.clone()
    }

    /// The statements containing `needle`.
    pub fn calls_with(&self, needle: &str) -> Vec<Call> {
        self.calls()
            .into_iter()
            .filter(|c| c.sql.contains(needle))
            .collect()
    }

    /// Records `sql` as sent through `api` from a connection to master and returns the newest
    /// matching rule's reply (an empty result when none matches).
    pub(crate) fn answer(&self, api: Api, sql: &str) -> Reply {
        self.answer_in(api, "master", sql)
    }

    /// As [`answer`](Self::answer), from a connection to `database`.
    pub(crate) fn answer_in(&self, api: Api, database: &str, sql: &str) -> Reply {
        self.answer_as(api, database, sql, None)
    }

    /// As [`answer_in`](Self::answer_in), sent by the server session `own`.
    pub(crate) fn answer_as(
        &self,
        api: Api,
        database: &str,
        sql: &str,
        own: Option<&SessionRow>,
    ) -> Reply {
        let mut inner = self.lock();
        inner.calls.push(Call {
            api,
            sql: sql.to_string(),
            database: database.to_string(),
        });
        let found = inner.rules.iter_mut().rev().find(|r| {
            sql.contains(&r.needle)
                && r.remaining != Some(0)
                && r.database.as_deref().is_none_or(|d| d == database)
        });
        let reply = match found {
            Some(rule) => {
                if let Some(n) = rule.remaining.as_mut() {
                    *n -= 1;
                }
                Some(rule.reply.clone())
            }
            None => None,
        };
        // A rule's answer wins, but a batch that creates or drops still changes the instance and
        // the catalog unless the rule made it fail.
        let succeeded = matches!(
            (&reply, api),
            (
                None | Some(Reply::Sets(_)) | Some(Reply::Affected(_)),
                Api::Batch | Api::Rpc
            )
        );
        // The settings read-back and sp_configure, answered by the catalog's settings model
        // before the instance model (whose DBCC TRACESTATUS answers one flag only).
        let mut flags = inner
            .instance
            .as_ref()
            .map(|i| i.flags_on.clone())
            .unwrap_or_default();
        let configured = match (&reply, api, inner.catalog.as_mut()) {
            (None, Api::Batch | Api::Rpc, Some(c)) => {
                flags.extend(c.trace_flags.iter().copied());
                c.settings.answer(sql, database, c.product, &flags)
            }
            _ => None,
        };
        if let Some(reply) = configured {
            return reply;
        }
        let instance = match inner.instance.as_mut() {
            Some(model) if succeeded => model.answer(sql),
            _ => None,
        };
        let session = match (inner.sessions.as_mut(), &reply, &instance) {
            (Some(table), None, None) if api != Api::Login => table.answer(sql, own),
            _ => None,
        };
        if let Some(session) = session {
            return session;
        }
        let modelled = match (&reply, api, inner.catalog.as_mut()) {
            (
                None | Some(Reply::Sets(_)) | Some(Reply::Affected(_)) | Some(Reply::Timeout),
                Api::Batch | Api::Rpc,
                Some(c),
            ) => c.answer(sql, database),
            _ => None,
        };
        reply
            .or(instance)
            .or(modelled)
            .unwrap_or(Reply::Sets(Vec::new()))
    }
}

#[cfg(test)]
mod tests;
