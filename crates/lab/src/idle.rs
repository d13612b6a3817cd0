//! `lab idle`: resident memory of the server per idle connection, and
//! whether pgbench clients still run with all of them open.
//!
//! Starts `snapscale serve` as a child process, opens idle connections in
//! steps (each completes the PostgreSQL startup exchange and then stays
//! silent, as a pooled-but-unused connection does), and reads the child's
//! resident set size from /proc after each step. Every connection holds a
//! proc-array slot, as a PostgreSQL backend holds its PGPROC.
//!
//! With the most idle connections still open, it then runs 2 pgbench
//! clients (the design's "10 000 idle connections plus 2 active pgbench
//! clients"), checks that every idle connection still answers a query, and
//! runs the same clients again after closing them, for comparison.
//!
//! Needs one file descriptor per connection on each side; the limit is per
//! process, so this process and the server each need a little more than
//! the connection count. The run checks the limit first (raise it with
//! `ulimit -n` if needed).

use std::io;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::net::TcpStream;

use crate::child::{connect, free_port, simple_query, wait_until_accepting, ServerChild};
use crate::pgbench::{Outcome, Pgbench, PG15_BIN, WORKLOADS};
use crate::report::plot::{Figure, Panel, Series};
use crate::report::table::{Table, Value};
use crate::report::{ResultSet, Written};

/// pgbench clients next to the idle connections.
const ACTIVE_CLIENTS: usize = 2;

/// Connections the server allows beyond the idle ones: pgbench's init
/// connection, its clients and this process's checks.
const HEADROOM: usize = 16;

/// The experiment's settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Idle connection counts, increasing.
    pub counts: Vec<usize>,
    /// `-T` of each pgbench run next to the idle connections.
    pub active_seconds: u32,
    /// Where to look for pgbench first (then `PATH`).
    pub pg_bin: PathBuf,
    /// Output directory.
    pub out_dir: PathBuf,
    /// Base name of the output files.
    pub name: String,
}

impl Settings {
    /// Up to 10 000 idle connections; 10-second pgbench runs.
    pub fn full(out_dir: PathBuf) -> Self {
        Self {
            counts: vec![0, 1_000, 2_500, 5_000, 10_000],
            active_seconds: 10,
            pg_bin: PG15_BIN.into(),
            out_dir,
            name: "idle".into(),
        }
    }

    /// Up to 1 000; 3-second pgbench runs.
    pub fn quick(out_dir: PathBuf) -> Self {
        Self {
            counts: vec![0, 250, 500, 1_000],
            active_seconds: 3,
            name: "idle-quick".into(),
            ..Self::full(out_dir)
        }
    }
}

fn open_files_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

pub(crate) fn rss_kib(pid: u32) -> io::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| io::Error::other("no VmRSS in /proc status"))
}

/// One step's measurement.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// Idle connections open.
    pub connections: usize,
    /// Server resident set, KiB.
    pub rss_kib: u64,
}

