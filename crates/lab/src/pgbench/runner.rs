//! The pgbench program: finding it, `pgbench -i`, timed runs and what they printed.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Time a pgbench run may take beyond `-T` (connecting, pgbench's vacuum)
/// before it counts as hung and is killed.
pub(crate) const RUN_GRACE: Duration = Duration::from_secs(120);

/// Time `pgbench -i` may take.
pub(crate) const INIT_LIMIT: Duration = Duration::from_secs(600);

/// What one timed pgbench run reported.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Transactions per second without the initial connection time.
    pub tps: f64,
    /// Average latency, ms.
    pub latency_ms: f64,
    /// Transactions that completed.
    pub processed: u64,
    /// Transactions that failed (serialization or deadlock errors; pgbench
    /// 15 counts them instead of aborting the client).
    pub failed: u64,
    /// Set when pgbench exited with an error although it printed a result
    /// (a client aborted): pgbench's own messages, for the report.
    pub problem: Option<String>,
}

/// A pgbench binary.
#[derive(Clone, Debug)]
pub struct Pgbench {
    pub(super) program: PathBuf,
    /// `pgbench --version`.
    pub version: String,
    /// Runs under `taskset -c` on this CPU only.
    pub(super) pin: Option<usize>,
}

impl Pgbench {
    /// PostgreSQL's bin directory first, so client and server versions
    /// match, then `PATH`.
    pub fn find(pg_bin: &Path) -> Result<Pgbench, String> {
        for program in [pg_bin.join("pgbench"), PathBuf::from("pgbench")] {
            let Ok(out) = Command::new(&program).arg("--version").output() else { continue };
            if out.status.success() {
                let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
                return Ok(Pgbench { program, version, pin: None });
            }
        }
        Err(format!("no pgbench in {} or on PATH", pg_bin.display()))
    }

    /// `pgbench -i -s scale`; returns pgbench's "done in ..." line.
    pub fn init(&self, port: u16, scale: u32) -> Result<String, String> {
        let output = self.execute(port, &["-i".into(), "-s".into(), scale.to_string()], INIT_LIMIT)?;
        if !output.status.success() {
            return Err(format!("pgbench -i exited with {}:\n{}", output.status, tail(&output.text(), 20)));
        }
        let done = output.stdout.lines().chain(output.stderr.lines()).find(|l| l.starts_with("done in "));
        Ok(done.unwrap_or("done").trim().to_owned())
    }

    /// The same pgbench confined to `cpu`.
    pub(super) fn pinned_to(&self, cpu: usize) -> Pgbench {
        Pgbench { pin: Some(cpu), ..self.clone() }
    }

    /// pgbench, under `taskset -c` when pinned.
    fn program(&self) -> Command {
        match self.pin {
            None => Command::new(&self.program),
            Some(cpu) => {
                let mut command = Command::new("taskset");
                command.args(["-c", &cpu.to_string()]).arg(&self.program);
                command
            }
        }
    }

    /// One timed run: `-M prepared -b workload -c clients -j clients -T seconds`.
    pub fn run(&self, port: u16, workload: &str, clients: usize, seconds: u32) -> Result<Outcome, String> {
        self.run_threads(port, workload, clients, clients, seconds)
    }

    /// One timed run: `-M prepared -b workload -c clients -j threads -T seconds`.
    ///
    /// Without `-n`, so pgbench first vacuums pgbench_branches and
    /// pgbench_tellers and truncates pgbench_history, outside the timed part:
    /// every run starts from the same tables on either server.
    pub fn run_threads(
        &self,
        port: u16,
        workload: &str,
        clients: usize,
        threads: usize,
        seconds: u32,
    ) -> Result<Outcome, String> {
        let args: Vec<String> = ["-M", "prepared", "-b", workload]
            .iter()
            .map(|s| s.to_string())
            .chain(["-c".into(), clients.to_string(), "-j".into(), threads.to_string()])
            .chain(["-T".into(), seconds.to_string()])
            .collect();
        self.run_args(port, &args, seconds)
    }

