//! FROZEN-XID: a database with a tiny status log (1 024 xids) takes ten
//! times that many write transactions in every snapshot mode, with and
//! without the autovacuum worker: the status log is truncated below the
//! frozen xid, the logs' pages stay bounded, no write fails. A snapshot or
//! a transaction that pins the log is named in the 54000 (its pid, xmin or
//! xid, and age); VACUUM (FREEZE), age(relfrozenxid) and
//! pg_stat_user_tables show the state.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::runtime;
use snapscale_sql::guc::SessionSettings;
use snapscale_sql::{
    AutovacuumConfig, Conn, Database, DatabaseConfig, Output, SnapshotMode, SqlError, Value, XidLogs,
};

/// Runs `sql`; the last statement's rows, or its error.
async fn run(conn: &mut Conn<SessionSettings>, sql: &str) -> Result<Vec<Vec<Value>>, SqlError> {
    let mut rows = Vec::new();
    for statement in conn.parse(sql)? {
        match conn.execute_parsed(statement).await {
            Ok(Output::Rows { rows: r, .. }) => rows = r.iter().map(|r| r.to_vec()).collect(),
            Ok(_) => rows = Vec::new(),
            Err(e) => {
                conn.sync().await?;
                return Err(e);
            }
        }
    }
    conn.sync().await?;
    Ok(rows)
}

async fn int(conn: &mut Conn<SessionSettings>, sql: &str) -> i64 {
    match run(conn, sql).await.unwrap_or_else(|e| panic!("{sql}: {e}")).as_slice() {
        [row] => match row.as_slice() {
            [Value::Int(i)] => *i,
            other => panic!("{sql}: {other:?}"),
        },
        other => panic!("{sql}: {other:?}"),
    }
}

fn database(mode: SnapshotMode) -> Arc<Database> {
    Database::in_memory(DatabaseConfig {
        snapshot_mode: mode,
        xid_logs: XidLogs {
            status_log_pages: 4,
            csn_log_pages: 64,
            parent_link_pages: 1024,
            page_bytes: 64,
            ..XidLogs::default()
        },
        autovacuum: AutovacuumConfig { naptime: Duration::from_secs(1), ..AutovacuumConfig::default() },
        ..DatabaseConfig::default()
    })
}

const SETUP: &str = "CREATE TABLE acct (id int PRIMARY KEY, n int); \
                     INSERT INTO acct SELECT g, 0 FROM generate_series(1, 10) g; \
                     CREATE TEMP TABLE mine (n int); INSERT INTO mine VALUES (0)";

/// Ten times the status log's capacity of write transactions, some
/// with subtransactions, with no autovacuum worker: each time the log is
/// full only for want of freezing, the writer freezes first.
#[test]
fn writers_go_round_the_status_log_without_failing() {
    let rt = runtime();
    for mode in SnapshotMode::ALL {
        let db = database(mode);
        let mut c = Conn::new(Arc::clone(&db), db.attach().unwrap(), SessionSettings::default());
        rt.block_on(async {
            run(&mut c, SETUP).await.unwrap();
            let capacity = db.xid_log_state().status_capacity;
            assert_eq!(capacity, 1024, "{mode}");
            let first = db.xid_log_state().next_xid;
            let mut i = 0u64;
            while db.xid_log_state().next_xid.0 - first.0 < 10 * capacity {
                i += 1;
                let sql = if i.is_multiple_of(10) {
                    "BEGIN; UPDATE acct SET n = n + 1 WHERE id = 1; SAVEPOINT a; \
                     UPDATE acct SET n = n - 1 WHERE id = 2; RELEASE a; UPDATE mine SET n = n + 1; COMMIT"
                        .to_owned()
                } else {
                    format!("UPDATE acct SET n = n + 1 WHERE id = {}", i % 10 + 1)
                };
                run(&mut c, &sql).await.unwrap_or_else(|e| panic!("{mode}, transaction {i}: {e}"));
            }
            let state = db.xid_log_state();
            assert!(state.status_span <= capacity, "{mode}: {state:?}");
            assert!(state.resident_pages.0 <= 4, "{mode}: {state:?}");
            assert!(state.resident_pages.1 < 1024 / 8, "{mode}: parent links hold their span: {state:?}");
            assert_eq!(int(&mut c, "SELECT sum(n) FROM acct").await, (i - i / 10) as i64, "{mode}");
            // VACUUM (FREEZE) freezes everything: the table's age is what
            // was assigned since.
            run(&mut c, "VACUUM (FREEZE)").await.unwrap();
            let age = int(&mut c, "SELECT age(relfrozenxid) FROM pg_class WHERE relname = 'acct'").await;
            assert!((0..=2).contains(&age), "{mode}: age {age} after VACUUM (FREEZE)");
            let dat =
                int(&mut c, "SELECT age(datfrozenxid) FROM pg_database WHERE datname = 'postgres'").await;
            assert!((0..=2).contains(&dat), "{mode}: database age {dat}");
            assert_eq!(
                int(&mut c, "SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'acct'").await,
                10
            );
            assert_eq!(
                int(&mut c, "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'acct'").await,
                0
            );
            assert!(
                int(&mut c, "SELECT vacuum_count FROM pg_stat_user_tables WHERE relname = 'acct'").await >= 1
            );
        });
    }
}

