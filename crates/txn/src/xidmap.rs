//! A paged map from xid to one 64-bit word of state, read without locks.
//!
//! The commit-status log (2 bits per xid, 32 xids per word) and the parent
//! links of subtransactions (one word per xid) are both this structure.
//!
//! ```text
//!   ring slot:   0        1        2        3          (ring = 4 slots)
//!   page no:   [ 8 ]    [ 5 ]    [ 6 ]    [ 7 ]        oldest kept page = 5
//!               ^ recycled from page 4 once the horizon passed it
//! ```
//!
//! Page numbers map to a fixed ring of slots, slot = page number mod ring
//! length, and the ring's length bounds how many pages the map describes at
//! once. A page is never freed while the map lives: truncation only marks
//! pages below the horizon reusable, and extension reuses such a page for
//! the next page number, in its own slot or, taken out of the slot it
//! occupied, in another (XIDMAP-REUSE). Pages are allocated only when no
//! truncated one is there to reuse, so the memory a map holds is its
//! largest span of live pages, not its ring. Never freeing keeps every read
//! memory-safe without hazard pointers or epochs; the *meaning* of a read is
//! protected by the page-number tag: a read that overlaps a recycle is
//! answered "truncated", never with the recycled page's words
//! (XIDMAP-TRUNCATE in the crate README). The truncation point is also a
//! floor below which every xid has finished (XIDMAP-FLOOR): whoever meets a
//! truncated xid knows it is not running, without the page.
//!
//! ```text
//!   ring slot:   0        1        2        3          (ring = 4 slots)
//!   page no:   [ 8 ]    [ - ]    [ 6 ]    [ 7 ]        oldest kept page = 6
//!               ^ page 5's memory, taken out of slot 1 once the horizon
//!                 passed it and reused for page 8
//! ```
//!
//! Recycling a page, as a reader racing with it sees it (a seqlock whose
//! sequence number is the tag):
//!
//! ```text
//!   extend (generator lock held)          load(xid)
//!   truncate: oldest = T      Release     tag == page?       Acquire  (word)
//!   tag   = u64::MAX          Release     v = words[i]       Acquire
//!   words = 0, 0, ...         Release     tag == page?       Acquire  (re-check)
//!   tag   = new page number   Release     -> Some(v), or None: truncated
//! ```
//!
//! A reader whose word load reads a zero (or anything written later) has
//! synchronised with the Release zeroing, so its re-check sees the tag
//! changed; a reader that sees the tag changed has synchronised with the
//! Release tag store, so it sees `oldest` past its xid and answers
//! "truncated", not "never extended". A page taken out of its slot first
//! empties the slot (Release): a reader that finds the slot empty sees
//! `oldest` past its xid too, and one still holding the page's pointer
//! re-checks the tag on that same page, whichever slot holds it by then.
//!
//! Extension and truncation are serialised by the caller (the xid generator's
//! lock); reads are lock-free.

use crate::sync::atomic::{AtomicPtr, AtomicU64, Ordering::*};
use crate::xid::Xid;

/// Words per page unless configured otherwise (8 kB pages, as PostgreSQL's
/// SLRU pages). Small under loom so models stay tractable.
#[cfg(not(loom))]
pub(crate) const PAGE_WORDS: usize = 1024;
#[cfg(loom)]
pub(crate) const PAGE_WORDS: usize = 2;

/// What the map knows about one xid ([`XidMap::lookup`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Lookup {
    /// The word describing the xid, read while its page held the xid.
    Word(u64),
    /// Below the truncation point, and its page was recycled: the xid has
    /// finished (XIDMAP-FLOOR), but what this map said about it is gone.
    Truncated,
    /// Its page was never extended: the xid was never handed out.
    Missing,
}

/// What [`XidMap::extend_with`] did.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Extend {
    /// The page holding the xid is there, zeroed if it is new.
    Ready,
    /// The ring slot holds a page still above the truncation point.
    Full,
    /// A new page would have to be allocated: no page below the truncation
    /// point is there to reuse. Asked not to allocate, nothing was done.
    WouldAllocate,
}

struct Page {
    /// The page number this page currently holds, or `u64::MAX` while free.
    tag: AtomicU64,
    words: Box<[AtomicU64]>,
}

/// See the module documentation.
pub(crate) struct XidMap {
    /// log2 of how many xids one word describes (32 for the status log, 1
    /// for parents and CSNs).
    word_shift: u32,
    /// log2 of how many xids one page describes.
    page_shift: u32,
    slots: Box<[AtomicPtr<Page>]>,
    /// First xid still answered; everything below was truncated.
    oldest: AtomicU64,
    /// The lowest page number that may still be attached to its ring slot
    /// (XIDMAP-REUSE), and one past the highest ever extended (0: none).
    /// Written only by `extend` and `set_floor`, under the generator lock.
    low: AtomicU64,
    end: AtomicU64,
    /// Pages allocated (resident for the map's life).
    resident: AtomicU64,
}

