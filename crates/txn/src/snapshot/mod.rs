//! Snapshots: what a statement sees.
//!
//! A snapshot is `(xmin, xmax, xip, subxip)`: every xid below `xmin` had
//! finished when it was taken, every xid at or above `xmax` is treated as
//! running, and in between exactly the listed xids were running. The taking
//! session's own xids are never listed: every visibility path asks "is this
//! my transaction" first.
//!
//! Worked example: sessions A (xid 7, subxid 9), B (xid 8), C (no xid), and
//! latest completed xid 10.
//!
//! ```text
//!   dense xids:  [ 7 | 8 | 0 ]       C builds: xmax = 11, xmin = 7
//!   subxids(A):  [ 9 ]               xip = [7, 8], subxip = [9]
//! ```
//!
//! How a snapshot is built depends on the [`SnapshotMode`](crate::SnapshotMode);
//! the builders live in `build.rs` (`pgproc`, `pgxact`, `dense`, and the
//! standby's `known-assigned`) and
//! `shared_cache.rs` (`shared-cached`); `dense-cached` reuse is in the engine.

mod build;
mod shared_cache;

pub(crate) use build::Builder;
pub(crate) use shared_cache::{CacheOutcome, SharedCache};

use crate::csn::{Csn, Memo};
use crate::xid::Xid;

/// An MVCC snapshot. Immutable once built (but for its memo, a cache of
/// final answers); shared as `Arc<Snapshot>`.
///
/// Every snapshot has `xmin` and `xmax`; between them, what it knows of the
/// running transactions takes one of two shapes: the list of
/// running xids (the proc-array modes) or a commit sequence number (`csn`
/// mode).
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Every xid below this had finished.
    pub xmin: Xid,
    /// Every xid at or above this counts as running.
    pub xmax: Xid,
    pub(crate) shape: Shape,
}

/// What a snapshot knows between `xmin` and `xmax`.
#[derive(Debug)]
pub(crate) enum Shape {
    /// The proc-array modes: exactly these xids were running.
    Xids(XidList),
    /// `csn` mode: xids that committed with a CSN below `csn` are visible;
    /// the memo keeps final answers already looked up (`csn/memo.rs`).
    Csn { csn: Csn, memo: Option<Memo> },
}

impl Default for Shape {
    fn default() -> Self {
        Shape::Xids(XidList::default())
    }
}

/// The running xids of an xid-list snapshot.
#[derive(Clone, Debug, Default)]
pub(crate) struct XidList {
    /// Running top-level xids in `[xmin, xmax)`, other than the taker's own.
    pub(crate) xip: Vec<Xid>,
    /// Running subxids (all `>= xmin`), unless `suboverflowed`.
    pub(crate) subxip: Vec<Xid>,
    /// Some session's subxid cache had overflowed: `subxip` is incomplete and
    /// subxids must be mapped to their top-level xid first.
    pub(crate) suboverflowed: bool,
    /// The completion counter when built; 0 = never reusable.
    pub(crate) completion_count: u64,
    /// `xip` is sorted (a KnownAssignedXids copy): searched by bisection,
    /// since a standby's list holds every running xid of the primary.
    pub(crate) sorted: bool,
}

impl Clone for Snapshot {
    fn clone(&self) -> Self {
        let mut copy = Snapshot::default();
        copy.clone_from(self);
        copy
    }

    /// Copies into existing buffers: the shared cache is copied at every
    /// snapshot, and reallocating the xid lists each time would be most of
    /// the cost. A CSN snapshot's copy starts with an empty memo of the same
    /// range.
    fn clone_from(&mut self, source: &Self) {
        self.xmin = source.xmin;
        self.xmax = source.xmax;
        match &source.shape {
            Shape::Xids(list) => self.xids_mut().clone_from(list),
            Shape::Csn { csn, memo } => {
                self.shape =
                    Shape::Csn { csn: *csn, memo: memo.as_ref().map(|_| Memo::new(source.xmin, source.xmax)) }
            }
        }
    }
}

impl Snapshot {
    /// A `csn` mode snapshot.
    pub(crate) fn csn_based(xmin: Xid, xmax: Xid, csn: Csn, memo: Option<Memo>) -> Snapshot {
        Snapshot { xmin, xmax, shape: Shape::Csn { csn, memo } }
    }

    /// The running top-level xids (none for a CSN snapshot).
    pub fn xip(&self) -> &[Xid] {
        match &self.shape {
            Shape::Xids(list) => &list.xip,
            Shape::Csn { .. } => &[],
        }
    }

    /// The running subxids (incomplete if [`Snapshot::suboverflowed`]).
    pub fn subxip(&self) -> &[Xid] {
        match &self.shape {
            Shape::Xids(list) => &list.subxip,
            Shape::Csn { .. } => &[],
        }
    }

    /// True if some subxids are missing from [`Snapshot::subxip`].
    pub fn suboverflowed(&self) -> bool {
        matches!(&self.shape, Shape::Xids(list) if list.suboverflowed)
    }

    /// `csn` mode: the snapshot's commit sequence number (0 otherwise).
    pub fn csn(&self) -> Csn {
        match &self.shape {
            Shape::Csn { csn, .. } => *csn,
            Shape::Xids(_) => 0,
        }
    }

    /// The completion counter it was built at (0: never reusable).
    pub(crate) fn completion_count(&self) -> u64 {
        match &self.shape {
            Shape::Xids(list) => list.completion_count,
            Shape::Csn { .. } => 0,
        }
    }

    /// The same snapshot without a memo: every CSN visibility check then goes
    /// to the CSN log (for measuring what the memo saves).
    pub fn without_memo(&self) -> Snapshot {
        let mut copy = self.clone();
        if let Shape::Csn { memo, .. } = &mut copy.shape {
            *memo = None;
        }
        copy
    }

    /// The xid list, to fill in (an xid-list shape, keeping its buffers).
    pub(crate) fn xids_mut(&mut self) -> &mut XidList {
        if !matches!(self.shape, Shape::Xids(_)) {
            self.shape = Shape::Xids(XidList::default());
        }
        match &mut self.shape {
            Shape::Xids(list) => list,
            Shape::Csn { .. } => unreachable!("made an xid list above"),
        }
    }

    /// An empty xid list, its buffers kept for the next build.
    pub(crate) fn clear(&mut self) {
        let list = self.xids_mut();
        list.xip.clear();
        list.subxip.clear();
        list.suboverflowed = false;
        list.completion_count = 0;
        list.sorted = false;
    }
}
