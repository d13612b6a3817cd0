//! Concurrent checker for FASTPATH-TRANSFER and mutual exclusion: tasks on a
//! two-worker runtime take weak and strong locks on a few relations (some
//! through `try_lock`, some two at a time in random order, so deadlocks and
//! their victims occur), and every holder records what it holds in a
//! checker table, asserting that no other session holds a conflicting mode
//! at the same time. `SNAPSCALE_STRESS_ITERS` raises the iteration count.

// The checker table is test bookkeeping shared by tokio tasks, outside any
// loom model: std's `Mutex` is the right one.
#![allow(clippy::disallowed_types)]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use snapscale_lock::{LockConfig, LockError, LockManager, LockMode, LockTag};

const SESSIONS: u32 = 8;
const RELATIONS: u32 = 3;

/// Who holds what, per relation, as the holders themselves report it.
type Checker = Arc<Mutex<HashMap<u32, Vec<(u32, LockMode)>>>>;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn mode(&mut self) -> LockMode {
        // Mostly weak, as real workloads are, so the fast path is busy.
        match self.below(10) {
            0..=6 => LockMode::ALL[self.below(3) as usize],
            _ => LockMode::ALL[3 + self.below(5) as usize],
        }
    }
}

fn record(checker: &Checker, session: u32, oid: u32, mode: LockMode) {
    let mut table = checker.lock().unwrap();
    let holders = table.entry(oid).or_default();
    for &(other, held) in holders.iter() {
        assert!(
            other == session || !mode.conflicts_with(held),
            "FASTPATH-TRANSFER / exclusion: session {session} granted {mode} on {oid} \
             while session {other} holds {held}"
        );
    }
    holders.push((session, mode));
}

fn forget(checker: &Checker, session: u32, oid: u32, mode: LockMode) {
    let mut table = checker.lock().unwrap();
    let holders = table.get_mut(&oid).unwrap();
    let i = holders.iter().position(|&h| h == (session, mode)).unwrap();
    holders.swap_remove(i);
}

async fn session_loop(locks: Arc<LockManager>, checker: Checker, session: u32, iters: u32) -> (u32, u32) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ u64::from(session + 1).wrapping_mul(0xbf58_476d_1ce4_e5b9));
    let (mut deadlocks, mut refused) = (0, 0);
    for _ in 0..iters {
        let n = 1 + rng.below(2) as usize;
        let mut held: Vec<(u32, LockMode)> = Vec::new();
        for _ in 0..n {
            let oid = 1 + rng.below(u64::from(RELATIONS)) as u32;
            let mode = rng.mode();
            let tag = LockTag::Relation(oid);
            let granted = if rng.below(4) == 0 {
                locks.try_lock(session, tag, mode).unwrap()
            } else {
                match locks.lock(session, tag, mode).await {
                    Ok(()) => true,
                    Err(LockError::Deadlock { .. }) => {
                        deadlocks += 1;
                        false
                    }
                    Err(e) => panic!("unexpected {e}"),
                }
            };
            if !granted {
                refused += 1;
                break;
            }
            record(&checker, session, oid, mode);
            held.push((oid, mode));
            tokio::task::yield_now().await;
        }
        // Hold for a moment so that holds overlap across workers.
        tokio::task::yield_now().await;
        for &(oid, mode) in &held {
            forget(&checker, session, oid, mode);
        }
        if rng.below(2) == 0 {
            for &(oid, mode) in held.iter().rev() {
                assert!(locks.unlock(session, LockTag::Relation(oid), mode));
            }
        }
        locks.release_all(session);
        assert!(locks.held_locks(session).is_empty());
    }
    (deadlocks, refused)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_weak_and_strong_locks_never_conflict() {
    let iters = std::env::var("SNAPSCALE_STRESS_ITERS").ok().and_then(|v| v.parse().ok()).unwrap_or(400);
    let locks = LockManager::new(LockConfig {
        max_sessions: SESSIONS,
        deadlock_timeout: Duration::from_millis(10),
        lock_timeout: None,
    });
    let checker: Checker = Arc::default();
    let tasks: Vec<_> = (0..SESSIONS)
        .map(|s| tokio::spawn(session_loop(Arc::clone(&locks), Arc::clone(&checker), s, iters)))
        .collect();
    let mut totals = (0, 0);
    for t in tasks {
        let (d, r) = t.await.unwrap();
        totals = (totals.0 + d, totals.1 + r);
    }
    eprintln!("deadlock victims: {}, refused try_locks: {}", totals.0, totals.1);
    for oid in 1..=RELATIONS {
        let tag = LockTag::Relation(oid);
        assert!(locks.waiters(tag).is_empty());
        // Nothing is left behind, and every strong counter is back at zero.
        assert!(locks.try_lock(0, tag, LockMode::AccessExclusive).unwrap());
        locks.release_all(0);
        assert!(locks.try_lock(1, tag, LockMode::AccessShare).unwrap());
        assert!(locks.held_locks(1)[0].fast_path);
        locks.release_all(1);
    }
}