impl XidMap {
    /// A map able to hold `ring_pages` pages of [`PAGE_WORDS`] words at once.
    #[cfg(test)]
    pub(crate) fn new(xids_per_word: u64, ring_pages: usize) -> Self {
        Self::with_page_words(xids_per_word, ring_pages, PAGE_WORDS)
    }

    /// A map able to hold `ring_pages` pages of `page_words` words (a power
    /// of two) at once.
    pub(crate) fn with_page_words(xids_per_word: u64, ring_pages: usize, page_words: usize) -> Self {
        assert!(ring_pages >= 2, "an xid map needs at least two pages");
        assert!(xids_per_word.is_power_of_two(), "xids per word must be a power of two");
        assert!(page_words.is_power_of_two(), "words per page must be a power of two");
        let word_shift = xids_per_word.trailing_zeros();
        let page_shift = word_shift + page_words.trailing_zeros();
        let slots = (0..ring_pages).map(|_| AtomicPtr::new(std::ptr::null_mut())).collect();
        Self {
            word_shift,
            page_shift,
            slots,
            oldest: AtomicU64::new(0),
            low: AtomicU64::new(0),
            end: AtomicU64::new(0),
            resident: AtomicU64::new(0),
        }
    }

    /// Xids one page describes.
    pub(crate) fn xids_per_page(&self) -> u64 {
        1 << self.page_shift
    }

    fn page_words(&self) -> usize {
        1 << (self.page_shift - self.word_shift)
    }

    /// Bytes of one page's words.
    pub(crate) fn page_bytes(&self) -> usize {
        self.page_words() * 8
    }

    /// How many xids the ring can describe at once: the bound on
    /// `next_xid - oldest` before extension fails.
    pub(crate) fn capacity_xids(&self) -> u64 {
        self.xids_per_page() * self.slots.len() as u64
    }

    /// Pages in the ring.
    pub(crate) fn ring_pages(&self) -> usize {
        self.slots.len()
    }

    /// Pages allocated so far. They are never freed while the map lives;
    /// a page below the truncation point is reused for the next page
    /// needed, in whatever ring slot (XIDMAP-REUSE), so this is the largest
    /// span of pages the map ever had to hold at once, plus one.
    pub(crate) fn resident_pages(&self) -> u64 {
        // Relaxed: a statistic; it only grows.
        self.resident.load(Relaxed)
    }

    fn page_no(&self, xid: Xid) -> u64 {
        xid.0 >> self.page_shift
    }

    fn word_index(&self, xid: Xid) -> usize {
        ((xid.0 & (self.xids_per_page() - 1)) >> self.word_shift) as usize
    }

    fn slot(&self, page_no: u64) -> &AtomicPtr<Page> {
        &self.slots[(page_no % self.slots.len() as u64) as usize]
    }

    /// Position of `xid` inside its word (0 for one-xid-per-word maps).
    pub(crate) fn shift_in_word(&self, xid: Xid) -> u64 {
        xid.0 & ((1 << self.word_shift) - 1)
    }

    /// The oldest xid still described: the truncation point. Every xid
    /// below it has finished (XIDMAP-FLOOR).
    pub(crate) fn oldest(&self) -> Xid {
        // Acquire (XIDMAP-FLOOR): pairs with the Release store in `truncate`,
        // which follows the horizon computation that chose the point; a
        // reader that finds an xid below it also sees that xid's final
        // status-log and CSN-log entries.
        Xid(self.oldest.load(Acquire))
    }

    /// Makes sure the page holding `xid` exists and is zeroed. Called under
    /// the xid generator lock before `xid` is handed out, so no reader can
    /// look at the page before it is ready. Returns false when the ring is
    /// full: the page would overwrite one that is still above the
    /// truncation point.
    pub(crate) fn extend(&self, xid: Xid) -> bool {
        self.extend_with(xid, true) == Extend::Ready
    }

