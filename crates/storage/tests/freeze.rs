//! Freezing (FREEZE-TRUNCATE in the crate README): vacuum freezes what
//! every snapshot sees, clears finished lockers and aborted deleters, marks
//! and removes what none sees, and raises the table's frozen xid; the
//! engine's status log is then truncated past the rows' xids and goes round
//! many times while the rows keep answering, in every snapshot mode.

use std::sync::Arc;

use snapscale_storage::{Liveness, Outcome, RowLockMode, Table, VacuumOptions};
use snapscale_txn::{Engine, EngineConfig, IsolationLevel::*, Reader, Session, SnapshotMode, Xid};

/// Status-log pages of 64 bytes (256 xids), four in the ring.
fn engine(mode: SnapshotMode) -> Arc<Engine> {
    Engine::new(EngineConfig {
        max_sessions: 8,
        snapshot_mode: mode,
        status_log_pages: 4,
        csn_log_pages: 256,
        log_page_bytes: 64,
        ..EngineConfig::default()
    })
}

const FREEZE: VacuumOptions = VacuumOptions { freeze_min_age: 0, remove: true };

/// Rows visible to a fresh READ COMMITTED statement of `s`.
fn visible(t: &Table<i64>, s: &mut Session) -> Vec<i64> {
    s.begin(ReadCommitted).unwrap();
    let snap = s.statement_snapshot().unwrap();
    let cid = s.command_id().unwrap();
    let mut rows: Vec<i64> =
        t.scan(&Reader { session: s, snapshot: &snap, cid }).into_iter().map(|(_, r)| r).collect();
    s.end_statement().unwrap();
    s.commit().unwrap();
    rows.sort();
    rows
}

/// Burns `n` xids (each its own committed transaction).
fn burn(s: &mut Session, n: u64) {
    for _ in 0..n {
        s.begin(ReadCommitted).unwrap();
        s.assign_xid().unwrap();
        s.commit().unwrap();
    }
}

#[test]
fn frozen_rows_outlive_their_status() {
    for mode in SnapshotMode::ALL {
        let e = engine(mode);
        let t = Table::<i64>::new(e.compute_horizons().oldest_considered_running);
        let mut s = e.attach().unwrap();
        // Committed rows 1, 2, 3; 4 inserted by an aborted transaction.
        s.begin(ReadCommitted).unwrap();
        let tids: Vec<_> = (1..=3).map(|v| t.insert(&mut s, v).unwrap()).collect();
        s.commit().unwrap();
        s.begin(ReadCommitted).unwrap();
        t.insert(&mut s, 4).unwrap();
        s.abort();
        // 2 deleted by an aborted transaction, 3 locked by a committed one:
        // both xmaxes are cleared by the freeze.
        s.begin(ReadCommitted).unwrap();
        assert!(matches!(t.delete(&mut s, tids[1]).unwrap(), Outcome::Ok(_)));
        s.abort();
        s.begin(ReadCommitted).unwrap();
        assert!(matches!(t.lock_row(&mut s, tids[2], RowLockMode::Update).unwrap(), Outcome::Ok(_)));
        s.commit().unwrap();
        // 1 updated into 10: its old version is dead.
        s.begin(ReadCommitted).unwrap();
        let Outcome::Ok(ten) = t.update(&mut s, tids[0], 10).unwrap() else { panic!("{mode}") };
        s.commit().unwrap();
        let stats = t.vacuum_with(&mut s, FREEZE, |_| {});
        assert_eq!(
            (stats.removed, stats.kept, stats.frozen, stats.cleared),
            (2, 3, 3, 2),
            "{mode}: {stats:?}"
        );
        assert_eq!(stats.frozen_xid, stats.cutoff, "{mode}: nothing unfrozen is left");
        // The status log forgets every xid those rows carried, and goes round.
        let capacity = e.status_log_capacity();
        for _ in 0..8 {
            burn(&mut s, capacity / 2);
            t.vacuum_with(&mut s, FREEZE, |_| {});
            e.advance_frozen_xid(t.frozen_xid());
        }
        assert!(e.oldest_tracked_xid() > stats.cutoff, "{mode}: the status log moved past the rows");
        assert_eq!(visible(&t, &mut s), [2, 3, 10], "{mode}");
        // Frozen rows answer every question without their status.
        assert_eq!(t.liveness(&s, ten), Liveness::Live, "{mode}");
        assert_eq!(t.liveness(&s, tids[1]), Liveness::Live, "{mode}");
        s.begin(ReadCommitted).unwrap();
        assert!(matches!(t.update(&mut s, tids[2], 30).unwrap(), Outcome::Ok(_)), "{mode}");
        assert!(matches!(t.delete(&mut s, tids[1]).unwrap(), Outcome::Ok(_)), "{mode}");
        s.commit().unwrap();
        assert_eq!(visible(&t, &mut s), [10, 30], "{mode}");
    }
}

