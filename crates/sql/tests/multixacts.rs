//! MULTI-TRUNCATE through the SQL layer: a database whose multixact log
//! holds 32 positions (four 64-byte pages) takes twenty times that many
//! multixacts of concurrent FOR SHARE lockers in every snapshot mode, with
//! and without the autovacuum worker: each time the log is full only for
//! want of replacing finished multis, the locker freezes first; the log's
//! pages stay within its ring and no lock fails.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::runtime;
use snapscale_sql::{
    AutovacuumConfig, Conn, Database, DatabaseConfig, Gucs, IsolationLevel, Output, SnapshotMode, SqlError,
    Value, XidLogs,
};

#[derive(Clone)]
struct Defaults;

impl Gucs for Defaults {
    fn set(&mut self, _: &str, _: &str) -> Result<(), SqlError> {
        Ok(())
    }
    fn show(&self, _: &str) -> Result<String, SqlError> {
        Ok(String::new())
    }
    fn default_isolation(&self) -> IsolationLevel {
        IsolationLevel::ReadCommitted
    }
}

/// Runs `sql`; the last statement's rows, or its error.
async fn run(conn: &mut Conn<Defaults>, sql: &str) -> Result<Vec<Vec<Value>>, SqlError> {
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

fn database(mode: SnapshotMode) -> Arc<Database> {
    Database::in_memory(DatabaseConfig {
        snapshot_mode: mode,
        xid_logs: XidLogs { multixact_log_pages: 4, page_bytes: 64, ..XidLogs::default() },
        autovacuum: AutovacuumConfig { naptime: Duration::from_millis(200), ..AutovacuumConfig::default() },
        ..DatabaseConfig::default()
    })
}

/// Rounds of three sessions holding one row FOR SHARE at once (two new
/// multis a round), then a no-key UPDATE of it, until twenty times the
/// log's capacity went through.
fn share_lockers_go_round(db: &Arc<Database>, mode: SnapshotMode) {
    let rt = runtime();
    let mut c: Vec<Conn<Defaults>> =
        (0..3).map(|_| Conn::new(Arc::clone(db), db.attach().unwrap(), Defaults)).collect();
    rt.block_on(async {
        run(&mut c[0], "CREATE TABLE t (id int PRIMARY KEY, n int); INSERT INTO t SELECT g, 0 FROM generate_series(1, 10) g")
            .await
            .unwrap();
        let capacity = db.multi_log_state().capacity;
        assert_eq!(capacity, 32, "{mode}");
        let mut round = 0i64;
        while db.multi_log_state().next.0 < 20 * capacity {
            round += 1;
            let id = round % 10 + 1;
            for (i, conn) in c.iter_mut().enumerate() {
                let rows = run(conn, &format!("BEGIN; SELECT id FROM t WHERE id = {id} FOR SHARE"))
                    .await
                    .unwrap_or_else(|e| panic!("{mode}, round {round}, session {i}: {e}"));
                assert_eq!(rows, [[Value::Int(id)]], "{mode}");
            }
            for conn in &mut c {
                run(conn, "COMMIT").await.unwrap();
            }
            run(&mut c[0], &format!("UPDATE t SET n = n + 1 WHERE id = {id}")).await.unwrap();
            let state = db.multi_log_state();
            assert!(state.resident_pages <= 4 && state.span <= capacity, "{mode}: {state:?}");
        }
        let rows = run(&mut c[1], "SELECT sum(n) FROM t").await.unwrap();
        assert_eq!(rows, [[Value::Int(round)]], "{mode}");
    });
}

#[test]
fn share_lockers_go_round_the_multixact_log_without_failing() {
    for mode in SnapshotMode::ALL {
        share_lockers_go_round(&database(mode), mode);
    }
}

#[test]
fn share_lockers_go_round_with_the_autovacuum_worker() {
    let db = database(SnapshotMode::Csn);
    let worker = db.start_autovacuum().unwrap();
    share_lockers_go_round(&db, SnapshotMode::Csn);
    drop(worker);
}
