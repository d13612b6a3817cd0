//! Row versions under real sessions: visibility, PostgreSQL's update
//! outcomes, chain following, pruning, and a concurrent bank-transfer
//! workload whose invariant (the total) every snapshot must see.

#![allow(
    clippy::disallowed_types,
    reason = "the bank-transfer test's stop flag is harness, not a protocol under test"
)]

use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use snapscale_storage::{Outcome, RowLockMode, Table, Tid};
use snapscale_txn::{Engine, EngineConfig, IsolationLevel::*, Reader, Session, SnapshotMode};

fn engine(mode: SnapshotMode) -> Arc<Engine> {
    Engine::new(EngineConfig { max_sessions: 16, snapshot_mode: mode, ..EngineConfig::default() })
}

fn table<R: Clone + Send + Sync + 'static>() -> Table<R> {
    Table::new(snapscale_txn::Xid::FIRST_NORMAL)
}

/// Rows visible to a fresh READ COMMITTED statement of `s`.
fn visible(t: &Table<i64>, s: &mut Session) -> Vec<i64> {
    let snap = s.statement_snapshot().unwrap();
    let cid = s.command_id().unwrap();
    let mut rows: Vec<i64> =
        t.scan(&Reader { session: s, snapshot: &snap, cid }).into_iter().map(|(_, r)| r).collect();
    s.end_statement().unwrap();
    rows.sort();
    rows
}

#[test]
fn inserts_are_visible_by_snapshot_and_command() {
    for mode in SnapshotMode::ALL {
        let e = engine(mode);
        let t = table::<i64>();
        let (mut a, mut b) = (e.attach().unwrap(), e.attach().unwrap());
        a.begin(ReadCommitted).unwrap();
        b.begin(RepeatableRead).unwrap();
        assert!(visible(&t, &mut b).is_empty());
        t.insert(&mut a, 1).unwrap();
        // Same command does not see its own insert; the next one does.
        let snap = a.statement_snapshot().unwrap();
        assert!(
            t.scan(&Reader { session: &a, snapshot: &snap, cid: a.command_id().unwrap() }).is_empty(),
            "{mode}"
        );
        a.end_statement().unwrap();
        assert_eq!(visible(&t, &mut a), [1], "{mode}");
        a.commit().unwrap();
        assert!(visible(&t, &mut b).is_empty(), "{mode}: RR snapshot predates the commit");
        b.commit().unwrap();
        b.begin(ReadCommitted).unwrap();
        assert_eq!(visible(&t, &mut b), [1], "{mode}");
    }
}

#[test]
fn concurrent_updates_follow_postgresql_outcomes() {
    for mode in SnapshotMode::ALL {
        let e = engine(mode);
        let t = table::<i64>();
        let (mut a, mut b) = (e.attach().unwrap(), e.attach().unwrap());
        a.begin(ReadCommitted).unwrap();
        let tid = t.insert(&mut a, 10).unwrap();
        a.commit().unwrap();

        a.begin(ReadCommitted).unwrap();
        b.begin(ReadCommitted).unwrap();
        let Outcome::Ok(new) = t.update(&mut a, tid, 11).unwrap() else { panic!("{mode}") };
        let xa = a.xid().unwrap();
        assert_eq!(t.update(&mut b, tid, 20).unwrap(), Outcome::BeingModified(xa), "{mode}");
        assert_eq!(t.update(&mut a, tid, 12).unwrap(), Outcome::SelfModified, "{mode}");
        a.commit().unwrap();
        assert_eq!(t.update(&mut b, tid, 20).unwrap(), Outcome::Updated { xmax: xa, next: new }, "{mode}");
        // READ COMMITTED re-check: follow the chain to the newest version,
        // which was updated, not deleted.
        assert_eq!(t.latest(&b, tid), Some((new, 11)), "{mode}");
        assert!(!t.deleted(&b, tid), "{mode}: an updated version goes on");
        assert!(!t.deleted(&b, new), "{mode}: the newest version is live");
        assert!(matches!(t.update(&mut b, new, 21).unwrap(), Outcome::Ok(_)), "{mode}");
        b.abort();
        // An aborted updater leaves the row free again.
        a.begin(ReadCommitted).unwrap();
        assert!(matches!(t.delete(&mut a, new).unwrap(), Outcome::Ok(_)), "{mode}");
        a.commit().unwrap();
        b.begin(ReadCommitted).unwrap();
        assert!(matches!(t.update(&mut b, new, 30).unwrap(), Outcome::Deleted(_)), "{mode}");
        // The chain from the first version ends in the delete: nothing to
        // re-check (TM_Deleted).
        assert_eq!(t.latest(&b, tid), Some((new, 11)), "{mode}");
        assert!(t.deleted(&b, new), "{mode}");
        assert!(visible(&t, &mut b).is_empty(), "{mode}");
        b.commit().unwrap();
    }
}

