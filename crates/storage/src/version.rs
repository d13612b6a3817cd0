//! One row version and its header (PostgreSQL's heap tuple header).
//!
//! ```text
//!   xmin, cmin        set at insert, immutable
//!   xmin_hints        XMIN_COMMITTED / XMIN_INVALID: facts about xmin, and
//!                     FROZEN / DEAD, vacuum's marks (FREEZE-TRUNCATE); only OR-ed in
//!   xmax_word         one atomic word (below)
//!   cmax              the deleting command (meaningful to the deleter's own session only)
//!   next              the tid this version was updated into (PostgreSQL's t_ctid)
//! ```
//!
//! The xmax word:
//!
//! ```text
//!   bit 63  XMAX_COMMITTED   hint: xmax (a multi's updater) committed
//!   bit 62  XMAX_INVALID     hint: xmax (a multi's updater) aborted
//!   bit 61  LOCK_ONLY        xmax only locks the row (a multi: no updater member)
//!   bit 60  IS_MULTI         bits 0-57 are a multixact id, not an xid
//!   59-58   mode             a plain xmax's lock mode (KEY SHARE .. UPDATE);
//!                            an updater's: NO KEY UPDATE or UPDATE
//!   57-0    xid or multixact id
//! ```
//!
//! A row locked by several transactions, or locked by some and updated by
//! one, names a multixact (snapscale-txn's multixact log) whose members
//! carry their own modes. A multi never changes: a new locker installs a
//! new one (XMAX-MULTI in the crate README). Readers ask the log for the
//! updater member only, and the xmax hints of a multi word describe that
//! member: the word names one immutable multi, and a hint is published
//! only by a compare-and-swap against the exact word (HINT-XMAX).
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
use snapscale_txn::{CommandId, Hints, MultiTruncated, MultiXactId, RowLockMode, TupleXids, Xid};
use snapscale_txn::{StatusTruncated, MAX_ROW_XID};

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
const IS_MULTI: u64 = 1 << 60;
const MODE_SHIFT: u32 = 58;
const XID_MASK: u64 = MAX_ROW_XID;

/// What a writer installs as a version's xmax.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum NewXmax {
    /// Nobody (vacuum clearing finished lockers).
    None,
    /// One transaction, locking the row in `mode` or (not `lock_only`)
    /// updating or deleting it with that strength.
    Xid { xid: Xid, mode: RowLockMode, lock_only: bool },
    /// A multixact; `lock_only` if it has no updater member.
    Multi { multi: MultiXactId, lock_only: bool },
}

impl NewXmax {
    fn word(self) -> u64 {
        match self {
            NewXmax::None => 0,
            NewXmax::Xid { xid, mode, lock_only } => {
                assert!(xid.0 <= XID_MASK, "xid {xid:?} does not fit a row header");
                xid.0 | (mode.code() << MODE_SHIFT) | if lock_only { LOCK_ONLY } else { 0 }
            }
            NewXmax::Multi { multi, lock_only } => {
                assert!(multi.0 <= XID_MASK, "multixact {multi:?} does not fit a row header");
                multi.0 | IS_MULTI | if lock_only { LOCK_ONLY } else { 0 }
            }
        }
    }
}

/// Why a decision on a header must be made again on a newer one
/// (FREEZE-TRUNCATE, MULTI-TRUNCATE): a status or a multi it needed was
/// truncated, so the version was changed before that truncation.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Gone {
    /// The status of the header's own xmin or plain xmax.
    Status(Xid),
    /// The status of a member of the header's multi.
    Member(Xid),
    /// The header's multi itself.
    Multi(MultiXactId),
}

impl From<StatusTruncated> for Gone {
    fn from(t: StatusTruncated) -> Self {
        Gone::Status(t.0)
    }
}

