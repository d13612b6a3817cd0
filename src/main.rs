//! The `snapscale` command.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use snapscale_lab::report::Written;
use snapscale_lab::{endurance, hot_standby, idle, pgbench, sinval, snapshots, sysbench, visibility};
use snapscale_server::{Server, Settings};
use snapscale_sql::SnapshotMode;

#[derive(Parser)]
#[command(
    name = "snapscale",
    version,
    about = "A PostgreSQL-compatible MVCC server whose snapshots do not slow down with connections"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the server (listens on 127.0.0.1:5433 by default).
    Serve(ServeArgs),
    /// Run an experiment of the lab and write its results.
    Lab {
        #[command(subcommand)]
        experiment: Experiment,
    },
}

/// Server flags; each overrides the config file. PostgreSQL's setting
/// names work in the file and with `--set name=value`.
#[derive(clap::Args, Clone)]
struct ServeArgs {
    /// Config file of `name = value` lines (postgresql.conf style).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Address to listen on (listen_addresses).
    #[arg(long)]
    listen: Option<String>,
    /// TCP port (port).
    #[arg(long)]
    port: Option<u16>,
    /// Data directory (data_directory).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Most concurrent connections (max_connections).
    #[arg(long)]
    max_connections: Option<usize>,
    /// Snapshot strategy (snapshot_mode): pgproc, pgxact, dense, dense-cached, shared-cached, csn.
    #[arg(long)]
    snapshot_mode: Option<String>,
    /// Any other setting, as name=value (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    set: Vec<String>,
}

impl ServeArgs {
    fn settings(&self) -> Result<Settings, String> {
        let mut s = Settings::default();
        if let Some(path) = &self.config {
            s.load_file(path).map_err(|e| e.to_string())?;
        }
        let mut flags: Vec<(String, String)> = Vec::new();
        if let Some(v) = &self.listen {
            flags.push(("listen_addresses".into(), v.clone()));
        }
        if let Some(v) = self.port {
            flags.push(("port".into(), v.to_string()));
        }
        if let Some(v) = &self.data_dir {
            flags.push(("data_directory".into(), v.display().to_string()));
        }
        if let Some(v) = self.max_connections {
            flags.push(("max_connections".into(), v.to_string()));
        }
        if let Some(v) = &self.snapshot_mode {
            flags.push(("snapshot_mode".into(), v.clone()));
        }
        for kv in &self.set {
            let (k, v) =
                kv.split_once('=').ok_or_else(|| format!("--set expects name=value, got \"{kv}\""))?;
            flags.push((k.trim().into(), v.trim().into()));
        }
        for (k, v) in flags {
            s.set_at_start(&k, &v).map_err(|e| e.to_string())?;
        }
        Ok(s)
    }
}

/// Resolves at SIGINT or SIGTERM.
async fn shutdown_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let mut term = signal(SignalKind::terminate()).expect("install SIGTERM handler");
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

fn serve(args: ServeArgs) -> ExitCode {
    tracing_subscriber::fmt()
        // Colour codes only on a terminal: logs written to a file or a pipe
        // stay plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stdout()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("SNAPSCALE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let settings = match args.settings() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("snapscale serve: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Before any load and before the runtime's threads: large buffers get
    // mappings of their own, returned on free, and one arena serves every
    // thread, instead of arena pages the process keeps (see the module).
    snapscale_server::malloc::configure();
    // The server runs on a runtime of its own (with the stacks statements
    // need); this one only waits for a signal.
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("tokio runtime");
    let result = runtime.block_on(async move {
        let server = Server::bind(settings).await?;
        // A reload (SIGHUP) reads the config file and flags again.
        let reread = args.clone();
        server.on_reload(Box::new(move || reread.settings())).run(shutdown_signal()).await
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("snapscale serve: {e}");
            ExitCode::FAILURE
        }
    }
}

