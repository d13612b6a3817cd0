//! Loom models of the fast path against strong-lock transfer
//! (FASTPATH-TRANSFER, STRONG-COUNTER).
//!
//! Run with `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test
//! --release --lib loom`. The models use only `try_lock` and `unlock`, which
//! never wait, so tokio is not involved; every mutex and atomic on those
//! paths comes from `sync.rs` and is modelled. Partitions and counters shrink
//! to two each under loom.
//!
//! Exclusion is checked two ways: by the grants themselves ("never both
//! granted" while both are held) and, where holds are released, by a loom
//! `UnsafeCell` that weak holders read and strong holders write, so loom
//! reports a data race if a grant does not happen after the conflicting
//! release (a lock must also order memory, not just count).

// Sharing loom's `UnsafeCell` between threads without a lock is the point:
// loom is the race detector. (The lint misjudges loom's cell, which is Sync.)
#![allow(clippy::arc_with_non_send_sync)]

use std::sync::Arc;

use loom::cell::UnsafeCell;
use loom::thread;

use crate::{LockConfig, LockManager, LockMode, LockTag};
use LockMode::*;

const REL: LockTag = LockTag::Relation(42);

fn manager() -> Arc<LockManager> {
    LockManager::new(LockConfig { max_sessions: 2, ..LockConfig::default() })
}

/// Nothing left anywhere: no holds, no queued requests, counters at zero.
fn assert_clean(m: &LockManager) {
    assert!(m.held_locks(0).is_empty() && m.held_locks(1).is_empty());
    assert_eq!(m.strong.total(), 0, "STRONG-COUNTER left non-zero");
}

/// A weak fast-path request and a conflicting strong request race: they are
/// never both granted, and one of them always is.
#[test]
fn loom_fast_path_vs_strong_transfer() {
    loom::model(|| {
        let m = manager();
        let m2 = Arc::clone(&m);
        let weak = thread::spawn(move || m2.try_lock(0, REL, RowExclusive).unwrap());
        let strong = m.try_lock(1, REL, Share).unwrap();
        let weak = weak.join().unwrap();
        assert!(!(weak && strong), "FASTPATH-TRANSFER: RowExclusive and Share both granted");
        assert!(weak || strong, "both refused");
        m.release_all(0);
        m.release_all(1);
        assert_clean(&m);
    });
}

/// The weak lock is granted first (fast path); its holder re-takes it while
/// a strong request transfers it. The strong request must fail, and the two
/// holds must survive the transfer with their count.
#[test]
fn loom_weak_first_strong_sees_transferred_entry() {
    loom::model(|| {
        let m = manager();
        assert!(m.try_lock(0, REL, AccessShare).unwrap());
        let m2 = Arc::clone(&m);
        let again = thread::spawn(move || m2.try_lock(0, REL, AccessShare).unwrap());
        let strong = m.try_lock(1, REL, AccessExclusive).unwrap();
        assert!(again.join().unwrap(), "a weak re-request is always granted here");
        assert!(!strong, "FASTPATH-TRANSFER: AccessExclusive granted over a fast-path AccessShare");
        let count: u32 = m.held_locks(0).iter().map(|h| h.count).sum();
        assert_eq!(count, 2);
        assert!(m.unlock(0, REL, AccessShare) && m.unlock(0, REL, AccessShare));
        assert_clean(&m);
    });
}

/// A fast-path holder releases while a strong request runs: if the strong
/// request is granted, the weak holder's reads happen before its writes.
/// The release finds its entry in the fast path or, transferred, in the table.
#[test]
fn loom_weak_release_vs_strong_acquire() {
    loom::model(|| {
        let m = manager();
        let data = Arc::new(UnsafeCell::new(0u32));
        assert!(m.try_lock(0, REL, AccessShare).unwrap());
        let (m2, d2) = (Arc::clone(&m), Arc::clone(&data));
        let weak = thread::spawn(move || {
            // SAFETY: the pointer is valid for the model's life; loom checks
            // that this read is ordered with every write (the point of the model).
            d2.with(|p| unsafe { std::ptr::read(p) });
            assert!(m2.unlock(0, REL, AccessShare), "the hold is in the fast path or the table");
        });
        if m.try_lock(1, REL, AccessExclusive).unwrap() {
            // SAFETY: as above; loom reports a race if this write is not
            // ordered after the weak holder's read.
            data.with_mut(|p| unsafe { *p += 1 });
            assert!(m.unlock(1, REL, AccessExclusive));
        }
        weak.join().unwrap();
        assert_clean(&m);
    });
}

/// A strong holder releases while a weak request tries the fast path: if the
/// weak request is granted, the strong holder's writes happen before its
/// reads (the Release decrement of the counter pairs with the fast path's
/// Acquire load).
#[test]
fn loom_strong_release_vs_fast_path_acquire() {
    loom::model(|| {
        let m = manager();
        let data = Arc::new(UnsafeCell::new(0u32));
        assert!(m.try_lock(1, REL, Exclusive).unwrap());
        let (m2, d2) = (Arc::clone(&m), Arc::clone(&data));
        let strong = thread::spawn(move || {
            // SAFETY: valid pointer; loom checks the ordering against the read below.
            d2.with_mut(|p| unsafe { *p += 1 });
            assert!(m2.unlock(1, REL, Exclusive));
        });
        if m.try_lock(0, REL, RowShare).unwrap() {
            // SAFETY: valid pointer; loom reports a race if this read is not
            // ordered after the strong holder's write.
            data.with(|p| unsafe { std::ptr::read(p) });
            assert!(m.unlock(0, REL, RowShare));
        }
        strong.join().unwrap();
        assert_clean(&m);
    });
}
