//! Fast-path relation locks and the strong-lock counters (lock.c's fast path).
//!
//! Most relation locks are weak (AccessShare, RowShare, RowExclusive) and
//! never conflict with each other. Recording them in the shared table would
//! make every `SELECT` contend on a partition mutex, so a session records
//! them in its own `FastPath` slots, behind its own mutex (PostgreSQL's
//! `fpInfoLock`), and nobody else normally touches that mutex.
//!
//! The price is paid by strong lockers: a strong mode conflicts with weak
//! ones, and fast-path entries are invisible in the shared table. So a
//! strong locker first bumps the relation's strong-lock counter, then visits
//! every session's fast-path mutex and moves entries for its relation into
//! the shared table (the transfer), and only then requests its lock there.
//! A weak locker may use its slots only while, under its own mutex, it
//! reads that counter as zero (FASTPATH-TRANSFER, STRONG-COUNTER):
//!
//! ```text
//!   weak W (own mutex held)                strong S
//!   ----------------------                 --------
//!   lock fp[W]                             counter[c] += 1
//!   read counter[c] == 0 ?                 for each session X:
//!     yes: record slot                        lock fp[X]; move X's entries
//!     no:  use the shared table                for the relation to the table
//!   unlock fp[W]                              unlock fp[X]
//!                                          request the lock in the table
//! ```
//!
//! The two critical sections on fp[W] are ordered one way or the other. If
//! W's comes first, S's lock of fp[W] happens after it and S finds and moves
//! the slot. If S's comes first, S's increment is sequenced before its unlock
//! of fp[W], which happens before W's lock, so W's load reads the increment
//! or a later value of the counter (write-read coherence) and is non-zero
//! until S releases. Either way the shared table sees every weak lock that
//! could conflict with S. The mutex hand-off alone orders the increment; the
//! increment needs no ordering of its own.
//!
//! The counter is also the release edge from a strong holder to a later
//! fast-path locker: S releases its table lock, then decrements with Release;
//! a weak locker that reads the decremented value with Acquire sees
//! everything S did while holding the lock, as it would through the table.
//!
//! Virtual-xid locks live here too (LAZY-VXID): a transaction's Exclusive
//! lock on its own vxid is only the `vxid` field below until a waiter needs
//! to see it in the table.

use std::collections::HashSet;

use super::{HeldLock, LockManager};
use crate::mode::LockMode;
use crate::sync::atomic::{AtomicU32, Ordering::Acquire, Ordering::Relaxed, Ordering::Release};
use crate::tag::{LockTag, STRONG_COUNTERS};

/// Fast-path relation slots per session (PostgreSQL's FP_LOCK_SLOTS_PER_BACKEND
/// before 18).
pub(crate) const FP_SLOTS: usize = 16;

/// The three weak modes have indices 0..3 (`LockMode as usize`).
const WEAK_MODES: [LockMode; 3] = [LockMode::AccessShare, LockMode::RowShare, LockMode::RowExclusive];

/// One session's fast-path state. Written by the owner and by strong lockers
/// (transfer) and vxid waiters (materialisation), always under the owner's
/// `fp` mutex.
#[derive(Debug, Default)]
pub(crate) struct FastPath {
    /// Relation oid of each used slot (PostgreSQL's fpRelId).
    oids: [u32; FP_SLOTS],
    /// Hold counts per weak mode per slot. A slot is used iff some count is
    /// non-zero; the non-zero counts form the slot's 3-bit mode mask
    /// (PostgreSQL's fpLockBits; the counts replace its backend-local
    /// LOCALLOCK re-entrancy counts).
    counts: [[u32; 3]; FP_SLOTS],
    /// The running transaction's vxid counter, if one was begun
    /// (fpLocalTransactionId).
    pub(crate) vxid: Option<u64>,
    /// Whether a waiter materialised the vxid lock in the shared table
    /// (the negation of fpVXIDLock): the owner must then release it there.
    pub(crate) vxid_in_table: bool,
    /// Tags whose table entry may list this session as a holder: everything
    /// it requested through the table, was transferred or had materialised
    /// since its last `release_all`. An overestimate is harmless; an omission
    /// would leak a lock at transaction end.
    pub(crate) table_tags: HashSet<LockTag>,
    /// Tags on which this session holds, or is requesting, a session-level
    /// lock (SESSION-HOLDS). Exact once no request is in flight: a tag
    /// leaves when its last session-level hold is released, or when the
    /// request that added it fails. `release_all` does not touch it.
    pub(crate) session_tags: HashSet<LockTag>,
    /// Waits this session has begun (queued requests), ever: a diagnostic
    /// count, so that a test can tell that a request waited even when the
    /// wait ended before anyone looked at the queue.
    pub(crate) waits_begun: u64,
}