#[derive(Subcommand)]
enum Experiment {
    /// Snapshot cost against idle sessions, active threads and write fraction.
    Snapshots {
        /// The short variant (under a minute): one repetition of 100 ms per cell.
        #[arg(long)]
        quick: bool,
        /// Directory for the CSV, SVG and Markdown files.
        #[arg(long, default_value = "docs/results")]
        out: PathBuf,
        /// Only these modes (comma-separated).
        #[arg(long, value_delimiter = ',')]
        modes: Option<Vec<SnapshotMode>>,
        /// Measured milliseconds per repetition (overrides the preset).
        #[arg(long)]
        duration_ms: Option<u64>,
        /// Repetitions per cell (overrides the preset).
        #[arg(long)]
        repeats: Option<usize>,
    },
    /// Server resident memory per idle connection (up to 10 000 connections),
    /// then 2 pgbench clients with all of them open.
    Idle {
        /// The short variant: up to 1 000 connections, 3-second pgbench runs.
        #[arg(long)]
        quick: bool,
        /// Directory for the CSV, SVG and Markdown files.
        #[arg(long, default_value = "docs/results")]
        out: PathBuf,
    },
    /// pgbench select-only and tpcb-like against snapscale and PostgreSQL 15
    /// (fsync off), interleaved round by round on this machine; with
    /// --durable, tpcb-like at 1, 2 and 8 clients with every commit synced.
    Pgbench {
        /// The short variant: 3-second runs, one round.
        #[arg(long)]
        quick: bool,
        /// Durable commits on both servers (fsync and synchronous_commit on),
        /// tpcb-like at 1, 2 and 8 clients, scale 10, after timing fdatasync
        /// on the data directories' filesystem; writes pgbench-durable.*.
        #[arg(long)]
        durable: bool,
        /// pgbench -i scale (overrides the preset: 1, or 10 with --durable).
        #[arg(long)]
        scale: Option<u32>,
        /// Client counts, e.g. 1,2 (overrides the preset: 1,2, or 1,2,8
        /// with --durable).
        #[arg(long, value_delimiter = ',')]
        clients: Option<Vec<usize>>,
        /// Client counts run again with pgbench and both servers pinned to
        /// one CPU (overrides the preset: 1, or none with --durable); an
        /// empty value runs none.
        #[arg(long, value_delimiter = ',', num_args = 0..)]
        pinned: Option<Vec<usize>>,
        /// Seconds per run (overrides the preset: 20, or 3 with --quick).
        #[arg(long)]
        seconds: Option<u32>,
        /// Rounds (overrides the preset: 3, or 1 with --quick).
        #[arg(long)]
        rounds: Option<usize>,
        /// Directory for the CSV, SVG and Markdown files.
        #[arg(long, default_value = "docs/results")]
        out: PathBuf,
        /// Base name of the output files (overrides the preset).
        #[arg(long)]
        name: Option<String>,
        /// Also run snapscale in every cell with this many idle
        /// connections open (each checked with SELECT 1 afterwards), and
        /// report its throughput against its own idle-free runs.
        #[arg(long)]
        idle: Option<usize>,
        /// Leave PostgreSQL's shared_buffers at its default 128 MB (the
        /// variant of results before 2026-11-28), smaller than the data set
        /// from scale 10 on. By default it holds the data set: 32 MB per
        /// unit of scale, at least 128 MB.
        #[arg(long)]
        pg_default_shared_buffers: bool,
    },
    /// sysbench 1.0's OLTP scripts against snapscale and PostgreSQL 15
    /// (fsync off, shared_buffers holding the data), at 2 and 32 threads,
    /// in alternating pairs of runs.
    Sysbench {
        /// The short variant: 3-second runs, one pair, 2 threads, 10 000 rows.
        #[arg(long)]
        quick: bool,
        /// Thread counts, e.g. 2,32 (overrides the preset: 2,32, or 2 with --quick).
        #[arg(long, value_delimiter = ',')]
        threads: Option<Vec<usize>>,
        /// Seconds per run (overrides the preset: 10, or 3 with --quick).
        #[arg(long)]
        time: Option<u32>,
        /// sysbench --tables (overrides the preset: 1).
        #[arg(long)]
        tables: Option<usize>,
        /// sysbench --table-size (overrides the preset: 25000, or 10000 with --quick).
        #[arg(long)]
        table_size: Option<u64>,
        /// sysbench scripts, e.g. oltp_point_select,oltp_insert (overrides
        /// the preset: the ten OLTP scripts).
        #[arg(long, value_delimiter = ',')]
        tests: Option<Vec<String>>,
        /// Pairs of runs (overrides the preset: 3, or 1 with --quick).
        #[arg(long)]
        pairs: Option<usize>,
        /// Directory for the CSV, SVG and Markdown files.
        #[arg(long, default_value = "docs/results")]
        out: PathBuf,
        /// Base name of the output files (overrides the preset).
        #[arg(long)]
        name: Option<String>,
    },
    /// Invalidation-check cost: the has-messages fast path vs the locked read
    /// path, against sessions, with and without pending messages (seed 003).
    Sinval {
        /// The short variant: 80 ms per loop, one round.
        #[arg(long)]
        quick: bool,
        /// Directory for the CSV, SVG and Markdown files.
        #[arg(long, default_value = "docs/results")]
        out: PathBuf,
    },
    /// Visibility-check cost: dense xip search vs the CSN log, without and
    /// with the per-snapshot memo (seed 004's cases).
    Visibility {
        /// The short variant: fewer checks, one repetition.
        #[arg(long)]
        quick: bool,
        /// Directory for the CSV, SVG and Markdown files.
        #[arg(long, default_value = "docs/results")]
        out: PathBuf,
    },
    /// A server left alone under fixed-rate tpcb-like: tps, resident memory,
    /// live and dead versions, unfrozen xids, WAL size and checkpoints over
    /// 30 minutes.
    Endurance {
        /// The short variant: 2 minutes.
        #[arg(long)]
        quick: bool,
        /// Directory for the CSV, SVG and Markdown files.
        #[arg(long, default_value = "docs/results")]
        out: PathBuf,
        /// pgbench's fixed rate (overrides the preset: 500 tps).
        #[arg(long)]
        rate: Option<u32>,
        /// Minutes the load runs (overrides the preset).
        #[arg(long)]
        minutes: Option<u64>,
    },
    /// Hot standby snapshots: KnownAssignedXids vs CSN, in process (snapshot
    /// and visibility cost against running primary transactions) and end to
    /// end (pgbench on a real standby of a real primary).
    Standby {
        /// The short variant: fewer sizes, shorter runs.
        #[arg(long)]
        quick: bool,
        /// Directory for the CSV, SVG and Markdown files.
        #[arg(long, default_value = "docs/results")]
        out: PathBuf,
    },
}

