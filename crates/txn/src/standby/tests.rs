//! Unit tests of replay, in both standby modes.

use std::sync::Arc;

use super::{Replayer, RunningXacts};
use crate::{
    Engine, EngineConfig, IsolationLevel, Session, Snapshot, SnapshotMode, TxnError, Xid, XidState,
    SUBXID_CACHE,
};

fn standby_engine(mode: SnapshotMode) -> Arc<Engine> {
    Engine::new(EngineConfig {
        max_sessions: 4,
        snapshot_mode: mode,
        status_log_pages: 8,
        csn_log_pages: 16,
        standby: true,
        ..EngineConfig::default()
    })
}

fn start(next: u64, xids: &[(u64, u64)]) -> RunningXacts {
    let xids: Vec<(Xid, Xid)> = xids.iter().map(|&(x, p)| (Xid(x), Xid(p))).collect();
    let oldest = xids.iter().map(|&(x, _)| x).min().unwrap_or(Xid(next));
    RunningXacts { next_xid: Xid(next), oldest_running: oldest, xids }
}

fn standby(mode: SnapshotMode, first: &RunningXacts) -> (Arc<Engine>, Replayer, Session) {
    let engine = standby_engine(mode);
    let replayer = engine.replayer(first);
    let session = engine.attach().unwrap();
    (engine, replayer, session)
}

/// Committed before the snapshot (the model's "visible").
fn visible(engine: &Engine, x: Xid, snap: &Snapshot) -> bool {
    !engine.xid_in_snapshot(x, snap) && engine.did_commit(x)
}

/// A fresh READ COMMITTED snapshot, the statement left open.
fn snapshot(s: &mut Session) -> Arc<Snapshot> {
    if !s.in_transaction() {
        s.begin(IsolationLevel::ReadCommitted).unwrap();
    }
    s.end_statement().unwrap();
    s.statement_snapshot().unwrap()
}

fn each_mode(test: impl Fn(SnapshotMode)) {
    for mode in SnapshotMode::STANDBY {
        test(mode);
    }
}

#[test]
fn the_start_list_is_running_and_the_rest_of_its_span_aborted() {
    each_mode(|mode| {
        let first = start(1000, &[(990, 0), (995, 990), (998, 0)]);
        let (engine, replayer, mut s) = standby(mode, &first);
        s.begin(IsolationLevel::RepeatableRead).unwrap();
        let snap = s.statement_snapshot().unwrap();
        assert_eq!((snap.xmin, snap.xmax), (Xid(990), Xid(1000)), "{mode}");
        for x in 990..1003 {
            let x = Xid(x);
            let running = [990, 995, 998].contains(&x.0) || x.0 >= 1000;
            assert_eq!(s.is_in_progress(x), running, "{mode}: is_in_progress({x:?})");
            assert_eq!(replayer.is_running(x), running, "{mode}: replayer.is_running({x:?})");
            let state = if running { XidState::InProgress } else { XidState::Aborted };
            assert_eq!(s.xid_state(x), state, "{mode}: {x:?}");
            assert!(!visible(&engine, x, &snap), "{mode}: {x:?}");
            if running {
                assert!(engine.xid_in_snapshot(x, &snap), "{mode}: running {x:?} not in {snap:?}");
            }
        }
        assert_eq!(engine.parent_of(Xid(995)), Xid(990));
        assert!(!s.is_in_progress(Xid(989)), "{mode}: below the start: finished");
        assert_eq!(replayer.running(), first, "{mode}: the running set is the start list");
        let h = engine.compute_horizons();
        assert_eq!(h.data_oldest_nonremovable, Xid(990), "{mode}: {h:?}");
        if mode == SnapshotMode::KnownAssigned {
            assert_eq!(snap.xip(), &[Xid(990), Xid(995), Xid(998)]);
            assert!(!snap.suboverflowed());
        }
    });
}

