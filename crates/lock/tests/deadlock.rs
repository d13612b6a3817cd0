//! DEADLOCK-CHECK: a cycle of waits is broken after `deadlock_timeout` by
//! failing exactly one member with 40P01; the others proceed once the victim
//! ends its transaction. Timing bounds here are generous behaviour checks,
//! not measurements.

use std::sync::Arc;
use std::time::{Duration, Instant};

use snapscale_lock::{LockConfig, LockError, LockManager, LockMode, LockTag, WaitPolicy};
use tokio::sync::Barrier;
use LockMode::*;

const DEADLOCK_TIMEOUT: Duration = Duration::from_millis(200);

fn manager() -> Arc<LockManager> {
    LockManager::new(LockConfig { max_sessions: 4, deadlock_timeout: DEADLOCK_TIMEOUT, lock_timeout: None })
}

/// Runs `first` then (after both hold it) `second` in two sessions; returns
/// per session: the outcome of `second` and how long it took.
async fn cross(
    locks: &Arc<LockManager>,
    first: [(LockTag, LockMode); 2],
    second: [(LockTag, LockMode); 2],
) -> Vec<(u32, Result<(), LockError>, Duration)> {
    let barrier = Arc::new(Barrier::new(2));
    let mut tasks = Vec::new();
    for session in 0..2u32 {
        let (locks, barrier) = (Arc::clone(locks), Arc::clone(&barrier));
        let (f, s) = (first[session as usize], second[session as usize]);
        tasks.push(tokio::spawn(async move {
            locks.lock(session, f.0, f.1).await.unwrap();
            barrier.wait().await;
            let start = Instant::now();
            let r = locks.lock(session, s.0, s.1).await;
            let took = start.elapsed();
            if r.is_err() {
                // The victim's transaction aborts and releases what it held.
                locks.release_all(session);
            }
            (session, r, took)
        }));
    }
    let mut out = Vec::new();
    for t in tasks {
        out.push(t.await.unwrap());
    }
    out
}

/// When a deadlock is found: after `deadlock_timeout` by the check, or
/// at once when the request that closes it is queued behind a waiter that
/// waits for it (the lock-upgrade case, QUEUE-ORDER).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Found {
    AfterTimeout,
    AtOnce,
}