fn report(what: &str, result: std::io::Result<Written>) -> ExitCode {
    match result {
        Ok(written) => {
            for path in [&written.markdown, &written.csv, &written.svg] {
                println!("wrote {}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("snapscale lab {what}: cannot write results: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The command line as typed, for a report that records how it was made:
/// the program by its file name, arguments quoted where they need it.
fn command_line() -> String {
    let mut args = std::env::args();
    let program = args.next().map(PathBuf::from);
    let program =
        program.as_deref().and_then(|p| p.file_name()).map_or("snapscale".into(), |n| n.to_string_lossy());
    std::iter::once(program.into_owned())
        .chain(args.map(|a| if a.contains(char::is_whitespace) { format!("'{a}'") } else { a }))
        .collect::<Vec<_>>()
        .join(" ")
}

fn main() -> ExitCode {
    let experiment = match Cli::parse().command {
        Command::Serve(args) => return serve(args),
        Command::Lab { experiment } => experiment,
    };
    match experiment {
        Experiment::Snapshots { quick, out, modes, duration_ms, repeats } => {
            let mut settings =
                if quick { snapshots::Settings::quick(out) } else { snapshots::Settings::full(out) };
            if let Some(modes) = modes {
                settings.modes = modes;
            }
            if let Some(ms) = duration_ms {
                settings.duration = Duration::from_millis(ms);
            }
            if let Some(r) = repeats {
                settings.repeats = r.max(1);
            }
            report("snapshots", snapshots::run(&settings))
        }
        Experiment::Idle { quick, out } => {
            let settings = if quick { idle::Settings::quick(out) } else { idle::Settings::full(out) };
            report("idle", idle::run(&settings))
        }
        Experiment::Pgbench {
            quick,
            durable,
            scale,
            clients,
            pinned,
            seconds,
            rounds,
            out,
            name,
            idle,
            pg_default_shared_buffers,
        } => {
            let mut settings = match (durable, quick) {
                (false, false) => pgbench::Settings::full(out),
                (false, true) => pgbench::Settings::quick(out),
                (true, false) => pgbench::Settings::durable(out),
                (true, true) => pgbench::Settings::durable_quick(out),
            };
            if let Some(scale) = scale {
                settings.scale = scale.max(1);
            }
            if let Some(clients) = clients {
                settings.clients = clients.into_iter().filter(|&c| c > 0).collect();
            }
            if let Some(pinned) = pinned {
                settings.pinned = pinned.into_iter().filter(|&c| c > 0).collect();
            }
            if let Some(seconds) = seconds {
                settings.seconds = seconds.max(1);
            }
            if let Some(rounds) = rounds {
                settings.rounds = rounds.max(1);
            }
            if let Some(name) = name {
                settings.name = name;
            }
            if let Some(idle) = idle {
                settings.idle = idle;
            }
            settings.pg_default_shared_buffers = pg_default_shared_buffers;
            report("pgbench", pgbench::run(&settings))
        }
        Experiment::Sysbench { quick, threads, time, tables, table_size, tests, pairs, out, name } => {
            let mut settings =
                if quick { sysbench::Settings::quick(out) } else { sysbench::Settings::full(out) };
            if let Some(threads) = threads {
                settings.threads = threads.into_iter().filter(|&t| t > 0).collect();
            }
            if let Some(time) = time {
                settings.seconds = time.max(1);
            }
            if let Some(tables) = tables {
                settings.tables = tables.max(1);
            }
            if let Some(size) = table_size {
                settings.table_size = size.max(1);
            }
            if let Some(tests) = tests {
                settings.tests = tests.into_iter().filter(|t| !t.is_empty()).collect();
            }
            if let Some(pairs) = pairs {
                settings.pairs = pairs.max(1);
            }
            if let Some(name) = name {
                settings.name = name;
            }
            settings.command = command_line();
            report("sysbench", sysbench::run(&settings))
        }
        Experiment::Sinval { quick, out } => {
            let settings = if quick { sinval::Settings::quick(out) } else { sinval::Settings::full(out) };
            report("sinval", sinval::run(&settings))
        }
        Experiment::Visibility { quick, out } => {
            let settings =
                if quick { visibility::Settings::quick(out) } else { visibility::Settings::full(out) };
            report("visibility", visibility::run(&settings))
        }
        Experiment::Endurance { quick, out, rate, minutes } => {
            let mut settings =
                if quick { endurance::Settings::quick(out) } else { endurance::Settings::full(out) };
            if let Some(rate) = rate {
                settings.rate = rate.max(1);
            }
            if let Some(minutes) = minutes {
                settings.duration = Duration::from_secs(minutes.max(1) * 60);
            }
            report("endurance", endurance::run(&settings))
        }
        Experiment::Standby { quick, out } => {
            let settings =
                if quick { hot_standby::Settings::quick(out) } else { hot_standby::Settings::full(out) };
            report("standby", hot_standby::run(&settings))
        }
    }
}
