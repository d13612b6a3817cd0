//! `lab snapshots`: the cost of taking a snapshot against idle sessions,
//! active threads and write fraction, for every snapshot mode (seed 001's
//! figures 2–3, seed 002, seed 000), in-process.
//!
//! One cell = (mode, idle sessions, active threads, write fraction). Idle
//! sessions are attached and hold a proc-array slot but run nothing, like
//! idle connections. Each active thread runs READ COMMITTED transactions
//! back to back: begin, (with probability `write fraction`) assign an xid,
//! take the statement snapshot, end the statement, commit. The reported cost
//! is the wall time of that whole cycle divided by the snapshots taken, so it
//! includes begin/commit overhead that is the same for every mode; the median
//! of the repetitions is reported.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use snapscale_txn::{Engine, EngineConfig, IsolationLevel, SnapshotMode};

use crate::report::plot::{Figure, Panel, Series};
use crate::report::progress::Progress;
use crate::report::stats::{list, median};
use crate::report::table::{Table, Value};
use crate::report::{ResultSet, Written};

/// The experiment's settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Modes to compare.
    pub modes: Vec<SnapshotMode>,
    /// Idle session counts.
    pub idle: Vec<usize>,
    /// Active thread counts.
    pub active: Vec<usize>,
    /// Fractions of transactions that take an xid.
    pub write_fractions: Vec<f64>,
    /// Measured time per repetition (after a warm-up of a fifth of it).
    pub duration: Duration,
    /// Repetitions per cell; the median is reported.
    pub repeats: usize,
    /// Output directory.
    pub out_dir: PathBuf,
    /// Base name of the output files.
    pub name: String,
}

impl Settings {
    /// The full experiment (about five minutes on two cores).
    pub fn full(out_dir: PathBuf) -> Self {
        Self {
            modes: SnapshotMode::ALL.to_vec(),
            idle: vec![0, 100, 1_000, 10_000],
            active: vec![1, 2],
            write_fractions: vec![0.0, 0.01, 0.1],
            duration: Duration::from_millis(250),
            repeats: 5,
            out_dir,
            name: "snapshots".into(),
        }
    }

    /// The same grid, shorter and unrepeated: under a minute.
    pub fn quick(out_dir: PathBuf) -> Self {
        Self {
            duration: Duration::from_millis(100),
            repeats: 1,
            name: "snapshots-quick".into(),
            ..Self::full(out_dir)
        }
    }
}

/// One cell's measurement.
#[derive(Clone, Copy, Debug)]
pub struct Cell {
    /// Mode measured.
    pub mode: SnapshotMode,
    /// Idle sessions.
    pub idle: usize,
    /// Active threads.
    pub active: usize,
    /// Write fraction.
    pub write_fraction: f64,
    /// Median ns per snapshot (per thread: elapsed / snapshots).
    pub ns_per_snapshot: f64,
    /// Median snapshots per second, all threads together.
    pub snapshots_per_sec: f64,
    /// Fraction of snapshots reused or copied from a cache.
    pub reuse_fraction: f64,
}

struct Run {
    ns_per_snapshot: f64,
    snapshots_per_sec: f64,
    reuse_fraction: f64,
}

