//! The end-to-end half of `lab standby`: a real primary and a real standby
//! (children of the lab), pgbench select-only on the standby while the
//! primary runs tpcb-like with `held` extra transactions open, in each
//! standby snapshot mode.
//!
//! The held transactions each inserted a row and stay open, so every
//! standby snapshot in `known-assigned` mode copies at least `held` xids
//! (the standby learns of them as soon as any later xid reaches the WAL);
//! a `csn` snapshot does not grow. Replay throughput is the WAL the primary
//! wrote during the run divided by the time the standby took to replay it
//! (from the run's start until the standby reached the primary's end LSN).
//!
//! Replay lag is sampled every [`SAMPLE_EVERY`] while the load runs, in
//! bytes (the primary's WAL end minus the standby's replay position) and
//! in time: each sample of the primary's WAL end is timed until the
//! standby's replay position first reaches it (an upper bound, within one
//! sampling interval). Catch-up is timed from the moment the primary's
//! load stops (its pgbench exits) until the standby's replay position
//! reaches the primary's WAL end then (`pg_current_wal_lsn`: with fsync
//! off every commit there is flushed); the sampler is woken by the load's
//! end, not by its next tick, and polls the standby without pausing.

use std::collections::VecDeque;
use std::io;
use std::path::Path;
use std::process::Stdio;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use tokio::net::TcpStream;

use crate::child::{connect, free_port, read_message, simple_query, wait_until_accepting, ServerChild};
use crate::pgbench::Pgbench;

/// One measured point.
#[derive(Clone, Debug)]
pub struct Point {
    pub mode: &'static str,
    pub held: usize,
    pub clients: usize,
    /// pgbench -S tps on the standby.
    pub standby_tps: f64,
    /// pgbench tpcb-like tps on the primary meanwhile.
    pub primary_tps: f64,
    /// WAL replayed per second, MB/s.
    pub replay_mb_s: f64,
    /// Primary transactions replayed per second.
    pub replay_tx_s: f64,
    /// The largest replay lag sampled (bytes of WAL not yet replayed).
    pub max_lag_bytes: u64,
    /// Replay lag in time: the largest and the mean over the samples.
    pub max_lag_ms: f64,
    pub mean_lag_ms: f64,
    /// Time from the end of the load until the standby had replayed it.
    pub catch_up_ms: f64,
}

/// How often the lag sampler reads both positions.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(10);

/// Replay of a backlog: the standby stopped (SIGSTOP) while the primary
/// ran tpcb-like, then resumed (SIGCONT) and timed until it had replayed
/// everything. Streaming keeps up with the primary (the lag stays near
/// zero), so only a backlog shows how fast replay itself is.
#[derive(Clone, Debug)]
pub struct Backlog {
    pub mode: &'static str,
    /// WAL written while the standby was stopped.
    pub bytes: u64,
    /// Primary transactions in it.
    pub transactions: u64,
    /// Time from SIGCONT until it was replayed.
    pub secs: f64,
}

fn signal(pid: u32, sig: &str) -> io::Result<()> {
    let status = std::process::Command::new("kill").args([sig, &pid.to_string()]).status()?;
    if status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!("kill {sig} {pid} failed")))
    }
}

/// Runs `sql` and returns the first column of its first row (text).
async fn query_value(stream: &mut TcpStream, sql: &str) -> io::Result<Option<String>> {
    use tokio::io::AsyncWriteExt;
    let mut msg = vec![b'Q'];
    msg.extend_from_slice(&((sql.len() + 5) as i32).to_be_bytes());
    msg.extend_from_slice(sql.as_bytes());
    msg.push(0);
    stream.write_all(&msg).await?;
    let (mut value, mut error) = (None, None);
    loop {
        match read_message(stream).await? {
            (b'Z', _) => return error.map_or(Ok(value), |e| Err(io::Error::other(e))),
            (b'E', rest) => error = Some(String::from_utf8_lossy(&rest).into_owned()),
            (b'D', row) if value.is_none() && row.len() >= 6 => {
                let len = i32::from_be_bytes(row[2..6].try_into().expect("4 bytes"));
                if len >= 0 {
                    value = Some(String::from_utf8_lossy(&row[6..6 + len as usize]).into_owned());
                }
            }
            _ => {}
        }
    }
}

fn parse_lsn(text: &str) -> Option<u64> {
    let (hi, lo) = text.split_once('/')?;
    Some((u64::from_str_radix(hi, 16).ok()? << 32) | u64::from_str_radix(lo, 16).ok()?)
}

/// Reads an LSN-valued function on a server.
async fn lsn(stream: &mut TcpStream, function: &str) -> io::Result<u64> {
    let text = query_value(stream, &format!("SELECT {function}()")).await?.unwrap_or_default();
    parse_lsn(&text).ok_or_else(|| io::Error::other(format!("{function}() gave {text:?}")))
}

