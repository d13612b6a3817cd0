//! Hot standby under load, in both standby modes: one replay thread streams
//! the records of interleaved transaction trees (some with more than
//! `SUBXID_CACHE` subxids, some with rolled-back subtrees, some lost in a
//! "primary crash" and expired by a running-xacts record) while reader
//! threads take snapshots and a horizon thread computes horizons and
//! truncates the logs.
//!
//! Checked, for every snapshot against the trees finished recently:
//! truth (a commit replayed before the snapshot was taken is visible, one
//! replayed after it is not), stability (the same answers after replay has
//! moved on), tree atomicity (all committed members of a tree visible or
//! none, aborted ones never), monotonicity (a later snapshot of the same
//! thread never loses a commit), and instantaneous states (`xid_state`
//! after the record was replayed). The horizon never passes a live
//! snapshot's xmin, and every xid below it is final in the status log
//! (replay no longer considers it running).
//!
//! The work is a count of trees, not a duration, so debug and release
//! builds do the same amount; `SNAPSCALE_STRESS_TXNS` changes it (trees
//! replayed, default 20 000). The CSN log's ring is small, so replay
//! recycles it under the readers (and is refused with 54000, then
//! retries, when a reader pins it).

// The checkers' bookkeeping (stop flag, counters, tree list) is scaffolding
// on real threads, outside any loom model: std's types are the right ones.
#![allow(clippy::disallowed_types)]

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;

use common::Rng;
use snapscale_txn::{
    Engine, EngineConfig, IsolationLevel, Replayer, RunningXacts, Snapshot, SnapshotMode, TxnError, Xid,
    XidState, XidStatus, SUBXID_CACHE,
};

const TREES: u64 = 20_000;

/// Trees a reader checks (the newest ones).
const WINDOW: usize = 120;

/// Trees open at once on the "primary".
const OPEN: usize = 5;

/// A finished tree, registered before its last record is replayed.
#[derive(Debug)]
struct Tree {
    top: Xid,
    committed_subs: Vec<Xid>,
    aborted_subs: Vec<Xid>,
    /// The commit's position in replay order (`u64::MAX`: aborted).
    seq: u64,
}

struct Shared {
    engine: Arc<Engine>,
    stop: AtomicBool,
    trees: Mutex<Vec<Arc<Tree>>>,
    /// Commits whose replay has returned.
    commits_done: AtomicU64,
    /// Xmin of each reader's live snapshot (0 = none).
    live_xmins: Vec<AtomicU64>,
    checked: AtomicU64,
    horizons: AtomicU64,
    refused: AtomicU64,
}

/// A tree still running on the "primary".
struct Open {
    top: Xid,
    subs: Vec<Xid>,
    aborted: Vec<Xid>,
    /// Subxids still to assign.
    want: usize,
}

/// Retries a replay step refused because a reader pins a ring (54000).
fn retry(shared: &Shared, mut step: impl FnMut() -> Result<(), TxnError>) {
    loop {
        match step() {
            Ok(()) => return,
            Err(TxnError::XidSpaceExhausted { .. }) => {
                shared.refused.fetch_add(1, SeqCst);
                thread::yield_now();
            }
            Err(e) => panic!("replay: {e}"),
        }
    }
}

