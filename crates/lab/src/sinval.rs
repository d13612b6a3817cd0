//! `lab sinval`: seed 003 in-process. What does the invalidation check that
//! every lock acquisition makes cost, with the has-messages fast path and
//! with the pre-2011 locked read path, as sessions are added?
//!
//! Each session is a thread. Two loops are measured per cell:
//! * transactions: begin, snapshot, two invalidation checks (as after
//!   locking a table and its index), commit; reported as transactions/s;
//! * checks only: the invalidation check alone, reported as checks/s and as
//!   CPU-ns per check = busy cores / (checks per second), so 80 threads on 2
//!   cores are not counted as 80 cores.
//!
//! "writer" cells add a thread that sends a create/drop pair of relation
//! invalidations every 200 µs (`CREATE TEMP TABLE foo (a int); DROP TABLE
//! foo;` in a loop), so readers find messages now and then.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use snapscale_sinval::{Invalidation, ReadPath, Sinval, SinvalConfig};
use snapscale_txn::{Engine, EngineConfig, IsolationLevel};

use crate::report::plot::{Figure, Panel, Series};
use crate::report::progress::Progress;
use crate::report::stats::{list, median};
use crate::report::table::{Table, Value};
use crate::report::{ResultSet, Written};

/// Invalidation checks per transaction (a table and its index).
const CHECKS_PER_TXN: u64 = 2;

/// The experiment's settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Session (thread) counts.
    pub sessions: Vec<usize>,
    /// Measured time per loop and repetition.
    pub duration: Duration,
    /// Rounds over the whole grid; the median is reported.
    pub repeats: usize,
    /// Output directory.
    pub out_dir: PathBuf,
    /// Base name of the output files.
    pub name: String,
}

impl Settings {
    /// The full experiment (about a minute).
    pub fn full(out_dir: PathBuf) -> Self {
        Self {
            sessions: vec![1, 8, 32, 80],
            duration: Duration::from_millis(300),
            repeats: 3,
            out_dir,
            name: "sinval".into(),
        }
    }

    /// A short variant.
    pub fn quick(out_dir: PathBuf) -> Self {
        Self {
            duration: Duration::from_millis(80),
            repeats: 1,
            name: "sinval-quick".into(),
            ..Self::full(out_dir)
        }
    }
}

/// One cell.
#[derive(Clone, Copy, Debug)]
pub struct Cell {
    /// Read path measured.
    pub read_path: ReadPath,
    /// Sessions.
    pub sessions: usize,
    /// With the create/drop writer.
    pub writer: bool,
    /// Median transactions per second.
    pub txns_per_sec: f64,
    /// Median checks per second (checks-only loop).
    pub checks_per_sec: f64,
    /// CPU-ns per check.
    pub cpu_ns_per_check: f64,
}

fn path_name(p: ReadPath) -> &'static str {
    match p {
        ReadPath::FastPath => "fast path",
        ReadPath::Locked => "locked",
    }
}

