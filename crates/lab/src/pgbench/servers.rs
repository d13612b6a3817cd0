//! The two servers under test, started as children of the lab.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::runner::tail;
use super::Settings;
use crate::child::{free_port, wait_until_accepting, ServerChild};

/// The effective user id, from /proc.
pub(super) fn effective_uid() -> Option<u32> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    status.lines().find_map(|l| l.strip_prefix("Uid:"))?.split_whitespace().nth(1)?.parse().ok()
}

/// The last lines of a server's log file.
pub(crate) fn log_tail(path: &Path) -> String {
    std::fs::read_to_string(path).map(|t| tail(&t, 20)).unwrap_or_else(|e| format!("(no log: {e})"))
}

/// A PostgreSQL cluster in a temporary directory, run by `postgres` as a
/// child; stopped and removed on drop.
pub(super) struct Postgres {
    pub(super) child: Child,
    pub(super) bin: PathBuf,
    pub(super) data_dir: PathBuf,
    /// Running as root: every PostgreSQL program goes through `runuser`.
    pub(super) as_postgres: bool,
}

impl Postgres {
    pub(super) fn command(bin: &Path, as_postgres: bool, program: &str) -> Command {
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
    pub(super) fn start(
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
pub(crate) enum Kind {
    Snapscale,
    Postgres,
}

impl Kind {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Kind::Snapscale => "snapscale",
            Kind::Postgres => "PostgreSQL 15",
        }
    }
}

pub(super) enum Process {
    Snapscale(ServerChild),
    Postgres(Postgres),
}

/// A server under test, with where its log goes.
pub(crate) struct Server {
    pub(crate) kind: Kind,
    pub(crate) port: u16,
    pub(super) process: Process,
    pub(crate) log: PathBuf,
    /// Set once the process has exited: why, for every later run.
    pub(crate) gone: Option<String>,
    pub(crate) data_dir: PathBuf,
}

impl Server {
    pub(crate) fn child(&mut self) -> &mut Child {
        match &mut self.process {
            Process::Snapscale(s) => s.child(),
            Process::Postgres(p) => &mut p.child,
        }
    }