/// A tiny xorshift generator: the write decision must cost next to nothing.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn run_once(mode: SnapshotMode, idle: usize, active: usize, write_fraction: f64, duration: Duration) -> Run {
    let engine = Engine::new(EngineConfig {
        max_sessions: idle + active + 1,
        snapshot_mode: mode,
        ..EngineConfig::default()
    });
    let idle_sessions: Vec<_> = (0..idle).map(|_| engine.attach().expect("capacity")).collect();
    let warmup = duration / 5;
    let start_line = Arc::new(Barrier::new(active));
    let measuring = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..active)
        .map(|t| {
            let engine = Arc::clone(&engine);
            let start_line = Arc::clone(&start_line);
            let measuring = Arc::clone(&measuring);
            thread::spawn(move || {
                let mut session = engine.attach().expect("capacity");
                let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ (t as u64 + 1));
                start_line.wait();
                let begin = Instant::now();
                let mut counted_from: Option<(Instant, u64, snapscale_txn::SessionCounters)> = None;
                let mut snapshots = 0u64;
                loop {
                    for _ in 0..32 {
                        session.begin(IsolationLevel::ReadCommitted).expect("begin");
                        if write_fraction > 0.0 && rng.unit() < write_fraction {
                            session.assign_xid().expect("xid");
                        }
                        session.statement_snapshot().expect("snapshot");
                        session.end_statement().expect("end statement");
                        session.commit().expect("commit");
                        snapshots += 1;
                    }
                    let now = Instant::now();
                    match counted_from {
                        None if now - begin >= warmup => {
                            counted_from = Some((now, snapshots, session.counters()));
                            if t == 0 {
                                measuring.store(true, SeqCst);
                            }
                        }
                        Some((from, _, _)) if now - from >= duration => break,
                        _ => {}
                    }
                }
                let (from, base, before) = counted_from.expect("measured");
                let elapsed = from.elapsed();
                let n = snapshots - base;
                let after = session.counters();
                let reused = (after.reused - before.reused) + (after.copied - before.copied);
                (elapsed, n, reused)
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().expect("worker")).collect();
    drop(idle_sessions);
    let total: u64 = results.iter().map(|r| r.1).sum();
    let reused: u64 = results.iter().map(|r| r.2).sum();
    let ns = results.iter().map(|(e, n, _)| e.as_nanos() as f64 / *n as f64).sum::<f64>() / active as f64;
    let longest = results.iter().map(|r| r.0).max().expect("threads").as_secs_f64();
    Run {
        ns_per_snapshot: ns,
        snapshots_per_sec: total as f64 / longest,
        reuse_fraction: reused as f64 / total as f64,
    }
}

/// Runs every cell and returns the measurements.
///
/// Repetitions are the outer loop: each cell is measured once per round and
/// the rounds follow each other, so every cell's samples are spread over the
/// whole run. This machine's shared vCPUs alternate between fast and slow
/// phases lasting seconds (the same cell measured 55 ns and 100 ns minutes
/// apart); back-to-back repetitions could put all of one cell's samples in a
/// slow phase, and the median would not remove it.
pub fn measure(settings: &Settings) -> Vec<Cell> {
    let mut grid = Vec::new();
    for &active in &settings.active {
        for &write_fraction in &settings.write_fractions {
            for &idle in &settings.idle {
                for &mode in &settings.modes {
                    grid.push((mode, idle, active, write_fraction));
                }
            }
        }
    }
    let progress = Progress::new((grid.len() * settings.repeats) as u64, "lab snapshots");
    let mut runs: Vec<Vec<Run>> = grid.iter().map(|_| Vec::new()).collect();
    for round in 0..settings.repeats {
        for (cell, &(mode, idle, active, write_fraction)) in grid.iter().enumerate() {
            runs[cell].push(run_once(mode, idle, active, write_fraction, settings.duration));
            progress
                .inc(&format!("round {} {mode} idle={idle} active={active} w={write_fraction}", round + 1));
        }
    }
    progress.finish();
    grid.iter()
        .zip(runs)
        .map(|(&(mode, idle, active, write_fraction), runs)| Cell {
            mode,
            idle,
            active,
            write_fraction,
            ns_per_snapshot: median(runs.iter().map(|r| r.ns_per_snapshot).collect()),
            snapshots_per_sec: median(runs.iter().map(|r| r.snapshots_per_sec).collect()),
            reuse_fraction: median(runs.iter().map(|r| r.reuse_fraction).collect()),
        })
        .collect()
}

fn cost(cells: &[Cell], mode: SnapshotMode, idle: usize, active: usize, w: f64) -> Option<f64> {
    cells
        .iter()
        .find(|c| c.mode == mode && c.idle == idle && c.active == active && c.write_fraction == w)
        .map(|c| c.ns_per_snapshot)
}

/// Least-squares slope of ns per snapshot against idle sessions, in ns per
/// 1 000 idle sessions.
fn slope_per_1000(cells: &[Cell], mode: SnapshotMode, active: usize, w: f64) -> Option<f64> {
    let pts: Vec<(f64, f64)> = cells
        .iter()
        .filter(|c| c.mode == mode && c.active == active && c.write_fraction == w)
        .map(|c| (c.idle as f64, c.ns_per_snapshot))
        .collect();
    if pts.len() < 2 {
        return None;
    }
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx).powi(2)).sum();
    (sxx > 0.0).then(|| 1000.0 * sxy / sxx)
}

/// The Markdown summary: flatness ratios and slopes for the read-only cells.
pub fn summary(settings: &Settings, cells: &[Cell]) -> String {
    let lo = *settings.idle.iter().min().expect("idle counts");
    let hi = *settings.idle.iter().max().expect("idle counts");
    let mut s = String::new();
    s.push_str(&format!(
        "Cost per snapshot (one begin → snapshot → commit cycle) with {hi} idle sessions divided by the cost with {lo}, \
         and the least-squares slope in ns per 1 000 idle sessions, read-only (write fraction 0).\n\n"
    ));
    s.push_str("| mode | active | cost ratio idle max/min | slope ns per 1000 idle | ns at min idle | ns at max idle |\n");
    s.push_str("|---|---:|---:|---:|---:|---:|\n");
    for &active in &settings.active {
        for &mode in &settings.modes {
            let (Some(a), Some(b)) = (cost(cells, mode, lo, active, 0.0), cost(cells, mode, hi, active, 0.0))
            else {
                continue;
            };
            let slope = slope_per_1000(cells, mode, active, 0.0).map_or("–".into(), |v| format!("{v:.1}"));
            s.push_str(&format!("| {mode} | {active} | {:.2} | {slope} | {a:.1} | {b:.1} |\n", b / a));
        }
    }
    if let Some(&w) = settings.write_fractions.iter().max_by(|a, b| a.total_cmp(b)) {
        if w > 0.0 {
            s.push_str(&format!(
                "\nWith write fraction {w} ({hi} idle sessions), reuse fraction and cost per mode, active threads {}:\n\n",
                settings.active.iter().max().expect("active counts")
            ));
            s.push_str("| mode | reuse fraction | ns per snapshot |\n|---|---:|---:|\n");
            let active = *settings.active.iter().max().expect("active counts");
            for c in cells.iter().filter(|c| c.idle == hi && c.active == active && c.write_fraction == w) {
                s.push_str(&format!("| {} | {:.3} | {:.1} |\n", c.mode, c.reuse_fraction, c.ns_per_snapshot));
            }
        }
    }
    s
}

