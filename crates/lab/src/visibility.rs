//! `lab visibility`: the cost of "was this xid running for my snapshot?"
//! (XidInMVCCSnapshot) in the cases seed 004 measured, comparing the dense
//! snapshot's xip search with the CSN log, without and with the per-snapshot
//! memo.
//!
//! Scenarios, each with `n` xids to probe:
//! * `one-writer`: one open transaction; every probe is its xid (a table
//!   whose rows one writer inserted).
//! * `open-xids`: `n` sessions each with an open transaction.
//! * `subxids`: one open transaction with `n` subtransactions (the dense
//!   snapshot overflows its 64-entry cache beyond that).
//! * `committed-after`: `n` transactions open at the snapshot, committed
//!   right after it.
//! * `committed-before`: `n` transactions committed before the snapshot,
//!   above its xmin (one old transaction holds xmin back).
//!
//! Each probe set is checked in `passes` passes: the memo pays off from the
//! second look at an xid. "log loads" counts CSN-log loads per check.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use snapscale_txn::{Engine, EngineConfig, IsolationLevel, Session, Snapshot, SnapshotMode, Xid};

use crate::report::plot::{Figure, Panel, Series};
use crate::report::progress::Progress;
use crate::report::stats::{list, median};
use crate::report::table::{Table, Value};
use crate::report::{ResultSet, Written};

/// The experiment's scenarios.
pub const SCENARIOS: [&str; 5] =
    ["one-writer", "open-xids", "subxids", "committed-after", "committed-before"];

/// What is measured per scenario.
pub const VARIANTS: [&str; 3] = ["dense xip search", "csn log, no memo", "csn log + memo"];

/// The experiment's settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Xids per scenario.
    pub sizes: Vec<usize>,
    /// Checks per measurement (spread over passes of the probe set).
    pub checks: usize,
    /// Repetitions; the median is reported.
    pub repeats: usize,
    /// Output directory.
    pub out_dir: PathBuf,
    /// Base name of the output files.
    pub name: String,
}

impl Settings {
    /// The full experiment.
    pub fn full(out_dir: PathBuf) -> Self {
        Self {
            sizes: vec![10, 100, 1_000, 4_000],
            checks: 400_000,
            repeats: 5,
            out_dir,
            name: "visibility".into(),
        }
    }

    /// A short variant.
    pub fn quick(out_dir: PathBuf) -> Self {
        Self { checks: 40_000, repeats: 1, name: "visibility-quick".into(), ..Self::full(out_dir) }
    }
}

/// One measurement.
#[derive(Clone, Debug)]
pub struct Row {
    /// Scenario name.
    pub scenario: &'static str,
    /// Variant name.
    pub variant: &'static str,
    /// Xids probed.
    pub n: usize,
    /// Median ns per check.
    pub ns_per_check: f64,
    /// CSN-log loads per check.
    pub log_loads_per_check: f64,
}

/// An engine set up for one scenario, with everything kept alive.
struct Setup {
    engine: Arc<Engine>,
    _sessions: Vec<Session>,
    snapshot: Arc<Snapshot>,
    probes: Vec<Xid>,
}

fn engine(mode: SnapshotMode, sessions: usize) -> Arc<Engine> {
    Engine::new(EngineConfig { max_sessions: sessions + 4, snapshot_mode: mode, ..EngineConfig::default() })
}

fn open_writer(engine: &Arc<Engine>) -> (Session, Xid) {
    let mut s = engine.attach().expect("capacity");
    s.begin(IsolationLevel::ReadCommitted).expect("begin");
    let x = s.assign_xid().expect("xid");
    (s, x)
}

fn commit_one(engine: &Arc<Engine>) -> Xid {
    let (mut s, x) = open_writer(engine);
    s.commit().expect("commit");
    x
}

fn reader_snapshot(engine: &Arc<Engine>, sessions: &mut Vec<Session>) -> Arc<Snapshot> {
    let mut r = engine.attach().expect("capacity");
    r.begin(IsolationLevel::RepeatableRead).expect("begin");
    let snap = r.statement_snapshot().expect("snapshot");
    sessions.push(r);
    snap
}