#[test]
fn an_empty_start_list_starts_the_xid_space_at_next_xid() {
    each_mode(|mode| {
        let (engine, mut replayer, mut s) = standby(mode, &start(5000, &[]));
        let snap = snapshot(&mut s);
        assert_eq!((snap.xmin, snap.xmax), (Xid(5000), Xid(5000)), "{mode}");
        assert!(!s.is_in_progress(Xid(4999)) && s.is_in_progress(Xid(5000)), "{mode}");
        replayer.observe(Xid(5000)).unwrap();
        replayer.commit(Xid(5000), &[]).unwrap();
        let snap = snapshot(&mut s);
        assert!(visible(&engine, Xid(5000), &snap), "{mode}");
        assert_eq!(s.xid_state(Xid(5000)), XidState::Committed, "{mode}");
    });
}

#[test]
fn observing_an_xid_fills_the_gap_below_it() {
    each_mode(|mode| {
        let (engine, mut replayer, mut s) = standby(mode, &start(100, &[]));
        replayer.observe(Xid(105)).unwrap();
        assert_eq!(replayer.latest_observed(), Xid(105));
        replayer.observe(Xid(103)).unwrap(); // at or below: a no-op
        assert_eq!(replayer.latest_observed(), Xid(105));
        replayer.commit(Xid(103), &[]).unwrap();
        let snap = snapshot(&mut s);
        for x in 100..110 {
            let x = Xid(x);
            assert_eq!(visible(&engine, x, &snap), x == Xid(103), "{mode}: {x:?}");
            assert_eq!(s.is_in_progress(x), x != Xid(103), "{mode}: unobserved or gap xids run: {x:?}");
        }
        if mode == SnapshotMode::KnownAssigned {
            // xmax = latest completed + 1: the gap below it is listed.
            assert_eq!(snap.xip(), &[Xid(100), Xid(101), Xid(102)]);
        }
        assert_eq!(engine.compute_horizons().data_oldest_nonremovable, Xid(100), "{mode}");
        let running: Vec<Xid> = replayer.running().xids.iter().map(|&(x, _)| x).collect();
        assert_eq!(running, [100, 101, 102, 104, 105].map(Xid), "{mode}");
    });
}

/// 65 subxids of one top (PostgreSQL overflows the standby at the 65th):
/// snapshots are suboverflowed in known-assigned mode and still answer
/// right for every subxid, before and after parts of the tree abort and the
/// rest commits.
#[test]
fn an_overflowed_tree_answers_right_for_every_subxid() {
    each_mode(|mode| {
        let (engine, mut replayer, mut s) = standby(mode, &start(100, &[]));
        let mut a = engine.attach().unwrap();
        let top = Xid(100);
        let other = Xid(101);
        replayer.observe(other).unwrap();
        let subs: Vec<Xid> = (0..SUBXID_CACHE as u64 + 1).map(|i| Xid(102 + i)).collect();
        for &sub in &subs[..SUBXID_CACHE] {
            replayer.assign(top, sub).unwrap();
        }
        // Something completes, so that xmax passes the tree.
        let done = Xid(subs.last().unwrap().0 + 1);
        replayer.observe(done).unwrap();
        replayer.commit(done, &[]).unwrap();
        let before = snapshot(&mut a);
        assert!(!before.suboverflowed(), "{mode}: 64 subxids do not overflow");
        replayer.assign(top, subs[SUBXID_CACHE]).unwrap();
        a.end_statement().unwrap();
        a.commit().unwrap();
        a.begin(IsolationLevel::RepeatableRead).unwrap();
        let overflowed = a.statement_snapshot().unwrap();
        if mode == SnapshotMode::KnownAssigned {
            assert!(overflowed.suboverflowed(), "{mode}: the 65th subxid overflows");
            assert_eq!(overflowed.xip(), &[top, other], "{mode}: only the tops remain listed");
        }
        for snap in [&before, &overflowed] {
            for &x in subs.iter().chain([&top, &other]) {
                assert!(engine.xid_in_snapshot(x, snap), "{mode}: {x:?} running for {snap:?}");
                assert!(s.is_in_progress(x), "{mode}: {x:?} in progress");
            }
        }
        // A subtree aborts: the other subxids still run.
        let aborted = &subs[10..13];
        replayer.abort(aborted).unwrap();
        let mid = snapshot(&mut s);
        for &x in &subs {
            let was_aborted = aborted.contains(&x);
            assert_eq!(s.is_in_progress(x), !was_aborted, "{mode}: {x:?}");
            assert_eq!(s.xid_state(x), if was_aborted { XidState::Aborted } else { XidState::InProgress });
            assert!(!visible(&engine, x, &mid), "{mode}: {x:?}");
        }
        let committed: Vec<Xid> = subs.iter().copied().filter(|x| !aborted.contains(x)).collect();
        assert!(replayer.commit(top, &committed).unwrap().is_some() == (mode == SnapshotMode::Csn));
        let after = snapshot(&mut s);
        for &x in subs.iter().chain([&top]) {
            let expected = !aborted.contains(&x);
            assert_eq!(visible(&engine, x, &after), expected, "{mode}: {x:?} after the commit");
            assert!(!visible(&engine, x, &overflowed), "{mode}: the RR snapshot changed its mind on {x:?}");
            assert!(!visible(&engine, x, &mid), "{mode}: {x:?}");
            assert!(!s.is_in_progress(x), "{mode}: {x:?}");
        }
        assert!(s.is_in_progress(other) && engine.xid_in_snapshot(other, &after), "{mode}");
        let h = engine.compute_horizons();
        assert!(h.data_oldest_nonremovable <= overflowed.xmin, "{mode}: {h:?}");
    });
}

