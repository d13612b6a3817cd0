//! The sysbench program: finding it, `prepare` and `cleanup`, timed runs
//! and what they printed.

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::pgbench::runner::{run_to_end, tail, Output, INIT_LIMIT, RUN_GRACE};

/// The script whose `prepare` and `cleanup` load and drop the tables: every
/// OLTP script shares oltp_common's, so any of them would do.
const PREPARE_SCRIPT: &str = "oltp_read_write";

/// What one timed sysbench run reported.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// Transactions (events) per second: the "transactions:" line.
    pub tps: f64,
    /// Statements per second: the "queries:" line.
    pub qps: f64,
    /// Transactions that completed.
    pub transactions: u64,
    /// Average and 95th-percentile latency of a transaction, ms.
    pub latency_avg_ms: f64,
    pub latency_p95_ms: f64,
    /// Errors sysbench's pgsql driver treats as retryable (deadlocks,
    /// serialization failures, unique violations): the transaction is
    /// rolled back and run again, and counted here.
    pub ignored_errors: u64,
    /// Set when sysbench exited with an error although it printed its
    /// statistics, or printed a FATAL line: its messages, for the report.
    pub problem: Option<String>,
}

/// A sysbench binary, with the table set every command uses.
#[derive(Clone, Debug)]
pub struct Sysbench {
    program: PathBuf,
    /// `sysbench --version`.
    pub version: String,
    tables: usize,
    table_size: u64,
}

impl Sysbench {
    /// sysbench on `PATH`, if it has the pgsql driver.
    pub fn find(tables: usize, table_size: u64) -> Result<Sysbench, String> {
        let program = PathBuf::from("sysbench");
        let version = Command::new(&program)
            .arg("--version")
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
            .ok_or("no sysbench on PATH (Debian: apt-get install sysbench)")?;
        let help = Command::new(&program).arg("--help").output().map_err(|e| e.to_string())?;
        if !String::from_utf8_lossy(&help.stdout).contains("pgsql - PostgreSQL driver") {
            return Err(format!("{version} was built without the pgsql driver"));
        }
        Ok(Sysbench { program, version, tables, table_size })
    }

    /// sysbench `script` against 127.0.0.1:`port` as user postgres,
    /// database postgres, on the table set, with `extra` options, then
    /// `command` (prepare, run, cleanup).
    fn command(&self, port: u16, script: &str, extra: &[String], command: &str) -> Command {
        let mut c = Command::new(&self.program);
        c.arg(script)
            .args(connection_args(port))
            .arg(format!("--tables={}", self.tables))
            .arg(format!("--table-size={}", self.table_size))
            .args(extra)
            .arg(command);
        c
    }

    /// Drops the tables if they exist, then sysbench's `prepare`: CREATE
    /// TABLE (a SERIAL key), a multi-row INSERT of the rows, CREATE INDEX
    /// on k. Returns how long `prepare` took.
    pub fn load(&self, port: u16) -> Result<Duration, String> {
        self.step(port, "cleanup")?;
        let start = Instant::now();
        self.step(port, "prepare")?;
        Ok(start.elapsed())
    }

    fn step(&self, port: u16, step: &str) -> Result<(), String> {
        let what = format!("sysbench {PREPARE_SCRIPT} {step}");
        let output = run_to_end(self.command(port, PREPARE_SCRIPT, &[], step), INIT_LIMIT, &what)?;
        if !output.status.success() || fatal_lines(&output.text()).is_some() {
            return Err(format!("{what} exited with {}:\n{}", output.status, tail(&output.text(), 20)));
        }
        Ok(())
    }

    /// The options of a timed run of `threads` threads for `seconds`.
    pub fn run_args(threads: usize, seconds: u32) -> Vec<String> {
        vec![
            format!("--threads={threads}"),
            format!("--time={seconds}"),
            "--events=0".into(),
            "--db-ps-mode=auto".into(),
            "--percentile=95".into(),
        ]
    }

    /// One timed run of `test` (a script name, as sysbench resolves it).
    pub fn run(&self, port: u16, test: &str, threads: usize, seconds: u32) -> Result<Outcome, String> {
        let command = self.command(port, test, &Self::run_args(threads, seconds), "run");
        let limit = Duration::from_secs(seconds.into()) + RUN_GRACE;
        outcome(&run_to_end(command, limit, &format!("sysbench {test} run"))?)
    }
}

/// The options that point sysbench at a server.
pub fn connection_args(port: u16) -> Vec<String> {
    vec![
        "--db-driver=pgsql".into(),
        "--pgsql-host=127.0.0.1".into(),
        format!("--pgsql-port={port}"),
        "--pgsql-user=postgres".into(),
        "--pgsql-db=postgres".into(),
    ]
}

/// A run's result from what sysbench printed: an error when it printed no
/// statistics, a problem when it did but also failed.
fn outcome(output: &Output) -> Result<Outcome, String> {
    let text = output.text();
    let Some(mut o) = parse(&output.stdout) else {
        return Err(format!("sysbench printed no statistics (exit {}):\n{}", output.status, tail(&text, 20)));
    };
    o.problem = match (output.status.success(), fatal_lines(&text)) {
        (true, None) => None,
        (_, Some(fatal)) => Some(format!("exit {}: {fatal}", output.status)),
        (false, None) => Some(format!("exit {}: {}", output.status, tail(&output.stderr, 10))),
    };
    Ok(o)
}

