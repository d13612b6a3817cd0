//! The main (shared) lock table: 16 partitions of lock entries.
//!
//! An entry exists while some session holds or awaits a lock on its tag. It
//! records, per holding session, how many times it holds each mode (a
//! session may take the same lock repeatedly; each take needs its own
//! release), how many sessions hold each mode (so a conflict check excluding
//! the requester's own holds is eight comparisons, PostgreSQL's
//! `LockCheckConflicts`), and the wait queue.
//!
//! Queue discipline (QUEUE-ORDER; PostgreSQL's LockAcquire and ProcSleep):
//!
//! * A mode the session already holds is granted again at once (what
//!   PostgreSQL's backend-local lock table answers without asking).
//! * Otherwise a request is granted at once only if it conflicts neither
//!   with a mode granted to another session nor with a mode some waiter
//!   requests. So a stream of AccessShare requests cannot starve a queued
//!   AccessExclusive one.
//! * Else a request from a session that holds nothing on the tag waits at
//!   the tail. One from a session that holds something (`place`) looks for
//!   the first waiter whose request conflicts with what it holds. If that
//!   waiter holds something the request conflicts with, the two wait for
//!   each other and
//!   the request fails at once as a deadlock (the classic lock upgrade,
//!   found without waiting for `deadlock_timeout`); if no waiter ahead of
//!   that one asks for a conflicting mode and nothing granted conflicts, it
//!   is granted; otherwise it waits just before that waiter. With no such
//!   waiter it waits at the tail.
//! * Release grants waiters in queue order, each only if it conflicts neither
//!   with what is granted nor with the requests of waiters still ahead of it
//!   (`wake_waiters`, PostgreSQL's `ProcLockWakeup`).
//! * The deadlock check may reorder a queue to break a cycle that runs
//!   through queue order only (a soft deadlock: `deadlock.rs`).
//!
//! Who owns a hold (SESSION-HOLDS): a hold belongs to its session's
//! transaction (released by `release_all` at transaction end) or to the
//! session itself (advisory locks taken by `pg_advisory_lock`: released
//! only by an explicit unlock or at disconnect). The conflict checks and
//! the deadlock graph see one holder either way; only releases ask who
//! owns what. So an entry keeps, beside each holder's total counts, the
//! part of them that is session-level (`session_holds`), and a release of
//! one kind never takes a hold of the other kind.

use std::collections::{HashMap, VecDeque};

use tokio::sync::oneshot;

use crate::mode::{LockMode, ModeMask};
use crate::sync::Mutex;
use crate::tag::{LockTag, PARTITIONS};

/// Who a hold belongs to (SESSION-HOLDS).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Owner {
    /// The session's running transaction: released by `release_all`.
    Transaction,
    /// The session: survives its transactions (commit, abort, rollback to
    /// a savepoint), released only by `unlock_session` or
    /// `release_session_locks`.
    Session,
}

/// One queued request. The sender is fired by whoever grants it, with the
/// partition lock held, after the grant is recorded (WAIT-CANCEL), in the
/// name of `owner`.
#[derive(Debug)]
pub(crate) struct Waiter {
    pub(crate) session: u32,
    pub(crate) mode: LockMode,
    pub(crate) owner: Owner,
    pub(crate) wake: oneshot::Sender<()>,
}

/// Where [`LockEntry::place`] put a request.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Placed {
    /// In the queue.
    Queued,
    /// Granted without waiting: only waiters that wait for the requester
    /// were in its way.
    Granted,
    /// Not queued: `other`, waiting here for `other_mode`, waits for the
    /// requester and holds what the request conflicts with.
    Deadlock { other: u32, other_mode: LockMode },
}

