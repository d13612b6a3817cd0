//! Multi-threaded stress with invariant checkers (pg-snapshot-internals.md
//! §17). Writers commit and abort transaction trees, some overflowing the
//! subxid cache; readers take snapshots and check them; a vacuum thread
//! computes horizons; a truncator thread truncates the logs to the current
//! horizon while all of them run. Every mode runs the same checks, with the
//! engine's own reuse verification on (a reused or cached snapshot is
//! compared with a fresh build under the same lock).
//!
//! The work is a count of transactions, not a duration, so the debug and
//! release builds do the same amount of it. The rings are small (the status
//! log's as small as the engine allows): every test recycles the status
//! log's and the parent links' pages at least once, and the CSN log's about
//! ten times, under the checkers. Writers retry an assignment refused with
//! 54000 (a lagging checker can pin a ring: the long-snapshot policy).
//!
//! Checked: 2 stability, 4 monotonicity (across threads, in real-time order),
//! 5 tree atomicity (under snapshots and for instantaneous status reads while
//! trees commit), 6 reuse equivalence, 8 "not in progress ⇒ status final",
//! 10 xmax never decreases, 13 horizon safety (accurate and GlobalVis), and
//! XIDMAP-FLOOR: below a truncation point nothing is in progress, and a
//! session whose `recent_xmin` is stale still sees finished xids finished.
//!
//! The truncator honours XIDMAP-TRUNCATE the way a vacuum would: the trees
//! the checkers may still ask about are the "rows" that need their status.
//! It announces a target (at most the horizon, and lagging the next xid by
//! `LAG`); readers pick only trees at or above the announced target, and
//! publish the oldest top they picked (`needed`) while they check; the logs
//! are truncated to the oldest of the target and those. So a reader never
//! asks about a truncated xid, and old trees never pin the ring.

// The checkers' bookkeeping (stop flag, counters, tree list) is scaffolding
// on real threads, outside any loom model: std's types are the right ones.
#![allow(clippy::disallowed_types)]

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::thread;

use common::Rng;
use snapscale_txn::{
    Engine, EngineConfig, IsolationLevel, Session, SnapshotMode, TxnError, Xid, XidState, SUBXID_CACHE,
};

/// Transaction trees each writer finishes (`SNAPSCALE_STRESS_TXNS` changes
/// it): about 9 xids each, so two writers go round the status log's ring
/// (65 536 xids) at least once.
const TREES_PER_WRITER: u64 = 5_000;

/// How many of the newest trees a reader checks.
const WINDOW: usize = 150;

/// How far the truncator's target lags the next xid: the trees a reader
/// may pick are those of the last `LAG` xids (far more than `WINDOW` trees
/// in the common case). Half a status-log page, so the two-page ring never
/// fills while the horizon keeps up.
const LAG: u64 = 16 * 1024;

/// The status log's ring: 2 pages of 32 768 xids, the smallest allowed.
const STATUS_LOG_PAGES: usize = 2;

/// The CSN log's ring: 8 pages of 1 024 xids (smaller rings make a reader
/// descheduled while it holds a snapshot refuse most assignments).
const CSN_LOG_PAGES: usize = 8;

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
    /// The tops the last checked snapshot saw committed, sorted, recorded
    /// while it was live (for monotonicity; a released snapshot may not be
    /// asked anything, its xmin no longer holds the logs back).
    published: Mutex<Arc<Vec<Xid>>>,
    /// Xmin of each reader's live snapshot (0 = none), for horizon checks.
    live_xmins: Vec<AtomicU64>,
    /// The truncator's announced target: readers pick no tree below it.
    /// Only grows; read and written under the `trees` lock.
    announced: AtomicU64,
    /// The oldest top each reader may still ask about (u64::MAX = none):
    /// the truncator stays below it. Set under the `trees` lock.
    needed: Vec<AtomicU64>,
    /// Assignments refused with 54000 because a lagging reader or the
    /// truncator held a ring full; the writer retries.
    refused: AtomicU64,
    truncations: AtomicU64,
    /// Snapshots the readers checked.
    checked: AtomicU64,
}

fn visible(engine: &Engine, x: Xid, s: &snapscale_txn::Snapshot) -> bool {
    !engine.xid_in_snapshot(x, s) && engine.did_commit(x)
}

/// Assigns an xid, retrying while a ring is full (the long-snapshot policy
/// refuses with 54000 and overwrites nothing). `Err` after giving up on
/// the transaction: the caller aborts it and starts again.
fn assign(shared: &Shared, s: &mut Session) -> Result<Xid, ()> {
    match s.assign_xid() {
        Ok(x) => Ok(x),
        Err(TxnError::XidSpaceExhausted { .. }) => {
            shared.refused.fetch_add(1, SeqCst);
            Err(())
        }
        Err(e) => panic!("assign_xid: {e:?}"),
    }
}