/// A tree that overflowed before the start point: the start list brings
/// its subxids, and the overflow rule applies to them too.
#[test]
fn a_start_list_with_an_overflowed_tree() {
    each_mode(|mode| {
        let mut xids = vec![(200, 0), (201, 0)];
        xids.extend((0..SUBXID_CACHE as u64 + 5).map(|i| (202 + i, 200)));
        let next = 202 + SUBXID_CACHE as u64 + 5;
        let first = start(next, &xids);
        let (engine, mut replayer, mut s) = standby(mode, &first);
        s.begin(IsolationLevel::RepeatableRead).unwrap();
        let snap = s.statement_snapshot().unwrap();
        if mode == SnapshotMode::KnownAssigned {
            assert!(snap.suboverflowed());
            assert_eq!(snap.xip(), &[Xid(200), Xid(201)]);
        }
        for &(x, _) in &xids {
            assert!(engine.xid_in_snapshot(Xid(x), &snap) && s.is_in_progress(Xid(x)), "{mode}: {x}");
        }
        let subs: Vec<Xid> = xids[2..].iter().map(|&(x, _)| Xid(x)).collect();
        replayer.commit(Xid(200), &subs).unwrap();
        let mut t = engine.attach().unwrap();
        let after = snapshot(&mut t);
        for &x in subs.iter().chain([&Xid(200)]) {
            assert!(visible(&engine, x, &after) && !visible(&engine, x, &snap), "{mode}: {x:?}");
        }
        assert!(s.is_in_progress(Xid(201)));
        let mut sorted = first.xids.clone();
        sorted.retain(|&(x, _)| x == Xid(201));
        assert_eq!(replayer.running().xids, sorted, "{mode}");
    });
}

#[test]
fn a_running_xacts_record_aborts_xids_that_vanished() {
    each_mode(|mode| {
        let (engine, mut replayer, mut s) = standby(mode, &start(300, &[(290, 0), (291, 290)]));
        replayer.observe(Xid(300)).unwrap();
        replayer.assign(Xid(300), Xid(302)).unwrap();
        replayer.observe(Xid(305)).unwrap();
        // The primary crashed: 290, 291, 300 and its subxid 302, and 301,
        // vanished; 303 and later still run there.
        let r = RunningXacts { next_xid: Xid(310), oldest_running: Xid(303), xids: Vec::new() };
        replayer.running_xacts(&r).unwrap();
        assert_eq!(replayer.latest_observed(), Xid(309), "observed up to next_xid - 1");
        let snap = snapshot(&mut s);
        for x in 290..312 {
            let x = Xid(x);
            let running = x >= Xid(303);
            assert_eq!(s.is_in_progress(x), running, "{mode}: {x:?}");
            assert_eq!(replayer.is_running(x), running, "{mode}: {x:?}");
            if x >= Xid(290) && !running {
                assert_eq!(s.xid_state(x), XidState::Aborted, "{mode}: {x:?}");
            }
            assert!(!visible(&engine, x, &snap));
        }
        assert_eq!(snap.xmin, Xid(303), "{mode}");
        assert_eq!(engine.compute_horizons().data_oldest_nonremovable, Xid(303), "{mode}");
        // The record never adds running xids, and a stale one changes nothing.
        let stale =
            RunningXacts { next_xid: Xid(305), oldest_running: Xid(280), xids: vec![(Xid(290), Xid(0))] };
        replayer.running_xacts(&stale).unwrap();
        assert!(!s.is_in_progress(Xid(290)) && s.is_in_progress(Xid(303)), "{mode}");
    });
}

