//! Waits and their bounds, over the wire and in every snapshot mode:
//! `lock_timeout` for relation and row waits, `NOWAIT`, `SKIP LOCKED`, the
//! session's own `deadlock_timeout`, a deadlock between two row updates
//! (40P01, once), and ROLLBACK TO releasing what the subtransaction locked.
//! Timings here are generous behaviour bounds, not measurements.

mod wire;

use std::time::{Duration, Instant};

use snapscale_sql::SnapshotMode;
use wire::*;

async fn table(c: &tokio_postgres::Client) {
    c.batch_execute(
        "CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0), (2, 0), (3, 0), (4, 0)",
    )
    .await
    .unwrap();
}

/// Polls `cond` until it holds (at most 10 s).
async fn wait_until(mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "the condition never held");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn ids(rows: Vec<Vec<Option<String>>>) -> Vec<String> {
    rows.into_iter().map(|r| r[0].clone().unwrap()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lock_timeout_bounds_row_and_relation_waits() {
    for mode in SnapshotMode::ALL {
        let server = start(|s| s.snapshot_mode = mode).await;
        let (a, b) = (connect(&server).await, connect(&server).await);
        table(&a).await;
        a.batch_execute("BEGIN; SELECT * FROM t WHERE id = 1 FOR UPDATE").await.unwrap();
        b.batch_execute("SET lock_timeout = '300ms'").await.unwrap();
        let started = Instant::now();
        let e = b.batch_execute("UPDATE t SET v = 2 WHERE id = 1").await.unwrap_err();
        let waited = started.elapsed();
        let db = e.as_db_error().expect("a server error");
        assert_eq!(
            (db.code().code(), db.message()),
            ("55P03", "canceling statement due to lock timeout"),
            "{mode}"
        );
        assert!(
            waited >= Duration::from_millis(300) && waited < Duration::from_secs(10),
            "{mode}: {waited:?}"
        );
        // Other rows are not held up.
        b.batch_execute("UPDATE t SET v = 2 WHERE id = 2").await.unwrap();
        a.batch_execute("COMMIT").await.unwrap();
        // A relation lock waits under the same bound.
        a.batch_execute("BEGIN; DROP TABLE t").await.unwrap();
        assert_eq!(code(b.simple_query("SELECT * FROM t").await), "55P03", "{mode}");
        a.batch_execute("ROLLBACK").await.unwrap();
        // lock_timeout = 0 waits until the holder ends.
        b.batch_execute("SET lock_timeout = 0").await.unwrap();
        a.batch_execute("BEGIN; UPDATE t SET v = 5 WHERE id = 3").await.unwrap();
        let waiter =
            tokio::spawn(async move { b.batch_execute("UPDATE t SET v = v + 1 WHERE id = 3").await });
        // Observed in the lock manager's queue, not guessed from a sleep.
        wait_until(|| server.db.lock_waits() == 1).await;
        assert!(!waiter.is_finished(), "{mode}: the update must wait for the holder");
        a.batch_execute("COMMIT").await.unwrap();
        waiter.await.unwrap().unwrap();
        assert_eq!(rows(&a, "SELECT v FROM t WHERE id = 3").await, [[Some("6".into())]]);
        server.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nowait_and_skip_locked() {
    for mode in SnapshotMode::ALL {
        let server = start(|s| s.snapshot_mode = mode).await;
        let (a, b, c) = (connect(&server).await, connect(&server).await, connect(&server).await);
        table(&a).await;
        a.batch_execute("BEGIN; SELECT * FROM t WHERE id = 1 FOR UPDATE").await.unwrap();
        let started = Instant::now();
        let e = b.simple_query("SELECT * FROM t WHERE id = 1 FOR UPDATE NOWAIT").await.unwrap_err();
        let db = e.as_db_error().expect("a server error");
        assert_eq!(
            (db.code().code(), db.message()),
            ("55P03", "could not obtain lock on row in relation \"t\"")
        );
        assert!(started.elapsed() < Duration::from_secs(5), "{mode}: NOWAIT does not wait");
        assert_eq!(code(b.simple_query("SELECT * FROM t FOR SHARE NOWAIT").await), "55P03");
        // A row nobody holds is locked at once.
        assert_eq!(ids(rows(&b, "SELECT id FROM t WHERE id = 2 FOR UPDATE NOWAIT").await), ["2"]);

        // SKIP LOCKED leaves out what others hold, and locks only the rows
        // it returns: a job queue hands each worker its own row.
        assert_eq!(
            ids(rows(&b, "SELECT id FROM t ORDER BY id FOR UPDATE SKIP LOCKED").await),
            ["2", "3", "4"]
        );
        b.batch_execute("BEGIN").await.unwrap();
        c.batch_execute("BEGIN").await.unwrap();
        let take = "SELECT id FROM t ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED";
        assert_eq!(ids(rows(&b, take).await), ["2"], "{mode}");
        assert_eq!(ids(rows(&c, take).await), ["3"], "{mode}");
        assert_eq!(
            ids(rows(&c, "SELECT id FROM t ORDER BY id DESC FOR UPDATE SKIP LOCKED").await),
            ["4", "3"]
        );
        assert_eq!(code(c.simple_query("SELECT id FROM t FOR UPDATE OF nope").await), "42P01");
        for client in [&a, &b, &c] {
            client.batch_execute("ROLLBACK").await.unwrap();
        }
        assert_eq!(ids(rows(&b, take).await), ["1"]);
        server.shutdown().await;
    }
}

/// Two sessions update two rows in opposite order: exactly one gets 40P01,
/// after its own deadlock_timeout, and the other proceeds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_deadlock_has_one_victim_after_the_sessions_deadlock_timeout() {
    for mode in SnapshotMode::ALL {
        let server = start(|s| s.snapshot_mode = mode).await;
        let (a, b) = (connect(&server).await, connect(&server).await);
        table(&a).await;
        for c in [&a, &b] {
            c.batch_execute("SET deadlock_timeout = '200ms'").await.unwrap();
        }
        a.batch_execute("BEGIN; UPDATE t SET v = 1 WHERE id = 1").await.unwrap();
        b.batch_execute("BEGIN; UPDATE t SET v = 2 WHERE id = 2").await.unwrap();
        let started = Instant::now();
        let (a, b) = (std::sync::Arc::new(a), std::sync::Arc::new(b));
        let (a2, b2) = (std::sync::Arc::clone(&a), std::sync::Arc::clone(&b));
        let first = tokio::spawn(async move { a2.batch_execute("UPDATE t SET v = 1 WHERE id = 2").await });
        let second = tokio::spawn(async move { b2.batch_execute("UPDATE t SET v = 2 WHERE id = 1").await });
        let (first, second) = (first.await.unwrap(), second.await.unwrap());
        let took = started.elapsed();
        let outcomes = [
            first.as_ref().err().and_then(|e| e.code()).map(|c| c.code().to_owned()),
            second.as_ref().err().and_then(|e| e.code()).map(|c| c.code().to_owned()),
        ];
        let victims = outcomes.iter().filter(|o| o.is_some()).count();
        assert_eq!(victims, 1, "{mode}: {outcomes:?}");
        assert!(outcomes.contains(&Some("40P01".into())), "{mode}: {outcomes:?}");
        assert!(
            took < Duration::from_millis(900),
            "{mode}: the session's 200ms, not the 1s default: {took:?}"
        );
        let (winner, loser) = if first.is_ok() { (&a, &b) } else { (&b, &a) };
        loser.batch_execute("ROLLBACK").await.unwrap();
        winner.batch_execute("COMMIT").await.unwrap();
        let expected = if first.is_ok() { ["1", "1"] } else { ["2", "2"] };
        assert_eq!(ids(rows(&a, "SELECT v FROM t WHERE id <= 2 ORDER BY id").await), expected, "{mode}");
        server.shutdown().await;
    }
}

/// SUBXACT-LOCKS: ROLLBACK TO releases the relation locks taken inside the
/// rolled-back subtransaction; RELEASE keeps them for the transaction.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollback_to_releases_the_subtransactions_locks() {
    for mode in SnapshotMode::ALL {
        let server = start(|s| s.snapshot_mode = mode).await;
        let (a, b) = (connect(&server).await, connect(&server).await);
        a.batch_execute("CREATE TABLE u (id int); CREATE TABLE w (id int)").await.unwrap();
        b.batch_execute("SET lock_timeout = '300ms'").await.unwrap();
        a.batch_execute("BEGIN; SAVEPOINT s; DROP TABLE u").await.unwrap();
        assert_eq!(
            code(b.simple_query("SELECT * FROM u").await),
            "55P03",
            "{mode}: held while the subtransaction lives"
        );
        a.batch_execute("ROLLBACK TO s").await.unwrap();
        assert!(rows(&b, "SELECT * FROM u").await.is_empty(), "{mode}: released by ROLLBACK TO");
        // Locked inside a savepoint that is released: kept to the end.
        a.batch_execute("SAVEPOINT r; DROP TABLE w; RELEASE r").await.unwrap();
        assert_eq!(code(b.simple_query("SELECT * FROM w").await), "55P03", "{mode}");
        // A lock the transaction took before the savepoint survives it.
        a.batch_execute("SAVEPOINT q; ROLLBACK TO q").await.unwrap();
        assert_eq!(code(b.simple_query("SELECT * FROM w").await), "55P03", "{mode}");
        a.batch_execute("ROLLBACK").await.unwrap();
        assert!(rows(&b, "SELECT * FROM w").await.is_empty());
        server.shutdown().await;
    }
}
