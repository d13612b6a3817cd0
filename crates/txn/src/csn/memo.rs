//! The per-snapshot memo of final visibility answers (seed 004's cache,
//! sized for Rust).
//!
//! Keyed by `xmax - xid` (so the key range is the snapshot's width, not the
//! absolute xid), two bits per xid: unknown, running-for-the-snapshot, or
//! finished-before-it. Only final answers are stored; "committing" never is.
//! The structure is a radix of one level: a directory of lazily allocated
//! flat pages of 2-bit entries. A snapshot no wider than one page (65 536
//! xids) allocates one 16 KB page on its first log lookup and then answers
//! from it; wider snapshots allocate only the pages they touch.
//!
//! Entries are atomics written with Relaxed `fetch_or`: the memo caches
//! immutable facts, so a reader that misses a concurrent write only does the
//! log lookup again.

use crate::sync::atomic::{AtomicPtr, AtomicU64, Ordering::*};
use crate::xid::Xid;

/// Xids per page; a page is 16 KB (1 024 words of 32 two-bit entries).
#[cfg(not(loom))]
const PAGE_XIDS: u64 = 65_536;
#[cfg(loom)]
const PAGE_XIDS: u64 = 64;
const WORDS: usize = (PAGE_XIDS / 32) as usize;

/// A memoized answer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Memoized {
    /// Running for this snapshot: invisible.
    InSnapshot,
    /// Finished before it (committed earlier, or aborted).
    NotInSnapshot,
}

struct Page {
    words: Box<[AtomicU64]>,
    /// Under loom, every page is tracked: a page lost to a racing
    /// allocation, or never freed, fails the model.
    #[cfg(loom)]
    _track: crate::sync::Track<()>,
}

impl Page {
    fn new() -> Page {
        Page {
            words: (0..WORDS).map(|_| AtomicU64::new(0)).collect(),
            #[cfg(loom)]
            _track: crate::sync::Track::new(()),
        }
    }
}

/// See the module documentation.
pub(crate) struct Memo {
    xmax: Xid,
    /// The page nearest xmax, inline: a snapshot no wider than one page
    /// (the common case) allocates nothing until its first log lookup.
    first: AtomicPtr<Page>,
    /// The pages further back, for wide snapshots.
    rest: Box<[AtomicPtr<Page>]>,
}

impl Memo {
    /// A memo for a snapshot covering `[xmin, xmax)`.
    pub(crate) fn new(xmin: Xid, xmax: Xid) -> Memo {
        let width = xmax.0.saturating_sub(xmin.0);
        let pages = width.div_ceil(PAGE_XIDS).max(1) as usize;
        Memo {
            xmax,
            first: AtomicPtr::new(std::ptr::null_mut()),
            rest: (1..pages).map(|_| AtomicPtr::new(std::ptr::null_mut())).collect(),
        }
    }

    fn slot(&self, page: usize) -> &AtomicPtr<Page> {
        if page == 0 {
            &self.first
        } else {
            &self.rest[page - 1]
        }
    }

    fn locate(&self, xid: Xid) -> Option<(usize, usize, u64)> {
        let key = self.xmax.0.checked_sub(xid.0)?.checked_sub(1)?;
        let page = (key / PAGE_XIDS) as usize;
        (page <= self.rest.len()).then(|| {
            let within = key % PAGE_XIDS;
            (page, (within / 32) as usize, 2 * (within % 32))
        })
    }

    /// The memoized answer for `xid`, if any.
    pub(crate) fn get(&self, xid: Xid) -> Option<Memoized> {
        let (page, word, shift) = self.locate(xid)?;
        // Acquire: pairs with the Release CAS in `record`, so a page seen is
        // a page whose words were initialised.
        let p = self.slot(page).load(Acquire);
        if p.is_null() {
            return None;
        }
        // SAFETY: pages are allocated in `record` and freed only in Drop.
        let page = unsafe { &*p };
        // Relaxed: a cache of immutable facts (module docs).
        match (page.words[word].load(Relaxed) >> shift) & 3 {
            1 => Some(Memoized::InSnapshot),
            2 => Some(Memoized::NotInSnapshot),
            _ => None,
        }
    }

    /// Remembers a final answer for `xid`.
    pub(crate) fn record(&self, xid: Xid, answer: Memoized) {
        let Some((page, word, shift)) = self.locate(xid) else { return };
        let slot = self.slot(page);
        // Acquire: pairs with the Release CAS below (another thread's).
        let mut p = slot.load(Acquire);
        if p.is_null() {
            let fresh = Box::into_raw(Box::new(Page::new()));
            // One compare-and-swap installs the page, so of two threads
            // racing to allocate it exactly one wins and the other frees its
            // own (a load-then-store would lose one page and its answers).
            // Release on success: pairs with the Acquire loads in `get` and
            // above; publishes the zeroed words. Acquire on failure: pairs
            // with the winner's Release; we write into its page.
            match slot.compare_exchange(std::ptr::null_mut(), fresh, AcqRel, Acquire) {
                Ok(_) => p = fresh,
                Err(winner) => {
                    // SAFETY: `fresh` was never shared.
                    drop(unsafe { Box::from_raw(fresh) });
                    p = winner;
                }
            }
        }
        // SAFETY: see `get`.
        let page = unsafe { &*p };
        let bits = match answer {
            Memoized::InSnapshot => 1u64,
            Memoized::NotInSnapshot => 2u64,
        };
        // Relaxed: a cache of immutable facts (module docs).
        page.words[word].fetch_or(bits << shift, Relaxed);
    }
}

impl Drop for Memo {
    fn drop(&mut self) {
        for slot in std::iter::once(&self.first).chain(self.rest.iter()) {
            // Relaxed: `&mut self`, no other reference exists.
            let p = slot.load(Relaxed);
            if !p.is_null() {
                // SAFETY: allocated by Box::into_raw in `record`, freed once.
                drop(unsafe { Box::from_raw(p) });
            }
        }
    }
}

impl std::fmt::Debug for Memo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Memo({} pages)", 1 + self.rest.len())
    }
}

// SAFETY: pages are owned by the memo and accessed only through atomics.
unsafe impl Send for Memo {}
unsafe impl Sync for Memo {}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn remembers_final_answers_across_pages() {
        let memo = Memo::new(Xid(10), Xid(10 + 3 * PAGE_XIDS));
        assert_eq!(memo.get(Xid(11)), None);
        memo.record(Xid(11), Memoized::InSnapshot);
        memo.record(Xid(12), Memoized::NotInSnapshot);
        let far = Xid(10 + 3 * PAGE_XIDS - 1);
        memo.record(far, Memoized::NotInSnapshot);
        assert_eq!(memo.get(Xid(11)), Some(Memoized::InSnapshot));
        assert_eq!(memo.get(Xid(12)), Some(Memoized::NotInSnapshot));
        assert_eq!(memo.get(far), Some(Memoized::NotInSnapshot));
        assert_eq!(memo.get(Xid(13)), None);
        // Outside [xmin, xmax): never stored.
        memo.record(Xid(10 + 3 * PAGE_XIDS), Memoized::InSnapshot);
        assert_eq!(memo.get(Xid(10 + 3 * PAGE_XIDS)), None);
    }
}