/// An old snapshot pins the status log: the writer that finds it full is
/// told which session holds it, its xmin and age; a transaction left open
/// is named by its xid. Once they end, writing goes on.
#[test]
fn the_session_that_pins_the_log_is_named() {
    let rt = runtime();
    for mode in SnapshotMode::ALL {
        let db = database(mode);
        let mut c = Conn::new(Arc::clone(&db), db.attach().unwrap(), SessionSettings::default());
        let mut old = Conn::new(Arc::clone(&db), db.attach().unwrap(), SessionSettings::default());
        rt.block_on(async {
            run(&mut c, SETUP).await.unwrap();
            run(&mut old, "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT count(*) FROM acct").await.unwrap();
            let err = loop {
                if let Err(e) = run(&mut c, "UPDATE acct SET n = n + 1 WHERE id = 1").await {
                    break e;
                }
            };
            assert_eq!(err.code.code(), "54000", "{mode}: {err:?}");
            let who = format!("the session with pid {} holds a snapshot", old.pid());
            assert!(err.message.contains(&who), "{mode}: {}", err.message);
            assert!(err.hint.as_deref().is_some_and(|h| h.contains("pg_terminate_backend")), "{err:?}");
            run(&mut old, "COMMIT").await.unwrap();
            run(&mut c, "UPDATE acct SET n = n + 1 WHERE id = 1").await.unwrap();
            // A transaction that wrote and stays open.
            run(&mut old, "BEGIN; UPDATE acct SET n = 0 WHERE id = 10").await.unwrap();
            let err = loop {
                if let Err(e) = run(&mut c, "UPDATE acct SET n = n + 1 WHERE id = 1").await {
                    break e;
                }
            };
            let who = format!("the session with pid {} has had transaction", old.pid());
            assert!(err.message.contains(&who), "{mode}: {}", err.message);
            run(&mut old, "ROLLBACK").await.unwrap();
            run(&mut c, "UPDATE acct SET n = n + 1 WHERE id = 1").await.unwrap();
        });
    }
}

/// The autovacuum worker, woken by writers as the frozen xid ages, keeps
/// the status log truncated, so writers never have to freeze themselves.
#[test]
fn the_autovacuum_worker_keeps_up() {
    let rt = runtime();
    let db = database(SnapshotMode::Csn);
    let worker = db.start_autovacuum().unwrap();
    let mut c = Conn::new(Arc::clone(&db), db.attach().unwrap(), SessionSettings::default());
    rt.block_on(async {
        run(&mut c, SETUP).await.unwrap();
        let first = db.xid_log_state().next_xid;
        while db.xid_log_state().next_xid.0 - first.0 < 10 * 1024 {
            run(&mut c, "UPDATE acct SET n = n + 1 WHERE id = 3").await.unwrap();
        }
    });
    assert!(db.autovacuum_rounds() > 0, "woken by the writers");
    // Left alone, it finishes the job within a naptime or two.
    let deadline = Instant::now() + Duration::from_secs(20);
    while db.xid_log_state().status_span > 1024 / 2 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(db.xid_log_state().status_span <= 1024 / 2, "{:?}", db.xid_log_state());
    drop(worker);
}

/// RELOPTIONS: a table's own storage parameters steer the autovacuum
/// worker. `autovacuum_enabled = off` keeps it away from a table however
/// many dead versions it has; a low `autovacuum_vacuum_threshold` brings
/// it to a table well before the server's default would; RESET gives the
/// table back to it. pg_stat_user_tables counts the worker's passes.
#[test]
fn a_tables_storage_parameters_steer_the_autovacuum_worker() {
    let rt = runtime();
    let db = Database::in_memory(DatabaseConfig {
        autovacuum: AutovacuumConfig { naptime: Duration::from_millis(100), ..AutovacuumConfig::default() },
        ..DatabaseConfig::default()
    });
    let worker = db.start_autovacuum().unwrap();
    let mut c = Conn::new(Arc::clone(&db), db.attach().unwrap(), SessionSettings::default());
    let passes =
        |table: &str| format!("SELECT autovacuum_count FROM pg_stat_user_tables WHERE relname = '{table}'");
    rt.block_on(async {
        run(
            &mut c,
            "CREATE TABLE kept (id int PRIMARY KEY, n int)
                 WITH (autovacuum_enabled = off, autovacuum_vacuum_threshold = 0, autovacuum_vacuum_scale_factor = 0);
             CREATE TABLE eager (id int PRIMARY KEY, n int)
                 WITH (autovacuum_vacuum_threshold = 5, autovacuum_vacuum_scale_factor = 0);
             CREATE TABLE plain (id int PRIMARY KEY, n int);
             INSERT INTO kept VALUES (1, 0); INSERT INTO eager VALUES (1, 0); INSERT INTO plain VALUES (1, 0)",
        )
        .await
        .unwrap();
        // Twenty dead versions each: past `eager`'s threshold of 5, short
        // of the server's default of 50 (`plain`).
        for _ in 0..20 {
            run(&mut c, "UPDATE kept SET n = n + 1; UPDATE eager SET n = n + 1; UPDATE plain SET n = n + 1")
                .await
                .unwrap();
        }
        let deadline = Instant::now() + Duration::from_secs(20);
        while int(&mut c, &passes("eager")).await == 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(int(&mut c, &passes("eager")).await > 0, "a threshold of 5 is passed");
        // Several rounds later, still no pass over the others.
        let rounds = db.autovacuum_rounds();
        while db.autovacuum_rounds() < rounds + 3 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert_eq!(int(&mut c, &passes("kept")).await, 0, "autovacuum_enabled = off");
        assert_eq!(int(&mut c, &passes("plain")).await, 0, "the default threshold is not passed");
        run(&mut c, "ALTER TABLE kept RESET (autovacuum_enabled)").await.unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while int(&mut c, &passes("kept")).await == 0 && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(int(&mut c, &passes("kept")).await > 0, "given back to the worker");
    });
    drop(worker);
}
