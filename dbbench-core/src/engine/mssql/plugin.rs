//! SQL Server as a backend of the registry: its [`Registration`] (the server in `DBBENCH_MSSQL`,
//! and its preflight), and its connection's statements as the [`EngineConnection`] trait returns
//! them (a server's reply: [`Pending::Later`]). The backend and its database implement their
//! traits where they are defined (`super`, `super::database`).

use super::{MssqlBackend, MssqlConnection, PROFILE};
use crate::engine::plugin::{started, EngineConnection, Pending, Registration};
use crate::model::dialect::Dialect;
use crate::model::value::{Row, Value};
use crate::util::cancel::Cancel;
use std::sync::Arc;

/// SQL Server in the registry: connects to the server in `DBBENCH_MSSQL` and reads its facts.
pub static REGISTRATION: Registration = Registration {
    profile: &PROFILE,
    from_env: || started(MssqlBackend::from_env()),
    preflight: Some(|cells| {
        Box::pin(async move {
            let settings = super::ConnectSettings::from_env()?;
            let allowed = super::instance::allowed_by_env();
            let report = super::preflight::run(&settings, cells, allowed).await?;
            Ok(report.render())
        })
    }),
};

impl EngineConnection for MssqlConnection {
    fn dialect(&self) -> Dialect {
        Dialect::TSql
    }

    fn cancel(&self) -> Option<&Arc<Cancel>> {
        self.cancel.as_ref()
    }

    fn execute<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> Pending<'a, u64> {
        Pending::Later(Box::pin(MssqlConnection::execute(self, sql, params)))
    }

    fn batch<'a>(&'a mut self, sql: &'a str) -> Pending<'a, ()> {
        Pending::Later(Box::pin(MssqlConnection::batch(self, sql)))
    }

    fn query<'a>(&'a mut self, sql: &'a str, params: &'a [Value]) -> Pending<'a, Vec<Row>> {
        Pending::Later(Box::pin(MssqlConnection::query(self, sql, params)))
    }

    fn finish(&mut self) -> Pending<'_, ()> {
        Pending::Later(Box::pin(MssqlConnection::finish(self)))
    }
}
