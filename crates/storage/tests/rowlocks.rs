//! Row locks in four modes and multixacts (ROW-LOCKS, XMAX-MULTI and
//! MULTI-TRUNCATE in the crate README), in every snapshot mode: the
//! conflict table, several lockers named by one multi, a no-key updater
//! beside a key-share locker (readers, RR's 40001, the lock carried onto
//! the new version), uniqueness checks, and vacuum replacing finished
//! multis so that the multixact log is truncated and stays bounded while
//! many times its capacity of lockers go through it.

use std::sync::Arc;

use snapscale_storage::{Liveness, MultiXactId, Outcome, RowLockMode, Table, Tid, VacuumOptions};
use snapscale_txn::{
    Engine, EngineConfig, IsolationLevel::*, MemberStatus, Reader, Session, SnapshotMode, Xid,
};
use RowLockMode::*;

/// A multixact log of 4 pages of 8 positions (32 members and heads).
fn engine(mode: SnapshotMode) -> Arc<Engine> {
    Engine::new(EngineConfig {
        max_sessions: 16,
        snapshot_mode: mode,
        multixact_log_pages: 4,
        log_page_bytes: 64,
        status_log_pages: 64,
        csn_log_pages: 256,
        ..EngineConfig::default()
    })
}

const MODES: [RowLockMode; 4] = [KeyShare, Share, NoKeyUpdate, Update];

fn row(t: &Table<i64>, s: &mut Session, v: i64) -> Tid {
    s.begin(ReadCommitted).unwrap();
    let tid = t.insert(s, v).unwrap();
    s.commit().unwrap();
    tid
}

/// Rows a fresh statement of `s` (in its transaction) sees.
fn seen(t: &Table<i64>, s: &mut Session) -> Vec<i64> {
    let snap = s.statement_snapshot().unwrap();
    let cid = s.command_id().unwrap();
    let mut rows: Vec<i64> =
        t.scan(&Reader { session: s, snapshot: &snap, cid }).into_iter().map(|(_, r)| r).collect();
    s.end_statement().unwrap();
    rows.sort();
    rows
}

#[test]
fn the_conflict_table_holds_for_rows() {
    for mode in SnapshotMode::ALL {
        let e = engine(mode);
        let t = Table::<i64>::new(Xid::FIRST_NORMAL);
        let (mut a, mut b, mut w) = (e.attach().unwrap(), e.attach().unwrap(), e.attach().unwrap());
        for held in MODES {
            for asked in MODES {
                let tid = row(&t, &mut w, 1);
                a.begin(ReadCommitted).unwrap();
                b.begin(ReadCommitted).unwrap();
                assert_eq!(t.lock_row(&mut a, tid, held).unwrap(), Outcome::Ok(tid));
                let xa = a.xid().unwrap();
                let got = t.lock_row(&mut b, tid, asked).unwrap();
                if held.conflicts_with(asked) {
                    assert_eq!(got, Outcome::BeingModified(xa), "{mode}: {held:?} then {asked:?}");
                } else {
                    assert_eq!(got, Outcome::Ok(tid), "{mode}: {held:?} then {asked:?}");
                    let (multi, members) = t.holders(&b, tid).unwrap();
                    assert!(multi.is_some(), "{mode}: two lockers name a multi");
                    let xb = b.xid().unwrap();
                    assert_eq!(
                        members.iter().map(|m| (m.xid, m.status)).collect::<Vec<_>>(),
                        [(xa, MemberStatus::Lock(held)), (xb, MemberStatus::Lock(asked))],
                        "{mode}"
                    );
                }
                a.commit().unwrap();
                assert_eq!(t.lock_row(&mut b, tid, asked).unwrap(), Outcome::Ok(tid), "{mode}: a ended");
                b.commit().unwrap();
            }
        }
    }
}