#[test]
fn row_locks_block_writers_until_the_locker_ends() {
    let e = engine(SnapshotMode::Csn);
    let t = table::<i64>();
    let (mut a, mut b) = (e.attach().unwrap(), e.attach().unwrap());
    a.begin(ReadCommitted).unwrap();
    let tid = t.insert(&mut a, 1).unwrap();
    a.commit().unwrap();
    a.begin(ReadCommitted).unwrap();
    b.begin(ReadCommitted).unwrap();
    assert_eq!(t.lock_row(&mut a, tid, RowLockMode::Update).unwrap(), Outcome::Ok(tid));
    let xa = a.xid().unwrap();
    assert_eq!(t.update(&mut b, tid, 2).unwrap(), Outcome::BeingModified(xa));
    // A locked row stays visible: a lock is not a delete.
    assert_eq!(visible(&t, &mut b), [1]);
    a.commit().unwrap();
    assert!(matches!(t.update(&mut b, tid, 2).unwrap(), Outcome::Ok(_)), "the locker ended");
    b.commit().unwrap();
}

#[test]
fn vacuum_keeps_what_snapshots_need_and_reuses_slots() {
    for mode in SnapshotMode::ALL {
        let e = engine(mode);
        let t = table::<i64>();
        let (mut w, mut r, mut v) = (e.attach().unwrap(), e.attach().unwrap(), e.attach().unwrap());
        w.begin(ReadCommitted).unwrap();
        let mut tid = t.insert(&mut w, 0).unwrap();
        w.commit().unwrap();
        r.begin(RepeatableRead).unwrap();
        let held = r.statement_snapshot().unwrap();
        for i in 1..=5 {
            w.begin(ReadCommitted).unwrap();
            let Outcome::Ok(next) = t.update(&mut w, tid, i).unwrap() else { panic!() };
            tid = next;
            w.commit().unwrap();
        }
        v.begin(ReadCommitted).unwrap();
        v.statement_snapshot().unwrap();
        v.vacuum_check(&t, 0, mode);
        // The held snapshot still sees the first version.
        assert_eq!(
            t.scan(&Reader { session: &r, snapshot: &held, cid: 0 })
                .into_iter()
                .map(|(_, x)| x)
                .collect::<Vec<_>>(),
            [0],
            "{mode}"
        );
        r.commit().unwrap();
        drop(held);
        v.end_statement().unwrap();
        v.commit().unwrap();
        // Nothing holds the old versions now: all but the newest go.
        v.begin(ReadCommitted).unwrap();
        v.statement_snapshot().unwrap();
        assert_eq!(t.vacuum(&mut v), 5, "{mode}");
        v.commit().unwrap();
        // A long update workload with vacuum keeps the table small.
        for i in 0..200 {
            w.begin(ReadCommitted).unwrap();
            let Outcome::Ok(next) = t.update(&mut w, tid, i).unwrap() else { panic!() };
            tid = next;
            w.commit().unwrap();
            if i % 10 == 0 {
                v.begin(ReadCommitted).unwrap();
                v.statement_snapshot().unwrap();
                t.vacuum(&mut v);
                v.commit().unwrap();
            }
        }
        assert!(t.allocated_slots() < 30, "{mode}: {} slots after 200 updates", t.allocated_slots());
        w.begin(ReadCommitted).unwrap();
        assert_eq!(visible(&t, &mut w), [199], "{mode}");
        w.commit().unwrap();
    }
}

trait VacuumCheck {
    fn vacuum_check(&mut self, t: &Table<i64>, expected: usize, mode: SnapshotMode);
}

impl VacuumCheck for Session {
    fn vacuum_check(&mut self, t: &Table<i64>, expected: usize, mode: SnapshotMode) {
        assert_eq!(t.vacuum(self), expected, "{mode}: a registered snapshot holds every old version");
    }
}

