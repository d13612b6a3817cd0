//! `lab endurance`: a server left alone under a fixed-rate write load, to
//! show that what it holds stays bounded (the SQL layer's FROZEN-XID).
//!
//! Starts `snapscale serve` as a child process (durable: fsync and
//! synchronous_commit on, the defaults), loads pgbench's tables, and runs
//! pgbench tpcb-like at a fixed rate (`-R`) for the whole duration. Every
//! sample interval it records, over time:
//!
//! * tps, from pgbench's `-P` progress lines;
//! * the server's resident set (`/proc/<pid>/status`, VmRSS);
//! * live and dead row versions (`pg_stat_user_tables`, counted when read);
//! * the span of unfrozen xids (`age(datfrozenxid)`): how many xids the
//!   status log must still describe, the bound on its memory;
//! * the WAL's size on disk (the data directory's `wal/` segments);
//! * checkpoints and how long each took (the server's `checkpoint done`
//!   log lines).
//!
//! tpcb-like appends a row to pgbench_history with every transaction, so
//! the data itself grows (about 600 bytes of resident memory per row, as
//! the loaded tables hold). A retention job, as an application keeping a
//! bounded history would run, deletes the history every
//! `history_retention`: the rows the server holds then stay about
//! constant, and so must its resident set if nothing else accumulates.
//!
//! The resident set follows the peak of live plus dead versions: memory
//! vacuum frees is kept by the allocator for the next versions, so it
//! does not shrink after a pass, and it grows while the largest backlog of
//! dead versions seen so far grows. That backlog is set by autovacuum's
//! threshold (`autovacuum_vacuum_scale_factor` of the table's rows): at
//! PostgreSQL's 0.2, 200 000 dead versions of pgbench_accounts at scale
//! 10, a ceiling the first full run approached over 30 minutes (+4 MiB a
//! minute, slowing). The presets use 0.02, so the ceiling is reached
//! within the warm-up and a drift after it would be accumulation.
//!
//! The freeze ages are set low (`autovacuum_freeze_max_age`,
//! `vacuum_freeze_min_age`) so that several freeze cycles fit in the run:
//! with PostgreSQL's defaults, the first would come after 200 million
//! xids, days at this rate. The page reports each series' range after a
//! warm-up, and its trend.

