//! KnownAssignedXids: on a hot standby in `known-assigned` mode, the
//! primary's xids that replay has seen assigned and not yet seen finish
//! (PostgreSQL 9.0–17, procarray.c).
//!
//! ```text
//!   entries:  [ 4 | 7 | 9' | 10 | 12' | 13 | ...free... ]   ' = invalid
//!                   ^tail                  ^head
//! ```
//!
//! A sorted array (xids arrive in increasing order) with a valid flag per
//! entry, packed into the entry's word. The live part is `[tail, head)`.
//! Replay appends at the head; removal clears an entry's flag (the value
//! stays, so binary search still works) and moves the tail over an invalid
//! prefix; compression slides the valid entries down to index 0 only when
//! at least as many entries are invalid as valid (or the head reaches the
//! end), so its cost is amortised over the removals that made the holes,
//! and a scan of `[tail, head)` is O(valid entries). A full array is
//! compressed, then grown.
//!
//! Concurrency (KA-APPEND and KA-CONSISTENCY in the crate README): the
//! array lives in `Members`, under the proc-array lock. Readers (snapshots,
//! in-progress checks, horizons) hold it shared. Removal, compression and
//! growth take it exclusive. Appends, by replay, the only writer, hold it
//! shared: entries are stored, then `head` with Release; readers load
//! `head` with Acquire, then the entries. An append never changes what a
//! concurrent reader decides: appended xids are above `latest_completed`,
//! which only moves under the exclusive lock, so they are at or above every
//! concurrent reader's xmax.

use std::fmt;

use crate::sync::atomic::{AtomicU64, AtomicUsize, Ordering::*};
use crate::xid::Xid;

/// The valid flag, in an entry's word (xids stay far below 2^63).
const VALID: u64 = 1 << 63;

/// See the module documentation.
pub(crate) struct KnownAssignedXids {
    /// `xid | VALID` for a valid entry, the bare xid for a removed one, 0 for
    /// a slot never written. Written by replay: appended under the shared
    /// lock (above `head`), cleared or moved under the exclusive lock.
    entries: Box<[AtomicU64]>,
    /// One past the last entry. Stored with Release by appends (shared
    /// lock) and under the exclusive lock by compression.
    head: AtomicUsize,
    /// The first entry that may be valid. Changed only under the exclusive
    /// lock (`&mut self`), read under the shared lock.
    tail: usize,
    /// Valid entries in `[tail, head)`. Maintained by replay alone.
    valid: AtomicUsize,
    /// The newest subxid removed because its tree had more than
    /// `SUBXID_CACHE` subxids (PostgreSQL's lastOverflowedXid): a snapshot
    /// whose xmin is at or below it is suboverflowed. Never decreases.
    last_overflowed: AtomicU64,
}

impl fmt::Debug for KnownAssignedXids {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Relaxed: a diagnostic.
        f.debug_struct("KnownAssignedXids")
            .field("tail", &self.tail)
            .field("head", &self.head.load(Relaxed))
            .field("valid", &self.valid.load(Relaxed))
            .field("last_overflowed", &Xid(self.last_overflowed.load(Relaxed)))
            .finish()
    }
}

impl KnownAssignedXids {
    /// An empty array; it grows when needed. PostgreSQL sizes it
    /// (64 + 1) x max backends of the primary, which a standby does not know.
    pub(crate) fn new(max_sessions: usize) -> Self {
        let capacity = (max_sessions * (crate::SUBXID_CACHE + 1)).clamp(4, 1 << 16);
        Self {
            entries: (0..capacity).map(|_| AtomicU64::new(0)).collect(),
            head: AtomicUsize::new(0),
            tail: 0,
            valid: AtomicUsize::new(0),
            last_overflowed: AtomicU64::new(0),
        }
    }

    /// One past the last entry, for a reader under the shared lock.
    fn head(&self) -> usize {
        // Acquire (KA-APPEND): pairs with the Release store in `append`;
        // the entries below the head we read were written before it.
        self.head.load(Acquire)
    }

    fn entry(&self, i: usize) -> (Xid, bool) {
        // Relaxed: after the Acquire head load (appends) and under the lock
        // that orders removals (exclusive) before us.
        let word = self.entries[i].load(Relaxed);
        (Xid(word & !VALID), word & VALID != 0)
    }

