//! Parent links of subtransaction xids (PostgreSQL's pg_subtrans).
//!
//! One word per xid: the parent xid, or 0 for a top-level xid. A link is
//! stored before the subxid is published anywhere (SUBTRANS-PARENT), because
//! when a session's subxid cache has overflowed this map is the only way to
//! find a subxid's running top-level transaction. Children are always newer
//! than their parents, so every walk is strictly decreasing and terminates.

use crate::sync::atomic::Ordering::*;
use crate::xid::Xid;
use crate::xidmap::XidMap;

/// See the module documentation.
pub(crate) struct SubTrans {
    map: XidMap,
}

impl SubTrans {
    /// Parent links over `map`, a map of one xid per word.
    pub(crate) fn new(map: XidMap) -> Self {
        Self { map }
    }

    pub(crate) fn map(&self) -> &XidMap {
        &self.map
    }

    /// Records `parent` as the parent of `xid`. Called under the xid generator
    /// lock before `xid` is published.
    pub(crate) fn set_parent(&self, xid: Xid, parent: Xid) {
        assert!(parent < xid, "SUBTRANS-PARENT violated: child {xid:?} not newer than {parent:?}");
        let word = self
            .map
            .word(xid)
            .unwrap_or_else(|| panic!("subtrans page for {xid:?} missing: xid never extended"));
        // Release (SUBTRANS-PARENT): pairs with the Acquire load in
        // `XidMap::load`. The xid generator lock release that follows is what
        // orders this store before any use of the xid by another session; the
        // Release makes the pairing explicit for lock-free readers.
        word.store(parent.0, Release);
    }

    /// The parent of `xid`, or `Xid::INVALID` for a top-level xid (or an xid
    /// whose page is gone: callers never walk below their floor).
    pub(crate) fn parent(&self, xid: Xid) -> Xid {
        Xid(self.map.load(xid).unwrap_or(0))
    }

    /// Walks up from `xid` to its top-level xid, stopping early at the first
    /// ancestor below `floor` (which is then returned: anything below a
    /// snapshot's xmin is finished, whatever its own parent).
    pub(crate) fn topmost(&self, xid: Xid, floor: Xid) -> Xid {
        let mut xid = xid;
        while xid >= floor {
            let parent = self.parent(xid);
            if !parent.is_valid() {
                break;
            }
            assert!(parent < xid, "SUBTRANS-PARENT violated: {xid:?} has parent {parent:?}");
            xid = parent;
        }
        xid
    }
}
