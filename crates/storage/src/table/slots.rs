//! A table's versions by tid, read without a lock (SLOTS-READ in the
//! crate README).
//!
//! ```text
//!   segment:   0          1                2                         ...
//!   tids:      0..F       F..3F            3F..7F                    (F = first segment's size)
//!   pointer:   [*]        [*]              [null: not needed yet]
//!   cells:     [v][v][ ]  [v][ ][v][v][ ]
//! ```
//!
//! Segment k holds `F << k` cells, so a tid's segment and offset are a
//! leading-zero count away and the directory of segment pointers never
//! moves: a reader follows one pointer it loads with Acquire and one cell,
//! and writes nothing that another core reads. A segment is allocated by
//! the first writer that needs it (a compare-exchange: a loser frees its
//! own) and freed only with the table. A cell holds a version's `Arc` as a
//! raw pointer: a reader pins crossbeam's epoch (a write to its thread's
//! own slot) and borrows the version, and a version a writer swaps out
//! (VACUUM, a reused tid) is dropped by the epoch once every reader that
//! could have loaded it has unpinned. Under loom a cell is a mutex over the
//! same `Option<Arc<_>>`: the models check this module's protocol (segment
//! publication, the tid counter, the order of a cell's store and whatever
//! publishes its tid); crossbeam-epoch's own tests check its inside, and
//! the stress test below checks the cells under real threads.

use std::sync::Arc;

use snapscale_sync::atomic::{AtomicPtr, AtomicU64, Ordering::*};

use crate::version::Tid;

/// log2 of the first segment's size: 1024 versions, as many as a few
/// PostgreSQL pages hold. Two under loom so that models cross segments.
#[cfg(not(loom))]
const FIRST_BITS: u32 = 10;
#[cfg(loom)]
const FIRST_BITS: u32 = 1;

/// Enough segments for more tids than memory can hold versions.
const SEGMENTS: usize = 48;

/// A cell: null, or a version's `Arc` turned into a raw pointer (the
/// cell holds that one count). A reader pins crossbeam's epoch, loads the
/// pointer and borrows the version while pinned; a writer swaps the
/// pointer and hands the old count to the epoch, which drops it once every
/// reader pinned at the swap has let go.
#[cfg(not(loom))]
struct Cell<V>(AtomicPtr<V>);

/// A version's raw pointer on its way to a deferred drop.
#[cfg(not(loom))]
struct Retired<V>(*const V);

// SAFETY: the pointer is an `Arc<V>`'s count, dropped on whichever thread
// runs the epoch's deferred functions; an `Arc<V>` of a Send + Sync `V`
// may be dropped on any thread.
#[cfg(not(loom))]
unsafe impl<V: Send + Sync> Send for Retired<V> {}

#[cfg(not(loom))]
impl<V> Cell<V> {
    fn empty() -> Self {
        Cell(AtomicPtr::new(std::ptr::null_mut()))
    }

    /// `f` of the version held, borrowed under a pinned epoch.
    fn with<T>(&self, f: impl FnOnce(&V) -> T) -> Option<T> {
        let _pin = crossbeam_epoch::pin();
        // Acquire (SLOTS-READ): pairs with the AcqRel swap in `store`; the
        // reader sees the version as its writer built it.
        let p = self.0.load(Acquire);
        // SAFETY: a pointer read while pinned stays valid until unpinned:
        // `store` defers its drop past every guard pinned before the swap.
        (!p.is_null()).then(|| f(unsafe { &*p }))
    }

    fn load_full(&self) -> Option<Arc<V>> {
        let _pin = crossbeam_epoch::pin();
        // Acquire: as in `with`.
        let p = self.0.load(Acquire);
        (!p.is_null()).then(|| {
            // SAFETY: valid while pinned (see `with`); the new count keeps
            // it alive after.
            unsafe {
                Arc::increment_strong_count(p);
                Arc::from_raw(p)
            }
        })
    }

    fn store(&self, v: Option<Arc<V>>)
    where
        V: Send + Sync,
    {
        let new = v.map_or(std::ptr::null_mut(), |v| Arc::into_raw(v).cast_mut());
        // AcqRel (SLOTS-READ): Release publishes the new version to the
        // Acquire loads of `with` and `load_full`; Acquire orders the old
        // version's drop after its own publication.
        let old = self.0.swap(new, AcqRel);
        if !old.is_null() {
            let guard = crossbeam_epoch::pin();
            let old = Retired(old.cast_const());
            // SAFETY: `old` is unreachable from the cell now; readers that
            // loaded it pinned before this guard, so the epoch runs the drop
            // only after they unpin.
            unsafe {
                guard.defer_unchecked(move || {
                    let old = old;
                    drop(Arc::from_raw(old.0));
                });
            }
        }
    }
}

