//! The TCP + TLS + login sequence to SQL Server for [`ConnectSettings`]: bounded by its Connect
//! Timeout, following an Azure gateway's redirect once, each failure said without the password.

use super::connect::{ConnectSettings, ENV};
use super::connection::MssqlConnection;
use super::errors;
use crate::model::error::{Error, Result};
use std::time::Duration;
use tokio_util::compat::TokioAsyncWriteCompatExt;

impl ConnectSettings {
    /// Opens a connection to `database` (or the login's default database).
    pub async fn connect(&self, database: Option<&str>) -> Result<MssqlConnection> {
        // Settings made for the scripted server of tests log in to it, not over the network.
        #[cfg(any(test, feature = "_mssql_scripted"))]
        if let Some(server) = self.scripted_server() {
            return super::double::link::login(server, self, database);
        }
        let config = self.config(database)?;
        match self.connect_once(config.clone()).await {
            Err(Routed(host, port)) => {
                // Azure SQL gateways redirect the client to the node that serves the database.
                let mut config = config;
                config.host(&host);
                config.port(port);
                self.connect_once(config)
                    .await
                    .map_err(|_| self.unreachable(&format!("{host}:{port}"), "redirected twice"))
            }
            Ok(conn) => Ok(conn),
            Err(Failed(e)) => Err(e),
        }
    }

    async fn connect_once(
        &self,
        config: tiberius::Config,
    ) -> std::result::Result<MssqlConnection, Attempt> {
        let addr = config.get_addr();
        let limit = self.connect_timeout();
        let tcp = match tokio::time::timeout(limit, tokio::net::TcpStream::connect(&addr)).await {
            Err(_) => {
                return Err(Failed(self.unreachable(
                    &addr,
                    &format!(
                        "no TCP connection within {} s (Connect Timeout)",
                        limit.as_secs()
                    ),
                )))
            }
            Ok(Err(e)) => return Err(Failed(self.unreachable(&addr, &e.to_string()))),
            Ok(Ok(tcp)) => tcp,
        };
        let _ = tcp.set_nodelay(true);
        // tiberius bounds the handshake itself; the outer bound also covers a stalled TLS
        // library, so a connect never hangs.
        let login = tiberius::Client::connect(config, tcp.compat_write());
        let stalled = || {
            Failed(self.unreachable(
                &addr,
                &format!(
                    "the TLS handshake and login did not finish within {} s (Connect Timeout)",
                    limit.as_secs()
                ),
            ))
        };
        match tokio::time::timeout(limit + Duration::from_secs(1), login).await {
            Err(_) => Err(stalled()),
            Ok(Err(tiberius::error::Error::Io {
                kind: std::io::ErrorKind::TimedOut,
                ..
            })) => Err(stalled()),
            Ok(Ok(client)) => Ok(MssqlConnection::new(client, self.clone())),
            Ok(Err(tiberius::error::Error::Routing { host, port })) => Err(Routed(host, port)),
            Ok(Err(e)) => Err(Failed(errors::map(
                self,
                e,
                &format!("logging in to SQL Server at {addr}"),
            ))),
        }
    }

    fn unreachable(&self, addr: &str, why: &str) -> Error {
        Error::Config(self.scrub(&format!(
            "cannot reach SQL Server at {addr} ({ENV}): {why}; check that the server runs, \
             that the host and port are right and that no firewall blocks the port"
        )))
    }
}

/// The outcome of one connection attempt that did not produce a connection.
enum Attempt {
    Routed(String, u16),
    Failed(Error),
}
use Attempt::{Failed, Routed};

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_server_that_never_answers_the_handshake_times_out() {
        // A listener that accepts the TCP connection and then says nothing, like a stalled
        // server: the connect must end after Connect Timeout instead of hanging.
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let silent = tokio::spawn(async move {
            let (socket, _) = listener.accept().await.unwrap();
            tokio::time::sleep(Duration::from_secs(10)).await;
            drop(socket);
        });
        let settings = ConnectSettings::parse(&format!(
            "server=tcp:127.0.0.1,{port};user=sa;password=hunter2;Connect Timeout=1"
        ))
        .unwrap();
        let started = std::time::Instant::now();
        let err = settings.connect(None).await.unwrap_err().to_string();
        assert!(
            started.elapsed() < Duration::from_secs(4),
            "{:?}",
            started.elapsed()
        );
        assert!(err.contains("did not finish within 1 s"), "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        silent.abort();
    }

    #[tokio::test]
    async fn an_unreachable_server_fails_fast_with_a_clear_error() {
        // Port 1 on loopback: nothing listens there, so the connect is refused at once.
        let settings = ConnectSettings::parse(
            "server=tcp:127.0.0.1,1;user=sa;password=hunter2;Connect Timeout=2",
        )
        .unwrap();
        let started = std::time::Instant::now();
        let err = settings.connect(None).await.unwrap_err().to_string();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(
            err.contains("cannot reach SQL Server at 127.0.0.1:1"),
            "{err}"
        );
        assert!(!err.contains("hunter2"), "{err}");
    }
}