fn writer(shared: &Shared, seed: u64, trees: u64) {
    let mut rng = Rng::new(seed);
    let mut s = shared.engine.attach().unwrap();
    let mut done = 0;
    // `stop` ends the run early only when a checker failed.
    while done < trees && !shared.stop.load(SeqCst) {
        s.begin(IsolationLevel::ReadCommitted).unwrap();
        let Ok(top) = assign(shared, &mut s) else {
            s.abort();
            thread::yield_now();
            continue;
        };
        let mut tree = Tree { top, committed_subs: Vec::new(), aborted_subs: Vec::new() };
        let subs = match rng.below(10) {
            0 => SUBXID_CACHE as u64 + 3, // overflow the cache
            n => n % 4,
        };
        let mut refused = false;
        for _ in 0..subs {
            s.begin_subtransaction().unwrap();
            let Ok(x) = assign(shared, &mut s) else {
                refused = true;
                break;
            };
            if rng.below(4) == 0 {
                s.abort_subtransaction().unwrap();
                tree.aborted_subs.push(x);
            } else {
                s.commit_subtransaction().unwrap();
                tree.committed_subs.push(x);
            }
        }
        let commit = !refused && rng.below(5) != 0;
        if !commit {
            tree.aborted_subs.push(top);
            tree.aborted_subs.append(&mut tree.committed_subs);
        }
        shared.trees.lock().unwrap().push(tree);
        if commit {
            s.commit().unwrap();
            done += 1;
        } else {
            s.abort();
            if refused {
                thread::yield_now();
            } else {
                done += 1;
            }
        }
    }
}