#[cfg(not(loom))]
impl<V> Drop for Cell<V> {
    fn drop(&mut self) {
        let p = self.0.with_mut(|p| std::mem::replace(p, std::ptr::null_mut()));
        if !p.is_null() {
            // SAFETY: the cell's own count; no reader can reach a cell being
            // dropped (its table is gone).
            drop(unsafe { Arc::from_raw(p) });
        }
    }
}

/// A cell as loom sees it: the same operations, on a lock loom models.
#[cfg(loom)]
struct Cell<V>(snapscale_sync::Mutex<Option<Arc<V>>>);

#[cfg(loom)]
impl<V> Cell<V> {
    fn empty() -> Self {
        Cell(snapscale_sync::Mutex::new(None))
    }

    fn load_full(&self) -> Option<Arc<V>> {
        self.0.lock().clone()
    }

    fn with<T>(&self, f: impl FnOnce(&V) -> T) -> Option<T> {
        self.load_full().as_deref().map(f)
    }

    fn store(&self, v: Option<Arc<V>>) {
        *self.0.lock() = v;
    }
}

/// One segment: its cells, and (under loom) a plain write made when it is
/// built, so that a reader reaching the segment without synchronising
/// with its builder is a causality violation loom reports.
struct Segment<V> {
    cells: Box<[Cell<V>]>,
    #[cfg(loom)]
    built: snapscale_sync::UnsafeCell<bool>,
}

impl<V> Segment<V> {
    fn new(size: usize) -> Self {
        Segment {
            cells: (0..size).map(|_| Cell::empty()).collect(),
            #[cfg(loom)]
            built: snapscale_sync::UnsafeCell::new(true),
        }
    }

    fn cells(&self) -> &[Cell<V>] {
        #[cfg(loom)]
        // SAFETY: written only by `new`, before the segment is published.
        self.built.with(|b| assert!(unsafe { *b }));
        &self.cells
    }
}

/// The slot vector. See the module documentation.
pub(crate) struct Slots<V> {
    segments: [AtomicPtr<Segment<V>>; SEGMENTS],
    /// Tids handed out by [`Slots::push`]. A tid below it may still have
    /// an empty cell, or no segment yet: its version is being stored.
    len: AtomicU64,
}

/// The segment and offset of `tid`.
fn locate(tid: Tid) -> (usize, usize) {
    let i = tid + (1 << FIRST_BITS);
    let segment = (63 - i.leading_zeros() - FIRST_BITS) as usize;
    (segment, (i - (1 << (segment as u32 + FIRST_BITS))) as usize)
}

fn segment_size(segment: usize) -> usize {
    1 << (segment as u32 + FIRST_BITS)
}

impl<V: Send + Sync> Slots<V> {
    pub(crate) fn new() -> Self {
        Slots {
            segments: std::array::from_fn(|_| AtomicPtr::new(std::ptr::null_mut())),
            len: AtomicU64::new(0),
        }
    }

    /// Tids handed out so far.
    pub(crate) fn len(&self) -> u64 {
        // Acquire: pairs with the AcqRel fetch_add in `push`. A bound only:
        // a tid below it may still have an empty cell, or no segment yet.
        self.len.load(Acquire)
    }

    fn segment(&self, segment: usize) -> Option<&Segment<V>> {
        // Acquire (SLOTS-READ): pairs with the AcqRel compare-exchange in
        // `segment_for_write`; a reader that finds the pointer sees the
        // segment's empty cells as they were built.
        let p = self.segments[segment].load(Acquire);
        // SAFETY: a published segment is freed only in Drop.
        (!p.is_null()).then(|| unsafe { &*p })
    }

    /// The cell of `tid`, if its segment exists.
    fn cell(&self, tid: Tid) -> Option<&Cell<V>> {
        let (segment, offset) = locate(tid);
        Some(&self.segment(segment)?.cells()[offset])
    }

