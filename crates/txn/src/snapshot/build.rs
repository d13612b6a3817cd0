//! The snapshot loops, one per historical layout.
//!
//! All run under the shared proc-array lock, read `latest_completed` inside it
//! (xmax = latest completed + 1), and read each shared xid exactly once. They
//! differ in what they touch per session, which is the point of comparing them:
//!
//! * `legacy` (`pgproc`, `pgxact`): per member, the vacuum flags, the xmin (to
//!   fold into the global xmin that pre-14 snapshots computed) and the xid, all
//!   in one struct per session; then the builder writes its own xmin into that
//!   same kind of struct.
//! * `dense` (PostgreSQL 14): per member, one 8-byte xid from a dense array;
//!   flags and subxid state only for members that have an xid; no horizon work.
//! * `known-assigned` (a standby, PostgreSQL 9.0–17 in recovery): no member
//!   has an xid; the running xids are the primary's, replay keeps them in
//!   KnownAssignedXids, and the loop copies every valid entry below xmax.

use super::Snapshot;
use crate::procarray::{Layout, Members, ProcArray, FLAG_IN_VACUUM};
use crate::sync::atomic::{AtomicU16, AtomicU64, AtomicU8, Ordering::Relaxed};
use crate::xid::Xid;

/// The builder's own identity: its slot and its own xid (never listed).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Builder {
    pub(crate) slot: u32,
    pub(crate) xid: Xid,
}

/// What a legacy layout exposes to the legacy loop, per member slot.
/// Monomorphised per layout, so each loop is as tight as PostgreSQL's was.
trait LegacyFields {
    fn flags(&self, slot: u32) -> &AtomicU8;
    fn xmin(&self, slot: u32) -> &AtomicU64;
    fn xid(&self, slot: u32) -> &AtomicU64;
    fn subxid_state(&self, slot: u32) -> &AtomicU16;
}

/// `pgproc`: everything in the session's PGPROC.
struct PgProcFields<'a>(&'a ProcArray);

impl LegacyFields for PgProcFields<'_> {
    #[inline(always)]
    fn flags(&self, slot: u32) -> &AtomicU8 {
        &self.0.procs[slot as usize].legacy.flags
    }
    #[inline(always)]
    fn xmin(&self, slot: u32) -> &AtomicU64 {
        &self.0.procs[slot as usize].legacy.xmin
    }
    #[inline(always)]
    fn xid(&self, slot: u32) -> &AtomicU64 {
        &self.0.procs[slot as usize].legacy.xid
    }
    #[inline(always)]
    fn subxid_state(&self, slot: u32) -> &AtomicU16 {
        &self.0.procs[slot as usize].legacy_subxid_state
    }
}

/// `pgxact`: the PGXACT array indexed by slot.
struct PgXactFields<'a>(&'a [crate::procarray::PgXact]);

impl LegacyFields for PgXactFields<'_> {
    #[inline(always)]
    fn flags(&self, slot: u32) -> &AtomicU8 {
        &self.0[slot as usize].flags
    }
    #[inline(always)]
    fn xmin(&self, slot: u32) -> &AtomicU64 {
        &self.0[slot as usize].xmin
    }
    #[inline(always)]
    fn xid(&self, slot: u32) -> &AtomicU64 {
        &self.0[slot as usize].xid
    }
    #[inline(always)]
    fn subxid_state(&self, slot: u32) -> &AtomicU16 {
        &self.0[slot as usize].subxid_state
    }
}

/// What a build produced besides the snapshot.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BuildInfo {
    /// Legacy modes: the global xmin computed in the loop (RecentGlobalXmin).
    pub(crate) global_xmin: Option<Xid>,
}

impl ProcArray {
    /// Builds a snapshot into `out` for `me`, under `members` (the shared
    /// lock), and advertises `me`'s xmin if it has none (SNAPSHOT-XMIN).
    /// `include_self` lists the builder's own xid too (for the shared cache).
    pub(crate) fn build(
        &self,
        members: &Members,
        me: Builder,
        include_self: bool,
        out: &mut Snapshot,
    ) -> BuildInfo {
        out.clear();
        out.xids_mut().completion_count = members.completion_count;
        let global_xmin = match &self.layout {
            Layout::PgProc => Some(self.build_legacy(&PgProcFields(self), members, me, out)),
            Layout::PgXact(x) => Some(self.build_legacy(&PgXactFields(x), members, me, out)),
            Layout::Dense(_) => {
                self.build_dense(members, me, include_self, out);
                None
            }
        };
        self.advertise_xmin(me.slot, out.xmin);
        BuildInfo { global_xmin }
    }