/// Runs `sessions` threads for `duration`; returns operations per second.
fn run_loop(
    read_path: ReadPath,
    sessions: usize,
    writer: bool,
    duration: Duration,
    checks_only: bool,
) -> f64 {
    let engine = Engine::new(EngineConfig { max_sessions: sessions + 2, ..EngineConfig::default() });
    let sinval =
        Arc::new(Sinval::new(SinvalConfig { max_sessions: sessions + 2, capacity: 4096, read_path }));
    let stop = Arc::new(AtomicBool::new(false));
    let start_line = Arc::new(Barrier::new(sessions + 1));
    let writer_thread = writer.then(|| {
        let (sinval, stop) = (Arc::clone(&sinval), Arc::clone(&stop));
        thread::spawn(move || {
            let mut oid = 16_384;
            while !stop.load(SeqCst) {
                sinval.send(&[Invalidation::Relation(oid), Invalidation::Relation(oid)]);
                oid += 1;
                thread::sleep(Duration::from_micros(200));
            }
        })
    });
    let workers: Vec<_> = (0..sessions)
        .map(|_| {
            let (engine, sinval, stop, start_line) =
                (Arc::clone(&engine), Arc::clone(&sinval), Arc::clone(&stop), Arc::clone(&start_line));
            thread::spawn(move || {
                let mut session = engine.attach().expect("capacity");
                let slot = session.slot();
                sinval.attach(slot);
                let mut inbox = Vec::new();
                let mut ops = 0u64;
                start_line.wait();
                // Each worker times its own window: with 80 threads on 2
                // cores the main thread may run long after the barrier, and
                // work done before it read the clock would inflate the rate.
                let began = Instant::now();
                while !stop.load(SeqCst) {
                    for _ in 0..16 {
                        if checks_only {
                            sinval.receive(slot, &mut inbox);
                        } else {
                            session.begin(IsolationLevel::ReadCommitted).expect("begin");
                            session.statement_snapshot().expect("snapshot");
                            for _ in 0..CHECKS_PER_TXN {
                                sinval.receive(slot, &mut inbox);
                            }
                            session.end_statement().expect("end statement");
                            session.commit().expect("commit");
                        }
                        inbox.clear();
                        ops += 1;
                    }
                }
                let ended = Instant::now();
                sinval.detach(slot);
                (ops, began, ended)
            })
        })
        .collect();
    start_line.wait();
    thread::sleep(duration);
    stop.store(true, SeqCst);
    let results: Vec<(u64, Instant, Instant)> =
        workers.into_iter().map(|w| w.join().expect("worker")).collect();
    let total: u64 = results.iter().map(|r| r.0).sum();
    let first = results.iter().map(|r| r.1).min().expect("workers");
    let last = results.iter().map(|r| r.2).max().expect("workers");
    let elapsed = (last - first).as_secs_f64();
    if let Some(w) = writer_thread {
        w.join().expect("writer");
    }
    total as f64 / elapsed
}

/// Runs every cell; rounds are interleaved over the grid (see `snapshots`).
pub fn measure(settings: &Settings) -> Vec<Cell> {
    let cores = thread::available_parallelism().map_or(1, |n| n.get());
    let mut grid = Vec::new();
    for writer in [false, true] {
        for &sessions in &settings.sessions {
            for read_path in [ReadPath::FastPath, ReadPath::Locked] {
                grid.push((read_path, sessions, writer));
            }
        }
    }
    let progress = Progress::new((grid.len() * settings.repeats) as u64, "lab sinval");
    let mut samples: Vec<(Vec<f64>, Vec<f64>)> = grid.iter().map(|_| (Vec::new(), Vec::new())).collect();
    for _ in 0..settings.repeats {
        for (i, &(path, sessions, writer)) in grid.iter().enumerate() {
            samples[i].0.push(run_loop(path, sessions, writer, settings.duration, false));
            samples[i].1.push(run_loop(path, sessions, writer, settings.duration, true));
            progress.inc(&format!("{} sessions={sessions} writer={writer}", path_name(path)));
        }
    }
    progress.finish();
    grid.iter()
        .zip(samples)
        .map(|(&(read_path, sessions, writer), (txns, checks))| {
            let checks_per_sec = median(checks);
            let busy = sessions.min(cores) as f64;
            Cell {
                read_path,
                sessions,
                writer,
                txns_per_sec: median(txns),
                checks_per_sec,
                cpu_ns_per_check: busy * 1e9 / checks_per_sec,
            }
        })
        .collect()
}

fn find(cells: &[Cell], path: ReadPath, sessions: usize, writer: bool) -> Option<&Cell> {
    cells.iter().find(|c| c.read_path == path && c.sessions == sessions && c.writer == writer)
}