    /// The cell of `tid`, its segment built if it was not.
    fn cell_for_write(&self, tid: Tid) -> &Cell<V> {
        let (segment, offset) = locate(tid);
        if let Some(s) = self.segment(segment) {
            return &s.cells()[offset];
        }
        let fresh = Box::into_raw(Box::new(Segment::new(segment_size(segment))));
        // AcqRel (SLOTS-READ): the Release half publishes the built segment
        // to the Acquire loads in `segment`; the Acquire half (and the
        // failure ordering) lets a writer that lost the race use the
        // winner's segment.
        let s = match self.segments[segment].compare_exchange(std::ptr::null_mut(), fresh, AcqRel, Acquire) {
            Ok(_) => fresh,
            Err(winner) => {
                // SAFETY: `fresh` was never published.
                drop(unsafe { Box::from_raw(fresh) });
                winner
            }
        };
        // SAFETY: published, freed only in Drop.
        &unsafe { &*s }.cells()[offset]
    }

    /// Stores `v` under a new tid.
    pub(crate) fn push(&self, v: Arc<V>) -> Tid {
        // AcqRel: pairs with the Acquire load in `len`; tids are unique
        // whatever the order, and a reader does not rely on the bound to
        // find a version (its cell is read for that).
        let tid = self.len.fetch_add(1, AcqRel);
        self.cell_for_write(tid).store(Some(v));
        tid
    }

    /// Stores `v` under a reused tid, whose cell is empty.
    pub(crate) fn set(&self, tid: Tid, v: Arc<V>) {
        self.cell_for_write(tid).store(Some(v));
    }

    /// The version at `tid`.
    pub(crate) fn get(&self, tid: Tid) -> Option<Arc<V>> {
        self.cell(tid)?.load_full()
    }

    /// `f` of the version at `tid`, borrowed under a pinned epoch, so a
    /// reader of a hot version writes no count that the other cores'
    /// readers write too.
    pub(crate) fn with<T>(&self, tid: Tid, f: impl FnOnce(&V) -> T) -> Option<T> {
        self.cell(tid)?.with(f)
    }

    /// Empties the cell of `tid` if it holds `v`. Callers serialise their
    /// removals (two could otherwise both take the same version).
    pub(crate) fn take_if(&self, tid: Tid, v: &Arc<V>) -> bool {
        let Some(cell) = self.cell(tid) else { return false };
        if cell.load_full().is_some_and(|held| Arc::ptr_eq(&held, v)) {
            cell.store(None);
            return true;
        }
        false
    }

    /// `f` of every version present now, with its tid, in tid order, each
    /// borrowed as [`Slots::with`] borrows one: a scan copies what it keeps
    /// and writes no version's count (`present` took and dropped one per
    /// version, two writes to every version's line).
    pub(crate) fn each(&self, mut f: impl FnMut(Tid, &V)) {
        // One pin for the whole walk, as in `present`.
        #[cfg(not(loom))]
        let _pin = crossbeam_epoch::pin();
        let len = self.len();
        let mut tid = 0;
        while tid < len {
            let (segment, _) = locate(tid);
            let size = segment_size(segment) as u64;
            match self.segment(segment) {
                Some(s) => {
                    let end = (tid + size).min(len);
                    for (i, cell) in s.cells()[..(end - tid) as usize].iter().enumerate() {
                        cell.with(|v| f(tid + i as u64, v));
                    }
                    tid = end;
                }
                None => tid += size,
            }
        }
    }

    /// Every version present now, with its tid.
    pub(crate) fn present(&self) -> Vec<(Tid, Arc<V>)> {
        // One pin for the whole walk: each cell's own pin is then nested,
        // without the fence an outermost pin costs (a sequential scan
        // reads every cell).
        #[cfg(not(loom))]
        let _pin = crossbeam_epoch::pin();
        let len = self.len();
        let mut out = Vec::new();
        let mut tid = 0;
        while tid < len {
            let (segment, _) = locate(tid);
            let size = segment_size(segment) as u64;
            match self.segment(segment) {
                Some(s) => {
                    let cells = s.cells();
                    let end = (tid + size).min(len);
                    for (i, cell) in cells[..(end - tid) as usize].iter().enumerate() {
                        if let Some(v) = cell.load_full() {
                            out.push((tid + i as u64, v));
                        }
                    }
                    tid = end;
                }
                None => tid += size,
            }
        }
        out
    }
}