fn check_one_victim(results: &[(u32, Result<(), LockError>, Duration)], detail_has: &str, found: Found) {
    let victims: Vec<_> = results.iter().filter(|r| r.1.is_err()).collect();
    assert_eq!(victims.len(), 1, "exactly one victim: {results:?}");
    let (_, err, took) = victims[0];
    let err = err.as_ref().unwrap_err();
    assert_eq!(err.sqlstate(), "40P01");
    assert_eq!(err.to_string(), "deadlock detected");
    let detail = err.detail().unwrap();
    assert_eq!(detail.lines().count(), 2, "{detail}");
    assert!(detail.contains(detail_has), "{detail}");
    match found {
        Found::AfterTimeout => {
            assert!(*took >= DEADLOCK_TIMEOUT, "detected before deadlock_timeout: {took:?}");
            assert!(*took < DEADLOCK_TIMEOUT * 10, "detected far too late: {took:?}");
        }
        Found::AtOnce => assert!(*took < DEADLOCK_TIMEOUT, "not detected when queued: {took:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opposite_order_access_exclusive_deadlock_has_one_victim() {
    let locks = manager();
    let (r1, r2) = (LockTag::Relation(1), LockTag::Relation(2));
    let results = cross(
        &locks,
        [(r1, AccessExclusive), (r2, AccessExclusive)],
        [(r2, AccessExclusive), (r1, AccessExclusive)],
    )
    .await;
    check_one_victim(&results, "waits for AccessExclusiveLock on relation", Found::AfterTimeout);
    let survivor = results.iter().find(|r| r.1.is_ok()).unwrap().0;
    assert_eq!(locks.held_locks(survivor).len(), 2);
    locks.release_all(survivor);
    for oid in [1, 2] {
        assert!(locks.waiters(LockTag::Relation(oid)).is_empty());
    }
}

#[tokio::test]
async fn transaction_id_wait_cycle_is_a_deadlock() {
    let locks = manager();
    locks.register_xid(0, 100).unwrap();
    locks.register_xid(1, 101).unwrap();
    let mut tasks = Vec::new();
    for (session, other) in [(0u32, 101u64), (1, 100)] {
        let l = Arc::clone(&locks);
        tasks.push(tokio::spawn(async move {
            let start = Instant::now();
            let r = l.wait_for_xid(session, other).await;
            let took = start.elapsed();
            if r.is_err() {
                l.release_all(session);
            }
            (session, r, took)
        }));
    }
    let mut results = Vec::new();
    for t in tasks {
        results.push(t.await.unwrap());
    }
    check_one_victim(&results, "waits for ShareLock on transaction 10", Found::AfterTimeout);
}

/// A session's own `deadlock_timeout` decides when its wait looks for a
/// cycle, not the manager's default (here 10 s against the session's 150 ms).
#[tokio::test(start_paused = true)]
async fn the_waiters_own_deadlock_timeout_is_honoured() {
    let locks = LockManager::new(LockConfig {
        max_sessions: 4,
        deadlock_timeout: Duration::from_secs(10),
        lock_timeout: None,
    });
    let policy = WaitPolicy { deadlock_timeout: Duration::from_millis(150), lock_timeout: None };
    locks.register_xid(0, 200).unwrap();
    locks.register_xid(1, 201).unwrap();
    let mut tasks = Vec::new();
    for (session, other) in [(0u32, 201u64), (1, 200)] {
        let l = Arc::clone(&locks);
        tasks.push(tokio::spawn(async move {
            let start = tokio::time::Instant::now();
            let r = l.wait_for_xid_with(session, other, policy).await;
            let took = start.elapsed();
            if r.is_err() {
                l.release_all(session);
            }
            (session, r, took)
        }));
    }
    let mut results = Vec::new();
    for t in tasks {
        results.push(t.await.unwrap());
    }
    let victims: Vec<_> = results.iter().filter(|r| r.1.is_err()).collect();
    assert_eq!(victims.len(), 1, "exactly one victim: {results:?}");
    assert_eq!(victims[0].1.as_ref().unwrap_err().sqlstate(), "40P01");
    assert_eq!(victims[0].2, Duration::from_millis(150));
}

/// Two AccessShare holders both upgrading: each waits for the other's hold.
/// The second to ask finds the first queued waiting for it, and fails
/// without waiting (PostgreSQL's check when a holder queues).
#[tokio::test]
async fn lock_upgrade_deadlock() {
    let locks = manager();
    let rel = LockTag::Relation(7);
    let results = cross(
        &locks,
        [(rel, AccessShare), (rel, AccessShare)],
        [(rel, AccessExclusive), (rel, AccessExclusive)],
    )
    .await;
    check_one_victim(&results, "waits for AccessExclusiveLock on relation 7", Found::AtOnce);
}

/// A vxid wait closes a cycle with a relation lock (LAZY-VXID: the
/// materialised lock is in the graph). The vxid waiter is queued first and
/// its deadlock check is due long before the other's, so it runs the check
/// and is the victim.
#[tokio::test]
async fn vxid_wait_takes_part_in_deadlock_detection() {
    let locks = manager();
    let rel = LockTag::Relation(10);
    let vxid = LockTag::VirtualTransaction { slot: 0, local: 1 };
    locks.begin_vxid(0, 1);
    locks.lock(1, rel, Exclusive).await.unwrap();
    let l = Arc::clone(&locks);
    let waiter = tokio::spawn(async move {
        let start = Instant::now();
        let r = l.wait_for_vxid(1, 0, 1).await;
        let took = start.elapsed();
        l.release_all(1);
        (r, took)
    });
    // Observed in the queue, not guessed from a sleep.
    while locks.waiters(vxid).is_empty() {
        tokio::task::yield_now().await;
    }
    assert_eq!(locks.waiters(vxid), [(1, Share)]);
    // The other side of the cycle checks only after ten deadlock_timeouts:
    // the vxid waiter's check comes first whatever the scheduling.
    let late = WaitPolicy { deadlock_timeout: DEADLOCK_TIMEOUT * 10, lock_timeout: None };
    locks.lock_with(0, rel, RowShare, late).await.unwrap();
    let (r, took) = waiter.await.unwrap();
    let err = r.unwrap_err();
    assert_eq!(err.sqlstate(), "40P01");
    assert!(took >= DEADLOCK_TIMEOUT && took < DEADLOCK_TIMEOUT * 10, "{took:?}");
    let detail = err.detail().unwrap();
    assert!(
        detail.contains("Process 1 waits for ShareLock on virtual transaction 0/1; blocked by process 0."),
        "{detail}"
    );
    locks.release_all(0);
}

/// A wait that is not part of a cycle is not reported after the check
/// (on tokio's paused clock: the check's time passes at once, exactly).
#[tokio::test(start_paused = true)]
async fn a_long_wait_without_a_cycle_is_not_a_deadlock() {
    let locks = manager();
    let rel = LockTag::Relation(3);
    locks.lock(0, rel, Exclusive).await.unwrap();
    let l = Arc::clone(&locks);
    let waiter = tokio::spawn(async move { l.lock(1, rel, Share).await });
    tokio::time::sleep(DEADLOCK_TIMEOUT + Duration::from_millis(100)).await;
    assert!(!waiter.is_finished());
    locks.release_all(0);
    waiter.await.unwrap().unwrap();
}

/// A cycle made partly of queue order is broken without a victim
/// (PostgreSQL's deadlock-soft): sessions 0 and 1 share relations A and B;
/// 2 and 3 queue for AccessExclusive on A and B; then 0 queues for a share
/// of B behind 3, and 1 for a share of A behind 2. Every edge out of 0 and 1
/// is queue order, so 1's check moves 0 ahead of 3 on B, and 0 is granted.
/// Nobody fails, and the locks then go in PostgreSQL's order.
#[tokio::test(start_paused = true)]
async fn a_soft_deadlock_is_resolved_by_reordering_a_queue() {
    let locks = manager();
    let (a, b) = (LockTag::Relation(21), LockTag::Relation(22));
    locks.lock(0, a, AccessShare).await.unwrap();
    locks.lock(1, b, AccessShare).await.unwrap();
    let patient = WaitPolicy { deadlock_timeout: Duration::from_secs(100), lock_timeout: None };
    let spawn = |session: u32, tag: LockTag, mode: LockMode, policy: WaitPolicy| {
        let l = Arc::clone(&locks);
        tokio::spawn(async move { l.lock_with(session, tag, mode, policy).await })
    };
    let queued = |tag: LockTag, n: usize| {
        let l = Arc::clone(&locks);
        async move {
            while l.waiters(tag).len() < n {
                tokio::task::yield_now().await;
            }
        }
    };
    let e1 = spawn(2, a, AccessExclusive, patient);
    queued(a, 1).await;
    let e2 = spawn(3, b, AccessExclusive, patient);
    queued(b, 1).await;
    let d1 = spawn(0, b, AccessShare, patient);
    queued(b, 2).await;
    let quick = WaitPolicy { deadlock_timeout: Duration::from_millis(10), lock_timeout: None };
    let d2 = spawn(1, a, AccessShare, quick);
    queued(a, 2).await;
    assert_eq!(locks.waiters(b), [(3, AccessExclusive), (0, AccessShare)]);
    // On the paused clock the timeout passes only once every task is idle:
    // without the reordering, 0 would wait for ever.
    let granted = tokio::time::timeout(Duration::from_secs(50), d1).await;
    granted.expect("0 moved ahead of 3 and granted").unwrap().unwrap();
    assert_eq!(locks.waiters(b), [(3, AccessExclusive)]);
    assert_eq!(locks.waiters(a), [(2, AccessExclusive), (1, AccessShare)], "A's queue is as it was");
    locks.release_all(0);
    e1.await.unwrap().unwrap();
    locks.release_all(2);
    d2.await.unwrap().unwrap();
    locks.release_all(1);
    e2.await.unwrap().unwrap();
    locks.release_all(3);
}

/// A holder asking for more goes ahead of a waiter that waits for it, and
/// is granted at once when that waiter is all that stood in its way
/// (QUEUE-ORDER): 0 holds RowShare, 1 waits for AccessExclusive, 0 asks
/// for RowExclusive.
#[tokio::test]
async fn a_holder_goes_ahead_of_a_waiter_that_waits_for_it() {
    let locks = manager();
    let rel = LockTag::Relation(30);
    locks.lock(0, rel, RowShare).await.unwrap();
    let l = Arc::clone(&locks);
    let strong = tokio::spawn(async move { l.lock(1, rel, AccessExclusive).await });
    while locks.waiters(rel).is_empty() {
        tokio::task::yield_now().await;
    }
    assert!(!locks.try_lock(0, rel, RowExclusive).unwrap(), "NOWAIT: a waiter asks for a conflicting mode");
    locks.lock(0, rel, RowExclusive).await.unwrap();
    assert_eq!(locks.waiters(rel), [(1, AccessExclusive)]);
    locks.release_all(0);
    strong.await.unwrap().unwrap();
}
