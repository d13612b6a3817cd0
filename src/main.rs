//! The `snapscale` command.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use snapscale_lab::report::Written;
use snapscale_lab::{sinval, snapshots, visibility};
use snapscale_txn::SnapshotMode;

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
    /// Run an experiment of the lab and write its results.
    Lab {
        #[command(subcommand)]
        experiment: Experiment,
    },
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

fn main() -> ExitCode {
    let Command::Lab { experiment } = Cli::parse().command;
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
        Experiment::Sinval { quick, out } => {
            let settings = if quick { sinval::Settings::quick(out) } else { sinval::Settings::full(out) };
            report("sinval", sinval::run(&settings))
        }
        Experiment::Visibility { quick, out } => {
            let settings =
                if quick { visibility::Settings::quick(out) } else { visibility::Settings::full(out) };
            report("visibility", visibility::run(&settings))
        }
    }
}
