//! One session's advisory locks (`pg_advisory_lock` and its family), as
//! the evaluator takes them and the transaction manager settles them.
//!
//! The locks themselves are the lock manager's (`LockTag::Advisory`):
//! session-level ones are held in the session's name there
//! (SESSION-HOLDS in the lock crate's README) and survive every
//! transaction end; transaction-level ones are ordinary transaction holds,
//! released with the rest at commit or abort. What the lock manager cannot
//! know is the subtransaction that took a transaction-level one: ROLLBACK
//! TO releases those its aborted levels took, as PostgreSQL's resource
//! owners do (ADVISORY-LEVELS in the crate README). The evaluator, which
//! has only a shared reference to this, lists each take in `taken`; the
//! transaction manager hands the list to the innermost level whenever the
//! levels change, which is never in the middle of a statement.
//!
//! `pg_advisory_unlock` of a lock the session does not hold warns, as
//! PostgreSQL does; the warnings wait here until the statement's notices
//! are collected.

use std::sync::{Arc, Mutex};

use snapscale_lock::{LockManager, LockMode, LockTag};
use snapscale_values::SqlError;

/// A session's view of its advisory locks. Shared (behind an `Arc`) by
/// the transaction manager and the session view the evaluator reads.
#[derive(Debug)]
pub struct SessionLocks {
    locks: Arc<LockManager>,
    slot: u32,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    /// Transaction-level holds taken since the transaction manager last
    /// collected them, one entry per take (re-entrancy).
    taken: Vec<(LockTag, LockMode)>,
    /// WARNINGs for the session's next notices.
    warnings: Vec<String>,
}

/// What `pg_advisory_unlock` and friends name in their warning.
pub fn mode_name(mode: LockMode) -> &'static str {
    if mode == LockMode::Share {
        "ShareLock"
    } else {
        "ExclusiveLock"
    }
}

impl SessionLocks {
    pub fn new(locks: Arc<LockManager>, slot: u32) -> SessionLocks {
        SessionLocks { locks, slot, state: Mutex::default() }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().expect("advisory lock state poisoned")
    }

    /// Takes the lock if nobody holds it in a conflicting mode; true if it
    /// did. `xact`: a transaction-level hold, else session-level.
    pub fn try_take(&self, tag: LockTag, mode: LockMode, xact: bool) -> Result<bool, SqlError> {
        let granted = if xact {
            self.locks.try_lock(self.slot, tag, mode)
        } else {
            self.locks.try_lock_session(self.slot, tag, mode)
        }
        // Only a slot out of range fails here: a caller bug (XX000).
        .map_err(crate::errors::lock_error)?;
        if granted && xact {
            self.taken(tag, mode);
        }
        Ok(granted)
    }

    /// Records a transaction-level hold that a wait obtained.
    pub fn taken(&self, tag: LockTag, mode: LockMode) {
        self.state().taken.push((tag, mode));
    }

    /// Drops one session-level hold (`pg_advisory_unlock`); false, with
    /// PostgreSQL's warning, if the session holds none (a
    /// transaction-level hold does not count).
    pub fn unlock(&self, tag: LockTag, mode: LockMode) -> bool {
        let released = self.locks.unlock_session(self.slot, tag, mode);
        if !released {
            self.state().warnings.push(format!("you don't own a lock of type {}", mode_name(mode)));
        }
        released
    }

    /// Drops every session-level hold (`pg_advisory_unlock_all`, DISCARD
    /// ALL, disconnect); transaction-level ones stay until the transaction
    /// ends.
    pub fn unlock_all(&self) {
        self.locks.release_session_locks(self.slot);
    }

    /// The transaction-level holds taken since the last call: the
    /// innermost level's to release if it rolls back.
    pub fn collect_taken(&self) -> Vec<(LockTag, LockMode)> {
        std::mem::take(&mut self.state().taken)
    }

    /// The warnings since the last call.
    pub fn take_warnings(&self) -> Vec<String> {
        std::mem::take(&mut self.state().warnings)
    }

    /// The lock manager and the session's slot, for a wait.
    pub fn manager(&self) -> (&Arc<LockManager>, u32) {
        (&self.locks, self.slot)
    }
}
