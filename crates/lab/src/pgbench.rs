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
//! The pgbench runner ([`Pgbench`]) is shared with `lab idle`, which runs
//! the same clients next to 10 000 idle connections.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::child::{free_port, wait_until_accepting, ServerChild};
use crate::disk::{self, SyncLatency, SyncPattern};
use crate::report::plot::{Figure, Panel, Series};
use crate::report::stats::{list, median};
use crate::report::table::{Table, Value};
use crate::report::{ResultSet, Written};

/// pgbench's built-in scripts, in report order.
pub const WORKLOADS: [&str; 2] = ["select-only", "tpcb-like"];

/// Where Debian's PostgreSQL 15 packages put the server binaries.
pub const PG15_BIN: &str = "/usr/lib/postgresql/15/bin";

/// Time a pgbench run may take beyond `-T` (connecting, pgbench's vacuum)
/// before it counts as hung and is killed.
const RUN_GRACE: Duration = Duration::from_secs(120);

/// Time `pgbench -i` may take.
const INIT_LIMIT: Duration = Duration::from_secs(600);

/// The experiment's settings.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `-T`: seconds per run.
    pub seconds: u32,
    /// Rounds; every round runs every cell on both servers.
    pub rounds: usize,
    /// pgbench's built-in scripts, in report order.
    pub workloads: Vec<&'static str>,
    /// Client counts (`-c`).
    pub clients: Vec<usize>,
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
}

impl Settings {
    /// 20-second runs, 3 rounds: about 9 minutes.
    pub fn full(out_dir: PathBuf) -> Self {
        Self {
            seconds: 20,
            rounds: 3,
            workloads: WORKLOADS.to_vec(),
            clients: vec![1, 2],
            max_threads: thread::available_parallelism().map_or(2, |n| n.get()),
            scale: 1,
            pg_bin: PG15_BIN.into(),
            out_dir,
            name: "pgbench".into(),
            durable: false,
            probe_seconds: 0,
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

    /// pgbench threads for `clients` clients.
    fn threads(&self, clients: usize) -> usize {
        clients.min(self.max_threads.max(1))
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

    /// PostgreSQL's `-c` settings.
    fn postgres_settings(&self) -> &'static [(&'static str, &'static str)] {
        if self.durable {
            &[("fsync", "on"), ("synchronous_commit", "on"), ("full_page_writes", "on")]
        } else {
            &[("fsync", "off"), ("synchronous_commit", "off"), ("full_page_writes", "off")]
        }
    }
}

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
    program: PathBuf,
    /// `pgbench --version`.
    pub version: String,
}

impl Pgbench {
    /// PostgreSQL's bin directory first, so client and server versions
    /// match, then `PATH`.
    pub fn find(pg_bin: &Path) -> Result<Pgbench, String> {
        for program in [pg_bin.join("pgbench"), PathBuf::from("pgbench")] {
            let Ok(out) = Command::new(&program).arg("--version").output() else { continue };
            if out.status.success() {
                let version = String::from_utf8_lossy(&out.stdout).trim().to_owned();
                return Ok(Pgbench { program, version });
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
        let output = self.execute(port, &args, Duration::from_secs(seconds.into()) + RUN_GRACE)?;
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

    /// Runs pgbench against 127.0.0.1:port as user postgres, database
    /// postgres, killing it after `limit`: a server that hangs must not hang
    /// the experiment, and what pgbench printed until then is the evidence.
    fn execute(&self, port: u16, args: &[String], limit: Duration) -> Result<Output, String> {
        let mut child = Command::new(&self.program)
            .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "postgres"])
            .args(args)
            .arg("postgres")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", self.program.display()))?;
        // Read both pipes on threads so that neither can fill up and block pgbench.
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
                "pgbench {} did not finish within {} s and was killed; it printed:\n{}",
                args.join(" "),
                limit.as_secs(),
                tail(&output.text(), 20)
            )),
        }
    }
}

/// What a finished pgbench printed.
struct Output {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl Output {
    fn text(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

fn reader<R: Read + Send + 'static>(pipe: Option<R>) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_string(&mut text);
        }
        text
    })
}

/// The last `n` lines of `text`.
fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// The tps of "tps = 1234.5 (without initial connection time)".
fn parse_tps(stdout: &str) -> Option<f64> {
    stdout
        .lines()
        .filter(|l| l.contains("without initial connection time"))
        .find_map(|l| l.trim().strip_prefix("tps = ")?.split_whitespace().next()?.parse().ok())
}

/// The first number after `prefix` on the line that starts with it;
/// "5073/5073" (pgbench's form with `-t`) gives 5073.
fn parse_after<T: std::str::FromStr>(stdout: &str, prefix: &str) -> Option<T> {
    let rest = stdout.lines().find_map(|l| l.trim().strip_prefix(prefix))?;
    rest.split(|c: char| c.is_whitespace() || c == '/').next()?.parse().ok()
}

/// The effective user id, from /proc.
fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| l.strip_prefix("Uid:"))?.split_whitespace().nth(1)?.parse().ok()
}

