//! One experiment: probe the disk, start both servers, run every cell in every round.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::idle_runs::{check_open_files, Idle};
use super::runner::{Outcome, Pgbench};
use super::servers::{show, start_both, start_postgres, start_snapscale, Kind, Server, Started};
use super::{Settings, PINNED_CPU};
use crate::disk::{self, SyncLatency, SyncPattern};

/// One timed run.
#[derive(Clone, Debug)]
pub(super) struct Run {
    pub(super) round: usize,
    pub(super) workload: &'static str,
    pub(super) clients: usize,
    pub(super) threads: usize,
    /// pgbench and the server confined to one CPU.
    pub(super) pinned: bool,
    pub(super) server: Kind,
    /// Idle connections open during the run (`--idle`; 0 for the runs
    /// compared with PostgreSQL).
    pub(super) idle: usize,
    pub(super) result: Result<Outcome, String>,
    /// Flush requests the data directories' block device completed during
    /// the run (pgbench's untimed vacuum included), where the kernel counts
    /// them.
    pub(super) disk_flushes: Option<u64>,
}

impl Run {
    /// Device flushes per completed transaction.
    pub(super) fn flushes_per_transaction(&self) -> Option<f64> {
        let (o, flushes) = (self.result.as_ref().ok()?, self.disk_flushes?);
        (o.processed > 0).then(|| flushes as f64 / o.processed as f64)
    }
}

/// The filesystem under the data directories and what a sync costs there.
pub(super) struct Disk {
    /// The filesystem of the working directory (snapscale's data directory).
    pub(super) filesystem: Option<disk::Filesystem>,
    /// Per server: its data directory and whether it is on the working
    /// directory's device.
    pub(super) data_dirs: Vec<(Kind, PathBuf, bool)>,
    /// The block device whose flushes are counted, by name.
    pub(super) device: Option<String>,
    /// The probe's write + fdatasync latencies, per pattern.
    pub(super) latencies: Vec<Result<SyncLatency, String>>,
    /// pg_test_fsync's fdatasync line, when it ran.
    pub(super) pg_test_fsync: Option<Result<String, String>>,
}

/// Times fdatasync in `work` in both write patterns, then runs
/// pg_test_fsync there: before any server starts, on a quiet disk.
pub(super) fn probe_disk(settings: &Settings, work: &Path) -> Disk {
    let duration = Duration::from_secs(settings.probe_seconds.into());
    let latencies: Vec<Result<SyncLatency, String>> = [SyncPattern::InPlace, SyncPattern::Append]
        .into_iter()
        .map(|pattern| disk::fdatasync_latency(work, pattern, duration).map_err(|e| e.to_string()))
        .collect();
    for l in &latencies {
        match l {
            Ok(l) => eprintln!("lab pgbench: fsync probe: {l}"),
            Err(e) => eprintln!("lab pgbench: fsync probe failed: {e}"),
        }
    }
    let pg_test_fsync = settings.pg_bin.join("pg_test_fsync").exists().then(|| {
        // Each of its 15 tests runs this long; one second is enough for a check.
        let line = disk::pg_test_fsync(&settings.pg_bin, work, settings.probe_seconds.clamp(1, 2));
        eprintln!("lab pgbench: pg_test_fsync: {}", line.as_deref().unwrap_or_else(|e| e));
        line
    });
    let device = disk::device_number(work).and_then(disk::disk_stats).map(|d| d.name);
    Disk { filesystem: disk::filesystem(work), data_dirs: Vec::new(), device, latencies, pg_test_fsync }
}

/// The servers and everything measured on them.
pub(super) struct Measurement {
    pub(super) pgbench: Pgbench,
    /// Per server: its label and `pgbench -i` line.
    pub(super) inits: Vec<(Kind, Result<String, String>)>,
    /// Why PostgreSQL was not measured, if it was not.
    pub(super) postgres_skipped: Option<String>,
    /// `postgres --version`.
    pub(super) postgres_version: String,
    /// Per server: the settings the variant sets, as `SHOW` reported them.
    pub(super) shown: Vec<(Kind, String)>,
    /// The disk, probed in the durable variant only.
    pub(super) disk: Option<Disk>,
    /// PostgreSQL's checkpoints during the experiment, from its log (it
    /// logs them by default since 15).
    pub(super) postgres_checkpoints: Option<Checkpoints>,
    /// The redo LSN of snapscale's latest checkpoint when the runs ended
    /// (it logs none at the warn level the lab runs it with, and keeps only
    /// the latest checkpoint file).
    pub(super) snapscale_checkpoint: Option<u64>,
    /// /proc/loadavg before the servers started and after the last run:
    /// other work on the machine shows here.
    pub(super) load: (String, String),
    pub(super) runs: Vec<Run>,
}

