//! Behaviour of the public API, one scenario per test: fast path, transfer,
//! re-entrancy, release, try_lock, queue order, timeouts, transaction and
//! virtual-transaction waits, cancellation. Deadlocks are in `deadlock.rs`,
//! the concurrent checker in `stress.rs`, loom models in `src/loom_tests.rs`.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use snapscale_lock::{HeldLock, LockConfig, LockError, LockManager, LockMode, LockTag, WaitPolicy};
use tokio::sync::mpsc;
use LockMode::*;

fn manager(lock_timeout: Option<Duration>) -> Arc<LockManager> {
    LockManager::new(LockConfig { max_sessions: 8, deadlock_timeout: Duration::from_secs(1), lock_timeout })
}

const REL: LockTag = LockTag::Relation(16384);

fn held(tag: LockTag, mode: LockMode, count: u32, fast_path: bool) -> HeldLock {
    HeldLock { tag, mode, count, fast_path }
}

/// Polls `fut` once, asserting that it is still pending (queued).
async fn poll_pending<F: Future>(fut: std::pin::Pin<&mut F>) {
    let mut fut = fut;
    poll_fn(|cx| {
        assert!(fut.as_mut().poll(cx).is_pending(), "expected the request to wait");
        Poll::Ready(())
    })
    .await;
}

/// Lets spawned tasks run until they block.
async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn weak_locks_use_the_fast_path() {
    let locks = manager(None);
    locks.lock(0, REL, AccessShare).await.unwrap();
    locks.lock(1, REL, RowExclusive).await.unwrap();
    assert_eq!(locks.held_locks(0), [held(REL, AccessShare, 1, true)]);
    assert_eq!(locks.held_locks(1), [held(REL, RowExclusive, 1, true)]);
    assert!(locks.unlock(0, REL, AccessShare));
    assert!(!locks.unlock(0, REL, AccessShare), "not held any more");
    assert!(locks.held_locks(0).is_empty());
    // ShareUpdateExclusive is neither weak nor strong: table, no transfer.
    locks.lock(0, REL, ShareUpdateExclusive).await.unwrap();
    assert_eq!(locks.held_locks(0), [held(REL, ShareUpdateExclusive, 1, false)]);
    assert_eq!(locks.held_locks(1), [held(REL, RowExclusive, 1, true)]);
}

#[tokio::test]
async fn seventeen_relations_overflow_into_the_table() {
    let locks = manager(None);
    for oid in 1..=17 {
        locks.lock(0, LockTag::Relation(oid), AccessShare).await.unwrap();
    }
    let held = locks.held_locks(0);
    assert_eq!(held.iter().filter(|h| h.fast_path).count(), 16);
    assert_eq!(held.iter().filter(|h| !h.fast_path).count(), 1);
    locks.release_all(0);
    assert!(locks.held_locks(0).is_empty());
}

/// FASTPATH-TRANSFER: a strong request moves the weak fast-path holds into
/// the table, waits for them, and keeps new weak requests out of the fast
/// path until it is released.
#[tokio::test]
async fn strong_lock_transfers_fast_path_locks_and_waits_for_them() {
    let locks = manager(None);
    locks.lock(0, REL, RowExclusive).await.unwrap();
    locks.lock(0, REL, RowExclusive).await.unwrap();
    locks.lock(1, REL, AccessShare).await.unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let l = Arc::clone(&locks);
    let strong = tokio::spawn(async move {
        l.lock(2, REL, AccessExclusive).await.unwrap();
        tx.send(()).unwrap();
    });
    settle().await;
    assert_eq!(locks.waiters(REL), [(2, AccessExclusive)]);
    assert_eq!(locks.held_locks(0), [held(REL, RowExclusive, 2, false)], "transferred with its count");
    assert_eq!(locks.held_locks(1), [held(REL, AccessShare, 1, false)]);
    // A newcomer's weak request now goes to the table and queues behind 2.
    assert!(!locks.try_lock(3, REL, AccessShare).unwrap());
    // A holder's re-request is not queued behind 2 (it would deadlock).
    assert!(locks.try_lock(1, REL, AccessShare).unwrap());
    assert!(locks.unlock(0, REL, RowExclusive));
    locks.release_all(1);
    settle().await;
    assert!(rx.try_recv().is_err(), "session 0 still holds RowExclusive once");
    assert!(locks.unlock(0, REL, RowExclusive));
    rx.recv().await.unwrap();
    strong.await.unwrap();
    assert_eq!(locks.held_locks(2), [held(REL, AccessExclusive, 1, false)]);
    assert!(!locks.try_lock(3, REL, AccessShare).unwrap());
    locks.release_all(2);
    // STRONG-COUNTER back at zero: the fast path is open again.
    locks.lock(3, REL, AccessShare).await.unwrap();
    assert_eq!(locks.held_locks(3), [held(REL, AccessShare, 1, true)]);
}