/// The last lines of a server's log file.
fn log_tail(path: &Path) -> String {
    std::fs::read_to_string(path).map(|t| tail(&t, 20)).unwrap_or_else(|e| format!("(no log: {e})"))
}

/// A PostgreSQL cluster in a temporary directory, run by `postgres` as a
/// child; stopped and removed on drop.
struct Postgres {
    child: Child,
    bin: PathBuf,
    data_dir: PathBuf,
    /// Running as root: every PostgreSQL program goes through `runuser`.
    as_postgres: bool,
}

impl Postgres {
    fn command(bin: &Path, as_postgres: bool, program: &str) -> Command {
        if as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(bin.join(program));
            c
        } else {
            Command::new(bin.join(program))
        }
    }

    /// initdb, then `postgres` on `port` with `-c name=value` for each of
    /// `settings`; waits until it accepts connections.
    fn start(
        bin: &Path,
        port: u16,
        data_dir: PathBuf,
        log: &Path,
        settings: &[(&str, &str)],
    ) -> Result<Postgres, String> {
        for program in ["initdb", "postgres", "pg_ctl"] {
            if !bin.join(program).exists() {
                return Err(format!("PostgreSQL 15 not found: no {}", bin.join(program).display()));
            }
        }
        let as_postgres = effective_uid() == Some(0);
        if as_postgres {
            let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
            if !passwd.lines().any(|l| l.starts_with("postgres:")) {
                return Err("running as root, and there is no postgres user to run PostgreSQL".into());
            }
        }
        let _ = std::fs::remove_dir_all(&data_dir);
        // initdb creates the directory itself; /tmp lets the postgres user do that.
        let init = Self::command(bin, as_postgres, "initdb")
            .arg("-D")
            .arg(&data_dir)
            .args(["-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"])
            .output()
            .map_err(|e| format!("cannot run initdb: {e}"))?;
        if !init.status.success() {
            return Err(format!(
                "initdb failed ({}):\n{}",
                init.status,
                tail(&String::from_utf8_lossy(&init.stderr), 20)
            ));
        }
        let log_file = File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
        let child = Self::command(bin, as_postgres, "postgres")
            .arg("-D")
            .arg(&data_dir)
            .args(["-p", &port.to_string(), "-k", "/tmp", "-c", "listen_addresses=127.0.0.1"])
            .args(settings.iter().flat_map(|(name, value)| ["-c".to_owned(), format!("{name}={value}")]))
            .stdin(Stdio::null())
            .stdout(log_file.try_clone().map_err(|e| e.to_string())?)
            .stderr(log_file)
            .spawn()
            .map_err(|e| format!("cannot start postgres: {e}"))?;
        let mut pg = Postgres { child, bin: bin.to_owned(), data_dir, as_postgres };
        wait_until_accepting(port, "postgres", &mut pg.child)
            .map_err(|e| format!("PostgreSQL did not start: {e}\n{}", log_tail(log)))?;
        Ok(pg)
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        // A fast shutdown through pg_ctl reaches the postmaster itself;
        // killing runuser would leave it running.
        let stopped = Self::command(&self.bin, self.as_postgres, "pg_ctl")
            .arg("-D")
            .arg(&self.data_dir)
            .args(["stop", "-m", "fast", "-w"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !stopped {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}

/// The two servers under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Snapscale,
    Postgres,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::Snapscale => "snapscale",
            Kind::Postgres => "PostgreSQL 15",
        }
    }
}

enum Process {
    Snapscale(ServerChild),
    Postgres(Postgres),
}

/// A server under test, with where its log goes.
struct Server {
    kind: Kind,
    port: u16,
    process: Process,
    log: PathBuf,
    /// Set once the process has exited: why, for every later run.
    gone: Option<String>,
    data_dir: PathBuf,
}

impl Server {
    fn child(&mut self) -> &mut Child {
        match &mut self.process {
            Process::Snapscale(s) => s.child(),
            Process::Postgres(p) => &mut p.child,
        }
    }

    /// None while the process runs; afterwards its exit status and log.
    fn check_gone(&mut self) -> Option<String> {
        if self.gone.is_none() {
            if let Ok(Some(status)) = self.child().try_wait() {
                self.gone = Some(format!(
                    "{} exited ({status}); its log ends:\n{}",
                    self.kind.label(),
                    log_tail(&self.log)
                ));
            }
        }
        self.gone.clone()
    }
}

/// One timed run.
#[derive(Clone, Debug)]
struct Run {
    round: usize,
    workload: &'static str,
    clients: usize,
    threads: usize,
    server: Kind,
    result: Result<Outcome, String>,
    /// Flush requests the data directories' block device completed during
    /// the run (pgbench's untimed vacuum included), where the kernel counts
    /// them.
    disk_flushes: Option<u64>,
}

impl Run {
    /// Device flushes per completed transaction.
    fn flushes_per_transaction(&self) -> Option<f64> {
        let (o, flushes) = (self.result.as_ref().ok()?, self.disk_flushes?);
        (o.processed > 0).then(|| flushes as f64 / o.processed as f64)
    }
}

