//! Multi-threaded stress with invariant checkers (pg-snapshot-internals.md
//! §17). Writers commit and abort transaction trees, some overflowing the
//! subxid cache; readers take snapshots and check them; a vacuum thread
//! computes horizons. Every mode runs the same checks, with the engine's own
//! reuse verification on (a reused or cached snapshot is compared with a fresh
//! build under the same lock).
//!
//! Checked: 2 stability, 4 monotonicity (across threads, in real-time order),
//! 5 tree atomicity (under snapshots and for instantaneous status reads while
//! trees commit), 6 reuse equivalence, 8 "not in progress ⇒ status final",
//! 10 xmax never decreases, 13 horizon safety (accurate and GlobalVis).

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use common::Rng;
use snapscale_txn::{Engine, IsolationLevel, Snapshot, SnapshotMode, Xid, SUBXID_CACHE};

/// A transaction tree a writer finished, as the checker needs it.
#[derive(Clone, Debug)]
struct Tree {
    top: Xid,
    committed_subs: Vec<Xid>,
    aborted_subs: Vec<Xid>,
}

struct Shared {
    engine: Arc<Engine>,
    stop: AtomicBool,
    /// Trees registered before their commit or abort.
    trees: Mutex<Vec<Tree>>,
    /// The last snapshot a reader finished checking (for monotonicity).
    published: Mutex<Option<Arc<Snapshot>>>,
    /// Xmin of each reader's live snapshot (0 = none), for horizon checks.
    live_xmins: Vec<AtomicU64>,
}

fn visible(engine: &Engine, x: Xid, s: &Snapshot) -> bool {
    !engine.xid_in_snapshot(x, s) && engine.did_commit(x)
}

fn writer(shared: &Shared, seed: u64) {
    let mut rng = Rng::new(seed);
    let mut s = shared.engine.attach().unwrap();
    while !shared.stop.load(SeqCst) {
        s.begin(IsolationLevel::ReadCommitted).unwrap();
        let top = s.assign_xid().unwrap();
        let mut tree = Tree { top, committed_subs: Vec::new(), aborted_subs: Vec::new() };
        let subs = match rng.below(10) {
            0 => SUBXID_CACHE as u64 + 3, // overflow the cache
            n => n % 4,
        };
        for _ in 0..subs {
            s.begin_subtransaction().unwrap();
            let x = s.assign_xid().unwrap();
            if rng.below(4) == 0 {
                s.abort_subtransaction().unwrap();
                tree.aborted_subs.push(x);
            } else {
                s.commit_subtransaction().unwrap();
                tree.committed_subs.push(x);
            }
        }
        let commit = rng.below(5) != 0;
        if !commit {
            tree.aborted_subs.push(top);
            tree.aborted_subs.append(&mut tree.committed_subs);
        }
        shared.trees.lock().unwrap().push(tree);
        if commit {
            s.commit().unwrap();
        } else {
            s.abort();
        }
    }
}

fn check_trees(engine: &Engine, trees: &[Tree], snap: &Snapshot) -> Vec<bool> {
    trees
        .iter()
        .map(|t| {
            let v = visible(engine, t.top, snap);
            for &x in &t.committed_subs {
                assert_eq!(visible(engine, x, snap), v, "tree atomicity: {t:?} under {snap:?}");
            }
            for &x in &t.aborted_subs {
                assert!(!visible(engine, x, snap), "aborted {x:?} visible: {t:?}");
            }
            v
        })
        .collect()
}