pub(super) fn measure(settings: &Settings) -> io::Result<Measurement> {
    let pgbench =
        Pgbench::find(&settings.pg_bin).map_err(|why| io::Error::other(format!("{why}: cannot run")))?;
    let work = std::env::temp_dir().join(format!("snapscale-lab-pgbench-{}", std::process::id()));
    std::fs::create_dir_all(&work)?;
    let result = measure_in(settings, pgbench, &work);
    let _ = std::fs::remove_dir_all(&work);
    result
}

/// Checkpoints in a PostgreSQL log.
#[derive(Clone, Copy, Debug)]
pub(super) struct Checkpoints {
    pub(super) started: usize,
    pub(super) completed: usize,
}

/// The redo LSN in the name of the newest `checkpoint-<16 hex>` file in
/// snapscale's data directory.
pub(super) fn latest_checkpoint(data_dir: &Path) -> Option<u64> {
    std::fs::read_dir(data_dir)
        .ok()?
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix("checkpoint-").map(str::to_owned))
        .filter_map(|hex| u64::from_str_radix(&hex, 16).ok())
        .max()
}

pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

pub(super) fn measure_in(settings: &Settings, pgbench: Pgbench, work: &Path) -> io::Result<Measurement> {
    if settings.idle > 0 {
        check_open_files(settings.idle)?;
    }
    let load_before = load_average();
    let mut disk = settings.durable.then(|| probe_disk(settings, work));
    let Started { mut servers, postgres_skipped, postgres_version } = start_both(
        "pgbench",
        &settings.pg_bin,
        || start_snapscale(settings, work),
        || start_postgres(settings, work),
    )?;
    let device = disk::device_number(work);
    if let Some(disk) = &mut disk {
        disk.data_dirs = servers
            .iter()
            .map(|s| (s.kind, s.data_dir.clone(), disk::device_number(&s.data_dir) == device))
            .collect();
    }
    let shown: Vec<(Kind, String)> = servers
        .iter()
        .map(|s| {
            let pg_settings = settings.postgres_settings();
            let names = if s.kind == Kind::Snapscale {
                settings.snapscale_settings().to_vec()
            } else {
                super::report::pairs(&pg_settings)
            };
            let shown = show(&settings.pg_bin, s.port, &names);
            eprintln!("lab pgbench: {} runs with {shown}", s.kind.label());
            (s.kind, shown)
        })
        .collect();
    let mut inits = Vec::new();
    for server in &mut servers {
        let init = pgbench.init(server.port, settings.scale);
        match &init {
            Ok(done) => {
                eprintln!("lab pgbench: {} pgbench -i -s {}: {done}", server.kind.label(), settings.scale)
            }
            Err(why) => {
                eprintln!("lab pgbench: {} pgbench -i failed: {why}", server.kind.label());
                server.gone = Some(format!("pgbench -i failed: {why}"));
            }
        }
        inits.push((server.kind, init));
    }

    let flushes = || device.and_then(disk::disk_stats).map(|d| d.flushes);
    let idle_runtime = match settings.idle {
        0 => None,
        _ => Some(tokio::runtime::Builder::new_current_thread().enable_all().build()?),
    };
    let mut runs = Vec::new();
    for round in 1..=settings.rounds {
        for &workload in &settings.workloads {
            for (clients, pinned) in settings.cells() {
                let threads = settings.threads(clients, pinned);
                let runner = if pinned { pgbench.pinned_to(PINNED_CPU) } else { pgbench.clone() };
                // Every server; with `--idle`, snapscale once more with the
                // idle connections open, right after its idle-free run, so
                // that the two runs compared are back to back. The order
                // alternates from round to round, so that no run always
                // follows the same one.
                let mut order: Vec<(usize, usize)> = Vec::new();
                for (i, server) in servers.iter().enumerate() {
                    order.push((i, 0));
                    if server.kind == Kind::Snapscale && idle_runtime.is_some() {
                        order.push((i, settings.idle));
                    }
                }
                if round % 2 == 0 {
                    order.reverse();
                }
                for (i, idle) in order {
                    let server = &mut servers[i];
                    let before = flushes();
                    let run = |server: &mut Server| {
                        timed(&runner, server, workload, clients, threads, pinned, settings.seconds)
                    };
                    let result = match (idle, &idle_runtime) {
                        (0, _) | (_, None) => run(server),
                        (n, Some(rt)) => with_idle(rt, n, server, run),
                    };
                    let disk_flushes = before.zip(flushes()).map(|(b, a)| a.saturating_sub(b));
                    let result = match result {
                        // A failed run may be the server dying: say so in the same place.
                        Err(why) => Err(match server.check_gone() {
                            Some(gone) if !why.contains(&gone) => format!("{why}\n{gone}"),
                            _ => why,
                        }),
                        ok => ok,
                    };
                    let run = Run {
                        round,
                        workload,
                        clients,
                        threads,
                        pinned,
                        server: server.kind,
                        idle,
                        result,
                        disk_flushes,
                    };
                    let place = match (pinned, idle) {
                        (true, _) => " pinned".to_string(),
                        (false, 0) => String::new(),
                        (false, n) => format!(" with {n} idle"),
                    };
                    match &run.result {
                        Ok(o) => eprintln!(
                            "lab pgbench: round {round}/{} {workload} c={clients}{place} {}: {:.0} tps, {} failed{}{}",
                            settings.rounds,
                            server.kind.label(),
                            o.tps,
                            o.failed,
                            run.flushes_per_transaction()
                                .map(|f| format!(", {f:.2} disk flushes per transaction"))
                                .unwrap_or_default(),
                            o.problem.as_deref().map(|p| format!(" ({p})")).unwrap_or_default()
                        ),
                        Err(why) => eprintln!(
                            "lab pgbench: round {round} {workload} c={clients}{place} {}: FAILED: {why}",
                            server.kind.label()
                        ),
                    }
                    runs.push(run);
                }
            }
        }
    }
    let postgres_checkpoints = servers.iter().find(|s| s.kind == Kind::Postgres).and_then(|s| {
        let log = std::fs::read_to_string(&s.log).ok()?;
        let count = |what: &str| log.lines().filter(|l| l.contains(what)).count();
        Some(Checkpoints { started: count("checkpoint starting"), completed: count("checkpoint complete") })
    });
    let snapscale_checkpoint =
        servers.iter().find(|s| s.kind == Kind::Snapscale).and_then(|s| latest_checkpoint(&s.data_dir));
    Ok(Measurement {
        pgbench,
        inits,
        postgres_skipped,
        postgres_version,
        shown,
        disk,
        postgres_checkpoints,
        snapscale_checkpoint,
        load: (load_before, load_average()),
        runs,
    })
}