/// Starts snapscale, the same way as `lab idle`, with its log in `work`.
fn start_snapscale(settings: &Settings, work: &Path) -> Result<Server, String> {
    let port = free_port().map_err(|e| e.to_string())?;
    let log = work.join("snapscale.log");
    let log_file = File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let data_dir = work.join("snapscale-data");
    let mut child =
        ServerChild::spawn_with(port, 100, data_dir.clone(), log_file.into(), settings.snapscale_settings())
            .map_err(|e| format!("cannot start snapscale serve: {e}"))?;
    wait_until_accepting(port, "postgres", child.child())
        .map_err(|e| format!("snapscale did not start: {e}\n{}", log_tail(&log)))?;
    Ok(Server { kind: Kind::Snapscale, port, process: Process::Snapscale(child), log, gone: None, data_dir })
}

fn start_postgres(settings: &Settings, work: &Path) -> Result<Server, String> {
    let port = free_port().map_err(|e| e.to_string())?;
    let log = work.join("postgres.log");
    let data_dir = std::env::temp_dir().join(format!("snapscale-lab-pgbench-{}-pgdata", std::process::id()));
    let pg = Postgres::start(&settings.pg_bin, port, data_dir.clone(), &log, settings.postgres_settings())?;
    Ok(Server { kind: Kind::Postgres, port, process: Process::Postgres(pg), log, gone: None, data_dir })
}