impl From<MultiTruncated> for Gone {
    fn from(t: MultiTruncated) -> Self {
        Gone::Multi(t.0)
    }
}

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
    /// The multixact xmax names, if it is one (`xids.xmax` is then
    /// INVALID and `xids.xmax_lock_only` says whether it has an updater).
    pub(crate) multi: Option<MultiXactId>,
    /// A plain xmax's mode (its lock's, or its update's strength).
    pub(crate) mode: RowLockMode,
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
        let multi = (word & IS_MULTI != 0).then_some(MultiXactId(word & XID_MASK));
        Header {
            multi,
            mode: RowLockMode::from_code(word >> MODE_SHIFT),
            dead: xmin_bits & DEAD != 0,
            xmin_bits,
            xids: TupleXids {
                xmin: if xmin_bits & FROZEN != 0 { Xid::FROZEN } else { self.xmin },
                xmax: if multi.is_some() { Xid::INVALID } else { Xid(word & XID_MASK) },
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

    /// Installs a new deleter, updater or locker (the caller holds the
    /// table's write lock, so xmax changes are serialised). Clears the xmax
    /// hints by replacing the whole word.
    pub(crate) fn set_xmax(&self, xmax: NewXmax, cmax: CommandId, next: Tid) {
        // Relaxed: published by the Release store of the word below.
        self.cmax.store(cmax, Relaxed);
        self.next.store(next, Relaxed);
        // Release (XMAX-PUBLISH, MULTI-PUBLISH): pairs with the Acquire in
        // `header`; a reader that sees the new word sees cmax, next and,
        // for a multi, the members its creator wrote before. A swap, not a
        // store: both sides of HINT-XMAX are then read-modify-writes,
        // whose atomicity loom models; a plain store racing a CAS hits loom
        // bug tokio-rs/loom#254 (the store may land between the CAS's read
        // and write). Same cost here: the writer holds the table lock.
        self.xmax_word.swap(xmax.word(), Release);
    }

    /// The current cmax (the writer keeps it when it installs a new xmax
    /// that keeps the updater it belongs to).
    pub(crate) fn cmax(&self) -> CommandId {
        // Relaxed: read by the writer under the table lock, which ordered
        // the last store.
        self.cmax.load(Relaxed)
    }
}

impl Header {
    /// Whether this header still needs the status of `xid` (it shows `xid`
    /// as an unfrozen xmin or as a plain xmax, and is not dead).
    pub(crate) fn needs_status_of(&self, xid: Xid) -> bool {
        !self.dead && (self.xids.xmin == xid || self.xids.xmax == xid)
    }

    /// The xmax as the writer would install it again.
    pub(crate) fn xmax(&self) -> NewXmax {
        match (self.multi, self.xids.xmax.is_valid()) {
            (Some(multi), _) => NewXmax::Multi { multi, lock_only: self.xids.xmax_lock_only },
            (None, true) => {
                NewXmax::Xid { xid: self.xids.xmax, mode: self.mode, lock_only: self.xids.xmax_lock_only }
            }
            (None, false) => NewXmax::None,
        }
    }
}

impl<R> Version<R> {
    /// Runs `decide` on the header. If a status or multi it needs was
    /// truncated meanwhile, the version was frozen, cleared, marked dead or
    /// given another xmax before that truncation (FREEZE-TRUNCATE,
    /// MULTI-TRUNCATE), so the header read again no longer needs it:
    /// `decide` runs again on the new header.
    pub(crate) fn decide<T>(&self, mut decide: impl FnMut(&Header) -> Result<T, Gone>) -> T {
        let mut header = self.header();
        loop {
            match decide(&header) {
                Ok(t) => return t,
                Err(gone) => {
                    let again = self.header();
                    let still_needed = match gone {
                        Gone::Status(xid) => again.needs_status_of(xid),
                        // A member's status: the same multi word would
                        // still need it.
                        Gone::Member(xid) => {
                            again.needs_status_of(xid)
                                || (!again.dead && again.multi.is_some() && again.multi == header.multi)
                        }
                        Gone::Multi(m) => !again.dead && again.multi == Some(m),
                    };
                    assert!(
                        !still_needed,
                        "FREEZE-TRUNCATE/MULTI-TRUNCATE violated: {gone:?} was truncated, and the version \
                         (xmin {:?}, xmax {:?}, multi {:?}) still needs it",
                        again.xids.xmin, again.xids.xmax, again.multi
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

    pub(crate) fn plain(x: u64) -> NewXmax {
        NewXmax::Xid { xid: Xid(x), mode: RowLockMode::Update, lock_only: false }
    }

    #[test]
    fn a_stale_xmax_hint_is_dropped() {
        let v = Version::new(Xid(5), 0, ());
        v.set_xmax(plain(7), 0, NO_TID);
        let old = v.header();
        let learned = v.hints_for(&old);
        learned.set_bits(Hints::XMAX_INVALID); // "7 aborted"
        v.set_xmax(plain(9), 0, 3); // a new deleter meanwhile
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
