//! Behaviour every snapshot mode must share, checked one scenario at a time.

mod common;

use snapscale_txn::{
    HeldBy, Hints, IsolationLevel::*, SnapshotMode, TupleXids, TxnError, Xid, XidState, XidStatus,
    SUBXID_CACHE,
};

fn each_mode(test: impl Fn(SnapshotMode)) {
    for mode in SnapshotMode::ALL {
        test(mode);
    }
}

#[test]
fn xids_are_lazy_and_children_newer_than_parents() {
    each_mode(|mode| {
        let engine = common::engine(mode, 4);
        let mut s = engine.attach().unwrap();
        s.begin(ReadCommitted).unwrap();
        assert_eq!(s.xid(), None, "{mode}: no xid before the first write");
        s.begin_subtransaction().unwrap();
        s.begin_subtransaction().unwrap();
        let inner = s.assign_xid().unwrap();
        let top = s.xid().unwrap();
        let middle = engine.parent_of(inner);
        assert!(top < middle && middle < inner, "{mode}: {top:?} {middle:?} {inner:?}");
        assert_eq!(engine.parent_of(middle), top);
        assert_eq!(engine.parent_of(top), Xid::INVALID);
        s.commit().unwrap();
        assert!(engine.did_commit(top) && engine.did_commit(middle) && engine.did_commit(inner));
    });
}

#[test]
fn snapshot_lists_running_xids_but_not_own() {
    each_mode(|mode| {
        let engine = common::engine(mode, 4);
        let mut a = engine.attach().unwrap();
        let mut b = engine.attach().unwrap();
        a.begin(ReadCommitted).unwrap();
        let xa = a.assign_xid().unwrap();
        a.begin_subtransaction().unwrap();
        let xa_sub = a.assign_xid().unwrap();
        b.begin(ReadCommitted).unwrap();
        let xb = b.assign_xid().unwrap();
        common::complete_one(&engine);
        let snap = b.statement_snapshot().unwrap();
        if mode != SnapshotMode::Csn {
            // Xid-list snapshots list the others' running xids; a CSN
            // snapshot is (xmin, xmax, csn) and answers from the CSN log.
            assert_eq!(snap.xip(), &[xa], "{mode}");
            assert_eq!(snap.subxip(), &[xa_sub], "{mode}");
        }
        assert_eq!(snap.xmin, xa, "{mode}");
        assert!(engine.xid_in_snapshot(xa, &snap) && engine.xid_in_snapshot(xa_sub, &snap));
        if mode != SnapshotMode::Csn {
            // (A CSN snapshot answers "running" for our own xid; every
            // visibility path asks "is it mine" first, in all modes.)
            assert!(!engine.xid_in_snapshot(xb, &snap) || xb >= snap.xmax, "{mode}: own xid not listed");
        }
        assert!(b.is_current_xid(xb), "{mode}");
        a.commit().unwrap();
        // The held snapshot still says "running"; a new one does not.
        assert!(engine.xid_in_snapshot(xa_sub, &snap), "{mode}: snapshot changed meaning");
        b.end_statement().unwrap();
        let snap2 = b.statement_snapshot().unwrap();
        assert!(!engine.xid_in_snapshot(xa, &snap2) && !engine.xid_in_snapshot(xa_sub, &snap2), "{mode}");
        b.commit().unwrap();
    });
}

#[test]
fn overflowed_subxid_cache_falls_back_to_parent_links() {
    each_mode(|mode| {
        let engine = common::engine(mode, 4);
        let mut a = engine.attach().unwrap();
        let mut b = engine.attach().unwrap();
        a.begin(ReadCommitted).unwrap();
        a.assign_xid().unwrap();
        let mut subs = Vec::new();
        for _ in 0..SUBXID_CACHE + 5 {
            a.begin_subtransaction().unwrap();
            subs.push(a.assign_xid().unwrap());
        }
        common::complete_one(&engine);
        b.begin(RepeatableRead).unwrap();
        let snap = b.statement_snapshot().unwrap();
        // CSN snapshots keep no subxid list, so they cannot overflow.
        assert_eq!(snap.suboverflowed(), mode != SnapshotMode::Csn, "{mode}");
        for &x in &subs {
            assert!(engine.xid_in_snapshot(x, &snap), "{mode}: {x:?}");
            assert!(b.is_in_progress(x), "{mode}: {x:?} in progress");
        }
        // Abort the innermost; it is no longer in progress though its top runs.
        let last = *subs.last().unwrap();
        a.abort_subtransaction().unwrap();
        assert!(!b.is_in_progress(last), "{mode}");
        assert_eq!(b.xid_state(last), XidState::Aborted);
        a.commit().unwrap();
        for &x in &subs[..subs.len() - 1] {
            assert!(engine.xid_in_snapshot(x, &snap), "{mode}: RR snapshot must not change");
            assert_eq!(engine.status(x), XidStatus::Committed);
        }
        assert_eq!(engine.status(last), XidStatus::Aborted);
    });
}