/// Waits until the standby has replayed `target`; returns the wait.
async fn replayed(standby: &mut TcpStream, target: u64, limit: Duration) -> io::Result<Duration> {
    let start = Instant::now();
    while lsn(standby, "pg_last_wal_replay_lsn").await? < target {
        if start.elapsed() > limit {
            return Err(io::Error::other(format!(
                "the standby did not replay up to {target:X} within {limit:?}"
            )));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(start.elapsed())
}

/// The experiment's knobs for this half.
#[derive(Clone, Debug)]
pub struct Plan {
    pub scale: u32,
    pub seconds: u32,
    pub held: Vec<usize>,
    pub clients: Vec<usize>,
}

/// Runs the plan for one standby mode; `Err` names what failed.
pub fn measure_mode(
    pgbench: &Pgbench,
    mode: &'static str,
    plan: &Plan,
    work: &Path,
) -> Result<(Vec<Point>, Backlog), String> {
    let e = |what: &'static str| move |err: io::Error| format!("{mode}: {what}: {err}");
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(e("runtime"))?;
    let max_held = plan.held.iter().copied().max().unwrap_or(0);
    let primary_port = free_port().map_err(e("port"))?;
    let primary_log =
        std::fs::File::create(work.join(format!("standby-{mode}-primary.log"))).map_err(e("log"))?;
    let mut primary = ServerChild::spawn_with(
        primary_port,
        max_held + 20,
        work.join(format!("standby-{mode}-primary")),
        Stdio::from(primary_log),
        &[("fsync", "off")],
    )
    .map_err(e("starting the primary"))?;
    wait_until_accepting(primary_port, "lab", primary.child()).map_err(e("the primary"))?;
    pgbench.init(primary_port, plan.scale).map_err(|err| format!("{mode}: pgbench -i: {err}"))?;
    let standby_port = free_port().map_err(e("port"))?;
    let standby_log =
        std::fs::File::create(work.join(format!("standby-{mode}-standby.log"))).map_err(e("log"))?;
    let conninfo = format!("host=127.0.0.1 port={primary_port} user=lab");
    let mut standby = ServerChild::spawn_with(
        standby_port,
        20,
        work.join(format!("standby-{mode}-standby")),
        Stdio::from(standby_log),
        &[("primary_conninfo", &conninfo), ("snapshot_mode", mode), ("fsync", "off")],
    )
    .map_err(e("starting the standby"))?;
    wait_until_accepting(standby_port, "lab", standby.child()).map_err(e("the standby"))?;
    let mut points = Vec::new();
    let standby_pid = standby.child().id();
    let backlog = runtime.block_on(async {
        let mut p = connect(primary_port, "lab").await.map_err(e("connecting to the primary"))?;
        let mut s = connect(standby_port, "lab").await.map_err(e("connecting to the standby"))?;
        let end = lsn(&mut p, "pg_current_wal_lsn").await.map_err(e("primary lsn"))?;
        replayed(&mut s, end, Duration::from_secs(300)).await.map_err(e("catching up after pgbench -i"))?;
        let start = lsn(&mut p, "pg_current_wal_lsn").await.map_err(e("primary lsn"))?;
        signal(standby_pid, "-STOP").map_err(e("stopping the standby"))?;
        let args: Vec<String> = ["-n", "-M", "prepared", "-b", "tpcb-like", "-c", "2", "-j", "2", "-T"]
            .map(String::from)
            .into_iter()
            .chain([plan.seconds.to_string()])
            .collect();
        let load = pgbench.run_args(primary_port, &args, plan.seconds);
        let end = lsn(&mut p, "pg_current_wal_lsn").await.map_err(e("primary lsn"))?;
        signal(standby_pid, "-CONT").map_err(e("resuming the standby"))?;
        let load = load.map_err(|err| format!("{mode}: the backlog's load: {err}"))?;
        let took =
            replayed(&mut s, end, Duration::from_secs(300)).await.map_err(e("replaying the backlog"))?;
        let backlog =
            Backlog { mode, bytes: end - start, transactions: load.processed, secs: took.as_secs_f64() };
        for &held in &plan.held {
            let mut open = Vec::with_capacity(held);
            for _ in 0..held {
                let mut c = connect(primary_port, "lab").await.map_err(e("a held transaction"))?;
                simple_query(&mut c, "BEGIN; INSERT INTO pgbench_history VALUES (0, 0, 0, 0, now(), NULL)")
                    .await
                    .map_err(e("a held transaction"))?;
                open.push(c);
            }
            for &clients in &plan.clients {
                let point =
                    one_run(pgbench, plan.seconds, (primary_port, &mut p), (standby_port, &mut s), clients)
                        .await
                        .map_err(|err| format!("{mode}: {held} held, {clients} clients: {err}"))?;
                points.push(Point { mode, held, clients, ..point });
            }
            drop(open);
        }
        Ok::<Backlog, String>(backlog)
    })?;
    drop(standby);
    drop(primary);
    Ok((points, backlog))
}

/// One timed run: tpcb-like on the primary and select-only on the standby
/// for `seconds`, a lag sampler alongside.
async fn one_run(
    pgbench: &Pgbench,
    seconds: u32,
    (primary_port, p): (u16, &mut TcpStream),
    (standby_port, s): (u16, &mut TcpStream),
    clients: usize,
) -> Result<Point, String> {
    let io = |err: io::Error| err.to_string();
    let start_lsn = lsn(p, "pg_current_wal_lsn").await.map_err(io)?;
    let started = Instant::now();
    // The writer sends the instant its load stopped.
    let (load_end_tx, load_end_rx) = mpsc::channel::<Instant>();
    let sampler = thread::spawn(move || sample_lag(primary_port, standby_port, &load_end_rx));
    let writer = {
        let pgbench = pgbench.clone();
        let args: Vec<String> =
            ["-n", "-M", "prepared", "-b", "tpcb-like", "-c", "1", "-j", "1", "-T", &seconds.to_string()]
                .map(String::from)
                .to_vec();
        thread::spawn(move || {
            let outcome = pgbench.run_args(primary_port, &args, seconds);
            let _ = load_end_tx.send(Instant::now());
            outcome
        })
    };
    let reader = {
        let pgbench = pgbench.clone();
        let (c, t) = (clients.to_string(), seconds.to_string());
        let args: Vec<String> = ["-n", "-M", "prepared", "-b", "select-only", "-c", &c, "-j", &c, "-T", &t]
            .map(String::from)
            .to_vec();
        thread::spawn(move || pgbench.run_args(standby_port, &args, seconds))
    };
    let reader = reader.join().map_err(|_| "the standby's pgbench thread panicked".to_owned())??;
    let writer = writer.join().map_err(|_| "the primary's pgbench thread panicked".to_owned())??;
    let lag = sampler.join().map_err(|_| "the lag sampler panicked".to_owned())?.map_err(io)?;
    let end_lsn = lsn(p, "pg_current_wal_lsn").await.map_err(io)?;
    replayed(s, end_lsn, Duration::from_secs(300)).await.map_err(io)?;
    let replay_secs = (lag.caught_up - started).as_secs_f64();
    if let Some(problem) = reader.problem.or(writer.problem) {
        return Err(problem);
    }
    Ok(Point {
        mode: "",
        held: 0,
        clients,
        standby_tps: reader.tps,
        primary_tps: writer.tps,
        replay_mb_s: (end_lsn - start_lsn) as f64 / 1e6 / replay_secs,
        replay_tx_s: writer.processed as f64 / replay_secs,
        max_lag_bytes: lag.max_bytes,
        max_lag_ms: lag.max_ms,
        mean_lag_ms: lag.mean_ms,
        catch_up_ms: lag.catch_up_ms,
    })
}

/// What the lag sampler saw.
struct Lag {
    max_bytes: u64,
    max_ms: f64,
    mean_ms: f64,
    /// From the load's end until the standby had replayed it.
    catch_up_ms: f64,
    /// When the standby had replayed everything the load wrote.
    caught_up: Instant,
}

/// Polls both servers every [`SAMPLE_EVERY`] until the load ends: the gap
/// between the primary's WAL end and the standby's replay position in
/// bytes, and in time (each primary sample until the standby first
/// reports a replay position at or past it). Then times the catch-up:
/// from the load's end until the standby replays the primary's WAL end.
fn sample_lag(primary_port: u16, standby_port: u16, load_end: &mpsc::Receiver<Instant>) -> io::Result<Lag> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let mut p = connect(primary_port, "lab").await?;
        let mut s = connect(standby_port, "lab").await?;
        let (mut max_bytes, mut lags) = (0u64, Vec::new());
        let mut waiting: VecDeque<(Instant, u64)> = VecDeque::new();
        let ended = loop {
            let sampled = Instant::now();
            let written = lsn(&mut p, "pg_current_wal_lsn").await?;
            let replayed = lsn(&mut s, "pg_last_wal_replay_lsn").await?;
            let seen = Instant::now();
            max_bytes = max_bytes.max(written.saturating_sub(replayed));
            waiting.push_back((sampled, written));
            while waiting.front().is_some_and(|&(_, at)| at <= replayed) {
                let (when, _) = waiting.pop_front().expect("checked");
                lags.push((seen - when).as_secs_f64() * 1e3);
            }
            match load_end.recv_timeout(SAMPLE_EVERY) {
                Ok(at) => break at,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(io::Error::other("the load ended without saying when"))
                }
            }
        };
        let target = lsn(&mut p, "pg_current_wal_lsn").await?;
        let limit = Instant::now() + Duration::from_secs(300);
        while lsn(&mut s, "pg_last_wal_replay_lsn").await? < target {
            if Instant::now() > limit {
                return Err(io::Error::other(format!("the standby did not replay up to {target:X}")));
            }
            tokio::task::yield_now().await;
        }
        let caught_up = Instant::now();
        // Samples still waiting were replayed by now at the latest.
        lags.extend(waiting.iter().map(|&(when, _)| (caught_up - when).as_secs_f64() * 1e3));
        let mean_ms = if lags.is_empty() { 0.0 } else { lags.iter().sum::<f64>() / lags.len() as f64 };
        Ok(Lag {
            max_bytes,
            max_ms: lags.iter().copied().fold(0.0, f64::max),
            mean_ms,
            catch_up_ms: (caught_up - ended).as_secs_f64() * 1e3,
            caught_up,
        })
    })
}