fn replay(shared: &Shared, mut replayer: Replayer, trees: u64, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut next = replayer.latest_observed().0 + 1;
    let mut open: Vec<Open> = Vec::new();
    let mut vanished: Vec<Xid> = Vec::new();
    let mut finished = 0;
    let mut commits = 0u64;
    let register = |tree: Tree| shared.trees.lock().unwrap().push(Arc::new(tree));
    let mut steps = 0u64;
    while finished < trees && !shared.stop.load(SeqCst) {
        steps += 1;
        if steps.is_multiple_of(16) {
            // Let the checkers interleave with replay on a small machine.
            thread::yield_now();
        }
        match rng.below(10) {
            0..=2 if open.len() < OPEN => {
                let top = Xid(next);
                next += 1;
                // A third are silent until a later xid fills the gap.
                if rng.below(3) != 0 {
                    retry(shared, || replayer.observe(top));
                }
                let want = if rng.below(10) == 0 { SUBXID_CACHE + 4 } else { rng.below(4) as usize };
                open.push(Open { top, subs: Vec::new(), aborted: Vec::new(), want });
            }
            3..=5 if !open.is_empty() => {
                let i = rng.below(open.len() as u64) as usize;
                let t = &mut open[i];
                let n = t.want.min(1 + rng.below(8) as usize);
                for _ in 0..n {
                    let sub = Xid(next);
                    next += 1;
                    let top = t.top;
                    retry(shared, || replayer.assign(top, sub));
                    t.subs.push(sub);
                    t.want -= 1;
                }
                if !t.subs.is_empty() && rng.below(4) == 0 {
                    // Roll back the newest subtransaction.
                    let sub = t.subs.pop().unwrap();
                    t.aborted.push(sub);
                    retry(shared, || replayer.abort(&[sub]));
                }
            }
            6..=8 if !open.is_empty() => {
                let i = rng.below(open.len() as u64) as usize;
                let t = open.swap_remove(i);
                let commit = rng.below(5) != 0;
                if commit {
                    register(Tree {
                        top: t.top,
                        committed_subs: t.subs.clone(),
                        aborted_subs: t.aborted,
                        seq: commits,
                    });
                    retry(shared, || replayer.commit(t.top, &t.subs).map(|_| ()));
                    commits += 1;
                    shared.commits_done.store(commits, SeqCst);
                } else {
                    let mut all = t.aborted.clone();
                    all.extend(&t.subs);
                    all.push(t.top);
                    register(Tree {
                        top: t.top,
                        committed_subs: Vec::new(),
                        aborted_subs: all.clone(),
                        seq: u64::MAX,
                    });
                    retry(shared, || replayer.abort(&all));
                }
                finished += 1;
            }
            9 if !open.is_empty() && rng.below(4) == 0 => {
                // The primary loses a tree: no record will come.
                let i = rng.below(open.len() as u64) as usize;
                let t = open.swap_remove(i);
                let mut all = t.aborted.clone();
                all.extend(&t.subs);
                all.push(t.top);
                register(Tree { top: t.top, committed_subs: Vec::new(), aborted_subs: all, seq: u64::MAX });
                vanished.push(t.top);
                finished += 1;
            }
            9 => {
                // A running-xacts record with a correct oldest_running.
                let oldest = open.iter().map(|t| t.top).min().unwrap_or(Xid(next));
                let r = RunningXacts { next_xid: Xid(next), oldest_running: oldest, xids: Vec::new() };
                retry(shared, || replayer.running_xacts(&r));
                vanished.retain(|&v| v >= oldest);
                for &v in &vanished {
                    assert!(replayer.is_running(v), "a vanished tree above oldest_running still runs");
                }
            }
            _ => {}
        }
    }
    shared.stop.store(true, SeqCst);
}

fn visible(engine: &Engine, x: Xid, s: &Snapshot) -> bool {
    !engine.xid_in_snapshot(x, s) && engine.did_commit(x)
}

/// Checks `trees` under `snap`, taken while `commits_done` went from `lo`
/// to `hi`; returns each tree's visibility.
fn check(engine: &Engine, trees: &[Arc<Tree>], snap: &Snapshot, lo: u64, hi: u64) -> Vec<bool> {
    trees
        .iter()
        .map(|t| {
            let v = visible(engine, t.top, snap);
            for &x in &t.committed_subs {
                assert_eq!(visible(engine, x, snap), v, "tree atomicity: {t:?} under {snap:?}");
            }
            for &x in &t.aborted_subs {
                assert!(!visible(engine, x, snap), "aborted {x:?} visible: {t:?} under {snap:?}");
            }
            if t.seq < lo {
                assert!(
                    v,
                    "commit {} replayed before the snapshot ({lo}..{hi}) is not visible: {t:?} {snap:?}",
                    t.seq
                );
            }
            if t.seq != u64::MAX && t.seq > hi {
                assert!(!v, "commit {} replayed after the snapshot ({lo}..{hi}) is visible: {t:?}", t.seq);
            }
            v
        })
        .collect()
}

fn reader(shared: &Shared, me: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let engine = &shared.engine;
    let mut s = engine.attach().unwrap();
    let mut seen_committed: Vec<Xid> = Vec::new();
    while !shared.stop.load(SeqCst) {
        let rr = rng.below(2) == 0;
        s.begin(if rr { IsolationLevel::RepeatableRead } else { IsolationLevel::ReadCommitted }).unwrap();
        let trees: Vec<Arc<Tree>> = {
            let all = shared.trees.lock().unwrap();
            all[all.len().saturating_sub(WINDOW)..].to_vec()
        };
        let lo = shared.commits_done.load(SeqCst);
        let snap = s.statement_snapshot().unwrap();
        shared.live_xmins[me].store(snap.xmin.0, SeqCst);
        let hi = shared.commits_done.load(SeqCst);
        let first = check(engine, &trees, &snap, lo, hi);
        // Monotonicity: what an earlier snapshot of ours saw, this one sees.
        for (t, &v) in trees.iter().zip(&first) {
            if seen_committed.binary_search(&t.top).is_ok() {
                assert!(v, "monotonicity: {t:?} seen before, not by {snap:?}");
            }
        }
        // Instantaneous states of trees whose record has been replayed.
        let done = shared.commits_done.load(SeqCst);
        for t in trees.iter().rev().take(10) {
            if t.seq < done {
                assert_eq!(s.xid_state(t.top), XidState::Committed, "{t:?}");
                for &x in &t.committed_subs {
                    assert_eq!(s.xid_state(x), XidState::Committed, "{t:?}");
                }
            }
        }
        for _ in 0..1 + rng.below(3) {
            thread::yield_now();
        }
        // Stability: replay has moved on; the snapshot has not.
        assert_eq!(check(engine, &trees, &snap, lo, hi), first, "snapshot {snap:?} changed its answers");
        let mut seen: Vec<Xid> = trees.iter().zip(&first).filter(|(_, &v)| v).map(|(t, _)| t.top).collect();
        seen.sort_unstable();
        seen_committed = seen;
        shared.live_xmins[me].store(0, SeqCst);
        s.end_statement().unwrap();
        s.commit().unwrap();
        shared.checked.fetch_add(1, SeqCst);
    }
}

