//! The socket a worker's connection speaks over, and its loan to tokio-postgres for the startup.

use super::super::socket::ReadInterestStream;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// The socket a worker's connection speaks over.
#[derive(Debug)]
pub(crate) enum Stream {
    /// A socket directory's Unix socket, registered for reading only.
    Unix(ReadInterestStream),
    /// TCP (an existing server reached by host name or address).
    Tcp(tokio::net::TcpStream),
}

impl Stream {
    /// Writes what the socket takes now, without waiting (a last message before closing).
    pub(super) fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => s.try_send(buf),
            Stream::Tcp(s) => s.try_write(buf),
        }
    }
}

impl AsyncRead for Stream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Unix(s) => Pin::new(s).poll_read(cx, buf),
            Stream::Tcp(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Stream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            Stream::Unix(s) => Pin::new(s).poll_write(cx, buf),
            Stream::Tcp(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Unix(s) => Pin::new(s).poll_flush(cx),
            Stream::Tcp(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Stream::Unix(s) => Pin::new(s).poll_shutdown(cx),
            Stream::Tcp(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

/// The stream lent to tokio-postgres for the startup; the mutex is only ever taken by whoever
/// polls, one at a time, and given back when tokio-postgres's halves are dropped.
pub(super) struct Lent(pub(super) Arc<Mutex<Stream>>);

impl Lent {
    fn with<T>(&self, f: impl FnOnce(Pin<&mut Stream>) -> T) -> T {
        let mut stream = self.0.lock().unwrap_or_else(|p| p.into_inner());
        f(Pin::new(&mut *stream))
    }
}

impl AsyncRead for Lent {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.with(|s| s.poll_read(cx, buf))
    }
}

impl AsyncWrite for Lent {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.with(|s| s.poll_write(cx, buf))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.with(|s| s.poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.with(|s| s.poll_shutdown(cx))
    }
}
