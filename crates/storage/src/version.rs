//! One row version and its header (PostgreSQL's heap tuple header).
//!
//! ```text
//!   xmin, cmin        set at insert, immutable
//!   xmin_hints        XMIN_COMMITTED / XMIN_INVALID: facts about xmin, only OR-ed in
//!   xmax_word         xmax | XMAX_COMMITTED | XMAX_INVALID | LOCK_ONLY, one atomic word
//!   cmax              the deleting command (meaningful to the deleter's own session only)
//!   next              the tid this version was updated into (PostgreSQL's t_ctid)
//! ```
//!
//! Why the xmax hints live inside the xmax word (HINT-XMAX): a reader that
//! found xmax X1 aborted wants to record XMAX_INVALID, but meanwhile a writer
//! may have installed a new deleter X2. PostgreSQL excludes the two with the
//! buffer lock (hints under a shared lock, xmax changes under an exclusive
//! one). Readers here take no lock, so a hint is published by a
//! compare-and-swap against the exact word it was computed from: it fails
//! if xmax changed. xmin never changes, so its hints are a plain OR.

use snapscale_sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering::*};
use snapscale_txn::{CommandId, Hints, TupleXids, Xid};

/// A row version's address in its table (PostgreSQL's ctid).
pub type Tid = u64;

/// "No newer version".
pub(crate) const NO_TID: u64 = u64::MAX;

const XMAX_COMMITTED: u64 = 1 << 63;
const XMAX_INVALID: u64 = 1 << 62;
const LOCK_ONLY: u64 = 1 << 61;
const XID_MASK: u64 = LOCK_ONLY - 1;

/// A row version. See the module documentation.
pub(crate) struct Version<R> {
    pub(crate) xmin: Xid,
    pub(crate) cmin: CommandId,
    xmin_hints: AtomicU8,
    xmax_word: AtomicU64,
    cmax: AtomicU32,
    next: AtomicU64,
    pub(crate) data: R,
}

/// A consistent copy of the header fields a decision needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Header {
    pub(crate) xids: TupleXids,
    /// The xmax word as read (hints included), for hint publication.
    pub(crate) xmax_word: u64,
    pub(crate) next: Tid,
}

impl<R> Version<R> {
    pub(crate) fn new(xmin: Xid, cmin: CommandId, data: R) -> Self {
        Version {
            xmin,
            cmin,
            xmin_hints: AtomicU8::new(0),
            xmax_word: AtomicU64::new(0),
            cmax: AtomicU32::new(0),
            next: AtomicU64::new(NO_TID),
            data,
        }
    }

    /// Reads the header. xmax first (Acquire), then the fields its writer
    /// stored before it.
    pub(crate) fn header(&self) -> Header {
        // Acquire (XMAX-PUBLISH): pairs with the Release store in
        // `set_xmax`; cmax and next written before it are visible.
        let word = self.xmax_word.load(Acquire);
        Header {
            xids: TupleXids {
                xmin: self.xmin,
                xmax: Xid(word & XID_MASK),
                cmin: self.cmin,
                // Relaxed: ordered by the Acquire above. (cmax only matters
                // when xmax is the reader's own xid, written by itself.)
                cmax: self.cmax.load(Relaxed),
                xmax_lock_only: word & LOCK_ONLY != 0,
            },
            xmax_word: word,
            // Relaxed: ordered by the Acquire above.
            next: self.next.load(Relaxed),
        }
    }

    /// Hints for a visibility decision on `header`: the xmin hints, and the
    /// xmax hints that were part of the word read.
    pub(crate) fn hints_for(&self, header: &Header) -> Hints {
        let hints = Hints::default();
        // Relaxed: hints are caches of final facts (txn's Hints docs).
        let mut bits = self.xmin_hints.load(Relaxed);
        if header.xmax_word & XMAX_COMMITTED != 0 {
            bits |= Hints::XMAX_COMMITTED;
        }
        if header.xmax_word & XMAX_INVALID != 0 {
            bits |= Hints::XMAX_INVALID;
        }
        hints.set_bits(bits);
        hints
    }

    /// Publishes hints a decision learned: xmin bits by OR, xmax bits only
    /// if the xmax word is still the one they were computed from (HINT-XMAX).
    pub(crate) fn keep_hints(&self, header: &Header, hints: &Hints) {
        let learned = hints.get();
        let xmin_bits = learned & (Hints::XMIN_COMMITTED | Hints::XMIN_INVALID);
        if xmin_bits != 0 {
            // Relaxed: a cache of an immutable fact about xmin.
            self.xmin_hints.fetch_or(xmin_bits, Relaxed);
        }
        let mut word = header.xmax_word;
        if learned & Hints::XMAX_COMMITTED != 0 {
            word |= XMAX_COMMITTED;
        }
        if learned & Hints::XMAX_INVALID != 0 {
            word |= XMAX_INVALID;
        }
        if word != header.xmax_word {
            // Relaxed both ways: on success only hint bits change; on
            // failure a writer changed xmax and the hint is simply dropped.
            let _ = self.xmax_word.compare_exchange(header.xmax_word, word, Relaxed, Relaxed);
        }
    }

    /// Installs a new deleter or locker (the caller holds the table's write
    /// lock, so xmax changes are serialised). Clears the xmax hints by
    /// replacing the whole word.
    pub(crate) fn set_xmax(&self, xmax: Xid, cmax: CommandId, lock_only: bool, next: Tid) {
        // Relaxed: published by the Release store of the word below.
        self.cmax.store(cmax, Relaxed);
        self.next.store(next, Relaxed);
        let word = xmax.0 | if lock_only { LOCK_ONLY } else { 0 };
        // Release (XMAX-PUBLISH): pairs with the Acquire in `header`. A swap,
        // not a store: both sides of HINT-XMAX are then read-modify-writes,
        // whose atomicity loom models; a plain store racing a CAS hits loom
        // bug tokio-rs/loom#254 (the store may land between the CAS's read
        // and write). Same cost here: the writer holds the table lock.
        self.xmax_word.swap(word, Release);
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_stale_xmax_hint_is_dropped() {
        let v = Version::new(Xid(5), 0, ());
        v.set_xmax(Xid(7), 0, false, NO_TID);
        let old = v.header();
        let learned = v.hints_for(&old);
        learned.set_bits(Hints::XMAX_INVALID); // "7 aborted"
        v.set_xmax(Xid(9), 0, false, 3); // a new deleter meanwhile
        v.keep_hints(&old, &learned);
        let now = v.header();
        assert_eq!(now.xids.xmax, Xid(9));
        assert_eq!(v.hints_for(&now).get() & Hints::XMAX_INVALID, 0, "the stale hint must not apply to 9");
        // A hint computed from the current word sticks.
        let fresh = v.hints_for(&now);
        fresh.set_bits(Hints::XMAX_COMMITTED);
        v.keep_hints(&now, &fresh);
        assert_ne!(v.hints_for(&v.header()).get() & Hints::XMAX_COMMITTED, 0);
    }
}
