//! `lab pgbench`: snapscale against PostgreSQL 15 under pgbench, in one run.
//!
//! pgbench's prepared select-only and tpcb-like scripts, at 1 and 2
//! clients, against both servers on the same machine. Both servers are
//! children of this process: snapscale is this binary's `serve`, PostgreSQL
//! 15 is `initdb` and `postgres` from its bin directory, through `runuser -u
//! postgres` when running as root (PostgreSQL refuses to run as root).
//! Neither server waits for a disk: snapscale runs with fsync and
//! synchronous_commit off, PostgreSQL with fsync, synchronous_commit and
//! full_page_writes off, passed explicitly (snapscale's defaults are on).
//!
//! This VM alternates fast and slow phases lasting seconds, so the servers
//! are interleaved: each round runs every cell on both servers back to back,
//! a cell's ratio is taken within a round, and the report gives the median
//! over rounds. Which server goes first alternates from round to round so
//! that neither always runs in the other's wake.
//!
//! `lab pgbench --durable` is the same machinery with both
//! servers waiting for the disk at every commit: snapscale with fsync and
//! synchronous_commit on, PostgreSQL with fsync, synchronous_commit and
//! full_page_writes on, both data directories in the temporary directory,
//! tpcb-like at 1, 2 and 8 clients. It first measures the fsync latency of
//! that filesystem (see [`crate::disk`]), and counts the block device's
//! flushes during every run: flushes per transaction below one at 8 clients
//! is group commit at work.
//!
//! With `--idle N`, every cell also runs snapscale with N idle
//! connections open (`idle_runs.rs`), and the report compares it with
//! snapscale's own idle-free run of the same round.
//!
//! The pgbench runner ([`Pgbench`]) is shared with `lab idle`, which runs
//! the same clients next to 10 000 idle connections and measures memory.

mod idle_runs;
pub(crate) mod measure;
pub(crate) mod report;
pub(crate) mod runner;
pub(crate) mod servers;

use std::io;
use std::path::PathBuf;
use std::thread;

use crate::report::stats::list;
use crate::report::table::{Table, Value};
use crate::report::{ResultSet, Written};
use measure::measure;
use report::{cells, figure, flags, idle_cells, number_or_na, pairs, summary};
pub use runner::{Outcome, Pgbench};
use servers::Kind;

/// pgbench's built-in scripts, in report order.
pub const WORKLOADS: [&str; 2] = ["select-only", "tpcb-like"];

/// The CPU that pinned runs put pgbench and the server on.
pub const PINNED_CPU: usize = 0;

/// Where Debian's PostgreSQL 15 packages put the server binaries.
pub const PG15_BIN: &str = "/usr/lib/postgresql/15/bin";

/// The experiment's settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `-T`: seconds per run.
    pub seconds: u32,
    /// Rounds; every round runs every cell on both servers.
    pub rounds: usize,
    /// pgbench's built-in scripts, in report order.
    pub workloads: Vec<&'static str>,
    /// Client counts (`-c`), with pgbench and the server free to use every
    /// CPU.
    pub clients: Vec<usize>,
    /// Client counts run again with pgbench and the server pinned to one
    /// CPU ([`PINNED_CPU`]): the cost of a statement without the cost of
    /// waking another CPU.
    pub pinned: Vec<usize>,
    /// Most pgbench threads (`-j`): a run uses min(clients, this). More
    /// threads than CPUs would only take turns on them.
    pub max_threads: usize,
    /// `pgbench -i -s`.
    pub scale: u32,
    /// PostgreSQL's bin directory (initdb, postgres, pg_ctl, pgbench).
    pub pg_bin: PathBuf,
    /// Output directory.
    pub out_dir: PathBuf,
    /// Base name of the output files.
    pub name: String,
    /// Both servers make every commit durable before acknowledging it
    /// (fsync and synchronous_commit on); otherwise neither waits for a disk.
    pub durable: bool,
    /// Seconds the fsync probe times each write pattern (durable only).
    pub probe_seconds: u32,
    /// Idle connections (0: none): each cell runs snapscale once more
    /// with this many connections open and silent next to pgbench, and the
    /// report gives that run's throughput against snapscale's own
    /// idle-free run of the same round (seed 001's experiment, on the same
    /// settings as the comparison with PostgreSQL).
    pub idle: usize,
    /// PostgreSQL keeps its default 128 MB shared_buffers, smaller than
    /// the data set from scale 10 on: the variant earlier results used,
    /// named when chosen. Otherwise shared_buffers holds the data set
    /// ([`Settings::shared_buffers_mb`]), as a user would size it.
    pub pg_default_shared_buffers: bool,
}

