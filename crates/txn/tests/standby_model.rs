//! Random replay streams on a hot standby, in both standby modes, with every
//! answer compared against a serial reference model.
//!
//! A stream is what a primary's WAL would say: xids assigned in increasing
//! order (some never named until a later xid fills the gap, some named by
//! changes or assignment records), trees with subxids (some overflowing
//! past `SUBXID_CACHE`), commits, aborts of trees and of subtrees, records
//! repeated for finished xids, trees that vanish in a primary crash and a
//! running-xacts record with a correct `oldest_running` that expires them.
//! Standby sessions take READ COMMITTED and REPEATABLE READ snapshots in
//! between, and row versions carry the primary's xids.
//!
//! The model: a snapshot sees xid `x` committed iff `x`'s commit was
//! replayed before the snapshot was taken. Every held snapshot is checked
//! against it for every xid of the stream (`xid_in_snapshot` with the
//! status log, and row visibility with and without hint bits), again after
//! every later step (so a REPEATABLE READ snapshot can never change its
//! answers); `xid_state` and `is_in_progress` must match the model's fate;
//! the horizon never passes a held snapshot's xmin or a running xid.

use std::collections::BTreeMap;
use std::sync::Arc;

use proptest::prelude::*;
use snapscale_txn::{
    Engine, EngineConfig, Hints, IsolationLevel, Replayer, RunningXacts, Session, Snapshot, SnapshotId,
    SnapshotMode, TupleXids, Xid, XidState, SUBXID_CACHE,
};

const SESSIONS: usize = 3;

/// The primary's next xid at the start point.
const START: u64 = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Running,
    Aborted,
    /// Committed by the n-th replayed commit.
    Committed(u64),
}

#[derive(Clone, Debug)]
struct Node {
    /// The tree's top (None for a top).
    top: Option<Xid>,
    fate: Fate,
    /// The primary lost it in a crash: no record will name it again.
    vanished: bool,
}

#[derive(Default)]
struct Model {
    xids: BTreeMap<Xid, Node>,
    commits: u64,
    next: u64,
}

impl Model {
    fn committed_by(&self, x: Xid, seen: u64) -> bool {
        matches!(self.xids.get(&x).map(|n| n.fate), Some(Fate::Committed(c)) if c <= seen)
    }

    fn running_tops(&self) -> Vec<Xid> {
        self.xids
            .iter()
            .filter(|(_, n)| n.top.is_none() && n.fate == Fate::Running && !n.vanished)
            .map(|(&x, _)| x)
            .collect()
    }

    fn running_subs(&self, top: Xid) -> Vec<Xid> {
        self.xids
            .iter()
            .filter(|(_, n)| n.top == Some(top) && n.fate == Fate::Running)
            .map(|(&x, _)| x)
            .collect()
    }

    fn pick(list: &[Xid], a: u8) -> Option<Xid> {
        (!list.is_empty()).then(|| list[a as usize % list.len()])
    }
}

struct Row {
    xids: TupleXids,
    hints: Hints,
}

#[derive(Default)]
struct SessionModel {
    in_txn: bool,
    rr: bool,
    /// Snapshots held, with the commit count when taken.
    snapshots: Vec<(Arc<Snapshot>, u64)>,
    registered: Vec<(SnapshotId, Arc<Snapshot>, u64)>,
}

struct Harness {
    mode: SnapshotMode,
    engine: Arc<Engine>,
    replayer: Replayer,
    sessions: Vec<Session>,
    sm: Vec<SessionModel>,
    model: Model,
    rows: Vec<Row>,
}