    /// None while the process runs; afterwards its exit status and log.
    pub(crate) fn check_gone(&mut self) -> Option<String> {
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

/// Starts snapscale, the same way as `lab idle`, with its log in `work`.
/// snapscale's max_connections: 100, or room for `--idle`'s connections
/// and pgbench's.
pub(super) fn max_connections(settings: &Settings) -> usize {
    100.max(settings.idle + super::idle_runs::HEADROOM)
}

pub(super) fn start_snapscale(settings: &Settings, work: &Path) -> Result<Server, String> {
    start_snapscale_with(work, max_connections(settings), settings.snapscale_settings())
}

/// Starts snapscale with `--set name=value` for each of `set`, its log and
/// data directory in `work`; waits until it accepts connections.
pub(crate) fn start_snapscale_with(
    work: &Path,
    max_connections: usize,
    set: &[(&str, &str)],
) -> Result<Server, String> {
    let port = free_port().map_err(|e| e.to_string())?;
    let log = work.join("snapscale.log");
    let log_file = File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let data_dir = work.join("snapscale-data");
    let mut child = ServerChild::spawn_with(port, max_connections, data_dir.clone(), log_file.into(), set)
        .map_err(|e| format!("cannot start snapscale serve: {e}"))?;
    wait_until_accepting(port, "postgres", child.child())
        .map_err(|e| format!("snapscale did not start: {e}\n{}", log_tail(&log)))?;
    Ok(Server { kind: Kind::Snapscale, port, process: Process::Snapscale(child), log, gone: None, data_dir })
}

pub(super) fn start_postgres(settings: &Settings, work: &Path) -> Result<Server, String> {
    let pg_settings = settings.postgres_settings();
    start_postgres_with(&settings.pg_bin, work, "pgbench", &super::report::pairs(&pg_settings))
}

/// Starts PostgreSQL from `pg_bin` on a fresh initdb'd cluster in the
/// temporary directory (named for `experiment`, so that two experiments
/// never share one), with `-c name=value` for each of `settings` and its
/// log in `work`.
pub(crate) fn start_postgres_with(
    pg_bin: &Path,
    work: &Path,
    experiment: &str,
    settings: &[(&str, &str)],
) -> Result<Server, String> {
    let port = free_port().map_err(|e| e.to_string())?;
    let log = work.join("postgres.log");
    let data_dir =
        std::env::temp_dir().join(format!("snapscale-lab-{experiment}-{}-pgdata", std::process::id()));
    let pg = Postgres::start(pg_bin, port, data_dir.clone(), &log, settings)?;
    Ok(Server { kind: Kind::Postgres, port, process: Process::Postgres(pg), log, gone: None, data_dir })
}

/// The servers under test, as an experiment starts them: snapscale (it
/// must start), then PostgreSQL, or why not (the experiment then measures
/// snapscale alone), with `postgres --version`.
pub(crate) struct Started {
    pub(crate) servers: Vec<Server>,
    pub(crate) postgres_skipped: Option<String>,
    pub(crate) postgres_version: String,
}

/// Starts both servers through `snapscale` and `postgres`; `lab` names the
/// experiment in messages.
pub(crate) fn start_both(
    lab: &str,
    pg_bin: &Path,
    snapscale: impl FnOnce() -> Result<Server, String>,
    postgres: impl FnOnce() -> Result<Server, String>,
) -> std::io::Result<Started> {
    let mut servers = vec![snapscale().map_err(std::io::Error::other)?];
    let mut postgres_skipped = None;
    match postgres() {
        Ok(pg) => servers.push(pg),
        Err(why) => {
            eprintln!("lab {lab}: measuring snapscale alone: {why}");
            postgres_skipped = Some(why);
        }
    }
    let postgres_version = Command::new(pg_bin.join("postgres"))
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|_| "unknown".into());
    Ok(Started { servers, postgres_skipped, postgres_version })
}

/// What `SHOW` reports for each of `settings` on the server at `port`,
/// through PostgreSQL's psql: proof that the server runs with what the
/// report says, whatever its defaults.
pub(crate) fn show(pg_bin: &Path, port: u16, settings: &[(&str, &str)]) -> String {
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

/// The process `root` and every descendant of it, from /proc: PostgreSQL's
/// postmaster (under `runuser`) and the processes it forked.
fn process_tree(root: u32) -> Vec<u32> {
    let mut parents = Vec::new();
    if let Ok(entries) = std::fs::read_dir("/proc") {
        for entry in entries.flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else { continue };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else { continue };
            // The command name is in parentheses and may hold spaces: the
            // parent id is the second field after its closing one.
            let ppid: Option<u32> =
                stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)?.parse().ok());
            if let Some(ppid) = ppid {
                parents.push((pid, ppid));
            }
        }
    }
    let mut tree = vec![root];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(parents.iter().filter(|(_, p)| *p == parent).map(|(pid, _)| *pid));
        i += 1;
    }
    tree
}

impl Server {
    /// Confines every thread of the server's processes to `cpu`, or with
    /// `None` lets them use every CPU again. Processes forked later
    /// (PostgreSQL's backends) inherit the postmaster's setting, threads
    /// started later (snapscale's) their creator's.
    pub(super) fn pin(&mut self, cpu: Option<usize>) -> Result<(), String> {
        let cpus = match cpu {
            Some(cpu) => cpu.to_string(),
            None => format!("0-{}", std::thread::available_parallelism().map_or(1, |n| n.get()) - 1),
        };
        for pid in process_tree(self.child().id()) {
            let out = Command::new("taskset")
                .args(["-a", "-p", "-c", &cpus, &pid.to_string()])
                .output()
                .map_err(|e| format!("cannot run taskset: {e}"))?;
            // A process that exited meanwhile (a backend closing) is fine.
            if !out.status.success() && std::path::Path::new(&format!("/proc/{pid}")).exists() {
                return Err(format!(
                    "taskset -a -p -c {cpus} {pid} failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
        }
        Ok(())
    }
}