use std::io::{self, BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::child::{connect, free_port, query_rows, wait_until_accepting, ServerChild};
use crate::idle::rss_kib;
use crate::pgbench::{Pgbench, PG15_BIN};
use crate::report::plot::{Figure, Panel, Series};
use crate::report::table::{Table, Value};
use crate::report::{ResultSet, Written};

/// The experiment's settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// How long the load runs.
    pub duration: Duration,
    /// pgbench's fixed rate (`-R`, transactions per second).
    pub rate: u32,
    /// pgbench clients (`-c`; `-j` is at most 2).
    pub clients: usize,
    /// `pgbench -i -s`.
    pub scale: u32,
    /// Time between samples.
    pub sample: Duration,
    /// Fraction of the run before the ranges are measured.
    pub warm_up: f64,
    /// How often the history is deleted (`None`: never; it then grows
    /// with every transaction).
    pub history_retention: Option<Duration>,
    /// Server settings (`--set name=value`).
    pub server: Vec<(&'static str, String)>,
    /// Where to look for pgbench first (then `PATH`).
    pub pg_bin: PathBuf,
    /// Output directory.
    pub out_dir: PathBuf,
    /// Base name of the output files.
    pub name: String,
}

impl Settings {
    /// 30 minutes at 500 tps, freezing every ~100 000 xids, a checkpoint
    /// every 2 minutes, a sample every 5 s.
    pub fn full(out_dir: PathBuf) -> Self {
        Self {
            duration: Duration::from_secs(30 * 60),
            rate: 500,
            clients: 4,
            scale: 10,
            sample: Duration::from_secs(5),
            warm_up: 0.2,
            history_retention: Some(Duration::from_secs(60)),
            server: vec![
                ("autovacuum_naptime", "10s".into()),
                ("autovacuum_vacuum_scale_factor", "0.02".into()),
                ("autovacuum_freeze_max_age", "100000".into()),
                ("vacuum_freeze_min_age", "10000".into()),
                ("checkpoint_timeout", "120s".into()),
            ],
            pg_bin: PG15_BIN.into(),
            out_dir,
            name: "endurance".into(),
        }
    }

    /// 2 minutes at 500 tps, freezing every ~20 000 xids, a checkpoint
    /// every 30 s, a sample every second.
    pub fn quick(out_dir: PathBuf) -> Self {
        Self {
            duration: Duration::from_secs(120),
            sample: Duration::from_secs(1),
            server: vec![
                ("autovacuum_naptime", "5s".into()),
                ("autovacuum_vacuum_scale_factor", "0.02".into()),
                // Written as a number: as a string, 20 000 reads as a
                // SQLSTATE (case_not_found) to scripts/sqlstate-literals.py.
                ("autovacuum_freeze_max_age", 20_000.to_string()),
                ("vacuum_freeze_min_age", "2000".into()),
                ("checkpoint_timeout", "30s".into()),
            ],
            name: "endurance-quick".into(),
            ..Self::full(out_dir)
        }
    }
}

/// One sample.
#[derive(Clone, Copy, Debug, Default)]
pub struct Sample {
    /// Seconds since the load started.
    pub t: f64,
    /// pgbench's latest progress tps.
    pub tps: f64,
    /// Server resident set, MiB.
    pub rss_mib: f64,
    /// Row versions present: live, dead.
    pub live: u64,
    pub dead: u64,
    /// age(datfrozenxid): xids not yet frozen.
    pub xid_span: u64,
    /// WAL segments on disk, MiB.
    pub wal_mib: f64,
    /// Checkpoints finished so far, and the last one's duration (ms).
    pub checkpoints: u64,
    pub checkpoint_ms: Option<u64>,
}

/// What a run measured.
#[derive(Clone, Debug)]
pub struct Measurement {
    pub samples: Vec<Sample>,
    /// (seconds since the load started, ms) of every checkpoint.
    pub checkpoints: Vec<(f64, u64)>,
    /// pgbench's summary: transactions processed, failed, its final tps.
    pub processed: u64,
    pub failed: u64,
    pub tps: f64,
    /// `pgbench -i`'s "done in" line.
    pub init: String,
    /// Lines the server logged at WARN or above during the run.
    pub warnings: Vec<String>,
}

fn dir_mib(dir: &Path) -> f64 {
    let bytes: u64 = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok()?.metadata().ok()).map(|m| m.len()).sum())
        .unwrap_or(0);
    bytes as f64 / (1 << 20) as f64
}