#[test]
fn records_about_finished_xids_are_skipped() {
    each_mode(|mode| {
        let (engine, mut replayer, mut s) = standby(mode, &start(400, &[(395, 0)]));
        replayer.observe(Xid(401)).unwrap();
        let csn = replayer.commit(Xid(400), &[]).unwrap();
        assert_eq!(csn.is_some(), mode == SnapshotMode::Csn);
        // A second commit record, an abort after the commit, a commit of an
        // xid the start list says finished, one below the floor: no-ops.
        assert_eq!(replayer.commit(Xid(400), &[]).unwrap(), None);
        replayer.abort(&[Xid(400)]).unwrap();
        assert_eq!(replayer.commit(Xid(397), &[]).unwrap(), None);
        assert_eq!(replayer.commit(Xid(12), &[]).unwrap(), None);
        replayer.abort(&[Xid(398), Xid(3)]).unwrap();
        replayer.assign(Xid(400), Xid(402)).unwrap(); // top finished: 402 aborted
        let snap = snapshot(&mut s);
        assert!(visible(&engine, Xid(400), &snap), "{mode}");
        assert_eq!(s.xid_state(Xid(400)), XidState::Committed);
        assert_eq!(s.xid_state(Xid(397)), XidState::Aborted);
        assert_eq!(s.xid_state(Xid(402)), XidState::Aborted);
        assert!(s.is_in_progress(Xid(395)) && s.is_in_progress(Xid(401)), "{mode}");
        // A commit record whose top already finished: its unfinished
        // subxids end with it (aborted), never half a tree.
        replayer.assign(Xid(401), Xid(403)).unwrap();
        replayer.abort(&[Xid(401)]).unwrap();
        assert!(!s.is_in_progress(Xid(403)), "{mode}: a tree ends with its top");
        replayer.observe(Xid(404)).unwrap();
        replayer.abort(&[Xid(404)]).unwrap();
        assert_eq!(replayer.commit(Xid(404), &[Xid(405)]).unwrap(), None);
        assert_eq!(s.xid_state(Xid(405)), XidState::Aborted, "{mode}");
    });
}

/// A commit record that does not list a subxid replay knows for the tree:
/// that subxid did not commit.
#[test]
fn unlisted_subxids_of_a_committed_tree_abort_with_it() {
    each_mode(|mode| {
        let (engine, mut replayer, mut s) = standby(mode, &start(500, &[]));
        replayer.assign(Xid(500), Xid(501)).unwrap();
        replayer.assign(Xid(500), Xid(502)).unwrap();
        replayer.commit(Xid(500), &[Xid(502)]).unwrap();
        let snap = snapshot(&mut s);
        assert!(visible(&engine, Xid(502), &snap) && visible(&engine, Xid(500), &snap), "{mode}");
        assert_eq!(s.xid_state(Xid(501)), XidState::Aborted, "{mode}");
        assert!(replayer.running().xids.is_empty(), "{mode}");
    });
}