/// A pass that only marks (the catalog's table, whose tids are held
/// elsewhere) leaves dead versions in place, invisible to every reader
/// after their status is gone.
#[test]
fn marked_dead_versions_stay_dead_without_their_status() {
    for mode in SnapshotMode::ALL {
        let e = engine(mode);
        let t = Table::<i64>::new(e.compute_horizons().oldest_considered_running);
        let mut s = e.attach().unwrap();
        s.begin(ReadCommitted).unwrap();
        let a = t.insert(&mut s, 1).unwrap();
        let b = t.insert(&mut s, 2).unwrap();
        s.commit().unwrap();
        s.begin(ReadCommitted).unwrap();
        assert!(matches!(t.delete(&mut s, a).unwrap(), Outcome::Ok(_)));
        s.commit().unwrap();
        let mark = VacuumOptions { freeze_min_age: 0, remove: false };
        let stats = t.vacuum_with(&mut s, mark, |_| panic!("nothing is removed"));
        assert_eq!((stats.dead, stats.removed, t.versions_present()), (1, 0, 2), "{mode}");
        let capacity = e.status_log_capacity();
        for _ in 0..4 {
            burn(&mut s, capacity / 2);
            t.vacuum_with(&mut s, mark, |_| {});
            e.advance_frozen_xid(t.frozen_xid());
        }
        assert_eq!(visible(&t, &mut s), [2], "{mode}");
        assert_eq!(t.liveness(&s, a), Liveness::Dead, "{mode}");
        assert_eq!(t.liveness(&s, b), Liveness::Live, "{mode}");
        assert_eq!(t.count_versions(&e), (1, 1), "{mode}: live and dead");
        s.begin(ReadCommitted).unwrap();
        assert_eq!(t.update(&mut s, a, 5).unwrap(), Outcome::Invisible, "{mode}");
        s.commit().unwrap();
    }
}

/// vacuum_freeze_min_age: rows younger than it keep their xmin, and the
/// table's frozen xid stays at the oldest of them; a snapshot holds the
/// cutoff, and with it the frozen xid, back.
#[test]
fn the_frozen_xid_follows_what_is_left_unfrozen() {
    let e = engine(SnapshotMode::Dense);
    let t = Table::<i64>::new(e.compute_horizons().oldest_considered_running);
    let mut s = e.attach().unwrap();
    s.begin(ReadCommitted).unwrap();
    t.insert(&mut s, 1).unwrap();
    let first = s.xid().unwrap();
    s.commit().unwrap();
    burn(&mut s, 100);
    let young = VacuumOptions { freeze_min_age: 50, remove: true };
    let stats = t.vacuum_with(&mut s, young, |_| {});
    assert_eq!(stats.frozen, 1, "100 xids old: frozen");
    s.begin(ReadCommitted).unwrap();
    t.insert(&mut s, 2).unwrap();
    let second = s.xid().unwrap();
    s.commit().unwrap();
    burn(&mut s, 10);
    let stats = t.vacuum_with(&mut s, young, |_| {});
    assert_eq!(stats.frozen, 0, "10 xids old: kept");
    assert_eq!(t.frozen_xid(), second, "the oldest unfrozen xmin");
    assert!(first < second);
    // A snapshot taken now pins the cutoff.
    let mut old = e.attach().unwrap();
    old.begin(RepeatableRead).unwrap();
    let held = old.statement_snapshot().unwrap();
    burn(&mut s, 100);
    let stats = t.vacuum_with(&mut s, FREEZE, |_| {});
    assert_eq!(stats.cutoff, held.xmin);
    assert_eq!(t.frozen_xid(), held.xmin);
    old.commit().unwrap();
    assert_eq!(e.advance_frozen_xid(Xid(u64::MAX)), e.compute_horizons().oldest_considered_running);
}
