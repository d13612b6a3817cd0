//! The proc array: which sessions exist, and the running xids they advertise.
//!
//! A session holds one slot ([`Proc`]) for its whole life. The proc-array lock
//! (PostgreSQL's ProcArrayLock) guards the member list, `latest_completed` and
//! the completion counter; snapshot builders and horizon computations take it
//! shared, and every event that removes a running xid takes it exclusive
//! (SNAPSHOT-CONSISTENCY in the crate README). The xid generator lock
//! (XidGenLock) guards `next_xid` and pins every slot's position, because an
//! xid is published into the slot while holding only that lock (XID-PUBLISH).
//!
//! Lock order: proc-array lock, then xid generator lock.

mod known_assigned;
mod slot;

pub(crate) use known_assigned::KnownAssignedXids;
pub(crate) use slot::{Advert, PgXact, Proc, SubxidState};
pub use slot::{FLAG_IN_VACUUM, SUBXID_CACHE};

use crate::sync::atomic::{AtomicU16, AtomicU64, AtomicU8, Ordering::*};
use crate::sync::{Mutex, RwLock, RwLockWriteGuard};
use crate::xid::Xid;
use crate::SnapshotMode;

/// Data guarded by the proc-array lock.
#[derive(Debug)]
pub(crate) struct Members {
    /// Slot numbers of attached sessions. Sorted by slot number in the
    /// `pgxact` and dense layouts (locality when visiting slots in order);
    /// append-and-swap-remove in the `pgproc` layout, as before 9.2.
    pub(crate) slots: Vec<u32>,
    /// The newest xid that has committed or aborted. Never decreases.
    pub(crate) latest_completed: Xid,
    /// Bumped at every event that can change a snapshot's meaning: the end of
    /// an xid-bearing transaction, a subtransaction abort with xids
    /// (SNAPSHOT-REUSE). Starts at 1 so 0 can mean "never reusable".
    pub(crate) completion_count: u64,
    /// `known-assigned` mode (standby): the primary's xids replay knows as
    /// running. Entries are removed, and the array compressed or grown,
    /// only under the exclusive lock; replay appends under the shared lock
    /// (KA-APPEND).
    pub(crate) ka: Option<KnownAssignedXids>,
}

/// The dense arrays of the `dense` layout, indexed by position in
/// `Members::slots` (a slot's `pgxactoff`). Separate allocations, so the xid
/// array a snapshot scans shares no cache line with anything written often.
pub(crate) struct DenseArrays {
    pub(crate) xids: Box<[AtomicU64]>,
    pub(crate) subxid_states: Box<[AtomicU16]>,
    pub(crate) flags: Box<[AtomicU8]>,
}

/// Where the per-slot hot fields live.
pub(crate) enum Layout {
    PgProc,
    PgXact(Box<[PgXact]>),
    Dense(DenseArrays),
}

/// See the module documentation.
pub(crate) struct ProcArray {
    pub(crate) lock: RwLock<Members>,
    /// The xid generator: the next xid to hand out.
    pub(crate) next_xid: Mutex<Xid>,
    pub(crate) procs: Box<[Proc]>,
    pub(crate) layout: Layout,
    free_slots: Mutex<Vec<u32>>,
}

fn atomics<A>(n: usize, f: impl Fn() -> A) -> Box<[A]> {
    (0..n).map(|_| f()).collect()
}