    /// Sets `slot`'s advertised xmin to `xmin` if it has none. Called with the
    /// proc-array lock held shared, so that no transaction can leave the
    /// running set between computing `xmin` and advertising it (SNAPSHOT-XMIN).
    pub(crate) fn advertise_xmin(&self, slot: u32, xmin: Xid) {
        let cell = self.xmin_cell(slot);
        // Relaxed: only the owner writes its xmin. Horizon computations read
        // it under the shared lock too, so there is no happens-before between
        // this store and them; they are safe anyway because they fold in
        // the same running xids we derived `xmin` from (HORIZON-SAFETY).
        if cell.load(Relaxed) == 0 {
            cell.store(xmin.0, Relaxed);
        }
    }

    /// Standby, `known-assigned` mode: copies every valid KnownAssignedXids
    /// entry below xmax = `latest_completed + 1` into `xip` (sorted; `subxip`
    /// stays empty), xmin = the first of them (or xmax), suboverflowed if
    /// some subxid at or above xmin left the array because its tree
    /// overflowed (PostgreSQL's lastOverflowedXid). Advertises `me`'s xmin
    /// if it has none (SNAPSHOT-XMIN). O(entries): PostgreSQL's
    /// KnownAssignedXidsGetAndSetXmin. The caller holds `members` shared
    /// (KA-CONSISTENCY).
    pub(crate) fn build_known_assigned(&self, members: &Members, me: Builder, out: &mut Snapshot) {
        out.clear();
        let ka = members.ka.as_ref().expect("a known-assigned engine has KnownAssignedXids");
        let xmax = members.latest_completed.next();
        let list = out.xids_mut();
        list.completion_count = members.completion_count;
        list.sorted = true;
        ka.copy_below(xmax, &mut list.xip);
        let xmin = list.xip.first().copied().unwrap_or(xmax);
        list.suboverflowed = ka.last_overflowed() >= xmin;
        out.xmin = xmin;
        out.xmax = xmax;
        self.advertise_xmin(me.slot, xmin);
    }

    fn build_legacy<F: LegacyFields>(
        &self,
        fields: &F,
        members: &Members,
        me: Builder,
        out: &mut Snapshot,
    ) -> Xid {
        let xmax = members.latest_completed.next();
        let mut xmin = xmax;
        let mut global_xmin = xmax;
        for &slot in &members.slots {
            // Relaxed loads below: the shared lock orders every store that
            // matters for xids < xmax (XID-PUBLISH, SNAPSHOT-CONSISTENCY);
            // each value is loaded once and used as loaded.
            if fields.flags(slot).load(Relaxed) & FLAG_IN_VACUUM != 0 {
                continue;
            }
            let their_xmin = Xid(fields.xmin(slot).load(Relaxed));
            if their_xmin.is_normal() && their_xmin < global_xmin {
                global_xmin = their_xmin;
            }
            let xid = Xid(fields.xid(slot).load(Relaxed));
            if !xid.is_normal() || xid >= xmax {
                continue;
            }
            if xid < xmin {
                xmin = xid;
            }
            if slot == me.slot {
                continue;
            }
            let list = out.xids_mut();
            list.xip.push(xid);
            if !list.suboverflowed && !self.copy_subxids(slot, fields.subxid_state(slot), &mut list.subxip) {
                list.suboverflowed = true;
            }
        }
        // The builder's own xid was folded into xmin in the loop (it counts
        // for xmin but is not listed).
        out.xmin = xmin;
        out.xmax = xmax;
        global_xmin.min(xmin)
    }

    fn build_dense(&self, members: &Members, me: Builder, include_self: bool, out: &mut Snapshot) {
        let Layout::Dense(dense) = &self.layout else { unreachable!() };
        let xmax = members.latest_completed.next();
        let mut xmin = xmax;
        // Our own xid counts for xmin but is never listed; an own xid at or
        // above xmax is "running" by the xmax rule already.
        if me.xid.is_normal() && me.xid < xmin {
            xmin = me.xid;
        }
        let my_pos = if include_self { usize::MAX } else { self.pos(me.slot) };
        let n = members.slots.len();
        for (pos, cell) in dense.xids[..n].iter().enumerate() {
            // Relaxed: see build_legacy; loaded exactly once.
            let xid = Xid(cell.load(Relaxed));
            if !xid.is_valid() || xid >= xmax || pos == my_pos {
                continue;
            }
            // Relaxed: flags change under the shared lock only for the owner's
            // own entry; a vacuum flag set concurrently belongs to a session
            // that stamps no row versions, so either answer is safe.
            if dense.flags[pos].load(Relaxed) & FLAG_IN_VACUUM != 0 {
                continue;
            }
            if xid < xmin {
                xmin = xid;
            }
            let list = out.xids_mut();
            list.xip.push(xid);
            if !list.suboverflowed {
                let slot = members.slots[pos];
                if !self.copy_subxids(slot, &dense.subxid_states[pos], &mut list.subxip) {
                    list.suboverflowed = true;
                }
            }
        }
        out.xmin = xmin;
        out.xmax = xmax;
    }
}
