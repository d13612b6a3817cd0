//! The commit-status log: two bits per xid, read without locks.
//!
//! Statuses move only forward: `InProgress → Committed | Aborted | SubCommitted`
//! and `SubCommitted → Committed`. A transaction tree (a top-level xid and its
//! committed subtransactions) becomes committed for every reader at one
//! instant, the store that marks the top xid, by the sub-committed protocol
//! (CLOG-TREE in the crate README):
//!
//! 1. every subxid of the tree is marked `SubCommitted`;
//! 2. the top xid is marked `Committed` (the commit point);
//! 3. every subxid is marked `Committed`.
//!
//! A reader that finds `SubCommitted` asks the parent, so before step 2 the
//! whole tree reads as not committed and from step 2 on as committed.
//!
//! This layer knows nothing of crashes (recovery rebuilds the database from
//! committed transactions only, above it), so "aborted" here is always an
//! explicit mark; callers still decide "aborted" by elimination
//! (`!in progress && !committed`), as PostgreSQL does, so that a status left
//! at `InProgress` reads correctly.

use crate::subtrans::SubTrans;
use crate::sync::atomic::Ordering::*;
use crate::xid::Xid;
use crate::xidmap::{Lookup, XidMap};

/// The status of an xid found on a row version was truncated before it was
/// read: the version was frozen, cleared or marked dead meanwhile
/// (FREEZE-TRUNCATE in the storage crate's README), and its reader reads
/// it again.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct StatusTruncated(pub Xid);

/// The stored status of one xid.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum XidStatus {
    /// Running, or never finished (a crash leaves this).
    InProgress = 0,
    /// Committed.
    Committed = 1,
    /// Aborted.
    Aborted = 2,
    /// Committed as part of a tree whose top is still being marked: resolve
    /// through the parent.
    SubCommitted = 3,
}

impl XidStatus {
    fn from_bits(bits: u64) -> XidStatus {
        match bits & 3 {
            0 => XidStatus::InProgress,
            1 => XidStatus::Committed,
            2 => XidStatus::Aborted,
            _ => XidStatus::SubCommitted,
        }
    }
}

/// See the module documentation.
pub(crate) struct Clog {
    map: XidMap,
}

impl Clog {
    /// A status log over `map`, a map of 32 xids per word.
    pub(crate) fn new(map: XidMap) -> Self {
        Self { map }
    }

    pub(crate) fn map(&self) -> &XidMap {
        &self.map
    }

    /// The stored status, without resolving `SubCommitted`; `None` if `xid`
    /// is below the truncation point and its page was recycled: the xid has
    /// finished (XIDMAP-FLOOR), but whether it committed is forgotten.
    pub(crate) fn stored_status(&self, xid: Xid) -> Option<XidStatus> {
        match xid {
            Xid::INVALID => return Some(XidStatus::Aborted),
            Xid::BOOTSTRAP | Xid::FROZEN => return Some(XidStatus::Committed),
            _ => {}
        }
        match self.map.lookup(xid) {
            Lookup::Word(word) => Some(XidStatus::from_bits(word >> (2 * self.map.shift_in_word(xid)))),
            Lookup::Truncated => None,
            // A page that was never extended: the xid was never handed out.
            // (Asking about such an xid is a caller bug too, but "in progress"
            // is the answer that can never make invisible data visible.)
            Lookup::Missing => Some(XidStatus::InProgress),
        }
    }

    /// The stored status, without resolving `SubCommitted`. Panics for an
    /// xid whose status was truncated and recycled: the caller promised
    /// never to ask (XIDMAP-TRUNCATE).
    pub(crate) fn raw_status(&self, xid: Xid) -> XidStatus {
        self.stored_status(xid).unwrap_or_else(|| {
            panic!(
                "XIDMAP-TRUNCATE violated: status of {xid:?} asked after truncation to {:?}",
                self.map.oldest()
            )
        })
    }

    /// True if `xid`'s tree has committed (resolving `SubCommitted` through
    /// the parent chain). Panics if `xid`'s status was truncated and its
    /// page reused (XIDMAP-TRUNCATE).
    pub(crate) fn did_commit(&self, xid: Xid, subtrans: &SubTrans) -> bool {
        self.try_did_commit(xid, subtrans).unwrap_or_else(|t| {
            panic!(
                "XIDMAP-TRUNCATE violated: status of {:?} asked after truncation to {:?}",
                t.0,
                self.map.oldest()
            )
        })
    }