    /// [`XidMap::extend`], which allocates a new page only if
    /// `may_allocate`: otherwise a caller that can truncate first (and so
    /// reuse a page instead) is told [`Extend::WouldAllocate`].
    pub(crate) fn extend_with(&self, xid: Xid, may_allocate: bool) -> Extend {
        let page_no = self.page_no(xid);
        let slot = self.slot(page_no);
        // Acquire: pairs with the Release stores of the pointer below.
        // (Only this function stores to slots, always under the generator
        // lock, so this is the same thread's or an HB-ordered earlier store
        // anyway.)
        let page = slot.load(Acquire);
        let oldest_page = self.page_no(self.oldest());
        if !page.is_null() {
            // SAFETY: pages are allocated below and freed only in Drop.
            let page = unsafe { &*page };
            // Relaxed: the tag is written only here, always under the
            // generator lock, which orders this load after those stores.
            let held = page.tag.load(Relaxed);
            if held == page_no {
                return Extend::Ready;
            }
            if held >= oldest_page {
                return Extend::Full;
            }
            // The slot's own page is below the truncation point: reuse it.
            self.recycle(page, page_no);
            // Relaxed (this and the next): bookkeeping of the generator
            // lock's holder; see the field.
            if self.low.load(Relaxed) == held {
                self.low.store(held + 1, Relaxed);
            }
            self.extended(page_no);
            return Extend::Ready;
        }
        // The slot is empty: take the lowest page the truncation point
        // passed from its own slot (XIDMAP-REUSE), or allocate one.
        let page = match self.detach_below(oldest_page.min(page_no)) {
            Some(page) => {
                // SAFETY: a detached page is live (freed only in Drop) and,
                // until the store below, reachable from no slot.
                self.recycle(unsafe { &*page }, page_no);
                page
            }
            None if may_allocate => {
                // Relaxed: a statistic.
                self.resident.fetch_add(1, Relaxed);
                Box::into_raw(Box::new(Page {
                    tag: AtomicU64::new(page_no),
                    words: (0..self.page_words()).map(|_| AtomicU64::new(0)).collect(),
                }))
            }
            None => return Extend::WouldAllocate,
        };
        // Release (XIDMAP-EXTEND): pairs with the Acquire load in `page`; a
        // reader that finds the pointer sees the zeroed words and the tag.
        slot.store(page, Release);
        self.extended(page_no);
        Extend::Ready
    }

    /// Records that `page_no` was extended (generator lock held).
    fn extended(&self, page_no: u64) {
        // Relaxed (all three): bookkeeping of the generator lock's holder.
        if self.end.load(Relaxed) == 0 {
            self.low.store(page_no, Relaxed);
        }
        self.end.fetch_max(page_no + 1, Relaxed);
    }

    /// Takes the lowest attached page whose number is below `below` out of
    /// its ring slot, for reuse (generator lock held; XIDMAP-REUSE).
    fn detach_below(&self, below: u64) -> Option<*mut Page> {
        // Relaxed (low and end): bookkeeping of the generator lock's holder.
        let end = self.end.load(Relaxed);
        let mut low = self.low.load(Relaxed);
        let mut found = None;
        while low < below && low < end {
            let slot = self.slot(low);
            // Acquire: as in `extend_with`.
            let page = slot.load(Acquire);
            low += 1;
            // SAFETY: pages are freed only in Drop.
            // Relaxed tag load: written only under the generator lock.
            if !page.is_null() && unsafe { &*page }.tag.load(Relaxed) == low - 1 {
                // Release (XIDMAP-REUSE): pairs with the Acquire slot load
                // in `page`; a reader that finds the slot empty also sees
                // the truncation point (stored before, under the generator
                // lock) past its xid, so `lookup` answers `Truncated`.
                slot.store(std::ptr::null_mut(), Release);
                found = Some(page);
                break;
            }
        }
        self.low.store(low, Relaxed);
        found
    }

    /// Zeroes `page` for `page_no` under the seqlock protocol (the module
    /// docs): a reader still asking about an xid of its old page gets
    /// "truncated", never a word of the new one.
    fn recycle(&self, page: &Page, page_no: u64) {
        // Release (XIDMAP-TRUNCATE): pairs with the Acquire tag loads in
        // `page` and `load`; a reader that sees the page leave its old
        // number also sees the `truncate` store that allowed it (sequenced
        // before, under the generator lock), so `lookup` answers `Truncated`.
        page.tag.store(u64::MAX, Release);
        for w in page.words.iter() {
            // Release (XIDMAP-TRUNCATE): pairs with the Acquire word load in
            // `load`; a reader that reads this zero, or any later value of the
            // word, also sees the u64::MAX tag stored above, so its re-check
            // fails and it never takes the zero for its own xid's word.
            w.store(0, Release);
        }
        // Release (XIDMAP-EXTEND): pairs with the Acquire tag load in `page`;
        // a reader that sees the new number sees the zeroed words.
        page.tag.store(page_no, Release);
    }