impl<V> Drop for Slots<V> {
    fn drop(&mut self) {
        for s in &mut self.segments {
            let p = s.with_mut(|p| std::mem::replace(p, std::ptr::null_mut()));
            if !p.is_null() {
                // SAFETY: published segments are owned by the table alone
                // once it is dropped.
                drop(unsafe { Box::from_raw(p) });
            }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn tids_map_to_segments_without_gaps() {
        let mut expect = (0, 0);
        for tid in 0..(1u64 << (FIRST_BITS + 4)) {
            assert_eq!(locate(tid), expect, "tid {tid}");
            expect.1 += 1;
            if expect.1 == segment_size(expect.0) {
                expect = (expect.0 + 1, 0);
            }
        }
    }

    #[test]
    fn versions_come_back_by_tid() {
        let slots = Slots::new();
        let vs: Vec<Arc<u64>> = (0..5000).map(Arc::new).collect();
        for v in &vs {
            assert_eq!(slots.push(Arc::clone(v)), **v);
        }
        assert!(slots.take_if(1234, &vs[1234]));
        assert!(!slots.take_if(1234, &vs[1234]), "taken once");
        assert!(!slots.take_if(7, &vs[8]), "only the version it holds");
        slots.set(1234, Arc::new(99));
        assert_eq!(slots.get(1234).as_deref(), Some(&99));
        assert_eq!(slots.get(4999).as_deref(), Some(&4999));
        assert_eq!(slots.get(5000), None);
        assert_eq!(slots.present().len(), 5000);
    }

    /// SLOTS-READ under real threads: two writers push across many
    /// segment boundaries and a remover empties and refills odd cells while
    /// readers look up tids they learned through a Release store made after
    /// the version was stored (as from an index), and tids below them. The
    /// checker: every version found is the one stored under that tid (it
    /// carries its tid), and a published even tid, which the remover never
    /// touches, is always found.
    #[test]
    fn readers_find_the_versions_of_their_tids_under_concurrent_writers() {
        use snapscale_sync::atomic::{AtomicBool, AtomicU64 as StdU64, Ordering as O};
        // Miri interprets: fewer operations, the same interleavings' kinds.
        let (pushes, reads) = if cfg!(miri) { (300, 1_000) } else { (40_000, 200_000u64) };
        let slots = Arc::new(Slots::<(Tid, u64)>::new());
        // The last tid each writer stored, plus one (0: none yet).
        let latest: Arc<[StdU64; 2]> = Arc::new([StdU64::new(0), StdU64::new(0)]);
        let stop = Arc::new(AtomicBool::new(false));
        let mut threads = Vec::new();
        for w in 0..2 {
            let (slots, latest) = (Arc::clone(&slots), Arc::clone(&latest));
            threads.push(std::thread::spawn(move || {
                for _ in 0..pushes {
                    // The tid is known only after the push: a placeholder
                    // first, then the version that names it.
                    let tid = slots.push(Arc::new((u64::MAX, 0)));
                    slots.set(tid, Arc::new((tid, 0)));
                    latest[w].store(tid + 1, O::Release);
                }
            }));
        }
        {
            let (slots, latest, stop) = (Arc::clone(&slots), Arc::clone(&latest), Arc::clone(&stop));
            threads.push(std::thread::spawn(move || {
                let mut generation = 1;
                while !stop.load(O::Relaxed) {
                    let bound = latest[0].load(O::Acquire).min(latest[1].load(O::Acquire));
                    for tid in (1..bound).step_by(2).take(256) {
                        if let Some(v) = slots.get(tid).filter(|v| v.0 == tid) {
                            if slots.take_if(tid, &v) {
                                slots.set(tid, Arc::new((tid, generation)));
                            }
                        }
                    }
                    generation += 1;
                }
            }));
        }
        let readers: Vec<_> = (0..2)
            .map(|r| {
                let (slots, latest) = (Arc::clone(&slots), Arc::clone(&latest));
                std::thread::spawn(move || {
                    for i in 0..reads {
                        let published = latest[(i as usize + r) % 2].load(O::Acquire);
                        let Some(tid) = published.checked_sub(1) else { continue };
                        match slots.with(tid, |v| *v) {
                            Some((t, _)) => assert_eq!(t, tid, "tid {tid} holds another tid's version"),
                            None => assert!(tid % 2 == 1, "published tid {tid} lost"),
                        }
                        // Any tid below: its version or a placeholder, or
                        // nothing while it is being stored or refilled.
                        let below = (i * 7919) % (tid + 1);
                        if let Some((t, _)) = slots.with(below, |v| *v) {
                            assert!(t == below || t == u64::MAX, "tid {below} holds tid {t}'s version");
                        }
                    }
                })
            })
            .collect();
        for r in readers {
            r.join().unwrap();
        }
        stop.store(true, O::Relaxed);
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(slots.len(), 2 * pushes);
    }
}