    /// The index of `xid` in `[tail, head)`, valid or not.
    fn find(&self, xid: Xid, head: usize) -> Option<usize> {
        let (mut lo, mut hi) = (self.tail, head);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (x, _) = self.entry(mid);
            match x.cmp(&xid) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    /// Is `xid` a valid entry? (Shared lock.)
    pub(crate) fn contains(&self, xid: Xid) -> bool {
        self.find(xid, self.head()).is_some_and(|i| self.entry(i).1)
    }

    /// The oldest valid entry. (Shared lock.)
    pub(crate) fn first_valid(&self) -> Option<Xid> {
        (self.tail..self.head()).map(|i| self.entry(i)).find(|&(_, valid)| valid).map(|(x, _)| x)
    }

    /// Appends every valid entry below `xmax` to `out`, in xid order.
    /// (Shared lock; the snapshot loop.)
    pub(crate) fn copy_below(&self, xmax: Xid, out: &mut Vec<Xid>) {
        for i in self.tail..self.head() {
            let (x, valid) = self.entry(i);
            if x >= xmax {
                break;
            }
            if valid {
                out.push(x);
            }
        }
    }

    /// The newest overflowed subxid removed so far (`Xid::INVALID` if none).
    pub(crate) fn last_overflowed(&self) -> Xid {
        // Relaxed: stored by replay before the entries it concerns leave
        // (under the exclusive lock) or before the append that skips them
        // (under the shared lock, KA-APPEND); a reader for which the xid
        // matters (xid < its xmax) holds the lock after a later exclusive
        // section of replay, which orders the store before its load.
        Xid(self.last_overflowed.load(Relaxed))
    }

    /// Replay: raises `last_overflowed` to `xid` (see `last_overflowed`).
    pub(crate) fn raise_last_overflowed(&self, xid: Xid) {
        // Relaxed: see `last_overflowed`. Replay is the only writer.
        if xid.0 > self.last_overflowed.load(Relaxed) {
            // Relaxed: see `last_overflowed`.
            self.last_overflowed.store(xid.0, Relaxed);
        }
    }

    /// Valid entries (replay's count).
    pub(crate) fn len(&self) -> usize {
        // Relaxed: replay is the only writer and the only caller that needs
        // the exact value; others use it as a statistic.
        self.valid.load(Relaxed)
    }

    /// Free slots above the head.
    pub(crate) fn room(&self) -> usize {
        // Relaxed: replay, the only writer of `head`, reads its own value.
        self.entries.len() - self.head.load(Relaxed)
    }

    /// Replay, holding the shared lock, with `room() >= xids.len()`:
    /// appends `xids` (increasing, above every entry) as valid entries
    /// (KA-APPEND).
    pub(crate) fn append(&self, xids: impl IntoIterator<Item = Xid>) {
        // Relaxed: replay is the only writer of `head`.
        let mut head = self.head.load(Relaxed);
        let start = head;
        let mut last = if head > self.tail { self.entry(head - 1).0 } else { Xid::INVALID };
        for xid in xids {
            assert!(xid > last, "KnownAssignedXids out of order: {xid:?} after {last:?}");
            // Relaxed: published by the Release head store below.
            self.entries[head].store(xid.0 | VALID, Relaxed);
            last = xid;
            head += 1;
        }
        if head != start {
            // Relaxed: replay is the only writer of the count.
            self.valid.fetch_add(head - start, Relaxed);
            // Release (KA-APPEND): pairs with the Acquire load in `head`; a
            // reader that sees the new head sees the entries written above,
            // not what a compression left in those slots.
            self.head.store(head, Release);
        }
    }

    /// Replay, exclusive lock: removes `xid` if it is a valid entry.
    /// Returns whether it was. Call `after_removals` when done.
    pub(crate) fn remove(&mut self, xid: Xid) -> bool {
        // Relaxed: the exclusive lock orders every access.
        let head = self.head.load(Relaxed);
        let Some(i) = self.find(xid, head) else { return false };
        if !self.entry(i).1 {
            return false;
        }
        // Relaxed: under the exclusive lock; its release orders this store
        // before every later reader's acquire.
        self.entries[i].store(xid.0, Relaxed);
        // Relaxed: replay is the only writer of the count.
        self.valid.fetch_sub(1, Relaxed);
        true
    }

    /// Replay, exclusive lock, after a batch of removals: moves the tail
    /// over the invalid prefix and compresses when at least as many entries
    /// are invalid as valid (amortised: the move costs at most twice the
    /// removals since the last one).
    pub(crate) fn after_removals(&mut self) {
        // Relaxed: the exclusive lock orders every access.
        let head = self.head.load(Relaxed);
        while self.tail < head && !self.entry(self.tail).1 {
            self.tail += 1;
        }
        let used = head - self.tail;
        if self.tail == head {
            // Empty: start again at 0, for free.
            self.tail = 0;
            // Relaxed: the exclusive lock orders it before any reader.
            self.head.store(0, Relaxed);
        } else if used >= 2 * self.len() && used - self.len() >= 16 {
            self.compress();
        }
    }

    /// Replay, exclusive lock: slides the valid entries down to index 0.
    fn compress(&mut self) {
        // Relaxed throughout: the exclusive lock orders every access.
        let head = self.head.load(Relaxed);
        let mut to = 0;
        for from in self.tail..head {
            let word = self.entries[from].load(Relaxed);
            if word & VALID != 0 {
                self.entries[to].store(word, Relaxed);
                to += 1;
            }
        }
        self.tail = 0;
        self.head.store(to, Relaxed);
    }

    /// Replay, exclusive lock: makes room for `n` more entries, compressing
    /// first and growing (doubling) if that is not enough.
    pub(crate) fn make_room(&mut self, n: usize) {
        if self.room() >= n {
            return;
        }
        self.compress();
        if self.room() >= n {
            return;
        }
        // Relaxed: the exclusive lock orders every access.
        let head = self.head.load(Relaxed);
        let capacity = (self.entries.len() * 2).max(head + n);
        let grown: Box<[AtomicU64]> = (0..capacity)
            .map(|i| {
                // Relaxed: exclusive lock.
                AtomicU64::new(if i < head { self.entries[i].load(Relaxed) } else { 0 })
            })
            .collect();
        self.entries = grown;
    }

    /// Every valid entry, in order (shared lock).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn valid_entries(&self) -> Vec<Xid> {
        (self.tail..self.head()).map(|i| self.entry(i)).filter(|&(_, v)| v).map(|(x, _)| x).collect()
    }

