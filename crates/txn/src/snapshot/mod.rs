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
//! the builders live in `build.rs` (`pgproc`, `pgxact`, `dense`) and
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
/// Two shapes: an xid-list snapshot (`csn == 0`: `xip`, `subxip`) for the
/// proc-array modes, and a CSN snapshot (`csn != 0`: `xmin`, `xmax`, `csn`
/// and a memo) for `csn` mode.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Every xid below this had finished.
    pub xmin: Xid,
    /// Every xid at or above this counts as running.
    pub xmax: Xid,
    /// Running top-level xids in `[xmin, xmax)`, other than the taker's own.
    pub(crate) xip: Vec<Xid>,
    /// Running subxids (all `>= xmin`), unless `suboverflowed`.
    pub(crate) subxip: Vec<Xid>,
    /// Some session's subxid cache had overflowed: `subxip` is incomplete and
    /// subxids must be mapped to their top-level xid first.
    pub(crate) suboverflowed: bool,
    /// The completion counter when built; 0 = never reusable.
    pub(crate) completion_count: u64,
    /// `csn` mode: xids that committed with a smaller CSN are visible.
    pub(crate) csn: Csn,
    /// `csn` mode: final answers already looked up (see `csn/memo.rs`).
    pub(crate) memo: Option<Memo>,
}

impl Clone for Snapshot {
    fn clone(&self) -> Self {
        let mut copy = Snapshot::default();
        copy.clone_from(self);
        copy
    }

    /// Copies into existing buffers: the shared cache is copied at every
    /// snapshot, and reallocating the xid lists each time would be most of
    /// the cost.
    /// A CSN snapshot's copy starts with an empty memo of the same range.
    fn clone_from(&mut self, source: &Self) {
        self.xmin = source.xmin;
        self.xmax = source.xmax;
        self.xip.clone_from(&source.xip);
        self.subxip.clone_from(&source.subxip);
        self.suboverflowed = source.suboverflowed;
        self.completion_count = source.completion_count;
        self.csn = source.csn;
        self.memo = source.memo.as_ref().map(|_| Memo::new(source.xmin, source.xmax));
    }
}

impl Snapshot {
    /// The running top-level xids.
    pub fn xip(&self) -> &[Xid] {
        &self.xip
    }

    /// The running subxids (incomplete if [`Snapshot::suboverflowed`]).
    pub fn subxip(&self) -> &[Xid] {
        &self.subxip
    }

    /// True if some subxids are missing from [`Snapshot::subxip`].
    pub fn suboverflowed(&self) -> bool {
        self.suboverflowed
    }

    /// The same snapshot without a memo: every CSN visibility check then goes
    /// to the CSN log (for measuring what the memo saves).
    pub fn without_memo(&self) -> Snapshot {
        let mut copy = self.clone();
        copy.memo = None;
        copy
    }

    /// `csn` mode: the snapshot's commit sequence number (0 otherwise).
    pub fn csn(&self) -> Csn {
        self.csn
    }

    pub(crate) fn clear(&mut self) {
        self.xip.clear();
        self.subxip.clear();
        self.suboverflowed = false;
        self.completion_count = 0;
        self.csn = 0;
        self.memo = None;
    }
}