#[test]
fn advertised_xmin_follows_held_snapshots() {
    each_mode(|mode| {
        let engine = common::engine(mode, 4);
        let mut w = engine.attach().unwrap();
        let mut r = engine.attach().unwrap();
        w.begin(ReadCommitted).unwrap();
        let xw = w.assign_xid().unwrap();
        r.begin(ReadCommitted).unwrap();
        let (id, held) = r.register_snapshot().unwrap();
        assert_eq!(r.advertised_xmin(), xw, "{mode}");
        w.commit().unwrap();
        r.statement_snapshot().unwrap();
        r.end_statement().unwrap();
        assert_eq!(r.advertised_xmin(), held.xmin, "{mode}: registered snapshot holds xmin back");
        let h = engine.compute_horizons();
        assert!(h.data_oldest_nonremovable <= held.xmin, "{mode}: horizon passed a live snapshot");
        r.unregister_snapshot(id).unwrap();
        assert_eq!(r.advertised_xmin(), Xid::INVALID, "{mode}");
        r.commit().unwrap();
        assert!(engine.compute_horizons().data_oldest_nonremovable > xw);
    });
}

#[test]
fn vacuum_sessions_are_ignored_by_snapshots_and_data_horizon() {
    each_mode(|mode| {
        let engine = common::engine(mode, 4);
        let mut v = engine.attach().unwrap();
        let mut r = engine.attach().unwrap();
        v.begin(ReadCommitted).unwrap();
        let xv = v.assign_xid().unwrap();
        v.set_in_vacuum(true).unwrap();
        common::complete_one(&engine);
        r.begin(ReadCommitted).unwrap();
        let snap = r.statement_snapshot().unwrap();
        let h = engine.compute_horizons();
        assert_eq!(h.oldest_considered_running, xv, "{mode}: still counted for log truncation");
        if mode == SnapshotMode::Csn {
            // The CSN log is the running set and knows nothing of vacuum
            // flags: a vacuum holding an xid holds back oldest_active, so the
            // data horizon is conservative here (crate README, Notes).
            assert_eq!(h.data_oldest_nonremovable, xv, "{mode}");
        } else {
            assert!(!snap.xip().contains(&xv), "{mode}");
            assert!(h.data_oldest_nonremovable > xv, "{mode}");
        }
        v.commit().unwrap();
        r.commit().unwrap();
    });
}

#[test]
fn tuple_visibility_and_hints() {
    each_mode(|mode| {
        let engine = common::engine(mode, 4);
        let mut w = engine.attach().unwrap();
        let mut r = engine.attach().unwrap();
        w.begin(ReadCommitted).unwrap();
        let xw = w.assign_xid().unwrap();
        let cid = w.command_id().unwrap();
        let row = TupleXids { xmin: xw, cmin: cid, ..TupleXids::default() };
        let hints = Hints::default();
        let own = w.statement_snapshot().unwrap();
        assert!(!w.tuple_visible(&row, &hints, &own, cid), "{mode}: same command does not see its insert");
        w.end_statement().unwrap();
        let own = w.statement_snapshot().unwrap();
        assert!(w.tuple_visible(&row, &hints, &own, w.command_id().unwrap()), "{mode}");
        r.begin(RepeatableRead).unwrap();
        let rs = r.statement_snapshot().unwrap();
        assert!(!r.tuple_visible(&row, &hints, &rs, 0), "{mode}: uncommitted insert invisible");
        assert_eq!(hints.get(), 0, "{mode}: no hint while running");
        w.commit().unwrap();
        assert!(!r.tuple_visible(&row, &hints, &rs, 0), "{mode}: committed after the RR snapshot");
        assert_eq!(hints.get(), 0, "{mode}: no hint from an in-snapshot answer");
        r.commit().unwrap();
        r.begin(ReadCommitted).unwrap();
        let rs = r.statement_snapshot().unwrap();
        assert!(r.tuple_visible(&row, &hints, &rs, 0), "{mode}");
        assert_eq!(hints.get(), Hints::XMIN_COMMITTED, "{mode}");
        assert!(r.tuple_visible(&row, &hints, &rs, 0), "{mode}: hinted answer unchanged");
        r.commit().unwrap();
    });
}

