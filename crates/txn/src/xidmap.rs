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
//! Pages live in a fixed ring of slots, slot = page number mod ring length, and
//! are allocated the first time their slot is used. A page is never freed while
//! the map lives: truncation only marks pages below the horizon reusable, and
//! extension recycles such a page for a new page number. That keeps every read
//! memory-safe without hazard pointers or epochs; the *meaning* of a read is
//! protected by the page-number tag: a read that overlaps a recycle is
//! answered "truncated", never with the recycled page's words
//! (XIDMAP-TRUNCATE in the crate README). The truncation point is also a
//! floor below which every xid has finished (XIDMAP-FLOOR): whoever meets a
//! truncated xid knows it is not running, without the page.
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
//! "truncated", not "never extended".
//!
//! Extension and truncation are serialised by the caller (the xid generator's
//! lock); reads are lock-free.

use crate::sync::atomic::{AtomicPtr, AtomicU64, Ordering::*};
use crate::xid::Xid;

/// Words per page. Small under loom so models stay tractable.
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

struct Page {
    /// The page number this page currently holds, or `u64::MAX` while free.
    tag: AtomicU64,
    words: Box<[AtomicU64]>,
}

/// See the module documentation.
pub(crate) struct XidMap {
    /// How many xids one word describes (32 for the status log, 1 for parents).
    xids_per_word: u64,
    slots: Box<[AtomicPtr<Page>]>,
    /// First xid still answered; everything below was truncated.
    oldest: AtomicU64,
}

impl XidMap {
    /// A map able to hold `ring_pages` pages at once.
    pub(crate) fn new(xids_per_word: u64, ring_pages: usize) -> Self {
        assert!(ring_pages >= 2, "an xid map needs at least two pages");
        let slots = (0..ring_pages).map(|_| AtomicPtr::new(std::ptr::null_mut())).collect();
        Self { xids_per_word, slots, oldest: AtomicU64::new(0) }
    }

    /// Xids one page describes.
    pub(crate) fn xids_per_page(&self) -> u64 {
        self.xids_per_word * PAGE_WORDS as u64
    }

    /// How many xids the ring can describe at once: the bound on
    /// `next_xid - oldest` before extension fails.
    pub(crate) fn capacity_xids(&self) -> u64 {
        self.xids_per_page() * self.slots.len() as u64
    }

    fn page_no(&self, xid: Xid) -> u64 {
        xid.0 / self.xids_per_page()
    }

    fn word_index(&self, xid: Xid) -> usize {
        ((xid.0 % self.xids_per_page()) / self.xids_per_word) as usize
    }

