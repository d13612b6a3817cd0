//! The main (shared) lock table: 16 partitions of lock entries.
//!
//! An entry exists while some session holds or awaits a lock on its tag. It
//! records, per holding session, how many times it holds each mode (a
//! session may take the same lock repeatedly; each take needs its own
//! release), how many sessions hold each mode (so a conflict check excluding
//! the requester's own holds is eight comparisons, PostgreSQL's
//! `LockCheckConflicts`), and the wait queue.
//!
//! Queue discipline (QUEUE-ORDER; PostgreSQL's, minus its queue
//! rearrangement on soft deadlocks):
//!
//! * A request from a session that holds nothing on the tag is granted only
//!   if it conflicts neither with a mode granted to another session nor with
//!   a mode some waiter requests; otherwise it waits at the tail. So a stream
//!   of AccessShare requests cannot starve a queued AccessExclusive one.
//! * A request from a session that already holds a mode on the tag is checked
//!   against granted modes only and, if it must wait, waits at the head.
//!   Queuing it behind a waiter that waits for it would be a certain
//!   deadlock (the classic lock upgrade). PostgreSQL inserts it before the
//!   first waiter that conflicts with what it holds; the head is the same
//!   place whenever that waiter is the first one, and the deadlock check
//!   covers the other cases.
//! * Release grants waiters in queue order, each only if it conflicts neither
//!   with what is granted nor with the requests of waiters still ahead of it
//!   (`wake_waiters`, PostgreSQL's `ProcLockWakeup`).

use std::collections::{HashMap, VecDeque};

use tokio::sync::oneshot;

use crate::mode::{LockMode, ModeMask};
use crate::sync::Mutex;
use crate::tag::{LockTag, PARTITIONS};

/// One queued request. The sender is fired by whoever grants it, with the
/// partition lock held, after the grant is recorded (WAIT-CANCEL).
#[derive(Debug)]
pub(crate) struct Waiter {
    pub(crate) session: u32,
    pub(crate) mode: LockMode,
    pub(crate) wake: oneshot::Sender<()>,
}

/// The shared state of one lock (PostgreSQL's LOCK plus its PROCLOCKs).
#[derive(Debug, Default)]
pub(crate) struct LockEntry {
    /// Session -> times it holds each mode. A session appears iff it holds at
    /// least one mode at least once.
    pub(crate) holders: HashMap<u32, [u32; 8]>,
    /// Mode -> number of sessions holding it.
    holder_counts: [u32; 8],
    /// FIFO except for holders re-requesting (module docs).
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

    /// Grants `mode` now if the queue discipline allows it.
    pub(crate) fn try_grant(&mut self, session: u32, mode: LockMode) -> bool {
        let wait_mask = if self.holders.contains_key(&session) {
            0
        } else {
            self.waiters.iter().fold(0, |m, w| m | w.mode.bit())
        };
        if mode.conflict_mask() & wait_mask != 0 || self.conflicts_with_granted(session, mode) {
            return false;
        }
        self.grant(session, mode, 1);
        true
    }

    /// Records `count` holds of `mode` without a conflict check: for grants
    /// already decided (queue wake-ups) or known compatible (FASTPATH-TRANSFER,
    /// LAZY-VXID).
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

    /// Drops one hold of `mode` by `session`; false if it held none.
    pub(crate) fn release(&mut self, session: u32, mode: LockMode) -> bool {
        let Some(counts) = self.holders.get_mut(&session) else { return false };
        if counts[mode as usize] == 0 {
            return false;
        }
        counts[mode as usize] -= 1;
        if counts[mode as usize] == 0 {
            self.holder_counts[mode as usize] -= 1;
            if mask_of(counts) == 0 {
                self.holders.remove(&session);
            }
        }
        true
    }

    /// Drops every hold of `session`, returning how many of each mode it had.
    pub(crate) fn release_session(&mut self, session: u32) -> [u32; 8] {
        let counts = self.holders.remove(&session).unwrap_or_default();
        for mode in LockMode::ALL {
            if counts[mode as usize] != 0 {
                self.holder_counts[mode as usize] -= 1;
            }
        }
        counts
    }

    pub(crate) fn enqueue(&mut self, waiter: Waiter) {
        assert!(
            self.waiters.iter().all(|w| w.session != waiter.session),
            "WAIT-CANCEL: session {} queued twice on one lock",
            waiter.session
        );
        if self.holders.contains_key(&waiter.session) {
            self.waiters.push_front(waiter);
        } else {
            self.waiters.push_back(waiter);
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
                self.grant(session, mode, 1);
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

    /// Drops one hold of `mode` on `tag` by `session` and wakes whom that
    /// unblocks; false if the session held no such lock in the table.
    pub(crate) fn release(&self, session: u32, tag: LockTag, mode: LockMode) -> bool {
        let mut part = self.partition(tag).lock();
        let released = part.entries.get_mut(&tag).is_some_and(|e| e.release(session, mode));
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

    fn waiter(session: u32, mode: LockMode) -> (Waiter, oneshot::Receiver<()>) {
        let (wake, rx) = oneshot::channel();
        (Waiter { session, mode, wake }, rx)
    }

    #[test]
    fn own_holds_do_not_conflict() {
        let mut e = LockEntry::default();
        assert!(e.try_grant(1, RowExclusive));
        assert!(e.try_grant(1, AccessExclusive), "upgrade by the only holder");
        assert!(!e.try_grant(2, AccessShare));
        assert!(e.release(1, AccessExclusive));
        assert!(e.try_grant(2, AccessShare));
    }

    #[test]
    fn queued_strong_request_blocks_later_weak_ones_but_not_holders() {
        let mut e = LockEntry::default();
        assert!(e.try_grant(1, AccessShare));
        let (w, _rx) = waiter(2, AccessExclusive);
        assert!(!e.try_grant(2, AccessExclusive));
        e.enqueue(w);
        assert!(!e.try_grant(3, AccessShare), "a newcomer queues behind the strong waiter");
        assert!(e.try_grant(1, AccessShare), "a holder re-requesting is not queued behind it");
    }

    #[test]
    fn wake_grants_in_order_and_respects_requests_ahead() {
        let mut e = LockEntry::default();
        assert!(e.try_grant(1, AccessExclusive));
        let (w2, mut rx2) = waiter(2, AccessShare);
        let (w3, mut rx3) = waiter(3, AccessExclusive);
        let (w4, mut rx4) = waiter(4, AccessShare);
        e.enqueue(w2);
        e.enqueue(w3);
        e.enqueue(w4);
        assert!(e.release(1, AccessExclusive));
        e.wake_waiters();
        assert!(rx2.try_recv().is_ok());
        assert!(rx3.try_recv().is_err());
        assert!(rx4.try_recv().is_err(), "4 must not overtake 3, whose request conflicts with it");
        assert!(e.release(2, AccessShare));
        e.wake_waiters();
        assert!(rx3.try_recv().is_ok());
        assert!(rx4.try_recv().is_err());
    }
}
