//! `lab standby`: hot standby snapshots, PostgreSQL's KnownAssignedXids
//! against CSN snapshots (the 2024 "CSN snapshots in hot standby" patch
//! set), measured three ways:
//!
//! 1. snapshot cost on a standby against the primary transactions running
//!    (with and without an overflowed subtransaction tree), 1 and 2
//!    readers ([`micro::snapshot_ns`]);
//! 2. visibility-check cost in the patch thread's cases
//!    ([`micro::visibility_ns`]);
//! 3. end to end: pgbench select-only on a real standby while the real
//!    primary runs tpcb-like with extra transactions held open, and replay
//!    throughput and lag ([`end_to_end`]; skipped with a reason when pgbench
//!    is absent).

pub mod end_to_end;
pub mod micro;

use std::path::PathBuf;
use std::time::Duration;

use snapscale_txn::SnapshotMode;

use crate::pgbench::Pgbench;
use crate::report::plot::{Figure, Panel, Series};
use crate::report::progress::Progress;
use crate::report::stats::{list, median};
use crate::report::table::{Table, Value};
use crate::report::{ResultSet, Written};
use end_to_end::{Backlog, Plan, Point};

/// The experiment's settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Running primary transactions for the snapshot part.
    pub running: Vec<usize>,
    /// Reader threads.
    pub readers: Vec<usize>,
    /// How long each snapshot measurement runs.
    pub duration: Duration,
    /// Rows (probes) per visibility case.
    pub rows: usize,
    /// Passes over the rows per visibility measurement.
    pub passes: usize,
    /// Repetitions; the median is reported.
    pub repeats: usize,
    /// The end-to-end plan.
    pub plan: Plan,
    /// Where PostgreSQL's programs are (pgbench).
    pub pg_bin: PathBuf,
    /// Output directory.
    pub out_dir: PathBuf,
    /// Base name of the output files.
    pub name: String,
}

impl Settings {
    /// The full experiment (about ten minutes on two cores).
    pub fn full(out_dir: PathBuf) -> Self {
        Self {
            running: vec![0, 10, 100, 1_000, 10_000],
            readers: vec![1, 2],
            duration: Duration::from_millis(400),
            rows: 100_000,
            passes: 4,
            repeats: 5,
            plan: Plan { scale: 1, seconds: 10, held: vec![0, 100, 1_000], clients: vec![1, 2] },
            pg_bin: PathBuf::from("/usr/lib/postgresql/15/bin"),
            out_dir,
            name: "standby".into(),
        }
    }

    /// A short variant (about two minutes).
    pub fn quick(out_dir: PathBuf) -> Self {
        Self {
            running: vec![0, 100, 10_000],
            duration: Duration::from_millis(150),
            rows: 20_000,
            repeats: 1,
            plan: Plan { scale: 1, seconds: 4, held: vec![0, 1_000], clients: vec![1, 2] },
            name: "standby-quick".into(),
            ..Self::full(out_dir)
        }
    }
}

const MODES: [(&str, SnapshotMode); 2] =
    [("known-assigned", SnapshotMode::KnownAssigned), ("csn", SnapshotMode::Csn)];

/// One row of the results: which part, what, and its measurement.
struct Row {
    part: &'static str,
    variant: String,
    case: String,
    n: usize,
    value: f64,
    unit: &'static str,
}

fn snapshot_rows(settings: &Settings, progress: &Progress) -> Vec<Row> {
    let mut rows = Vec::new();
    for shape in micro::SHAPES {
        for &readers in &settings.readers {
            for &n in &settings.running {
                for (name, mode) in MODES {
                    let ns = median(
                        (0..settings.repeats)
                            .map(|_| micro::snapshot_ns(mode, shape, n, readers, settings.duration))
                            .collect(),
                    );
                    rows.push(Row {
                        part: "snapshot",
                        variant: name.into(),
                        case: format!("{shape}, {readers} reader{}", if readers == 1 { "" } else { "s" }),
                        n,
                        value: ns,
                        unit: "ns per snapshot",
                    });
                }
                progress.inc(&format!("snapshots: {shape}, {readers} readers, {n} running"));
            }
        }
    }
    rows
}

fn visibility_rows(settings: &Settings, progress: &Progress) -> Vec<Row> {
    let mut rows = Vec::new();
    for case in micro::CASES {
        for check in micro::CHECKS {
            let ns = micro::visibility_ns(check, case, settings.rows, settings.passes, settings.repeats);
            rows.push(Row {
                part: "visibility",
                variant: check.into(),
                case: case.into(),
                n: settings.rows,
                value: ns,
                unit: "ns per check",
            });
        }
        progress.inc(&format!("visibility: {case}"));
    }
    rows
}

