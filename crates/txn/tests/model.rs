//! Random interleavings of transaction operations across several sessions,
//! with every visibility answer compared against a serial reference model.
//!
//! The model knows nothing of proc arrays or snapshots' internals: it keeps a
//! commit sequence number, records for every snapshot the number of commits
//! that had happened when it was taken, and says a snapshot sees xid `x`
//! committed iff `x`'s tree committed before that, with neither `x` nor any
//! ancestor below the top aborted. Every mode must agree with it on
//! xid-in-snapshot, commit status, is-in-progress and row visibility (with and
//! without hint bits).

mod common;

use std::collections::HashMap;
use std::sync::Arc;

use proptest::prelude::*;
use snapscale_txn::{
    CommandId, Engine, Hints, IsolationLevel, Session, Snapshot, SnapshotMode, TupleXids, Xid, SUBXID_CACHE,
};

const SESSIONS: usize = 3;

#[derive(Clone, Copy, Debug)]
enum Fate {
    Running,
    Aborted,
    /// Top-level xid committed as the n-th commit.
    Committed(u64),
}

#[derive(Debug)]
struct XidNode {
    parent: Option<Xid>,
    owner: usize,
    fate: Fate,
}

#[derive(Default)]
struct Model {
    xids: HashMap<Xid, XidNode>,
    commits: u64,
}

impl Model {
    fn top(&self, mut x: Xid) -> Xid {
        while let Some(p) = self.xids[&x].parent {
            x = p;
        }
        x
    }

    fn aborted_on_path(&self, mut x: Xid) -> bool {
        loop {
            let node = &self.xids[&x];
            if matches!(node.fate, Fate::Aborted) {
                return true;
            }
            match node.parent {
                Some(p) => x = p,
                None => return false,
            }
        }
    }

    /// Committed as of `commits_seen` commits?
    fn committed_by(&self, x: Xid, commits_seen: u64) -> bool {
        if self.aborted_on_path(x) {
            return false;
        }
        matches!(self.xids[&self.top(x)].fate, Fate::Committed(n) if n <= commits_seen)
    }

    fn running(&self, x: Xid) -> bool {
        !self.aborted_on_path(x) && matches!(self.xids[&self.top(x)].fate, Fate::Running)
    }
}

/// What a session holds in the model.
#[derive(Default)]
struct SessionModel {
    in_txn: bool,
    rr: bool,
    /// Xid of each open level (INVALID until assigned).
    levels: Vec<Xid>,
    /// Committed children of each open level.
    children: Vec<Vec<Xid>>,
    /// Snapshots held, with the commit count when taken.
    snapshots: Vec<(Arc<Snapshot>, u64)>,
    registered: Vec<(snapscale_txn::SnapshotId, Arc<Snapshot>, u64)>,
}

impl SessionModel {
    fn current(&self, x: Xid) -> bool {
        self.in_txn && (self.levels.contains(&x) || self.children.iter().any(|c| c.contains(&x)))
    }
}

struct Row {
    xids: TupleXids,
    hints: Hints,
}

struct Harness {
    engine: Arc<Engine>,
    sessions: Vec<Session>,
    model: Model,
    sm: Vec<SessionModel>,
    rows: Vec<Row>,
}

impl Harness {
    fn new(mode: SnapshotMode) -> Self {
        let engine = common::engine(mode, SESSIONS + 1);
        let sessions = (0..SESSIONS).map(|_| engine.attach().unwrap()).collect();
        Self {
            engine,
            sessions,
            model: Model::default(),
            sm: (0..SESSIONS).map(|_| SessionModel::default()).collect(),
            rows: Vec::new(),
        }
    }

    fn ensure_txn(&mut self, s: usize, rr: bool) {
        if !self.sm[s].in_txn {
            let iso = if rr { IsolationLevel::RepeatableRead } else { IsolationLevel::ReadCommitted };
            self.sessions[s].begin(iso).unwrap();
            self.sm[s] = SessionModel {
                in_txn: true,
                rr,
                levels: vec![Xid::INVALID],
                children: vec![Vec::new()],
                ..Default::default()
            };
        }
    }