    /// One timed run with exactly `args` (which hold `-T seconds`).
    pub fn run_args(&self, port: u16, args: &[String], seconds: u32) -> Result<Outcome, String> {
        let output = self.execute(port, args, Duration::from_secs(seconds.into()) + RUN_GRACE)?;
        let text = output.text();
        let Some(tps) = parse_tps(&output.stdout) else {
            return Err(format!("pgbench printed no tps (exit {}):\n{}", output.status, tail(&text, 20)));
        };
        Ok(Outcome {
            tps,
            latency_ms: parse_after(&output.stdout, "latency average = ").unwrap_or(f64::NAN),
            processed: parse_after(&output.stdout, "number of transactions actually processed: ")
                .unwrap_or(0),
            failed: parse_after(&output.stdout, "number of failed transactions: ").unwrap_or(0),
            problem: (!output.status.success())
                .then(|| format!("exit {}: {}", output.status, tail(&output.stderr, 10))),
        })
    }

    /// pgbench against 127.0.0.1:port as user postgres with `args`, then
    /// database postgres, not started: for a caller that reads its output
    /// as it comes (`lab endurance` follows `-P` progress lines).
    pub(crate) fn command(&self, port: u16, args: &[String]) -> Command {
        let mut command = self.program();
        command
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "postgres"])
            .args(args)
            .arg("postgres");
        command
    }

    /// Runs pgbench against 127.0.0.1:port as user postgres, database
    /// postgres, killing it after `limit`: a server that hangs must not hang
    /// the experiment, and what pgbench printed until then is the evidence.
    pub(super) fn execute(&self, port: u16, args: &[String], limit: Duration) -> Result<Output, String> {
        let mut command = self.program();
        command
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "postgres"])
            .args(args)
            .arg("postgres");
        run_to_end(command, limit, &format!("pgbench {}", args.join(" ")))
    }
}

/// Runs `command` (`what`, for messages) to its end with its output
/// captured, killing it after `limit`: a server that hangs must not hang
/// the experiment, and what the client printed until then is the evidence.
pub(crate) fn run_to_end(mut command: Command, limit: Duration, what: &str) -> Result<Output, String> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start {what}: {e}"))?;
    // Read both pipes on threads so that neither can fill up and block the client.
    let stdout = reader(child.stdout.take());
    let stderr = reader(child.stderr.take());
    let deadline = Instant::now() + limit;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(50)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let output = Output {
        status: status.unwrap_or_default(),
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    };
    match status {
        Some(_) => Ok(output),
        None => Err(format!(
            "{what} did not finish within {} s and was killed; it printed:\n{}",
            limit.as_secs(),
            tail(&output.text(), 20)
        )),
    }
}

/// What a finished client (pgbench, sysbench) printed.
pub(crate) struct Output {
    pub(crate) status: ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

impl Output {
    pub(crate) fn text(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

pub(super) fn reader<R: Read + Send + 'static>(pipe: Option<R>) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_string(&mut text);
        }
        text
    })
}

/// The last `n` lines of `text`.
pub(crate) fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The tps of "tps = 1234.5 (without initial connection time)".
pub(super) fn parse_tps(stdout: &str) -> Option<f64> {
    stdout
        .lines()
        .filter(|l| l.contains("without initial connection time"))
        .find_map(|l| l.trim().strip_prefix("tps = ")?.split_whitespace().next()?.parse().ok())
}

/// The first number after `prefix` on the line that starts with it;
/// "5073/5073" (pgbench's form with `-t`) gives 5073.
pub(super) fn parse_after<T: std::str::FromStr>(stdout: &str, prefix: &str) -> Option<T> {
    let rest = stdout.lines().find_map(|l| l.trim().strip_prefix(prefix))?;
    rest.split(|c: char| c.is_whitespace() || c == '/').next()?.parse().ok()
}
