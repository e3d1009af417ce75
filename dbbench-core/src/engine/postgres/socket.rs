//! The Unix-socket stream a connection uses when the server is reached through a socket
//! directory (every managed cluster): registered with the runtime for reading only, and for
//! write space only while a write waits for it.
//!
//! Why not tokio's `UnixStream`: it registers the socket for readable and writable events at
//! once, and on a Unix socket the kernel signals write space every time the peer reads, so each
//! request the backend reads woke the waiting client thread once more for nothing. Measured at one
//! connection (`examples/pg_driver_vs_pgbench.rs`, perf), a quarter of the backend's CPU time went
//! into waking the client's CPU from `unix_write_space`, and the driver made about two thirds of
//! pgbench's transactions per second; libpq polls for input only while it waits for a result.
//! TCP sockets signal write space only to a writer that ran out of it, so they keep tokio's
//! stream.

use std::io::{self, Write};
use std::net::Shutdown;
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncRead, AsyncWrite, Interest, ReadBuf};

/// A connected Unix stream, read through the runtime, written directly.
#[derive(Debug)]
pub(crate) struct ReadInterestStream {
    /// The socket, registered for readable events only.
    read: AsyncFd<UnixStream>,
    /// A duplicate of the socket registered for writable events, only while a write found the
    /// socket's buffer full (a large COPY); dropped after the next write that goes through.
    write: Option<AsyncFd<UnixStream>>,
}

impl ReadInterestStream {
    /// Connects to the socket file `path` (`<dir>/.s.PGSQL.<port>`). Must run inside a runtime
    /// with I/O enabled.
    pub(crate) async fn connect(path: &Path) -> io::Result<ReadInterestStream> {
        // tokio's connect does not block the thread when the server's backlog is full; the stream
        // is then taken out of tokio's registration to be registered for reading only.
        let stream = tokio::net::UnixStream::connect(path).await?.into_std()?;
        stream.set_nonblocking(true)?;
        Ok(ReadInterestStream {
            read: register(stream, Interest::READABLE)?,
            write: None,
        })
    }

    /// Writes what the socket takes now, without waiting (a last message before closing).
    pub(crate) fn try_send(&self, buf: &[u8]) -> io::Result<usize> {
        self.send(buf)
    }

    fn send(&self, buf: &[u8]) -> io::Result<usize> {
        // `send` with MSG_NOSIGNAL: a closed peer is an EPIPE error, not a signal.
        (&mut self.read.get_ref()).write(buf)
    }
}

/// Registers `socket` with the current runtime for `interest` only.
fn register(socket: UnixStream, interest: Interest) -> io::Result<AsyncFd<UnixStream>> {
    // SAFETY: a `UnixStream` owns its descriptor and keeps it open until it is dropped with the
    // `AsyncFd`; this module never swaps it for another (it only reads it through `get_ref`).
    Ok(unsafe { AsyncFd::register_with_interest(socket, interest) }?)
}

impl AsyncRead for ReadInterestStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        loop {
            let mut guard = ready!(self.read.poll_read_ready(cx))?;
            // Read into the buffer's uninitialized space, as tokio's own streams do: zeroing it
            // first (`initialize_unfilled`) cost a memset of the codec's whole spare capacity,
            // about 8 KiB, for every response.
            // SAFETY: `recv` only writes into the slice, and only the `n` bytes it reports are
            // marked initialized below.
            let unfilled = unsafe { buf.unfilled_mut() };
            let wanted = unfilled.len();
            let received = guard.try_io(|socket| {
                let fd = socket.get_ref().as_raw_fd();
                // SAFETY: the pointer and length describe writable memory owned by `buf`.
                let n = unsafe { libc::recv(fd, unfilled.as_mut_ptr().cast(), wanted, 0) };
                usize::try_from(n).map_err(|_| io::Error::last_os_error())
            });
            match received {
                Ok(Ok(n)) => {
                    // A short read drained the socket: forget the readiness now rather than
                    // learn it from one more read that fails with WouldBlock (as tokio's own
                    // streams do). The guard clears it only if no new event came meanwhile.
                    if n > 0 && n < wanted {
                        guard.clear_ready();
                    }
                    // SAFETY: `recv` wrote these `n` bytes.
                    unsafe { buf.assume_init(n) };
                    buf.advance(n);
                    return Poll::Ready(Ok(()));
                }
                Ok(Err(e)) => return Poll::Ready(Err(e)),
                // WouldBlock: the guard cleared the readiness; wait for the next event.
                Err(_would_block) => continue,
            }
        }
    }
}

