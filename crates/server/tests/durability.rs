//! Restarts keep every committed change, DDL included, in every snapshot
//! mode: after a clean shutdown (final checkpoint) and after a crash (no
//! checkpoint: the WAL is replayed), with checkpoints taken in between.

mod wire;

use snapscale_sql::SnapshotMode;
use tokio_postgres::Client;
use wire::{connect, rows, start_in};

/// Everything the workload left, as text.
async fn state(c: &Client) -> Vec<Vec<Vec<Option<String>>>> {
    vec![
        rows(c, "SELECT id, name, balance, opened FROM accounts ORDER BY id").await,
        rows(c, "SELECT id, note FROM notes ORDER BY id").await,
        rows(c, "SELECT count(*) FROM emptied").await,
    ]
}

async fn workload(c: &Client) {
    // Separate Query messages: a BEGIN inside one message would pull the
    // statements before it into its block (PostgreSQL's rule).
    for sql in [
        "CREATE TABLE accounts (id int PRIMARY KEY, name varchar(10) NOT NULL, balance int8, opened date);
         INSERT INTO accounts VALUES (1, 'ada', 100, '2024-01-01'), (2, 'bob', 50, NULL), (3, 'cy', 0, NULL);
         UPDATE accounts SET balance = balance + 5 WHERE id = 2;
         DELETE FROM accounts WHERE id = 3",
        "CREATE TABLE notes (id int, note text); INSERT INTO notes VALUES (1, 'tab\there'), (2, NULL)",
        "ALTER TABLE notes ADD PRIMARY KEY (id)",
        "CREATE TABLE emptied (x int); INSERT INTO emptied VALUES (1), (2)",
        "TRUNCATE emptied",
        "CREATE TABLE dropped (x int); DROP TABLE dropped",
        "BEGIN; INSERT INTO accounts VALUES (9, 'ghost', 0, NULL); CREATE TABLE ghost (x int); ROLLBACK",
        "BEGIN; SAVEPOINT s; INSERT INTO notes VALUES (7, 'undone'); ROLLBACK TO s; INSERT INTO notes VALUES (3, 'kept'); COMMIT",
        "CREATE TEMP TABLE scratch (x int); INSERT INTO scratch VALUES (1)",
    ] {
        c.batch_execute(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn committed_work_survives_restarts_and_crashes_in_every_mode() {
    for mode in SnapshotMode::ALL {
        let dir = std::env::temp_dir().join(format!("snapscale-durability-{}-{mode}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let server = start_in(Some(&dir), |s| s.snapshot_mode = mode).await;
        let c = connect(&server).await;
        workload(&c).await;
        let expected = state(&c).await;
        assert_eq!(expected[0].len(), 2, "{mode}");
        drop(c);
        server.shutdown().await;

        // After a clean shutdown: the checkpoint alone.
        let server = start_in(Some(&dir), |s| s.snapshot_mode = mode).await;
        let c = connect(&server).await;
        assert_eq!(state(&c).await, expected, "{mode}: after a clean shutdown");
        assert!(c.batch_execute("SELECT count(*) FROM ghost").await.is_err(), "{mode}: rolled back");
        c.batch_execute("UPDATE accounts SET balance = balance * 2").await.unwrap();
        c.batch_execute("INSERT INTO notes VALUES (4, 'after restart')").await.unwrap();
        // The constraints came back with the catalog.
        assert!(c.batch_execute("INSERT INTO notes VALUES (1, 'dup')").await.is_err());
        assert!(
            c.batch_execute("SELECT * FROM scratch").await.is_err(),
            "{mode}: temp tables end with the session"
        );
        let expected = state(&c).await;
        drop(c);
        server.crash().await;

        // After a crash: the checkpoint plus the WAL after it.
        let server = start_in(Some(&dir), |s| s.snapshot_mode = mode).await;
        let c = connect(&server).await;
        assert_eq!(state(&c).await, expected, "{mode}: after a crash");
        // Row ids continue after recovery: new rows do not collide.
        c.batch_execute(
            "INSERT INTO accounts VALUES (5, 'eve', 1, NULL); UPDATE accounts SET name = 'eva' WHERE id = 5",
        )
        .await
        .unwrap();
        let expected = state(&c).await;
        drop(c);
        server.crash().await;
        let server = start_in(Some(&dir), |s| s.snapshot_mode = mode).await;
        let c = connect(&server).await;
        assert_eq!(state(&c).await, expected, "{mode}: after a second crash");
        drop(c);
        server.shutdown().await;
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wal_volume_triggers_a_checkpoint_and_async_commits_survive_a_process_crash() {
    let dir = std::env::temp_dir().join(format!("snapscale-durability-volume-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let configure = |s: &mut snapscale_server::Settings| {
        s.max_wal_size = 1 << 20;
        s.checkpoint_timeout = std::time::Duration::from_secs(3600);
    };
    let server = start_in(Some(&dir), configure).await;
    let c = connect(&server).await;
    c.batch_execute("CREATE TABLE big (id int PRIMARY KEY, pad text)").await.unwrap();
    assert!(!dir.join("control").exists(), "no checkpoint yet");
    // Over 1 MB of WAL.
    let pad = "x".repeat(1000);
    for chunk in 0..20 {
        let values: Vec<String> = (0..100).map(|i| format!("({}, '{pad}')", chunk * 100 + i)).collect();
        c.batch_execute(&format!("INSERT INTO big VALUES {}", values.join(", "))).await.unwrap();
    }
    let mut waited = 0;
    while !dir.join("control").exists() {
        waited += 1;
        assert!(waited < 100, "no checkpoint after 2 MB of WAL");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // synchronous_commit = off: acknowledged before the flush. A process
    // crash still keeps it (the record is in the kernel's page cache).
    c.batch_execute("SET synchronous_commit = off; INSERT INTO big VALUES (-1, 'async')").await.unwrap();
    drop(c);
    server.crash().await;
    let server = start_in(Some(&dir), configure).await;
    let c = connect(&server).await;
    assert_eq!(rows(&c, "SELECT count(*) FROM big").await, vec![vec![Some("2001".to_string())]]);
    drop(c);
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
