//! Visibility decisions.
//!
//! Two kinds of question, answered in a fixed order (VISIBILITY-ORDER):
//!
//! * MVCC ("what does this snapshot see?"): ask the snapshot first. If the
//!   xid was running for the snapshot, the answer is "not yet" and the commit
//!   log is not consulted. Otherwise the xid had left the proc array before
//!   the snapshot was built, so its commit-log status is final.
//! * Instantaneous ("is it running now?"): ask the proc array first
//!   ([`Session::is_in_progress`]), then the commit log. Commit writes the
//!   log before leaving the proc array, so "not running" means the log is
//!   final. Asking the log first could see "not committed", then the
//!   transaction commits and leaves, and the proc array says "not running":
//!   a committed transaction judged aborted. An xid below the logs'
//!   truncation floor is not running, whatever its (possibly recycled) log
//!   pages say, however old the session's last snapshot (XIDMAP-FLOOR).
//!
//! Hint bits ([`Hints`]) cache final commit-log answers on a row version.
//! They never change an answer: a committed hint says "committed now", not
//! "committed before my snapshot", so the snapshot is still asked.

use crate::clog::{StatusTruncated, XidStatus};
use crate::engine::Engine;
use crate::procarray::KnownAssignedXids;
use crate::session::Session;
use crate::snapshot::{Shape, Snapshot};
use crate::sync::atomic::{AtomicU8, Ordering::Relaxed};
use crate::xid::{CommandId, Xid};

impl Engine {
    /// Was `xid` running as far as `snapshot` is concerned?
    /// Never consults the commit log.
    pub fn xid_in_snapshot(&self, xid: Xid, snapshot: &Snapshot) -> bool {
        // Both shapes share the bounds, and most versions a scan meets fall
        // outside them: decided before the shape is looked at. A subxid
        // below xmin has a parent below xmin; a subxid at or above xmax
        // belongs to a tree that had not committed: both bounds hold for
        // subxids too.
        if xid < snapshot.xmin {
            return false;
        }
        if xid >= snapshot.xmax {
            return true;
        }
        let list = match &snapshot.shape {
            Shape::Csn { csn: at, memo } => {
                let csn = self.csn.as_ref().expect("a CSN snapshot comes from a csn-mode engine");
                return csn.xid_in_snapshot(xid, (snapshot.xmin, snapshot.xmax, *at), memo.as_ref());
            }
            Shape::Xids(list) => list,
        };
        let top = if list.suboverflowed {
            // The subxid list is incomplete: map to the top-level xid and
            // search the top-level list only.
            let top = self.subtrans.topmost(xid, snapshot.xmin);
            if top < snapshot.xmin {
                return false;
            }
            top
        } else {
            if list.subxip.contains(&xid) {
                return true;
            }
            xid
        };
        if list.sorted {
            list.xip.binary_search(&top).is_ok()
        } else {
            list.xip.contains(&top)
        }
    }
}

/// What an instantaneous check found.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum XidState {
    /// One of the asking session's own live xids.
    Current,
    /// Running in another session.
    InProgress,
    /// Committed.
    Committed,
    /// Aborted, or never finished (decided by elimination).
    Aborted,
}

impl Session {
    /// Is `xid` running right now? (PostgreSQL's TransactionIdIsInProgress.)
    /// The asking session's own live xids count as running.
    pub fn is_in_progress(&self, xid: Xid) -> bool {
        if !xid.is_normal() || xid < self.recent_xmin {
            return false;
        }
        if self.is_current_xid(xid) {
            return true;
        }
        let engine = &self.engine;
        // XIDMAP-FLOOR: `recent_xmin` is as old as our last snapshot (a
        // session that only writes takes none), and the logs may since have
        // recycled the pages of xids above it. Below the floor every xid has
        // finished, whatever a recycled page would say.
        if xid < engine.finished_floor() {
            return false;
        }
        if let Some(csn) = &engine.csn {
            // The CSN log is the running set: a final entry means finished,
            // and so does an entry truncated since we read the floor.
            return csn.is_running(xid);
        }
        let pa = &engine.procarray;
        let mut overflowed_tops = Vec::new();
        {
            let members = pa.lock.read();
            if xid > members.latest_completed {
                // Could not have completed: no xid above latest_completed has.
                return true;
            }
            if let Some(ka) = &members.ka {
                // A standby's sessions hold no xids: the running set is
                // KnownAssignedXids.
                return self.known_assigned_in_progress(ka, xid);
            }
            let mut subxids = Vec::new();
            for (pos, &slot) in members.slots.iter().enumerate() {
                if slot == self.slot {
                    continue;
                }
                // Relaxed: ordered by the lock chain (XID-PUBLISH); once.
                let top = Xid(pa.xid_cell(slot, pos).load(Relaxed));
                if !top.is_valid() || top > xid {
                    // A newer top-level xid cannot be an ancestor of `xid`.
                    continue;
                }
                if top == xid {
                    return true;
                }
                subxids.clear();
                if !pa.copy_subxids(slot, pa.subxid_state_cell(slot, pos), &mut subxids) {
                    overflowed_tops.push(top);
                } else if subxids.contains(&xid) {
                    return true;
                }
            }
        }
        if overflowed_tops.is_empty() {
            return false;
        }
        // Some session overflowed its cache: `xid` may be one of its uncached
        // subxids. A sub-aborted xid is not running whatever its top does,
        // nor is one whose status was truncated since we read the floor
        // (XIDMAP-FLOOR).
        match engine.clog.stored_status(xid) {
            None | Some(XidStatus::Aborted) => return false,
            Some(_) => {}
        }
        let floor = self.recent_xmin.max(engine.subtrans.map().oldest());
        overflowed_tops.contains(&engine.subtrans.topmost(xid, floor))
    }

