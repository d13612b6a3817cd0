//! `lab sysbench`: snapscale against PostgreSQL 15 under sysbench 1.0's
//! OLTP scripts, in one run.
//!
//! sysbench's own `prepare` creates and loads the tables on each server
//! (CREATE TABLE with a SERIAL key, multi-row INSERTs, CREATE INDEX), and
//! each script runs through its pgsql driver with prepared statements
//! (`--db-ps-mode=auto`, sysbench's default) at each thread count. Both
//! servers are children of this process, started as `lab pgbench` starts
//! them (`crate::pgbench::servers`): snapscale with fsync and
//! synchronous_commit off, PostgreSQL 15 from a fresh initdb with fsync,
//! synchronous_commit and full_page_writes off and shared_buffers holding
//! the data set.
//!
//! Runs are interleaved as in `lab pgbench`: each pair runs every cell on
//! both servers back to back, a cell's ratio is taken within a pair, and
//! the report gives the median over pairs and the spread. oltp_insert adds
//! rows and oltp_delete removes them, so after a run of either the server's
//! tables are dropped and loaded again before its next run: every run
//! starts from the same rows on either server.

mod measure;
mod report;
mod runner;

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use crate::pgbench::report::{flags, pairs};
use crate::pgbench::servers::Kind;
use crate::pgbench::PG15_BIN;
use crate::report::stats::list;
use crate::report::table::{Table, Value};
use crate::report::{ResultSet, Written};
use measure::measure;
use report::{bars, cells, summary};
pub use runner::{Outcome, Sysbench};

/// sysbench 1.0's OLTP scripts, in report order.
pub const TESTS: [&str; 10] = [
    "oltp_point_select",
    "oltp_read_only",
    "oltp_read_write",
    "oltp_write_only",
    "oltp_update_index",
    "oltp_update_non_index",
    "oltp_insert",
    "oltp_delete",
    "select_random_points",
    "select_random_ranges",
];

/// The scripts that change which rows exist: the tables are loaded again
/// before the server's next run.
pub const CHANGE_ROWS: [&str; 2] = ["oltp_insert", "oltp_delete"];

/// The experiment's settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `--time`: seconds per run.
    pub seconds: u32,
    /// Pairs; every pair runs every cell on both servers.
    pub pairs: usize,
    /// sysbench scripts, in report order.
    pub tests: Vec<String>,
    /// `--threads` values.
    pub threads: Vec<usize>,
    /// `--tables` and `--table-size`.
    pub tables: usize,
    pub table_size: u64,
    /// PostgreSQL's bin directory (initdb, postgres, pg_ctl, psql).
    pub pg_bin: PathBuf,
    /// Output directory.
    pub out_dir: PathBuf,
    /// Base name of the output files.
    pub name: String,
    /// The command line that started the experiment, for the report.
    pub command: String,
}

impl Settings {
    /// 10-second runs, 3 pairs, 2 and 32 threads, 1 table of 25 000 rows
    /// (sysbench's default 10 000 rows per table, scaled up a little so
    /// that 32 threads do not all queue on the same few rows): about 25
    /// minutes on two cores.
    pub fn full(out_dir: PathBuf) -> Self {
        Self {
            seconds: 10,
            pairs: 3,
            tests: TESTS.iter().map(|t| t.to_string()).collect(),
            threads: vec![2, 32],
            tables: 1,
            table_size: 25_000,
            pg_bin: PG15_BIN.into(),
            out_dir,
            name: "sysbench".into(),
            command: String::new(),
        }
    }

    /// 3-second runs, one pair, 2 threads, 10 000 rows.
    pub fn quick(out_dir: PathBuf) -> Self {
        Self {
            seconds: 3,
            pairs: 1,
            threads: vec![2],
            table_size: 10_000,
            name: "sysbench-quick".into(),
            ..Self::full(out_dir)
        }
    }

    /// Connections each server allows: sysbench opens one per thread, and
    /// the lab one more to vacuum.
    fn max_connections(&self) -> usize {
        100.max(self.threads.iter().max().copied().unwrap_or(0) + 10)
    }

    /// snapscale's `--set` flags: named, so that the run does not depend on
    /// the defaults of the day.
    fn snapscale_settings(&self) -> Vec<(&'static str, String)> {
        vec![("fsync", "off".into()), ("synchronous_commit", "off".into())]
    }

    /// PostgreSQL's shared_buffers in MB: room for the data set twice
    /// over (a sysbench row with its index entries takes about 300 bytes),
    /// never below PostgreSQL's default 128 MB.
    pub fn shared_buffers_mb(&self) -> u64 {
        let bytes = (self.tables as u64).saturating_mul(self.table_size).saturating_mul(600);
        (bytes >> 20).max(128)
    }

