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
//! protected by the rule that nobody asks about an xid below the truncation
//! point (XIDMAP-TRUNCATE in the crate README), and a read of such an xid is
//! detected by the page-number tag and answered `None`.
//!
//! Extension and truncation are serialised by the caller (the xid generator's
//! lock); reads are lock-free.

use crate::sync::atomic::{fence, AtomicPtr, AtomicU64, Ordering::*};
use crate::xid::Xid;

/// Words per page. Small under loom so models stay tractable.
#[cfg(not(loom))]
pub(crate) const PAGE_WORDS: usize = 1024;
#[cfg(loom)]
pub(crate) const PAGE_WORDS: usize = 2;

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

    /// The oldest xid still described.
    pub(crate) fn oldest(&self) -> Xid {
        // Relaxed: callers use this as a hint (capacity checks under the xid
        // generator lock, which also serialises the only writer).
        Xid(self.oldest.load(Relaxed))
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
        // Relaxed: the tag is written only here and in `new`, under the
        // generator lock, which orders this load after those stores.
        let held = page.tag.load(Relaxed);
        if held == page_no {
            return true;
        }
        let oldest_page = self.page_no(self.oldest());
        if held >= oldest_page {
            return false;
        }
        // Recycle a page the horizon has passed. No reader may be asking about
        // xids on it (XIDMAP-TRUNCATE); a reader that does anyway sees a tag
        // mismatch before or after its read and gets `None`.
        // Relaxed store of u64::MAX first, then the zeroing, then the Release
        // store of the new tag: a reader that sees the new tag (Acquire) sees
        // zeroed words.
        page.tag.store(u64::MAX, Relaxed);
        for w in page.words.iter() {
            // Relaxed: published by the Release tag store below.
            w.store(0, Relaxed);
        }
        // Release (XIDMAP-EXTEND): pairs with the Acquire tag load in `word`.
        page.tag.store(page_no, Release);
        true
    }

    /// Forgets every xid below `xid`. The caller guarantees nobody will ask
    /// about those xids again (XIDMAP-TRUNCATE).
    pub(crate) fn truncate(&self, xid: Xid) {
        // Relaxed: `oldest` only gates recycling in `extend`, which runs under
        // the same generator lock as the caller of `truncate`.
        if xid.0 > self.oldest.load(Relaxed) {
            self.oldest.store(xid.0, Relaxed);
        }
    }

    /// The word describing `xid`, or `None` if its page does not exist or holds
    /// another page number (never extended, or truncated and recycled).
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
        // Acquire (XIDMAP-EXTEND): pairs with the Release tag store in
        // `extend`; if the tag matches, the page was zeroed for this page
        // number before we read any word.
        if page.tag.load(Acquire) != page_no {
            return None;
        }
        Some(&page.words[self.word_index(xid)])
    }
}

impl XidMap {
    /// Loads the word describing `xid` with Acquire ordering, re-checking
    /// afterwards that the page was not recycled during the read.
    pub(crate) fn load(&self, xid: Xid) -> Option<u64> {
        let word = self.word(xid)?;
        // Acquire: pairs with the Release read-modify-writes of the status log
        // and the Release stores of parent links (see their callers).
        let value = word.load(Acquire);
        // Acquire fence: orders the word load before the tag re-check, so a
        // recycle that overwrote the word is seen as a changed tag.
        fence(Acquire);
        let page_no = self.page_no(xid);
        let slot = &self.slots[(page_no % self.slots.len() as u64) as usize];
        // SAFETY: `word` returned Some, so the slot holds a live page.
        let page = unsafe { &*slot.load(Acquire) };
        // Relaxed: ordered by the fence above.
        (page.tag.load(Relaxed) == page_no).then_some(value)
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
        map.truncate(Xid(per_page));
        assert!(map.extend(Xid(2 * per_page)));
        assert!(map.word(Xid(5)).is_none(), "recycled page answers None");
        assert_eq!(map.word(Xid(2 * per_page + 5)).unwrap().load(Relaxed), 0);
    }
}