#[test]
fn max_sessions_is_enforced_and_slots_are_reused() {
    let engine = common::engine(SnapshotMode::Dense, 2);
    let a = engine.attach().unwrap();
    let _b = engine.attach().unwrap();
    let err = engine.attach().unwrap_err();
    assert_eq!(err, TxnError::TooManySessions { max: 2 });
    assert_eq!(err.sqlstate(), "53300");
    drop(a);
    assert!(engine.attach().is_ok());
}

#[test]
fn dropping_a_session_aborts_its_transaction() {
    each_mode(|mode| {
        let engine = common::engine(mode, 4);
        let mut a = engine.attach().unwrap();
        a.begin(ReadCommitted).unwrap();
        let x = a.assign_xid().unwrap();
        drop(a);
        assert_eq!(engine.status(x), XidStatus::Aborted, "{mode}");
        let mut b = engine.attach().unwrap();
        b.begin(ReadCommitted).unwrap();
        assert!(!b.is_in_progress(x));
    });
}

#[test]
fn status_log_ring_exhaustion_is_an_error_not_a_crash() {
    let engine = snapscale_txn::Engine::new(snapscale_txn::EngineConfig {
        max_sessions: 2,
        snapshot_mode: SnapshotMode::Dense,
        status_log_pages: 2,
        ..Default::default()
    });
    let mut old = engine.attach().unwrap();
    old.begin(ReadCommitted).unwrap();
    old.assign_xid().unwrap();
    let mut s = engine.attach().unwrap();
    let err = loop {
        s.begin(ReadCommitted).unwrap();
        match s.assign_xid() {
            Ok(_) => s.commit().unwrap(),
            Err(e) => break e,
        }
    };
    assert_eq!(err.sqlstate(), "54000");
    s.abort();
    old.commit().unwrap();
    // With the old transaction gone, truncation frees the ring again.
    let point = engine.truncate_logs(Xid(u64::MAX));
    assert!(point > Xid::FIRST_NORMAL);
    s.begin(ReadCommitted).unwrap();
    assert!(s.assign_xid().is_ok());
}

