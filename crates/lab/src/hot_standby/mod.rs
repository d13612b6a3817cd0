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
mod report;

use std::path::PathBuf;
use std::time::Duration;

use snapscale_txn::SnapshotMode;

use crate::pgbench::Pgbench;
use crate::report::progress::Progress;
use crate::report::stats::{list, median};
use crate::report::table::{Table, Value};
use crate::report::{ResultSet, Written};
use end_to_end::Plan;
use report::EndToEnd;

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

pub(crate) const MODES: [(&str, SnapshotMode); 2] =
    [("known-assigned", SnapshotMode::KnownAssigned), ("csn", SnapshotMode::Csn)];

/// One row of the results: which part, what, and its measurement.
pub(crate) struct Row {
    pub(crate) part: &'static str,
    pub(crate) variant: String,
    pub(crate) case: String,
    pub(crate) n: usize,
    pub(crate) value: f64,
    pub(crate) unit: &'static str,
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
fn end_to_end_points(settings: &Settings) -> EndToEnd {
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

pub(crate) fn find(rows: &[Row], part: &str, variant: &str, case: &str, n: usize) -> Option<f64> {
    rows.iter()
        .find(|r| r.part == part && r.variant == variant && r.case == case && r.n == n)
        .map(|r| r.value)
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
            (p.max_lag_ms, "max lag ms"),
            (p.mean_lag_ms, "mean lag ms"),
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
        ("replay lag sampled every".to_string(), format!("{:?}", end_to_end::SAMPLE_EVERY)),
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
    let figures = report::extra_figures(settings, &rows, points);
    for (suffix, figure) in &figures {
        let path = settings.out_dir.join(format!("{}-{suffix}.svg", settings.name));
        std::fs::create_dir_all(&settings.out_dir)?;
        figure.write_svg(&path).map_err(std::io::Error::other)?;
    }
    ResultSet::new(&settings.out_dir, &settings.name).write(
        &table,
        &report::figure(settings, &rows),
        &report::summary(settings, &rows, &e2e),
        &settings_list,
    )
}