fn reader(shared: &Shared, me: usize, seed: u64) {
    let mut rng = Rng::new(seed);
    let engine = &shared.engine;
    let mut s = engine.attach().unwrap();
    let mut last_xmax = Xid::INVALID;
    while !shared.stop.load(SeqCst) {
        let rr = rng.below(2) == 0;
        s.begin(if rr { IsolationLevel::RepeatableRead } else { IsolationLevel::ReadCommitted }).unwrap();
        // Everything the earlier snapshot saw committed, a later one must too.
        let before = shared.published.lock().unwrap().clone();
        let trees: Vec<Tree> = {
            let all = shared.trees.lock().unwrap();
            all[all.len().saturating_sub(150)..].to_vec()
        };
        let snap = s.statement_snapshot().unwrap();
        shared.live_xmins[me].store(snap.xmin.0, SeqCst);
        assert!(snap.xmax >= last_xmax, "xmax went backwards: {last_xmax:?} -> {:?}", snap.xmax);
        last_xmax = snap.xmax;
        let first = check_trees(engine, &trees, &snap);
        if let Some(p) = before {
            for t in &trees {
                if visible(engine, t.top, &p) {
                    assert!(
                        visible(engine, t.top, &snap),
                        "monotonicity: {t:?} seen by {p:?}, not by {snap:?}"
                    );
                }
            }
        }
        // Tree atomicity for instantaneous reads (no snapshot involved): a
        // committed member read before the top implies the top reads
        // committed, and a committed top implies every committed member does.
        for t in trees.iter().rev().take(8) {
            let subs_first: Vec<bool> = t.committed_subs.iter().map(|&x| engine.did_commit(x)).collect();
            let top = engine.did_commit(t.top);
            if subs_first.iter().any(|&c| c) {
                assert!(top, "a subxid of {t:?} read committed before its top did");
            }
            if top {
                for &x in &t.committed_subs {
                    assert!(engine.did_commit(x), "{x:?} of committed {t:?} reads uncommitted");
                }
            }
        }
        // Not in progress ⇒ the status is final.
        let probes: Vec<(Xid, bool)> = trees
            .iter()
            .filter(|t| !s.is_in_progress(t.top))
            .map(|t| (t.top, engine.did_commit(t.top)))
            .collect();
        thread::yield_now();
        // Stability: same answers after other sessions moved on.
        assert_eq!(check_trees(engine, &trees, &snap), first, "snapshot changed meaning");
        for (x, committed) in probes {
            assert_eq!(engine.did_commit(x), committed, "status of finished {x:?} changed");
        }
        // Withdraw the published xmin before releasing the snapshot: once
        // released, horizons may pass it.
        shared.live_xmins[me].store(0, SeqCst);
        s.end_statement().unwrap();
        *shared.published.lock().unwrap() = Some(Arc::clone(&snap));
        s.commit().unwrap();
    }
}

fn vacuum(shared: &Shared) {
    let engine = &shared.engine;
    let mut s = engine.attach().unwrap();
    let mut rng = Rng::new(99);
    while !shared.stop.load(SeqCst) {
        let h = engine.compute_horizons();
        s.begin(IsolationLevel::ReadCommitted).unwrap();
        s.statement_snapshot().unwrap();
        let probe = Xid(h.latest_completed.0.saturating_sub(rng.below(64)));
        let removable = s.is_removable(probe);
        for cell in &shared.live_xmins {
            // A snapshot live now was taken after, or was live during, the
            // computation: its xmin is at least the horizon.
            let xmin = Xid(cell.load(SeqCst));
            if xmin.is_valid() {
                assert!(h.data_oldest_nonremovable <= xmin, "horizon {h:?} passed live xmin {xmin:?}");
                if removable {
                    assert!(probe < xmin, "GlobalVis removed {probe:?} needed by live xmin {xmin:?}");
                }
            }
        }
        s.end_statement().unwrap();
        s.commit().unwrap();
    }
}

fn stress(mode: SnapshotMode, duration: Duration) {
    let readers = 2;
    let shared = Arc::new(Shared {
        engine: common::engine(mode, 8),
        stop: AtomicBool::new(false),
        trees: Mutex::new(Vec::new()),
        published: Mutex::new(None),
        live_xmins: (0..readers).map(|_| AtomicU64::new(0)).collect(),
    });
    let mut handles = Vec::new();
    for w in 0..2 {
        let sh = Arc::clone(&shared);
        handles.push(thread::spawn(move || writer(&sh, 1 + w)));
    }
    for r in 0..readers {
        let sh = Arc::clone(&shared);
        handles.push(thread::spawn(move || reader(&sh, r, 10 + r as u64)));
    }
    let sh = Arc::clone(&shared);
    handles.push(thread::spawn(move || vacuum(&sh)));
    let start = Instant::now();
    while start.elapsed() < duration && !handles.iter().any(|h| h.is_finished()) {
        thread::sleep(Duration::from_millis(20));
    }
    shared.stop.store(true, SeqCst);
    for h in handles {
        h.join().expect("a stress thread failed its check");
    }
    assert!(shared.trees.lock().unwrap().len() > 10, "{mode}: the writers made no progress");
}

fn duration() -> Duration {
    let ms = std::env::var("SNAPSCALE_STRESS_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(700);
    Duration::from_millis(ms)
}

#[test]
fn stress_pgproc() {
    stress(SnapshotMode::PgProc, duration());
}

#[test]
fn stress_pgxact() {
    stress(SnapshotMode::PgXact, duration());
}

#[test]
fn stress_dense() {
    stress(SnapshotMode::Dense, duration());
}

#[test]
fn stress_dense_cached() {
    stress(SnapshotMode::DenseCached, duration());
}

#[test]
fn stress_shared_cached() {
    stress(SnapshotMode::SharedCached, duration());
}

#[test]
fn stress_csn() {
    stress(SnapshotMode::Csn, duration());
}