impl ProcArray {
    /// A proc array whose first xid is `first_xid` (`latest_completed` is
    /// the one before it).
    pub(crate) fn new(max_sessions: usize, mode: SnapshotMode, first_xid: Xid) -> Self {
        let layout = match mode {
            SnapshotMode::PgProc => Layout::PgProc,
            SnapshotMode::PgXact => Layout::PgXact(atomics(max_sessions, PgXact::default)),
            SnapshotMode::Dense
            | SnapshotMode::DenseCached
            | SnapshotMode::SharedCached
            | SnapshotMode::Csn
            | SnapshotMode::KnownAssigned => Layout::Dense(DenseArrays {
                xids: atomics(max_sessions, || AtomicU64::new(0)),
                subxid_states: atomics(max_sessions, || AtomicU16::new(0)),
                flags: atomics(max_sessions, || AtomicU8::new(0)),
            }),
        };
        Self {
            lock: RwLock::new(Members {
                slots: Vec::with_capacity(max_sessions),
                latest_completed: Xid(first_xid.0 - 1),
                completion_count: 1,
                ka: (mode == SnapshotMode::KnownAssigned).then(|| KnownAssignedXids::new(max_sessions)),
            }),
            next_xid: Mutex::new(first_xid),
            procs: atomics(max_sessions, Proc::new),
            layout,
            free_slots: Mutex::new((0..max_sessions as u32).rev().collect()),
        }
    }

    pub(crate) fn capacity(&self) -> usize {
        self.procs.len()
    }

    /// The cell holding `slot`'s top-level xid. `pos` is the slot's position
    /// (`pgxactoff`); the caller holds a lock that pins it.
    pub(crate) fn xid_cell(&self, slot: u32, pos: usize) -> &AtomicU64 {
        match &self.layout {
            Layout::PgProc => &self.procs[slot as usize].legacy.xid,
            Layout::PgXact(x) => &x[slot as usize].xid,
            Layout::Dense(d) => &d.xids[pos],
        }
    }

    /// The cell holding `slot`'s advertised xmin.
    pub(crate) fn xmin_cell(&self, slot: u32) -> &AtomicU64 {
        match &self.layout {
            Layout::PgProc => &self.procs[slot as usize].legacy.xmin,
            Layout::PgXact(x) => &x[slot as usize].xmin,
            Layout::Dense(_) => &self.procs[slot as usize].advert.xmin,
        }
    }

    /// `slot`'s advertised snapshot bounds (dense and `csn` layouts).
    pub(crate) fn advert(&self, slot: u32) -> &Advert {
        &self.procs[slot as usize].advert
    }

    /// The cell holding `slot`'s status flags.
    pub(crate) fn flags_cell(&self, slot: u32, pos: usize) -> &AtomicU8 {
        match &self.layout {
            Layout::PgProc => &self.procs[slot as usize].legacy.flags,
            Layout::PgXact(x) => &x[slot as usize].flags,
            Layout::Dense(d) => &d.flags[pos],
        }
    }

    /// The cell holding `slot`'s subxid cache state.
    pub(crate) fn subxid_state_cell(&self, slot: u32, pos: usize) -> &AtomicU16 {
        match &self.layout {
            Layout::PgProc => &self.procs[slot as usize].legacy_subxid_state,
            Layout::PgXact(x) => &x[slot as usize].subxid_state,
            Layout::Dense(d) => &d.subxid_states[pos],
        }
    }

    /// `slot`'s position in the member list. Stable while the caller holds
    /// the proc-array lock (either mode) or the xid generator lock.
    pub(crate) fn pos(&self, slot: u32) -> usize {
        // Relaxed: pgxactoff is written only under both locks; the caller
        // holds one of them, whose acquire ordered this load after the write.
        self.procs[slot as usize].pgxactoff.load(Relaxed) as usize
    }

    /// Copies the subxids cached by `slot` into `out`, reading the state from
    /// `state_cell`. Returns false if the cache overflowed (nothing copied).
    pub(crate) fn copy_subxids(&self, slot: u32, state_cell: &AtomicU16, out: &mut Vec<Xid>) -> bool {
        // Acquire (SUBXID-PUBLISH): pairs with the Release store of the state
        // in `publish_subxid`; every entry below `count` is written before we
        // read it.
        let state = SubxidState::unpack(state_cell.load(Acquire));
        if state.overflowed {
            return false;
        }
        let cache = &self.procs[slot as usize].subxids;
        for entry in &cache[..state.count as usize] {
            // Relaxed: ordered after the entry's store by the Acquire above.
            out.push(Xid(entry.load(Relaxed)));
        }
        true
    }