#[tokio::test]
async fn locks_are_reentrant_and_counted() {
    let locks = manager(None);
    for _ in 0..3 {
        locks.lock(0, REL, AccessShare).await.unwrap();
    }
    for _ in 0..2 {
        locks.lock(0, REL, AccessExclusive).await.unwrap();
    }
    // The strong request transferred the session's own fast-path holds.
    assert_eq!(locks.held_locks(0), [held(REL, AccessShare, 3, false), held(REL, AccessExclusive, 2, false)]);
    assert!(locks.unlock(0, REL, AccessExclusive));
    assert!(!locks.try_lock(1, REL, AccessShare).unwrap());
    assert!(locks.unlock(0, REL, AccessExclusive));
    assert!(!locks.unlock(0, REL, AccessExclusive));
    assert!(locks.try_lock(1, REL, AccessShare).unwrap());
    for _ in 0..3 {
        assert!(locks.unlock(0, REL, AccessShare));
    }
    assert!(locks.held_locks(0).is_empty());
}

#[tokio::test]
async fn release_all_drops_everything() {
    let locks = manager(None);
    locks.lock(0, LockTag::Relation(1), AccessShare).await.unwrap();
    locks.lock(0, LockTag::Relation(1), AccessShare).await.unwrap();
    locks.lock(0, LockTag::Relation(2), Share).await.unwrap();
    locks.lock(0, LockTag::Relation(3), AccessExclusive).await.unwrap();
    locks.register_xid(0, 500).unwrap();
    locks.begin_vxid(0, 9);
    assert_eq!(locks.held_locks(0).len(), 5);
    locks.release_all(0);
    assert!(locks.held_locks(0).is_empty());
    for oid in 1..=3 {
        assert!(locks.try_lock(1, LockTag::Relation(oid), AccessExclusive).unwrap());
    }
    locks.release_all(1);
    // Both strong counters are back at zero.
    locks.lock(1, LockTag::Relation(2), RowExclusive).await.unwrap();
    locks.lock(1, LockTag::Relation(3), RowExclusive).await.unwrap();
    assert!(locks.held_locks(1).iter().all(|h| h.fast_path));
    assert!(locks.try_lock(2, LockTag::Transaction(500), Exclusive).unwrap());
    locks.begin_vxid(0, 10);
}

#[tokio::test]
async fn try_lock_never_queues() {
    let locks = manager(None);
    locks.lock(0, REL, AccessShare).await.unwrap();
    assert!(!locks.try_lock(1, REL, AccessExclusive).unwrap());
    assert!(locks.waiters(REL).is_empty());
    assert!(locks.held_locks(1).is_empty());
    // The failed strong attempt left session 0's entry transferred, and its
    // announcement withdrawn, so a new weak lock takes the fast path.
    assert_eq!(locks.held_locks(0), [held(REL, AccessShare, 1, false)]);
    assert!(locks.try_lock(2, REL, AccessShare).unwrap());
    assert_eq!(locks.held_locks(2), [held(REL, AccessShare, 1, true)]);
    assert!(locks.try_lock(1, REL, ShareUpdateExclusive).unwrap());
    assert_eq!(
        locks.try_lock(8, REL, AccessShare),
        Err(LockError::SessionOutOfRange { session: 8, max_sessions: 8 })
    );
}

#[tokio::test]
async fn waiters_are_granted_in_queue_order() {
    let locks = manager(None);
    locks.lock(0, REL, AccessExclusive).await.unwrap();
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut tasks = Vec::new();
    for (session, mode) in [(1, AccessShare), (2, AccessExclusive), (3, AccessShare)] {
        let (l, tx) = (Arc::clone(&locks), tx.clone());
        tasks.push(tokio::spawn(async move {
            l.lock(session, REL, mode).await.unwrap();
            tx.send(session).unwrap();
        }));
        settle().await;
    }
    assert_eq!(locks.waiters(REL), [(1, AccessShare), (2, AccessExclusive), (3, AccessShare)]);
    locks.release_all(0);
    assert_eq!(rx.recv().await, Some(1));
    settle().await;
    assert!(rx.try_recv().is_err(), "3 must not overtake 2");
    locks.release_all(1);
    assert_eq!(rx.recv().await, Some(2));
    settle().await;
    assert!(rx.try_recv().is_err());
    locks.release_all(2);
    assert_eq!(rx.recv().await, Some(3));
    for t in tasks {
        t.await.unwrap();
    }
}