fn horizon(shared: &Shared) {
    let engine = &shared.engine;
    let mut rng = Rng::new(77);
    let mut s = engine.attach().unwrap();
    while !shared.stop.load(SeqCst) {
        let h = engine.compute_horizons();
        for cell in &shared.live_xmins {
            // A snapshot live now was taken after, or was live during, the
            // computation: its xmin is at least the horizon.
            let xmin = Xid(cell.load(SeqCst));
            if xmin.is_valid() {
                assert!(h.data_oldest_nonremovable <= xmin, "horizon {h:?} passed live xmin {xmin:?}");
            }
        }
        // Replay finished every xid below the horizon, and wrote the status
        // log first: the horizon never passes a running xid.
        let floor = engine.oldest_tracked_xid();
        let below = h.data_oldest_nonremovable.0;
        for x in below.saturating_sub(64).max(floor.0)..below {
            let status = engine.status(Xid(x));
            assert_ne!(status, XidStatus::InProgress, "horizon {h:?} passed running x{x}");
        }
        s.begin(IsolationLevel::ReadCommitted).unwrap();
        if below > 0 {
            assert!(!s.is_in_progress(Xid(below - 1)), "x{} below the horizon in progress", below - 1);
        }
        s.commit().unwrap();
        if rng.below(8) == 0 {
            // Truncate as a vacuum would, a little behind the horizon (the
            // status log's ring is large: its pages stay readable).
            let used = engine.truncate_logs(Xid(h.oldest_considered_running.0.saturating_sub(500)));
            assert!(used <= h.oldest_considered_running.max(Xid(3)));
        }
        shared.horizons.fetch_add(1, SeqCst);
        thread::yield_now();
    }
}

fn stress(mode: SnapshotMode) {
    let trees = std::env::var("SNAPSCALE_STRESS_TXNS").ok().and_then(|v| v.parse().ok()).unwrap_or(TREES);
    let readers = 2;
    let engine = Engine::new(EngineConfig {
        max_sessions: 8,
        snapshot_mode: mode,
        status_log_pages: 64,
        csn_log_pages: 8,
        standby: true,
        ..EngineConfig::default()
    });
    let start = RunningXacts {
        next_xid: Xid(5_000),
        oldest_running: Xid(4_990),
        xids: vec![(Xid(4_990), Xid::INVALID), (Xid(4_991), Xid(4_990))],
    };
    let replayer = engine.replayer(&start);
    let shared = Arc::new(Shared {
        engine,
        stop: AtomicBool::new(false),
        trees: Mutex::new(Vec::new()),
        commits_done: AtomicU64::new(0),
        live_xmins: (0..readers).map(|_| AtomicU64::new(0)).collect(),
        checked: AtomicU64::new(0),
        horizons: AtomicU64::new(0),
        refused: AtomicU64::new(0),
    });
    let mut handles = Vec::new();
    let sh = Arc::clone(&shared);
    handles.push(thread::spawn(move || replay(&sh, replayer, trees, 5)));
    for r in 0..readers {
        let sh = Arc::clone(&shared);
        handles.push(thread::spawn(move || reader(&sh, r, 10 + r as u64)));
    }
    let sh = Arc::clone(&shared);
    handles.push(thread::spawn(move || horizon(&sh)));
    // Replay's count bounds the run; a checker that fails stops it early.
    while !handles.iter().any(|h| h.is_finished()) {
        thread::sleep(std::time::Duration::from_millis(5));
    }
    shared.stop.store(true, SeqCst);
    for h in handles {
        h.join().expect("a standby stress thread failed its check");
    }
    let n = shared.trees.lock().unwrap().len();
    assert!(n as u64 >= trees, "{mode}: replay stopped early");
    assert!(shared.checked.load(SeqCst) > 0, "{mode}: the readers never finished a check");
    assert!(shared.horizons.load(SeqCst) > 0, "{mode}: no horizon was computed");
    eprintln!(
        "{mode}: {n} trees, {} commits, {} snapshots checked, {} horizons, {} replay steps refused",
        shared.commits_done.load(SeqCst),
        shared.checked.load(SeqCst),
        shared.horizons.load(SeqCst),
        shared.refused.load(SeqCst),
    );
}

#[test]
fn standby_stress_known_assigned() {
    stress(SnapshotMode::KnownAssigned);
}

#[test]
fn standby_stress_csn() {
    stress(SnapshotMode::Csn);
}
