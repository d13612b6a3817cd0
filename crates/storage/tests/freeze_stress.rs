//! Stress: FREEZE-TRUNCATE under load. Writers transfer money between
//! accounts (READ COMMITTED, with PostgreSQL's wait and re-check), readers
//! check in REPEATABLE READ snapshots that the total never changes and
//! stays the same twice, and a vacuum thread freezes, removes and advances
//! the engine's frozen xid, so that the status log (four 256-xid pages) is
//! truncated under the readers and goes round many times. Checked: the
//! readers' invariant, no FREEZE-TRUNCATE panic anywhere, the status log
//! went round at least ten times, and the logs' resident pages stay within
//! their spans. Every snapshot mode.
//!
//! The work is a count of transfers, so debug and release builds do the
//! same amount; `SNAPSCALE_STRESS_TXNS` (transfers per writer, default
//! 4 000) changes it.

#![allow(clippy::disallowed_types, reason = "the stop flag is harness, not a protocol under test")]

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::thread;

use snapscale_storage::{Outcome, StorageError, Table, VacuumOptions};
use snapscale_txn::{Engine, EngineConfig, IsolationLevel::*, Reader, Session, SnapshotMode, TxnError};

const ACCOUNTS: u32 = 8;
const WRITERS: u32 = 3;

/// One READ COMMITTED transfer, retried while the status log is full: a
/// writer that outruns the vacuum thread (or a reader's snapshot) finds
/// no xid to take until they catch up, which is the log working as meant,
/// not a failure (the server freezes first and reports 54000 only when a
/// snapshot or transaction pins the log). Returns the retries.
fn transfer(t: &Table<(u32, i64)>, s: &mut Session, from: u32, to: u32, amount: i64) -> u64 {
    let mut retries = 0;
    loop {
        match try_transfer(t, s, from, to, amount) {
            Ok(()) => return retries,
            Err(StorageError::Txn(TxnError::XidSpaceExhausted { .. })) => {
                s.abort();
                retries += 1;
                thread::sleep(std::time::Duration::from_micros(100));
            }
            Err(e) => panic!("transfer failed: {e}"),
        }
    }
}

/// The transfer itself, with PostgreSQL's retry rules: wait for a running
/// updater, re-read the newest version after a committed one. The
/// statement's snapshot keeps the versions it found from being removed.
fn try_transfer(
    t: &Table<(u32, i64)>,
    s: &mut Session,
    from: u32,
    to: u32,
    amount: i64,
) -> Result<(), StorageError> {
    s.begin(ReadCommitted).unwrap();
    let snap = s.statement_snapshot().unwrap();
    let cid = s.command_id().unwrap();
    let rows = t.scan(&Reader { session: s, snapshot: &snap, cid });
    let (first, second) = if from < to { (from, to) } else { (to, from) };
    for (account, delta) in [
        (first, if first == from { -amount } else { amount }),
        (second, if second == from { -amount } else { amount }),
    ] {
        let (mut tid, mut row) = rows.iter().find(|(_, r)| r.0 == account).copied().expect("account visible");
        loop {
            match t.update(s, tid, (row.0, row.1 + delta))? {
                Outcome::Ok(_) => break,
                Outcome::BeingModified(x) => {
                    while s.is_in_progress(x) {
                        thread::yield_now();
                    }
                }
                Outcome::Updated { .. } => {
                    let (t2, r2) = t.latest(s, tid).expect("chain");
                    tid = t2;
                    row = r2;
                }
                other => panic!("transfer met {other:?}"),
            }
        }
    }
    s.end_statement().unwrap();
    s.commit().unwrap();
    Ok(())
}

