//! One row version and its header (PostgreSQL's heap tuple header).
//!
//! ```text
//!   xmin, cmin        set at insert, immutable
//!   xmin_hints        XMIN_COMMITTED / XMIN_INVALID: facts about xmin, and
//!                     FROZEN / DEAD, vacuum's marks (FREEZE-TRUNCATE); only OR-ed in
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
//!
//! Vacuum's marks (FREEZE-TRUNCATE in the crate README): FROZEN says xmin
//! committed before every snapshot that exists or will (the header then
//! shows xmin as `Xid::FROZEN`, PostgreSQL's HEAP_XMIN_FROZEN keeping the
//! raw xid); DEAD says no snapshot can see the version any more (it is about
//! to be removed, or, in a table whose versions are never removed, stays).
//! Either mark means no reader needs the status of the xid it covers, so
//! the status log may be truncated past it; a reader that finds a status
//! truncated reads the header again and finds the mark.

use snapscale_sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering::*};
use snapscale_txn::StatusTruncated;
use snapscale_txn::{CommandId, Hints, TupleXids, Xid};

/// A row version's address in its table (PostgreSQL's ctid).
pub type Tid = u64;

/// "No newer version".
pub(crate) const NO_TID: u64 = u64::MAX;

/// xmin committed before every snapshot (vacuum's freeze; FREEZE-TRUNCATE).
const FROZEN: u8 = 0x10;
/// Invisible to every snapshot, and removed or about to be (FREEZE-TRUNCATE).
const DEAD: u8 = 0x20;
/// The bits of `xmin_hints` that are txn's hints.
const XMIN_HINTS: u8 = Hints::XMIN_COMMITTED | Hints::XMIN_INVALID;

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
    /// xmin is `Xid::FROZEN` here once the version is frozen.
    pub(crate) xids: TupleXids,
    /// Vacuum found the version invisible to every snapshot.
    pub(crate) dead: bool,
    /// The xmin hint bits read (FROZEN and DEAD included).
    xmin_bits: u8,
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
        // Relaxed: a mark read late only costs a status-log lookup, which
        // answers as well while the status is there. A reader that finds
        // the status truncated reads the header again after synchronising
        // with the truncation, which followed the mark (FREEZE-TRUNCATE:
        // the chain is the table's frozen xid, Release/Acquire, then the
        // engine's frozen xid and the status log's page tags), so the
        // second read sees the mark.
        let xmin_bits = self.xmin_hints.load(Relaxed);
        Header {
            dead: xmin_bits & DEAD != 0,
            xmin_bits,
            xids: TupleXids {
                xmin: if xmin_bits & FROZEN != 0 { Xid::FROZEN } else { self.xmin },
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
        let mut bits = header.xmin_bits & XMIN_HINTS;
        if header.dead {
            // Invisible to every snapshot: say so without asking anyone.
            bits |= Hints::XMIN_INVALID;
        }
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
        if header.dead {
            return;
        }
        let learned = hints.get();
        let xmin_bits = learned & XMIN_HINTS & !header.xmin_bits;
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

    /// The inserting xid as stored, frozen or not (update chains and
    /// diagnostics).
    pub(crate) fn raw_xmin(&self) -> Xid {
        self.xmin
    }

    /// Vacuum: xmin committed below the freeze cutoff (FREEZE-TRUNCATE).
    pub(crate) fn mark_frozen(&self) {
        // Relaxed: published for truncation by the table's frozen xid
        // (Release, in the same vacuum pass, after every mark); a reader
        // that sees it early is right as well (xmin committed before every
        // snapshot).
        self.xmin_hints.fetch_or(FROZEN, Relaxed);
    }

    /// Vacuum: invisible to every snapshot from now on (FREEZE-TRUNCATE).
    pub(crate) fn mark_dead(&self) {
        // Relaxed: as in `mark_frozen`; a reader that sees it early is
        // right as well (vacuum decided it by its cutoff, VACUUM-CUTOFF).
        self.xmin_hints.fetch_or(DEAD, Relaxed);
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

impl Header {
    /// Whether this header still needs the status of `xid` (it shows `xid`
    /// as an unfrozen xmin or as xmax, and is not dead).
    pub(crate) fn needs_status_of(&self, xid: Xid) -> bool {
        !self.dead && (self.xids.xmin == xid || self.xids.xmax == xid)
    }
}

impl<R> Version<R> {
    /// Runs `decide` on the header. If a status it needs was truncated
    /// meanwhile, the version was frozen, cleared or marked dead before
    /// that truncation (FREEZE-TRUNCATE), so the header read again no
    /// longer needs it: `decide` runs again on the new header.
    pub(crate) fn decide<T>(&self, mut decide: impl FnMut(&Header) -> Result<T, StatusTruncated>) -> T {
        let mut header = self.header();
        loop {
            match decide(&header) {
                Ok(t) => return t,
                Err(StatusTruncated(xid)) => {
                    let again = self.header();
                    assert!(
                        !again.needs_status_of(xid),
                        "FREEZE-TRUNCATE violated: the status of {xid:?} was truncated, and the version \
                         (xmin {:?}, xmax {:?}) still needs it",
                        again.xids.xmin,
                        again.xids.xmax
                    );
                    header = again;
                }
            }
        }
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
