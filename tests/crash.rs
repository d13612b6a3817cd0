//! The crash test: `snapscale serve` runs as a child process while clients
//! run concurrent transfers and record every commit the server
//! acknowledged; the server is killed with SIGKILL at a random moment and
//! restarted, and then:
//!
//! * every acknowledged transfer is in the ledger (nothing acknowledged is
//!   lost);
//! * every account's balance equals its initial balance plus what the
//!   ledger says moved in and out (no partial transaction is visible: a
//!   transfer's two updates and its ledger row come back together or not
//!   at all);
//! * the total balance is unchanged.
//!
//! Checkpoints run every second, so crashes also land during them.
//! `SNAPSCALE_CRASH_CYCLES` sets the number of kill/restart cycles (default
//! 3; the soak is `SNAPSCALE_CRASH_CYCLES=20 cargo test --release --test
//! crash`).

use std::collections::{BTreeMap, HashSet};
use std::hash::{BuildHasher, RandomState};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio_postgres::{Client, NoTls};

const ACCOUNTS: i32 = 20;
const INITIAL: i64 = 1_000;
const CLIENTS: u64 = 4;

fn random(below: u64) -> u64 {
    RandomState::new().hash_one(Instant::now()) % below
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

struct ServerProcess {
    child: Child,
    port: u16,
}

fn spawn_server(dir: &Path, port: u16) -> ServerProcess {
    let log = std::fs::OpenOptions::new().create(true).append(true).open(dir.with_extension("log")).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_snapscale"))
        .args(["serve", "--port", &port.to_string(), "--data-dir"])
        .arg(dir)
        .args(["--set", "checkpoint_timeout=1s"])
        .env("SNAPSCALE_LOG", "info")
        .stdout(Stdio::from(log.try_clone().unwrap()))
        .stderr(Stdio::from(log))
        .spawn()
        .expect("the snapscale binary starts");
    ServerProcess { child, port }
}

async fn connect(port: u16) -> Result<Client, tokio_postgres::Error> {
    let (client, conn) =
        tokio_postgres::connect(&format!("host=127.0.0.1 port={port} user=crash dbname=crash"), NoTls)
            .await?;
    tokio::spawn(conn);
    Ok(client)
}

async fn connect_when_up(server: &mut ServerProcess, log: &Path) -> Client {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(c) = connect(server.port).await {
            return c;
        }
        if let Ok(Some(status)) = server.child.try_wait() {
            panic!("the server exited with {status}:\n{}", std::fs::read_to_string(log).unwrap_or_default());
        }
        assert!(
            Instant::now() < deadline,
            "the server did not come up:\n{}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// One client: transfers until the connection dies; returns the ids of
/// transfers whose COMMIT was acknowledged.
async fn transfers(port: u16, client_no: u64, first_id: i64) -> Vec<i64> {
    let mut acknowledged = Vec::new();
    let Ok(c) = connect(port).await else { return acknowledged };
    let mut id = first_id;
    loop {
        let a = (random(ACCOUNTS as u64) + 1) as i32;
        let b = ((a as u64 + random(ACCOUNTS as u64 - 1)) % ACCOUNTS as u64 + 1) as i32;
        let amount = (random(50) + 1) as i64 + client_no as i64;
        // Lower id first, so two transfers never wait on each other in a cycle.
        let (first, second, first_delta) = if a < b { (a, b, -amount) } else { (b, a, amount) };
        let sql = format!(
            "BEGIN; UPDATE acct SET bal = bal + {first_delta} WHERE id = {first}; \
             UPDATE acct SET bal = bal + {} WHERE id = {second}; \
             INSERT INTO ledger VALUES ({id}, {a}, {b}, {amount}); COMMIT",
            -first_delta
        );
        match c.batch_execute(&sql).await {
            Ok(()) => acknowledged.push(id),
            Err(e) if e.is_closed() || e.code().is_none() => return acknowledged,
            Err(e) => panic!("transfer {id} failed with {e}"),
        }
        id += 1;
    }
}

async fn check(c: &Client, acknowledged: &HashSet<i64>, cycle: usize) -> usize {
    let mut expected: BTreeMap<i32, i64> = (1..=ACCOUNTS).map(|i| (i, INITIAL)).collect();
    let mut present = HashSet::new();
    for row in c.query("SELECT id, src, dst, amount FROM ledger", &[]).await.unwrap() {
        let (id, src, dst, amount): (i64, i32, i32, i64) = (row.get(0), row.get(1), row.get(2), row.get(3));
        *expected.get_mut(&src).unwrap() -= amount;
        *expected.get_mut(&dst).unwrap() += amount;
        present.insert(id);
    }
    let lost: Vec<_> = acknowledged.difference(&present).collect();
    assert!(lost.is_empty(), "cycle {cycle}: acknowledged transfers lost: {lost:?}");
    let mut total = 0;
    for row in c.query("SELECT id, bal FROM acct", &[]).await.unwrap() {
        let (id, bal): (i32, i64) = (row.get(0), row.get(1));
        assert_eq!(
            bal, expected[&id],
            "cycle {cycle}: account {id} does not match the ledger (a partial transfer)"
        );
        total += bal;
    }
    assert_eq!(total, INITIAL * ACCOUNTS as i64, "cycle {cycle}: money was created or destroyed");
    present.len()
}

fn data_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("snapscale-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let _ = std::fs::remove_file(d.with_extension("log"));
    d
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_commits_survive_sigkill() {
    let cycles: usize =
        std::env::var("SNAPSCALE_CRASH_CYCLES").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    let dir = data_dir();
    let log = dir.with_extension("log");
    let mut server = spawn_server(&dir, free_port());
    let c = connect_when_up(&mut server, &log).await;
    c.batch_execute("CREATE TABLE acct (id int PRIMARY KEY, bal int8 NOT NULL)").await.unwrap();
    c.batch_execute("CREATE TABLE ledger (id int8 PRIMARY KEY, src int, dst int, amount int8)")
        .await
        .unwrap();
    for i in 1..=ACCOUNTS {
        c.batch_execute(&format!("INSERT INTO acct VALUES ({i}, {INITIAL})")).await.unwrap();
    }
    drop(c);
    let acknowledged = Arc::new(Mutex::new(HashSet::new()));
    for cycle in 0..cycles {
        let port = server.port;
        let workers: Vec<_> = (0..CLIENTS)
            .map(|n| {
                let first = ((cycle as i64 * CLIENTS as i64 + n as i64) << 32) + 1;
                tokio::spawn(transfers(port, n, first))
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(300 + random(2_200))).await;
        server.child.kill().expect("SIGKILL");
        server.child.wait().unwrap();
        let mut this_cycle = 0;
        for w in workers {
            let ids = w.await.unwrap();
            this_cycle += ids.len();
            acknowledged.lock().unwrap().extend(ids);
        }
        server = spawn_server(&dir, free_port());
        let c = connect_when_up(&mut server, &log).await;
        let acked = acknowledged.lock().unwrap().clone();
        let present = check(&c, &acked, cycle).await;
        eprintln!(
            "cycle {cycle}: {this_cycle} acknowledged before the kill; {present} transfers in the ledger"
        );
        assert!(this_cycle > 0, "cycle {cycle}: no transfer committed before the kill");
    }
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    eprintln!(
        "{} checkpoints completed and {} recoveries over {cycles} cycles",
        text.matches("checkpoint done").count(),
        text.matches("recovery done").count()
    );
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_file(&log);
}