fn run(mode: SnapshotMode, transfers: u32) {
    let e = Engine::new(EngineConfig {
        max_sessions: 16,
        snapshot_mode: mode,
        status_log_pages: 4,
        csn_log_pages: 64,
        parent_link_pages: 4096,
        log_page_bytes: 64,
        ..EngineConfig::default()
    });
    let t = Arc::new(Table::<(u32, i64)>::new(e.compute_horizons().oldest_considered_running));
    let mut setup = e.attach().unwrap();
    setup.begin(ReadCommitted).unwrap();
    for id in 0..ACCOUNTS {
        t.insert(&mut setup, (id, 100)).unwrap();
    }
    setup.commit().unwrap();
    let first = e.next_xid();
    let stop = Arc::new(AtomicBool::new(false));
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (e, t) = (Arc::clone(&e), Arc::clone(&t));
            thread::spawn(move || {
                let mut s = e.attach().unwrap();
                let mut retries = 0;
                for n in 0..transfers {
                    let from = (n * 7 + w) % ACCOUNTS;
                    let to = (from + 1 + n % (ACCOUNTS - 1)) % ACCOUNTS;
                    retries += transfer(&t, &mut s, from, to, i64::from(n % 13));
                }
                retries
            })
        })
        .collect();
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let (e, t, stop) = (Arc::clone(&e), Arc::clone(&t), Arc::clone(&stop));
            thread::spawn(move || {
                let mut s = e.attach().unwrap();
                let mut checks = 0u64;
                while !stop.load(SeqCst) {
                    s.begin(RepeatableRead).unwrap();
                    let snap = s.statement_snapshot().unwrap();
                    let sum = |s: &Session| -> (usize, i64) {
                        let rows = t.scan(&Reader { session: s, snapshot: &snap, cid: 0 });
                        (rows.len(), rows.iter().map(|(_, r)| r.1).sum())
                    };
                    let first = sum(&s);
                    assert_eq!(first, (ACCOUNTS as usize, 100 * i64::from(ACCOUNTS)), "{mode}");
                    thread::yield_now();
                    assert_eq!(sum(&s), first, "{mode}: a snapshot changed its mind");
                    s.commit().unwrap();
                    checks += 1;
                }
                checks
            })
        })
        .collect();
    let vacuum = {
        let (e, t, stop) = (Arc::clone(&e), Arc::clone(&t), Arc::clone(&stop));
        thread::spawn(move || {
            let mut s = e.attach().unwrap();
            let mut passes = 0u64;
            while !stop.load(SeqCst) {
                let options =
                    VacuumOptions { freeze_min_age: passes % 64, remove: !passes.is_multiple_of(3) };
                t.vacuum_with(&mut s, options, |_| {});
                e.advance_frozen_xid(t.frozen_xid());
                passes += 1;
                thread::yield_now();
            }
            passes
        })
    };
    let retries: u64 = writers.into_iter().map(|w| w.join().expect("a writer failed")).sum();
    println!("{mode}: {retries} transfers waited for the status log to have room");
    stop.store(true, SeqCst);
    for r in readers {
        assert!(r.join().expect("a reader failed its check") > 0, "{mode}: a reader made no progress");
    }
    assert!(vacuum.join().expect("vacuum failed") > 0);
    let driven = e.next_xid().0 - first.0;
    let capacity = e.status_log_capacity();
    assert!(driven >= 10 * capacity, "{mode}: {driven} xids through a log of {capacity}");
    let pages = e.log_pages();
    assert!(pages.status.0 <= 4, "{mode}: {pages:?}");
    assert!(
        pages.parent_links.0 * 8 < 4096,
        "{mode}: parent links hold their span, not their ring: {pages:?}"
    );
    // Once quiet, one more pass freezes everything and the log follows.
    let mut s = e.attach().unwrap();
    t.vacuum_with(&mut s, VacuumOptions { freeze_min_age: 0, remove: true }, |_| {});
    e.advance_frozen_xid(t.frozen_xid());
    assert_eq!(e.status_log_span(), 0, "{mode}: nothing left to keep");
    assert_eq!(t.versions_present(), ACCOUNTS as usize, "{mode}");
}

#[test]
fn transfers_stay_consistent_while_the_status_log_goes_round() {
    let transfers = std::env::var("SNAPSCALE_STRESS_TXNS").ok().and_then(|v| v.parse().ok()).unwrap_or(4_000);
    for mode in SnapshotMode::ALL {
        run(mode, transfers);
    }
}