    /// Standby, `known-assigned` mode (PostgreSQL's TransactionIdIsInProgress
    /// in recovery), under the shared lock, for an xid at or below
    /// `latest_completed`: replay appended every such xid before the
    /// exclusive section that raised `latest_completed` past it
    /// (KA-CONSISTENCY), so one that is not a valid entry has finished,
    /// unless it is a subxid that left the array because its tree overflowed
    /// (at or below `last_overflowed`). Such a subxid runs while its top is
    /// an entry and it was not aborted on its own. "Not running" implies a
    /// final status-log entry (VISIBILITY-ORDER): replay writes the status
    /// log, for every subxid of a tree too, before the exclusive section
    /// that removes the tree's top, and we read both in one shared hold.
    fn known_assigned_in_progress(&self, ka: &KnownAssignedXids, xid: Xid) -> bool {
        if ka.contains(xid) {
            return true;
        }
        if xid > ka.last_overflowed() {
            return false;
        }
        let engine = &self.engine;
        match engine.clog.stored_status(xid) {
            Some(XidStatus::InProgress | XidStatus::SubCommitted) => {}
            // Final, or truncated since we read the floor (XIDMAP-FLOOR).
            _ => return false,
        }
        let floor = self.recent_xmin.max(engine.subtrans.map().oldest());
        let top = engine.subtrans.topmost(xid, floor);
        top != xid && ka.contains(top)
    }

    /// The state of `xid` now, asking the proc array before the commit log
    /// (VISIBILITY-ORDER). An xid below the finished floor is answered from
    /// the status log without asking the running set (XIDMAP-FLOOR); one
    /// whose status was itself truncated and recycled panics
    /// (XIDMAP-TRUNCATE).
    pub fn xid_state(&self, xid: Xid) -> XidState {
        self.try_xid_state(xid).unwrap_or_else(|t| {
            panic!(
                "XIDMAP-TRUNCATE violated: status of {:?} asked after truncation to {:?}",
                t.0,
                self.engine.oldest_tracked_xid()
            )
        })
    }

    /// [`Session::xid_state`], answering [`StatusTruncated`] for an xid
    /// whose status was truncated and recycled: it has finished, and the
    /// row version it was read from has been frozen, cleared or marked dead
    /// since (FREEZE-TRUNCATE), so the caller reads the version again.
    pub fn try_xid_state(&self, xid: Xid) -> Result<XidState, StatusTruncated> {
        Ok(if self.is_current_xid(xid) {
            XidState::Current
        } else if self.is_in_progress(xid) {
            XidState::InProgress
        } else if self.engine.try_did_commit(xid)? {
            XidState::Committed
        } else {
            XidState::Aborted
        })
    }
}

/// The transaction fields of a row version header.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct TupleXids {
    /// The inserting xid.
    pub xmin: Xid,
    /// The deleting (or locking) xid; `Xid::INVALID` if none.
    pub xmax: Xid,
    /// The inserting command.
    pub cmin: CommandId,
    /// The deleting command.
    pub cmax: CommandId,
    /// `xmax` only locked the row (SELECT FOR UPDATE); it did not delete it.
    pub xmax_lock_only: bool,
}

/// Hint bits: final commit-log answers cached on a row version. Set with
/// Relaxed atomics by any reader; whoever installs a new `xmax` must clear
/// the xmax hints (`Hints::clear_xmax`).
#[derive(Debug, Default)]
pub struct Hints(AtomicU8);

impl Hints {
    /// The inserter committed.
    pub const XMIN_COMMITTED: u8 = 0x01;
    /// The inserter aborted.
    pub const XMIN_INVALID: u8 = 0x02;
    /// The deleter committed.
    pub const XMAX_COMMITTED: u8 = 0x04;
    /// The deleter aborted.
    pub const XMAX_INVALID: u8 = 0x08;

    /// Current bits.
    pub fn get(&self) -> u8 {
        // Relaxed: a hint is a cache of a final, immutable fact; seeing it
        // late only costs a commit-log lookup.
        self.0.load(Relaxed)
    }

    fn has(&self, bit: u8) -> bool {
        self.get() & bit != 0
    }

    fn set(&self, bit: u8) {
        // Relaxed: see `get`.
        self.0.fetch_or(bit, Relaxed);
    }

    /// Adds `bits` (a storage layer seeding a decision with the hints it
    /// keeps elsewhere, e.g. packed into its xmax word).
    pub fn set_bits(&self, bits: u8) {
        // Relaxed: see `get`.
        self.0.fetch_or(bits, Relaxed);
    }

