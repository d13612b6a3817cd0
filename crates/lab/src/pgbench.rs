//! `lab pgbench`: snapscale against PostgreSQL 15 under pgbench, in one run.
//!
//! Issue 5 asks for pgbench's prepared select-only and tpcb-like scripts at 1
//! and 2 clients against both servers on the same machine. Both servers are
//! children of this process: snapscale is this binary's `serve`, PostgreSQL
//! 15 is `initdb` and `postgres` from its bin directory, through `runuser -u
//! postgres` when running as root (PostgreSQL refuses to run as root).
//! PostgreSQL runs with fsync, synchronous_commit and full_page_writes off:
//! snapscale has no write-ahead log yet, so neither server waits for a disk.
//!
//! This VM alternates fast and slow phases lasting seconds, so the servers
//! are interleaved: each round runs every cell on both servers back to back,
//! a cell's ratio is taken within a round, and the report gives the median
//! over rounds. Which server goes first alternates from round to round so
//! that neither always runs in the other's wake.
//!
//! The pgbench runner ([`Pgbench`]) is shared with `lab idle`, which runs
//! the same clients next to 10 000 idle connections.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use crate::idle::{free_port, wait_until_accepting, ServerChild};
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
    /// Client counts; each run uses as many pgbench threads (`-j`).
    pub clients: Vec<usize>,
    /// `pgbench -i -s`.
    pub scale: u32,
    /// PostgreSQL's bin directory (initdb, postgres, pg_ctl, pgbench).
    pub pg_bin: PathBuf,
    /// Output directory.
    pub out_dir: PathBuf,
    /// Base name of the output files.
    pub name: String,
}

impl Settings {
    /// 20-second runs, 3 rounds: about 9 minutes.
    pub fn full(out_dir: PathBuf) -> Self {
        Self {
            seconds: 20,
            rounds: 3,
            clients: vec![1, 2],
            scale: 1,
            pg_bin: PG15_BIN.into(),
            out_dir,
            name: "pgbench".into(),
        }
    }

