//! Catching a panic inside a benchmark body's future, so teardown still runs and the panic's
//! message becomes a readable error.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

/// A future that resolves to `Err(message)` if polling `F` panicked.
pub struct CatchUnwind<F> {
    inner: Pin<Box<F>>,
}

impl<F: Future> CatchUnwind<F> {
    /// Wraps `future`.
    pub fn new(future: F) -> Self {
        CatchUnwind {
            inner: Box::pin(future),
        }
    }
}

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.inner.as_mut();
        match catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Err(payload) => Poll::Ready(Err(panic_message(payload.as_ref()))),
        }
    }
}

/// The text of a panic payload.
pub fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-text payload".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_a_panic_into_its_message() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let ok = rt.block_on(CatchUnwind::new(async { 5 }));
        assert_eq!(ok, Ok(5));
        let hook = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let err = rt.block_on(CatchUnwind::new(async { panic!("boom {}", 1) }));
        std::panic::set_hook(hook);
        assert_eq!(err, Err::<(), _>("boom 1".to_string()));
    }
}