/// The shared state of one lock (PostgreSQL's LOCK plus its PROCLOCKs).
#[derive(Debug, Default)]
pub(crate) struct LockEntry {
    /// Session -> times it holds each mode. A session appears iff it holds at
    /// least one mode at least once.
    pub(crate) holders: HashMap<u32, [u32; 8]>,
    /// Mode -> number of sessions holding it.
    holder_counts: [u32; 8],
    /// Session -> how many of its holds in `holders` are session-level
    /// (never more than `holders` records, mode by mode). Empty for every
    /// lock but advisory ones, so it costs relation locks nothing.
    pub(crate) session_holds: HashMap<u32, [u32; 8]>,
    /// In grant order (QUEUE-ORDER, module docs).
    pub(crate) waiters: VecDeque<Waiter>,
}

impl LockEntry {
    fn held_mask(&self, session: u32) -> ModeMask {
        self.holders.get(&session).map_or(0, mask_of)
    }

    /// Modes granted to sessions other than `session`.
    pub(crate) fn granted_to_others(&self, session: u32) -> ModeMask {
        let own = self.held_mask(session);
        let mut mask = 0;
        for mode in LockMode::ALL {
            let holders = self.holder_counts[mode as usize];
            let own_holds = u32::from(own & mode.bit() != 0);
            if holders > own_holds {
                mask |= mode.bit();
            }
        }
        mask
    }

    fn conflicts_with_granted(&self, session: u32, mode: LockMode) -> bool {
        mode.conflict_mask() & self.granted_to_others(session) != 0
    }

    /// Grants `mode` now, in `owner`'s name, if the queue discipline allows
    /// it without waiting (PostgreSQL's LockAcquire before it sleeps).
    pub(crate) fn try_grant(&mut self, session: u32, mode: LockMode, owner: Owner) -> bool {
        let again = self.held_mask(session) & mode.bit() != 0;
        if !again
            && (mode.conflict_mask() & self.wait_mask() != 0 || self.conflicts_with_granted(session, mode))
        {
            return false;
        }
        self.grant_as(session, mode, owner);
        true
    }

    /// The modes the queue asks for.
    fn wait_mask(&self) -> ModeMask {
        self.waiters.iter().fold(0, |m, w| m | w.mode.bit())
    }

    /// Queues a request `try_grant` refused, in its place (QUEUE-ORDER,
    /// PostgreSQL's ProcSleep): at the tail, or, for a session holding
    /// something here, just before the first waiter that waits for it. That
    /// waiter may not block the request: then it is granted here and now.
    /// If that waiter also holds what the request waits for, nothing is
    /// queued and the answer names it: a certain deadlock.
    pub(crate) fn place(&mut self, waiter: Waiter) -> Placed {
        assert!(
            self.waiters.iter().all(|w| w.session != waiter.session),
            "WAIT-CANCEL: session {} queued twice on one lock",
            waiter.session
        );
        let held = self.held_mask(waiter.session);
        let wants = waiter.mode.conflict_mask();
        let mut ahead: ModeMask = 0;
        let mut at = self.waiters.len();
        if held != 0 {
            for (i, w) in self.waiters.iter().enumerate() {
                if w.mode.conflict_mask() & held == 0 {
                    ahead |= w.mode.bit();
                    continue;
                }
                // `w` waits for us. Do we wait for `w`?
                if wants & self.held_mask(w.session) != 0 {
                    return Placed::Deadlock { other: w.session, other_mode: w.mode };
                }
                if wants & ahead == 0 && !self.conflicts_with_granted(waiter.session, waiter.mode) {
                    self.grant_as(waiter.session, waiter.mode, waiter.owner);
                    return Placed::Granted;
                }
                at = i;
                break;
            }
        }
        self.waiters.insert(at, waiter);
        Placed::Queued
    }

    /// Records one hold of `mode` in `owner`'s name, without a conflict
    /// check (a grant already decided).
    pub(crate) fn grant_as(&mut self, session: u32, mode: LockMode, owner: Owner) {
        self.grant(session, mode, 1);
        if owner == Owner::Session {
            self.session_holds.entry(session).or_default()[mode as usize] += 1;
        }
    }