fn setup(mode: SnapshotMode, scenario: &str, n: usize) -> Setup {
    let engine = engine(mode, n + 2);
    let mut sessions = Vec::new();
    let mut probes = Vec::new();
    let snapshot = match scenario {
        "one-writer" => {
            let (s, x) = open_writer(&engine);
            sessions.push(s);
            commit_one(&engine);
            probes = vec![x; n];
            reader_snapshot(&engine, &mut sessions)
        }
        "open-xids" | "committed-after" => {
            for _ in 0..n {
                let (s, x) = open_writer(&engine);
                sessions.push(s);
                probes.push(x);
            }
            commit_one(&engine);
            let snap = reader_snapshot(&engine, &mut sessions);
            if scenario == "committed-after" {
                let reader = sessions.pop().expect("reader");
                for mut s in sessions.drain(..) {
                    s.commit().expect("commit");
                }
                sessions.push(reader);
            }
            snap
        }
        "subxids" => {
            let (mut s, _) = open_writer(&engine);
            for _ in 0..n {
                s.begin_subtransaction().expect("savepoint");
                probes.push(s.assign_xid().expect("subxid"));
                s.commit_subtransaction().expect("release");
            }
            sessions.push(s);
            commit_one(&engine);
            reader_snapshot(&engine, &mut sessions)
        }
        "committed-before" => {
            let (old, _) = open_writer(&engine);
            sessions.push(old);
            for _ in 0..n {
                probes.push(commit_one(&engine));
            }
            reader_snapshot(&engine, &mut sessions)
        }
        other => panic!("unknown scenario {other}"),
    };
    Setup { engine, _sessions: sessions, snapshot, probes }
}

/// Times `checks` xid-in-snapshot checks over the probes; returns
/// (ns per check, CSN-log loads per check).
fn time_checks(engine: &Engine, snapshot: &Snapshot, probes: &[Xid], checks: usize) -> (f64, f64) {
    let passes = checks.div_ceil(probes.len()).max(1);
    let loads_before = engine.csn_log_loads();
    let start = Instant::now();
    for _ in 0..passes {
        for &x in probes {
            black_box(engine.xid_in_snapshot(black_box(x), snapshot));
        }
    }
    let elapsed = start.elapsed().as_nanos() as f64;
    let done = (passes * probes.len()) as f64;
    (elapsed / done, (engine.csn_log_loads() - loads_before) as f64 / done)
}

/// Runs every scenario, size and variant.
pub fn measure(settings: &Settings) -> Vec<Row> {
    let mut rows = Vec::new();
    let progress = Progress::new((SCENARIOS.len() * settings.sizes.len()) as u64, "lab visibility");
    for scenario in SCENARIOS {
        for &n in &settings.sizes {
            let dense = setup(SnapshotMode::Dense, scenario, n);
            let csn = setup(SnapshotMode::Csn, scenario, n);
            for variant in VARIANTS {
                let mut ns = Vec::new();
                let mut loads = Vec::new();
                for _ in 0..settings.repeats {
                    let (t, l) = match variant {
                        "dense xip search" => {
                            time_checks(&dense.engine, &dense.snapshot, &dense.probes, settings.checks)
                        }
                        "csn log, no memo" => time_checks(
                            &csn.engine,
                            &csn.snapshot.without_memo(),
                            &csn.probes,
                            settings.checks,
                        ),
                        // A fresh memo per repetition: the first pass fills it.
                        _ => time_checks(
                            &csn.engine,
                            &csn.snapshot.as_ref().clone(),
                            &csn.probes,
                            settings.checks,
                        ),
                    };
                    ns.push(t);
                    loads.push(l);
                }
                rows.push(Row {
                    scenario,
                    variant,
                    n,
                    ns_per_check: median(ns),
                    log_loads_per_check: median(loads),
                });
            }
            progress.inc(&format!("{scenario} n={n}"));
        }
    }
    progress.finish();
    rows
}

fn find(rows: &[Row], scenario: &str, variant: &str, n: usize) -> Option<f64> {
    rows.iter().find(|r| r.scenario == scenario && r.variant == variant && r.n == n).map(|r| r.ns_per_check)
}

