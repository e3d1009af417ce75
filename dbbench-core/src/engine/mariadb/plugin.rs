//! MariaDB as a backend of the registry: its [`Registration`] (the server in
//! `DBBENCH_MARIADB`, else a managed instance), and its connection's statements as the
//! [`EngineConnection`] trait returns them (a server's reply: [`Pending::Later`]). The backend
//! and its database implement their traits where they are defined (`super`,
//! `super::database`).

use super::{MariaDbBackend, MariaDbConnection, DIALECT, PROFILE};
use crate::engine::plugin::{started, EngineConnection, Pending, Registration};
use crate::model::dialect::Dialect;
use crate::model::value::{Row, Value};
use crate::util::cancel::Cancel;
use std::sync::Arc;

/// MariaDB in the registry: the server in `DBBENCH_MARIADB`, else a managed instance.
pub static REGISTRATION: Registration = Registration {
    profile: &PROFILE,
    from_env: || started(MariaDbBackend::from_env()),
    preflight: None,
};

impl EngineConnection for MariaDbConnection {
    fn dialect(&self) -> Dialect {
        DIALECT
    }

    fn cancel(&self) -> Option<&Arc<Cancel>> {
        self.cancel.as_ref()
    }

    fn execute<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> Pending<'a, u64> {
        Pending::Later(Box::pin(MariaDbConnection::execute(self, sql, params)))
    }

    fn batch<'a>(&'a mut self, sql: &'a str) -> Pending<'a, ()> {
        Pending::Later(Box::pin(MariaDbConnection::batch(self, sql)))
    }

    fn query<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> Pending<'a, Vec<Row>> {
        Pending::Later(Box::pin(MariaDbConnection::query(self, sql, params)))
    }
}