impl Harness {
    /// A standby started from a list of running xids: `spec` names some
    /// xids below START (and their parents), `big` adds a tree whose
    /// subxids overflowed on the primary.
    fn new(mode: SnapshotMode, spec: &[(u8, u8)], big: bool) -> Harness {
        let mut model = Model { next: START, ..Model::default() };
        let mut listed: BTreeMap<Xid, Xid> = BTreeMap::new();
        for &(offset, parent) in spec {
            let x = Xid(START - 50 + u64::from(offset % 50));
            let earlier: Vec<Xid> = listed.keys().copied().filter(|&p| p < x).collect();
            let p = if parent % 3 == 0 { Model::pick(&earlier, parent / 3) } else { None };
            listed.entry(x).or_insert(p.unwrap_or(Xid::INVALID));
        }
        if big {
            listed.insert(Xid(800), Xid::INVALID);
            for i in 0..SUBXID_CACHE as u64 + 2 {
                listed.insert(Xid(801 + i), Xid(800));
            }
        }
        let first = listed.keys().next().copied().unwrap_or(Xid(START));
        let top_of = |mut x: Xid| {
            while let Some(&p) = listed.get(&x).filter(|p| p.is_valid()) {
                x = p;
            }
            x
        };
        for x in first.0..START {
            let x = Xid(x);
            let node = match listed.get(&x) {
                Some(_) => {
                    Node { top: Some(top_of(x)).filter(|&t| t != x), fate: Fate::Running, vanished: false }
                }
                None => Node { top: None, fate: Fate::Aborted, vanished: false },
            };
            model.xids.insert(x, node);
        }
        let start = RunningXacts {
            next_xid: Xid(START),
            oldest_running: first,
            xids: listed.iter().map(|(&x, &p)| (x, p)).collect(),
        };
        let engine = Engine::new(EngineConfig {
            max_sessions: SESSIONS + 1,
            snapshot_mode: mode,
            status_log_pages: 16,
            csn_log_pages: 16,
            standby: true,
            ..EngineConfig::default()
        });
        let replayer = engine.replayer(&start);
        let sessions = (0..SESSIONS).map(|_| engine.attach().unwrap()).collect();
        Harness {
            mode,
            engine,
            replayer,
            sessions,
            sm: (0..SESSIONS).map(|_| SessionModel::default()).collect(),
            model,
            rows: Vec::new(),
        }
    }

    fn new_xid(&mut self, top: Option<Xid>) -> Xid {
        let x = Xid(self.model.next);
        self.model.next += 1;
        self.model.xids.insert(x, Node { top, fate: Fate::Running, vanished: false });
        x
    }

    fn finish(&mut self, xids: &[Xid], fate: Fate) {
        for x in xids {
            self.model.xids.get_mut(x).unwrap().fate = fate;
        }
    }

