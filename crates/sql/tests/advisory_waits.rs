//! A session waiting in `pg_advisory_lock` is interrupted by a cancel
//! request (57014), and a connection that goes away, waiting or holding,
//! leaves no advisory lock behind. The script `advisory_locks.test` covers
//! what a script can say (timeouts, deadlocks, DISCARD ALL, `\quit`);
//! these need a cancel request and a connection dropped mid-wait.

use std::sync::Arc;
use std::time::{Duration, Instant};

use snapscale_sql::guc::SessionSettings;
use snapscale_sql::{Conn, Database, DatabaseConfig, Output, SqlError};

fn session(db: &Arc<Database>) -> Conn<SessionSettings> {
    Conn::new(Arc::clone(db), db.attach().expect("a session slot"), SessionSettings::default())
}

/// One simple Query message: its statements' outcomes, the first error ending it.
async fn query(conn: &mut Conn<SessionSettings>, sql: &str) -> Result<Vec<Output>, SqlError> {
    let mut outs = Vec::new();
    for statement in conn.parse(sql)? {
        match conn.execute_parsed(statement).await {
            Ok(out) => outs.push(out),
            Err(e) => {
                conn.sync().await.ok();
                return Err(e);
            }
        }
    }
    conn.sync().await?;
    Ok(outs)
}

/// The first value of the first row, as text.
async fn value(conn: &mut Conn<SessionSettings>, sql: &str) -> String {
    match query(conn, sql).await.unwrap().pop() {
        Some(Output::Rows { rows, .. }) => rows[0][0].to_text().unwrap_or_else(|| "NULL".into()),
        other => panic!("{sql}: {other:?}"),
    }
}

async fn until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(20), "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_request_interrupts_a_waiting_advisory_lock() {
    let db = Database::in_memory(DatabaseConfig::default());
    let mut holder = session(&db);
    let mut waiter = session(&db);
    query(&mut holder, "SELECT pg_advisory_lock(1)").await.unwrap();
    let cancel = waiter.cancel_handle();
    let task = tokio::spawn(async move {
        let r = query(&mut waiter, "SELECT pg_advisory_lock(1)").await;
        (waiter, r)
    });
    until("the waiter to queue", || db.lock_waits() == 1).await;
    cancel.request();
    let (mut waiter, r) =
        tokio::time::timeout(Duration::from_secs(20), task).await.expect("the cancel ends the wait").unwrap();
    let e = r.unwrap_err();
    assert_eq!((e.code.code(), e.message.as_str()), ("57014", "canceling statement due to user request"));
    assert_eq!(db.lock_waits(), 0, "the request left the queue");
    assert_eq!(
        value(&mut waiter, "SELECT pg_try_advisory_lock(1)").await,
        "f",
        "not granted behind our back"
    );
    assert_eq!(value(&mut holder, "SELECT pg_advisory_unlock(1)").await, "t");
    assert_eq!(value(&mut waiter, "SELECT pg_try_advisory_lock(1)").await, "t");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_goes_away_leaves_no_advisory_lock() {
    let db = Database::in_memory(DatabaseConfig::default());
    let mut holder = session(&db);
    let mut waiter = session(&db);
    query(&mut holder, "SELECT pg_advisory_lock(1), pg_advisory_lock_shared(2), pg_advisory_lock(1)")
        .await
        .unwrap();
    query(&mut holder, "BEGIN; SELECT pg_advisory_xact_lock(3)").await.unwrap();
    // Dropped while it waits: its request goes, its session lock too.
    let task = tokio::spawn(async move {
        query(&mut waiter, "SELECT pg_advisory_lock(4); SELECT pg_advisory_lock(1)").await.unwrap();
    });
    until("the waiter to queue", || db.lock_waits() == 1).await;
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert_eq!(db.lock_waits(), 0);
    let mut other = session(&db);
    assert_eq!(
        value(&mut other, "SELECT pg_try_advisory_lock(4)").await,
        "t",
        "the dropped session's lock went"
    );
    assert_eq!(value(&mut other, "SELECT pg_try_advisory_lock(1) OR pg_try_advisory_lock(3)").await, "f");
    drop(holder);
    assert_eq!(
        value(&mut other, "SELECT pg_try_advisory_lock(1)").await,
        "t",
        "both holds went at disconnect"
    );
    assert_eq!(value(&mut other, "SELECT pg_try_advisory_lock(2) AND pg_try_advisory_lock(3)").await, "t");
    drop(other);
    assert_eq!(db.locks_held(), 0, "nothing is left once every connection has gone");
}