    /// [`Clog::did_commit`], answering [`StatusTruncated`] instead of
    /// panicking when `xid`'s status is gone: a caller that read `xid` off
    /// a row version reads the version again, which was frozen, cleared or
    /// marked dead before the truncation (FREEZE-TRUNCATE).
    pub(crate) fn try_did_commit(&self, xid: Xid, subtrans: &SubTrans) -> Result<bool, StatusTruncated> {
        let asked = xid;
        let mut xid = xid;
        // Set when a parent link or an ancestor's status was found
        // truncated: the tree has finished, so the next read of the asked
        // xid must be final.
        let mut tree_finished = false;
        loop {
            let status = match self.stored_status(xid) {
                Some(status) => status,
                None if xid == asked => return Err(StatusTruncated(asked)),
                // An ancestor's status is gone: the truncation point passed
                // it, so the horizon passed the whole tree and step 3 is
                // done (XIDMAP-FLOOR). Read the asked xid again.
                None => {
                    tree_finished = true;
                    xid = asked;
                    continue;
                }
            };
            match status {
                XidStatus::Committed => return Ok(true),
                XidStatus::InProgress | XidStatus::Aborted => return Ok(false),
                XidStatus::SubCommitted => {
                    assert!(
                        !tree_finished,
                        "CLOG-TREE violated: {xid:?} still sub-committed after its tree finished"
                    );
                    // The tree is between steps 1 and 3: its top decides.
                    // Step 1 happened-before this read (we saw its store), and
                    // a SubCommitted xid always has a parent link (set at
                    // assignment, before the xid was published).
                    match subtrans.map().lookup(xid) {
                        Lookup::Word(parent) => {
                            let parent = Xid(parent);
                            assert!(
                                parent.is_valid() && parent < xid,
                                "SUBTRANS-PARENT violated: sub-committed {xid:?} has parent {parent:?}"
                            );
                            xid = parent;
                        }
                        // The parent links were truncated past `xid` after we
                        // read its status: the horizon had passed the tree,
                        // so step 3 is done (and visible to us, XIDMAP-FLOOR).
                        // Read the asked xid again.
                        Lookup::Truncated => {
                            tree_finished = true;
                            xid = asked;
                        }
                        Lookup::Missing => {
                            panic!("SUBTRANS-PARENT violated: sub-committed {xid:?} has no parent link page")
                        }
                    }
                }
            }
        }
    }

    /// The resolved, final-or-not status: `SubCommitted` becomes `Committed`
    /// or `InProgress` according to the top of the tree.
    pub(crate) fn status(&self, xid: Xid, subtrans: &SubTrans) -> XidStatus {
        match self.raw_status(xid) {
            XidStatus::SubCommitted => {
                if self.did_commit(xid, subtrans) {
                    XidStatus::Committed
                } else {
                    XidStatus::InProgress
                }
            }
            s => s,
        }
    }

    /// Moves `xid` from `from` to `to` with one read-modify-write. Only two
    /// transitions exist and each needs a single bit operation, so no
    /// compare-and-swap loop: `InProgress` (bits 00) to any status is an OR,
    /// and `SubCommitted` (11) to `Committed` (01) clears the high bit.
    fn transition(&self, xid: Xid, from: XidStatus, to: XidStatus) {
        let word = self
            .map
            .word(xid)
            .unwrap_or_else(|| panic!("status log page for {xid:?} missing: xid never extended"));
        let shift = 2 * self.map.shift_in_word(xid);
        // Release (CLOG-TREE): pairs with the Acquire load in `XidMap::load`;
        // a reader that sees this status sees every status the committer
        // stored before it (the sub-committed marks of step 1 before the top's
        // commit of step 2).
        let old = match (from, to) {
            (XidStatus::InProgress, _) => word.fetch_or((to as u64) << shift, Release),
            (XidStatus::SubCommitted, XidStatus::Committed) => word.fetch_and(!(2u64 << shift), Release),
            _ => unreachable!("no status transition {from:?} -> {to:?}"),
        };
        let was = XidStatus::from_bits(old >> shift);
        assert_eq!(was, from, "CLOG-MONOTONE violated: {xid:?} was {was:?}, expected {from:?} before {to:?}");
    }

