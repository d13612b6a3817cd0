//! The in-process half of `lab standby`: a standby engine whose replayer
//! has been fed a primary's running transactions, then timed.
//!
//! * Snapshot cost: reader threads take READ COMMITTED statement snapshots
//!   in a loop while `n` primary transactions are known to be running. A
//!   `known-assigned` snapshot copies them (PostgreSQL's
//!   KnownAssignedXidsGetAndSetXmin); a `csn` snapshot reads one number.
//!   Replay is idle while timing: this isolates the copy.
//! * Visibility cost: `Engine::xid_in_snapshot` for the patch thread's
//!   cases, with one old transaction still running so that every probe
//!   lies between the snapshot's xmin and xmax (no shortcut).

use std::hint::black_box;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use snapscale_txn::{
    Engine, EngineConfig, IsolationLevel, Replayer, RunningXacts, Session, Snapshot, SnapshotMode, Xid,
    SUBXID_CACHE,
};

/// How the running transactions of the snapshot experiment look.
pub const SHAPES: [&str; 2] = ["top-level only", "one overflowed tree"];

/// The visibility experiment's cases (the patch thread's names).
pub const CASES: [&str; 4] = ["few xacts", "many xacts", "all different xids", "all different subxids"];

/// What the visibility experiment compares.
pub const CHECKS: [&str; 3] = ["known-assigned", "csn, no memo", "csn + memo"];

/// A standby engine and its replayer, started from an empty primary.
fn standby(mode: SnapshotMode, sessions: usize) -> (Arc<Engine>, Replayer) {
    let engine = Engine::new(EngineConfig {
        max_sessions: sessions + 2,
        snapshot_mode: mode,
        standby: true,
        ..EngineConfig::default()
    });
    let start =
        RunningXacts { next_xid: Xid::FIRST_NORMAL, oldest_running: Xid::FIRST_NORMAL, xids: Vec::new() };
    let replayer = engine.replayer(&start);
    (engine, replayer)
}

/// Replays `n` running top-level transactions (plus, for the overflow
/// shape, `SUBXID_CACHE + 1` subtransactions of the first), then one commit
/// after them so that the snapshots' xmax lies past all of them.
fn replay_running(replayer: &mut Replayer, n: usize, shape: &str) {
    let first = Xid::FIRST_NORMAL.0;
    let mut next = first;
    if n > 0 {
        next = first + n as u64;
        replayer.observe(Xid(next - 1)).expect("observe");
        if shape == SHAPES[1] {
            for _ in 0..=SUBXID_CACHE {
                replayer.assign(Xid(first), Xid(next)).expect("assign");
                next += 1;
            }
        }
    }
    replayer.observe(Xid(next)).expect("observe");
    replayer.commit(Xid(next), &[]).expect("commit");
}

/// Median over `repeats` of the ns per snapshot of `readers` threads, each
/// taking snapshots for `duration`; `n` primary transactions running.
pub fn snapshot_ns(mode: SnapshotMode, shape: &str, n: usize, readers: usize, duration: Duration) -> f64 {
    let (engine, mut replayer) = standby(mode, readers);
    replay_running(&mut replayer, n, shape);
    let start_line = Arc::new(Barrier::new(readers));
    let handles: Vec<_> = (0..readers)
        .map(|_| {
            let engine = Arc::clone(&engine);
            let start_line = Arc::clone(&start_line);
            thread::spawn(move || {
                let mut session = engine.attach().expect("capacity");
                start_line.wait();
                let begin = Instant::now();
                let mut taken = 0u64;
                while begin.elapsed() < duration {
                    for _ in 0..32 {
                        session.begin(IsolationLevel::ReadCommitted).expect("begin");
                        black_box(session.statement_snapshot().expect("snapshot"));
                        session.end_statement().expect("end statement");
                        session.commit().expect("commit");
                    }
                    taken += 32;
                }
                begin.elapsed().as_nanos() as f64 / taken as f64
            })
        })
        .collect();
    let per_thread: Vec<f64> = handles.into_iter().map(|h| h.join().expect("reader")).collect();
    // Each thread's own cost per snapshot; their mean is what one reader pays.
    per_thread.iter().sum::<f64>() / per_thread.len() as f64
}