/// The end-to-end part, or why it did not run.
fn end_to_end_points(settings: &Settings) -> Result<(Vec<Point>, Vec<Backlog>), String> {
    let pgbench = Pgbench::find(&settings.pg_bin)?;
    let work = std::env::temp_dir().join(format!("snapscale-lab-standby-{}", std::process::id()));
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let (mut points, mut backlogs) = (Vec::new(), Vec::new());
    for (mode, _) in MODES {
        let (p, b) = end_to_end::measure_mode(&pgbench, mode, &settings.plan, &work)?;
        points.extend(p);
        backlogs.push(b);
    }
    let _ = std::fs::remove_dir_all(&work);
    Ok((points, backlogs))
}

fn find(rows: &[Row], part: &str, variant: &str, case: &str, n: usize) -> Option<f64> {
    rows.iter()
        .find(|r| r.part == part && r.variant == variant && r.case == case && r.n == n)
        .map(|r| r.value)
}

type EndToEnd = Result<(Vec<Point>, Vec<Backlog>), String>;

fn summary(settings: &Settings, rows: &[Row], e2e: &EndToEnd) -> String {
    let mut s = String::from(
        "### Snapshot cost on the standby\n\nns per snapshot (begin, statement snapshot, commit) against the \
         primary transactions known to be running; `known-assigned` copies them, `csn` does not.\n\n",
    );
    let cases: Vec<String> = rows.iter().filter(|r| r.part == "snapshot").map(|r| r.case.clone()).collect();
    let mut seen = Vec::new();
    s.push_str(
        "| running | case | known-assigned | csn | known-assigned ÷ csn |\n|---:|---|---:|---:|---:|\n",
    );
    for case in cases {
        if seen.contains(&case) {
            continue;
        }
        for &n in &settings.running {
            if let (Some(ka), Some(csn)) =
                (find(rows, "snapshot", "known-assigned", &case, n), find(rows, "snapshot", "csn", &case, n))
            {
                s.push_str(&format!("| {n} | {case} | {ka:.0} | {csn:.0} | {:.2} |\n", ka / csn));
            }
        }
        seen.push(case);
    }
    s.push_str(&format!(
        "\n### Visibility checks on the standby\n\nns per `xid_in_snapshot` over {} rows, {} passes \
         (the memo pays from the second look at an xid); one old transaction still runs, so every probe \
         lies between xmin and xmax.\n\n| case | known-assigned | csn, no memo | csn + memo |\n|---|---:|---:|---:|\n",
        settings.rows, settings.passes
    ));
    for case in micro::CASES {
        let v: Vec<String> = micro::CHECKS
            .iter()
            .map(|c| {
                find(rows, "visibility", c, case, settings.rows).map_or("–".into(), |x| format!("{x:.1}"))
            })
            .collect();
        s.push_str(&format!("| {case} | {} |\n", v.join(" | ")));
    }
    s.push_str("\n### End to end\n\n");
    match e2e {
        Err(why) => s.push_str(&format!("Not run: {why}\n")),
        Ok((points, backlogs)) => {
            s.push_str(&format!(
                "pgbench select-only on the standby (`-M prepared`, {} s) while the primary runs tpcb-like \
                 (1 client) with `held` extra transactions open; scale {}.\n\n| standby mode | held | clients \
                 | standby tps | primary tps | replay MB/s | replayed tx/s | max lag (kB) | catch-up (ms) |\n\
                 |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
                settings.plan.seconds, settings.plan.scale
            ));
            for p in points {
                s.push_str(&format!(
                    "| {} | {} | {} | {:.0} | {:.0} | {:.2} | {:.0} | {:.0} | {:.0} |\n",
                    p.mode,
                    p.held,
                    p.clients,
                    p.standby_tps,
                    p.primary_tps,
                    p.replay_mb_s,
                    p.replay_tx_s,
                    p.max_lag_bytes as f64 / 1e3,
                    p.catch_up_ms
                ));
            }
            s.push_str(
                "\nReplay of a backlog: the standby stopped (SIGSTOP) while the primary ran tpcb-like with 2 \
                 clients, then resumed and timed until it had replayed it all.\n\n| standby mode | WAL (MB) | \
                 transactions | replay (s) | MB/s | tx/s |\n|---|---:|---:|---:|---:|---:|\n",
            );
            for b in backlogs {
                s.push_str(&format!(
                    "| {} | {:.1} | {} | {:.2} | {:.1} | {:.0} |\n",
                    b.mode,
                    b.bytes as f64 / 1e6,
                    b.transactions,
                    b.secs,
                    b.bytes as f64 / 1e6 / b.secs,
                    b.transactions as f64 / b.secs
                ));
            }
        }
    }
    s
}

