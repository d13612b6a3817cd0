//! SESSION-HOLDS: session-level locks (PostgreSQL's `pg_advisory_lock`)
//! against transaction-level ones on the same tags. A session-level hold
//! survives `release_all` (the end of every transaction), counts
//! re-entrantly, is released only by `unlock_session` or
//! `release_session_locks`, and waits, times out, deadlocks and is
//! cancelled as any request does, leaving no trace when it fails.

use std::future::{poll_fn, Future};
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use snapscale_lock::{HeldLock, LockConfig, LockError, LockManager, LockMode, LockTag, WaitPolicy};
use LockMode::*;

fn manager() -> Arc<LockManager> {
    LockManager::new(LockConfig {
        max_sessions: 4,
        deadlock_timeout: Duration::from_secs(1),
        lock_timeout: None,
    })
}

const KEY: LockTag = LockTag::Advisory { classid: 0, objid: 1, objsubid: 1 };
const OTHER: LockTag = LockTag::Advisory { classid: 0, objid: 2, objsubid: 1 };

fn policy(deadlock_timeout: Duration, lock_timeout: Option<Duration>) -> WaitPolicy {
    WaitPolicy { deadlock_timeout, lock_timeout }
}

fn forever() -> WaitPolicy {
    policy(Duration::from_secs(60), None)
}

fn held(tag: LockTag, mode: LockMode, count: u32) -> HeldLock {
    HeldLock { tag, mode, count, fast_path: false }
}

/// Polls `fut` once, asserting that it is still pending (queued).
async fn poll_pending<F: Future>(mut fut: std::pin::Pin<&mut F>) {
    poll_fn(|cx| {
        assert!(fut.as_mut().poll(cx).is_pending(), "expected the request to wait");
        Poll::Ready(())
    })
    .await;
}

async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn a_session_hold_outlives_the_transaction_and_counts_reentrantly() {
    let locks = manager();
    locks.lock_session_with(0, KEY, Exclusive, forever()).await.unwrap();
    assert!(locks.try_lock_session(0, KEY, Exclusive).unwrap());
    locks.release_all(0);
    assert_eq!(locks.held_locks(0), [held(KEY, Exclusive, 2)]);
    assert_eq!(locks.session_locks(0), [held(KEY, Exclusive, 2)]);
    assert!(!locks.try_lock(1, KEY, Share).unwrap(), "still held after the transaction ended");
    assert!(!locks.unlock(0, KEY, Exclusive), "a transaction-level unlock does not take it");
    assert!(locks.unlock_session(0, KEY, Exclusive));
    assert!(!locks.try_lock(1, KEY, Share).unwrap(), "taken twice: one unlock is not enough");
    assert!(locks.unlock_session(0, KEY, Exclusive));
    assert!(!locks.unlock_session(0, KEY, Exclusive), "nothing left");
    assert!(locks.held_locks(0).is_empty());
    assert!(locks.try_lock(1, KEY, Share).unwrap());
}

#[tokio::test]
async fn both_kinds_on_one_lock_are_released_apart() {
    let locks = manager();
    locks.lock_with(0, KEY, Exclusive, forever()).await.unwrap();
    assert!(!locks.unlock_session(0, KEY, Exclusive), "only a transaction-level hold");
    locks.lock_session_with(0, KEY, Exclusive, forever()).await.unwrap();
    assert_eq!(locks.held_locks(0), [held(KEY, Exclusive, 2)]);
    assert_eq!(locks.session_locks(0), [held(KEY, Exclusive, 1)]);
    locks.release_all(0);
    assert_eq!(locks.held_locks(0), [held(KEY, Exclusive, 1)], "the session hold is left");
    assert!(locks.try_lock(0, KEY, Exclusive).unwrap());
    assert!(locks.unlock_session(0, KEY, Exclusive));
    assert_eq!(locks.held_locks(0), [held(KEY, Exclusive, 1)], "the new transaction-level hold is left");
    assert!(!locks.try_lock(1, KEY, Share).unwrap());
    locks.release_all(0);
    assert!(locks.held_locks(0).is_empty());
    assert!(locks.try_lock(1, KEY, Share).unwrap());
}