fn figure(settings: &Settings, cells: &[Cell]) -> Figure {
    let mut panels = Vec::new();
    for &active in &settings.active {
        for &w in &settings.write_fractions {
            let series = settings
                .modes
                .iter()
                .map(|&mode| Series {
                    label: mode.name().into(),
                    points: cells
                        .iter()
                        .filter(|c| c.mode == mode && c.active == active && c.write_fraction == w)
                        .map(|c| (c.idle as f64, c.ns_per_snapshot))
                        .collect(),
                })
                .collect();
            panels.push(Panel { title: format!("{active} active, write fraction {w}"), series });
        }
    }
    Figure {
        title: "Snapshot cost against idle sessions".into(),
        x_label: "idle sessions".into(),
        y_label: "ns per snapshot".into(),
        x_log: true,
        y_log: true,
        panels,
    }
}

/// Runs the experiment and writes CSV, SVG and Markdown.
pub fn run(settings: &Settings) -> std::io::Result<Written> {
    let cells = measure(settings);
    let mut table = Table::new(&[
        "mode",
        "idle",
        "active",
        "write_fraction",
        "ns_per_snapshot",
        "snapshots_per_sec",
        "reuse_fraction",
    ]);
    for c in &cells {
        table.push(vec![
            Value::from(c.mode.name()),
            Value::from(c.idle),
            Value::from(c.active),
            Value::from(c.write_fraction),
            Value::from(c.ns_per_snapshot),
            Value::from(c.snapshots_per_sec),
            Value::from(c.reuse_fraction),
        ]);
    }
    let settings_list = vec![
        ("modes".to_string(), settings.modes.iter().map(|m| m.name()).collect::<Vec<_>>().join(", ")),
        ("idle sessions".to_string(), list(&settings.idle)),
        ("active threads".to_string(), list(&settings.active)),
        ("write fractions".to_string(), list(&settings.write_fractions)),
        (
            "measured per repetition".to_string(),
            format!(
                "{} ms after {} ms warm-up",
                settings.duration.as_millis(),
                settings.duration.as_millis() / 5
            ),
        ),
        ("repetitions (median reported)".to_string(), settings.repeats.to_string()),
        ("isolation".to_string(), "READ COMMITTED, one statement per transaction".to_string()),
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
    fn a_tiny_grid_measures_every_cell() {
        let settings = Settings {
            modes: vec![SnapshotMode::PgProc, SnapshotMode::DenseCached],
            idle: vec![0, 10],
            active: vec![1],
            write_fractions: vec![0.0, 0.5],
            duration: Duration::from_millis(5),
            repeats: 1,
            out_dir: std::env::temp_dir(),
            name: "unused".into(),
        };
        let cells = measure(&settings);
        assert_eq!(cells.len(), 8);
        assert!(cells.iter().all(|c| c.ns_per_snapshot > 0.0 && c.snapshots_per_sec > 0.0));
        let reuse = |w: f64| {
            cells
                .iter()
                .find(|c| c.mode == SnapshotMode::DenseCached && c.idle == 0 && c.write_fraction == w)
                .unwrap()
                .reuse_fraction
        };
        assert!(reuse(0.0) > 0.9, "read-only dense-cached must reuse");
        assert!(reuse(0.5) < reuse(0.0), "writes invalidate reuse");
        assert!(summary(&settings, &cells).contains("| pgproc | 1 |"));
    }

    #[test]
    fn slope_of_a_line() {
        let mk = |idle, ns| Cell {
            mode: SnapshotMode::Dense,
            idle,
            active: 1,
            write_fraction: 0.0,
            ns_per_snapshot: ns,
            snapshots_per_sec: 1.0,
            reuse_fraction: 0.0,
        };
        let cells = [mk(0, 100.0), mk(1000, 300.0), mk(2000, 500.0)];
        let slope = slope_per_1000(&cells, SnapshotMode::Dense, 1, 0.0).unwrap();
        assert!((slope - 200.0).abs() < 1e-9);
    }
}
