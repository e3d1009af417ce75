//! Where a connection goes: the one socket file or TCP server a configuration names, and
//! connecting to it within the configuration's timeout. Configurations that name several servers
//! (or ask what only tokio-postgres's own connect checks) are left to tokio-postgres.

use super::socket::ReadInterestStream;
use crate::model::error::Error;
use std::path::{Path, PathBuf};
use tokio_postgres::config::{Host, TargetSessionAttrs};

/// The socket file of `config` when it names exactly one server and that one by its socket
/// directory, with nothing asked of the session that only tokio-postgres's own connect checks
/// (`target_session_attrs`); such connections use a [`ReadInterestStream`]. `None` otherwise
/// (TCP, several hosts, `hostaddr`), and tokio-postgres connects as usual.
pub(super) fn socket_file(config: &tokio_postgres::Config) -> Option<PathBuf> {
    let ([Host::Unix(dir)], []) = (config.get_hosts(), config.get_hostaddrs()) else {
        return None;
    };
    if config.get_ports().len() > 1 || config.get_target_session_attrs() != TargetSessionAttrs::Any
    {
        return None;
    }
    let port = config.get_ports().first().copied().unwrap_or(5432);
    Some(dir.join(format!(".s.PGSQL.{port}")))
}

/// The one TCP server of `config` (host and port), when it names exactly one by host and asks
/// nothing of the session that only tokio-postgres's own connect checks.
pub(super) fn tcp_server(config: &tokio_postgres::Config) -> Option<(String, u16)> {
    let ([Host::Tcp(host)], []) = (config.get_hosts(), config.get_hostaddrs()) else {
        return None;
    };
    if config.get_ports().len() > 1 || config.get_target_session_attrs() != TargetSessionAttrs::Any
    {
        return None;
    }
    Some((
        host.clone(),
        config.get_ports().first().copied().unwrap_or(5432),
    ))
}

/// Connects to `host:port` within `timeout`, with Nagle off as tokio-postgres sets it (a request
/// is one small write that must leave at once).
pub(super) async fn connect_tcp(
    host: &str,
    port: u16,
    timeout: Option<std::time::Duration>,
) -> std::io::Result<tokio::net::TcpStream> {
    let connect = tokio::net::TcpStream::connect((host, port));
    let stream = match timeout {
        Some(limit) => tokio::time::timeout(limit, connect)
            .await
            .unwrap_or_else(|_| {
                Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("no answer within {limit:?}"),
                ))
            })?,
        None => connect.await?,
    };
    stream.set_nodelay(true)?;
    Ok(stream)
}

pub(super) fn connect_error(doing: &str, server: &str, e: &std::io::Error) -> Error {
    Error::msg(format!(
        "PostgreSQL client error while {doing}: error connecting to server at {server}: {e}"
    ))
}

/// Connects to the socket file `path`, within `timeout` as tokio-postgres does.
pub(super) async fn connect_socket(
    path: &Path,
    timeout: Option<&std::time::Duration>,
) -> std::io::Result<ReadInterestStream> {
    match timeout {
        Some(limit) => tokio::time::timeout(*limit, ReadInterestStream::connect(path))
            .await
            .unwrap_or_else(|_| {
                Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("no answer within {limit:?}"),
                ))
            }),
        None => ReadInterestStream::connect(path).await,
    }
}