    /// Sets the floor (the truncation point) to `xid`, up or down: every
    /// xid below it has finished (XIDMAP-FLOOR). Only while no xid at or
    /// above the old and the new floor has been handed out: at engine
    /// creation (`first_xid`) and at a standby's replay start
    /// (REPLAY-START), under the generator lock or before the engine is
    /// shared. The first page extended afterwards may be any page number,
    /// not page 0: a ring slot is filled on its first use whatever page it
    /// holds.
    pub(crate) fn set_floor(&self, xid: Xid) {
        // Release (XIDMAP-FLOOR): pairs with the Acquire load in `oldest`,
        // like the store in `truncate`.
        self.oldest.store(xid.0, Release);
    }

    /// Forgets every xid below `xid`. The caller has computed `xid` as at
    /// most a horizon (`oldest_considered_running`), so every xid below it
    /// has finished, and guarantees that nobody still needs what the map said
    /// about them (XIDMAP-TRUNCATE).
    pub(crate) fn truncate(&self, xid: Xid) {
        // Relaxed: the only writer is the caller, under the generator lock.
        if xid.0 > self.oldest.load(Relaxed) {
            // Release (XIDMAP-FLOOR): pairs with the Acquire load in `oldest`;
            // the horizon computation that chose `xid` happened before, and
            // with it every completion below `xid`.
            self.oldest.store(xid.0, Release);
        }
    }

    /// The page holding `xid`, checked to hold it when looked at, or `None`
    /// if its slot is empty or holds another page number (never extended,
    /// or truncated and reused).
    fn page(&self, xid: Xid) -> Option<(&Page, u64)> {
        let page_no = self.page_no(xid);
        // Acquire (XIDMAP-EXTEND, XIDMAP-REUSE): pairs with the Release
        // stores of the pointer in `extend_with` and of the empty slot in
        // `detach_below`.
        let page = self.slot(page_no).load(Acquire);
        if page.is_null() {
            return None;
        }
        // SAFETY: a page, once allocated, lives until Drop, whichever slot
        // holds it now.
        let page = unsafe { &*page };
        // Acquire (XIDMAP-EXTEND): pairs with the Release tag stores in
        // `recycle`; if the tag matches, the page was zeroed for this page
        // number before we read any word, and if it shows a recycle, the
        // truncation that allowed it is visible (`lookup`).
        (page.tag.load(Acquire) == page_no).then_some((page, page_no))
    }

    /// The word describing `xid`, or `None` if its page does not exist or holds
    /// another page number (never extended, or truncated and recycled). For
    /// the writers of a live xid (its page cannot be reused while it
    /// runs); readers use [`XidMap::load`] or [`XidMap::lookup`], which
    /// re-check the tag after reading.
    pub(crate) fn word(&self, xid: Xid) -> Option<&AtomicU64> {
        self.page(xid).map(|(page, _)| &page.words[self.word_index(xid)])
    }
}

impl XidMap {
    /// Loads the word describing `xid` with Acquire ordering, re-checking
    /// afterwards that the page was not recycled during the read. `None`:
    /// the page was never extended for `xid`, or was recycled (see
    /// [`XidMap::lookup`] to tell the two apart).
    pub(crate) fn load(&self, xid: Xid) -> Option<u64> {
        let (page, page_no) = self.page(xid)?;
        // Acquire: pairs with the Release read-modify-writes of the status
        // log, the Release stores of parent links and CSN-log entries (see
        // their callers), and the Release zeroing of a recycle: if this
        // reads a value written after the page left `xid`'s page number,
        // the re-check below sees the changed tag.
        let value = page.words[self.word_index(xid)].load(Acquire);
        // Acquire (XIDMAP-TRUNCATE): pairs with the Release tag stores of a
        // recycle; a changed tag also shows the truncation point that
        // allowed the recycle (`lookup`). The same page is re-checked,
        // whichever slot holds it by now.
        (page.tag.load(Acquire) == page_no).then_some(value)
    }

    /// What the map says about `xid`, telling a recycled page (the xid is
    /// below the truncation point, and finished) from one never extended.
    pub(crate) fn lookup(&self, xid: Xid) -> Lookup {
        match self.load(xid) {
            Some(word) => Lookup::Word(word),
            // If `load` failed because the page was recycled or its slot
            // emptied, one of its Acquire loads read a Release store that
            // followed the truncation past `xid`: `oldest` shows it.
            None if xid < self.oldest() => Lookup::Truncated,
            None => Lookup::Missing,
        }
    }
}