#[tokio::test]
async fn shared_holds_coexist_and_an_exclusive_request_waits_for_them() {
    let locks = manager();
    assert!(locks.try_lock_session(0, KEY, Share).unwrap());
    assert!(locks.try_lock_session(1, KEY, Share).unwrap());
    assert!(!locks.try_lock_session(2, KEY, Exclusive).unwrap());
    assert!(locks.session_locks(2).is_empty(), "a refused request leaves no trace");
    let l = Arc::clone(&locks);
    let waiter = tokio::spawn(async move { l.lock_session_with(2, KEY, Exclusive, forever()).await });
    settle().await;
    assert_eq!(locks.waiters(KEY), [(2, Exclusive)]);
    assert!(locks.unlock_session(0, KEY, Share));
    settle().await;
    assert!(!waiter.is_finished(), "one sharer left");
    assert_eq!(locks.release_session_locks(1), 1, "as at disconnect");
    waiter.await.unwrap().unwrap();
    // Granted while it waited, in the session's name: the transaction's end
    // does not take it.
    locks.release_all(2);
    assert_eq!(locks.session_locks(2), [held(KEY, Exclusive, 1)]);
    assert_eq!(locks.release_session_locks(2), 1);
    assert!(locks.held_locks(2).is_empty());
}

#[tokio::test]
async fn release_session_locks_leaves_the_transactions_holds() {
    let locks = manager();
    locks.lock_session_with(0, KEY, Exclusive, forever()).await.unwrap();
    locks.lock_session_with(0, OTHER, Share, forever()).await.unwrap();
    locks.lock_session_with(0, OTHER, Share, forever()).await.unwrap();
    locks.lock_with(0, OTHER, Exclusive, forever()).await.unwrap();
    locks.lock(0, LockTag::Relation(5), AccessShare).await.unwrap();
    assert_eq!(locks.release_session_locks(0), 2);
    let left: Vec<_> = locks.held_locks(0).into_iter().map(|h| (h.tag, h.mode, h.count)).collect();
    assert_eq!(left, [(LockTag::Relation(5), AccessShare, 1), (OTHER, Exclusive, 1)]);
    assert_eq!(locks.release_session_locks(0), 0);
    locks.release_all(0);
    assert!(locks.held_locks(0).is_empty());
}

#[tokio::test(start_paused = true)]
async fn a_timed_out_session_request_leaves_no_trace() {
    let locks = manager();
    locks.lock_with(0, KEY, Exclusive, forever()).await.unwrap();
    let err = locks
        .lock_session_with(1, KEY, Share, policy(Duration::from_secs(60), Some(Duration::from_millis(200))))
        .await
        .unwrap_err();
    assert_eq!(err, LockError::LockTimeout);
    assert!(locks.waiters(KEY).is_empty());
    assert!(locks.held_locks(1).is_empty());
    assert!(locks.session_locks(1).is_empty());
    locks.release_all(0);
    assert!(locks.try_lock_session(1, KEY, Exclusive).unwrap());
}

/// WAIT-CANCEL for a session-level request: dropped while queued, or
/// after it was granted but before it noticed; either way nothing is left.
#[tokio::test]
async fn a_cancelled_session_request_leaves_no_trace() {
    let locks = manager();
    locks.lock_with(0, KEY, Exclusive, forever()).await.unwrap();
    let r = tokio::time::timeout(
        Duration::from_millis(30),
        locks.lock_session_with(1, KEY, Exclusive, forever()),
    )
    .await;
    assert!(r.is_err(), "timed out while queued");
    assert!(locks.waiters(KEY).is_empty());
    assert!(locks.session_locks(1).is_empty());
    {
        let mut fut = pin!(locks.lock_session_with(1, KEY, Exclusive, forever()));
        poll_pending(fut.as_mut()).await;
        locks.release_all(0);
        assert!(locks.waiters(KEY).is_empty(), "granted at release");
        assert_eq!(locks.session_locks(1), [held(KEY, Exclusive, 1)]);
    }
    assert!(locks.held_locks(1).is_empty(), "the grant was undone");
    assert!(locks.session_locks(1).is_empty());
    assert!(locks.try_lock(2, KEY, Exclusive).unwrap());
}