/// pgbench next to the idle connections.
#[derive(Clone, Debug)]
pub struct Active {
    /// Idle connections open during the first runs.
    pub idle: usize,
    /// `pgbench -i -s 1`'s "done in ..." line.
    pub init: String,
    /// Per workload, with the idle connections open.
    pub with_idle: Vec<(&'static str, Result<Outcome, String>)>,
    /// How the server had exited after those runs, if it had.
    pub server_exit: Option<String>,
    /// Idle connections that then answered `SELECT 1`.
    pub answered: usize,
    /// The first idle connection's failure, if any.
    pub first_error: Option<String>,
    /// Server resident set after the runs, KiB.
    pub rss_after_kib: u64,
    /// Per workload, after closing the idle connections.
    pub without_idle: Vec<(&'static str, Result<Outcome, String>)>,
}

/// Everything one run measured.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// Resident memory per step.
    pub steps: Vec<Step>,
    /// The pgbench part, or why it did not run.
    pub active: Result<Active, String>,
}

/// Runs the experiment.
pub fn measure(settings: &Settings) -> io::Result<Measurement> {
    let most = *settings.counts.iter().max().unwrap_or(&0);
    if let Some(limit) = open_files_limit() {
        if limit < most + 64 {
            return Err(io::Error::other(format!(
                "{most} connections need more open files than the limit {limit}: raise it with `ulimit -n {}`",
                most + 64
            )));
        }
    }
    let port = free_port()?;
    let data_dir = std::env::temp_dir().join(format!("snapscale-lab-idle-{}", std::process::id()));
    let mut server = ServerChild::spawn(port, most + HEADROOM, data_dir, Stdio::inherit())?;
    wait_until_accepting(port, "lab", server.child())?;
    let pid = server.child().id();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let (steps, mut open) = runtime.block_on(async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut open = Vec::with_capacity(most);
        let mut steps = Vec::new();
        for &count in &settings.counts {
            while open.len() < count {
                open.push(connect(port, "lab").await?);
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
            steps.push(Step { connections: count, rss_kib: rss_kib(pid)? });
        }
        // The server still accepts and answers with everything open.
        drop(connect(port, "lab").await?);
        Ok::<_, io::Error>((steps, open))
    })?;
    let active = active(settings, &runtime, port, &mut server, &mut open);
    if let Err(why) = &active {
        eprintln!("lab idle: no pgbench part: {why}");
    }
    Ok(Measurement { steps, active })
}

/// pgbench with the idle connections `open`, a query on each of them, then
/// pgbench again without them.
fn active(
    settings: &Settings,
    runtime: &tokio::runtime::Runtime,
    port: u16,
    server: &mut ServerChild,
    open: &mut Vec<TcpStream>,
) -> Result<Active, String> {
    let pgbench = Pgbench::find(&settings.pg_bin)?;
    let init = pgbench.init(port, 1).map_err(|e| format!("pgbench -i failed: {e}"))?;
    let runs = |idle: usize| -> Vec<(&'static str, Result<Outcome, String>)> {
        WORKLOADS
            .iter()
            .map(|&workload| {
                let result = pgbench.run(port, workload, ACTIVE_CLIENTS, settings.active_seconds);
                match &result {
                    Ok(o) => eprintln!(
                        "lab idle: {idle} idle + {workload} c={ACTIVE_CLIENTS}: {:.0} tps, {} failed",
                        o.tps, o.failed
                    ),
                    Err(why) => eprintln!("lab idle: {idle} idle + {workload}: FAILED: {why}"),
                }
                (workload, result)
            })
            .collect()
    };
    let idle = open.len();
    let with_idle = runs(idle);
    let server_exit = server.child().try_wait().ok().flatten().map(|s| s.to_string());
    // Each idle connection must still be open and served: ask every one.
    let (answered, first_error) = runtime.block_on(async {
        let mut answered = 0;
        let mut first_error = None;
        for (i, stream) in open.iter_mut().enumerate() {
            match tokio::time::timeout(Duration::from_secs(10), simple_query(stream, "SELECT 1")).await {
                Ok(Ok(())) => answered += 1,
                Ok(Err(e)) => {
                    first_error.get_or_insert_with(|| format!("connection {i}: {e}"));
                }
                Err(_) => {
                    first_error.get_or_insert_with(|| format!("connection {i}: no answer within 10 s"));
                }
            }
        }
        (answered, first_error)
    });
    let rss_after_kib = rss_kib(server.child().id()).unwrap_or(0);
    open.clear();
    // Let the server finish closing them before measuring again.
    std::thread::sleep(Duration::from_secs(2));
    let without_idle = runs(0);
    Ok(Active { idle, init, with_idle, server_exit, answered, first_error, rss_after_kib, without_idle })
}

/// KiB per idle connection from the first to the last step.
pub fn per_connection_kib(steps: &[Step]) -> Option<f64> {
    let (first, last) = (steps.first()?, steps.last()?);
    (last.connections > first.connections)
        .then(|| (last.rss_kib as f64 - first.rss_kib as f64) / (last.connections - first.connections) as f64)
}

fn tps_text(runs: &[(&str, Result<Outcome, String>)], workload: &str) -> String {
    match runs.iter().find(|(w, _)| *w == workload).map(|(_, r)| r) {
        Some(Ok(o)) => format!("{:.0} tps", o.tps),
        Some(Err(_)) => "failed".into(),
        None => "not run".into(),
    }
}

/// The pgbench part of the page.
fn active_summary(settings: &Settings, active: &Result<Active, String>) -> String {
    let a = match active {
        Ok(a) => a,
        Err(why) => return format!("The pgbench part did not run: {why}.\n"),
    };
    let failed: u64 = a.with_idle.iter().filter_map(|(_, r)| r.as_ref().ok()).map(|o| o.failed).sum();
    let errors: Vec<String> = a
        .with_idle
        .iter()
        .chain(&a.without_idle)
        .filter_map(|(w, r)| match r {
            Ok(o) => o.problem.as_ref().map(|p| format!("{w}: {p}")),
            Err(why) => Some(format!("{w}: {why}")),
        })
        .collect();
    let mut out = format!(
        "**{} idle + {ACTIVE_CLIENTS} pgbench clients** (`pgbench -M prepared -c {ACTIVE_CLIENTS} -j \
         {ACTIVE_CLIENTS} -T {}`, scale 1): tpcb-like {}, select-only {}, {failed} failed \
         transactions, {} runs with errors. ",
        a.idle,
        settings.active_seconds,
        tps_text(&a.with_idle, "tpcb-like"),
        tps_text(&a.with_idle, "select-only"),
        errors.len(),
    );
    out.push_str(&match &a.server_exit {
        Some(status) => format!("The server had exited ({status}). "),
        None => "The server was still running, ".into(),
    });
    out.push_str(&format!(
        "and {} of the {} idle connections then answered `SELECT 1`{}. The server's resident set \
         after loading pgbench's tables and running was {} KiB. For comparison, after closing the \
         idle connections the same server gave tpcb-like {} and select-only {} (one run each, on a VM \
         whose speed varies from phase to phase; [pgbench.md](pgbench.md) shows how far runs move \
         between rounds).\n",
        a.answered,
        a.idle,
        a.first_error.as_ref().map_or(String::new(), |e| format!(" (first failure: {e})")),
        a.rss_after_kib,
        tps_text(&a.without_idle, "tpcb-like"),
        tps_text(&a.without_idle, "select-only"),
    ));
    let mut table = Table::new(&["idle_connections", "workload", "clients", "tps", "latency_ms", "failed"]);
    for (idle, runs) in [(a.idle, &a.with_idle), (0, &a.without_idle)] {
        for (workload, result) in runs {
            let (tps, latency, failed) = match result {
                Ok(o) => (Value::from(o.tps), Value::from(o.latency_ms), Value::from(o.failed)),
                Err(_) => ("failed".into(), "n/a".into(), "n/a".into()),
            };
            table.push(vec![
                Value::from(idle),
                Value::from(*workload),
                Value::from(ACTIVE_CLIENTS),
                tps,
                latency,
                failed,
            ]);
        }
    }
    out.push('\n');
    out.push_str(&table.markdown());
    for e in errors {
        out.push_str(&format!("\n```\n{e}\n```\n"));
    }
    out
}

/// Runs the experiment and writes CSV, SVG and Markdown.
pub fn run(settings: &Settings) -> io::Result<Written> {
    let Measurement { steps, active } = measure(settings)?;
    let mut table = Table::new(&["idle_connections", "server_rss_kib"]);
    for s in &steps {
        table.push(vec![Value::from(s.connections), Value::from(s.rss_kib)]);
    }
    let per = per_connection_kib(&steps);
    let mut summary = match per {
        Some(kib) => format!(
            "Server resident memory grows by **{kib:.1} KiB per idle connection** ({} → {} connections), \
             including the proc-array slot, the connection task and pgwire's buffers.\n\n",
            steps[0].connections,
            steps[steps.len() - 1].connections
        ),
        None => "Not enough steps to compute a per-connection figure.\n\n".into(),
    };
    summary.push_str(&active_summary(settings, &active));
    let figure = Figure {
        title: "Server memory against idle connections".into(),
        x_label: "idle connections".into(),
        y_label: "resident set (KiB)".into(),
        x_log: false,
        y_log: false,
        panels: vec![Panel {
            title: "snapscale serve".into(),
            series: vec![Series {
                label: "VmRSS".into(),
                points: steps.iter().map(|s| (s.connections as f64, s.rss_kib as f64)).collect(),
            }],
        }],
    };
    let most = steps.last().map_or(0, |s| s.connections);
    let settings_list = vec![
        ("idle connections".to_string(), crate::report::stats::list(&settings.counts)),
        (
            "server".to_string(),
            format!(
                "snapscale serve (release build of this binary), default snapshot_mode, \
                 max_connections {}",
                most + HEADROOM
            ),
        ),
        ("open files limit".to_string(), open_files_limit().map_or("unknown".into(), |l| l.to_string())),
        (
            "file descriptors".to_string(),
            format!(
                "each idle connection holds one in this process and one in the server; the limit is \
                 per process, so each needs {most} plus a few (`ulimit -n 20000`, this machine's hard \
                 limit, covers both; pgbench is a separate process)"
            ),
        ),
        ("settle time per step".to_string(), "300 ms".to_string()),
        (
            "pgbench part".to_string(),
            format!(
                "with all {most} idle connections open: pgbench -i -s 1, then pgbench -M prepared -c \
                 {ACTIVE_CLIENTS} -j {ACTIVE_CLIENTS} -T {} -b select-only, then -b tpcb-like (default \
                 vacuum before each run); then SELECT 1 on every idle connection; then the same two \
                 runs after closing them",
                settings.active_seconds
            ),
        ),
        ("pgbench".to_string(), Pgbench::find(&settings.pg_bin).map_or_else(|why| why, |p| p.version)),
    ];
    ResultSet::new(&settings.out_dir, &settings.name).write(&table, &figure, &summary, &settings_list)
}
