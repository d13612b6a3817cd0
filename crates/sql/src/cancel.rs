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
        // Relaxed: a flag read on its own by `take` and `error` (it
        // publishes no other data); the Release store in `request` that
        // follows wakes statements that wait.
        self.terminating.store(true, Ordering::Relaxed);
        self.request();
    }

    /// The error for a request `take` or `wait` consumed.
    pub(crate) fn error(&self) -> SqlError {
        // Relaxed: see `terminate`.
        if self.terminating.load(Ordering::Relaxed) {
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
        // Acquire: pairs with the Release store in `request`. Relaxed: see
        // `terminate`.
        self.requested.swap(false, Ordering::Acquire) || self.terminating.load(Ordering::Relaxed)
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