    /// Records `count` transaction-level holds of `mode` without a conflict
    /// check: for grants already decided or known compatible
    /// (FASTPATH-TRANSFER, LAZY-VXID).
    pub(crate) fn grant(&mut self, session: u32, mode: LockMode, count: u32) {
        if count == 0 {
            return;
        }
        let counts = self.holders.entry(session).or_default();
        if counts[mode as usize] == 0 {
            self.holder_counts[mode as usize] += 1;
        }
        counts[mode as usize] += count;
    }

    /// Drops one hold of `mode` by `session` owned by `owner`; false if it
    /// held none of that kind (a transaction-level release never takes a
    /// session-level hold, nor the reverse: SESSION-HOLDS).
    pub(crate) fn release(&mut self, session: u32, mode: LockMode, owner: Owner) -> bool {
        let Some(counts) = self.holders.get(&session) else { return false };
        let own = self.session_holds.get(&session).map_or(0, |c| c[mode as usize]);
        let available = match owner {
            Owner::Transaction => counts[mode as usize] - own,
            Owner::Session => own,
        };
        if available == 0 {
            return false;
        }
        if owner == Owner::Session {
            let held = self.session_holds.get_mut(&session).expect("counted above");
            held[mode as usize] -= 1;
            if mask_of(held) == 0 {
                self.session_holds.remove(&session);
            }
        }
        self.drop_holds(session, mode, 1);
        true
    }

    /// Takes `n` holds of `mode` off `session`'s totals.
    fn drop_holds(&mut self, session: u32, mode: LockMode, n: u32) {
        if n == 0 {
            return;
        }
        let counts = self.holders.get_mut(&session).expect("SESSION-HOLDS: dropping holds never granted");
        counts[mode as usize] -= n;
        if counts[mode as usize] == 0 {
            self.holder_counts[mode as usize] -= 1;
            if mask_of(counts) == 0 {
                self.holders.remove(&session);
            }
        }
    }

    /// Drops every transaction-level hold of `session` (its transaction
    /// ended), returning how many of each mode it had; its session-level
    /// holds stay.
    pub(crate) fn release_transaction(&mut self, session: u32) -> [u32; 8] {
        let Some(total) = self.holders.get(&session).copied() else { return [0; 8] };
        let kept = self.session_holds.get(&session).copied().unwrap_or_default();
        let mut dropped = [0; 8];
        for mode in LockMode::ALL {
            dropped[mode as usize] = total[mode as usize] - kept[mode as usize];
            self.drop_holds(session, mode, dropped[mode as usize]);
        }
        dropped
    }

    /// Drops every session-level hold of `session`; true if it had any.
    pub(crate) fn release_session_holds(&mut self, session: u32) -> bool {
        let Some(kept) = self.session_holds.remove(&session) else { return false };
        for mode in LockMode::ALL {
            self.drop_holds(session, mode, kept[mode as usize]);
        }
        true
    }

    /// Whether `session` has a session-level hold here.
    pub(crate) fn has_session_holds(&self, session: u32) -> bool {
        self.session_holds.contains_key(&session)
    }

    /// Rewrites the queue in `order` (the deadlock check's resolution of a
    /// soft deadlock); `order` names every waiter once.
    pub(crate) fn reorder(&mut self, order: &[u32]) {
        assert_eq!(order.len(), self.waiters.len(), "DEADLOCK-CHECK: a reordering lost or added a waiter");
        let mut old = std::mem::take(&mut self.waiters);
        for &session in order {
            let i = old
                .iter()
                .position(|w| w.session == session)
                .expect("DEADLOCK-CHECK: reordered a session not queued");
            self.waiters.push_back(old.remove(i).expect("index found above"));
        }
    }

    /// Removes `session`'s waiter; false if it is not queued (it was granted).
    pub(crate) fn remove_waiter(&mut self, session: u32) -> bool {
        match self.waiters.iter().position(|w| w.session == session) {
            Some(i) => {
                self.waiters.remove(i);
                true
            }
            None => false,
        }
    }