impl FastPath {
    fn slot_of(&self, oid: u32) -> Option<usize> {
        (0..FP_SLOTS).find(|&i| self.oids[i] == oid && self.in_use(i))
    }

    fn in_use(&self, i: usize) -> bool {
        self.counts[i].iter().any(|&c| c != 0)
    }

    /// Records one more weak hold; false if all slots are taken by other
    /// relations.
    fn record(&mut self, oid: u32, mode: LockMode) -> bool {
        let slot = self.slot_of(oid).or_else(|| (0..FP_SLOTS).find(|&i| !self.in_use(i)));
        let Some(i) = slot else { return false };
        self.oids[i] = oid;
        self.counts[i][mode as usize] += 1;
        true
    }

    /// Drops one weak hold; false if the slot does not have it (it was
    /// transferred, or taken through the table).
    fn forget(&mut self, oid: u32, mode: LockMode) -> bool {
        match self.slot_of(oid) {
            Some(i) if self.counts[i][mode as usize] != 0 => {
                self.counts[i][mode as usize] -= 1;
                true
            }
            _ => false,
        }
    }

    /// Empties the slot for `oid`, returning its counts per weak mode.
    fn take(&mut self, oid: u32) -> Option<[u32; 3]> {
        let i = self.slot_of(oid)?;
        Some(std::mem::take(&mut self.counts[i]))
    }

    /// The slots as `HeldLock`s (diagnostics).
    pub(crate) fn fast_path_locks(&self) -> Vec<HeldLock> {
        let mut held = Vec::new();
        for i in (0..FP_SLOTS).filter(|&i| self.in_use(i)) {
            for mode in WEAK_MODES {
                let count = self.counts[i][mode as usize];
                if count != 0 {
                    held.push(HeldLock {
                        tag: LockTag::Relation(self.oids[i]),
                        mode,
                        count,
                        fast_path: true,
                    });
                }
            }
        }
        held
    }

    pub(crate) fn clear_slots(&mut self) {
        self.counts = Default::default();
    }

    #[cfg(test)]
    pub(crate) fn holds(&self, oid: u32) -> bool {
        self.slot_of(oid).is_some()
    }
}

/// PostgreSQL's FastPathStrongRelationLocks: per hash partition of relation
/// tags, the number of strong relation locks held or being acquired.
#[derive(Debug)]
pub(crate) struct StrongCounters(Box<[AtomicU32]>);

impl StrongCounters {
    pub(crate) fn new() -> Self {
        Self((0..STRONG_COUNTERS).map(|_| AtomicU32::new(0)).collect())
    }

    #[cfg(all(test, loom))]
    pub(crate) fn total(&self) -> u32 {
        // Relaxed: tests read this after joining every thread that wrote it.
        self.0.iter().map(|c| c.load(Relaxed)).sum()
    }
}