impl Settings {
    /// 20-second runs, 3 rounds: about 9 minutes.
    pub fn full(out_dir: PathBuf) -> Self {
        Self {
            seconds: 20,
            rounds: 3,
            workloads: WORKLOADS.to_vec(),
            clients: vec![1, 2],
            pinned: vec![1],
            max_threads: thread::available_parallelism().map_or(2, |n| n.get()),
            scale: 1,
            pg_bin: PG15_BIN.into(),
            out_dir,
            name: "pgbench".into(),
            durable: false,
            probe_seconds: 0,
            idle: 0,
            pg_default_shared_buffers: false,
        }
    }

    /// 3-second runs, one round.
    pub fn quick(out_dir: PathBuf) -> Self {
        Self { seconds: 3, rounds: 1, name: "pgbench-quick".into(), ..Self::full(out_dir) }
    }

    /// Durable commits: tpcb-like at 1, 2 and 8 clients, 20-second runs, 3
    /// rounds; about 8 minutes.
    ///
    /// Scale 10, not 1: at scale 1 every tpcb-like transaction updates the
    /// one pgbench_branches row and keeps its row lock until its commit is
    /// durable, so commits would queue behind each other's fsyncs and could
    /// never share one; the 8-client cell would measure that lock, not
    /// group commit. pgbench's documentation asks for a scale at least as
    /// large as the number of clients for the same reason.
    pub fn durable(out_dir: PathBuf) -> Self {
        Self {
            workloads: vec!["tpcb-like"],
            clients: vec![1, 2, 8],
            pinned: Vec::new(),
            scale: 10,
            name: "pgbench-durable".into(),
            durable: true,
            probe_seconds: 5,
            ..Self::full(out_dir)
        }
    }

    /// [`Settings::durable`] with 3-second runs, one round.
    pub fn durable_quick(out_dir: PathBuf) -> Self {
        Self {
            seconds: 3,
            rounds: 1,
            name: "pgbench-durable-quick".into(),
            probe_seconds: 1,
            ..Self::durable(out_dir)
        }
    }

    /// pgbench threads for `clients` clients; pinned runs have one CPU,
    /// so one thread.
    fn threads(&self, clients: usize, pinned: bool) -> usize {
        if pinned {
            1
        } else {
            clients.min(self.max_threads.max(1))
        }
    }

    /// Every (clients, pinned) pair a round runs per workload: the free
    /// runs, then the pinned ones.
    pub(crate) fn cells(&self) -> Vec<(usize, bool)> {
        let free = self.clients.iter().map(|&c| (c, false));
        free.chain(self.pinned.iter().map(|&c| (c, true))).collect()
    }

