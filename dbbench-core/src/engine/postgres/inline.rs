//! Polling a connection's I/O future inline with the request that waits on it, on the caller's
//! thread, without waking the caller's task for the progress one makes for the other.
//!
//! Why: a request (a call on tokio-postgres's client) and the connection's I/O future hand each
//! other work through channels. Polled with the task's own waker, each hand-over wakes the task
//! that is polling both right then: the request queues a message and wakes the I/O future, the
//! I/O future delivers the response and wakes the request. A woken task is polled again only
//! after the runtime has looked for I/O events once more, so each round trip cost two extra
//! `epoll_wait` calls and two extra polls of the whole worker (seen with `perf trace` on the
//! driver's worker at one connection: about eight `epoll_wait` per transaction of three
//! statements, against pgbench's two or three `ppoll`). Here both are polled with a waker of our
//! own ([`Relay`]): a wake-up during the poll only asks for another pass, and only wake-ups
//! while nobody polls (the server's answer arriving) reach the task.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

/// The I/O half of a connection.
pub(crate) type Io =
    Pin<Box<dyn Future<Output = std::result::Result<(), tokio_postgres::Error>> + Send>>;

/// Passes over the request and the I/O within one poll before handing back to the runtime; a
/// round trip needs two, and a bound keeps a future that wakes itself on every poll (a spent
/// cooperative budget) from spinning here.
const PASSES: usize = 16;

/// Nobody polls: wake-ups go to the task.
const IDLE: u8 = 0;
/// A pass is running.
const POLLING: u8 = 1;
/// Something was woken during the pass: poll again.
const WOKEN: u8 = 2;

/// The waker the request and the I/O are polled with.
#[derive(Debug, Default)]
struct Relay {
    state: AtomicU8,
    /// The waker of the task that polled last.
    task: Mutex<Option<Waker>>,
}

impl Wake for Relay {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let noted =
            self.state
                .compare_exchange(POLLING, WOKEN, Ordering::AcqRel, Ordering::Acquire);
        match noted {
            // The running pass sees it and polls again.
            Ok(_) | Err(WOKEN) => {}
            _ => {
                let task = self.task.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(task) = task.as_ref() {
                    task.wake_by_ref();
                }
            }
        }
    }
}

impl Relay {
    fn remember(&self, waker: &Waker) {
        let mut task = self.task.lock().unwrap_or_else(|p| p.into_inner());
        if !task.as_ref().is_some_and(|t| t.will_wake(waker)) {
            *task = Some(waker.clone());
        }
    }
}

/// A connection's I/O future and the waker it is polled with.
pub(crate) struct Inline {
    io: Option<Io>,
    relay: Arc<Relay>,
    waker: Waker,
}

impl Inline {
    pub(crate) fn new(io: Io) -> Inline {
        let relay = Arc::new(Relay::default());
        Inline {
            io: Some(io),
            waker: Waker::from(relay.clone()),
            relay,
        }
    }

    /// The I/O future, for the runtime to finish once the connection is dropped; `None` when
    /// it already ended.
    pub(crate) fn take(&mut self) -> Option<Io> {
        self.io.take()
    }

