//! Every pair of lock modes against the conflict matrix of the PostgreSQL
//! manual ("Table-level Lock Modes", Table 13.2), written out here
//! independently of `src/mode.rs`, both as a table lookup and as behaviour of
//! the lock manager (fast path and shared table).

use snapscale_lock::{LockConfig, LockManager, LockMode, LockTag};

/// Rows: requested mode; columns: existing mode; both in the manual's order
/// (ACCESS SHARE ... ACCESS EXCLUSIVE). `X` = conflict.
const MANUAL: [&str; 8] = [
    ".......X", // ACCESS SHARE
    "......XX", // ROW SHARE
    "....XXXX", // ROW EXCLUSIVE
    "...XXXXX", // SHARE UPDATE EXCLUSIVE
    "..XX.XXX", // SHARE
    "..XXXXXX", // SHARE ROW EXCLUSIVE
    ".XXXXXXX", // EXCLUSIVE
    "XXXXXXXX", // ACCESS EXCLUSIVE
];

const NAMES: [&str; 8] = [
    "AccessShareLock",
    "RowShareLock",
    "RowExclusiveLock",
    "ShareUpdateExclusiveLock",
    "ShareLock",
    "ShareRowExclusiveLock",
    "ExclusiveLock",
    "AccessExclusiveLock",
];

fn expected(requested: usize, existing: usize) -> bool {
    MANUAL[requested].as_bytes()[existing] == b'X'
}

#[test]
fn all_64_pairs_match_the_manual() {
    for (r, requested) in LockMode::ALL.into_iter().enumerate() {
        assert_eq!(requested.to_string(), NAMES[r]);
        for (e, existing) in LockMode::ALL.into_iter().enumerate() {
            assert_eq!(requested.conflicts_with(existing), expected(r, e), "{requested} vs {existing}");
        }
    }
}

#[test]
fn the_manager_enforces_all_64_pairs() {
    let locks = LockManager::new(LockConfig { max_sessions: 2, ..LockConfig::default() });
    let mut oid = 1000;
    for (e, existing) in LockMode::ALL.into_iter().enumerate() {
        for (r, requested) in LockMode::ALL.into_iter().enumerate() {
            oid += 1;
            let tag = LockTag::Relation(oid);
            assert!(locks.try_lock(0, tag, existing).unwrap());
            let granted = locks.try_lock(1, tag, requested).unwrap();
            assert_eq!(granted, !expected(r, e), "{requested} requested while {existing} is held");
            locks.release_all(1);
            // A session never conflicts with itself.
            assert!(locks.try_lock(0, tag, requested).unwrap());
            locks.release_all(0);
            assert!(locks.held_locks(0).is_empty() && locks.held_locks(1).is_empty());
        }
    }
}