#[tokio::test]
async fn lock_timeout_fails_with_55p03_and_leaves_nothing() {
    let locks = manager(Some(Duration::from_millis(100)));
    locks.lock(0, REL, AccessShare).await.unwrap();
    let err = locks.lock(1, REL, AccessExclusive).await.unwrap_err();
    assert_eq!(err, LockError::LockTimeout);
    assert_eq!(err.sqlstate(), "55P03");
    assert_eq!(err.to_string(), "canceling statement due to lock timeout");
    assert!(locks.waiters(REL).is_empty());
    assert!(locks.held_locks(1).is_empty());
    // The strong announcement was withdrawn.
    locks.lock(2, REL, AccessShare).await.unwrap();
    assert!(locks.held_locks(2)[0].fast_path);
}

/// A session's own `lock_timeout` bounds its waits, whatever the manager's
/// default; relation and xid waits alike.
#[tokio::test(start_paused = true)]
async fn a_per_wait_lock_timeout_overrides_the_default() {
    let locks = manager(None);
    let policy =
        WaitPolicy { deadlock_timeout: Duration::from_secs(1), lock_timeout: Some(Duration::from_secs(2)) };
    locks.lock(0, REL, AccessShare).await.unwrap();
    let started = tokio::time::Instant::now();
    let err = locks.lock_with(1, REL, AccessExclusive, policy).await.unwrap_err();
    assert_eq!(err, LockError::LockTimeout);
    assert_eq!(started.elapsed(), Duration::from_secs(2));
    locks.register_xid(0, 900).unwrap();
    let err = locks.wait_for_xid_with(1, 900, policy).await.unwrap_err();
    assert_eq!(err.sqlstate(), "55P03");
    assert!(locks.held_locks(1).is_empty());
    assert!(locks.waiters(LockTag::Transaction(900)).is_empty());
}

/// The diagnostic view of every queued request.
#[tokio::test]
async fn waiting_lists_every_queued_request() {
    let locks = manager(None);
    locks.lock(0, REL, AccessExclusive).await.unwrap();
    locks.register_xid(0, 77).unwrap();
    let (l1, l2) = (Arc::clone(&locks), Arc::clone(&locks));
    let a = tokio::spawn(async move { l1.lock(1, REL, AccessShare).await });
    let b = tokio::spawn(async move { l2.wait_for_xid(2, 77).await });
    settle().await;
    assert_eq!(locks.waiting(), [(1, REL, AccessShare), (2, LockTag::Transaction(77), Share)]);
    locks.release_all(0);
    a.await.unwrap().unwrap();
    b.await.unwrap().unwrap();
    assert!(locks.waiting().is_empty());
}

/// NOWAIT's question: has the transaction ended? Never queues.
#[tokio::test]
async fn xid_ended_never_waits() {
    let locks = manager(None);
    locks.register_xid(0, 901).unwrap();
    assert!(!locks.xid_ended(1, 901).unwrap());
    assert!(locks.waiters(LockTag::Transaction(901)).is_empty());
    assert!(locks.held_locks(1).is_empty());
    locks.release_all(0);
    assert!(locks.xid_ended(1, 901).unwrap());
    assert!(locks.xid_ended(1, 902).unwrap());
    assert!(locks.held_locks(1).is_empty());
}

/// XID-WAIT: a waiter returns when the holder's transaction ends.
#[tokio::test]
async fn xid_wait_returns_when_the_holder_ends() {
    let locks = manager(None);
    locks.register_xid(0, 742).unwrap();
    let l = Arc::clone(&locks);
    let waiter = tokio::spawn(async move { l.wait_for_xid(1, 742).await });
    settle().await;
    assert_eq!(locks.waiters(LockTag::Transaction(742)), [(1, Share)]);
    assert!(!waiter.is_finished());
    locks.release_all(0);
    waiter.await.unwrap().unwrap();
    assert!(locks.held_locks(1).is_empty());
    // An ended (or never registered) xid is waited for instantly.
    locks.wait_for_xid(1, 742).await.unwrap();
    locks.wait_for_xid(1, 743).await.unwrap();
}

