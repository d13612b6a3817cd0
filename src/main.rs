//! The `snapscale` command.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use snapscale_lab::snapshots;
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
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Lab { experiment: Experiment::Snapshots { quick, out, modes, duration_ms, repeats } } => {
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
            match snapshots::run(&settings) {
                Ok(written) => {
                    println!("wrote {}", written.markdown.display());
                    println!("wrote {}", written.csv.display());
                    println!("wrote {}", written.svg.display());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("snapscale lab snapshots: cannot write results: {e}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}