    fn assign(&mut self, s: usize) -> Xid {
        let x = self.sessions[s].assign_xid().unwrap();
        let sm = &mut self.sm[s];
        for depth in 0..sm.levels.len() {
            if !sm.levels[depth].is_valid() {
                // The engine assigns missing ancestors top-down; mirror it by
                // reading them back from the parent links.
                let parent = if depth == 0 { None } else { Some(sm.levels[depth - 1]) };
                let xid = if depth + 1 == sm.levels.len() { x } else { Xid::INVALID };
                let xid = if xid.is_valid() {
                    xid
                } else {
                    find_ancestor(&self.engine, x, sm.levels.len() - 1 - depth)
                };
                sm.levels[depth] = xid;
                self.model.xids.insert(xid, XidNode { parent, owner: s, fate: Fate::Running });
            }
        }
        x
    }

    fn end(&mut self, s: usize, commit: bool) {
        let sm = std::mem::take(&mut self.sm[s]);
        if !sm.in_txn {
            return;
        }
        if commit {
            self.sessions[s].commit().unwrap();
        } else {
            self.sessions[s].abort();
        }
        let top = sm.levels[0];
        if top.is_valid() {
            if commit {
                self.model.commits += 1;
                self.model.xids.get_mut(&top).unwrap().fate = Fate::Committed(self.model.commits);
            } else {
                self.model.xids.get_mut(&top).unwrap().fate = Fate::Aborted;
            }
        }
    }