/// One visibility case set up on a standby.
struct Case {
    engine: Arc<Engine>,
    _reader: Session,
    snapshot: Arc<Snapshot>,
    probes: Vec<Xid>,
}

/// Replays the case: an old transaction stays running (holding xmin), then
/// the probed transactions commit, then a reader takes its snapshot.
/// `n` is the number of rows (probes); `few xacts` writes them with 10
/// xids, `many xacts` with n / 10, the last two with one xid per row.
fn case(mode: SnapshotMode, name: &str, n: usize) -> Case {
    let (engine, mut replayer) = standby(mode, 1);
    let old = Xid::FIRST_NORMAL;
    replayer.observe(old).expect("observe");
    let mut next = old.0 + 1;
    let mut committed = Vec::new();
    if name == CASES[3] {
        let top = Xid(next);
        let subs: Vec<Xid> = (1..=n as u64).map(|i| Xid(next + i)).collect();
        for &s in &subs {
            replayer.assign(top, s).expect("assign");
        }
        replayer.commit(top, &subs).expect("commit");
        committed = subs;
    } else {
        let xacts = match name {
            "few xacts" => 10.min(n),
            "many xacts" => (n / 10).max(1),
            _ => n,
        };
        for _ in 0..xacts {
            replayer.observe(Xid(next)).expect("observe");
            replayer.commit(Xid(next), &[]).expect("commit");
            committed.push(Xid(next));
            next += 1;
        }
    }
    let mut reader = engine.attach().expect("capacity");
    reader.begin(IsolationLevel::RepeatableRead).expect("begin");
    let snapshot = reader.statement_snapshot().expect("snapshot");
    // Rows in table order: each committed xid wrote a run of rows.
    let per = n.div_ceil(committed.len());
    let probes = committed.iter().flat_map(|&x| std::iter::repeat_n(x, per)).take(n).collect();
    Case { engine, _reader: reader, snapshot, probes }
}

/// ns per `xid_in_snapshot` check over `passes` scans of the case's rows,
/// median of `repeats`.
pub fn visibility_ns(check: &str, name: &str, n: usize, passes: usize, repeats: usize) -> f64 {
    let mode = if check == CHECKS[0] { SnapshotMode::KnownAssigned } else { SnapshotMode::Csn };
    let c = case(mode, name, n);
    let mut times = Vec::new();
    for _ in 0..repeats {
        // A fresh memo per repetition: the first scan fills it.
        let snapshot = match check {
            "csn, no memo" => c.snapshot.without_memo(),
            _ => c.snapshot.as_ref().clone(),
        };
        let start = Instant::now();
        for _ in 0..passes {
            for &x in &c.probes {
                black_box(c.engine.xid_in_snapshot(black_box(x), &snapshot));
            }
        }
        times.push(start.elapsed().as_nanos() as f64 / (passes * c.probes.len()) as f64);
    }
    crate::report::stats::median(times)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_assigned_snapshots_list_the_running_transactions() {
        for shape in SHAPES {
            let (engine, mut replayer) = standby(SnapshotMode::KnownAssigned, 1);
            replay_running(&mut replayer, 50, shape);
            let mut s = engine.attach().expect("capacity");
            s.begin(IsolationLevel::ReadCommitted).expect("begin");
            let snap = s.statement_snapshot().expect("snapshot");
            for x in 0..50 {
                assert!(
                    engine.xid_in_snapshot(Xid(Xid::FIRST_NORMAL.0 + x), &snap),
                    "{shape}: xid {x} running"
                );
            }
        }
    }

    #[test]
    fn every_case_probes_committed_xids_inside_the_snapshot() {
        for name in CASES {
            for mode in SnapshotMode::STANDBY {
                let c = case(mode, name, 200);
                assert_eq!(c.probes.len(), 200, "{name}");
                assert!(c.probes.iter().all(|&x| x > c.snapshot.xmin && x < c.snapshot.xmax), "{name}");
                assert!(
                    c.probes.iter().all(|&x| !c.engine.xid_in_snapshot(x, &c.snapshot)),
                    "{name}: committed"
                );
            }
        }
    }
}