impl Drop for XidMap {
    fn drop(&mut self) {
        for slot in self.slots.iter() {
            // Relaxed: `&mut self` means no other thread can hold a reference.
            let page = slot.load(Relaxed);
            if !page.is_null() {
                // SAFETY: allocated by Box::into_raw in `extend_with`; every
                // page is attached to exactly one slot between extensions,
                // so it is freed once here.
                drop(unsafe { Box::from_raw(page) });
            }
        }
    }
}

// SAFETY: the raw page pointers are owned by the map and only dereferenced as
// shared references to atomics.
unsafe impl Send for XidMap {}
unsafe impl Sync for XidMap {}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn extend_read_truncate_recycle() {
        let map = XidMap::new(1, 2);
        let per_page = map.xids_per_page();
        assert!(map.word(Xid(5)).is_none(), "no page yet");
        assert!(map.extend(Xid(5)));
        map.word(Xid(5)).unwrap().store(7, Relaxed);
        assert!(map.extend(Xid(per_page)));
        // The ring holds two pages; a third would overwrite page 0.
        assert!(!map.extend(Xid(2 * per_page)));
        assert_eq!(map.lookup(Xid(5)), Lookup::Word(7));
        assert_eq!(map.lookup(Xid(2 * per_page)), Lookup::Missing, "not extended yet");
        map.truncate(Xid(per_page));
        // Truncated but not yet recycled: the word is still there.
        assert_eq!(map.lookup(Xid(5)), Lookup::Word(7));
        assert!(map.extend(Xid(2 * per_page)));
        assert!(map.word(Xid(5)).is_none(), "recycled page answers None");
        assert_eq!(map.lookup(Xid(5)), Lookup::Truncated, "XIDMAP-FLOOR: recycled below the point");
        assert_eq!(map.word(Xid(2 * per_page + 5)).unwrap().load(Relaxed), 0);
        assert_eq!(map.lookup(Xid(3 * per_page)), Lookup::Missing);
    }

    /// XIDMAP-REUSE: with the truncation point kept close to the newest
    /// page, a large ring allocates only the pages live at once; a page
    /// taken from its slot reads "truncated" there, never "missing".
    #[test]
    fn truncated_pages_are_reused_in_other_slots() {
        let map = XidMap::with_page_words(1, 64, 4);
        let per_page = map.xids_per_page();
        assert_eq!(map.page_bytes(), 32);
        for page in 0..1000 {
            let xid = Xid(page * per_page);
            if page >= 2 {
                map.truncate(Xid((page - 1) * per_page));
            }
            assert_eq!(map.extend_with(xid, page < 2), Extend::Ready, "page {page}");
            map.word(xid).unwrap().store(page, Relaxed);
            if page >= 2 {
                assert_eq!(map.lookup(Xid((page - 2) * per_page)), Lookup::Truncated);
            }
            assert_eq!(map.lookup(xid), Lookup::Word(page));
        }
        assert_eq!(map.resident_pages(), 2, "two pages live at once, two allocated");
        // Nothing to reuse: asked not to allocate, the map says so.
        let map = XidMap::with_page_words(1, 4, 4);
        assert!(map.extend(Xid(0)));
        assert_eq!(map.extend_with(Xid(per_page), false), Extend::WouldAllocate);
        assert_eq!(map.lookup(Xid(per_page)), Lookup::Missing);
        assert!(map.extend(Xid(per_page)) && map.extend(Xid(2 * per_page)) && map.extend(Xid(3 * per_page)));
        assert_eq!(map.extend_with(Xid(4 * per_page), true), Extend::Full, "four live pages fill the ring");
    }

    /// A map whose first xid is far from 0 (a primary restarted with
    /// `first_xid`, or a standby's start list): its first page is page N,
    /// ring slot N mod ring, and the ring still fills and recycles by page
    /// number.
    #[test]
    fn a_map_may_start_at_any_page() {
        let map = XidMap::new(1, 2);
        let per_page = map.xids_per_page();
        let first = Xid(10_000_000);
        map.set_floor(first);
        assert_eq!(map.lookup(Xid(5)), Lookup::Truncated, "below the floor: finished");
        assert!(map.extend(first));
        map.word(first).unwrap().store(7, Relaxed);
        assert_eq!(map.lookup(first), Lookup::Word(7));
        let next_page = Xid((first.0 / per_page + 1) * per_page);
        assert!(map.extend(next_page));
        assert!(!map.extend(Xid(next_page.0 + per_page)), "two pages in use: the ring is full");
        map.truncate(next_page);
        assert!(map.extend(Xid(next_page.0 + per_page)), "the first page is recycled");
        assert_eq!(map.lookup(first), Lookup::Truncated);
    }
}
