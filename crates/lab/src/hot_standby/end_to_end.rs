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

use std::io;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
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
    /// Time from the end of the load until the standby had replayed it.
    pub catch_up_ms: f64,
}

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
    let stop = Arc::new(AtomicBool::new(false));
    let max_lag = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (stop, max_lag) = (Arc::clone(&stop), Arc::clone(&max_lag));
        thread::spawn(move || sample_lag(primary_port, standby_port, &stop, &max_lag))
    };
    let writer = {
        let pgbench = pgbench.clone();
        let args: Vec<String> =
            ["-n", "-M", "prepared", "-b", "tpcb-like", "-c", "1", "-j", "1", "-T", &seconds.to_string()]
                .map(String::from)
                .to_vec();
        thread::spawn(move || pgbench.run_args(primary_port, &args, seconds))
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
    let end_lsn = lsn(p, "pg_current_wal_lsn").await.map_err(io)?;
    let catch_up = replayed(s, end_lsn, Duration::from_secs(300)).await.map_err(io)?;
    let replay_secs = started.elapsed().as_secs_f64();
    stop.store(true, Relaxed);
    let _ = sampler.join();
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
        max_lag_bytes: max_lag.load(Relaxed),
        catch_up_ms: catch_up.as_secs_f64() * 1e3,
    })
}

/// Polls both servers every 100 ms and keeps the largest gap between the
/// primary's WAL end and the standby's replay position.
fn sample_lag(
    primary_port: u16,
    standby_port: u16,
    stop: &AtomicBool,
    max_lag: &AtomicU64,
) -> io::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(async {
        let mut p = connect(primary_port, "lab").await?;
        let mut s = connect(standby_port, "lab").await?;
        // Relaxed: a stop flag and a report read after join.
        while !stop.load(Relaxed) {
            let written = lsn(&mut p, "pg_current_wal_lsn").await?;
            let replayed = lsn(&mut s, "pg_last_wal_replay_lsn").await?;
            max_lag.fetch_max(written.saturating_sub(replayed), Relaxed);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Ok(())
    })
}