    /// Position of `xid` inside its word (0 for one-xid-per-word maps).
    pub(crate) fn shift_in_word(&self, xid: Xid) -> u64 {
        xid.0 % self.xids_per_word
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

    /// Makes sure the page holding `xid` exists and is zeroed. Called under the
    /// xid generator lock before `xid` is handed out, so no reader can look at
    /// the page before it is ready. Returns false when the ring is full: the
    /// page would overwrite one that is still above the truncation point.
    pub(crate) fn extend(&self, xid: Xid) -> bool {
        let page_no = self.page_no(xid);
        let slot = &self.slots[(page_no % self.slots.len() as u64) as usize];
        // Acquire: pairs with the Release stores below, so the page contents
        // written when the slot was filled are visible. (Only this function
        // stores to slots, always under the generator lock, so this is the
        // same thread's or an HB-ordered earlier store anyway.)
        let page = slot.load(Acquire);
        if page.is_null() {
            let fresh = Box::new(Page {
                tag: AtomicU64::new(page_no),
                words: (0..PAGE_WORDS).map(|_| AtomicU64::new(0)).collect(),
            });
            // Release (XIDMAP-EXTEND): pairs with the Acquire load in `word`;
            // a reader that finds the pointer sees the zeroed words and tag.
            slot.store(Box::into_raw(fresh), Release);
            return true;
        }
        // SAFETY: pages are allocated above and freed only in Drop.
        let page = unsafe { &*page };
        // Relaxed: the tag is written only here and by the allocation above,
        // always under the generator lock, which orders this load after those
        // stores.
        let held = page.tag.load(Relaxed);
        if held == page_no {
            return true;
        }
        let oldest_page = self.page_no(self.oldest());
        if held >= oldest_page {
            return false;
        }
        // Recycle a page the truncation point has passed (XIDMAP-TRUNCATE; the
        // seqlock in the module docs). A reader still asking about an xid of
        // the old page gets "truncated", never a word of the new one.
        // Release (XIDMAP-TRUNCATE): pairs with the Acquire tag loads in
        // `word` and `load`; a reader that sees the page leave its old number
        // also sees the `truncate` store that allowed it (sequenced before,
        // under the generator lock), so `lookup` answers `Truncated`.
        page.tag.store(u64::MAX, Release);
        for w in page.words.iter() {
            // Release (XIDMAP-TRUNCATE): pairs with the Acquire word load in
            // `load`; a reader that reads this zero, or any later value of the
            // word, also sees the u64::MAX tag stored above, so its re-check
            // fails and it never takes the zero for its own xid's word.
            w.store(0, Release);
        }
        // Release (XIDMAP-EXTEND): pairs with the Acquire tag load in `word`;
        // a reader that sees the new number sees the zeroed words.
        page.tag.store(page_no, Release);
        true
    }

    /// Sets the floor (the truncation point) to `xid`, up or down: every
    /// xid below it has finished (XIDMAP-FLOOR). Only while no xid at or
    /// above the old and the new floor has been handed out: at engine
    /// creation (`first_xid`) and at a standby's replay start
    /// (REPLAY-START), under the generator lock or before the engine is
    /// shared. The first page extended afterwards may be any page number,
    /// not page 0: a ring slot is allocated on its first use whatever page
    /// it holds.
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

    /// The word describing `xid`, or `None` if its page does not exist or holds
    /// another page number (never extended, or truncated and recycled). For
    /// the writers of a live xid; readers use [`XidMap::load`] or
    /// [`XidMap::lookup`], which re-check the tag after reading.
    pub(crate) fn word(&self, xid: Xid) -> Option<&AtomicU64> {
        let page_no = self.page_no(xid);
        let slot = &self.slots[(page_no % self.slots.len() as u64) as usize];
        // Acquire (XIDMAP-EXTEND): pairs with the Release store of the pointer
        // in `extend`.
        let page = slot.load(Acquire);
        if page.is_null() {
            return None;
        }
        // SAFETY: a non-null slot points to a page that lives until Drop.
        let page = unsafe { &*page };
        // Acquire (XIDMAP-EXTEND): pairs with the Release tag stores in
        // `extend`; if the tag matches, the page was zeroed for this page
        // number before we read any word, and if it shows a recycle, the
        // truncation that allowed it is visible (`lookup`).
        if page.tag.load(Acquire) != page_no {
            return None;
        }
        Some(&page.words[self.word_index(xid)])
    }
}

impl XidMap {
    /// Loads the word describing `xid` with Acquire ordering, re-checking
    /// afterwards that the page was not recycled during the read. `None`:
    /// the page was never extended for `xid`, or was recycled (see
    /// [`XidMap::lookup`] to tell the two apart).
    pub(crate) fn load(&self, xid: Xid) -> Option<u64> {
        let word = self.word(xid)?;
        // Acquire: pairs with the Release read-modify-writes of the status
        // log, the Release stores of parent links and CSN-log entries (see
        // their callers), and the Release zeroing of a recycle in `extend`:
        // if this reads a value written after the page left `xid`'s page
        // number, the re-check below sees the changed tag.
        let value = word.load(Acquire);
        let page_no = self.page_no(xid);
        let slot = &self.slots[(page_no % self.slots.len() as u64) as usize];
        // SAFETY: `word` returned Some, so the slot holds a live page.
        let page = unsafe { &*slot.load(Acquire) };
        // Acquire (XIDMAP-TRUNCATE): pairs with the Release tag stores of a
        // recycle in `extend`; a changed tag also shows the truncation point
        // that allowed the recycle (`lookup`).
        (page.tag.load(Acquire) == page_no).then_some(value)
    }

    /// What the map says about `xid`, telling a recycled page (the xid is
    /// below the truncation point, and finished) from one never extended.
    pub(crate) fn lookup(&self, xid: Xid) -> Lookup {
        match self.load(xid) {
            Some(word) => Lookup::Word(word),
            // If `load` failed because the page was recycled, one of its
            // Acquire tag loads read a recycle's Release tag store, and the
            // truncation past `xid` happened before that store: `oldest`
            // shows it.
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
                // SAFETY: allocated by Box::into_raw in `extend`, freed once here.
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