    /// Attaches a session: takes a free slot and adds it to the member list.
    /// `None` when all `max_sessions` slots are taken.
    pub(crate) fn attach(&self) -> Option<u32> {
        let slot = self.free_slots.lock().pop()?;
        let mut members = self.lock.write();
        let _gen = self.next_xid.lock();
        let pos = match self.layout {
            Layout::PgProc => members.slots.len(),
            _ => members.slots.partition_point(|&s| s < slot),
        };
        members.slots.insert(pos, slot);
        if let Layout::Dense(d) = &self.layout {
            // Shift the tail one place right. Relaxed throughout: builders
            // (shared proc-array lock) and xid publishers (generator lock)
            // are both excluded, and their next acquire orders these stores.
            for i in (pos + 1..members.slots.len()).rev() {
                d.xids[i].store(d.xids[i - 1].load(Relaxed), Relaxed);
                d.subxid_states[i].store(d.subxid_states[i - 1].load(Relaxed), Relaxed);
                d.flags[i].store(d.flags[i - 1].load(Relaxed), Relaxed);
            }
            d.xids[pos].store(0, Relaxed);
            d.subxid_states[pos].store(0, Relaxed);
            d.flags[pos].store(0, Relaxed);
        }
        self.renumber(&members, pos);
        Some(slot)
    }

    /// Detaches a session that has no running xid and frees its slot.
    pub(crate) fn detach(&self, slot: u32) {
        {
            let mut members = self.lock.write();
            let _gen = self.next_xid.lock();
            let pos = self.pos(slot);
            debug_assert_eq!(members.slots[pos], slot);
            // Relaxed: only the owner (this thread) writes its xid cell.
            assert_eq!(self.xid_cell(slot, pos).load(Relaxed), 0, "a session detached with a running xid");
            // Relaxed: the slot is out of the array from here on; the next
            // owner attaches under the same locks.
            self.xmin_cell(slot).store(0, Relaxed);
            self.flags_cell(slot, pos).store(0, Relaxed);
            match &self.layout {
                Layout::PgProc => {
                    members.slots.swap_remove(pos);
                }
                Layout::PgXact(_) => {
                    members.slots.remove(pos);
                }
                Layout::Dense(d) => {
                    // Shift the tail one place left (Relaxed: as in `attach`).
                    for i in pos..members.slots.len() - 1 {
                        d.xids[i].store(d.xids[i + 1].load(Relaxed), Relaxed);
                        d.subxid_states[i].store(d.subxid_states[i + 1].load(Relaxed), Relaxed);
                        d.flags[i].store(d.flags[i + 1].load(Relaxed), Relaxed);
                    }
                    members.slots.remove(pos);
                }
            }
            self.renumber(&members, pos);
            // Relaxed: written under both locks, like every pgxactoff store.
            self.procs[slot as usize].pgxactoff.store(u32::MAX, Relaxed);
        }
        self.free_slots.lock().push(slot);
    }

    fn renumber(&self, members: &Members, from: usize) {
        for (i, &s) in members.slots.iter().enumerate().skip(from) {
            // Relaxed: written under both locks, read under either (see `pos`).
            self.procs[s as usize].pgxactoff.store(i as u32, Relaxed);
        }
    }

    /// Publishes `xid` as `slot`'s top-level xid. The caller holds the xid
    /// generator lock and releases it only after this returns (XID-PUBLISH).
    pub(crate) fn publish_top_xid(&self, slot: u32, xid: Xid) {
        let pos = self.pos(slot);
        // Relaxed (XID-PUBLISH): the generator-lock release that follows, the
        // next assigner's acquire of it, that assigner's exclusive proc-array
        // release at its commit, and a builder's shared acquire form the chain
        // that makes this store visible to any snapshot whose xmax exceeds it.
        self.xid_cell(slot, pos).store(xid.0, Relaxed);
    }