/// What `SHOW` reports for each of `settings` on the server at `port`,
/// through PostgreSQL's psql: proof that the server runs with what the
/// report says, whatever its defaults.
fn show(pg_bin: &Path, port: u16, settings: &[(&str, &str)]) -> String {
    let mut psql = Command::new(pg_bin.join("psql"));
    psql.args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "postgres", "-X", "-A", "-t"]);
    for (name, _) in settings {
        psql.args(["-c", &format!("SHOW {name}")]);
    }
    match psql.arg("postgres").stdin(Stdio::null()).output() {
        Ok(out) if out.status.success() => {
            let values = String::from_utf8_lossy(&out.stdout);
            let values: Vec<&str> = values.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
            if values.len() != settings.len() {
                return format!("not checked: psql printed {values:?}");
            }
            settings
                .iter()
                .zip(values)
                .map(|((name, _), v)| format!("{name}={v}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
        Ok(out) => format!(
            "not checked: psql exited with {}: {}",
            out.status,
            tail(&String::from_utf8_lossy(&out.stderr), 3)
        ),
        Err(e) => format!("not checked: cannot run psql: {e}"),
    }
}

/// The filesystem under the data directories and what a sync costs there.
struct Disk {
    /// The filesystem of the working directory (snapscale's data directory).
    filesystem: Option<disk::Filesystem>,
    /// Per server: its data directory and whether it is on the working
    /// directory's device.
    data_dirs: Vec<(Kind, PathBuf, bool)>,
    /// The block device whose flushes are counted, by name.
    device: Option<String>,
    /// The probe's write + fdatasync latencies, per pattern.
    latencies: Vec<Result<SyncLatency, String>>,
    /// pg_test_fsync's fdatasync line, when it ran.
    pg_test_fsync: Option<Result<String, String>>,
}

/// Times fdatasync in `work` in both write patterns, then runs
/// pg_test_fsync there: before any server starts, on a quiet disk.
fn probe_disk(settings: &Settings, work: &Path) -> Disk {
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
struct Measurement {
    pgbench: Pgbench,
    /// Per server: its label and `pgbench -i` line.
    inits: Vec<(Kind, Result<String, String>)>,
    /// Why PostgreSQL was not measured, if it was not.
    postgres_skipped: Option<String>,
    /// `postgres --version`.
    postgres_version: String,
    /// Per server: the settings the variant sets, as `SHOW` reported them.
    shown: Vec<(Kind, String)>,
    /// The disk, probed in the durable variant only.
    disk: Option<Disk>,
    /// PostgreSQL's checkpoints during the experiment, from its log (it
    /// logs them by default since 15).
    postgres_checkpoints: Option<Checkpoints>,
    /// The redo LSN of snapscale's latest checkpoint when the runs ended
    /// (it logs none at the warn level the lab runs it with, and keeps only
    /// the latest checkpoint file).
    snapscale_checkpoint: Option<u64>,
    /// /proc/loadavg before the servers started and after the last run:
    /// other work on the machine shows here.
    load: (String, String),
    runs: Vec<Run>,
}

fn measure(settings: &Settings) -> io::Result<Measurement> {
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
struct Checkpoints {
    started: usize,
    completed: usize,
}

/// The redo LSN in the name of the newest `checkpoint-<16 hex>` file in
/// snapscale's data directory.
fn latest_checkpoint(data_dir: &Path) -> Option<u64> {
    std::fs::read_dir(data_dir)
        .ok()?
        .filter_map(|e| e.ok()?.file_name().to_str()?.strip_prefix("checkpoint-").map(str::to_owned))
        .filter_map(|hex| u64::from_str_radix(&hex, 16).ok())
        .max()
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

fn measure_in(settings: &Settings, pgbench: Pgbench, work: &Path) -> io::Result<Measurement> {
    let load_before = load_average();
    let mut disk = settings.durable.then(|| probe_disk(settings, work));
    let mut servers = vec![start_snapscale(settings, work).map_err(io::Error::other)?];
    let mut postgres_skipped = None;
    match start_postgres(settings, work) {
        Ok(pg) => servers.push(pg),
        Err(why) => {
            eprintln!("lab pgbench: measuring snapscale alone: {why}");
            postgres_skipped = Some(why);
        }
    }
    let postgres_version = Command::new(settings.pg_bin.join("postgres"))
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|_| "unknown".into());
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
            let names = if s.kind == Kind::Snapscale {
                settings.snapscale_settings()
            } else {
                settings.postgres_settings()
            };
            let shown = show(&settings.pg_bin, s.port, names);
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
    let mut runs = Vec::new();
    for round in 1..=settings.rounds {
        for &workload in &settings.workloads {
            for &clients in &settings.clients {
                let threads = settings.threads(clients);
                // Alternate who goes first, so neither always follows the other.
                let order: Vec<usize> = if round % 2 == 1 {
                    (0..servers.len()).collect()
                } else {
                    (0..servers.len()).rev().collect()
                };
                for i in order {
                    let server = &mut servers[i];
                    let before = flushes();
                    let result = match server.check_gone() {
                        Some(why) => Err(why),
                        None => {
                            pgbench.run_threads(server.port, workload, clients, threads, settings.seconds)
                        }
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
                    let run =
                        Run { round, workload, clients, threads, server: server.kind, result, disk_flushes };
                    match &run.result {
                        Ok(o) => eprintln!(
                            "lab pgbench: round {round}/{} {workload} c={clients} {}: {:.0} tps, {} failed{}{}",
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
                            "lab pgbench: round {round} {workload} c={clients} {}: FAILED: {why}",
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

/// One cell's summary over the rounds.
#[derive(Clone, Debug)]
struct Cell {
    workload: &'static str,
    clients: usize,
    snapscale_tps: Option<f64>,
    postgres_tps: Option<f64>,
    /// Median of the per-round ratios snapscale / PostgreSQL.
    ratio: Option<f64>,
    /// The per-round ratios, in round order: their spread is the honest
    /// error bar on this VM.
    round_ratios: Vec<f64>,
    snapscale_failed: u64,
    postgres_failed: u64,
    /// Median over rounds of the device flushes per transaction.
    snapscale_flushes: Option<f64>,
    postgres_flushes: Option<f64>,
    /// Median over rounds of the average latency, ms.
    snapscale_latency_ms: Option<f64>,
    postgres_latency_ms: Option<f64>,
}

impl Cell {
    fn tps(&self, kind: Kind) -> Option<f64> {
        if kind == Kind::Snapscale {
            self.snapscale_tps
        } else {
            self.postgres_tps
        }
    }

    fn flushes(&self, kind: Kind) -> Option<f64> {
        if kind == Kind::Snapscale {
            self.snapscale_flushes
        } else {
            self.postgres_flushes
        }
    }

    fn latency_ms(&self, kind: Kind) -> Option<f64> {
        if kind == Kind::Snapscale {
            self.snapscale_latency_ms
        } else {
            self.postgres_latency_ms
        }
    }
}

fn cells(settings: &Settings, runs: &[Run]) -> Vec<Cell> {
    let mut cells = Vec::new();
    for &workload in &settings.workloads {
        for &clients in &settings.clients {
            let of = |kind: Kind| -> Vec<&Run> {
                runs.iter()
                    .filter(|r| r.workload == workload && r.clients == clients && r.server == kind)
                    .collect()
            };
            let median_of = |v: Vec<f64>| (!v.is_empty()).then(|| median(v));
            let ok = |kind: Kind| -> Vec<Outcome> {
                of(kind).iter().filter_map(|r| r.result.as_ref().ok()).cloned().collect()
            };
            let tps = |kind: Kind| median_of(ok(kind).iter().map(|o| o.tps).collect());
            let latency = |kind: Kind| median_of(ok(kind).iter().map(|o| o.latency_ms).collect());
            let failed = |kind: Kind| -> u64 { ok(kind).iter().map(|o| o.failed).sum() };
            let flushes =
                |kind: Kind| median_of(of(kind).iter().filter_map(|r| r.flushes_per_transaction()).collect());
            let ratios: Vec<f64> = (1..=settings.rounds)
                .filter_map(|round| {
                    let in_round = |kind: Kind| {
                        of(kind)
                            .iter()
                            .find(|r| r.round == round)
                            .and_then(|r| r.result.as_ref().ok())
                            .map(|o| o.tps)
                    };
                    Some(in_round(Kind::Snapscale)? / in_round(Kind::Postgres)?)
                })
                .collect();
            cells.push(Cell {
                workload,
                clients,
                snapscale_tps: tps(Kind::Snapscale),
                postgres_tps: tps(Kind::Postgres),
                ratio: median_of(ratios.clone()),
                round_ratios: ratios,
                snapscale_failed: failed(Kind::Snapscale),
                postgres_failed: failed(Kind::Postgres),
                snapscale_flushes: flushes(Kind::Snapscale),
                postgres_flushes: flushes(Kind::Postgres),
                snapscale_latency_ms: latency(Kind::Snapscale),
                postgres_latency_ms: latency(Kind::Postgres),
            });
        }
    }
    cells
}

fn ratios_text(ratios: &[f64]) -> String {
    ratios.iter().map(|r| format!("{r:.2}")).collect::<Vec<_>>().join(", ")
}

fn number_or_na(x: Option<f64>) -> Value {
    x.map_or(Value::from("n/a"), Value::from)
}

fn figure(settings: &Settings, cells: &[Cell], with_postgres: bool) -> Figure {
    let mut kinds = vec![Kind::Snapscale];
    if with_postgres {
        kinds.push(Kind::Postgres);
    }
    let panel = |title: String, workload: &str, y: &dyn Fn(&Cell, Kind) -> Option<f64>| Panel {
        title,
        series: kinds
            .iter()
            .map(|&kind| Series {
                label: kind.label().into(),
                points: cells
                    .iter()
                    .filter(|c| c.workload == workload)
                    .filter_map(|c| Some((c.clients as f64, y(c, kind)?)))
                    .collect(),
            })
            .collect(),
    };
    let mut panels: Vec<Panel> = settings
        .workloads
        .iter()
        .map(|&workload| {
            let title = if settings.durable {
                format!("{workload}, fsync on: transactions per second")
            } else {
                format!("{workload}, -M prepared")
            };
            panel(title, workload, &|c: &Cell, kind| c.tps(kind))
        })
        .collect();
    if settings.durable {
        // Group commit shows as fewer flushes than transactions.
        panels.extend(settings.workloads.iter().map(|&workload| {
            panel(format!("{workload}: disk flushes per transaction"), workload, &|c: &Cell, kind| {
                c.flushes(kind)
            })
        }));
    }
    Figure {
        title: if settings.durable {
            "pgbench, durable commits: snapscale and PostgreSQL 15 (median of rounds)".into()
        } else {
            "pgbench: snapscale and PostgreSQL 15 (median of rounds)".into()
        },
        x_label: "clients".into(),
        y_label: if settings.durable {
            "see the panel titles".into()
        } else {
            "transactions per second".into()
        },
        x_log: false,
        y_log: false,
        panels,
    }
}

fn fmt_opt(x: Option<f64>, decimals: usize) -> String {
    x.map_or("n/a".into(), |x| format!("{x:.decimals$}"))
}

/// The durable variant's paragraphs on the fsync latency and on group
/// commit, with the measured numbers in them.
fn durable_text(settings: &Settings, m: &Measurement, cells: &[Cell]) -> String {
    let mut out = String::new();
    let latency = |pattern: SyncPattern| {
        m.disk.as_ref()?.latencies.iter().filter_map(|l| l.as_ref().ok()).find(|l| l.pattern == pattern)
    };
    if let Some(disk) = &m.disk {
        let fs = disk.filesystem.as_ref().map_or("an unknown filesystem".into(), |f| f.to_string());
        let lines: Vec<String> = disk
            .latencies
            .iter()
            .map(|l| match l {
                Ok(l) => format!("- {l}"),
                Err(e) => format!("- the probe failed: {e}"),
            })
            .collect();
        out.push_str(&format!(
            "**fsync latency.** Measured once, before the servers started, in the temporary directory \
             that holds both data directories ({fs}), {} s per pattern:\n\n{}\n",
            settings.probe_seconds,
            lines.join("\n")
        ));
        match &disk.pg_test_fsync {
            Some(Ok(line)) => out.push_str(&format!(
                "- PostgreSQL's `pg_test_fsync` in the same directory, one 8 kB write (its first, \
                 mean-based section; the wal_sync_method PostgreSQL uses on Linux): {line}\n"
            )),
            Some(Err(why)) => out.push_str(&format!("- pg_test_fsync failed: {why}\n")),
            None => {}
        }
        out.push('\n');
    }

    let first = settings.clients.iter().min().copied().unwrap_or(1);
    let most = settings.clients.iter().max().copied().unwrap_or(1);
    let cell = |clients: usize| cells.iter().find(|c| c.clients == clients);
    let kinds: Vec<Kind> = if m.postgres_skipped.is_none() {
        vec![Kind::Snapscale, Kind::Postgres]
    } else {
        vec![Kind::Snapscale]
    };
    let describe = |kind: Kind| -> String {
        let at = |clients: usize| -> String {
            let c = cell(clients);
            format!(
                "{} tps at {clients} client{} ({} ms per transaction, {} disk flushes per transaction)",
                fmt_opt(c.and_then(|c| c.tps(kind)), 0),
                if clients == 1 { "" } else { "s" },
                fmt_opt(c.and_then(|c| c.latency_ms(kind)), 2),
                fmt_opt(c.and_then(|c| c.flushes(kind)), 2)
            )
        };
        let sharing = cell(first)
            .and_then(|c| c.flushes(kind))
            .zip(cell(most).and_then(|c| c.flushes(kind)))
            .filter(|(_, many)| *many > 0.0)
            .map(|(one, many)| {
                format!(", so about {:.1} commits shared each sync at {most} clients", one / many)
            })
            .unwrap_or_default();
        format!("{} made {} and {}{sharing}", kind.label(), at(first), at(most))
    };
    // The device's flush rate at the most clients, against the rate of
    // back-to-back syncs in the probe's pattern for that server's WAL.
    let rate = |kind: Kind| -> Option<String> {
        let c = cell(most)?;
        let per_second = c.tps(kind)? * c.flushes(kind)?;
        let pattern = if kind == Kind::Snapscale { SyncPattern::Append } else { SyncPattern::InPlace };
        let serial = latency(pattern).map_or(String::new(), |l| {
            format!(
                " ({:.0} % of the {:.0} back-to-back syncs per second the probe's {} median allows)",
                100.0 * per_second * l.median_us / 1e6,
                1e6 / l.median_us,
                if pattern == SyncPattern::Append { "append" } else { "in-place" }
            )
        });
        Some(format!("{} about {per_second:.0}{serial}", kind.label()))
    };
    // How much of a lone client's transaction the sync is.
    let one_client = {
        let ms: Vec<String> = kinds
            .iter()
            .filter_map(|&k| Some(format!("{} {:.2} ms", k.label(), cell(first)?.latency_ms(k)?)))
            .collect();
        let syncs: Vec<String> = m
            .disk
            .iter()
            .flat_map(|d| &d.latencies)
            .flatten()
            .map(|l| format!("{:.2} ms", l.median_us / 1e3))
            .collect();
        if first == 1 && !ms.is_empty() && !syncs.is_empty() {
            format!(
                " At 1 client the sync is only part of each transaction's latency ({} per transaction, \
                 against median syncs of {} in the probe): the rest is the transaction's seven \
                 statements, each a round trip in which one process waits for the other to be woken, \
                 which on this VM often means waking an idle CPU. That is also why 2 clients can show a \
                 lower latency than 1, and why single-client numbers move most from round to round.",
                ms.join(", "),
                syncs.join(" and ")
            )
        } else {
            String::new()
        }
    };
    let rates: Vec<String> = kinds.iter().filter_map(|&k| rate(k)).collect();
    let rates = if rates.is_empty() {
        String::new()
    } else {
        format!(
            " At {most} clients the device completed, as tps × flushes per transaction, {} flushes per \
             second; snapscale appends to its WAL segments and PostgreSQL overwrites preallocated ones, \
             hence the two patterns.",
            rates.join(" and ")
        )
    };
    let bound = latency(SyncPattern::InPlace)
        .map(|l| {
            format!(
                " Syncs one after another, at the in-place median of {:.0} µs, would allow at most {:.0} \
                 commits per second{}.",
                l.median_us,
                1e6 / l.median_us,
                latency(SyncPattern::Append)
                    .map(|a| format!(
                        " ({:.0} at the append median of {:.0} µs)",
                        1e6 / a.median_us,
                        a.median_us
                    ))
                    .unwrap_or_default()
            )
        })
        .unwrap_or_default();
    out.push_str(&format!(
        "**Group commit.** With synchronous_commit on, a server acknowledges a commit only after an \
         fdatasync of the WAL that covers the commit record has returned, so one client commits at most \
         once per sync, and its latency is its transaction's work plus one sync.{bound} Group commit is \
         what lets concurrent clients do better: one sync covers every record written before it starts, \
         so commits that arrive while a sync runs wait for the next one and share it. In snapscale one \
         WAL flusher thread syncs everything appended so far and then wakes every commit it covered; in \
         PostgreSQL the backend that holds WALWriteLock flushes all WAL inserted so far, and the \
         backends queued behind it find their records already flushed. commit_delay is 0 in PostgreSQL \
         and snapscale has none, so neither waits to gather a larger group: a group is whatever \
         queued up during the previous sync. {}.{one_client} The disk flushes per transaction at 1 client are what \
         one commit's sync costs in device flushes on this filesystem, and their drop at {most} clients \
         is the sharing; the estimate of commits per sync divides the two, so it assumes a sync costs as \
         many flushes at {most} clients as at 1.{rates} With {most} clients on {} CPUs (pgbench's threads \
         included), the size of a group is also bounded by how many clients get CPU time to reach their \
         commit during one sync.\n\n",
        kinds.iter().map(|&k| describe(k)).collect::<Vec<_>>().join("; "),
        thread::available_parallelism().map_or(1, |n| n.get())
    ));
    out
}

fn summary(settings: &Settings, m: &Measurement, cells: &[Cell]) -> String {
    let mut out = String::new();
    let plural = |n: usize| if n == 1 { "client" } else { "clients" };
    let mut sentences = Vec::new();
    for c in cells {
        let ss = c.snapscale_tps.map_or("n/a".into(), |t| format!("{t:.0}"));
        let pg = c.postgres_tps.map_or("n/a".into(), |t| format!("{t:.0}"));
        let ratio = c.ratio.map_or(String::new(), |r| {
            format!(", ratio **{r:.2}** (rounds: {})", ratios_text(&c.round_ratios))
        });
        sentences.push(format!(
            "{}, {} {}: snapscale {ss} tps, PostgreSQL {pg} tps{ratio}",
            c.workload,
            c.clients,
            plural(c.clients)
        ));
    }
    out.push_str(&format!(
        "Median tps over {} round(s) of {} s per run, and the median of the per-round ratios \
         snapscale / PostgreSQL: {}.\n\n",
        settings.rounds,
        settings.seconds,
        sentences.join("; ")
    ));
    let failed_ss: u64 = cells.iter().map(|c| c.snapscale_failed).sum();
    let failed_pg: u64 = cells.iter().map(|c| c.postgres_failed).sum();
    let problems: Vec<&Run> =
        m.runs.iter().filter(|r| r.result.as_ref().map_or(true, |o| o.problem.is_some())).collect();
    out.push_str(&format!(
        "Failed transactions over all runs: snapscale {failed_ss}, PostgreSQL {failed_pg}. Runs with \
         errors: {}.\n\n",
        problems.len()
    ));
    if let Some(why) = &m.postgres_skipped {
        out.push_str(&format!(
            "**PostgreSQL was not measured:** {why}. Only snapscale's numbers are real.\n\n"
        ));
    }
    for (kind, init) in &m.inits {
        if let Err(why) = init {
            out.push_str(&format!("**{} `pgbench -i` failed:**\n\n```\n{why}\n```\n\n", kind.label()));
        }
    }
    for r in &problems {
        let text = match &r.result {
            Ok(o) => o.problem.clone().unwrap_or_default(),
            Err(why) => why.clone(),
        };
        out.push_str(&format!(
            "**Round {} {} c={} {}:**\n\n```\n{text}\n```\n\n",
            r.round,
            r.workload,
            r.clients,
            r.server.label()
        ));
    }
    if settings.durable {
        out.push_str(&durable_text(settings, m, cells));
        let fs = m.disk.as_ref().and_then(|d| d.filesystem.as_ref());
        let tmpfs = fs.is_some_and(|f| matches!(f.fstype.as_str(), "tmpfs" | "ramfs"));
        if tmpfs {
            out.push_str(
                "**The data directories are on a memory filesystem: fdatasync there returns without \
                 writing anything, and these numbers are not of durable commits.**\n\n",
            );
        }
        out.push_str(&format!(
            "Caveats. This is a VM: the data directories' disk is a virtual device, and an fdatasync \
             returns when the hypervisor reports the flush done. Whether that reached stable storage, or a \
             write cache that survives power loss, cannot be seen from inside the VM; the latencies above \
             are what this VM's disk takes, and a disk with slower flushes would lower every number here \
             and make group commit matter more. Disk flushes are counted for the whole device (/proc/\
             diskstats) from just before pgbench starts to just after it exits, its untimed vacuum \
             included, so other processes' syncs are counted too (the load averages are in the settings). \
             The two servers write different things: snapscale logs logical redo records (the new row \
             values) into WAL segment files that grow as it appends, keeps its tables in memory, and \
             checkpoints by writing the whole database from an MVCC snapshot; PostgreSQL logs physical \
             changes into preallocated 16 MB segments, with a full-page image of each page at its first \
             change after a checkpoint (full_page_writes on), and writes dirty pages back at checkpoints. \
             Both checkpoint on their default schedules (snapscale: every 5 min or 256 MB of WAL; \
             PostgreSQL: 5 min or 1 GB, spread over 90 % of the interval), so checkpoints can fall inside \
             runs: {}; {}. {} pgbench runs on the same {}-CPU machine as the servers, with at most {} \
             threads (-j). This VM alternates fast and slow phases; the per-round ratios show how far \
             single runs move.\n\n",
            match m.snapscale_checkpoint {
                Some(0) | None =>
                    "snapscale's data directory held no checkpoint after the last run".to_string(),
                Some(redo) => format!(
                    "when the last run ended, snapscale's latest checkpoint started replay {:.0} MB into its \
                     WAL, so at least one had run",
                    redo as f64 / (1 << 20) as f64
                ),
            },
            m.postgres_checkpoints.map_or("PostgreSQL's checkpoints are unknown".into(), |c| format!(
                "PostgreSQL's log shows {} checkpoint(s) started and {} completed before the last run ended",
                c.started, c.completed
            )),
            scale_note(settings),
            thread::available_parallelism().map_or(1, |n| n.get()),
            settings.max_threads
        ));
    } else {
        out.push_str(
            "Caveats. Neither server waits for a disk: snapscale runs with fsync and synchronous_commit \
             off (it appends its WAL to the OS page cache and never syncs it), and PostgreSQL with fsync, \
             synchronous_commit and full_page_writes off, so it too writes WAL and dirty pages to the \
             page cache only. The comparison is of two servers that never wait for a disk, not of \
             durable ones (`lab pgbench --durable` measures those). pgbench runs on the same 2-CPU \
             machine as the server, so at 2 clients the pgbench threads and the server backends share \
             the two CPUs. At scale 1 every tpcb-like transaction updates the single pgbench_branches \
             row, so 2 clients serialize on its row lock on either server. This VM alternates fast and \
             slow phases; the per-round ratios show how far single runs move. Single-client runs move the \
             most: at every statement one process waits for the other to be woken on an idle CPU, so \
             they include the VM's wake-up latency.\n\n",
        );
    }
    let mut columns = vec![
        "workload",
        "clients",
        "snapscale_tps",
        "postgres_tps",
        "ratio",
        "round_ratios",
        "snapscale_failed",
        "postgres_failed",
    ];
    if settings.durable {
        columns.extend(["snapscale_flushes_per_tx", "postgres_flushes_per_tx"]);
    }
    let mut table = Table::new(&columns);
    for c in cells {
        let mut row = vec![
            Value::from(c.workload),
            Value::from(c.clients),
            number_or_na(c.snapscale_tps),
            number_or_na(c.postgres_tps),
            number_or_na(c.ratio),
            Value::from(ratios_text(&c.round_ratios)),
            Value::from(c.snapscale_failed),
            if m.postgres_skipped.is_some() { Value::from("n/a") } else { Value::from(c.postgres_failed) },
        ];
        if settings.durable {
            row.extend([number_or_na(c.snapscale_flushes), number_or_na(c.postgres_flushes)]);
        }
        table.push(row);
    }
    out.push_str(&table.markdown());
    out.push_str("\nEvery run, in the order run, is in the table under the figure and in the CSV.\n");
    out
}

/// What the durable variant's scale means for its numbers.
fn scale_note(settings: &Settings) -> String {
    let s = settings.scale;
    if s == 1 {
        return "The scale is 1: every tpcb-like transaction updates the one pgbench_branches row and \
                holds its row lock until its commit is durable, so commits cannot share a sync, whatever \
                the number of clients."
            .into();
    }
    // pgbench's tables and indexes take about 15 MB per unit of scale.
    let big = if s >= 10 {
        format!(
            ", and the scale-{s} database is larger than PostgreSQL's default 128 MB shared_buffers (the \
             OS page cache holds the rest)"
        )
    } else {
        String::new()
    };
    format!(
        "The scale is {s}, not 1 as in docs/results/pgbench.md, so that concurrent clients do not all queue \
         on one pgbench_branches row (see the settings); the numbers are therefore not comparable with \
         that page's tpcb-like cells{big}."
    )
}

/// `-c a=b -c c=d` or `--set a=b --set c=d`.
fn flags(flag: &str, settings: &[(&str, &str)]) -> String {
    settings.iter().map(|(k, v)| format!("{flag} {k}={v}")).collect::<Vec<_>>().join(" ")
}

/// Runs the experiment and writes CSV, SVG and Markdown.
pub fn run(settings: &Settings) -> io::Result<Written> {
    let m = measure(settings)?;
    let cells = cells(settings, &m.runs);
    let mut table = Table::new(&[
        "round",
        "workload",
        "clients",
        "threads",
        "server",
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
            Value::from(r.server.label()),
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
                 max_connections 100, {}; SHOW gives {}",
                flags("--set", settings.snapscale_settings()),
                shown(Kind::Snapscale)
            ),
        ),
        (
            "PostgreSQL".to_string(),
            match &m.postgres_skipped {
                Some(why) => format!("not measured: {why}"),
                None => format!(
                    "{}, fresh initdb (-E UTF8 --locale=C), {}, other settings default (shared_buffers \
                     128MB, wal_sync_method fdatasync, commit_delay 0, autovacuum on); SHOW gives {}",
                    m.postgres_version,
                    flags("-c", settings.postgres_settings()),
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
        &figure(settings, &cells, with_postgres),
        &summary(settings, &m, &cells),
        &settings_list,
    )
}

#[cfg(test)]
mod tests {
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
        let settings = Settings { rounds: 2, clients: vec![1], ..Settings::quick(PathBuf::from("unused")) };
        let outcome = |tps| Ok(Outcome { tps, latency_ms: 1.0, processed: 1, failed: 0, problem: None });
        let run = |round, server, tps| Run {
            round,
            workload: "select-only",
            clients: 1,
            threads: 1,
            server,
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
            flags("-c", s.postgres_settings()),
            "-c fsync=on -c synchronous_commit=on -c full_page_writes=on"
        );
        let quick = Settings::durable_quick(PathBuf::from("unused"));
        assert_eq!((quick.seconds, quick.rounds, quick.name.as_str()), (3, 1, "pgbench-durable-quick"));
        assert!(!Settings::full(PathBuf::from("unused")).snapscale_settings().contains(&("fsync", "on")));
        let two = Settings { max_threads: 2, ..s };
        assert_eq!([1, 2, 8].map(|c| two.threads(c)), [1, 2, 2]);
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        assert_eq!(tail("a\nb\nc\n", 2), "b\nc");
        assert_eq!(tail("a", 5), "a");
    }
}