/// The Markdown summary at the largest size at or below 1 000 xids.
pub fn summary(settings: &Settings, rows: &[Row]) -> String {
    let n = settings.sizes.iter().copied().filter(|&n| n <= 1_000).max().unwrap_or(settings.sizes[0]);
    let mut s = format!(
        "ns per check with {n} xids, and the CSN variants' cost relative to the dense xip search \
         ({} checks per measurement, spread over passes of the probe set; median of {}).\n\n",
        settings.checks, settings.repeats
    );
    s.push_str(
        "| scenario | dense xip search | csn, no memo | csn + memo | no memo ÷ dense | memo ÷ dense |\n",
    );
    s.push_str("|---|---:|---:|---:|---:|---:|\n");
    for scenario in SCENARIOS {
        let (Some(d), Some(c), Some(m)) = (
            find(rows, scenario, VARIANTS[0], n),
            find(rows, scenario, VARIANTS[1], n),
            find(rows, scenario, VARIANTS[2], n),
        ) else {
            continue;
        };
        s.push_str(&format!("| {scenario} | {d:.1} | {c:.1} | {m:.1} | {:.2} | {:.2} |\n", c / d, m / d));
    }
    s
}

fn figure(settings: &Settings, rows: &[Row]) -> Figure {
    let panels = SCENARIOS
        .iter()
        .map(|&scenario| Panel {
            title: scenario.to_string(),
            series: VARIANTS
                .iter()
                .map(|&variant| Series {
                    label: variant.to_string(),
                    points: settings
                        .sizes
                        .iter()
                        .filter_map(|&n| find(rows, scenario, variant, n).map(|ns| (n as f64, ns)))
                        .collect(),
                })
                .collect(),
        })
        .collect();
    Figure {
        title: "Visibility check cost: dense xip search vs CSN log".into(),
        x_label: "xids in the scenario".into(),
        y_label: "ns per check".into(),
        x_log: true,
        y_log: true,
        panels,
    }
}

/// Runs the experiment and writes CSV, SVG and Markdown.
pub fn run(settings: &Settings) -> std::io::Result<Written> {
    let rows = measure(settings);
    let mut table = Table::new(&["scenario", "variant", "xids", "ns_per_check", "log_loads_per_check"]);
    for r in &rows {
        table.push(vec![
            Value::from(r.scenario),
            Value::from(r.variant),
            Value::from(r.n),
            Value::from(r.ns_per_check),
            Value::from(r.log_loads_per_check),
        ]);
    }
    let settings_list = vec![
        ("xids per scenario".to_string(), list(&settings.sizes)),
        ("checks per measurement".to_string(), settings.checks.to_string()),
        ("repetitions (median reported)".to_string(), settings.repeats.to_string()),
        ("what is timed".to_string(), "Engine::xid_in_snapshot (PostgreSQL's XidInMVCCSnapshot)".to_string()),
    ];
    ResultSet::new(&settings.out_dir, &settings.name).write(
        &table,
        &figure(settings, &rows),
        &summary(settings, &rows),
        &settings_list,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenarios_probe_what_they_claim() {
        for scenario in SCENARIOS {
            for mode in [SnapshotMode::Dense, SnapshotMode::Csn] {
                let s = setup(mode, scenario, 70);
                let expect_in = scenario != "committed-before";
                for &x in &s.probes {
                    assert_eq!(
                        s.engine.xid_in_snapshot(x, &s.snapshot),
                        expect_in,
                        "{scenario} {mode} {x:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_memo_saves_log_loads() {
        let settings = Settings {
            sizes: vec![50],
            checks: 500,
            repeats: 1,
            out_dir: std::env::temp_dir(),
            name: "unused".into(),
        };
        let rows = measure(&settings);
        let loads = |v: &str| {
            rows.iter().find(|r| r.scenario == "open-xids" && r.variant == v).unwrap().log_loads_per_check
        };
        assert_eq!(loads(VARIANTS[0]), 0.0);
        assert!(loads(VARIANTS[1]) >= 1.0);
        assert!(loads(VARIANTS[2]) <= 0.11, "memo: {}", loads(VARIANTS[2]));
    }
}