    /// PostgreSQL's `-c` settings.
    fn postgres_settings(&self) -> Vec<(&'static str, String)> {
        let mut settings: Vec<(&'static str, String)> = ["fsync", "synchronous_commit", "full_page_writes"]
            .into_iter()
            .map(|k| (k, "off".to_owned()))
            .collect();
        settings.push(("shared_buffers", format!("{}MB", self.shared_buffers_mb())));
        settings.push(("max_connections", self.max_connections().to_string()));
        settings
    }
}

/// Runs the experiment and writes CSV, SVG and Markdown.
pub fn run(settings: &Settings) -> io::Result<Written> {
    let m = measure(settings)?;
    let cells = cells(settings, &m.runs);
    let mut table = Table::new(&[
        "pair",
        "test",
        "threads",
        "server",
        "tps",
        "qps",
        "latency_avg_ms",
        "latency_p95_ms",
        "transactions",
        "ignored_errors",
        "error",
    ]);
    for r in &m.runs {
        let (tps, qps, avg, p95, transactions, ignored, error) = match &r.result {
            Ok(o) => (
                Value::from(o.tps),
                Value::from(o.qps),
                Value::from(o.latency_avg_ms),
                Value::from(o.latency_p95_ms),
                Value::from(o.transactions),
                Value::from(o.ignored_errors),
                o.problem.as_ref().map_or("", |_| "yes").into(),
            ),
            Err(_) => {
                let na = || Value::from("n/a");
                (na(), na(), na(), na(), na(), na(), "yes".into())
            }
        };
        table.push(vec![
            Value::from(r.pair),
            Value::from(r.test.as_str()),
            Value::from(r.threads),
            Value::from(r.server.label()),
            tps,
            qps,
            avg,
            p95,
            transactions,
            ignored,
            error,
        ]);
    }
    let shown = |kind: Kind| -> String {
        m.shown.iter().find(|(k, _)| *k == kind).map_or("not checked".into(), |(_, s)| s.clone())
    };
    let loads = |kind: Kind| -> String {
        let Some((_, loads)) = m.loads.iter().find(|(k, _)| *k == kind) else { return "not run".into() };
        let ok: Vec<f64> = loads.iter().filter_map(|l| l.as_ref().ok()).map(Duration::as_secs_f64).collect();
        let failed = loads.len() - ok.len();
        let mut text = format!(
            "{} load{}, `prepare` took {}",
            loads.len(),
            if loads.len() == 1 { "" } else { "s" },
            ok.iter().map(|s| format!("{s:.1} s")).collect::<Vec<_>>().join(", ")
        );
        if failed > 0 {
            text.push_str(&format!("; {failed} FAILED"));
        }
        text
    };
    let settings_list = vec![
        ("command".to_string(), format!("`{}`", settings.command)),
        ("sysbench".to_string(), m.sysbench.clone()),
        (
            "runs".to_string(),
            format!(
                "sysbench TEST {} --tables={} --table-size={} {} run, against 127.0.0.1 as user postgres, \
                 database postgres; TEST in {{{}}}, N in {{{}}}",
                runner::connection_args(0)
                    .iter()
                    .filter(|a| !a.starts_with("--pgsql-port"))
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" "),
                settings.tables,
                settings.table_size,
                Sysbench::run_args(0, settings.seconds).join(" ").replace("--threads=0", "--threads=N"),
                settings.tests.join(", "),
                list(&settings.threads)
            ),
        ),
        (
            "tables".to_string(),
            format!(
                "loaded by `sysbench oltp_read_write prepare` on each server (CREATE TABLE with a SERIAL \
                 key, multi-row INSERTs, CREATE INDEX on k), then VACUUM ANALYZE; dropped and loaded again \
                 before a server's next run after each run of {} (they add or remove rows), untimed; \
                 snapscale: {}; PostgreSQL: {}",
                CHANGE_ROWS.join(" or "),
                loads(Kind::Snapscale),
                loads(Kind::Postgres)
            ),
        ),
        (
            "pairs".to_string(),
            format!(
                "{}; each pair runs every cell on both servers back to back, snapscale first in odd pairs \
                 and PostgreSQL first in even ones; a cell's ratio is taken within a pair, and the median \
                 over pairs is reported with every pair's ratio",
                settings.pairs
            ),
        ),
        (
            "snapscale".to_string(),
            format!(
                "snapscale serve (this binary), default snapshot_mode (csn), max_connections {}, {}; SHOW \
                 gives {}",
                settings.max_connections(),
                flags("--set", &pairs(&settings.snapscale_settings())),
                shown(Kind::Snapscale)
            ),
        ),
        (
            "PostgreSQL".to_string(),
            match &m.postgres_skipped {
                Some(why) => format!("not measured: {why}"),
                None => format!(
                    "{}, fresh initdb (-E UTF8 --locale=C), {} (shared_buffers holds the data set twice \
                     over), other settings default (autovacuum on); SHOW gives {}",
                    m.postgres_version,
                    flags("-c", &pairs(&settings.postgres_settings())),
                    shown(Kind::Postgres)
                ),
            },
        ),
        (
            "load average (1, 5, 15 min)".to_string(),
            format!("{} before the servers started, {} after the last run", m.load.0, m.load.1),
        ),
    ];
    let chart = bars(settings, &cells);
    ResultSet::new(&settings.out_dir, &settings.name).write_drawn(
        &table,
        &|path| chart.write_svg(path),
        &summary(settings, &m, &cells),
        &settings_list,
    )
}