/// The frozen xid (crate README, "Frozen xid"; FREEZE-TRUNCATE): with small
/// pages, every mode drives 20 times the status log's capacity of xids
/// through it, raising the frozen xid as a vacuum would. A ring that only
/// waits for freezing names the frozen xid; one pinned by an old snapshot
/// or an old transaction names that session. The logs hold the pages of
/// the span in use, not their rings (XIDMAP-REUSE).
#[test]
fn the_frozen_xid_lets_the_status_log_go_round_forever() {
    each_mode(|mode| {
        let engine = snapscale_txn::Engine::new(snapscale_txn::EngineConfig {
            max_sessions: 4,
            snapshot_mode: mode,
            status_log_pages: 4,
            csn_log_pages: 64,
            parent_link_pages: 256,
            log_page_bytes: 64,
            ..Default::default()
        });
        let capacity = engine.status_log_capacity();
        assert_eq!(capacity, 4 * 256, "{mode}: 256 xids per 64-byte page");
        let mut s = engine.attach().unwrap();
        let assign = |s: &mut snapscale_txn::Session| {
            s.begin(ReadCommitted).unwrap();
            let r = s.assign_xid();
            match r {
                Ok(_) => s.commit().unwrap(),
                Err(_) => s.abort(),
            }
            r
        };
        // Nothing frozen: the ring fills, and the error says why.
        let err = loop {
            if let Err(e) = assign(&mut s) {
                break e;
            }
        };
        assert!(
            matches!(err, TxnError::XidSpaceExhausted { held_by: HeldBy::Unfrozen { .. }, .. }),
            "{mode}: {err}"
        );
        assert!(err.to_string().contains("not frozen yet"), "{err}");
        for round in 0..20 * capacity {
            if engine.status_log_span() > capacity / 2 {
                engine.advance_frozen_xid(engine.next_xid());
            }
            assign(&mut s).unwrap_or_else(|e| panic!("{mode}, xid {round}: {e}"));
        }
        let pages = engine.log_pages();
        assert!(pages.status.0 <= 4, "{mode}: {pages:?}");
        assert!(pages.parent_links.0 <= 3 * 256 / 8 + 2, "{mode}: parent links hold the span: {pages:?}");
        // An old snapshot pins the status log: it is named.
        let mut old = engine.attach().unwrap();
        old.begin(RepeatableRead).unwrap();
        let held = old.statement_snapshot().unwrap();
        let err = loop {
            engine.advance_frozen_xid(engine.next_xid());
            if let Err(e) = assign(&mut s) {
                break e;
            }
        };
        assert!(
            matches!(err, TxnError::XidSpaceExhausted { held_by: HeldBy::Snapshot { slot, xmin, .. }, .. }
                if slot == old.slot() && xmin == held.xmin),
            "{mode}: {err}"
        );
        old.commit().unwrap();
        drop(held);
        // So does an old transaction.
        old.begin(ReadCommitted).unwrap();
        let xid = old.assign_xid().unwrap();
        let err = loop {
            engine.advance_frozen_xid(engine.next_xid());
            if let Err(e) = assign(&mut s) {
                break e;
            }
        };
        match err {
            TxnError::XidSpaceExhausted { held_by: HeldBy::Transaction { xid: x, slot, .. }, .. } => {
                assert_eq!(x, xid, "{mode}");
                assert!(slot.is_none_or(|slot| slot == old.slot()), "{mode}");
            }
            other => panic!("{mode}: {other}"),
        }
        old.commit().unwrap();
        engine.advance_frozen_xid(engine.next_xid());
        assign(&mut s).unwrap();
    });
}

/// The long-snapshot policy (crate README, "Failure behaviour"): the CSN log
/// is a bounded ring that recycles itself below the horizon. A snapshot held
/// long enough to pin a full ring makes new xids fail with 54000, naming the
/// session that holds it and its age; nothing is overwritten, and once that
/// snapshot is released the ring recycles and assignment goes on.
#[test]
fn a_long_snapshot_is_named_when_it_fills_the_csn_log() {
    let engine = snapscale_txn::Engine::new(snapscale_txn::EngineConfig {
        max_sessions: 4,
        snapshot_mode: SnapshotMode::Csn,
        csn_log_pages: 4,
        ..Default::default()
    });
    let mut holder = engine.attach().unwrap();
    holder.begin(RepeatableRead).unwrap();
    let held = holder.statement_snapshot().unwrap();
    let mut w = engine.attach().unwrap();
    let mut assigned = 0u64;
    let err = loop {
        w.begin(ReadCommitted).unwrap();
        match w.assign_xid() {
            Ok(_) => {
                w.commit().unwrap();
                assigned += 1;
            }
            Err(e) => break e,
        }
        assert!(assigned < 1_000_000, "the CSN log never filled");
    };
    w.abort();
    assert_eq!(err.sqlstate(), "54000");
    assert!(
        matches!(err, TxnError::XidSpaceExhausted { held_by: HeldBy::Snapshot { slot, xmin, .. }, .. } if slot == holder.slot() && xmin == held.xmin),
        "{err:?}"
    );
    assert!(err.to_string().contains(&format!("session slot {}", holder.slot())), "{err}");
    let oldest = engine.oldest_snapshot().expect("a snapshot is held");
    assert_eq!(oldest.slot, holder.slot());
    assert!(oldest.age_xids >= assigned, "{oldest:?} after {assigned} xids");
    // The held snapshot still answers from the CSN log it pinned.
    assert!(!engine.xid_in_snapshot(held.xmin, &held) || held.xmin >= held.xmax);
    holder.commit().unwrap();
    drop(held);
    for _ in 0..3 * assigned {
        w.begin(ReadCommitted).unwrap();
        w.assign_xid().expect("the ring recycles once the snapshot is gone");
        w.commit().unwrap();
    }
}