/// DEADLOCK-CHECK sees session-level holds and waits: two sessions each
/// holding one key and waiting for the other's. The victim keeps its
/// session-level hold (an error ends its transaction, not its session), so
/// the survivor waits on until the victim unlocks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn advisory_waits_deadlock_and_the_victim_keeps_its_session_holds() {
    let locks = manager();
    locks.lock_session_with(0, KEY, Exclusive, forever()).await.unwrap();
    locks.lock_session_with(1, OTHER, Exclusive, forever()).await.unwrap();
    let l = Arc::clone(&locks);
    let first = tokio::spawn(async move { l.lock_session_with(0, OTHER, Exclusive, forever()).await });
    while locks.waiters(OTHER).is_empty() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let err = locks
        .lock_session_with(1, KEY, Exclusive, policy(Duration::from_millis(100), None))
        .await
        .unwrap_err();
    assert_eq!(err.sqlstate(), "40P01");
    let detail = err.detail().unwrap();
    assert!(detail.contains("waits for ExclusiveLock on advisory lock [0,1,1]"), "{detail}");
    locks.release_all(1);
    assert_eq!(locks.session_locks(1), [held(OTHER, Exclusive, 1)]);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!first.is_finished(), "still blocked by the victim's session hold");
    assert!(locks.unlock_session(1, OTHER, Exclusive));
    first.await.unwrap().unwrap();
    assert_eq!(locks.session_locks(0), [held(KEY, Exclusive, 1), held(OTHER, Exclusive, 1)]);
}

/// A transaction-level waiter blocked by a session-level holder is
/// granted when the holder disconnects (`release_session_locks`), and a
/// transaction-level hold never keeps a session-level waiter waiting past
/// the holder's transaction.
#[tokio::test]
async fn waiters_of_either_kind_are_woken_by_releases_of_either_kind() {
    let locks = manager();
    locks.lock_session_with(0, KEY, Exclusive, forever()).await.unwrap();
    let l = Arc::clone(&locks);
    let xact = tokio::spawn(async move { l.lock_with(1, KEY, Share, forever()).await });
    settle().await;
    locks.release_all(0);
    settle().await;
    assert!(!xact.is_finished(), "the session-level hold outlives the transaction");
    locks.release_session_locks(0);
    xact.await.unwrap().unwrap();
    let l = Arc::clone(&locks);
    let session = tokio::spawn(async move { l.lock_session_with(0, KEY, Exclusive, forever()).await });
    settle().await;
    assert_eq!(locks.waiters(KEY), [(0, Exclusive)]);
    locks.release_all(1);
    session.await.unwrap().unwrap();
    assert_eq!(locks.session_locks(0), [held(KEY, Exclusive, 1)]);
}

#[test]
#[should_panic(expected = "SESSION-HOLDS")]
fn a_relation_cannot_be_locked_at_session_level() {
    let _ = manager().try_lock_session(0, LockTag::Relation(1), AccessShare);
}

#[tokio::test]
async fn failed_try_locks_on_many_keys_leave_nothing_behind() {
    let locks = manager();
    for key in 0..1000 {
        assert!(locks.try_lock_session(0, LockTag::advisory_bigint(key), Exclusive).unwrap());
    }
    for key in 0..1000 {
        assert!(!locks.try_lock_session(1, LockTag::advisory_bigint(key), Share).unwrap());
    }
    assert!(locks.session_locks(1).is_empty());
    assert_eq!(locks.release_session_locks(1), 0);
    assert_eq!(locks.release_session_locks(0), 1000);
    assert!(locks.waiting().is_empty());
    for key in 0..1000 {
        assert!(locks.waiters(LockTag::advisory_bigint(key)).is_empty());
        assert!(locks.try_lock(1, LockTag::advisory_bigint(key), Exclusive).unwrap());
    }
}
