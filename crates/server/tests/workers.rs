//! Connections on the connection workers (one thread each, see the
//! server's `workers.rs`): what must still reach a statement that keeps its
//! worker's thread busy without ever waiting.

mod wire;

use std::sync::Arc;
use std::time::Duration;

use tokio_postgres::NoTls;
use wire::{code, connect, rows, start};

/// Some 4·10¹⁰ join conditions, none true: minutes of computing with no
/// wait in it and no row kept, checking for a cancel once per outer row.
const BUSY: &str = "SELECT count(*) FROM generate_series(1, 200000) a JOIN generate_series(1, 200000) b \
                    ON a.a + b.b < 0";

/// statement_timeout's clock runs off the session's worker, so it fires
/// while the statement computes on it.
#[tokio::test]
async fn statement_timeout_stops_a_statement_that_never_waits() {
    let server = start(|_| {}).await;
    let c = connect(&server).await;
    c.batch_execute("SET statement_timeout = '100ms'").await.unwrap();
    let e = c.batch_execute(BUSY).await.expect_err("stopped by statement_timeout");
    let db = e.as_db_error().expect("a server error");
    assert_eq!((db.code().code(), db.message()), ("57014", "canceling statement due to statement timeout"));
    // The session goes on.
    c.batch_execute("RESET statement_timeout").await.unwrap();
    assert_eq!(rows(&c, "SELECT 1").await, vec![vec![Some("1".to_owned())]]);
}

/// A cancel request is answered by the acceptor, not by a worker, so it
/// reaches a statement that keeps its worker busy, whichever worker the
/// cancel's own connection would have gone to.
#[tokio::test]
async fn a_cancel_reaches_a_statement_that_never_waits() {
    let server = start(|_| {}).await;
    // More connections than this machine has workers: some share one.
    let mut others = Vec::new();
    for _ in 0..4 {
        others.push(connect(&server).await);
    }
    let busy = Arc::new(connect(&server).await);
    let token = busy.cancel_token();
    let h = {
        let busy = Arc::clone(&busy);
        tokio::spawn(async move { busy.execute(BUSY, &[]).await })
    };
    // A cancel that lands before the statement starts is forgotten, as in
    // PostgreSQL: send one until the statement ends. Only a cancel ends it
    // within minutes.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !h.is_finished() {
        assert!(std::time::Instant::now() < deadline, "the cancel never reached the statement");
        token.cancel_query(NoTls).await.unwrap();
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(code(h.await.unwrap()), "57014");
    for c in &others {
        assert_eq!(rows(c, "SELECT 1").await, vec![vec![Some("1".to_owned())]]);
    }
}

/// OFF-THE-WORKER: a statement whose plan is unbounded runs with its
/// worker handed to another thread, so every other connection (those on
/// the busy statement's worker included) and a new one are served while
/// it computes. Without the hand-off they wait for the whole statement
/// (minutes): the statement must still be running when they answer.
#[tokio::test]
async fn other_connections_are_served_while_a_statement_computes() {
    let server = start(|_| {}).await;
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let busy = Arc::new(connect(&server).await);
    // Twice as many as there are workers: some share the busy one's.
    let mut others = Vec::new();
    for _ in 0..2 * workers + 1 {
        others.push(connect(&server).await);
    }
    let token = busy.cancel_token();
    let h = {
        let busy = Arc::clone(&busy);
        tokio::spawn(async move { busy.execute(BUSY, &[]).await })
    };
    // Wait until the statement is running (it shows in pg_stat_activity).
    let watcher = &others[0];
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while rows(
        watcher,
        "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT count(*) FROM generate%'",
    )
    .await
        != vec![vec![Some("1".to_owned())]]
    {
        assert!(std::time::Instant::now() < deadline, "the busy statement never started");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Each answer must come while the statement still runs; a guard
    // cancels it after a minute so a failure ends.
    let guard = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_secs(60)).await;
        let _ = token.cancel_query(NoTls).await;
    });
    for c in &others {
        assert_eq!(rows(c, "SELECT 1").await, vec![vec![Some("1".to_owned())]]);
    }
    let fresh = connect(&server).await;
    assert_eq!(rows(&fresh, "SELECT 2").await, vec![vec![Some("2".to_owned())]]);
    assert!(!h.is_finished(), "the others were answered only after the busy statement ended");
    busy.cancel_token().cancel_query(NoTls).await.unwrap();
    assert_eq!(code(h.await.unwrap()), "57014");
    guard.abort();
}