/// XIDMAP-FLOOR: a session's `recent_xmin` is the xmin of its last snapshot
/// and can be arbitrarily old (a session that only runs `INSERT … VALUES`
/// takes no new snapshot, yet its unique checks ask `xid_state` about xids
/// found on rows). Once the CSN log (a ring recycled below the horizon) has
/// reused the page of such an xid, the answer must still be "finished",
/// with the outcome from the status log, never "in progress" read off a
/// recycled page (which made the duplicate-key wait spin forever).
#[test]
fn a_stale_recent_xmin_still_sees_recycled_xids_finished() {
    each_mode(|mode| {
        let engine = snapscale_txn::Engine::new(snapscale_txn::EngineConfig {
            max_sessions: 4,
            snapshot_mode: mode,
            status_log_pages: 2,
            // The smallest CSN ring: 2 048 xids.
            csn_log_pages: 2,
            ..Default::default()
        });
        let mut old = engine.attach().unwrap();
        let mut checker = engine.attach().unwrap();
        old.begin(ReadCommitted).unwrap();
        let committed = old.assign_xid().unwrap();
        // The checker's only snapshot: taken while `committed` runs, so its
        // recent_xmin is at most `committed` from now on.
        checker.begin(ReadCommitted).unwrap();
        checker.statement_snapshot().unwrap();
        checker.end_statement().unwrap();
        checker.commit().unwrap();
        old.commit().unwrap();
        old.begin(ReadCommitted).unwrap();
        let aborted = old.assign_xid().unwrap();
        old.abort();
        // Enough xids for the CSN ring to recycle both pages several times.
        let mut w = engine.attach().unwrap();
        for _ in 0..3 * 2 * 1024 {
            w.begin(ReadCommitted).unwrap();
            w.assign_xid().unwrap();
            w.commit().unwrap();
        }
        // The checker, still without a new snapshot, writes and checks rows.
        checker.begin(ReadCommitted).unwrap();
        checker.assign_xid().unwrap();
        assert!(!checker.is_in_progress(committed), "{mode}: finished {committed:?} reads in progress");
        assert!(!checker.is_in_progress(aborted), "{mode}: finished {aborted:?} reads in progress");
        assert_eq!(checker.xid_state(committed), XidState::Committed, "{mode}");
        assert_eq!(checker.xid_state(aborted), XidState::Aborted, "{mode}");
        // The same once the status log is truncated below them (allowed only
        // when no row needs their status any more): not running, at once.
        checker.commit().unwrap();
        engine.truncate_logs(Xid(aborted.0 + 1));
        checker.begin(ReadCommitted).unwrap();
        assert!(!checker.is_in_progress(committed) && !checker.is_in_progress(aborted), "{mode}");
        checker.commit().unwrap();
    });
}