    /// Publishes subxid `xid` of `slot`, which currently caches `state`.
    /// Returns the new state. The caller holds the xid generator lock.
    pub(crate) fn publish_subxid(&self, slot: u32, state: SubxidState, xid: Xid) -> SubxidState {
        let pos = self.pos(slot);
        let new = if state.overflowed || state.count as usize >= SUBXID_CACHE {
            SubxidState { count: state.count, overflowed: true }
        } else {
            // Relaxed: published by the Release store of the count below.
            self.procs[slot as usize].subxids[state.count as usize].store(xid.0, Relaxed);
            SubxidState { count: state.count + 1, overflowed: false }
        };
        // Release (SUBXID-PUBLISH): pairs with the Acquire load in
        // `copy_subxids` and `is_in_progress`; the entry is written before
        // any reader can see the count that covers it.
        self.subxid_state_cell(slot, pos).store(new.pack(), Release);
        new
    }

    /// Ends an xid-bearing transaction (commit or abort): clears `slot`'s xid,
    /// subxids and xmin, advances `latest_completed` to `latest_xid` and bumps
    /// the completion counter, all under the exclusive lock
    /// (SNAPSHOT-CONSISTENCY, SNAPSHOT-REUSE).
    pub(crate) fn end_xid_transaction(&self, slot: u32, latest_xid: Xid) {
        let mut members = self.lock.write();
        let pos = self.pos(slot);
        // Relaxed: readers of these cells hold the lock shared (or they are
        // horizon readers for xmin, which tolerate staleness); our exclusive
        // release orders the stores before their next acquire.
        self.xid_cell(slot, pos).store(0, Relaxed);
        self.xmin_cell(slot).store(0, Relaxed);
        let flags = self.flags_cell(slot, pos);
        if flags.load(Relaxed) & FLAG_IN_VACUUM != 0 {
            flags.store(0, Relaxed);
        }
        let state = self.subxid_state_cell(slot, pos);
        if state.load(Relaxed) != 0 {
            // Release: pairs with the Acquire in `copy_subxids` (the lock
            // already orders it; kept Release so the protocol reads uniformly).
            state.store(0, Release);
        }
        Self::complete(&mut members, latest_xid);
    }

    /// Removes aborted subxids from `slot`'s cache (PostgreSQL's
    /// XidCacheRemoveRunningXids) and counts the abort as a completion.
    pub(crate) fn end_subxids(
        &self,
        slot: u32,
        state: SubxidState,
        xids: &[Xid],
        latest_xid: Xid,
    ) -> SubxidState {
        let mut members = self.lock.write();
        let pos = self.pos(slot);
        let cache = &self.procs[slot as usize].subxids;
        let mut new = state;
        for &xid in xids {
            let n = new.count as usize;
            // Relaxed: exclusive lock held; no builder reads concurrently and
            // the owner (this thread) is the only writer.
            if let Some(i) = (0..n).rev().find(|&i| cache[i].load(Relaxed) == xid.0) {
                cache[i].store(cache[n - 1].load(Relaxed), Relaxed);
                new.count -= 1;
            } else {
                // Not cached: the cache overflowed before this subxid got in.
                debug_assert!(new.overflowed, "subxid {xid:?} missing from a cache that never overflowed");
            }
        }
        // Release: see `end_xid_transaction`.
        self.subxid_state_cell(slot, pos).store(new.pack(), Release);
        Self::complete(&mut members, latest_xid);
        new
    }

    pub(crate) fn complete(members: &mut RwLockWriteGuard<'_, Members>, latest_xid: Xid) {
        if latest_xid > members.latest_completed {
            members.latest_completed = latest_xid;
        }
        members.completion_count += 1;
    }

    /// Clears the xmin of a transaction that ends without an xid. No lock: it
    /// only makes horizons more permissive, and a horizon computation that
    /// still sees the old value is merely conservative (XMIN-CLEAR).
    pub(crate) fn clear_xmin(&self, slot: u32) {
        // Relaxed: see above; no reader derives anything but a lower bound.
        self.xmin_cell(slot).store(0, Relaxed);
    }
}
