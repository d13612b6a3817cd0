//! Runs forever (FROZEN-XID in the engine's README): a server whose
//! status log holds 1 024 xids (four pages of 64 bytes) takes more than
//! ten times that many transactions over the wire, in every snapshot mode,
//! with 0 failed transactions. Four clients move money between accounts,
//! two updates per transaction, every fifth with the second inside a
//! savepoint (two xids). Checked: the total never changes, no transaction fails (no
//! 54000: autovacuum and, when it is late, the writers themselves freeze
//! and truncate), the logs' resident pages stay a small fraction of their
//! rings, and halfway through a crash and recovery change nothing
//! (recovery needs none of the truncated logs; the recovered rows load
//! frozen). In `csn` mode a hot standby with the same small logs replays
//! all of it, freezing on its replay thread, and ends with the same total.

mod wire;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use snapscale_server::Settings;
use snapscale_sql::SnapshotMode;
use wire::{connect, rows, start_in, TestServer};

const ACCOUNTS: i64 = 10;
const CLIENTS: usize = 4;

fn shrink(s: &mut Settings, mode: SnapshotMode) {
    s.snapshot_mode = mode;
    s.fsync = false;
    for (name, value) in [
        ("status_log_pages", "4"),
        ("xid_log_page_size", "64B"),
        ("parent_link_pages", "4096"),
        ("csn_log_pages", "4096"),
        ("autovacuum_naptime", "1s"),
        ("synchronous_commit", "off"),
    ] {
        s.set_at_start(name, value).unwrap();
    }
}

async fn one(c: &tokio_postgres::Client, sql: &str) -> String {
    rows(c, sql).await[0][0].clone().unwrap_or_default()
}

/// Transfers until `until` xids have been assigned on `server`; returns how
/// many failed (there must be none).
async fn transfers(server: &TestServer, until: u64) -> u64 {
    let mut tasks = Vec::new();
    for client in 0..CLIENTS {
        let c = connect(server).await;
        let db = std::sync::Arc::clone(&server.db);
        tasks.push(tokio::spawn(async move {
            let mut failed = 0u64;
            let mut n = client as i64;
            while db.xid_log_state().next_xid.0 < until {
                n += 1;
                // Lower id first: no lock-order deadlocks.
                let (a, b) = (n % ACCOUNTS + 1, (n * 7 + 3) % ACCOUNTS + 1);
                let (a, b) = if a == b { (a, a % ACCOUNTS + 1) } else { (a, b) };
                let (lo, hi) = (a.min(b), a.max(b));
                let amount = n % 17;
                let (savepoint, release) = if n % 5 == 0 { ("SAVEPOINT s;", "RELEASE s;") } else { ("", "") };
                let ok = c
                    .batch_execute(&format!(
                        "BEGIN; UPDATE acct SET bal = bal - {amount} WHERE id = {lo}; {savepoint} \
                         UPDATE acct SET bal = bal + {amount} WHERE id = {hi}; {release} COMMIT"
                    ))
                    .await;
                if let Err(e) = ok {
                    eprintln!("transfer failed: {e:?}");
                    let _ = c.batch_execute("ROLLBACK").await;
                    failed += 1;
                }
            }
            failed
        }));
    }
    let mut failed = 0;
    for t in tasks {
        failed += t.await.unwrap();
    }
    failed
}

async fn total(addr: SocketAddr) -> i64 {
    let (c, conn) = tokio_postgres::connect(
        &format!("host={} port={} user=tester", addr.ip(), addr.port()),
        tokio_postgres::NoTls,
    )
    .await
    .unwrap();
    tokio::spawn(conn);
    one(&c, "SELECT sum(bal) FROM acct").await.parse().unwrap()
}