    fn apply(&mut self, op: u8, a: u8, b: u8) {
        let tops = self.model.running_tops();
        match op % 18 {
            0..=2 => {
                // A new top-level xid; a third never write WAL until a later
                // xid fills the gap.
                let x = self.new_xid(None);
                if !b.is_multiple_of(3) {
                    self.replayer.observe(x).unwrap();
                }
            }
            3 | 4 => {
                // A subtransaction (assignment record) of a running tree.
                let Some(top) = Model::pick(&tops, a) else { return };
                let sub = self.new_xid(Some(top));
                self.replayer.assign(top, sub).unwrap();
            }
            5..=7 => {
                // A change by a running xid: names it (observes), and inserts
                // or deletes a row version stamped with it.
                let live: Vec<Xid> = self
                    .model
                    .xids
                    .iter()
                    .filter(|(_, n)| n.fate == Fate::Running && !n.vanished)
                    .map(|(&x, _)| x)
                    .filter(|x| !self.model.xids[x].top.is_some_and(|t| self.model.xids[&t].vanished))
                    .collect();
                let Some(x) = Model::pick(&live, a) else { return };
                self.replayer.observe(x).unwrap();
                let undeleted: Vec<usize> =
                    (0..self.rows.len()).filter(|&i| !self.rows[i].xids.xmax.is_valid()).collect();
                if b.is_multiple_of(2) && !undeleted.is_empty() {
                    let row = &mut self.rows[undeleted[b as usize / 2 % undeleted.len()]];
                    row.xids.xmax = x;
                    row.hints.clear_xmax();
                } else {
                    self.rows.push(Row {
                        xids: TupleXids { xmin: x, ..Default::default() },
                        hints: Hints::default(),
                    });
                }
            }
            8 | 9 => {
                // Commit a tree with its running subxids.
                let Some(top) = Model::pick(&tops, a) else { return };
                let subs = self.model.running_subs(top);
                let csn = self.replayer.commit(top, &subs).unwrap();
                assert_eq!(csn.is_some(), self.mode == SnapshotMode::Csn, "{}", self.mode);
                self.model.commits += 1;
                let c = Fate::Committed(self.model.commits);
                self.finish(&[top], c);
                self.finish(&subs, c);
            }
            10 => {
                // Abort a whole tree.
                let Some(top) = Model::pick(&tops, a) else { return };
                let mut xids = self.model.running_subs(top);
                xids.push(top);
                self.replayer.abort(&xids).unwrap();
                self.finish(&xids, Fate::Aborted);
            }
            11 => {
                // Roll back part of a tree (a subtransaction and the ones
                // released into it: on the standby, some of its subxids).
                let Some(top) = Model::pick(&tops, a) else { return };
                let subs = self.model.running_subs(top);
                let part: Vec<Xid> = subs
                    .iter()
                    .copied()
                    .enumerate()
                    .filter(|(i, _)| (b >> (i % 8)) & 1 == 1)
                    .map(|(_, x)| x)
                    .collect();
                if part.is_empty() {
                    return;
                }
                self.replayer.abort(&part).unwrap();
                self.finish(&part, Fate::Aborted);
            }
            12 => {
                // The primary crashes under a running tree: no record for it
                // will come.
                if !b.is_multiple_of(3) {
                    return;
                }
                let Some(top) = Model::pick(&tops, a) else { return };
                self.model.xids.get_mut(&top).unwrap().vanished = true;
            }
            13 => {
                // A running-xacts record with a correct oldest_running.
                let next = Xid(self.model.next);
                let alive = |x: &Xid, n: &Node| {
                    n.fate == Fate::Running
                        && !n.vanished
                        && !n.top.is_some_and(|t| self.model.xids[&t].vanished)
                        && *x >= Xid(0)
                };
                let oldest = self.model.xids.iter().find(|(x, n)| alive(x, n)).map_or(next, |(&x, _)| x);
                let r = RunningXacts { next_xid: next, oldest_running: oldest, xids: Vec::new() };
                self.replayer.running_xacts(&r).unwrap();
                let expired: Vec<Xid> = self
                    .model
                    .xids
                    .iter()
                    .filter(|(&x, n)| {
                        n.fate == Fate::Running && {
                            let top = n.top.unwrap_or(x);
                            top < oldest
                        }
                    })
                    .map(|(&x, _)| x)
                    .collect();
                self.finish(&expired, Fate::Aborted);
            }
            14 => {
                // A burst of subtransactions: overflows the tree.
                if !b.is_multiple_of(2) {
                    return;
                }
                let Some(top) = Model::pick(&tops, a) else { return };
                for _ in 0..SUBXID_CACHE + 2 {
                    let sub = self.new_xid(Some(top));
                    self.replayer.assign(top, sub).unwrap();
                }
            }
            15 => {
                // A record about a finished xid: skipped.
                let finished: Vec<Xid> = self
                    .model
                    .xids
                    .iter()
                    .filter(|(_, n)| n.fate != Fate::Running)
                    .map(|(&x, _)| x)
                    .collect();
                let Some(x) = Model::pick(&finished, a) else { return };
                if b.is_multiple_of(2) {
                    assert_eq!(self.replayer.commit(x, &[]).unwrap(), None);
                } else {
                    self.replayer.abort(&[x]).unwrap();
                }
            }
            _ => self.session_op(a as usize % SESSIONS, b),
        }
    }

    fn session_op(&mut self, s: usize, b: u8) {
        match b % 5 {
            0 | 1 => {
                // A statement.
                if !self.sm[s].in_txn {
                    let rr = b.is_multiple_of(2);
                    let iso = if rr { IsolationLevel::RepeatableRead } else { IsolationLevel::ReadCommitted };
                    self.sessions[s].begin(iso).unwrap();
                    self.sm[s] = SessionModel { in_txn: true, rr, ..Default::default() };
                }
                let snap = self.sessions[s].statement_snapshot().unwrap();
                if self.sm[s].rr && !self.sm[s].snapshots.is_empty() {
                    assert!(
                        Arc::ptr_eq(&snap, &self.sm[s].snapshots[0].0),
                        "RR statement got a new snapshot"
                    );
                } else {
                    self.sm[s].snapshots.push((snap, self.model.commits));
                }
                self.check_all();
                self.sessions[s].end_statement().unwrap();
                if !self.sm[s].rr {
                    self.sm[s].snapshots.pop();
                }
            }
            2 => {
                if self.sm[s].in_txn {
                    self.sessions[s].commit().unwrap();
                    self.sm[s] = SessionModel::default();
                }
            }
            3 => {
                if !self.sm[s].in_txn {
                    return;
                }
                if !self.sm[s].registered.is_empty() && b.is_multiple_of(2) {
                    let (id, _, _) = self.sm[s].registered.remove(0);
                    self.sessions[s].unregister_snapshot(id).unwrap();
                } else {
                    let (id, snap) = self.sessions[s].register_snapshot().unwrap();
                    self.sm[s].registered.push((id, snap, self.model.commits));
                }
            }
            _ => {
                // Truncate the logs as far as the horizon allows.
                let h = self.engine.compute_horizons();
                let used = self.engine.truncate_logs(h.oldest_considered_running);
                assert!(used <= h.oldest_considered_running);
            }
        }
    }

