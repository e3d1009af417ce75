//! Polling a connection's I/O future inline with the request that waits on it, on the caller's
//! thread, without waking the caller's task for the progress one makes for the other, and polling
//! each of the two only when something woke it.
//!
//! Why: a request (a call on tokio-postgres's client) and the connection's I/O future hand each
//! other work through channels. Polled with the task's own waker, each hand-over wakes the task
//! that is polling both right then: the request queues a message and wakes the I/O future, the
//! I/O future delivers the response and wakes the request. A woken task is polled again only
//! after the runtime has looked for I/O events once more, so each round trip cost two extra
//! `epoll_wait` calls and two extra polls of the whole worker (seen with `perf trace` on the
//! driver's worker at one connection: about eight `epoll_wait` per transaction of three
//! statements, against pgbench's two or three `ppoll`). Here each is polled with a waker of its
//! own ([`Half`]): a wake-up during the poll only marks that half for another pass, and only
//! wake-ups while nobody polls (the server's answer arriving) reach the task.
//!
//! Polling only the woken half matters as much: polling both on every pass polled each of them
//! four times per round trip where two suffice (callgrind, `pg_driver_vs_pgbench` at one
//! connection: the connection future's poll alone was 3,600 instructions per statement).

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

/// The I/O half of a connection.
pub(crate) type Io =
    Pin<Box<dyn Future<Output = std::result::Result<(), tokio_postgres::Error>> + Send>>;

/// Passes over the woken halves within one poll before handing back to the runtime; a round trip
/// needs two, and a bound keeps a future that wakes itself on every poll (a spent cooperative
/// budget) from spinning here.
const PASSES: usize = 16;

/// What the two halves' wakers share.
#[derive(Debug, Default)]
struct Relay {
    /// The request was woken since it was last polled.
    request: AtomicBool,
    /// The I/O was woken since it was last polled.
    io: AtomicBool,
    /// A poll is running: wake-ups are seen by its next pass, not sent to the task.
    polling: AtomicBool,
    /// The waker of the task that polled last.
    task: Mutex<Option<Waker>>,
}

/// The waker of one half.
#[derive(Debug)]
struct Half {
    relay: Arc<Relay>,
    io: bool,
}

impl Wake for Half {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let relay = &self.relay;
        let flag = if self.io { &relay.io } else { &relay.request };
        flag.store(true, Ordering::SeqCst);
        // Paired with the poll's store of `polling = false` and its second look at the flags:
        // either that look sees this flag, or this load sees that nobody polls.
        if !relay.polling.load(Ordering::SeqCst) {
            let task = relay.task.lock().unwrap_or_else(|p| p.into_inner());
            if let Some(task) = task.as_ref() {
                task.wake_by_ref();
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

    fn any_woken(&self) -> bool {
        self.request.load(Ordering::SeqCst) || self.io.load(Ordering::SeqCst)
    }
}

/// A connection's I/O future and the wakers it and its requests are polled with.
pub(crate) struct Inline {
    io: Option<Io>,
    relay: Arc<Relay>,
    request_waker: Waker,
    io_waker: Waker,
}

impl Inline {
    pub(crate) fn new(io: Io) -> Inline {
        let relay = Arc::new(Relay::default());
        // Never polled yet: the first pass must poll it.
        relay.io.store(true, Ordering::SeqCst);
        let half = |io| {
            Waker::from(Arc::new(Half {
                relay: relay.clone(),
                io,
            }))
        };
        Inline {
            io: Some(io),
            request_waker: half(false),
            io_waker: half(true),
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
    ///
    /// A plain function returning [`Drive`] rather than an `async fn`: each layer of `async fn`
    /// that takes the request by value copies the request's whole state once more (callgrind:
    /// four copies per statement with the layers there were).
    pub(crate) fn drive<R, E>(&mut self, request: R, ended: E) -> Drive<'_, R, E>
    where
        R: Future,
        E: FnOnce(std::result::Result<(), tokio_postgres::Error>),
    {
        // A new request has not been polled yet.
        self.relay.request.store(true, Ordering::SeqCst);
        Drive {
            inline: self,
            request,
            ended: Some(ended),
        }
    }
}

pin_project_lite::pin_project! {
    /// A request awaited while its connection's I/O is polled inline ([`Inline::drive`]).
    pub(crate) struct Drive<'a, R, E> {
        inline: &'a mut Inline,
        #[pin]
        request: R,
        ended: Option<E>,
    }
}

impl<R, E> Future for Drive<'_, R, E>
where
    R: Future,
    E: FnOnce(std::result::Result<(), tokio_postgres::Error>),
{
    type Output = R::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<R::Output> {
        let mut this = self.project();
        let inline = &mut **this.inline;
        let relay = &inline.relay;
        relay.remember(cx.waker());
        relay.polling.store(true, Ordering::SeqCst);
        for _ in 0..PASSES {
            if relay.request.swap(false, Ordering::SeqCst) {
                let mut inner = Context::from_waker(&inline.request_waker);
                if let Poll::Ready(out) = this.request.as_mut().poll(&mut inner) {
                    relay.polling.store(false, Ordering::SeqCst);
                    return Poll::Ready(out);
                }
            }
            if relay.io.swap(false, Ordering::SeqCst) {
                if let Some(io) = inline.io.as_mut() {
                    let mut inner = Context::from_waker(&inline.io_waker);
                    if let Poll::Ready(finished) = io.as_mut().poll(&mut inner) {
                        inline.io = None;
                        if let Some(ended) = this.ended.take() {
                            ended(finished);
                        }
                        // The request must now see that its answer will not come.
                        relay.request.store(true, Ordering::SeqCst);
                    }
                }
            }
            if !relay.any_woken() {
                relay.polling.store(false, Ordering::SeqCst);
                if !relay.any_woken() {
                    return Poll::Pending;
                }
                relay.polling.store(true, Ordering::SeqCst);
            }
        }
        // Still woken after every pass: let the runtime poll again later.
        relay.polling.store(false, Ordering::SeqCst);
        cx.waker().wake_by_ref();
        Poll::Pending
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

    /// Counts the polls of a future.
    struct Counted<F> {
        inner: Pin<Box<F>>,
        polls: Arc<AtomicUsize>,
    }

    impl<F: Future> Future for Counted<F> {
        type Output = F::Output;
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
            self.polls.fetch_add(1, Ordering::SeqCst);
            self.inner.as_mut().poll(cx)
        }
    }

    #[test]
    fn only_the_woken_half_is_polled_again() {
        let (requests, queue) = mpsc::unbounded_channel();
        let io_polls = Arc::new(AtomicUsize::new(0));
        let io: Io = Box::pin(Counted {
            inner: Box::pin(echo(queue)),
            polls: io_polls.clone(),
        });
        let mut inline = Inline::new(io);
        let waker = Waker::from(Arc::new(Count::default()));
        let mut cx = Context::from_waker(&waker);
        let request_polls = Arc::new(AtomicUsize::new(0));
        for n in 0..4 {
            let request = Counted {
                inner: Box::pin(ask(&requests, n)),
                polls: request_polls.clone(),
            };
            let mut drive = std::pin::pin!(inline.drive(request, |_| {}));
            assert_eq!(drive.as_mut().poll(&mut cx), Poll::Ready(Some(n + 1)));
        }
        // Per request: the request to send and to take its answer, the I/O once in between.
        assert_eq!(request_polls.load(Ordering::SeqCst), 4 * 2);
        assert_eq!(io_polls.load(Ordering::SeqCst), 4);
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