/// The logs hold the span in use: the status log at most its ring (four
/// pages), the parent links and the CSN log a small part of theirs.
fn check_bounded(server: &TestServer, mode: SnapshotMode) {
    let state = server.db.xid_log_state();
    assert!(state.status_span <= state.status_capacity, "{mode}: {state:?}");
    assert!(state.resident_pages.0 <= 4, "{mode}: {state:?}");
    assert!(state.resident_pages.1 <= 4096 / 8, "{mode}: parent links: {state:?}");
    assert!(state.resident_pages.2 <= 4096 / 8, "{mode}: CSN log: {state:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_times_the_status_log_through_a_server_in_every_mode() {
    for mode in SnapshotMode::ALL {
        let dir = std::env::temp_dir().join(format!("snapscale-freezing-{}-{mode}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let server = start_in(Some(&dir), |s| shrink(s, mode)).await;
        let c = connect(&server).await;
        c.batch_execute(&format!(
            "CREATE TABLE acct (id int8 PRIMARY KEY, bal int8 NOT NULL); \
             INSERT INTO acct SELECT g, 1000 FROM generate_series(1, {ACCOUNTS}) g"
        ))
        .await
        .unwrap();
        let capacity = server.db.xid_log_state().status_capacity;
        assert_eq!(capacity, 1024, "{mode}");
        let start = server.db.xid_log_state().next_xid.0;
        let standby = if mode == SnapshotMode::Csn {
            let primary = server.addr;
            let standby_dir = dir.with_extension("standby");
            let _ = std::fs::remove_dir_all(&standby_dir);
            let standby = start_in(Some(&standby_dir), |s| {
                shrink(s, SnapshotMode::KnownAssigned);
                s.primary_conninfo =
                    Some(format!("host={} port={} user=replicator", primary.ip(), primary.port()));
            })
            .await;
            Some((standby, standby_dir))
        } else {
            None
        };
        // Half, a crash, recovery, the other half.
        let failed = transfers(&server, start + 5 * capacity).await;
        assert_eq!(failed, 0, "{mode}: failed transfers before the crash");
        check_bounded(&server, mode);
        assert_eq!(total(server.addr).await, 1000 * ACCOUNTS, "{mode}");
        // The standby streams from this primary: it stays up only in the
        // crash-free half of csn mode's run.
        if let Some((standby, standby_dir)) = standby {
            {
                let end = one(&c, "SELECT pg_current_wal_lsn()").await;
                let sc = connect(&standby).await;
                let deadline = Instant::now() + Duration::from_secs(60);
                loop {
                    let replayed = one(&sc, "SELECT pg_last_wal_replay_lsn()").await;
                    let behind: bool = one(&sc, &format!("SELECT '{replayed}' < '{end}'")).await == "t";
                    if !behind || Instant::now() > deadline {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                assert_eq!(total(standby.addr).await, 1000 * ACCOUNTS, "the standby's total");
                let state = standby.db.xid_log_state();
                assert!(state.status_span <= state.status_capacity, "standby: {state:?}");
                assert!(
                    state.next_xid.0 - start >= 5 * capacity,
                    "the standby replayed five times its status log: {state:?}"
                );
                drop(sc);
                standby.shutdown().await;
                let _ = std::fs::remove_dir_all(&standby_dir);
            }
        }
        drop(c);
        server.crash().await;
        let server = start_in(Some(&dir), |s| shrink(s, mode)).await;
        assert_eq!(total(server.addr).await, 1000 * ACCOUNTS, "{mode}: after recovery");
        let restart = server.db.xid_log_state().next_xid.0;
        let failed = transfers(&server, restart + 5 * capacity).await;
        assert_eq!(failed, 0, "{mode}: failed transfers after the crash");
        check_bounded(&server, mode);
        assert_eq!(total(server.addr).await, 1000 * ACCOUNTS, "{mode}");
        let c = connect(&server).await;
        let age: i64 = one(&c, "SELECT age(datfrozenxid) FROM pg_database WHERE datname = 'postgres'")
            .await
            .parse()
            .unwrap();
        assert!(age <= capacity as i64, "{mode}: the frozen xid follows ({age} xids old)");
        drop(c);
        server.shutdown().await;
        let _ = std::fs::remove_dir_all(&dir);
    }
}