/// sysbench's FATAL lines (a failed statement, a thread that gave up), the
/// first few.
fn fatal_lines(text: &str) -> Option<String> {
    let fatal: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with("FATAL:")).take(3).collect();
    (!fatal.is_empty()).then(|| fatal.join(" | "))
}

/// The statistics of sysbench 1.0's report:
///
/// ```text
///     transactions:                        26989  (6713.78 per sec.)
///     queries:                             26989  (6713.78 per sec.)
///     ignored errors:                      0      (0.00 per sec.)
/// Latency (ms):
///          avg:                                    0.30
///          95th percentile:                        0.39
/// ```
pub(super) fn parse(stdout: &str) -> Option<Outcome> {
    let (transactions, tps) = counter(stdout, "transactions:")?;
    let (_, qps) = counter(stdout, "queries:")?;
    let (ignored_errors, _) = counter(stdout, "ignored errors:")?;
    Some(Outcome {
        tps,
        qps,
        transactions,
        latency_avg_ms: latency(stdout, "avg:").unwrap_or(f64::NAN),
        latency_p95_ms: latency(stdout, "95th percentile:").unwrap_or(f64::NAN),
        ignored_errors,
        problem: None,
    })
}

/// `label   N  (X per sec.)` → (N, X).
fn counter(stdout: &str, label: &str) -> Option<(u64, f64)> {
    let rest = stdout.lines().find_map(|l| l.trim().strip_prefix(label))?;
    let (count, rate) = rest.split_once('(')?;
    let rate = rate.trim().strip_suffix("per sec.)")?.trim();
    Some((count.trim().parse().ok()?, rate.parse().ok()?))
}

/// The number after `label` in the "Latency (ms):" section; "avg:" stands
/// elsewhere too ("events (avg/stddev):"), so only that section counts.
fn latency(stdout: &str, label: &str) -> Option<f64> {
    stdout
        .lines()
        .skip_while(|l| l.trim() != "Latency (ms):")
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .find_map(|l| l.trim().strip_prefix(label)?.trim().parse().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `sysbench oltp_read_write --threads=2 --time=4 run` against snapscale.
    const READ_WRITE: &str = "\
sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)

Running the test with following options:
Number of threads: 2
Initializing random number generator from current time


Initializing worker threads...

Threads started!

SQL statistics:
    queries performed:
        read:                            24766
        write:                           7075
        other:                           3539
        total:                           35380
    transactions:                        1769   (442.00 per sec.)
    queries:                             35380  (8840.10 per sec.)
    ignored errors:                      1      (0.25 per sec.)
    reconnects:                          0      (0.00 per sec.)

General statistics:
    total time:                          4.0018s
    total number of events:              1769

Latency (ms):
         min:                                    0.70
         avg:                                    4.52
         max:                                  276.90
         95th percentile:                       13.46
         sum:                                 7997.77

Threads fairness:
    events (avg/stddev):           884.5000/25.50
    execution time (avg/stddev):   3.9989/0.00

";

    #[test]
    fn parses_sysbench_statistics() {
        let o = parse(READ_WRITE).expect("statistics");
        assert_eq!(
            o,
            Outcome {
                tps: 442.0,
                qps: 8840.1,
                transactions: 1769,
                latency_avg_ms: 4.52,
                latency_p95_ms: 13.46,
                ignored_errors: 1,
                problem: None,
            }
        );
    }

    #[test]
    fn a_run_without_statistics_is_an_error_and_fatal_lines_are_problems() {
        // A run against a table set that is not there (it then crashed).
        let missing = "\
Initializing worker threads...

FATAL: PQprepare() failed: ERROR:  relation \"sbtest2\" does not exist
LINE 1: SELECT c FROM sbtest2 WHERE id=$1
                      ^

Threads started!
";
        assert_eq!(parse(missing), None);
        assert_eq!(
            fatal_lines(missing).as_deref(),
            Some("FATAL: PQprepare() failed: ERROR:  relation \"sbtest2\" does not exist")
        );
        let failed = format!("{missing}{READ_WRITE}");
        assert!(parse(&failed).is_some() && fatal_lines(&failed).is_some());
        assert_eq!(fatal_lines(READ_WRITE), None);
        // The latency section's avg, not the fairness section's.
        assert_eq!(latency("events (avg/stddev): 1/2\nLatency (ms):\n avg: 3.5\n\n", "avg:"), Some(3.5));
        assert_eq!(counter("    transactions:   12 (3.00 per sec.)\n", "transactions:"), Some((12, 3.0)));
        assert_eq!(counter("    transactions:   12\n", "transactions:"), None);
    }

    #[test]
    fn runs_are_prepared_statements_against_the_lab_server() {
        assert_eq!(
            Sysbench::run_args(32, 10),
            ["--threads=32", "--time=10", "--events=0", "--db-ps-mode=auto", "--percentile=95"]
        );
        assert!(connection_args(5495).contains(&"--pgsql-port=5495".to_string()));
    }
}