    fn apply(&mut self, op: u8, s: usize, arg: u8) {
        match op % 12 {
            0 => self.ensure_txn(s, arg.is_multiple_of(2)),
            1 | 2 => {
                // Insert a row in the current (sub)transaction.
                self.ensure_txn(s, arg.is_multiple_of(2));
                let xmin = self.assign(s);
                let cmin = self.sessions[s].command_id().unwrap();
                self.rows.push(Row {
                    xids: TupleXids { xmin, cmin, ..Default::default() },
                    hints: Hints::default(),
                });
            }
            3 => {
                // Delete a live, undeleted row visible to us (no conflicts:
                // concurrent writers are the storage layer's business).
                if !self.sm[s].in_txn || self.rows.is_empty() {
                    return;
                }
                let i = arg as usize % self.rows.len();
                let view = match self.sm[s].snapshots.first() {
                    Some((_, seen)) if self.sm[s].rr => *seen,
                    _ => self.model.commits,
                };
                let cid = self.sessions[s].command_id().unwrap();
                if self.rows[i].xids.xmax.is_valid() || !self.row_visible(s, &self.rows[i].xids, view, cid) {
                    return;
                }
                let xmax = self.assign(s);
                let cmax = self.sessions[s].command_id().unwrap();
                let row = &mut self.rows[i];
                row.xids.xmax = xmax;
                row.xids.cmax = cmax;
                row.hints.clear_xmax();
            }
            4 => {
                if self.sm[s].in_txn {
                    self.sessions[s].begin_subtransaction().unwrap();
                    self.sm[s].levels.push(Xid::INVALID);
                    self.sm[s].children.push(Vec::new());
                }
            }
            5 => {
                // RELEASE: the level's xid and children join the parent's.
                if self.sm[s].levels.len() > 1 {
                    self.sessions[s].commit_subtransaction().unwrap();
                    let sm = &mut self.sm[s];
                    let x = sm.levels.pop().unwrap();
                    let mut kids = sm.children.pop().unwrap();
                    if x.is_valid() {
                        kids.push(x);
                    }
                    sm.children.last_mut().unwrap().extend(kids);
                }
            }
            6 => {
                // ROLLBACK TO: abort the innermost level.
                if self.sm[s].levels.len() > 1 {
                    self.sessions[s].abort_subtransaction().unwrap();
                    let sm = &mut self.sm[s];
                    let x = sm.levels.pop().unwrap();
                    let kids = sm.children.pop().unwrap();
                    for k in kids.into_iter().chain(x.is_valid().then_some(x)) {
                        self.model.xids.get_mut(&k).unwrap().fate = Fate::Aborted;
                    }
                }
            }
            7 => self.end(s, true),
            8 => self.end(s, false),
            9 => {
                // A statement: take its snapshot; every check runs; end it.
                self.ensure_txn(s, arg.is_multiple_of(2));
                let snap = self.sessions[s].statement_snapshot().unwrap();
                let first_rr = self.sm[s].rr && self.sm[s].snapshots.is_empty();
                if self.sm[s].rr && !first_rr {
                    // REPEATABLE READ: the transaction snapshot, recorded once.
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
            10 => {
                if !self.sm[s].in_txn {
                    return;
                }
                if arg.is_multiple_of(3) && !self.sm[s].registered.is_empty() {
                    let (id, _, _) = self.sm[s].registered.remove(0);
                    self.sessions[s].unregister_snapshot(id).unwrap();
                } else {
                    let (id, snap) = self.sessions[s].register_snapshot().unwrap();
                    self.sm[s].registered.push((id, snap, self.model.commits));
                }
            }
            _ => {
                // A burst of released subtransactions: overflows the cache.
                if !self.sm[s].in_txn {
                    return;
                }
                for _ in 0..SUBXID_CACHE + 2 {
                    self.apply(4, s, 0);
                    self.assign(s);
                    self.apply(5, s, 0);
                }
            }
        }
    }

    fn check_all(&self) {
        let xids: Vec<Xid> = self.model.xids.keys().copied().collect();
        for (s, sm) in self.sm.iter().enumerate() {
            let session = &self.sessions[s];
            let held = sm
                .snapshots
                .iter()
                .map(|(a, b)| (a, *b))
                .chain(sm.registered.iter().map(|(_, a, b)| (a, *b)));
            for (snap, commits_seen) in held {
                for &x in &xids {
                    if sm.current(x) {
                        continue;
                    }
                    let engine_sees = !self.engine.xid_in_snapshot(x, snap) && self.engine.did_commit(x);
                    assert_eq!(
                        engine_sees,
                        self.model.committed_by(x, commits_seen),
                        "session {s} snapshot {snap:?} disagrees with the model on {x:?} ({:?})",
                        self.model.xids[&x]
                    );
                }
                let cid: CommandId = session.command_id().unwrap();
                for row in &self.rows {
                    let expected = self.row_visible(s, &row.xids, commits_seen, cid);
                    let fresh = Hints::default();
                    assert_eq!(
                        session.tuple_visible(&row.xids, &fresh, snap, cid),
                        expected,
                        "row {:?} without hints",
                        row.xids
                    );
                    assert_eq!(
                        session.tuple_visible(&row.xids, &row.hints, snap, cid),
                        expected,
                        "row {:?} with hints {:#x}",
                        row.xids,
                        row.hints.get()
                    );
                }
            }
            if sm.in_txn {
                for &x in &xids {
                    let expected = sm.current(x) || (self.model.running(x) && self.model.xids[&x].owner != s);
                    assert_eq!(session.is_in_progress(x), expected, "session {s}: is_in_progress({x:?})");
                }
            }
        }
    }

    fn row_visible(&self, s: usize, row: &TupleXids, commits_seen: u64, cid: CommandId) -> bool {
        let sm = &self.sm[s];
        let inserted = if sm.current(row.xmin) {
            row.cmin < cid
        } else {
            self.model.committed_by(row.xmin, commits_seen)
        };
        let deleted = row.xmax.is_valid()
            && if sm.current(row.xmax) {
                row.cmax < cid
            } else {
                self.model.committed_by(row.xmax, commits_seen)
            };
        inserted && !deleted
    }
}

/// The ancestor `up` levels above `x`, from the engine's parent links.
fn find_ancestor(engine: &Engine, mut x: Xid, up: usize) -> Xid {
    for _ in 0..up {
        x = engine.parent_of(x);
    }
    x
}

fn run(mode: SnapshotMode, ops: &[(u8, u8, u8)]) {
    let mut h = Harness::new(mode);
    for &(op, s, arg) in ops {
        h.apply(op, s as usize % SESSIONS, arg);
    }
    h.check_all();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn every_mode_agrees_with_the_serial_model(ops in prop::collection::vec((any::<u8>(), any::<u8>(), any::<u8>()), 1..80)) {
        for mode in SnapshotMode::ALL {
            run(mode, &ops);
        }
    }
}
