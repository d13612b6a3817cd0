//! NOTICE-STREAM: the notices and warnings a statement raises, queued where
//! the connection can reach them while the statement still runs.
//!
//! PostgreSQL sends a NOTICE the moment it is raised: a statement that then
//! waits for a lock has already told its client what it did before (the
//! isolation specs' transcripts show it: a trigger's NOTICE comes before
//! `<waiting ...>`). The transaction pushes onto the queue and wakes its
//! reader; the connection, while it awaits the statement, sends what the
//! queue holds each time it is woken, and takes the rest when the statement
//! ends. One reader, one writer (the statement and the connection run on
//! the same task), so the order of notices is the order they were raised.
//!
//! A statement run off its worker (OFF-THE-WORKER in the SQL crate's exec)
//! blocks its task's thread, so the connection cannot send while it waits.
//! It watches `pushed` too: once it waits with notices raised, it hands its
//! task back for a turn (the connection sends them) and goes on.

use std::sync::Mutex;

use super::Notice;

/// The queue between a transaction and its connection.
#[derive(Debug, Default)]
pub struct NoticeQueue {
    list: Mutex<Vec<Notice>>,
    /// Stores a permit when nobody waits: a notice pushed while the
    /// connection was not waiting wakes its next wait at once.
    ready: tokio::sync::Notify,
    /// The same for a statement run off its worker (module comment).
    pushed: tokio::sync::Notify,
}

impl NoticeQueue {
    pub fn push(&self, n: Notice) {
        self.list.lock().expect("notice queue poisoned").push(n);
        self.ready.notify_one();
        self.pushed.notify_one();
    }

    /// Everything queued, oldest first.
    pub fn take(&self) -> Vec<Notice> {
        std::mem::take(&mut *self.list.lock().expect("notice queue poisoned"))
    }

    /// Waits until a notice may have been pushed since the last wait (the
    /// connection's).
    pub async fn ready(&self) {
        self.ready.notified().await;
    }

    /// As `ready`, for a statement run off its worker.
    pub async fn pushed(&self) {
        self.pushed.notified().await;
    }
}