    /// snapscale's `--set` flags. Both variants name every setting that
    /// matters, so that neither depends on the defaults of the day.
    fn snapscale_settings(&self) -> &'static [(&'static str, &'static str)] {
        if self.durable {
            &[("fsync", "on"), ("synchronous_commit", "on")]
        } else {
            &[("fsync", "off"), ("synchronous_commit", "off")]
        }
    }

    /// PostgreSQL's shared_buffers in MB: room for the data set twice
    /// over (pgbench's tables and indexes take about 15 MB per unit of
    /// scale, and tpcb-like's history and dead versions grow during a
    /// run), never below PostgreSQL's default 128 MB; or `None` for the
    /// default-buffers variant.
    pub fn shared_buffers_mb(&self) -> Option<u32> {
        (!self.pg_default_shared_buffers).then(|| self.scale.saturating_mul(32).max(128))
    }

    /// PostgreSQL's `-c` settings.
    fn postgres_settings(&self) -> Vec<(&'static str, String)> {
        let on = if self.durable { "on" } else { "off" };
        let mut settings: Vec<(&'static str, String)> = ["fsync", "synchronous_commit", "full_page_writes"]
            .into_iter()
            .map(|k| (k, on.to_owned()))
            .collect();
        settings.push(("shared_buffers", format!("{}MB", self.shared_buffers_mb().unwrap_or(128))));
        settings
    }
}