#[test]
fn an_updater_waits_for_every_share_locker_and_relocking_is_idempotent() {
    for mode in SnapshotMode::ALL {
        let e = engine(mode);
        let t = Table::<i64>::new(Xid::FIRST_NORMAL);
        let mut w = e.attach().unwrap();
        let tid = row(&t, &mut w, 1);
        let mut lockers: Vec<Session> = (0..3).map(|_| e.attach().unwrap()).collect();
        for l in &mut lockers {
            l.begin(ReadCommitted).unwrap();
            assert_eq!(t.lock_row(l, tid, Share).unwrap(), Outcome::Ok(tid), "{mode}");
            // Asking again, or weaker, changes nothing.
            let before = t.holders(l, tid).unwrap();
            assert_eq!(t.lock_row(l, tid, KeyShare).unwrap(), Outcome::Ok(tid), "{mode}");
            assert_eq!(t.holders(l, tid).unwrap(), before, "{mode}");
        }
        w.begin(ReadCommitted).unwrap();
        for l in &mut lockers {
            let x = l.xid().unwrap();
            assert_eq!(
                t.update_as(&mut w, tid, 2, NoKeyUpdate).unwrap(),
                Outcome::BeingModified(x),
                "{mode}"
            );
            l.commit().unwrap();
        }
        assert!(matches!(t.update_as(&mut w, tid, 2, NoKeyUpdate).unwrap(), Outcome::Ok(_)), "{mode}");
        w.commit().unwrap();
        w.begin(ReadCommitted).unwrap();
        assert_eq!(seen(&t, &mut w), [2], "{mode}");
        w.commit().unwrap();
    }
}

#[test]
fn a_key_share_locker_and_a_no_key_updater_share_the_row() {
    for mode in SnapshotMode::ALL {
        let e = engine(mode);
        let t = Table::<i64>::new(Xid::FIRST_NORMAL);
        let (mut k, mut u, mut r, mut d) =
            (e.attach().unwrap(), e.attach().unwrap(), e.attach().unwrap(), e.attach().unwrap());
        let tid = row(&t, &mut u, 1);
        r.begin(RepeatableRead).unwrap();
        assert_eq!(seen(&t, &mut r), [1]);
        k.begin(ReadCommitted).unwrap();
        assert_eq!(t.lock_row(&mut k, tid, KeyShare).unwrap(), Outcome::Ok(tid));
        u.begin(ReadCommitted).unwrap();
        let Outcome::Ok(new) = t.update_as(&mut u, tid, 2, NoKeyUpdate).unwrap() else { panic!("{mode}") };
        let (xk, xu) = (k.xid().unwrap(), u.xid().unwrap());
        // The old version names both; the new one carries the lock.
        let (multi, members) = t.holders(&u, tid).unwrap();
        assert!(multi.is_some(), "{mode}");
        assert_eq!(members.len(), 2, "{mode}");
        assert!(members.iter().any(|m| m.xid == xu && m.status == MemberStatus::NoKeyUpdate), "{mode}");
        assert_eq!(t.holders(&u, new).unwrap().1[0].xid, xk, "{mode}: the lock is carried over");
        // Readers resolve the multi's updater: still running.
        assert_eq!(seen(&t, &mut r), [1], "{mode}");
        u.end_statement().unwrap();
        assert_eq!(seen(&t, &mut u), [2], "{mode}: the updater sees its own row");
        // The locker's key share again is granted beside the running updater.
        assert_eq!(t.lock_row(&mut k, tid, KeyShare).unwrap(), Outcome::Ok(tid), "{mode}");
        assert_eq!(t.liveness(&k, tid), Liveness::Deleting(xu), "{mode}");
        // A key update or delete waits (for the updater first).
        d.begin(ReadCommitted).unwrap();
        assert_eq!(t.delete(&mut d, tid).unwrap(), Outcome::BeingModified(xk), "{mode}");
        u.commit().unwrap();
        assert_eq!(t.liveness(&k, tid), Liveness::Dead, "{mode}");
        assert_eq!(t.latest(&d, tid), Some((new, 2)), "{mode}");
        // Running holders in a conflicting mode are waited for first, as
        // PostgreSQL does, even though the updater committed; the new
        // version carries the key share.
        assert_eq!(t.delete(&mut d, tid).unwrap(), Outcome::BeingModified(xk), "{mode}");
        assert_eq!(t.delete(&mut d, new).unwrap(), Outcome::BeingModified(xk), "{mode}");
        // REPEATABLE READ: its snapshot still sees 1; FOR KEY SHARE is
        // granted beside the committed no-key update (and locks the newer
        // version too); FOR SHARE is 40001's case.
        assert_eq!(seen(&t, &mut r), [1], "{mode}");
        assert_eq!(t.lock_row(&mut r, tid, KeyShare).unwrap(), Outcome::Ok(tid), "{mode}");
        let xr = r.xid().unwrap();
        assert!(t.holders(&r, new).unwrap().1.iter().any(|m| m.xid == xr), "{mode}: the chain is locked");
        assert!(matches!(t.lock_row(&mut r, tid, Share).unwrap(), Outcome::Updated { .. }), "{mode}");
        k.commit().unwrap();
        assert_eq!(t.delete(&mut d, new).unwrap(), Outcome::BeingModified(xr), "{mode}");
        r.commit().unwrap();
        assert_eq!(t.delete(&mut d, tid).unwrap(), Outcome::Updated { xmax: xu, next: new }, "{mode}");
        assert_eq!(t.delete(&mut d, new).unwrap(), Outcome::Ok(new), "{mode}");
        d.commit().unwrap();
        d.begin(ReadCommitted).unwrap();
        assert!(seen(&t, &mut d).is_empty(), "{mode}");
        d.commit().unwrap();
    }
}