/// One run of `runner` against `server`, pinned to [`PINNED_CPU`] with it
/// if `pinned`.
fn timed(
    runner: &Pgbench,
    server: &mut Server,
    workload: &str,
    clients: usize,
    threads: usize,
    pinned: bool,
    seconds: u32,
) -> Result<Outcome, String> {
    match server.check_gone() {
        Some(why) => Err(why),
        None if pinned => server.pin(Some(PINNED_CPU)).and_then(|()| {
            let run = runner.run_threads(server.port, workload, clients, threads, seconds);
            server.pin(None).and(run)
        }),
        None => runner.run_threads(server.port, workload, clients, threads, seconds),
    }
}

/// `run` with `n` idle connections open to `server`; afterwards each must
/// answer `SELECT 1`, and a run after which some did not reports it as its
/// problem.
fn with_idle(
    runtime: &tokio::runtime::Runtime,
    n: usize,
    server: &mut Server,
    run: impl FnOnce(&mut Server) -> Result<Outcome, String>,
) -> Result<Outcome, String> {
    if let Some(why) = server.check_gone() {
        return Err(why);
    }
    let idle = Idle::open(runtime, server.port, n)?;
    let result = run(server);
    let (answered, first_error) = idle.check_and_close(runtime);
    result.map(|mut o| {
        if answered < n {
            let why = format!(
                "{answered} of {n} idle connections answered SELECT 1 after the run{}",
                first_error.map_or(String::new(), |e| format!(" (first failure: {e})"))
            );
            o.problem = Some(o.problem.map_or(why.clone(), |p| format!("{p}; {why}")));
        }
        o
    })
}