/// LAZY-VXID: the vxid lock is materialised only when someone waits.
#[tokio::test]
async fn vxid_lock_is_materialised_by_its_first_waiter() {
    let locks = manager(None);
    let tag = LockTag::VirtualTransaction { slot: 0, local: 7 };
    locks.begin_vxid(0, 7);
    assert_eq!(locks.held_locks(0), [held(tag, Exclusive, 1, true)]);
    // A vxid that does not match the owner's current one has ended.
    locks.wait_for_vxid(1, 0, 6).await.unwrap();
    let mut waiters = Vec::new();
    for s in [1, 2] {
        let l = Arc::clone(&locks);
        waiters.push(tokio::spawn(async move { l.wait_for_vxid(s, 0, 7).await }));
        settle().await;
    }
    assert_eq!(locks.held_locks(0), [held(tag, Exclusive, 1, false)], "materialised once");
    assert_eq!(locks.waiters(tag), [(1, Share), (2, Share)]);
    locks.end_vxid(0);
    for w in waiters {
        w.await.unwrap().unwrap();
    }
    assert!(locks.held_locks(0).is_empty());
    assert!(locks.waiters(tag).is_empty());
    locks.wait_for_vxid(1, 0, 7).await.unwrap();
    // The next vxid starts lazy again.
    locks.begin_vxid(0, 8);
    assert!(locks.held_locks(0)[0].fast_path);
    locks.end_vxid(0);
    locks.end_vxid(0);
}

/// WAIT-CANCEL: dropping a waiting future removes its request.
#[tokio::test]
async fn a_dropped_waiter_leaves_the_queue() {
    let locks = manager(None);
    locks.lock(0, REL, AccessShare).await.unwrap();
    let r = tokio::time::timeout(Duration::from_millis(30), locks.lock(1, REL, AccessExclusive)).await;
    assert!(r.is_err(), "timed out while queued");
    assert!(locks.waiters(REL).is_empty());
    assert!(locks.held_locks(1).is_empty());
    locks.lock(2, REL, AccessShare).await.unwrap();
    assert!(locks.held_locks(2)[0].fast_path, "its strong announcement was withdrawn");
    locks.release_all(2);

    // Dropped after being granted but before it noticed: the grant is undone.
    {
        let mut fut = pin!(locks.lock(1, REL, AccessExclusive));
        poll_pending(fut.as_mut()).await;
        assert_eq!(locks.waiters(REL), [(1, AccessExclusive)]);
        locks.release_all(0);
        assert!(locks.waiters(REL).is_empty(), "granted at release");
    }
    assert!(locks.held_locks(1).is_empty());
    assert!(locks.try_lock(3, REL, AccessShare).unwrap());
    assert!(locks.held_locks(3)[0].fast_path);

    // A dropped waiter that held up a later compatible one lets it through.
    locks.lock(0, REL, AccessShare).await.unwrap();
    let mut strong = Box::pin(locks.lock(1, REL, AccessExclusive));
    poll_pending(strong.as_mut()).await;
    let l = Arc::clone(&locks);
    let weak = tokio::spawn(async move { l.lock(2, REL, RowShare).await });
    settle().await;
    assert_eq!(locks.waiters(REL), [(1, AccessExclusive), (2, RowShare)]);
    drop(strong);
    weak.await.unwrap().unwrap();
    assert!(locks.waiters(REL).is_empty());
}

#[test]
fn errors_carry_postgres_sqlstates() {
    let deadlock = LockError::Deadlock { detail: "Process 1 waits for ...".into() };
    assert_eq!(deadlock.sqlstate(), "40P01");
    assert_eq!(deadlock.to_string(), "deadlock detected");
    assert_eq!(deadlock.detail(), Some("Process 1 waits for ..."));
    assert_eq!(LockError::LockTimeout.sqlstate(), "55P03");
    assert_eq!(LockError::SessionOutOfRange { session: 9, max_sessions: 2 }.sqlstate(), "XX000");
}

/// `waits_begun` counts the requests that queued, and keeps the count after
/// the wait ended (granted or timed out); a grant without a wait and a
/// refused `try_lock` do not count.
#[tokio::test]
async fn waits_begun_counts_queued_requests_only() {
    let locks = manager(Some(Duration::from_millis(20)));
    locks.lock(0, REL, AccessExclusive).await.unwrap();
    assert_eq!(locks.try_lock(1, REL, AccessShare), Ok(false));
    assert_eq!(locks.waits_begun(1), 0);
    assert_eq!(locks.lock(1, REL, AccessShare).await, Err(LockError::LockTimeout));
    assert_eq!(locks.waits_begun(1), 1, "a wait that timed out still counts");
    let mut waiting = pin!(locks.lock(1, REL, AccessShare));
    poll_pending(waiting.as_mut()).await;
    locks.release_all(0);
    waiting.await.unwrap();
    assert_eq!(locks.waits_begun(1), 2);
    locks.lock(2, REL, AccessShare).await.unwrap();
    assert_eq!((locks.waits_begun(0), locks.waits_begun(2)), (0, 0));
    assert_eq!(locks.waits_begun(99), 0, "out of range");
}