impl LockManager {
    /// Tries to take a weak relation lock through the fast path. False means
    /// "use the shared table": a strong lock is held or being acquired on the
    /// counter's partition, or the slots are full. On false the tag is
    /// already listed in `table_tags`.
    pub(crate) fn fast_path_acquire(&self, session: u32, oid: u32, mode: LockMode, counter: usize) -> bool {
        let mut fp = self.fp(session).lock();
        // Acquire (STRONG-COUNTER): pairs with the Release decrement in
        // `end_strong`, so a zero read happens after the last strong holder
        // released. The increment of a strong locker whose transfer already
        // visited us needs no ordering here: it reaches this load through our
        // fp mutex, which the transfer held (FASTPATH-TRANSFER).
        if self.strong.0[counter].load(Acquire) == 0 && fp.record(oid, mode) {
            return true;
        }
        fp.table_tags.insert(LockTag::Relation(oid));
        false
    }

    /// Drops a weak hold from the fast path; false if it is not there (it was
    /// transferred, or taken through the table), so the caller releases it in
    /// the table. The own mutex makes this exclusive with a transfer.
    pub(crate) fn fast_path_release(&self, session: u32, oid: u32, mode: LockMode) -> bool {
        self.fp(session).lock().forget(oid, mode)
    }

    /// Announces a strong lock on `tag`'s counter partition, then moves every
    /// session's fast-path entries for the relation into the table
    /// (FASTPATH-TRANSFER). Must precede the table request; `end_strong`
    /// undoes the announcement once the lock is released or not obtained.
    pub(crate) fn begin_strong(&self, oid: u32, counter: usize) {
        // Relaxed (STRONG-COUNTER): ordered before each weak locker's counter
        // load by our unlock of its fp mutex below, which its next lock of that
        // mutex acquires; no other access depends on this one's ordering.
        // A single RMW, so loom sees every interleaving with the loads.
        self.strong.0[counter].fetch_add(1, Relaxed);
        let tag = LockTag::Relation(oid);
        for (session, fp) in self.sessions.iter().enumerate() {
            let mut fp = fp.lock();
            let Some(counts) = fp.take(oid) else { continue };
            let session = session as u32;
            // Lock order: a session's fp mutex, then a partition (rule 1).
            let mut part = self.table.partition(tag).lock();
            let entry = part.entry(tag);
            for mode in WEAK_MODES {
                assert!(
                    counts[mode as usize] == 0
                        || entry.granted_to_others(session) & mode.conflict_mask() == 0,
                    "FASTPATH-TRANSFER: fast-path {mode} on {tag} held by session {session} \
                     while a conflicting lock is granted"
                );
                entry.grant(session, mode, counts[mode as usize]);
            }
            drop(part);
            fp.table_tags.insert(tag);
        }
    }

    /// Withdraws `n` strong-lock announcements on `counter`, after the table
    /// locks they announced were released (or never granted).
    pub(crate) fn end_strong(&self, counter: usize, n: u32) {
        if n == 0 {
            return;
        }
        // Release (STRONG-COUNTER): pairs with the Acquire load in
        // `fast_path_acquire`; our table release, sequenced before this, is
        // visible to a weak locker that reads the result.
        let old = self.strong.0[counter].fetch_sub(n, Release);
        assert!(old >= n, "STRONG-COUNTER: counter {counter} underflow ({old} - {n})");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_count_reentrant_holds_and_fill_up() {
        let mut fp = FastPath::default();
        assert!(fp.record(7, LockMode::AccessShare));
        assert!(fp.record(7, LockMode::AccessShare));
        assert!(fp.forget(7, LockMode::AccessShare));
        assert!(fp.holds(7));
        assert!(!fp.forget(7, LockMode::RowExclusive));
        assert!(fp.forget(7, LockMode::AccessShare));
        assert!(!fp.holds(7));
        for oid in 0..FP_SLOTS as u32 {
            assert!(fp.record(100 + oid, LockMode::RowShare));
        }
        assert!(!fp.record(1, LockMode::RowShare), "all slots taken");
        assert!(fp.record(100, LockMode::RowExclusive), "a used slot takes another mode");
        assert_eq!(fp.take(100), Some([0, 1, 1]));
        assert!(fp.record(1, LockMode::RowShare), "a taken slot is free again");
    }
}
