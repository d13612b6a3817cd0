//! Idle connections next to a pgbench run (`lab pgbench --idle N`).
//!
//! Each connection completes PostgreSQL's startup exchange, as a pooled but
//! unused connection does, and then stays silent for the run: on snapscale
//! it holds a proc-array slot, as a PostgreSQL backend holds its PGPROC.
//! After the run every one of them must still answer `SELECT 1`.

use std::io;
use std::time::Duration;

use tokio::net::TcpStream;
use tokio::runtime::Runtime;

use crate::child::{connect, simple_query};

/// Connections a server needs beyond the idle ones: pgbench's clients and
/// its vacuum connection, `SHOW` checks, and room to spare.
pub(super) const HEADROOM: usize = 32;

/// Open files this process needs for `idle` connections (the server, a
/// separate process, needs as many under its own limit).
pub(super) fn check_open_files(idle: usize) -> io::Result<()> {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let limit = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|n| n.parse::<usize>().ok());
    match limit {
        Some(limit) if limit < idle + 64 => Err(io::Error::other(format!(
            "{idle} idle connections need more open files than the limit {limit}: raise it with `ulimit -n {}`",
            idle + 64
        ))),
        _ => Ok(()),
    }
}

/// `n` idle connections to the server at `port`, open.
pub(super) struct Idle {
    streams: Vec<TcpStream>,
}

impl Idle {
    pub(super) fn open(runtime: &Runtime, port: u16, n: usize) -> Result<Idle, String> {
        runtime.block_on(async {
            let mut streams = Vec::with_capacity(n);
            while streams.len() < n {
                let stream = connect(port, "postgres")
                    .await
                    .map_err(|e| format!("idle connection {} of {n}: {e}", streams.len() + 1))?;
                streams.push(stream);
            }
            Ok(Idle { streams })
        })
    }

    /// Asks each connection `SELECT 1`: how many answered, and the first
    /// failure. Then closes them all and gives the server a moment to
    /// finish with them before the next run.
    pub(super) fn check_and_close(mut self, runtime: &Runtime) -> (usize, Option<String>) {
        let checked = runtime.block_on(async {
            let mut answered = 0;
            let mut first_error = None;
            for (i, stream) in self.streams.iter_mut().enumerate() {
                match tokio::time::timeout(Duration::from_secs(10), simple_query(stream, "SELECT 1")).await {
                    Ok(Ok(())) => answered += 1,
                    Ok(Err(e)) => {
                        first_error.get_or_insert_with(|| format!("idle connection {i}: {e}"));
                    }
                    Err(_) => {
                        first_error
                            .get_or_insert_with(|| format!("idle connection {i}: no answer within 10 s"));
                    }
                }
            }
            (answered, first_error)
        });
        self.streams.clear();
        std::thread::sleep(Duration::from_secs(1));
        checked
    }
}