    /// Grants every waiter the queue discipline now allows and wakes it.
    pub(crate) fn wake_waiters(&mut self) {
        let mut ahead: ModeMask = 0;
        let mut i = 0;
        while i < self.waiters.len() {
            let (session, mode) = (self.waiters[i].session, self.waiters[i].mode);
            if mode.conflict_mask() & ahead == 0 && !self.conflicts_with_granted(session, mode) {
                let waiter = self.waiters.remove(i).expect("index checked above");
                self.grant_as(session, mode, waiter.owner);
                // The receiver is gone only if its future was dropped without
                // its guard running, which `WaitGuard` rules out; ignoring the
                // error would leak the grant, so say so loudly in tests.
                let sent = waiter.wake.send(());
                debug_assert!(sent.is_ok(), "WAIT-CANCEL: granted a waiter whose future is gone");
            } else {
                ahead |= mode.bit();
                i += 1;
            }
        }
    }

    pub(crate) fn is_unused(&self) -> bool {
        self.holders.is_empty() && self.waiters.is_empty()
    }
}

pub(crate) fn mask_of(counts: &[u32; 8]) -> ModeMask {
    LockMode::ALL.iter().filter(|m| counts[**m as usize] != 0).fold(0, |mask, m| mask | m.bit())
}

/// One partition: the entries whose tags hash to it.
#[derive(Debug, Default)]
pub(crate) struct Partition {
    pub(crate) entries: HashMap<LockTag, LockEntry>,
}

impl Partition {
    pub(crate) fn entry(&mut self, tag: LockTag) -> &mut LockEntry {
        self.entries.entry(tag).or_default()
    }

    /// Wakes whom `tag`'s last change unblocked and drops the entry if
    /// nobody holds or awaits it any more.
    pub(crate) fn settle(&mut self, tag: LockTag) {
        if let Some(entry) = self.entries.get_mut(&tag) {
            entry.wake_waiters();
            if entry.is_unused() {
                self.entries.remove(&tag);
            }
        }
    }
}

/// The partitioned main lock table (PostgreSQL's shared lock hash table and
/// its 16 LockMgrLocks).
#[derive(Debug)]
pub(crate) struct LockTable {
    partitions: Box<[Mutex<Partition>]>,
}

impl LockTable {
    pub(crate) fn new() -> Self {
        Self { partitions: (0..PARTITIONS).map(|_| Mutex::new(Partition::default())).collect() }
    }

    pub(crate) fn partition(&self, tag: LockTag) -> &Mutex<Partition> {
        &self.partitions[tag.partition()]
    }

    /// Every partition, in index order (DEADLOCK-CHECK, lock-ordering rule 2).
    pub(crate) fn all(&self) -> &[Mutex<Partition>] {
        &self.partitions
    }