/// A standby restarted from its own `running()` (a restartpoint) answers
/// like the original for every xid the list covers, and stays in step as
/// the same records are replayed into both.
#[test]
fn a_standby_restarted_from_running_answers_like_the_original() {
    each_mode(|mode| {
        let (e1, mut r1, mut s1) = standby(mode, &start(600, &[(590, 0), (592, 590)]));
        r1.observe(Xid(603)).unwrap();
        for i in 0..SUBXID_CACHE as u64 + 3 {
            r1.assign(Xid(601), Xid(610 + i)).unwrap();
        }
        r1.commit(Xid(600), &[]).unwrap();
        r1.abort(&[Xid(602)]).unwrap();
        r1.abort(&[Xid(612), Xid(613)]).unwrap();
        r1.assign(Xid(590), Xid(700)).unwrap();
        let restart = r1.running();
        let (e2, mut r2, mut s2) = standby(mode, &restart);
        let compare = |s1: &mut Session, s2: &mut Session, hi: u64, what: &str| {
            let (a, b) = (snapshot(s1), snapshot(s2));
            let lo = restart.oldest_running.0;
            for x in lo..hi {
                let x = Xid(x);
                assert_eq!(
                    s1.is_in_progress(x),
                    s2.is_in_progress(x),
                    "{mode} {what}: is_in_progress({x:?})"
                );
                if s1.is_in_progress(x) {
                    assert!(e2.xid_in_snapshot(x, &b), "{mode} {what}: {x:?}");
                }
                let known_at_restart = x >= restart.next_xid || restart.xids.iter().any(|&(r, _)| r == x);
                if known_at_restart {
                    // (xid_in_snapshot itself may differ for an aborted
                    // xid: one snapshot maps it to its running top, the
                    // other knows no parent link for it; neither sees it.)
                    assert_eq!(visible(&e1, x, &a), visible(&e2, x, &b), "{mode} {what}: {x:?}");
                } else {
                    // REPLAY-START: finished before the restart point; no
                    // row on the restarted standby carries it, and it
                    // calls it aborted.
                    assert_eq!(s2.xid_state(x), XidState::Aborted, "{mode} {what}: {x:?}");
                }
            }
        };
        compare(&mut s1, &mut s2, r1.latest_observed().0 + 3, "at the restart");
        let subs: Vec<Xid> =
            (0..SUBXID_CACHE as u64 + 3).map(|i| Xid(610 + i)).filter(|x| x.0 != 612 && x.0 != 613).collect();
        for r in [&mut r1, &mut r2] {
            r.commit(Xid(601), &subs).unwrap();
            r.abort(&[Xid(592)]).unwrap();
            r.observe(Xid(705)).unwrap();
            r.commit(Xid(703), &[]).unwrap();
        }
        compare(&mut s1, &mut s2, r1.latest_observed().0 + 3, "after more replay");
        let (a, b) = (snapshot(&mut s1), snapshot(&mut s2));
        for &x in subs.iter().chain(&[Xid(601), Xid(703)]) {
            assert!(visible(&e1, x, &a) && visible(&e2, x, &b), "{mode}: {x:?}");
        }
        assert_eq!(r1.running(), r2.running(), "{mode}");
    });
}

#[test]
fn standby_sessions_are_read_only() {
    each_mode(|mode| {
        let (engine, _replayer, mut s) = standby(mode, &start(50, &[]));
        assert!(engine.is_standby());
        assert_eq!(s.assign_xid(), Err(TxnError::NoTransaction));
        s.begin(IsolationLevel::RepeatableRead).unwrap();
        let err = s.assign_xid().unwrap_err();
        assert_eq!(err, TxnError::ReadOnly);
        assert_eq!(err.sqlstate(), "25006");
        assert_eq!(err.to_string(), "cannot assign a transaction id during recovery");
        s.begin_subtransaction().unwrap();
        assert_eq!(s.assign_xid(), Err(TxnError::ReadOnly));
        s.abort_subtransaction().unwrap();
        let (id, _) = s.register_snapshot().unwrap();
        s.statement_snapshot().unwrap();
        assert!(s.advertised_xmin().is_valid());
        s.unregister_snapshot(id).unwrap();
        s.end_statement().unwrap();
        s.commit().unwrap();
        assert!(!s.advertised_xmin().is_valid());
        assert!(s.is_removable(Xid(49)) && !s.is_removable(Xid(50)), "{mode}");
    });
}

#[test]
fn truncation_works_on_a_standby_and_stops_at_its_horizon() {
    each_mode(|mode| {
        let (engine, mut replayer, mut s) = standby(mode, &start(1000, &[]));
        for x in 1000..1100u64 {
            replayer.observe(Xid(x)).unwrap();
            if x % 7 != 0 {
                replayer.commit(Xid(x), &[]).unwrap();
            }
        }
        s.begin(IsolationLevel::RepeatableRead).unwrap();
        let snap = s.statement_snapshot().unwrap();
        assert_eq!(snap.xmin, Xid(1001), "{mode}");
        let used = engine.truncate_logs(Xid(2000));
        assert_eq!(used, Xid(1001), "{mode}: capped at the oldest running xid");
        assert!(!s.is_in_progress(Xid(1000)));
        replayer.commit(Xid(1001), &[]).unwrap();
        assert_eq!(engine.truncate_logs(Xid(2000)), Xid(1001), "{mode}: capped at the live snapshot");
        s.commit().unwrap();
        assert_eq!(engine.truncate_logs(Xid(2000)), Xid(1008), "{mode}");
    });
}