    /// The occupied range `head - tail` (for tests of the amortisation).
    #[cfg(all(test, not(loom)))]
    pub(crate) fn span(&self) -> usize {
        self.head() - self.tail
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn xids(r: std::ops::Range<u64>) -> impl Iterator<Item = Xid> {
        r.map(Xid)
    }

    #[test]
    fn append_remove_search() {
        let mut ka = KnownAssignedXids::new(1);
        ka.make_room(10);
        ka.append(xids(10..20));
        assert_eq!(ka.len(), 10);
        assert!(ka.contains(Xid(15)) && !ka.contains(Xid(20)) && !ka.contains(Xid(9)));
        assert!(ka.remove(Xid(15)));
        assert!(!ka.remove(Xid(15)), "removing twice is not an error");
        assert!(!ka.remove(Xid(99)), "removing a missing xid is not an error");
        ka.after_removals();
        assert!(!ka.contains(Xid(15)));
        assert_eq!(ka.first_valid(), Some(Xid(10)));
        let mut out = Vec::new();
        ka.copy_below(Xid(17), &mut out);
        assert_eq!(out, [10, 11, 12, 13, 14, 16].map(Xid));
        assert!(ka.remove(Xid(10)) && ka.remove(Xid(11)));
        ka.after_removals();
        assert_eq!(ka.first_valid(), Some(Xid(12)), "the tail moved over the invalid prefix");
    }

    #[test]
    #[should_panic(expected = "out of order")]
    fn appends_must_increase() {
        let mut ka = KnownAssignedXids::new(1);
        ka.make_room(3);
        ka.append(xids(10..12));
        ka.append([Xid(11)]);
    }

    /// Compression keeps the occupied range at most about twice the valid
    /// entries, and growth keeps every entry.
    #[test]
    fn compression_is_amortised_and_growth_keeps_entries() {
        let mut ka = KnownAssignedXids::new(1);
        let mut next = 100u64;
        let mut live = std::collections::BTreeSet::new();
        // Smaller under Miri, which interprets every access.
        let (rounds, burst) = if cfg!(miri) { (200u64, 2_000u64) } else { (2_000, 50_000) };
        for round in 0..rounds {
            ka.make_room(3);
            ka.append(xids(next..next + 3));
            live.extend(next..next + 3);
            next += 3;
            // Remove every other xid of an older batch, and all of a batch
            // from long ago: holes in the middle as well as at the tail.
            for x in [next - 9, next - 7, next - 60, next - 59, next - 58] {
                if live.remove(&x) {
                    assert!(ka.remove(Xid(x)));
                }
            }
            ka.after_removals();
            assert_eq!(ka.len(), live.len(), "round {round}");
            assert!(ka.span() <= 2 * ka.len() + 16, "round {round}: span {} for {}", ka.span(), ka.len());
        }
        assert_eq!(ka.valid_entries(), live.iter().map(|&x| Xid(x)).collect::<Vec<_>>());
        for &x in &live {
            assert!(ka.contains(Xid(x)));
        }
        // A burst far larger than the array grows it.
        ka.make_room(burst as usize);
        ka.append(xids(next..next + burst));
        assert_eq!(ka.len(), live.len() + burst as usize);
        assert!(ka.contains(Xid(next)) && ka.contains(Xid(next + burst - 1)));
        assert!(live.iter().all(|&x| ka.contains(Xid(x))));
    }
}