    /// Awaits `request` while polling the I/O. When the I/O ends first (the server closed the
    /// connection), `ended` gets its outcome and the request runs on to see the closed channel.
    pub(crate) async fn drive<T>(
        &mut self,
        request: impl Future<Output = T>,
        ended: impl FnOnce(std::result::Result<(), tokio_postgres::Error>),
    ) -> T {
        let mut request = std::pin::pin!(request);
        let mut ended = Some(ended);
        std::future::poll_fn(|cx| {
            self.relay.remember(cx.waker());
            let mut inner = Context::from_waker(&self.waker);
            for _ in 0..PASSES {
                self.relay.state.store(POLLING, Ordering::Release);
                if let Poll::Ready(out) = request.as_mut().poll(&mut inner) {
                    self.relay.state.store(IDLE, Ordering::Release);
                    return Poll::Ready(out);
                }
                if let Some(io) = self.io.as_mut() {
                    if let Poll::Ready(finished) = io.as_mut().poll(&mut inner) {
                        self.io = None;
                        if let Some(ended) = ended.take() {
                            ended(finished);
                        }
                        continue;
                    }
                }
                let rest = self.relay.state.compare_exchange(
                    POLLING,
                    IDLE,
                    Ordering::AcqRel,
                    Ordering::Acquire,
                );
                if rest.is_ok() {
                    return Poll::Pending;
                }
            }
            // Still woken after every pass: let the runtime poll again later.
            self.relay.state.store(IDLE, Ordering::Release);
            cx.waker().wake_by_ref();
            Poll::Pending
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use tokio::sync::{mpsc, oneshot};

    /// Counts the wake-ups that reach the task.
    #[derive(Default)]
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// An I/O future that answers each request of `requests` through its reply channel, as
    /// tokio-postgres's connection does, and ends when every sender is gone.
    fn echo(mut requests: mpsc::UnboundedReceiver<(u32, oneshot::Sender<u32>)>) -> Io {
        Box::pin(async move {
            while let Some((n, reply)) = requests.recv().await {
                let _ = reply.send(n + 1);
            }
            Ok(())
        })
    }

    /// A request as tokio-postgres's client makes one: it queues its message when first polled
    /// and waits for the answer.
    fn ask(
        requests: &mpsc::UnboundedSender<(u32, oneshot::Sender<u32>)>,
        n: u32,
    ) -> impl Future<Output = Option<u32>> {
        let requests = requests.clone();
        async move {
            let (reply, answer) = oneshot::channel();
            requests.send((n, reply)).ok()?;
            answer.await.ok()
        }
    }

    #[test]
    fn progress_within_the_poll_does_not_wake_the_task() {
        let (requests, queue) = mpsc::unbounded_channel();
        let mut inline = Inline::new(echo(queue));
        let count = Arc::new(Count::default());
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        for n in 0..5 {
            let mut drive = std::pin::pin!(inline.drive(ask(&requests, n), |_| {}));
            // The request needs the I/O to run and the I/O needs the request's message: both
            // within one poll, without a wake-up of the task.
            assert_eq!(drive.as_mut().poll(&mut cx), Poll::Ready(Some(n + 1)));
        }
        assert_eq!(count.0.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn a_wake_up_while_nobody_polls_reaches_the_task() {
        let (requests, queue) = mpsc::unbounded_channel::<(u32, oneshot::Sender<u32>)>();
        let (answer_tx, answer_rx) = oneshot::channel::<u32>();
        let mut inline = Inline::new(echo(queue));
        let count = Arc::new(Count::default());
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let mut drive = std::pin::pin!(inline.drive(answer_rx, |_| {}));
        assert!(drive.as_mut().poll(&mut cx).is_pending());
        // The "server" answers later, from outside the poll.
        answer_tx.send(7).unwrap();
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        assert_eq!(drive.as_mut().poll(&mut cx), Poll::Ready(Ok(7)));
        drop(requests);
    }

    #[test]
    fn the_end_of_the_io_is_reported_and_the_request_still_finishes() {
        let (requests, mut queue) = mpsc::unbounded_channel::<(u32, oneshot::Sender<u32>)>();
        // Like a connection the server closed: it takes the request and ends without answering.
        let closing: Io = Box::pin(async move {
            drop(queue.recv().await);
            Ok(())
        });
        let mut inline = Inline::new(closing);
        let waker = Waker::from(Arc::new(Count::default()));
        let mut cx = Context::from_waker(&waker);
        let mut seen = None;
        let outcome = {
            let request = ask(&requests, 1);
            let mut drive = std::pin::pin!(inline.drive(request, |finished| seen = Some(finished)));
            drive.as_mut().poll(&mut cx)
        };
        assert_eq!(
            outcome,
            Poll::Ready(None),
            "the request sees its answer will not come"
        );
        assert!(matches!(seen, Some(Ok(()))), "the I/O's end was reported");
        assert!(inline.take().is_none(), "the ended I/O is gone");
    }

    #[test]
    fn a_request_that_always_wakes_itself_hands_back_to_the_runtime() {
        let (_requests, queue) = mpsc::unbounded_channel();
        let mut inline = Inline::new(echo(queue));
        let count = Arc::new(Count::default());
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        // Like a future whose cooperative budget is spent: pending, and woken at once.
        let restless = std::future::poll_fn(|cx: &mut Context<'_>| {
            cx.waker().wake_by_ref();
            Poll::<()>::Pending
        });
        let mut drive = std::pin::pin!(inline.drive(restless, |_| {}));
        assert!(drive.as_mut().poll(&mut cx).is_pending());
        assert_eq!(
            count.0.load(Ordering::SeqCst),
            1,
            "the task is woken to come back"
        );
    }
}