/// A standby whose CSN log ring is small: replay recycles its pages as the
/// horizon passes them, and refuses (54000) when a snapshot pins the ring.
#[test]
// Thousands of replayed xids: too slow for Miri, and the pages it recycles
// are the xidmap's, which its own tests cover there.
#[cfg_attr(miri, ignore)]
fn a_full_ring_is_recycled_or_refused() {
    let engine = Engine::new(EngineConfig {
        max_sessions: 4,
        snapshot_mode: SnapshotMode::Csn,
        csn_log_pages: 2,
        standby: true,
        ..EngineConfig::default()
    });
    let mut replayer = engine.replayer(&start(10, &[]));
    let per_ring = 2 * crate::xidmap::PAGE_WORDS as u64;
    for x in 10..10 + 3 * per_ring {
        replayer.observe(Xid(x)).unwrap();
        replayer.commit(Xid(x), &[]).unwrap();
    }
    let mut s = engine.attach().unwrap();
    s.begin(IsolationLevel::RepeatableRead).unwrap();
    s.statement_snapshot().unwrap();
    let mut refused = None;
    for x in 10 + 3 * per_ring..10 + 6 * per_ring {
        if let Err(e) = replayer.observe(Xid(x)) {
            refused = Some(e);
            break;
        }
        replayer.commit(Xid(x), &[]).unwrap();
    }
    let e = refused.expect("a pinned ring refuses");
    assert_eq!(e.sqlstate(), "54000");
    assert!(matches!(e, TxnError::XidSpaceExhausted { held_by: crate::HeldBy::Snapshot { .. }, .. }), "{e}");
    s.commit().unwrap();
    let next = replayer.latest_observed().next();
    replayer.observe(next).unwrap();
}

#[test]
#[should_panic(expected = "exactly one replayer")]
fn a_second_replayer_is_refused() {
    let engine = standby_engine(SnapshotMode::Csn);
    let _first = engine.replayer(&start(10, &[]));
    let _second = engine.replayer(&start(10, &[]));
}

#[test]
#[should_panic(expected = "taken before the replayer")]
fn a_snapshot_before_the_replayer_is_refused() {
    let engine = standby_engine(SnapshotMode::KnownAssigned);
    let mut s = engine.attach().unwrap();
    s.begin(IsolationLevel::RepeatableRead).unwrap();
    s.statement_snapshot().unwrap();
    let _replayer = engine.replayer(&start(10, &[]));
}

#[test]
#[should_panic(expected = "only a standby replays")]
fn a_primary_has_no_replayer() {
    let engine = Engine::new(EngineConfig::default());
    let _replayer = engine.replayer(&start(10, &[]));
}

#[test]
#[should_panic(expected = "standby's mode")]
fn known_assigned_needs_a_standby() {
    Engine::new(EngineConfig { snapshot_mode: SnapshotMode::KnownAssigned, ..EngineConfig::default() });
}

#[test]
#[should_panic(expected = "not available on a standby")]
fn a_standby_refuses_primary_only_modes() {
    Engine::new(EngineConfig {
        snapshot_mode: SnapshotMode::Dense,
        standby: true,
        ..EngineConfig::default()
    });
}

#[test]
fn mode_names() {
    assert_eq!("known-assigned".parse::<SnapshotMode>(), Ok(SnapshotMode::KnownAssigned));
    assert_eq!(SnapshotMode::KnownAssigned.to_string(), "known-assigned");
    assert!(!SnapshotMode::ALL.contains(&SnapshotMode::KnownAssigned));
    assert!(SnapshotMode::STANDBY.contains(&SnapshotMode::Csn));
    let err = "nope".parse::<SnapshotMode>().unwrap_err();
    assert!(err.contains("known-assigned") && err.contains("dense-cached"), "{err}");
}