impl AsyncWrite for ReadInterestStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        loop {
            if let Some(waiter) = &self.write {
                let mut guard = ready!(waiter.poll_write_ready(cx))?;
                match self.send(buf) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        guard.clear_ready();
                        continue;
                    }
                    done => {
                        drop(guard);
                        self.write = None;
                        return Poll::Ready(done);
                    }
                }
            }
            match self.send(buf) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    // The duplicate shares the open file (and its non-blocking flag); epoll
                    // tells its writable events apart by descriptor.
                    let duplicate = self.read.get_ref().try_clone()?;
                    self.write = Some(register(duplicate, Interest::WRITABLE)?);
                }
                done => return Poll::Ready(done),
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        // Writes go straight to the socket; nothing is buffered here.
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.read.get_ref().shutdown(Shutdown::Write))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A listener in a fresh directory and the stream connected to it.
    async fn pair() -> (
        tempfile::TempDir,
        ReadInterestStream,
        tokio::net::UnixStream,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".s.PGSQL.5432");
        let listener = tokio::net::UnixListener::bind(&path).unwrap();
        let (client, accepted) = tokio::join!(ReadInterestStream::connect(&path), async {
            listener.accept().await
        });
        (dir, client.unwrap(), accepted.unwrap().0)
    }

    #[tokio::test]
    async fn round_trips_in_both_directions() {
        let (_dir, mut client, mut server) = pair().await;
        for round in 0..3u8 {
            client.write_all(&[round; 5]).await.unwrap();
            let mut got = [0u8; 5];
            server.read_exact(&mut got).await.unwrap();
            assert_eq!(got, [round; 5]);
            server.write_all(b"reply").await.unwrap();
            let mut reply = [0u8; 5];
            client.read_exact(&mut reply).await.unwrap();
            assert_eq!(&reply, b"reply");
        }
        client.shutdown().await.unwrap();
        let mut rest = Vec::new();
        server.read_to_end(&mut rest).await.unwrap();
        assert!(
            rest.is_empty(),
            "the client's shutdown ends the server's input"
        );
    }

    /// Far more than a Unix socket buffers: the writer must wait for write space (the duplicate
    /// registration) while the reader drains, and every byte must arrive in order.
    #[tokio::test]
    async fn a_write_larger_than_the_socket_buffer_waits_for_space() {
        let (_dir, mut client, mut server) = pair().await;
        let data: Vec<u8> = (0..8 << 20).map(|i: u32| (i % 251) as u8).collect();
        let expected = data.clone();
        let writer = tokio::spawn(async move {
            client.write_all(&data).await.unwrap();
            client.shutdown().await.unwrap();
            client.write.is_none()
        });
        let mut received = Vec::new();
        server.read_to_end(&mut received).await.unwrap();
        assert!(
            received == expected,
            "{} bytes of {}",
            received.len(),
            expected.len()
        );
        assert!(
            writer.await.unwrap(),
            "the write registration is dropped once space came"
        );
    }

    /// Reads that fill the caller's buffer keep the readiness; a later short read still sees the
    /// rest, and a read with nothing left waits for the next event instead of failing.
    #[tokio::test]
    async fn reads_in_small_pieces_lose_nothing() {
        let (_dir, mut client, mut server) = pair().await;
        server.write_all(b"abcdefghij").await.unwrap();
        let mut piece = [0u8; 4];
        let mut got = Vec::new();
        while got.len() < 10 {
            let n = client.read(&mut piece).await.unwrap();
            got.extend_from_slice(&piece[..n]);
        }
        assert_eq!(got, b"abcdefghij");
        let late = tokio::spawn(async move {
            let mut byte = [0u8; 1];
            client.read_exact(&mut byte).await.map(|_| byte[0])
        });
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        server.write_all(b"z").await.unwrap();
        assert_eq!(late.await.unwrap().unwrap(), b'z');
    }
}
