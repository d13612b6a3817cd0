//! Session-level locks (SESSION-HOLDS): holds that belong to the session,
//! not to its transaction.
//!
//! PostgreSQL's advisory locks come in two kinds. `pg_advisory_xact_lock`
//! takes an ordinary transaction-level hold, released at commit or abort
//! like any other (`lock_with`, `unlock`, `release_all`).
//! `pg_advisory_lock` takes a session-level hold: it outlives the
//! transaction that took it, even one that rolls back, is counted
//! re-entrantly (each take needs its own unlock), and goes only when the
//! session unlocks it or disconnects. The two kinds share the lock: they
//! conflict with other sessions' holds of either kind exactly as two
//! transaction-level holds would, and a waiter for one is in the deadlock
//! graph like any waiter. Only the releases differ, which is why the table
//! records, per holder, how much of its hold is session-level
//! (`LockEntry::session_holds`), and why the session lists the tags it
//! holds that way (`FastPath::session_tags`), apart from `table_tags`,
//! which `release_all` empties.
//!
//! Session-level holds are for tags outside the fast path (advisory locks):
//! a fast-path slot has no owner, and `release_all` clears the slots.

use super::{HeldLock, LockManager, WaitPolicy};
use crate::error::LockError;
use crate::mode::LockMode;
use crate::table::Owner;
use crate::tag::LockTag;

impl LockManager {
    /// Takes a session-level hold of `mode` on `tag`, waiting as long as
    /// needed (`pg_advisory_lock`): the hold survives `release_all`.
    /// Waiting, cancellation and errors are as for
    /// [`LockManager::lock_with`]; a failed request leaves no trace.
    ///
    /// Panics if `tag` is a relation (SESSION-HOLDS).
    pub async fn lock_session_with(
        &self,
        session: u32,
        tag: LockTag,
        mode: LockMode,
        policy: WaitPolicy,
    ) -> Result<(), LockError> {
        self.lock_as(session, tag, mode, Owner::Session, policy).await
    }

    /// Takes a session-level hold of `mode` on `tag` if that is possible
    /// without waiting (`pg_try_advisory_lock`).
    pub fn try_lock_session(&self, session: u32, tag: LockTag, mode: LockMode) -> Result<bool, LockError> {
        match self.start(session, tag, mode, false, Owner::Session)? {
            super::Start::Granted => Ok(true),
            super::Start::NotAvailable => Ok(false),
            super::Start::Wait(_) => unreachable!("a request that may not wait is never queued"),
        }
    }

    /// Drops one session-level hold of `mode` on `tag`
    /// (`pg_advisory_unlock`). False, changing nothing, if the session holds
    /// none: a transaction-level hold of the same lock does not count, as
    /// in PostgreSQL.
    pub fn unlock_session(&self, session: u32, tag: LockTag, mode: LockMode) -> bool {
        self.assert_session(session);
        // Lock order: own fp mutex, then the partition (rule 1). Only this
        // session changes its session-level holds, so what the partition
        // says under both mutexes is what `session_tags` must reflect.
        let mut fp = self.fp(session).lock();
        let mut part = self.table.partition(tag).lock();
        let Some(entry) = part.entries.get_mut(&tag) else { return false };
        if !entry.release(session, mode, Owner::Session) {
            return false;
        }
        let still_held = entry.has_session_holds(session);
        part.settle(tag);
        drop(part);
        if !still_held {
            fp.session_tags.remove(&tag);
        }
        true
    }

    /// Drops every session-level hold of the session
    /// (`pg_advisory_unlock_all`, and disconnect), waking whom that
    /// unblocks. Its transaction-level holds stay. Returns how many locks
    /// it held that way.
    pub fn release_session_locks(&self, session: u32) -> usize {
        self.assert_session(session);
        let tags = std::mem::take(&mut self.fp(session).lock().session_tags);
        let mut released = 0;
        for tag in tags {
            let mut part = self.table.partition(tag).lock();
            if part.entries.get_mut(&tag).is_some_and(|e| e.release_session_holds(session)) {
                released += 1;
                part.settle(tag);
            }
        }
        released
    }

    /// The session-level holds of `session`, sorted; `count` is the number
    /// of session-level holds only (diagnostics and tests).
    pub fn session_locks(&self, session: u32) -> Vec<HeldLock> {
        self.assert_session(session);
        let fp = self.fp(session).lock();
        let mut held = Vec::new();
        for &tag in &fp.session_tags {
            let part = self.table.partition(tag).lock();
            if let Some(counts) = part.entries.get(&tag).and_then(|e| e.session_holds.get(&session)) {
                for mode in LockMode::ALL {
                    let count = counts[mode as usize];
                    if count != 0 {
                        held.push(HeldLock { tag, mode, count, fast_path: false });
                    }
                }
            }
        }
        held.sort();
        held
    }

    /// A session-level request that did not end granted (refused, timed
    /// out, deadlock victim, cancelled) leaves `session_tags` as it found
    /// it: the tag goes unless the session still holds it that way. Without
    /// this a session that keeps failing `pg_try_advisory_lock` on new keys
    /// would grow the set without bound.
    pub(crate) fn request_failed(&self, session: u32, tag: LockTag, owner: Owner) {
        if owner != Owner::Session {
            return;
        }
        let mut fp = self.fp(session).lock();
        // Lock order: own fp mutex, then the partition (rule 1).
        let held =
            self.table.partition(tag).lock().entries.get(&tag).is_some_and(|e| e.has_session_holds(session));
        if !held {
            fp.session_tags.remove(&tag);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::manager::LockConfig;

    fn listed(m: &LockManager, session: u32) -> usize {
        m.fp(session).lock().session_tags.len()
    }

    /// `session_tags` is exact between requests: failed requests and
    /// unlocks take their tags out, so a long session that tries many keys
    /// keeps a set no larger than what it holds.
    #[tokio::test(start_paused = true)]
    async fn session_tags_list_exactly_what_is_held() {
        let m = LockManager::new(LockConfig { max_sessions: 2, ..LockConfig::default() });
        let key = LockTag::advisory_bigint;
        assert!(m.try_lock_session(0, key(1), LockMode::Exclusive).unwrap());
        assert!(m.try_lock_session(0, key(1), LockMode::Exclusive).unwrap());
        assert!(!m.try_lock_session(1, key(1), LockMode::Share).unwrap());
        assert_eq!(listed(&m, 1), 0, "a refused try");
        let policy = WaitPolicy {
            deadlock_timeout: Duration::from_secs(60),
            lock_timeout: Some(Duration::from_millis(10)),
        };
        assert!(m.lock_session_with(1, key(1), LockMode::Share, policy).await.is_err());
        assert_eq!(listed(&m, 1), 0, "a timed-out wait");
        assert!(m.unlock_session(0, key(1), LockMode::Exclusive));
        assert_eq!(listed(&m, 0), 1, "one hold left");
        assert!(m.unlock_session(0, key(1), LockMode::Exclusive));
        assert_eq!(listed(&m, 0), 0, "the last unlock");
        assert!(m.try_lock_session(0, key(2), LockMode::Share).unwrap());
        m.release_all(0);
        assert_eq!(listed(&m, 0), 1, "the transaction's end leaves it");
        m.release_session_locks(0);
        assert_eq!(listed(&m, 0), 0);
    }
}