#[test]
fn an_aborted_updater_leaves_the_lockers_holding() {
    for mode in SnapshotMode::ALL {
        let e = engine(mode);
        let t = Table::<i64>::new(Xid::FIRST_NORMAL);
        let (mut k, mut u, mut w) = (e.attach().unwrap(), e.attach().unwrap(), e.attach().unwrap());
        let tid = row(&t, &mut w, 1);
        k.begin(ReadCommitted).unwrap();
        t.lock_row(&mut k, tid, KeyShare).unwrap();
        u.begin(ReadCommitted).unwrap();
        assert!(matches!(t.update_as(&mut u, tid, 2, NoKeyUpdate).unwrap(), Outcome::Ok(_)));
        u.abort();
        w.begin(ReadCommitted).unwrap();
        assert_eq!(seen(&t, &mut w), [1], "{mode}: the update rolled back");
        assert_eq!(t.update(&mut w, tid, 3).unwrap(), Outcome::BeingModified(k.xid().unwrap()), "{mode}");
        assert!(matches!(t.update_as(&mut w, tid, 3, NoKeyUpdate).unwrap(), Outcome::Ok(_)), "{mode}");
        w.commit().unwrap();
        k.commit().unwrap();
    }
}

/// MULTI-TRUNCATE: rounds of three concurrent FOR SHARE lockers on rows,
/// with vacuum after each round advancing the engine's
/// oldest multi, drive a log of 32 positions round 100 times its capacity;
/// the log stays within its ring's pages and the rows keep answering.
/// Without vacuum the log fills and the lock fails with 54000.
#[test]
fn vacuum_keeps_the_multixact_log_bounded() {
    for mode in SnapshotMode::ALL {
        let e = engine(mode);
        let t = Table::<i64>::new(Xid::FIRST_NORMAL);
        let mut w = e.attach().unwrap();
        let tids: Vec<Tid> = (0..2).map(|i| row(&t, &mut w, i)).collect();
        let mut lockers: Vec<Session> = (0..3).map(|_| e.attach().unwrap()).collect();
        let mut vac = e.attach().unwrap();
        let capacity = e.multi_log_state().capacity;
        let mut rounds = 0;
        while e.next_multi().0 < 100 * capacity {
            rounds += 1;
            for &tid in &tids {
                for l in &mut lockers {
                    l.begin(ReadCommitted).unwrap();
                    let tid = t.latest(l, tid).unwrap().0;
                    assert_eq!(t.lock_row(l, tid, Share).unwrap(), Outcome::Ok(tid), "{mode}");
                }
                for l in &mut lockers {
                    l.commit().unwrap();
                }
            }
            let stats = t.vacuum_with(&mut vac, VacuumOptions { freeze_min_age: 0, remove: true }, |_| {});
            assert!(stats.min_multi > MultiXactId(1), "{mode}: the oldest multi advances");
            e.advance_oldest_multi(stats.min_multi);
            let state = e.multi_log_state();
            assert!(state.resident_pages <= 4 && state.span <= capacity, "{mode}: {state:?}");
        }
        assert!(rounds > 50, "{mode}: {rounds}");
        w.begin(ReadCommitted).unwrap();
        assert_eq!(seen(&t, &mut w), [0, 1], "{mode}");
        w.commit().unwrap();
        // Without vacuum, live references fill the ring: 54000.
        let mut failed = false;
        for _ in 0..capacity {
            for l in &mut lockers {
                l.begin(ReadCommitted).unwrap();
                if t.lock_row(l, tids[0], Share).is_err() {
                    failed = true;
                }
            }
            for l in &mut lockers {
                l.commit().unwrap();
            }
            if failed {
                break;
            }
        }
        assert!(failed, "{mode}: a log that is never truncated fills");
    }
}