    /// Forgets the xmax hints (a new deleter or locker was installed).
    pub fn clear_xmax(&self) {
        // Relaxed: see `get`; the caller's own lock orders the xmax change.
        self.0.fetch_and(!(Self::XMAX_COMMITTED | Self::XMAX_INVALID), Relaxed);
    }
}

/// What a statement reads with: its session (which knows its own xids), its
/// snapshot, and its command id. Storage takes one of these for every
/// visibility decision.
#[derive(Clone, Copy, Debug)]
pub struct Reader<'a> {
    pub session: &'a Session,
    pub snapshot: &'a Snapshot,
    pub cid: CommandId,
}

impl Reader<'_> {
    /// Is the row version visible to this reader? May set hint bits.
    /// (Inline: storage calls it for every version a scan meets.)
    #[inline]
    pub fn sees(&self, tuple: &TupleXids, hints: &Hints) -> bool {
        self.session.tuple_visible(tuple, hints, self.snapshot, self.cid)
    }

    /// [`Reader::sees`], answering [`StatusTruncated`] instead of panicking
    /// when the status of an xid of `tuple` was truncated meanwhile: the
    /// caller reads the version's header again (FREEZE-TRUNCATE).
    #[inline]
    pub fn try_sees(&self, tuple: &TupleXids, hints: &Hints) -> Result<bool, StatusTruncated> {
        self.session.try_tuple_visible(tuple, hints, self.snapshot, self.cid)
    }
}

impl Session {
    /// A reader with `snapshot` at the current command (0 outside a
    /// transaction).
    pub fn reader<'a>(&'a self, snapshot: &'a Snapshot) -> Reader<'a> {
        Reader { session: self, snapshot, cid: self.command_id().unwrap_or(0) }
    }

    /// Is the row version visible to `snapshot` at command `curcid`?
    /// (PostgreSQL's HeapTupleSatisfiesMVCC.) May set hint bits. Panics if
    /// the status of one of its xids was truncated (XIDMAP-TRUNCATE).
    pub fn tuple_visible(
        &self,
        tuple: &TupleXids,
        hints: &Hints,
        snapshot: &Snapshot,
        curcid: CommandId,
    ) -> bool {
        self.try_tuple_visible(tuple, hints, snapshot, curcid).unwrap_or_else(|t| {
            panic!(
                "XIDMAP-TRUNCATE violated: status of {:?} asked after truncation to {:?}",
                t.0,
                self.engine.oldest_tracked_xid()
            )
        })
    }

    /// [`Session::tuple_visible`], answering [`StatusTruncated`] when the
    /// status of one of the tuple's xids was truncated (FREEZE-TRUNCATE:
    /// the caller read the header before the version was frozen, cleared or
    /// marked dead, and reads it again). Hints learned before are kept: they
    /// are final facts either way.
    pub fn try_tuple_visible(
        &self,
        tuple: &TupleXids,
        hints: &Hints,
        snapshot: &Snapshot,
        curcid: CommandId,
    ) -> Result<bool, StatusTruncated> {
        let engine = &self.engine;
        // Inserter.
        if hints.has(Hints::XMIN_INVALID) {
            return Ok(false);
        }
        if !hints.has(Hints::XMIN_COMMITTED) {
            if self.is_current_xid(tuple.xmin) {
                if tuple.cmin >= curcid {
                    return Ok(false); // inserted by a later command of ours
                }
                if !tuple.xmax.is_valid() || tuple.xmax_lock_only {
                    return Ok(true);
                }
                if !self.is_current_xid(tuple.xmax) {
                    // Deleted by one of our subtransactions that aborted.
                    hints.set(Hints::XMAX_INVALID);
                    return Ok(true);
                }
                return Ok(tuple.cmax >= curcid);
            }
            if engine.xid_in_snapshot(tuple.xmin, snapshot) {
                return Ok(false);
            }
            if engine.try_did_commit(tuple.xmin)? {
                hints.set(Hints::XMIN_COMMITTED);
            } else {
                hints.set(Hints::XMIN_INVALID);
                return Ok(false);
            }
        } else if engine.xid_in_snapshot(tuple.xmin, snapshot) {
            return Ok(false);
        }
        // Deleter; the inserter is visible from here on.
        if !tuple.xmax.is_valid() || tuple.xmax_lock_only || hints.has(Hints::XMAX_INVALID) {
            return Ok(true);
        }
        if !hints.has(Hints::XMAX_COMMITTED) {
            if self.is_current_xid(tuple.xmax) {
                return Ok(tuple.cmax >= curcid);
            }
            if engine.xid_in_snapshot(tuple.xmax, snapshot) {
                return Ok(true);
            }
            if !engine.try_did_commit(tuple.xmax)? {
                hints.set(Hints::XMAX_INVALID);
                return Ok(true);
            }
            hints.set(Hints::XMAX_COMMITTED);
            return Ok(false);
        }
        Ok(engine.xid_in_snapshot(tuple.xmax, snapshot))
    }
}