/// A primary restarted with `first_xid` (recovery passes the newest xid it
/// saw + 1): xids continue from there, everything below is finished, and
/// commit, abort, snapshots, overflowed subxids and truncation work with
/// maps whose first page is far from page 0.
#[test]
fn a_primary_restarted_at_first_xid_works_in_every_mode() {
    each_mode(|mode| {
        let first = Xid(10_000_000);
        let engine = snapscale_txn::Engine::new(snapscale_txn::EngineConfig {
            max_sessions: 4,
            snapshot_mode: mode,
            status_log_pages: 4,
            csn_log_pages: 4,
            verify_reuse: true,
            first_xid: first,
            ..Default::default()
        });
        assert_eq!(engine.next_xid(), first, "{mode}");
        let mut r = engine.attach().unwrap();
        r.begin(ReadCommitted).unwrap();
        let snap = r.statement_snapshot().unwrap();
        assert_eq!((snap.xmin, snap.xmax), (first, first), "{mode}: nothing completed yet");
        assert!(!r.is_in_progress(Xid(first.0 - 1)), "{mode}: below first_xid: finished");
        r.end_statement().unwrap();
        let mut a = engine.attach().unwrap();
        a.begin(ReadCommitted).unwrap();
        let xa = a.assign_xid().unwrap();
        assert_eq!(xa, first, "{mode}");
        let mut subs = Vec::new();
        for _ in 0..SUBXID_CACHE + 2 {
            a.begin_subtransaction().unwrap();
            subs.push(a.assign_xid().unwrap());
            a.commit_subtransaction().unwrap();
        }
        let mut b = engine.attach().unwrap();
        b.begin(ReadCommitted).unwrap();
        let xb = b.assign_xid().unwrap();
        b.abort();
        let snap = r.statement_snapshot().unwrap();
        assert_eq!(snap.xmin, xa, "{mode}");
        for &x in subs.iter().chain([&xa]) {
            assert!(engine.xid_in_snapshot(x, &snap) && r.is_in_progress(x), "{mode}: {x:?}");
        }
        assert_eq!(r.xid_state(xb), XidState::Aborted, "{mode}");
        let running = engine.running_xacts();
        assert_eq!(running.oldest_running, xa, "{mode}");
        assert_eq!(running.xids.len(), subs.len() + 1, "{mode}: {running:?}");
        r.end_statement().unwrap();
        a.commit().unwrap();
        let snap = r.statement_snapshot().unwrap();
        for &x in subs.iter().chain([&xa]) {
            assert!(!engine.xid_in_snapshot(x, &snap) && engine.did_commit(x), "{mode}: {x:?}");
        }
        r.end_statement().unwrap();
        r.commit().unwrap();
        assert_eq!(engine.running_xacts().xids, [], "{mode}");
        let h = engine.compute_horizons();
        let used = engine.truncate_logs(h.oldest_considered_running);
        assert!(used > xb, "{mode}: truncated to {used:?}");
        r.begin(ReadCommitted).unwrap();
        assert_eq!(r.xid_state(xa), XidState::Committed, "{mode}: the page is still there");
        assert!(!r.is_in_progress(xb), "{mode}");
        // Enough xids to go round the CSN log's ring (4 pages of 1 024) and
        // recycle its first pages.
        for _ in 0..6 * 1024 {
            common::complete_one(&engine);
        }
        assert!(engine.truncate_logs(engine.next_xid()) > Xid(first.0 + 3 * 1024), "{mode}");
        let mut c = engine.attach().unwrap();
        c.begin(ReadCommitted).unwrap();
        let xc = c.assign_xid().unwrap();
        c.commit().unwrap();
        let snap = r.statement_snapshot().unwrap();
        assert!(!engine.xid_in_snapshot(xc, &snap) && engine.did_commit(xc), "{mode}");
        assert!(!r.is_in_progress(xa), "{mode}");
    });
}

/// `Engine::running_xacts` on a primary lists exactly the live xids, with
/// their parent links: running tops, their open and released subxids
/// (released ones still run with their tree), not rolled-back ones, not
/// finished trees, and not while a commit is half way.
#[test]
fn running_xacts_lists_exactly_the_running_xids() {
    each_mode(|mode| {
        let engine = common::engine(mode, 6);
        common::complete_one(&engine);
        let mut a = engine.attach().unwrap();
        a.begin(ReadCommitted).unwrap();
        let xa = a.assign_xid().unwrap();
        a.begin_subtransaction().unwrap();
        let released = a.assign_xid().unwrap();
        a.commit_subtransaction().unwrap();
        a.begin_subtransaction().unwrap();
        let rolled_back = a.assign_xid().unwrap();
        a.abort_subtransaction().unwrap();
        a.begin_subtransaction().unwrap();
        let open = a.assign_xid().unwrap();
        let done = common::complete_one(&engine);
        let mut b = engine.attach().unwrap();
        b.begin(ReadCommitted).unwrap();
        let xb = b.assign_xid().unwrap();
        let r = engine.running_xacts();
        assert_eq!(r.next_xid, engine.next_xid(), "{mode}");
        assert_eq!(r.oldest_running, xa, "{mode}");
        assert_eq!(r.xids, [(xa, Xid::INVALID), (released, xa), (open, xa), (xb, Xid::INVALID)], "{mode}");
        assert!(!r.xids.iter().any(|&(x, _)| x == rolled_back || x == done));
        a.commit().unwrap();
        b.abort();
        let r = engine.running_xacts();
        assert_eq!((r.xids.len(), r.oldest_running), (0, r.next_xid), "{mode}");
    });
}