    /// Commits `top` and `subxids` atomically for every reader (see module docs).
    pub(crate) fn commit_tree(&self, top: Xid, subxids: &[Xid]) {
        for &sub in subxids {
            self.transition(sub, XidStatus::InProgress, XidStatus::SubCommitted);
        }
        self.transition(top, XidStatus::InProgress, XidStatus::Committed);
        for &sub in subxids {
            self.transition(sub, XidStatus::SubCommitted, XidStatus::Committed);
        }
    }

    /// Marks `xids` aborted. Aborts need no ordering protocol: nobody may see
    /// an aborted xid as committed, and every one of them reads "not committed"
    /// before and after.
    pub(crate) fn abort(&self, xids: &[Xid]) {
        for &xid in xids {
            self.transition(xid, XidStatus::InProgress, XidStatus::Aborted);
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn logs() -> (Clog, SubTrans) {
        let clog = Clog::new(XidMap::new(32, 4));
        let subtrans = SubTrans::new(XidMap::new(1, 4));
        for x in 0..200 {
            assert!(clog.map().extend(Xid(x)));
            assert!(subtrans.map().extend(Xid(x)));
        }
        (clog, subtrans)
    }

    #[test]
    fn special_xids() {
        let (clog, _) = logs();
        assert_eq!(clog.raw_status(Xid::INVALID), XidStatus::Aborted);
        assert_eq!(clog.raw_status(Xid::BOOTSTRAP), XidStatus::Committed);
        assert_eq!(clog.raw_status(Xid::FROZEN), XidStatus::Committed);
    }

    #[test]
    fn statuses_do_not_disturb_neighbours() {
        let (clog, subtrans) = logs();
        clog.commit_tree(Xid(40), &[]);
        clog.abort(&[Xid(41)]);
        assert_eq!(clog.status(Xid(39), &subtrans), XidStatus::InProgress);
        assert_eq!(clog.status(Xid(40), &subtrans), XidStatus::Committed);
        assert_eq!(clog.status(Xid(41), &subtrans), XidStatus::Aborted);
        assert_eq!(clog.status(Xid(42), &subtrans), XidStatus::InProgress);
    }

    /// XIDMAP-FLOOR / XIDMAP-TRUNCATE: once its page is recycled, a status
    /// reads "truncated" (finished, outcome forgotten), and asking for the
    /// outcome anyway is a broken promise that panics, never an answer read
    /// off the recycled page.
    #[test]
    #[should_panic(expected = "XIDMAP-TRUNCATE violated")]
    fn a_recycled_status_reads_truncated() {
        let clog = Clog::new(XidMap::new(32, 2));
        let per_page = clog.map().xids_per_page();
        assert!(clog.map().extend(Xid(5)) && clog.map().extend(Xid(per_page)));
        clog.commit_tree(Xid(5), &[]);
        clog.map().truncate(Xid(per_page));
        assert_eq!(clog.stored_status(Xid(5)), Some(XidStatus::Committed), "not recycled yet");
        assert!(clog.map().extend(Xid(2 * per_page)));
        assert_eq!(clog.stored_status(Xid(5)), None);
        clog.raw_status(Xid(5));
    }

    #[test]
    fn sub_committed_resolves_through_parent() {
        let (clog, subtrans) = logs();
        subtrans.set_parent(Xid(100), Xid(10));
        subtrans.set_parent(Xid(150), Xid(100));
        clog.transition(Xid(150), XidStatus::InProgress, XidStatus::SubCommitted);
        clog.transition(Xid(100), XidStatus::InProgress, XidStatus::SubCommitted);
        assert!(!clog.did_commit(Xid(150), &subtrans));
        assert_eq!(clog.status(Xid(150), &subtrans), XidStatus::InProgress);
        clog.transition(Xid(10), XidStatus::InProgress, XidStatus::Committed);
        assert!(clog.did_commit(Xid(150), &subtrans));
        assert_eq!(clog.status(Xid(100), &subtrans), XidStatus::Committed);
    }
}
