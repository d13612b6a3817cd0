//! Cancellation of the running statement (a CancelRequest).
//!
//! CANCEL (in the server's README): a request reaches only a statement that
//! is waiting, or checks for it; it is never stored for the next statement.
//! A termination (the server shutting down) is the exception: it stays, so
//! every statement of the connection from then on stops at its first check.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use futures_util::task::AtomicWaker;
use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use tokio::sync::Notify;

/// A connection's cancel flag and the wake-up of its waits.
#[derive(Debug, Default)]
pub struct Cancel {
    requested: AtomicBool,
    /// The request came from statement_timeout, not from a client.
    timed_out: AtomicBool,
    /// The server is shutting down: every check from now on fails (57P01).
    terminating: AtomicBool,
    /// Wakes the connection's idle loop (through the invalidation queue's
    /// catch-up wait, which it polls anyway), set once by the session.
    idle: IdleWake,
    /// The task of a COPY FROM STDIN waiting for data, woken by `terminate`.
    copying: AtomicWaker,
    wake: Notify,
}

impl Cancel {
    /// Asks the running statement, if any, to stop.
    pub fn request(&self) {
        // Release: pairs with the Acquire swap in `take`; nothing else is
        // published through the flag.
        self.requested.store(true, Ordering::Release);
        // Only current waiters: a stored permit would cancel the next
        // statement's first wait.
        self.wake.notify_waiters();
    }

    /// Asks the running statement to stop because statement_timeout
    /// passed: its 57014 says so.
    pub fn request_timeout(&self) {
        // Relaxed: read after `take` returned true, whose Acquire pairs
        // with the Release store in `request` that follows this store.
        self.timed_out.store(true, Ordering::Relaxed);
        self.request();
    }

    /// Stops the running statement, and every later one, because the
    /// server is shutting down.
    pub fn terminate(&self) {
        // Release: pairs with the Acquire load in `is_terminating` (also
        // what `Terminated` polls); the flag publishes nothing else.
        // `request` then wakes statements that wait; `wake` the idle loop.
        self.terminating.store(true, Ordering::Release);
        self.request();
        // After the store: a `Terminated` that registered before this
        // wake is woken and finds the flag; one that registers after it
        // finds the flag in its check after registering (AtomicWaker's
        // register/wake are themselves AcqRel).
        self.copying.wake();
        // The idle loop checks the flag before each wait; a wait that
        // began before the store is woken here (a `Notify` permit, kept
        // if the loop is not waiting yet).
        if let Some(wake) = self.idle.0.get() {
            wake();
        }
    }

    /// Sets how `terminate` wakes the connection's idle loop (once; later
    /// calls are ignored).
    pub fn set_idle_wake(&self, wake: impl Fn() + Send + Sync + 'static) {
        let _ = self.idle.0.set(Box::new(wake));
    }

    /// Whether `terminate` was called.
    pub fn is_terminating(&self) -> bool {
        // Acquire: pairs with the Release store in `terminate`.
        self.terminating.load(Ordering::Acquire)
    }

    /// Resolves once `terminate` was called (at once if it was): COPY FROM
    /// STDIN waits on this beside its socket. A waker kept in an
    /// `AtomicWaker` (two atomic operations, no clone when the task is the
    /// same). The idle loop does not wait on it: even that cost 1.5 % of a
    /// pgbench transaction's instructions there (and a `Notify` 3.6 %), so
    /// it is woken through the catch-up wait it polls anyway.
    pub fn terminated(&self) -> Terminated<'_> {
        Terminated(self)
    }

    /// The error for a request `take` or `wait` consumed.
    pub fn error(&self) -> SqlError {
        if self.is_terminating() {
            return SqlError::new(
                SqlState::ADMIN_SHUTDOWN,
                "terminating connection due to administrator command",
            );
        }
        // Relaxed: see `request_timeout`.
        if self.timed_out.swap(false, Ordering::Relaxed) {
            SqlError::new(SqlState::QUERY_CANCELED, "canceling statement due to statement timeout")
        } else {
            canceled()
        }
    }

    /// Forgets a request that arrived after its statement ended.
    pub fn clear(&self) {
        self.take();
        // Relaxed: see `request_timeout`.
        self.timed_out.store(false, Ordering::Relaxed);
    }

    /// Consumes a pending request (a termination is never consumed).
    pub fn take(&self) -> bool {
        // The plain load first: a loop checks every turn, and a swap would
        // write the flag's cache line each time. Acquire (load and swap):
        // pairs with the Release store in `request`.
        (self.requested.load(Ordering::Acquire) && self.requested.swap(false, Ordering::Acquire))
            || self.is_terminating()
    }

    /// Resolves when a cancel is requested (consuming the request).
    pub async fn wait(&self) {
        let notified = self.wake.notified();
        tokio::pin!(notified);
        // Registered before the flag is checked, so a request between the
        // check and the await still wakes us.
        notified.as_mut().enable();
        if self.take() {
            return;
        }
        notified.await;
        self.take();
    }
}

/// How `Cancel::terminate` wakes the connection's idle loop.
#[derive(Default)]
struct IdleWake(std::sync::OnceLock<Box<dyn Fn() + Send + Sync>>);

impl std::fmt::Debug for IdleWake {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() { "IdleWake(set)" } else { "IdleWake(unset)" })
    }
}

/// A wait for `Cancel::terminate` (see `Cancel::terminated`). One task
/// at a time waits on a given `Cancel` (the connection's own loop).
#[derive(Debug)]
pub struct Terminated<'a>(&'a Cancel);

impl Future for Terminated<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0.is_terminating() {
            return Poll::Ready(());
        }
        self.0.copying.register(cx.waker());
        // Checked again after registering: a `terminate` between the first
        // check and the registration woke nobody.
        if self.0.is_terminating() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

/// 57014, worded as PostgreSQL words a user's cancel.
pub fn canceled() -> SqlError {
    SqlError::new(SqlState::QUERY_CANCELED, "canceling statement due to user request")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
    }

    #[test]
    fn a_termination_before_the_wait_is_seen_at_once() {
        let cancel = Cancel::default();
        cancel.terminate();
        runtime().block_on(async {
            tokio::time::timeout(Duration::from_secs(5), cancel.terminated()).await.expect("resolves");
        });
        assert!(cancel.is_terminating());
    }

    #[test]
    fn a_termination_wakes_a_waiter_and_a_plain_cancel_does_not() {
        runtime().block_on(async {
            for _ in 0..200 {
                let cancel = Arc::new(Cancel::default());
                let waiter = tokio::spawn({
                    let cancel = Arc::clone(&cancel);
                    async move { cancel.terminated().await }
                });
                tokio::task::yield_now().await;
                cancel.request();
                tokio::task::yield_now().await;
                assert!(!waiter.is_finished(), "a user's cancel does not end the connection");
                assert!(cancel.take(), "the plain request is still there for the statement");
                let from = Arc::clone(&cancel);
                std::thread::spawn(move || from.terminate());
                tokio::time::timeout(Duration::from_secs(5), waiter).await.expect("woken").unwrap();
            }
        });
    }

    #[test]
    fn every_check_after_a_termination_fails_with_57p01() {
        let cancel = Cancel::default();
        cancel.terminate();
        for _ in 0..3 {
            assert!(cancel.take(), "never consumed");
            assert_eq!(cancel.error().code, SqlState::ADMIN_SHUTDOWN);
        }
        cancel.clear();
        assert!(cancel.take());
    }
}