fn figure(settings: &Settings, rows: &[Row]) -> Figure {
    let panels = micro::SHAPES
        .iter()
        .map(|&shape| Panel {
            title: shape.to_string(),
            series: settings
                .readers
                .iter()
                .flat_map(|&readers| MODES.iter().map(move |&(mode, _)| (readers, mode)))
                .map(|(readers, mode)| {
                    let case = format!("{shape}, {readers} reader{}", if readers == 1 { "" } else { "s" });
                    Series {
                        label: format!("{mode}, {readers} reader{}", if readers == 1 { "" } else { "s" }),
                        points: settings
                            .running
                            .iter()
                            .filter_map(|&n| {
                                find(rows, "snapshot", mode, &case, n).map(|v| (n.max(1) as f64, v))
                            })
                            .collect(),
                    }
                })
                .collect(),
        })
        .collect();
    Figure {
        title: "Standby snapshot cost: KnownAssignedXids vs CSN".into(),
        x_label: "primary transactions running (0 drawn at 1)".into(),
        y_label: "ns per snapshot".into(),
        x_log: true,
        y_log: true,
        panels,
    }
}

/// Runs the experiment and writes CSV, SVG and Markdown.
pub fn run(settings: &Settings) -> std::io::Result<Written> {
    let steps = micro::SHAPES.len() * settings.readers.len() * settings.running.len() + micro::CASES.len();
    let progress = Progress::new(steps as u64, "lab standby");
    let mut rows = snapshot_rows(settings, &progress);
    rows.extend(visibility_rows(settings, &progress));
    progress.finish();
    let e2e = end_to_end_points(settings);
    if let Err(why) = &e2e {
        eprintln!("lab standby: the end-to-end part did not run: {why}");
    }
    let mut table = Table::new(&["part", "variant", "case", "n", "value", "unit"]);
    for r in &rows {
        table.push(vec![
            Value::from(r.part),
            Value::from(r.variant.clone()),
            Value::from(r.case.clone()),
            Value::from(r.n),
            Value::from(r.value),
            Value::from(r.unit),
        ]);
    }
    let (points, backlogs) = match &e2e {
        Ok((p, b)) => (p.as_slice(), b.as_slice()),
        Err(_) => (&[][..], &[][..]),
    };
    for b in backlogs {
        for (value, unit) in [
            (b.bytes as f64 / 1e6 / b.secs, "backlog replay MB/s"),
            (b.transactions as f64 / b.secs, "backlog replay tx/s"),
        ] {
            table.push(vec![
                Value::from("backlog"),
                Value::from(b.mode),
                Value::from("tpcb-like, 2 clients"),
                Value::from(b.transactions),
                Value::from(value),
                Value::from(unit),
            ]);
        }
    }
    for p in points {
        let case = format!("{} held, {} clients", p.held, p.clients);
        for (value, unit) in [
            (p.standby_tps, "standby tps"),
            (p.primary_tps, "primary tps"),
            (p.replay_mb_s, "replay MB/s"),
            (p.replay_tx_s, "replayed tx/s"),
            (p.max_lag_bytes as f64, "max lag bytes"),
            (p.catch_up_ms, "catch-up ms"),
        ] {
            table.push(vec![
                Value::from("end-to-end"),
                Value::from(p.mode),
                Value::from(case.clone()),
                Value::from(p.held),
                Value::from(value),
                Value::from(unit),
            ]);
        }
    }
    let settings_list = vec![
        ("running primary transactions".to_string(), list(&settings.running)),
        ("readers".to_string(), list(&settings.readers)),
        ("per snapshot measurement".to_string(), format!("{:?}", settings.duration)),
        ("visibility rows × passes".to_string(), format!("{} × {}", settings.rows, settings.passes)),
        ("repetitions (median reported)".to_string(), settings.repeats.to_string()),
        (
            "end to end".to_string(),
            format!(
                "scale {}, {} s per run, held {}, standby clients {}, fsync off on both",
                settings.plan.scale,
                settings.plan.seconds,
                list(&settings.plan.held),
                list(&settings.plan.clients)
            ),
        ),
    ];
    ResultSet::new(&settings.out_dir, &settings.name).write(
        &table,
        &figure(settings, &rows),
        &summary(settings, &rows, &e2e),
        &settings_list,
    )
}