    fn expected_state(&self, x: Xid) -> XidState {
        match self.model.xids[&x].fate {
            Fate::Running => XidState::InProgress,
            Fate::Aborted => XidState::Aborted,
            Fate::Committed(_) => XidState::Committed,
        }
    }

    fn row_visible(&self, row: &TupleXids, seen: u64) -> bool {
        self.model.committed_by(row.xmin, seen)
            && !(row.xmax.is_valid() && self.model.committed_by(row.xmax, seen))
    }

    fn check_all(&self) {
        let mode = self.mode;
        let engine = &self.engine;
        let h = engine.compute_horizons();
        for (x, n) in &self.model.xids {
            if n.fate == Fate::Running {
                assert!(h.data_oldest_nonremovable <= *x, "{mode}: horizon {h:?} passed running {x:?}");
            }
        }
        for (s, sm) in self.sm.iter().enumerate() {
            let session = &self.sessions[s];
            let held = sm
                .snapshots
                .iter()
                .map(|(a, c)| (a, *c))
                .chain(sm.registered.iter().map(|(_, a, c)| (a, *c)));
            for (snap, seen) in held {
                assert!(h.data_oldest_nonremovable <= snap.xmin, "{mode}: horizon {h:?} passed {snap:?}");
                for &x in self.model.xids.keys() {
                    let sees = !engine.xid_in_snapshot(x, snap) && engine.did_commit(x);
                    assert_eq!(
                        sees,
                        self.model.committed_by(x, seen),
                        "{mode}: session {s} snapshot {snap:?} (taken after {seen} commits) on {x:?} {:?}",
                        self.model.xids[&x]
                    );
                }
                for row in &self.rows {
                    let expected = self.row_visible(&row.xids, seen);
                    let fresh = Hints::default();
                    assert_eq!(
                        session.tuple_visible(&row.xids, &fresh, snap, 0),
                        expected,
                        "{mode}: {:?}",
                        row.xids
                    );
                    assert_eq!(
                        session.tuple_visible(&row.xids, &row.hints, snap, 0),
                        expected,
                        "{mode}: {:?} with hints {:#x}",
                        row.xids,
                        row.hints.get()
                    );
                }
            }
            if sm.in_txn {
                for &x in self.model.xids.keys() {
                    let expected = self.expected_state(x);
                    assert_eq!(session.xid_state(x), expected, "{mode}: session {s}: xid_state({x:?})");
                    assert_eq!(session.is_in_progress(x), expected == XidState::InProgress, "{mode}: {x:?}");
                    assert_eq!(
                        self.replayer.is_running(x),
                        expected == XidState::InProgress,
                        "{mode}: {x:?}"
                    );
                }
            }
        }
    }
}

fn run(mode: SnapshotMode, spec: &[(u8, u8)], big: bool, ops: &[(u8, u8, u8)]) {
    let mut h = Harness::new(mode, spec, big);
    for &(op, a, b) in ops {
        h.apply(op, a, b);
        if a % 4 == 0 {
            h.check_all();
        }
    }
    // A final statement in a fresh session state, so every stream ends
    // with a full check.
    h.session_op(0, 0);
    h.check_all();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn both_standby_modes_agree_with_the_serial_model(
        spec in prop::collection::vec((any::<u8>(), any::<u8>()), 0..6),
        big in any::<bool>(),
        ops in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 1..150),
    ) {
        for mode in SnapshotMode::STANDBY {
            run(mode, &spec, big, &ops);
        }
    }
}