/// The Markdown summary: per-transaction check cost, fast path vs locked.
pub fn summary(settings: &Settings, cells: &[Cell]) -> String {
    let mut s = format!(
        "Per-transaction invalidation-check cost = {CHECKS_PER_TXN} checks × CPU-ns per check (checks-only loop), \
         and read-only transactions per second, fast path vs locked read path.\n\n"
    );
    s.push_str("| messages | sessions | fast path ns/txn | locked ns/txn | locked ÷ fast | fast path txn/s | locked txn/s |\n");
    s.push_str("|---|---:|---:|---:|---:|---:|---:|\n");
    for writer in [false, true] {
        for &n in &settings.sessions {
            let (Some(f), Some(l)) =
                (find(cells, ReadPath::FastPath, n, writer), find(cells, ReadPath::Locked, n, writer))
            else {
                continue;
            };
            let (fc, lc) =
                (f.cpu_ns_per_check * CHECKS_PER_TXN as f64, l.cpu_ns_per_check * CHECKS_PER_TXN as f64);
            s.push_str(&format!(
                "| {} | {n} | {fc:.1} | {lc:.1} | {:.1} | {:.0} | {:.0} |\n",
                if writer { "create/drop writer" } else { "none pending" },
                lc / fc,
                f.txns_per_sec,
                l.txns_per_sec
            ));
        }
    }
    s
}

fn figure(settings: &Settings, cells: &[Cell]) -> Figure {
    let mut panels = Vec::new();
    for (title, metric) in [("invalidation check, CPU-ns", 0), ("read-only transactions/s", 1)] {
        let mut series = Vec::new();
        for writer in [false, true] {
            for path in [ReadPath::FastPath, ReadPath::Locked] {
                series.push(Series {
                    label: format!("{}{}", path_name(path), if writer { ", writer" } else { "" }),
                    points: settings
                        .sessions
                        .iter()
                        .filter_map(|&n| find(cells, path, n, writer))
                        .map(|c| {
                            (c.sessions as f64, if metric == 0 { c.cpu_ns_per_check } else { c.txns_per_sec })
                        })
                        .collect(),
                });
            }
        }
        panels.push(Panel { title: title.into(), series });
    }
    Figure {
        title: "Shared invalidation: has-messages fast path vs locked reads".into(),
        x_label: "sessions".into(),
        y_label: "see panel title".into(),
        x_log: true,
        y_log: true,
        panels,
    }
}

/// Runs the experiment and writes CSV, SVG and Markdown.
pub fn run(settings: &Settings) -> std::io::Result<Written> {
    let cells = measure(settings);
    let mut table = Table::new(&[
        "read_path",
        "sessions",
        "writer",
        "txns_per_sec",
        "checks_per_sec",
        "cpu_ns_per_check",
    ]);
    for c in &cells {
        table.push(vec![
            Value::from(path_name(c.read_path)),
            Value::from(c.sessions),
            Value::from(if c.writer { "create/drop" } else { "none" }),
            Value::from(c.txns_per_sec),
            Value::from(c.checks_per_sec),
            Value::from(c.cpu_ns_per_check),
        ]);
    }
    let settings_list = vec![
        ("sessions".to_string(), list(&settings.sessions)),
        ("measured per loop".to_string(), format!("{} ms", settings.duration.as_millis())),
        ("rounds (median reported)".to_string(), settings.repeats.to_string()),
        (
            "transaction".to_string(),
            format!("begin, snapshot (csn), {CHECKS_PER_TXN} invalidation checks, commit"),
        ),
        ("writer".to_string(), "2 relation invalidations every 200 µs".to_string()),
        ("ring capacity".to_string(), "4096 messages".to_string()),
    ];
    ResultSet::new(&settings.out_dir, &settings.name).write(
        &table,
        &figure(settings, &cells),
        &summary(settings, &cells),
        &settings_list,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tiny_grid_measures_both_paths() {
        let settings = Settings {
            sessions: vec![2],
            duration: Duration::from_millis(20),
            repeats: 1,
            out_dir: std::env::temp_dir(),
            name: "unused".into(),
        };
        let cells = measure(&settings);
        assert_eq!(cells.len(), 4);
        assert!(cells.iter().all(|c| c.txns_per_sec > 0.0 && c.checks_per_sec > 0.0));
        assert!(summary(&settings, &cells).contains("| none pending | 2 |"));
    }
}