/// Runs the experiment and writes CSV, SVG and Markdown.
pub fn run(settings: &Settings) -> io::Result<Written> {
    let m = measure(settings)?;
    let cells = cells(settings, &m.runs);
    let idle = idle_cells(settings, &m.runs);
    let mut table = Table::new(&[
        "round",
        "workload",
        "clients",
        "threads",
        "pinned",
        "server",
        "idle_connections",
        "tps",
        "latency_ms",
        "transactions",
        "failed",
        "disk_flushes",
        "flushes_per_tx",
        "error",
    ]);
    for r in &m.runs {
        let (tps, latency, processed, failed, error) = match &r.result {
            Ok(o) => (
                Value::from(o.tps),
                Value::from(o.latency_ms),
                Value::from(o.processed),
                Value::from(o.failed),
                o.problem.as_ref().map_or("", |_| "yes").into(),
            ),
            Err(_) => ("n/a".into(), "n/a".into(), "n/a".into(), "n/a".into(), "yes".into()),
        };
        table.push(vec![
            Value::from(r.round),
            Value::from(r.workload),
            Value::from(r.clients),
            Value::from(r.threads),
            Value::from(if r.pinned { "yes" } else { "no" }),
            Value::from(r.server.label()),
            Value::from(r.idle),
            tps,
            latency,
            processed,
            failed,
            r.disk_flushes.map_or(Value::from("n/a"), Value::from),
            number_or_na(r.flushes_per_transaction()),
            error,
        ]);
    }
    let init_line = |kind: Kind| -> String {
        m.inits.iter().find(|(k, _)| *k == kind).map_or("not run".into(), |(_, i)| match i {
            Ok(done) => done.clone(),
            Err(_) => "failed".into(),
        })
    };
    let shown = |kind: Kind| -> String {
        m.shown.iter().find(|(k, _)| *k == kind).map_or("not checked".into(), |(_, s)| s.clone())
    };
    let mut settings_list = vec![
        ("pgbench".to_string(), m.pgbench.version.clone()),
        (
            "runs".to_string(),
            format!(
                "pgbench -M prepared -b {{{}}} -c N -j min(N, {}) -T {}, N in {{{}}}, against 127.0.0.1 as \
                 user postgres, database postgres",
                settings.workloads.join(", "),
                settings.max_threads,
                settings.seconds,
                list(&settings.clients)
            ),
        ),
        (
            "pinned runs".to_string(),
            if settings.pinned.is_empty() {
                "none".to_string()
            } else {
                format!(
                    "N in {{{}}} again with pgbench (`taskset -c {PINNED_CPU}`, -j 1) and every thread of the \
                     server's processes (`taskset -a -p`, PostgreSQL's postmaster and the backends it forks) \
                     confined to CPU {PINNED_CPU} for the run, then released",
                    list(&settings.pinned)
                )
            },
        ),
        (
            "scale".to_string(),
            if settings.durable {
                format!(
                    "pgbench -i -s {}, once per server before the first round; the preset is 10, not 1, because at scale 1 \
                     every tpcb-like transaction updates the one pgbench_branches row and holds its row lock \
                     until its commit is durable, so concurrent commits could never share a sync",
                    settings.scale
                )
            } else {
                format!("pgbench -i -s {}, once per server before the first round", settings.scale)
            },
        ),
        (
            "idle connections".to_string(),
            match settings.idle {
                0 => "none".to_string(),
                n => format!(
                    "{n}, in an extra snapscale run of every cell, right after its idle-free run (before \
                     it in even rounds); opened before the run, checked with SELECT 1 after it, closed; the \
                     other runs have none"
                ),
            },
        ),
        (
            "vacuum".to_string(),
            "pgbench's default before each run (no -n): VACUUM pgbench_branches and pgbench_tellers, \
             TRUNCATE pgbench_history; not timed"
                .to_string(),
        ),
        (
            "rounds".to_string(),
            format!(
                "{}; each round runs every cell on both servers back to back, snapscale first in odd \
                 rounds and PostgreSQL first in even ones; medians over rounds are reported",
                settings.rounds
            ),
        ),
        (
            "snapscale".to_string(),
            format!(
                "snapscale serve (release build of this binary), default snapshot_mode (csn), \
                 max_connections {}, {}; SHOW gives {}",
                servers::max_connections(settings),
                flags("--set", settings.snapscale_settings()),
                shown(Kind::Snapscale)
            ),
        ),
        (
            "PostgreSQL".to_string(),
            match &m.postgres_skipped {
                Some(why) => format!("not measured: {why}"),
                None => format!(
                    "{}, fresh initdb (-E UTF8 --locale=C), {} ({}), other settings default \
                     (wal_sync_method fdatasync, commit_delay 0, autovacuum on); SHOW gives {}",
                    m.postgres_version,
                    flags("-c", &pairs(&settings.postgres_settings())),
                    match settings.shared_buffers_mb() {
                        Some(_) => "shared_buffers sized to hold the data set twice over",
                        None =>
                            "shared_buffers left at PostgreSQL's default, smaller than the data set \
                                 from scale 10 on: the named default-buffers variant",
                    },
                    shown(Kind::Postgres)
                ),
            },
        ),
        ("pgbench -i, snapscale".to_string(), init_line(Kind::Snapscale)),
        ("pgbench -i, PostgreSQL".to_string(), init_line(Kind::Postgres)),
    ];
    if let Some(disk) = &m.disk {
        let dirs: Vec<String> = disk
            .data_dirs
            .iter()
            .map(|(kind, dir, same)| {
                format!("{} {}{}", kind.label(), dir.display(), if *same { "" } else { " (ANOTHER device)" })
            })
            .collect();
        settings_list.push((
            "data directories".to_string(),
            format!(
                "{}; filesystem {}",
                dirs.join(", "),
                disk.filesystem.as_ref().map_or("unknown".into(), |f| f.to_string())
            ),
        ));
        settings_list.push((
            "disk flushes".to_string(),
            match &disk.device {
                Some(name) => format!("flush requests completed by {name}, from /proc/diskstats"),
                None => "not counted (no block device statistics for this filesystem)".into(),
            },
        ));
    }
    settings_list.push((
        "load average (1, 5, 15 min)".to_string(),
        format!("{} before the servers started, {} after the last run", m.load.0, m.load.1),
    ));
    let with_postgres = m.postgres_skipped.is_none();
    ResultSet::new(&settings.out_dir, &settings.name).write(
        &table,
        &figure(settings, &cells, &idle, with_postgres),
        &summary(settings, &m, &cells, &idle),
        &settings_list,
    )
}

#[cfg(test)]
mod tests {
    use super::measure::Run;
    use super::report::ratios_text;
    use super::runner::{parse_after, parse_tps, tail};
    use super::*;