/// One READ COMMITTED transfer with PostgreSQL's retry rules: wait for a
/// running updater, re-read the newest version after a committed one.
fn transfer(t: &Table<(u32, i64)>, s: &mut Session, from: u32, to: u32, amount: i64) {
    s.begin(ReadCommitted).unwrap();
    let snap = s.statement_snapshot().unwrap();
    let cid = s.command_id().unwrap();
    let rows = t.scan(&Reader { session: s, snapshot: &snap, cid });
    // Lower id first: no wait cycles.
    let (first, second) = if from < to { (from, to) } else { (to, from) };
    for (account, delta) in [
        (first, if first == from { -amount } else { amount }),
        (second, if second == from { -amount } else { amount }),
    ] {
        let (mut tid, mut row) = rows.iter().find(|(_, r)| r.0 == account).copied().expect("account visible");
        loop {
            match t.update(s, tid, (row.0, row.1 + delta)).unwrap() {
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
}

#[test]
fn concurrent_transfers_keep_every_snapshot_consistent() {
    for mode in SnapshotMode::ALL {
        let e = engine(mode);
        let t = Arc::new(table::<(u32, i64)>());
        let mut setup = e.attach().unwrap();
        setup.begin(ReadCommitted).unwrap();
        for id in 0..6 {
            t.insert(&mut setup, (id, 100)).unwrap();
        }
        setup.commit().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let mut handles = Vec::new();
        for w in 0..3u32 {
            let (e, t, stop) = (Arc::clone(&e), Arc::clone(&t), Arc::clone(&stop));
            handles.push(thread::spawn(move || {
                let mut s = e.attach().unwrap();
                let mut n = 0u32;
                while !stop.load(SeqCst) {
                    n += 1;
                    let from = (n * 7 + w) % 6;
                    let to = (from + 1 + n % 5) % 6;
                    transfer(&t, &mut s, from, to, i64::from(n % 13));
                }
                n as usize
            }));
        }
        for _ in 0..2 {
            let (e, t, stop) = (Arc::clone(&e), Arc::clone(&t), Arc::clone(&stop));
            handles.push(thread::spawn(move || {
                let mut s = e.attach().unwrap();
                let mut checks = 0;
                while !stop.load(SeqCst) {
                    s.begin(RepeatableRead).unwrap();
                    let snap = s.statement_snapshot().unwrap();
                    let rows = t.scan(&Reader { session: &s, snapshot: &snap, cid: 0 });
                    assert_eq!(rows.len(), 6, "{mode}: one visible version per account");
                    assert_eq!(
                        rows.iter().map(|(_, r)| r.1).sum::<i64>(),
                        600,
                        "{mode}: money created or lost"
                    );
                    thread::yield_now();
                    // Same snapshot, same answer.
                    let again: i64 = t
                        .scan(&Reader { session: &s, snapshot: &snap, cid: 0 })
                        .iter()
                        .map(|(_, r)| r.1)
                        .sum();
                    assert_eq!(again, 600, "{mode}");
                    s.commit().unwrap();
                    checks += 1;
                }
                checks
            }));
        }
        let start = Instant::now();
        while start.elapsed() < Duration::from_millis(300) && !handles.iter().any(|h| h.is_finished()) {
            thread::sleep(Duration::from_millis(10));
        }
        stop.store(true, SeqCst);
        for h in handles {
            let done = h.join().expect("a worker failed its check");
            assert!(done > 0, "{mode}: a worker made no progress");
        }
    }
}

#[test]
fn tids_are_stable_handles() {
    let e = engine(SnapshotMode::Dense);
    let t = table::<i64>();
    let mut s = e.attach().unwrap();
    s.begin(ReadCommitted).unwrap();
    let tids: Vec<Tid> = (0..3).map(|i| t.insert(&mut s, i).unwrap()).collect();
    s.end_statement().unwrap();
    let snap = s.statement_snapshot().unwrap();
    for (i, tid) in tids.iter().enumerate() {
        assert_eq!(
            t.fetch(&Reader { session: &s, snapshot: &snap, cid: s.command_id().unwrap() }, *tid),
            Some(i as i64)
        );
    }
    s.commit().unwrap();
}
