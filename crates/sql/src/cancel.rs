//! Cancellation of the running statement (a CancelRequest).
//!
//! CANCEL (in the server's README): a request reaches only a statement that
//! is waiting, or checks for it; it is never stored for the next statement.
//! A termination (the server shutting down) is the exception: it stays, so
//! every statement of the connection from then on stops at its first check.

use tokio::sync::Notify;

use crate::error::SqlError;
use crate::sqlstate::SqlState;
use std::sync::atomic::{AtomicBool, Ordering};

/// A connection's cancel flag and the wake-up of its waits.
#[derive(Debug, Default)]
pub struct Cancel {
    requested: AtomicBool,
    /// The request came from statement_timeout, not from a client.
    timed_out: AtomicBool,
    /// The server is shutting down: every check from now on fails (57P01).
    terminating: AtomicBool,
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
    pub(crate) fn request_timeout(&self) {
        // Relaxed: read after `take` returned true, whose Acquire pairs
        // with the Release store in `request` that follows this store.
        self.timed_out.store(true, Ordering::Relaxed);
        self.request();
    }

    /// Stops the running statement, and every later one, because the
    /// server is shutting down.
    pub fn terminate(&self) {
        // Release: pairs with the Acquire loads in `terminated` and
        // `is_terminating`; the flag publishes nothing else. `request`
        // then wakes whatever waits (statements and `terminated`).
        self.terminating.store(true, Ordering::Release);
        self.request();
    }

    /// Whether `terminate` was called.
    pub fn is_terminating(&self) -> bool {
        // Acquire: pairs with the Release store in `terminate`.
        self.terminating.load(Ordering::Acquire)
    }

    /// Resolves once `terminate` was called (at once if it was). The
    /// connection's idle loop waits on this next to its socket: one
    /// uncontended registration on this connection's own `Notify` per
    /// wait, where a server-wide token would be a lock every connection
    /// takes for every message.
    pub async fn terminated(&self) {
        let notified = self.wake.notified();
        tokio::pin!(notified);
        // Registered before the flag is checked: a `terminate` after the
        // check wakes it (notify_waiters), one before it is seen by it.
        notified.as_mut().enable();
        while !self.is_terminating() {
            notified.as_mut().await;
            // Woken by a plain cancel request, not a termination: wait again.
            notified.set(self.wake.notified());
            notified.as_mut().enable();
        }
    }

    /// The error for a request `take` or `wait` consumed.
    pub(crate) fn error(&self) -> SqlError {
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
    pub(crate) fn clear(&self) {
        self.take();
        // Relaxed: see `request_timeout`.
        self.timed_out.store(false, Ordering::Relaxed);
    }

    /// Consumes a pending request (a termination is never consumed).
    pub(crate) fn take(&self) -> bool {
        // Acquire: pairs with the Release store in `request`.
        self.requested.swap(false, Ordering::Acquire) || self.is_terminating()
    }

    /// Resolves when a cancel is requested (consuming the request).
    pub(crate) async fn wait(&self) {
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

/// 57014, worded as PostgreSQL words a user's cancel.
pub(crate) fn canceled() -> SqlError {
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