    /// Drops one hold of `mode` on `tag` by `session`, owned by `owner`, and
    /// wakes whom that unblocks; false if the session held no such lock in
    /// the table.
    pub(crate) fn release(&self, session: u32, tag: LockTag, mode: LockMode, owner: Owner) -> bool {
        let mut part = self.partition(tag).lock();
        let released = part.entries.get_mut(&tag).is_some_and(|e| e.release(session, mode, owner));
        if released {
            part.settle(tag);
        }
        released
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use LockMode::*;

    use Owner::{Session, Transaction};

    fn waiter(session: u32, mode: LockMode) -> (Waiter, oneshot::Receiver<()>) {
        let (wake, rx) = oneshot::channel();
        (Waiter { session, mode, owner: Transaction, wake }, rx)
    }

    #[test]
    fn own_holds_do_not_conflict() {
        let mut e = LockEntry::default();
        assert!(e.try_grant(1, RowExclusive, Transaction));
        assert!(e.try_grant(1, AccessExclusive, Transaction), "upgrade by the only holder");
        assert!(!e.try_grant(2, AccessShare, Transaction));
        assert!(e.release(1, AccessExclusive, Transaction));
        assert!(e.try_grant(2, AccessShare, Transaction));
    }

    #[test]
    fn queued_strong_request_blocks_later_weak_ones_but_not_holders() {
        let mut e = LockEntry::default();
        assert!(e.try_grant(1, AccessShare, Transaction));
        let (w, _rx) = waiter(2, AccessExclusive);
        assert!(!e.try_grant(2, AccessExclusive, Transaction));
        assert_eq!(e.place(w), Placed::Queued);
        assert!(!e.try_grant(3, AccessShare, Transaction), "a newcomer queues behind the strong waiter");
        assert!(e.try_grant(1, AccessShare, Transaction), "a holder re-requesting is not queued behind it");
    }

    #[test]
    fn wake_grants_in_order_and_respects_requests_ahead() {
        let mut e = LockEntry::default();
        assert!(e.try_grant(1, AccessExclusive, Transaction));
        let (w2, mut rx2) = waiter(2, AccessShare);
        let (w3, mut rx3) = waiter(3, AccessExclusive);
        let (w4, mut rx4) = waiter(4, AccessShare);
        assert_eq!(e.place(w2), Placed::Queued);
        assert_eq!(e.place(w3), Placed::Queued);
        assert_eq!(e.place(w4), Placed::Queued);
        assert!(e.release(1, AccessExclusive, Transaction));
        e.wake_waiters();
        assert!(rx2.try_recv().is_ok());
        assert!(rx3.try_recv().is_err());
        assert!(rx4.try_recv().is_err(), "4 must not overtake 3, whose request conflicts with it");
        assert!(e.release(2, AccessShare, Transaction));
        e.wake_waiters();
        assert!(rx3.try_recv().is_ok());
        assert!(rx4.try_recv().is_err());
    }

    #[test]
    fn session_holds_survive_the_transactions_release_and_vice_versa() {
        let mut e = LockEntry::default();
        assert!(e.try_grant(1, Exclusive, Session));
        assert!(e.try_grant(1, Exclusive, Session));
        assert!(e.try_grant(1, Exclusive, Transaction));
        assert!(e.try_grant(1, Share, Transaction));
        assert!(!e.try_grant(2, Share, Transaction), "one holder as far as others can tell");
        assert_eq!(e.release_transaction(1), [0, 0, 0, 0, 1, 0, 1, 0]);
        assert_eq!(e.holders[&1][Exclusive as usize], 2, "both session holds stay");
        assert!(!e.release(1, Exclusive, Transaction), "no transaction hold left to drop");
        assert!(e.release(1, Exclusive, Session));
        assert!(e.has_session_holds(1));
        assert!(e.release(1, Exclusive, Session));
        assert!(!e.has_session_holds(1));
        assert!(e.is_unused());
        assert!(e.try_grant(2, Share, Transaction));
    }

    #[test]
    fn a_transaction_release_never_takes_a_session_hold() {
        let mut e = LockEntry::default();
        assert!(e.try_grant(1, Share, Session));
        assert!(e.try_grant(1, Share, Transaction));
        assert!(e.release(1, Share, Transaction));
        assert!(!e.release(1, Share, Transaction));
        assert!(e.release_session_holds(1));
        assert!(e.is_unused());
        assert!(!e.release_session_holds(1));
    }

    #[test]
    fn a_waiter_is_granted_in_its_owners_name() {
        let mut e = LockEntry::default();
        assert!(e.try_grant(1, Exclusive, Transaction));
        let (wake, mut rx) = oneshot::channel();
        assert_eq!(e.place(Waiter { session: 2, mode: Exclusive, owner: Session, wake }), Placed::Queued);
        assert_eq!(e.release_transaction(1), [0, 0, 0, 0, 0, 0, 1, 0]);
        e.wake_waiters();
        assert!(rx.try_recv().is_ok());
        assert_eq!(e.release_transaction(2), [0; 8], "the grant is session-level");
        assert!(e.release(2, Exclusive, Session));
    }
}
