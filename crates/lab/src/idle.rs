//! `lab idle`: resident memory of the server per idle connection.
//!
//! Starts `snapscale serve` as a child process, opens idle connections in
//! steps (each completes the PostgreSQL startup exchange and then stays
//! silent, as a pooled-but-unused connection does), and reads the child's
//! resident set size from /proc after each step. Every connection holds a
//! proc-array slot, as a PostgreSQL backend holds its PGPROC. Needs one file
//! descriptor per connection on each side: the run checks the limit first
//! (raise it with `ulimit -n` if needed).

use std::io;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::report::plot::{Figure, Panel, Series};
use crate::report::table::{Table, Value};
use crate::report::{ResultSet, Written};

/// The experiment's settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Idle connection counts, increasing.
    pub counts: Vec<usize>,
    /// Output directory.
    pub out_dir: PathBuf,
    /// Base name of the output files.
    pub name: String,
}

impl Settings {
    /// Up to 10 000 idle connections.
    pub fn full(out_dir: PathBuf) -> Self {
        Self { counts: vec![0, 1_000, 2_500, 5_000, 10_000], out_dir, name: "idle".into() }
    }

    /// Up to 1 000.
    pub fn quick(out_dir: PathBuf) -> Self {
        Self { counts: vec![0, 250, 500, 1_000], out_dir, name: "idle-quick".into() }
    }
}

fn open_files_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

fn rss_kib(pid: u32) -> io::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| io::Error::other("no VmRSS in /proc status"))
}

/// Sends a startup message and reads until ReadyForQuery; fails on an error.
async fn connect(port: u16) -> io::Result<TcpStream> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).await?;
    let mut body = 196_608i32.to_be_bytes().to_vec();
    for part in ["user", "lab", "database", "lab"] {
        body.extend_from_slice(part.as_bytes());
        body.push(0);
    }
    body.push(0);
    let mut msg = ((body.len() + 4) as i32).to_be_bytes().to_vec();
    msg.extend_from_slice(&body);
    stream.write_all(&msg).await?;
    loop {
        let kind = stream.read_u8().await?;
        let len = stream.read_i32().await? as usize;
        let mut rest = vec![0; len - 4];
        stream.read_exact(&mut rest).await?;
        match kind {
            b'Z' => return Ok(stream),
            b'E' => return Err(io::Error::other(String::from_utf8_lossy(&rest).into_owned())),
            _ => {}
        }
    }
}

struct ServerChild(Child);

impl Drop for ServerChild {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One step's measurement.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    /// Idle connections open.
    pub connections: usize,
    /// Server resident set, KiB.
    pub rss_kib: u64,
}

/// Runs the experiment; returns the steps.
pub fn measure(settings: &Settings) -> io::Result<Vec<Step>> {
    let most = *settings.counts.iter().max().unwrap_or(&0);
    if let Some(limit) = open_files_limit() {
        if limit < most + 64 {
            return Err(io::Error::other(format!(
                "{most} connections need more open files than the limit {limit}: raise it with `ulimit -n {}`",
                most + 64
            )));
        }
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let data_dir = std::env::temp_dir().join(format!("snapscale-lab-idle-{}", std::process::id()));
    let child = Command::new(std::env::current_exe()?)
        .args(["serve", "--port", &port.to_string(), "--max-connections", &(most + 16).to_string()])
        .arg("--data-dir")
        .arg(&data_dir)
        .env("SNAPSCALE_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()?;
    let server = ServerChild(child);
    let pid = server.0.id();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        // Wait for the server to listen.
        let mut ready = false;
        for _ in 0..200 {
            if let Ok(c) = connect(port).await {
                drop(c);
                ready = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        if !ready {
            return Err(io::Error::other("the server did not start"));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut open = Vec::with_capacity(most);
        let mut steps = Vec::new();
        for &count in &settings.counts {
            while open.len() < count {
                open.push(connect(port).await?);
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
            steps.push(Step { connections: count, rss_kib: rss_kib(pid)? });
        }
        // The server still accepts and answers with everything open.
        drop(connect(port).await?);
        Ok(steps)
    })
}

/// KiB per idle connection from the first to the last step.
pub fn per_connection_kib(steps: &[Step]) -> Option<f64> {
    let (first, last) = (steps.first()?, steps.last()?);
    (last.connections > first.connections)
        .then(|| (last.rss_kib as f64 - first.rss_kib as f64) / (last.connections - first.connections) as f64)
}

/// Runs the experiment and writes CSV, SVG and Markdown.
pub fn run(settings: &Settings) -> io::Result<Written> {
    let steps = measure(settings)?;
    let mut table = Table::new(&["idle_connections", "server_rss_kib"]);
    for s in &steps {
        table.push(vec![Value::from(s.connections), Value::from(s.rss_kib)]);
    }
    let per = per_connection_kib(&steps);
    let summary = match per {
        Some(kib) => format!(
            "Server resident memory grows by **{kib:.1} KiB per idle connection** ({} → {} connections), \
             including the proc-array slot, the connection task and pgwire's buffers.\n",
            steps[0].connections,
            steps[steps.len() - 1].connections
        ),
        None => "Not enough steps to compute a per-connection figure.\n".into(),
    };
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
    let settings_list = vec![
        ("idle connections".to_string(), crate::report::stats::list(&settings.counts)),
        (
            "server".to_string(),
            "snapscale serve (release build of this binary), default snapshot_mode".to_string(),
        ),
        ("open files limit".to_string(), open_files_limit().map_or("unknown".into(), |l| l.to_string())),
        ("settle time per step".to_string(), "300 ms".to_string()),
    ];
    ResultSet::new(&settings.out_dir, &settings.name).write(&table, &figure, &summary, &settings_list)
}