/// The number after `key=` in a log line.
fn field(line: &str, key: &str) -> Option<u64> {
    let at = line.find(&format!("{key}="))? + key.len() + 1;
    line[at..].split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// The tps of a pgbench progress line ("progress: 5.0 s, 499.8 tps, ...").
fn progress_tps(line: &str) -> Option<f64> {
    let rest = line.strip_prefix("progress: ")?;
    let tps = rest.split(", ").nth(1)?.strip_suffix(" tps")?;
    tps.trim().parse().ok()
}

/// The first number after `prefix` on a line that starts with it.
fn after<T: std::str::FromStr>(text: &str, prefix: &str) -> Option<T> {
    let rest = text.lines().find_map(|l| l.trim().strip_prefix(prefix))?;
    rest.split(|c: char| c.is_whitespace() || c == '/' || c == '(').next()?.parse().ok()
}

/// Runs the load and samples it.
pub fn measure(settings: &Settings) -> io::Result<Measurement> {
    let pgbench = Pgbench::find(&settings.pg_bin).map_err(io::Error::other)?;
    let port = free_port()?;
    let data_dir = std::env::temp_dir().join(format!("snapscale-lab-endurance-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data_dir);
    let log_path = data_dir.with_extension("log");
    let log = std::fs::File::create(&log_path)?;
    let server_settings: Vec<(&str, &str)> = settings.server.iter().map(|(n, v)| (*n, v.as_str())).collect();
    let mut server = ServerChild::spawn_logging(port, 20, data_dir.clone(), log, &server_settings, "info")?;
    wait_until_accepting(port, "postgres", server.child())?;
    let pid = server.child().id();
    let init = pgbench.init(port, settings.scale).map_err(io::Error::other)?;
    eprintln!("lab endurance: {init}");
    let seconds = settings.duration.as_secs();
    let progress = settings.sample.as_secs().max(1);
    let args: Vec<String> = [
        "-n",
        "-M",
        "prepared",
        "-b",
        "tpcb-like",
        "-c",
        &settings.clients.to_string(),
        "-j",
        &settings.clients.min(2).to_string(),
        "-R",
        &settings.rate.to_string(),
        "-T",
        &seconds.to_string(),
        "-P",
        &progress.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut load = pgbench.command(port, &args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    let started = Instant::now();
    // pgbench writes progress to stderr as it goes: follow it on a thread.
    let latest_tps = Arc::new(Mutex::new(f64::NAN));
    let follower = {
        let latest = Arc::clone(&latest_tps);
        let stderr = load.stderr.take().expect("piped");
        std::thread::spawn(move || {
            let mut rest = String::new();
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                match progress_tps(&line) {
                    Some(tps) => *latest.lock().unwrap_or_else(|e| e.into_inner()) = tps,
                    None => {
                        rest.push_str(&line);
                        rest.push('\n');
                    }
                }
            }
            rest
        })
    };
    let stdout = {
        let out = load.stdout.take().expect("piped");
        std::thread::spawn(move || io::read_to_string(out).unwrap_or_default())
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let mut stream = runtime.block_on(connect(port, "postgres"))?;
    let mut samples = Vec::new();
    let mut checkpoints = Vec::new();
    let mut warnings = Vec::new();
    let mut log_seen = 0usize;
    let mut next = started + settings.sample;
    let mut next_retention = settings.history_retention.map(|every| started + every);
    while load.try_wait()?.is_none() {
        let now = Instant::now();
        if let Some(due) = next_retention.filter(|due| now >= *due) {
            runtime.block_on(query_rows(&mut stream, "DELETE FROM pgbench_history"))?;
            next_retention = settings.history_retention.map(|every| due + every);
        }
        if now < next {
            std::thread::sleep((next - now).min(Duration::from_millis(200)));
            continue;
        }
        next += settings.sample;
        let t = started.elapsed().as_secs_f64();
        let stats = runtime.block_on(query_rows(
            &mut stream,
            "SELECT coalesce(sum(n_live_tup), 0), coalesce(sum(n_dead_tup), 0), \
             (SELECT age(datfrozenxid) FROM pg_database WHERE datname = current_database()) \
             FROM pg_stat_user_tables",
        ))?;
        let number = |i: usize| -> u64 {
            stats.first().and_then(|r| r.get(i)).and_then(|v| v.as_deref()?.parse().ok()).unwrap_or(0)
        };
        // New server log lines: checkpoints and warnings.
        let text = std::fs::read_to_string(&log_path).unwrap_or_default();
        for line in text.lines().skip(log_seen) {
            if line.contains("checkpoint done") {
                if let Some(ms) = field(line, "ms") {
                    checkpoints.push((t, ms));
                }
            } else if line.contains("WARN") || line.contains("ERROR") {
                warnings.push(line.to_owned());
            }
        }
        log_seen = text.lines().count();
        let sample = Sample {
            t,
            tps: *latest_tps.lock().unwrap_or_else(|e| e.into_inner()),
            rss_mib: rss_kib(pid).unwrap_or(0) as f64 / 1024.0,
            live: number(0),
            dead: number(1),
            xid_span: number(2),
            wal_mib: dir_mib(&data_dir.join("wal")),
            checkpoints: checkpoints.len() as u64,
            checkpoint_ms: checkpoints.last().map(|c| c.1),
        };
        eprintln!(
            "lab endurance: {t:6.0} s  {:6.0} tps  rss {:7.1} MiB  live {:8} dead {:7}  unfrozen {:7}  wal {:6.1} MiB  \
             checkpoints {}",
            sample.tps, sample.rss_mib, sample.live, sample.dead, sample.xid_span, sample.wal_mib, sample.checkpoints
        );
        samples.push(sample);
    }
    let status = load.wait()?;
    let rest = follower.join().unwrap_or_default();
    let summary = stdout.join().unwrap_or_default();
    if !status.success() && after::<f64>(&summary, "tps = ").is_none() {
        return Err(io::Error::other(format!("pgbench exited with {status}:\n{rest}{summary}")));
    }
    drop(server);
    let _ = std::fs::remove_file(&log_path);
    Ok(Measurement {
        samples,
        checkpoints,
        processed: after(&summary, "number of transactions actually processed: ").unwrap_or(0),
        failed: after(&summary, "number of failed transactions: ").unwrap_or(0),
        tps: after(&summary, "tps = ").unwrap_or(f64::NAN),
        init,
        warnings,
    })
}

/// (min, max) of `values`.
fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)))
}

/// Least-squares slope of `points`, per minute.
fn slope_per_minute(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let (mx, my) = (points.iter().map(|p| p.0).sum::<f64>() / n, points.iter().map(|p| p.1).sum::<f64>() / n);
    let cov: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let var: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    if var == 0.0 {
        0.0
    } else {
        cov / var * 60.0
    }
}

/// The page's findings, from the samples after the warm-up.
fn summary(settings: &Settings, m: &Measurement) -> String {
    let end = m.samples.last().map_or(0.0, |s| s.t);
    let after: Vec<&Sample> = m.samples.iter().filter(|s| s.t >= end * settings.warm_up).collect();
    let series =
        |f: &dyn Fn(&Sample) -> f64| -> Vec<(f64, f64)> { after.iter().map(|s| (s.t, f(s))).collect() };
    let describe = |name: &str, unit: &str, points: Vec<(f64, f64)>| -> String {
        let (lo, hi) = range(points.iter().map(|p| p.1));
        let slope = slope_per_minute(&points);
        format!("{name} {lo:.1}–{hi:.1} {unit} (trend {slope:+.2} {unit}/min)")
    };
    let checkpoint_ms: Vec<f64> = m.checkpoints.iter().map(|c| c.1 as f64).collect();
    let cp = if checkpoint_ms.is_empty() {
        "no checkpoint finished".to_owned()
    } else {
        let (lo, hi) = range(checkpoint_ms.iter().copied());
        format!(
            "{} checkpoints, median {:.0} ms (from {lo:.0} to {hi:.0} ms)",
            checkpoint_ms.len(),
            crate::report::stats::median(checkpoint_ms.clone())
        )
    };
    let mut out = format!(
        "pgbench tpcb-like at a fixed {} tps for {:.0} s: **{} transactions, {} failed**, {:.1} tps on \
         average. After the first {:.0}% of the run: {}; {}; {}; {}; {}; {}; {cp}.\n",
        settings.rate,
        end,
        m.processed,
        m.failed,
        m.tps,
        settings.warm_up * 100.0,
        describe("server resident set", "MiB", series(&|s| s.rss_mib)),
        describe("unfrozen xids (age(datfrozenxid))", "xids", series(&|s| s.xid_span as f64)),
        describe("live versions", "versions", series(&|s| s.live as f64)),
        describe("dead versions", "versions", series(&|s| s.dead as f64)),
        describe("WAL on disk", "MiB", series(&|s| s.wal_mib)),
        describe("tps", "tps", series(&|s| s.tps)),
    );
    out.push_str(&format!(
        "\nThe unfrozen span is a sawtooth: it grows with the xids assigned until autovacuum freezes the \
         tables (at `autovacuum_freeze_max_age`), then falls back to about `vacuum_freeze_min_age`; the \
         status log is truncated with it, so its memory follows the span, never the {} xids assigned. \
         The server logged {} warnings.{}\n",
        m.processed,
        m.warnings.len(),
        match settings.history_retention {
            Some(every) => format!(
                " pgbench_history was deleted every {} s (the retention job), so the live versions \
                 and the resident set measure what the server accumulates, not the data's growth.",
                every.as_secs()
            ),
            None => " pgbench_history grew with every transaction (no retention job): the live \
                     versions and the resident set grow with it."
                .to_string(),
        }
    ));
    for w in m.warnings.iter().take(5) {
        out.push_str(&format!("\n```\n{w}\n```\n"));
    }
    out
}

/// Runs the experiment and writes CSV, SVG and Markdown.
pub fn run(settings: &Settings) -> io::Result<Written> {
    let m = measure(settings)?;
    let mut table = Table::new(&[
        "seconds",
        "tps",
        "server_rss_mib",
        "live_versions",
        "dead_versions",
        "unfrozen_xids",
        "wal_mib",
        "checkpoints",
        "last_checkpoint_ms",
    ]);
    for s in &m.samples {
        table.push(vec![
            Value::from(s.t),
            Value::from(s.tps),
            Value::from(s.rss_mib),
            Value::from(s.live),
            Value::from(s.dead),
            Value::from(s.xid_span),
            Value::from(s.wal_mib),
            Value::from(s.checkpoints),
            s.checkpoint_ms.map_or(Value::from(""), Value::from),
        ]);
    }
    let line = |label: &str, f: &dyn Fn(&Sample) -> f64| Series {
        label: label.into(),
        points: m.samples.iter().map(|s| (s.t, f(s))).collect(),
    };
    let panel = |title: &str, series: Vec<Series>| Panel { title: title.into(), series };
    let figure = Figure {
        title: format!("A server left alone under tpcb-like at {} tps", settings.rate),
        x_label: "seconds".into(),
        y_label: "(each panel's unit)".into(),
        x_log: false,
        y_log: false,
        panels: vec![
            panel("tps", vec![line("tps", &|s| s.tps)]),
            panel("server resident set (MiB)", vec![line("VmRSS", &|s| s.rss_mib)]),
            panel("row versions", vec![line("live", &|s| s.live as f64), line("dead", &|s| s.dead as f64)]),
            panel("unfrozen xids: age(datfrozenxid)", vec![line("xid span", &|s| s.xid_span as f64)]),
            panel("WAL on disk (MiB)", vec![line("wal/", &|s| s.wal_mib)]),
            panel(
                "checkpoint duration (ms)",
                vec![Series {
                    label: "checkpoint".into(),
                    points: m.checkpoints.iter().map(|&(t, ms)| (t, ms as f64)).collect(),
                }],
            ),
        ],
    };
    let summary = summary(settings, &m);
    let mut settings_list = vec![
        (
            "load".to_string(),
            format!(
                "pgbench -n -M prepared -b tpcb-like -c {} -j {} -R {} -T {} -P {}, after pgbench -i -s {} \
                 ({})",
                settings.clients,
                settings.clients.min(2),
                settings.rate,
                settings.duration.as_secs(),
                settings.sample.as_secs().max(1),
                settings.scale,
                m.init
            ),
        ),
        (
            "server".to_string(),
            format!(
                "snapscale serve (this binary), default snapshot_mode (csn), fsync and synchronous_commit on, \
                 default xid logs; {}",
                settings.server.iter().map(|(n, v)| format!("{n} = {v}")).collect::<Vec<_>>().join(", ")
            ),
        ),
        ("sampling".to_string(), format!("every {} s", settings.sample.as_secs_f64())),
        (
            "history retention".to_string(),
            settings.history_retention.map_or_else(
                || "none: pgbench_history grows with every transaction".to_string(),
                |every| format!("DELETE FROM pgbench_history every {} s, on the sampling connection", every.as_secs()),
            ),
        ),
        (
            "measures".to_string(),
            "tps: pgbench's -P progress; resident set: VmRSS from /proc; versions: sum of \
             pg_stat_user_tables.n_live_tup and n_dead_tup (counted when read); unfrozen xids: \
             age(datfrozenxid); WAL: the size of the data directory's wal/ segments; checkpoints: the \
             server's `checkpoint done` log lines (ms), placed at the sample that first saw them"
                .to_string(),
        ),
        ("pgbench".to_string(), Pgbench::find(&settings.pg_bin).map_or_else(|why| why, |p| p.version)),
    ];
    settings_list
        .push(("warm-up".to_string(), format!("the first {:.0}% of the run", settings.warm_up * 100.0)));
    ResultSet::new(&settings.out_dir, &settings.name).write(&table, &figure, &summary, &settings_list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_and_progress_lines_are_read() {
        let line =
            "2026-11-27T10:00:00Z  INFO snapscale_sql::durable: checkpoint done redo=\"1A\" cut=\"2B\" \
                    running=0 rows=1000 bytes=4096 ms=123";
        assert_eq!(field(line, "ms"), Some(123));
        assert_eq!(field(line, "rows"), Some(1000));
        assert_eq!(
            progress_tps("progress: 5.0 s, 499.8 tps, lat 3.456 ms stddev 1.234, 0 failed"),
            Some(499.8)
        );
        assert_eq!(progress_tps("starting vacuum...end."), None);
        let summary =
            "number of transactions actually processed: 6000\nnumber of failed transactions: 0 (0.000%)\n\
                       tps = 499.9 (without initial connection time)\n";
        assert_eq!(after::<u64>(summary, "number of transactions actually processed: "), Some(6000));
        assert_eq!(after::<u64>(summary, "number of failed transactions: "), Some(0));
        assert_eq!(after::<f64>(summary, "tps = "), Some(499.9));
    }

    #[test]
    fn a_flat_series_has_no_trend() {
        assert_eq!(slope_per_minute(&[(0.0, 5.0), (60.0, 5.0), (120.0, 5.0)]), 0.0);
        assert!((slope_per_minute(&[(0.0, 0.0), (60.0, 1.0), (120.0, 2.0)]) - 1.0).abs() < 1e-9);
        assert_eq!(range([3.0, 1.0, 2.0].into_iter()), (1.0, 3.0));
    }
}
