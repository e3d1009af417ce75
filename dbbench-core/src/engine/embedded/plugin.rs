//! The embedded engine as a backend of the registry: its [`Registration`] (it needs nothing from
//! the environment), and its connection's statements as the [`EngineConnection`] trait returns
//! them (each runs in the call: [`Pending::Ready`]). The backend and its database implement
//! their traits where they are defined (`super`).

use super::{EmbeddedBackend, EmbeddedConnection, PROFILE};
use crate::engine::plugin::{started, EngineConnection, Pending, Registration};
use crate::model::dialect::Dialect;
use crate::model::value::{Row, Value};
use crate::util::cancel::Cancel;
use std::sync::Arc;

/// The embedded engine in the registry: needs nothing from the environment.
pub static REGISTRATION: Registration = Registration {
    profile: &PROFILE,
    from_env: || started(async { Ok(EmbeddedBackend::new()) }),
    preflight: None,
};

impl EngineConnection for EmbeddedConnection {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn cancel(&self) -> Option<&Arc<Cancel>> {
        self.cancel.as_ref()
    }

    fn execute<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> Pending<'a, u64> {
        Pending::Ready(EmbeddedConnection::execute(self, sql, params))
    }

    fn batch<'a>(&'a mut self, sql: &'a str) -> Pending<'a, ()> {
        Pending::Ready(EmbeddedConnection::batch(self, sql))
    }

    fn query<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> Pending<'a, Vec<Row>> {
        Pending::Ready(EmbeddedConnection::query(self, sql, params))
    }
}