    /// 3-second runs, one round.
    pub fn quick(out_dir: PathBuf) -> Self {
        Self { seconds: 3, rounds: 1, name: "pgbench-quick".into(), ..Self::full(out_dir) }
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
    ///
    /// Without `-n`, so pgbench first vacuums pgbench_branches and
    /// pgbench_tellers and truncates pgbench_history, outside the timed part:
    /// every run starts from the same tables on either server.
    pub fn run(&self, port: u16, workload: &str, clients: usize, seconds: u32) -> Result<Outcome, String> {
        let args: Vec<String> = ["-M", "prepared", "-b", workload]
            .iter()
            .map(|s| s.to_string())
            .chain(["-c".into(), clients.to_string(), "-j".into(), clients.to_string()])
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

    /// initdb, then `postgres` on `port`; waits until it accepts connections.
    fn start(bin: &Path, port: u16, data_dir: PathBuf, log: &Path) -> Result<Postgres, String> {
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
            .args(["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"])
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
    server: Kind,
    result: Result<Outcome, String>,
}

/// Starts snapscale, the same way as `lab idle`, with its log in `work`.
fn start_snapscale(work: &Path) -> Result<Server, String> {
    let port = free_port().map_err(|e| e.to_string())?;
    let log = work.join("snapscale.log");
    let log_file = File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let mut child = ServerChild::spawn(port, 100, work.join("snapscale-data"), log_file.into())
        .map_err(|e| format!("cannot start snapscale serve: {e}"))?;
    wait_until_accepting(port, "postgres", child.child())
        .map_err(|e| format!("snapscale did not start: {e}\n{}", log_tail(&log)))?;
    Ok(Server { kind: Kind::Snapscale, port, process: Process::Snapscale(child), log, gone: None })
}

fn start_postgres(settings: &Settings, work: &Path) -> Result<Server, String> {
    let port = free_port().map_err(|e| e.to_string())?;
    let log = work.join("postgres.log");
    let data_dir = std::env::temp_dir().join(format!("snapscale-lab-pgbench-{}-pgdata", std::process::id()));
    let pg = Postgres::start(&settings.pg_bin, port, data_dir, &log)?;
    Ok(Server { kind: Kind::Postgres, port, process: Process::Postgres(pg), log, gone: None })
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

fn measure_in(settings: &Settings, pgbench: Pgbench, work: &Path) -> io::Result<Measurement> {
    let mut servers = vec![start_snapscale(work).map_err(io::Error::other)?];
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

    let mut runs = Vec::new();
    for round in 1..=settings.rounds {
        for workload in WORKLOADS {
            for &clients in &settings.clients {
                // Alternate who goes first, so neither always follows the other.
                let order: Vec<usize> = if round % 2 == 1 {
                    (0..servers.len()).collect()
                } else {
                    (0..servers.len()).rev().collect()
                };
                for i in order {
                    let server = &mut servers[i];
                    let result = match server.check_gone() {
                        Some(why) => Err(why),
                        None => pgbench.run(server.port, workload, clients, settings.seconds),
                    };
                    let result = match result {
                        // A failed run may be the server dying: say so in the same place.
                        Err(why) => Err(match server.check_gone() {
                            Some(gone) if !why.contains(&gone) => format!("{why}\n{gone}"),
                            _ => why,
                        }),
                        ok => ok,
                    };
                    match &result {
                        Ok(o) => eprintln!(
                            "lab pgbench: round {round}/{} {workload} c={clients} {}: {:.0} tps, {} failed{}",
                            settings.rounds,
                            server.kind.label(),
                            o.tps,
                            o.failed,
                            o.problem.as_deref().map(|p| format!(" ({p})")).unwrap_or_default()
                        ),
                        Err(why) => eprintln!(
                            "lab pgbench: round {round} {workload} c={clients} {}: FAILED: {why}",
                            server.kind.label()
                        ),
                    }
                    runs.push(Run { round, workload, clients, server: server.kind, result });
                }
            }
        }
    }
    Ok(Measurement { pgbench, inits, postgres_skipped, postgres_version, runs })
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
}

fn cells(settings: &Settings, runs: &[Run]) -> Vec<Cell> {
    let mut cells = Vec::new();
    for workload in WORKLOADS {
        for &clients in &settings.clients {
            let of = |kind: Kind| -> Vec<&Run> {
                runs.iter()
                    .filter(|r| r.workload == workload && r.clients == clients && r.server == kind)
                    .collect()
            };
            let tps = |kind: Kind| {
                let v: Vec<f64> =
                    of(kind).iter().filter_map(|r| r.result.as_ref().ok()).map(|o| o.tps).collect();
                (!v.is_empty()).then(|| median(v))
            };
            let failed = |kind: Kind| -> u64 {
                of(kind).iter().filter_map(|r| r.result.as_ref().ok()).map(|o| o.failed).sum()
            };
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
                ratio: (!ratios.is_empty()).then(|| median(ratios.clone())),
                round_ratios: ratios,
                snapscale_failed: failed(Kind::Snapscale),
                postgres_failed: failed(Kind::Postgres),
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

fn figure(cells: &[Cell], with_postgres: bool) -> Figure {
    let mut kinds = vec![Kind::Snapscale];
    if with_postgres {
        kinds.push(Kind::Postgres);
    }
    let panels = WORKLOADS
        .iter()
        .map(|&workload| Panel {
            title: format!("{workload}, -M prepared"),
            series: kinds
                .iter()
                .map(|&kind| Series {
                    label: kind.label().into(),
                    points: cells
                        .iter()
                        .filter(|c| c.workload == workload)
                        .filter_map(|c| {
                            let tps = if kind == Kind::Snapscale { c.snapscale_tps } else { c.postgres_tps };
                            Some((c.clients as f64, tps?))
                        })
                        .collect(),
                })
                .collect(),
        })
        .collect();
    Figure {
        title: "pgbench: snapscale and PostgreSQL 15 (median of rounds)".into(),
        x_label: "clients".into(),
        y_label: "transactions per second".into(),
        x_log: false,
        y_log: false,
        panels,
    }
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
    out.push_str(
        "Caveats. snapscale has no write-ahead log yet: its data lives in memory and it has no \
         fsync or synchronous_commit to turn off, while PostgreSQL, even with fsync, \
         synchronous_commit and full_page_writes off, still writes WAL and dirty pages to the OS \
         page cache. The comparison is therefore of two servers that never wait for a disk, not of \
         equally durable ones. pgbench runs on the same 2-CPU machine as the server, so at 2 \
         clients the pgbench threads and the server backends share the two CPUs. At scale 1 every \
         tpcb-like transaction updates the single pgbench_branches row, so 2 clients serialize \
         on its row lock on either server. This VM alternates fast and slow phases; the per-round \
         ratios show how far single runs move. Single-client runs move the most: at every statement \
         one process waits for the other to be woken on an idle CPU, so they include the VM's \
         wake-up latency.\n\n",
    );
    let mut table = Table::new(&[
        "workload",
        "clients",
        "snapscale_tps",
        "postgres_tps",
        "ratio",
        "round_ratios",
        "snapscale_failed",
        "postgres_failed",
    ]);
    for c in cells {
        table.push(vec![
            Value::from(c.workload),
            Value::from(c.clients),
            number_or_na(c.snapscale_tps),
            number_or_na(c.postgres_tps),
            number_or_na(c.ratio),
            Value::from(ratios_text(&c.round_ratios)),
            Value::from(c.snapscale_failed),
            if m.postgres_skipped.is_some() { Value::from("n/a") } else { Value::from(c.postgres_failed) },
        ]);
    }
    out.push_str(&table.markdown());
    out.push_str("\nEvery run, in the order run, is in the table under the figure and in the CSV.\n");
    out
}

/// Runs the experiment and writes CSV, SVG and Markdown.
pub fn run(settings: &Settings) -> io::Result<Written> {
    let m = measure(settings)?;
    let cells = cells(settings, &m.runs);
    let mut table = Table::new(&[
        "round",
        "workload",
        "clients",
        "server",
        "tps",
        "latency_ms",
        "transactions",
        "failed",
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
            Value::from(r.server.label()),
            tps,
            latency,
            processed,
            failed,
            error,
        ]);
    }
    let init_line = |kind: Kind| -> String {
        m.inits.iter().find(|(k, _)| *k == kind).map_or("not run".into(), |(_, i)| match i {
            Ok(done) => done.clone(),
            Err(_) => "failed".into(),
        })
    };
    let settings_list = vec![
        ("pgbench".to_string(), m.pgbench.version.clone()),
        (
            "runs".to_string(),
            format!(
                "pgbench -M prepared -b {{{}}} -c N -j N -T {}, N in {{{}}}, against 127.0.0.1 as user \
                 postgres, database postgres",
                WORKLOADS.join(", "),
                settings.seconds,
                list(&settings.clients)
            ),
        ),
        (
            "scale".to_string(),
            format!("pgbench -i -s {}, once per server before the first round", settings.scale),
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
            "snapscale serve (release build of this binary), default snapshot_mode (csn), \
             max_connections 100, no WAL (in memory)"
                .to_string(),
        ),
        (
            "PostgreSQL".to_string(),
            match &m.postgres_skipped {
                Some(why) => format!("not measured: {why}"),
                None => format!(
                    "{}, fresh initdb (-E UTF8 --locale=C), -c fsync=off -c synchronous_commit=off \
                     -c full_page_writes=off, other settings default (shared_buffers 128MB, \
                     autovacuum on)",
                    m.postgres_version
                ),
            },
        ),
        ("pgbench -i, snapscale".to_string(), init_line(Kind::Snapscale)),
        ("pgbench -i, PostgreSQL".to_string(), init_line(Kind::Postgres)),
    ];
    let with_postgres = m.postgres_skipped.is_none();
    ResultSet::new(&settings.out_dir, &settings.name).write(
        &table,
        &figure(&cells, with_postgres),
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
            server,
            result: outcome(tps),
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
        // tpcb-like had no runs.
        assert_eq!(cells(&settings, &runs)[1].snapscale_tps, None);
    }

    #[test]
    fn tail_keeps_the_last_lines() {
        assert_eq!(tail("a\nb\nc\n", 2), "b\nc");
        assert_eq!(tail("a", 5), "a");
    }
}