    const SAMPLE: &str = "\
transaction type: <builtin: TPC-B (sort of)>
scaling factor: 1
query mode: prepared
number of clients: 2
number of threads: 2
maximum number of tries: 1
duration: 3 s
number of transactions actually processed: 6666
number of failed transactions: 3 (0.045%)
latency average = 0.900 ms
initial connection time = 0.856 ms
tps = 2222.229630 (without initial connection time)
";

    #[test]
    fn parses_pgbench_output() {
        assert_eq!(parse_tps(SAMPLE), Some(2222.22963));
        assert_eq!(parse_after::<u64>(SAMPLE, "number of transactions actually processed: "), Some(6666));
        assert_eq!(parse_after::<u64>(SAMPLE, "number of failed transactions: "), Some(3));
        assert_eq!(parse_after::<f64>(SAMPLE, "latency average = "), Some(0.9));
        assert_eq!(
            parse_after::<u64>(
                "number of transactions actually processed: 10/20\n",
                "number of transactions actually processed: "
            ),
            Some(10)
        );
        assert_eq!(parse_tps("tps = 12.5 (including connections establishing)\n"), None);
    }

    #[test]
    fn ratios_are_taken_within_a_round() {
        let settings = Settings {
            rounds: 2,
            clients: vec![1],
            pinned: vec![],
            ..Settings::quick(PathBuf::from("unused"))
        };
        let outcome = |tps| Ok(Outcome { tps, latency_ms: 1.0, processed: 1, failed: 0, problem: None });
        let run = |round, server, tps| Run {
            round,
            workload: "select-only",
            clients: 1,
            threads: 1,
            pinned: false,
            server,
            idle: 0,
            result: outcome(tps),
            disk_flushes: Some(50),
        };
        let runs = vec![
            run(1, Kind::Snapscale, 100.0),
            run(1, Kind::Postgres, 200.0),
            run(2, Kind::Postgres, 50.0),
            run(2, Kind::Snapscale, 100.0),
        ];
        let c = &cells(&settings, &runs)[0];
        assert_eq!((c.snapscale_tps, c.postgres_tps), (Some(100.0), Some(125.0)));
        // Rounds give 0.5 and 2.0: the median of the ratios, not the ratio of the medians (0.8).
        assert_eq!(c.ratio, Some(1.25));
        assert_eq!(ratios_text(&c.round_ratios), "0.50, 2.00");
        // 50 flushes over 1 transaction per run.
        assert_eq!(c.snapscale_flushes, Some(50.0));
        // tpcb-like had no runs.
        assert_eq!(cells(&settings, &runs)[1].snapscale_tps, None);
    }

    #[test]
    fn the_durable_variant_sets_what_it_reports() {
        let s = Settings::durable(PathBuf::from("unused"));
        assert_eq!(
            (s.workloads.clone(), s.clients.clone(), s.seconds, s.rounds),
            (vec!["tpcb-like"], vec![1, 2, 8], 20, 3)
        );
        assert!(s.scale >= 8, "8 clients need as many branches to commit concurrently");
        assert_eq!(flags("--set", s.snapscale_settings()), "--set fsync=on --set synchronous_commit=on");
        assert_eq!(
            flags("-c", &pairs(&s.postgres_settings())),
            "-c fsync=on -c synchronous_commit=on -c full_page_writes=on -c shared_buffers=320MB"
        );
        let small = Settings { pg_default_shared_buffers: true, ..s.clone() };
        assert!(flags("-c", &pairs(&small.postgres_settings())).ends_with("-c shared_buffers=128MB"));
        assert_eq!(
            Settings::full(PathBuf::from("unused")).shared_buffers_mb(),
            Some(128),
            "scale 1: the default fits"
        );
        let quick = Settings::durable_quick(PathBuf::from("unused"));
        assert_eq!((quick.seconds, quick.rounds, quick.name.as_str()), (3, 1, "pgbench-durable-quick"));
        assert!(!Settings::full(PathBuf::from("unused")).snapscale_settings().contains(&("fsync", "on")));
        let two = Settings { max_threads: 2, ..s };
        assert_eq!([1, 2, 8].map(|c| two.threads(c, false)), [1, 2, 2]);
        assert_eq!(two.threads(2, true), 1, "one CPU, one pgbench thread");
        assert!(two.cells().iter().all(|(_, pinned)| !pinned), "the durable text reads unpinned cells only");
    }

