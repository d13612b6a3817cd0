//! A transaction's waits: relation locks (SUBXACT-LOCKS), advisory locks
//! an expression could not take at once (EVAL-REPLAY), tuple locks
//! (TUPLE-QUEUE) and other transactions' ends. Every wait runs under the
//! session's lock_timeout and deadlock_timeout, and ends at a cancel
//! request with 57014.

use std::sync::Arc;

use snapscale_lock::{LockMode, LockTag};
use snapscale_txn::Xid;
use snapscale_values::SqlError;

use super::Xact;
use crate::errors::lock_error;

impl Xact {
    /// Takes a relation lock until the end of the transaction, or of the
    /// subtransaction if it rolls back (SUBXACT-LOCKS). A lock already held
    /// in `mode` costs nothing: the lock manager is not asked again.
    pub async fn lock_relation(&mut self, oid: u32, mode: LockMode) -> Result<(), SqlError> {
        if self.held.contains_key(&(oid, mode)) {
            return Ok(());
        }
        let slot = self.session.slot();
        // A weak mode is first asked for without waiting: what a free
        // relation costs (the session's fast path, usually) without the
        // wait's futures. The answer is the one `lock_with` would give now;
        // only a refusal goes on to queue and wait.
        let granted = mode.is_weak()
            && self.db.locks.try_lock(slot, LockTag::Relation(oid), mode).map_err(lock_error)?;
        if !granted {
            let locks = Arc::clone(&self.db.locks);
            let cancel = Arc::clone(&self.cancel);
            tokio::select! {
                r = locks.lock_with(slot, LockTag::Relation(oid), mode, self.config.wait) => r.map_err(lock_error)?,
                () = cancel.wait() => return Err(cancel.error()),
            }
        }
        self.held.insert((oid, mode), self.levels.len().saturating_sub(1));
        Ok(())
    }

    /// Takes a relation lock only if nobody holds a conflicting one.
    pub fn try_lock_relation(&mut self, oid: u32, mode: LockMode) -> Result<bool, SqlError> {
        if self.held.contains_key(&(oid, mode)) {
            return Ok(true);
        }
        let granted =
            self.db.locks.try_lock(self.session.slot(), LockTag::Relation(oid), mode).map_err(lock_error)?;
        if granted {
            self.held.insert((oid, mode), self.levels.len().saturating_sub(1));
        }
        Ok(granted)
    }

    /// Waits for an advisory lock an expression could not take at once
    /// (EVAL-REPLAY), under the session's lock_timeout and
    /// deadlock_timeout; a cancel or statement_timeout ends the wait with
    /// 57014. `xact`: a transaction-level hold, else session-level.
    pub async fn wait_advisory(&mut self, tag: LockTag, mode: LockMode, xact: bool) -> Result<(), SqlError> {
        self.check_cancel()?;
        let (locks, slot) = self.advisory.manager();
        let locks = Arc::clone(locks);
        let cancel = Arc::clone(&self.cancel);
        let policy = self.config.wait;
        tokio::select! {
            r = async {
                if xact {
                    locks.lock_with(slot, tag, mode, policy).await
                } else {
                    locks.lock_session_with(slot, tag, mode, policy).await
                }
            } => r.map_err(lock_error)?,
            () = cancel.wait() => return Err(cancel.error()),
        }
        if xact {
            self.advisory.taken(tag, mode);
        }
        Ok(())
    }

    /// Takes a row version's tuple lock (TUPLE-QUEUE): the place in line
    /// of the sessions waiting to change the row, under the session's
    /// lock_timeout and deadlock_timeout. Held only while its holder waits
    /// for the row's locker; [`Xact::unlock_tuple`] gives it back, and the
    /// end of the transaction does if an error came first.
    pub async fn lock_tuple(&mut self, tag: LockTag, mode: LockMode) -> Result<(), SqlError> {
        self.check_cancel()?;
        let slot = self.session.slot();
        let locks = Arc::clone(&self.db.locks);
        let cancel = Arc::clone(&self.cancel);
        tokio::select! {
            r = locks.lock_with(slot, tag, mode, self.config.wait) => r.map_err(lock_error)?,
            () = cancel.wait() => return Err(cancel.error()),
        }
        Ok(())
    }

    /// Gives a tuple lock back (the row was changed, or given up).
    pub fn unlock_tuple(&mut self, tag: LockTag, mode: LockMode) {
        self.db.locks.unlock(self.session.slot(), tag, mode);
    }

    /// Waits until transaction `xid` ends (a row or key it holds), under
    /// the session's lock_timeout and deadlock_timeout.
    pub async fn wait_for_xid(&mut self, xid: Xid) -> Result<(), SqlError> {
        if self.cancel.take() {
            return Err(self.cancel.error());
        }
        let slot = self.session.slot();
        let locks = Arc::clone(&self.db.locks);
        let cancel = Arc::clone(&self.cancel);
        tokio::select! {
            r = locks.wait_for_xid_with(slot, xid.0, self.config.wait) => r.map_err(lock_error)?,
            () = cancel.wait() => return Err(cancel.error()),
        }
        // The owner registers its xid just after assigning it: a waiter
        // that came in between found no lock. Yield so it does not spin.
        tokio::task::yield_now().await;
        Ok(())
    }

    /// A pending cancel request, as 57014.
    pub fn check_cancel(&self) -> Result<(), SqlError> {
        if self.cancel.take() {
            return Err(self.cancel.error());
        }
        Ok(())
    }
}
