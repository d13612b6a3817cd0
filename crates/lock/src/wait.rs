//! Waiting for a queued lock request, asynchronously.
//!
//! A queued request owns a oneshot receiver; whoever grants it (a releaser
//! running `wake_waiters`) records the grant in the table and then fires the
//! sender, both under the partition lock. The waiter therefore never needs
//! the channel to learn whether it was granted: under the partition lock,
//! "my waiter is still queued" means "not granted", and "gone" means
//! "granted" (nobody else removes a waiter). Timeouts, the deadlock victim
//! and cancellation all decide under that lock, so a grant racing with any
//! of them is either kept (and reported as success) or undone, never lost
//! (WAIT-CANCEL).
//!
//! The wait has two timers: `deadlock_timeout`, after which the waiter runs
//! the deadlock check once (DEADLOCK-CHECK), and `lock_timeout`, after which
//! it gives up. Both are tokio timers, so a waiting session costs a parked
//! task, not a thread.

use tokio::sync::oneshot;
use tokio::time::{sleep_until, Instant};

use crate::error::LockError;
use crate::manager::{LockManager, WaitPolicy};
use crate::mode::LockMode;
use crate::table::Owner;
use crate::tag::LockTag;

/// Withdraws a queued request if its future is dropped (WAIT-CANCEL): the
/// waiter is removed, or, if it was granted meanwhile, the grant is released;
/// then a strong announcement is withdrawn. Disarmed once the wait has an
/// outcome.
struct WaitGuard<'a> {
    manager: &'a LockManager,
    session: u32,
    tag: LockTag,
    mode: LockMode,
    owner: Owner,
    armed: bool,
}

impl Drop for WaitGuard<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let m = self.manager;
        if !m.cancel_wait(self.session, self.tag) {
            let released = m.table.release(self.session, self.tag, self.mode, self.owner);
            assert!(
                released,
                "WAIT-CANCEL: granted {} on {} vanished before cancellation",
                self.mode, self.tag
            );
        }
        m.end_strong_for(self.tag, self.mode);
        m.request_failed(self.session, self.tag, self.owner);
    }
}

impl LockManager {
    /// Waits for the queued request of `session` for `mode` on `tag`.
    pub(crate) async fn wait(
        &self,
        session: u32,
        tag: LockTag,
        mode: LockMode,
        owner: Owner,
        mut granted: oneshot::Receiver<()>,
        policy: WaitPolicy,
    ) -> Result<(), LockError> {
        let mut guard = WaitGuard { manager: self, session, tag, mode, owner, armed: true };
        // No other lock is held here, so the fast-path mutex may be taken.
        self.fp(session).lock().waits_begun += 1;
        let start = Instant::now();
        let give_up_at = policy.lock_timeout.map(|t| start + t);
        let mut check_at = Some(start + policy.deadlock_timeout);
        loop {
            let timer = [check_at, give_up_at].into_iter().flatten().min();
            let woken = match timer {
                None => Some((&mut granted).await),
                Some(at) => tokio::select! {
                    biased;
                    r = &mut granted => Some(r),
                    () = sleep_until(at) => None,
                },
            };
            if let Some(r) = woken {
                r.expect("WAIT-CANCEL: a queued waiter was removed without a grant");
                guard.armed = false;
                return Ok(());
            }
            let now = Instant::now();
            if check_at.is_some_and(|t| now >= t) {
                check_at = None;
                if let Some(detail) = self.check_deadlock(session) {
                    guard.armed = false;
                    self.end_strong_for(tag, mode);
                    self.request_failed(session, tag, owner);
                    return Err(LockError::Deadlock { detail });
                }
            }
            if give_up_at.is_some_and(|t| now >= t) {
                guard.armed = false;
                if self.cancel_wait(session, tag) {
                    self.end_strong_for(tag, mode);
                    self.request_failed(session, tag, owner);
                    return Err(LockError::LockTimeout);
                }
                // Granted in the meantime: the grant wins, as in PostgreSQL.
                return Ok(());
            }
        }
    }

    /// Removes `session`'s queued request on `tag`, waking whom it held up;
    /// false if it was no longer queued (it was granted).
    pub(crate) fn cancel_wait(&self, session: u32, tag: LockTag) -> bool {
        let mut part = self.table.partition(tag).lock();
        let removed = part.entries.get_mut(&tag).is_some_and(|e| e.remove_waiter(session));
        if removed {
            // Waiters behind us may have been held back only by our request.
            part.settle(tag);
        }
        removed
    }
}