    #[test]
    fn pinned_runs_are_cells_of_their_own() {
        let settings = Settings {
            rounds: 1,
            clients: vec![1, 2],
            pinned: vec![1],
            workloads: vec!["select-only"],
            ..Settings::quick(PathBuf::from("unused"))
        };
        assert_eq!(settings.cells(), [(1, false), (2, false), (1, true)]);
        let run = |pinned, server, tps| Run {
            round: 1,
            workload: "select-only",
            clients: 1,
            threads: 1,
            pinned,
            server,
            idle: 0,
            result: Ok(Outcome { tps, latency_ms: 1.0, processed: 1, failed: 0, problem: None }),
            disk_flushes: None,
        };
        let runs = vec![
            run(false, Kind::Snapscale, 100.0),
            run(false, Kind::Postgres, 200.0),
            run(true, Kind::Snapscale, 300.0),
            run(true, Kind::Postgres, 100.0),
        ];
        let c = cells(&settings, &runs);
        assert_eq!(
            c.iter().map(|c| (c.clients, c.pinned, c.ratio)).collect::<Vec<_>>(),
            [(1, false, Some(0.5)), (2, false, None), (1, true, Some(3.0))]
        );
    }

    #[test]
    fn idle_runs_are_compared_with_snapscale_in_their_own_round_only() {
        let settings = Settings {
            rounds: 2,
            clients: vec![2],
            pinned: vec![1],
            workloads: vec!["select-only"],
            idle: 1000,
            ..Settings::quick(PathBuf::from("unused"))
        };
        let run = |round, server, idle, pinned, tps| Run {
            round,
            workload: "select-only",
            clients: if pinned { 1 } else { 2 },
            threads: 1,
            pinned,
            server,
            idle,
            result: Ok(Outcome { tps, latency_ms: 1.0, processed: 1, failed: 0, problem: None }),
            disk_flushes: None,
        };
        let runs = vec![
            run(1, Kind::Snapscale, 0, false, 100.0),
            run(1, Kind::Postgres, 0, false, 50.0),
            run(1, Kind::Snapscale, 1000, false, 99.0),
            run(2, Kind::Snapscale, 1000, false, 45.0),
            run(2, Kind::Postgres, 0, false, 25.0),
            run(2, Kind::Snapscale, 0, false, 50.0),
            run(1, Kind::Snapscale, 0, true, 10.0),
            run(1, Kind::Postgres, 0, true, 10.0),
        ];
        // The runs with idle connections stay out of the comparison with PostgreSQL ...
        let c = cells(&settings, &runs);
        assert_eq!((c[0].snapscale_tps, c[0].ratio), (Some(75.0), Some(2.0)));
        // ... and are compared, round by round, with snapscale's idle-free runs (0.99, 0.90).
        let idle = idle_cells(&settings, &runs);
        assert_eq!(idle.len(), 2, "a free cell and a pinned one");
        assert_eq!(idle[1].with_tps, None, "the pinned cell had no run with idle connections");
        assert_eq!((idle[0].with_tps, idle[0].without_tps), (Some(72.0), Some(75.0)));
        assert_eq!(ratios_text(&idle[0].round_ratios), "0.99, 0.90");
        assert!((idle[0].ratio.unwrap() - 0.945).abs() < 1e-9);
        assert!(report::idle_text(&idle).contains("1000 idle connections"));
        assert!(idle_cells(&Settings { idle: 0, ..settings }, &runs).is_empty());
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        assert_eq!(tail("a\nb\nc\n", 2), "b\nc");
        assert_eq!(tail("a", 5), "a");
    }
}