fn check_trees(engine: &Engine, trees: &[Tree], snap: &snapscale_txn::Snapshot) -> Vec<bool> {
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
    // A session that took one snapshot at the start and never another: its
    // recent_xmin falls ever further behind the logs' truncation points.
    let mut stale = engine.attach().unwrap();
    stale.begin(IsolationLevel::ReadCommitted).unwrap();
    stale.statement_snapshot().unwrap();
    stale.end_statement().unwrap();
    stale.commit().unwrap();
    let mut last_xmax = Xid::INVALID;
    while !shared.stop.load(SeqCst) {
        let rr = rng.below(2) == 0;
        s.begin(if rr { IsolationLevel::RepeatableRead } else { IsolationLevel::ReadCommitted }).unwrap();
        // Everything the earlier snapshot saw committed, a later one must too.
        let before = Arc::clone(&shared.published.lock().unwrap());
        let trees: Vec<Tree> = {
            let all = shared.trees.lock().unwrap();
            // Under the lock: a truncator that announced a later target
            // sees our floor; one that announces after us cannot pass it.
            let announced = shared.announced.load(SeqCst);
            let window: Vec<Tree> = all[all.len().saturating_sub(WINDOW)..]
                .iter()
                .filter(|t| t.top.get() >= announced)
                .cloned()
                .collect();
            let floor = window.iter().map(|t| t.top.get()).min().unwrap_or(u64::MAX);
            shared.needed[me].store(floor, SeqCst);
            window
        };
        let snap = s.statement_snapshot().unwrap();
        shared.live_xmins[me].store(snap.xmin.0, SeqCst);
        assert!(snap.xmax >= last_xmax, "xmax went backwards: {last_xmax:?} -> {:?}", snap.xmax);
        last_xmax = snap.xmax;
        let first = check_trees(engine, &trees, &snap);
        for t in &trees {
            if before.binary_search(&t.top).is_ok() {
                assert!(visible(engine, t.top, &snap), "monotonicity: {t:?} seen before, not by {snap:?}");
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
        stale.begin(IsolationLevel::ReadCommitted).unwrap();
        for &(x, committed) in &probes {
            assert_eq!(engine.did_commit(x), committed, "status of finished {x:?} changed");
            // XIDMAP-FLOOR: finished stays finished for a stale session too,
            // however the logs recycled their pages since its snapshot.
            let expected = if committed { XidState::Committed } else { XidState::Aborted };
            assert_eq!(stale.xid_state(x), expected, "stale session: {x:?}");
        }
        stale.commit().unwrap();
        let mut seen: Vec<Xid> = trees.iter().zip(&first).filter(|(_, &v)| v).map(|(t, _)| t.top).collect();
        seen.sort_unstable();
        *shared.published.lock().unwrap() = Arc::new(seen);
        // Withdraw the published xmin and floor before releasing the
        // snapshot: once released, horizons and truncation may pass them.
        shared.live_xmins[me].store(0, SeqCst);
        shared.needed[me].store(u64::MAX, SeqCst);
        s.end_statement().unwrap();
        s.commit().unwrap();
        shared.checked.fetch_add(1, SeqCst);
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

/// Truncates the logs as a vacuum would, as far as the horizon and the
/// trees the checkers may still ask about allow (module docs).
fn truncator(shared: &Shared) {
    let engine = &shared.engine;
    // Never takes a snapshot: its recent_xmin stays invalid, the stalest.
    let mut s = engine.attach().unwrap();
    while !shared.stop.load(SeqCst) {
        let horizon = engine.compute_horizons().oldest_considered_running;
        let lagging = Xid(engine.next_xid().get().saturating_sub(LAG));
        let point = {
            let _trees = shared.trees.lock().unwrap();
            let target = horizon.min(lagging).get();
            let announced = Xid(shared.announced.fetch_max(target, SeqCst).max(target));
            let needed = shared.needed.iter().map(|c| Xid(c.load(SeqCst)));
            needed.fold(announced, Xid::min)
        };
        let used = engine.truncate_logs(point);
        assert!(used <= point, "truncate_logs went past {point:?} to {used:?}");
        shared.truncations.fetch_add(1, SeqCst);
        if used > Xid::FIRST_NORMAL {
            // XIDMAP-FLOOR: below a truncation point nothing runs, and a
            // session with no snapshot at all must not need one to know it.
            s.begin(IsolationLevel::ReadCommitted).unwrap();
            let below = Xid(used.0 - 1);
            assert!(!s.is_in_progress(below), "{below:?} below truncation point {used:?} in progress");
            s.commit().unwrap();
        }
        thread::sleep(std::time::Duration::from_micros(200));
    }
}

fn stress(mode: SnapshotMode) {
    let readers = 2;
    let trees_per_writer =
        std::env::var("SNAPSCALE_STRESS_TXNS").ok().and_then(|v| v.parse().ok()).unwrap_or(TREES_PER_WRITER);
    let engine = Engine::new(EngineConfig {
        max_sessions: 12,
        snapshot_mode: mode,
        status_log_pages: STATUS_LOG_PAGES,
        csn_log_pages: CSN_LOG_PAGES,
        verify_reuse: true,
        ..EngineConfig::default()
    });
    let shared = Arc::new(Shared {
        engine,
        stop: AtomicBool::new(false),
        trees: Mutex::new(Vec::new()),
        published: Mutex::new(Arc::new(Vec::new())),
        live_xmins: (0..readers).map(|_| AtomicU64::new(0)).collect(),
        announced: AtomicU64::new(0),
        needed: (0..readers).map(|_| AtomicU64::new(u64::MAX)).collect(),
        refused: AtomicU64::new(0),
        truncations: AtomicU64::new(0),
        checked: AtomicU64::new(0),
    });
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let sh = Arc::clone(&shared);
            thread::spawn(move || writer(&sh, 1 + w, trees_per_writer))
        })
        .collect();
    let mut checkers = Vec::new();
    for r in 0..readers {
        let sh = Arc::clone(&shared);
        checkers.push(thread::spawn(move || reader(&sh, r, 10 + r as u64)));
    }
    let sh = Arc::clone(&shared);
    checkers.push(thread::spawn(move || vacuum(&sh)));
    let sh = Arc::clone(&shared);
    checkers.push(thread::spawn(move || truncator(&sh)));
    // The writers' count bounds the run; a checker that fails stops it early.
    while !writers.iter().all(|h| h.is_finished()) && !checkers.iter().any(|h| h.is_finished()) {
        thread::sleep(std::time::Duration::from_millis(5));
    }
    shared.stop.store(true, SeqCst);
    for h in writers.into_iter().chain(checkers) {
        h.join().expect("a stress thread failed its check");
    }
    let engine = &shared.engine;
    let next = engine.next_xid();
    let status_ring = (STATUS_LOG_PAGES * 32 * 1024) as u64;
    if trees_per_writer >= TREES_PER_WRITER {
        assert!(next.get() > status_ring, "{mode}: {next:?}: the status log never recycled a page");
    }
    assert!(shared.truncations.load(SeqCst) > 0, "{mode}: the truncator never ran");
    assert!(shared.checked.load(SeqCst) > 0, "{mode}: the readers never finished a check");
    eprintln!(
        "{mode}: {} trees, next xid {next:?}, {} snapshots checked, {} truncations (oldest tracked {:?}), \
         {} assignments refused",
        shared.trees.lock().unwrap().len(),
        shared.checked.load(SeqCst),
        shared.truncations.load(SeqCst),
        engine.oldest_tracked_xid(),
        shared.refused.load(SeqCst),
    );
}

#[test]
fn stress_pgproc() {
    stress(SnapshotMode::PgProc);
}

#[test]
fn stress_pgxact() {
    stress(SnapshotMode::PgXact);
}

#[test]
fn stress_dense() {
    stress(SnapshotMode::Dense);
}

#[test]
fn stress_dense_cached() {
    stress(SnapshotMode::DenseCached);
}

#[test]
fn stress_shared_cached() {
    stress(SnapshotMode::SharedCached);
}

#[test]
fn stress_csn() {
    stress(SnapshotMode::Csn);
}
