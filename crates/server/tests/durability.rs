//! Restarts keep every committed change, DDL included, in every snapshot
//! mode: after a clean shutdown (final checkpoint) and after a crash (no
//! checkpoint: the WAL is replayed), with checkpoints taken in between.

mod wire;

use snapscale_sql::SnapshotMode;
use tokio_postgres::Client;
use wire::{connect, connect_with_task, rows, serve, start_in, TestServer};

/// Everything the workload left, as text.
async fn state(c: &Client) -> Vec<Vec<Vec<Option<String>>>> {
    vec![
        rows(c, "SELECT id, name, balance, opened FROM accounts ORDER BY id").await,
        rows(c, "SELECT id, note FROM notes ORDER BY id").await,
        rows(c, "SELECT count(*) FROM emptied").await,
        // Schemas and what is in them (REL-KEY).
        rows(c, "SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' ORDER BY 1").await,
        rows(
            c,
            "SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
             WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema' ORDER BY 1, 2",
        )
        .await,
        rows(c, "SELECT id, note FROM app.accounts ORDER BY id").await,
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
        "CREATE SCHEMA app; CREATE TABLE app.accounts (id int PRIMARY KEY, note text);
         INSERT INTO app.accounts VALUES (1, 'in app')",
        "CREATE SCHEMA gone; CREATE TABLE gone.t (x int); DROP SCHEMA gone CASCADE",
        "CREATE SCHEMA moved; CREATE TABLE moved.m (x int); ALTER TABLE moved.m SET SCHEMA app;
         ALTER SCHEMA moved RENAME TO renamed",
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
        // Schema changes that only the WAL holds at the crash below.
        c.batch_execute(
            "CREATE SCHEMA late; CREATE TABLE late.t (x int); INSERT INTO late.t VALUES (7);
             DROP SCHEMA renamed; INSERT INTO app.accounts VALUES (2, 'after restart');
             ALTER TABLE app.m SET SCHEMA late",
        )
        .await
        .unwrap();
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

/// The next value of `seq`, as a number.
async fn next(c: &Client, seq: &str) -> i64 {
    c.query_one(&format!("SELECT nextval('{seq}')"), &[]).await.unwrap().get(0)
}

/// Sequences are not transactional but never go back: after a crash (the
/// WAL's logged-ahead values) and a clean restart (the checkpoint's image)
/// every value handed out before stays behind the next one, whatever the
/// transactions that drew them did; SERIAL defaults come back with the
/// catalog.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sequences_never_repeat_a_value_across_crashes_and_restarts() {
    let dir = std::env::temp_dir().join(format!("snapscale-sequences-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    c.batch_execute(
        "CREATE TABLE k (id serial PRIMARY KEY, v text DEFAULT 'd'); CREATE SEQUENCE s INCREMENT 5",
    )
    .await
    .unwrap();
    let mut drawn = Vec::new();
    for _ in 0..40 {
        drawn.push(next(&c, "s").await);
    }
    // Drawn in a transaction that rolls back: still used up.
    c.batch_execute("BEGIN").await.unwrap();
    drawn.push(next(&c, "s").await);
    c.batch_execute("ROLLBACK").await.unwrap();
    c.batch_execute("INSERT INTO k (v) VALUES ('a'), ('b'); INSERT INTO k DEFAULT VALUES").await.unwrap();
    // CHECKPOINT on demand: recovery then starts from its image.
    let done = c.simple_query("CHECKPOINT").await.unwrap();
    assert!(matches!(done.last(), Some(tokio_postgres::SimpleQueryMessage::CommandComplete(_))));
    drop(c);
    server.crash().await;

    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    let after_crash = next(&c, "s").await;
    assert!(after_crash > *drawn.iter().max().unwrap(), "{after_crash} after {drawn:?}");
    assert_eq!((after_crash - drawn[0]) % 5, 0, "the increment survives");
    c.batch_execute("INSERT INTO k (v) VALUES ('c')").await.unwrap();
    let ids = rows(&c, "SELECT id, v FROM k ORDER BY id").await;
    assert_eq!(ids.len(), 4);
    assert_eq!(ids[2][1].as_deref(), Some("d"), "the column default came back");
    let before: i64 = ids[2][0].as_deref().unwrap().parse().unwrap();
    let last: i64 = ids[3][0].as_deref().unwrap().parse().unwrap();
    assert!(last > before, "serial continues past {before}: {last}");
    c.batch_execute("SELECT setval('s', 1000)").await.unwrap();
    drop(c);
    server.shutdown().await;

    // A clean restart: the shutdown checkpoint's image holds the values.
    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    assert_eq!(next(&c, "s").await, 1005, "setval is logged exactly");
    c.batch_execute("DROP TABLE k").await.unwrap();
    let e = c.batch_execute("SELECT nextval('k_id_seq')").await.unwrap_err();
    assert_eq!(e.code().unwrap().code(), "42P01", "the table's sequence went with it");
    drop(c);
    server.crash().await;
    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    assert!(next(&c, "s").await > 1005);
    assert!(c.batch_execute("SELECT nextval('k_id_seq')").await.is_err());
    drop(c);
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

async fn wal_lsn(c: &Client) -> Option<String> {
    rows(c, "SELECT pg_current_wal_lsn()").await[0][0].clone()
}

/// A sequence created and used by a transaction that is still running when
/// a checkpoint is taken: its creation is replayed from after the cut, its
/// values were logged before it; the checkpoint's image must carry them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sequence_created_across_a_checkpoint_keeps_its_values() {
    let dir = std::env::temp_dir().join(format!("snapscale-sequences-cut-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let server = start_in(Some(&dir), |s| s.checkpoint_timeout = std::time::Duration::from_millis(300)).await;
    let c = connect(&server).await;
    let watcher = connect(&server).await;
    c.batch_execute("BEGIN; CREATE SEQUENCE w").await.unwrap();
    let mut drawn = Vec::new();
    for _ in 0..3 {
        drawn.push(next(&c, "w").await);
    }
    // A checkpoint appends a running-xacts record: the WAL moves while
    // nothing else writes.
    let before = wal_lsn(&watcher).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while wal_lsn(&watcher).await == before {
        assert!(std::time::Instant::now() < deadline, "no checkpoint was taken");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    c.batch_execute("COMMIT").await.unwrap();
    drop((c, watcher));
    server.crash().await;
    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    let after = next(&c, "w").await;
    assert!(after > *drawn.iter().max().unwrap(), "{after} was handed out before the crash: {drawn:?}");
    drop(c);
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// A row updated while another transaction holds it FOR KEY SHARE (its
/// xmax a multixact of the locker and the updater) keeps its committed
/// value across a crash, and an uncommitted update beside a locker is
/// gone: the redo record carries the updater's own xid, the multixact log
/// is memory only, and every locker ended with the crash (MULTI-WAL in
/// the storage crate's README). After the restart nothing holds the rows:
/// a DELETE and a FOR UPDATE NOWAIT go through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_updated_under_share_locks_keeps_its_committed_value_after_a_crash() {
    for mode in SnapshotMode::ALL {
        let dir =
            std::env::temp_dir().join(format!("snapscale-durability-multi-{}-{mode}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let server = start_in(Some(&dir), |s| s.snapshot_mode = mode).await;
        let (locker, updater, other) =
            (connect(&server).await, connect(&server).await, connect(&server).await);
        locker
            .batch_execute("CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0), (2, 0)")
            .await
            .unwrap();
        locker.batch_execute("BEGIN; SELECT id FROM t FOR KEY SHARE").await.unwrap();
        other.batch_execute("BEGIN; SELECT id FROM t WHERE id = 1 FOR KEY SHARE").await.unwrap();
        // A no-key update beside the key-share lockers, committed.
        updater.batch_execute("UPDATE t SET v = 10 WHERE id = 1").await.unwrap();
        // One left running beside them.
        other.batch_execute("UPDATE t SET v = 20 WHERE id = 2").await.unwrap();
        assert_eq!(
            rows(&updater, "SELECT id, v FROM t ORDER BY id").await,
            vec![vec![Some("1".into()), Some("10".into())], vec![Some("2".into()), Some("0".into())]],
            "{mode}"
        );
        drop((locker, updater, other));
        server.crash().await;

        let server = start_in(Some(&dir), |s| s.snapshot_mode = mode).await;
        let c = connect(&server).await;
        assert_eq!(
            rows(&c, "SELECT id, v FROM t ORDER BY id").await,
            vec![vec![Some("1".into()), Some("10".into())], vec![Some("2".into()), Some("0".into())]],
            "{mode}: after the crash, the committed update only"
        );
        c.batch_execute("SELECT id FROM t FOR UPDATE NOWAIT").await.unwrap();
        c.batch_execute("DELETE FROM t WHERE id = 2").await.unwrap();
        drop(c);
        server.shutdown().await;
        let server = start_in(Some(&dir), |s| s.snapshot_mode = mode).await;
        let c = connect(&server).await;
        assert_eq!(
            rows(&c, "SELECT id, v FROM t ORDER BY id").await,
            vec![vec![Some("1".into()), Some("10".into())]],
            "{mode}: after a clean restart"
        );
        drop(c);
        server.shutdown().await;
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// A clean shutdown ends its connections (FATAL 57P01, as PostgreSQL's fast
/// shutdown) and lets go of the data directory before it returns: one
/// connection idle inside a transaction that wrote, one inside COPY FROM
/// STDIN, one running a long statement. The next server on the directory
/// starts at once (no retry: the lock file is free), with the committed
/// row and without the unfinished one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_server_lets_go_of_its_data_directory_with_connections_open() {
    let d = std::env::temp_dir().join(format!("snapscale-durability-release-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let server = start_in(Some(&d), |_| {}).await;
    // Its connection task is kept: it ends with the FATAL the server sends.
    let (idle, idle_conn) = connect_with_task(&server).await;
    idle.batch_execute("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)").await.unwrap();
    idle.batch_execute("BEGIN; INSERT INTO t VALUES (2)").await.unwrap();
    let copying = connect(&server).await;
    let mut sink = Box::pin(copying.copy_in::<_, bytes::Bytes>("COPY t FROM STDIN").await.unwrap());
    let busy = connect(&server).await;
    let long = tokio::spawn(async move {
        busy.simple_query("SELECT count(*) FROM generate_series(1, 100000) a, generate_series(1, 100000) b")
            .await
    });
    // The long statement is running before the shutdown begins.
    // (Asked on a connection of its own: one inside a transaction sees
    // the activity of its first look, as in PostgreSQL.)
    let watcher = connect(&server).await;
    let active =
        "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%generate_series%'";
    while rows(&watcher, active).await != [[Some("2".to_owned())]] {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    server.shutdown().await;
    let settings = snapscale_server::Settings { port: 0, data_directory: d.clone(), ..Default::default() };
    let next = snapscale_server::Server::bind(settings).await.expect("the directory is free");
    let e = long.await.unwrap().expect_err("the long statement did not finish");
    // Ended as PostgreSQL's fast shutdown ends a backend.
    assert_eq!(e.code().map(|c| c.code()), Some("57P01"), "{e:?}");
    let e = idle_conn.await.unwrap().expect_err("the idle connection was ended");
    assert_eq!(e.code().map(|c| c.code()), Some("57P01"), "the idle connection's FATAL: {e:?}");
    let e = sink.as_mut().finish().await.expect_err("the COPY was ended");
    assert!(e.code().is_none_or(|c| c.code() == "57P01"), "{e:?}");
    drop(idle);
    let next = serve(next);
    let c = connect(&next).await;
    assert_eq!(rows(&c, "SELECT id FROM t ORDER BY id").await, [[Some("1".to_owned())]]);
    drop(c);
    next.shutdown().await;
    let _ = std::fs::remove_dir_all(&d);
}

/// An enum type's labels, their order and renames come back with the
/// catalog, from the WAL and from a checkpoint; a rename after recovery
/// reaches the values recovery loaded (they share their label's cell).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn enum_types_and_their_values_survive_restarts_and_crashes() {
    let dir = std::env::temp_dir().join(format!("snapscale-durability-enum-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let ordered = "SELECT name, feeling::text FROM people ORDER BY feeling, name";
    let labels = "SELECT enumlabel, enumsortorder::text FROM pg_enum ORDER BY enumsortorder";
    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    for sql in [
        "CREATE TYPE mood AS ENUM ('sad', 'happy')",
        "CREATE TABLE people (name text PRIMARY KEY, feeling mood)",
        "INSERT INTO people VALUES ('ann', 'happy'), ('bob', 'sad')",
        "ALTER TYPE mood ADD VALUE 'ok' BEFORE 'happy'",
        "INSERT INTO people VALUES ('cy', 'ok')",
        "ALTER TYPE mood RENAME VALUE 'sad' TO 'blue'",
        "BEGIN; ALTER TYPE mood RENAME VALUE 'happy' TO 'glad'; ROLLBACK",
        "CREATE INDEX people_feeling ON people (feeling)",
    ] {
        c.batch_execute(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let expected = (rows(&c, ordered).await, rows(&c, labels).await);
    assert_eq!(expected.0[0], vec![Some("bob".to_string()), Some("blue".to_string())]);
    drop(c);
    server.crash().await;

    // From the WAL.
    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    assert_eq!((rows(&c, ordered).await, rows(&c, labels).await), expected, "after a crash");
    drop(c);
    server.shutdown().await;

    // From the checkpoint; then a rename reaches the loaded values.
    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    assert_eq!((rows(&c, ordered).await, rows(&c, labels).await), expected, "after a restart");
    c.batch_execute("ALTER TYPE mood RENAME VALUE 'ok' TO 'fine'").await.unwrap();
    let renamed = rows(&c, "SELECT name FROM people WHERE feeling = 'fine'").await;
    assert_eq!(renamed, vec![vec![Some("cy".to_string())]]);
    assert_eq!(
        rows(&c, "SELECT feeling::text FROM people WHERE name = 'cy'").await[0][0].as_deref(),
        Some("fine")
    );
    drop(c);
    server.crash().await;
    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    assert_eq!(
        rows(&c, "SELECT feeling::text FROM people WHERE name = 'cy'").await[0][0].as_deref(),
        Some("fine")
    );
    assert!(c.batch_execute("DROP TYPE mood").await.is_err(), "a column depends on it");
    drop(c);
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// ALTER TABLE's rewrite and catalog change are one transaction's: after a
/// crash, a committed ALTER is there whole (its rows, constraints and
/// indexes, from the WAL and from a checkpoint), and one that was still
/// running when the server died left the old table untouched, even with
/// part of its rewrite already in the WAL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_alter_table_is_all_or_nothing_across_crashes() {
    let dir = std::env::temp_dir().join(format!("snapscale-durability-alter-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let everything = "SELECT * FROM items ORDER BY id";
    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    c.batch_execute(
        "CREATE TABLE items (id int PRIMARY KEY, name text, qty int);
         INSERT INTO items SELECT g, 'item' || g, g % 7 FROM generate_series(1, 3000) g",
    )
    .await
    .unwrap();
    c.batch_execute(
        "ALTER TABLE items ADD COLUMN price numeric(8,2) DEFAULT 1.5, DROP COLUMN qty,
             ALTER COLUMN name TYPE varchar(12), ADD CONSTRAINT positive CHECK (price > 0)",
    )
    .await
    .unwrap();
    c.batch_execute("UPDATE items SET price = 2 WHERE id <= 10").await.unwrap();
    let committed = rows(&c, everything).await;
    assert_eq!(committed[0], vec![Some("1".into()), Some("item1".into()), Some("2.00".into())]);
    // A second ALTER, running when the server dies: its rewrite (3 000
    // rows) is larger than a backend's WAL buffer, so part of it is in
    // the WAL already.
    drop(c);
    crash_in_transaction(
        server,
        "BEGIN; ALTER TABLE items ADD COLUMN note text DEFAULT 'x', DROP COLUMN price",
    )
    .await;

    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    assert_eq!(rows(&c, everything).await, committed, "after a crash");
    let err = c.batch_execute("UPDATE items SET price = 0 WHERE id = 1").await.unwrap_err();
    assert_eq!(err.code().map(|s| s.code()), Some("23514"), "{err}");
    let err = c.batch_execute("INSERT INTO items VALUES (1, 'again', 1)").await.unwrap_err();
    assert_eq!(err.code().map(|s| s.code()), Some("23505"), "{err}");
    // Rows of the rewritten storage keep being updated by their ids.
    c.batch_execute("UPDATE items SET name = 'renamed' WHERE id = 3000; CHECKPOINT").await.unwrap();
    let committed = rows(&c, everything).await;
    drop(c);
    server.crash().await;

    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    assert_eq!(rows(&c, everything).await, committed, "after a checkpoint and a crash");
    drop(c);
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `sql` (which leaves a transaction open) on a connection of its
/// own, then kills the server with that transaction still running.
async fn crash_in_transaction(server: TestServer, sql: &str) {
    let (doomed, task) = connect_with_task(&server).await;
    doomed.batch_execute(sql).await.unwrap();
    server.crash().await;
    drop(doomed);
    task.abort();
}

/// A column added without a rewrite (MISSING-COLUMN) is its catalog row
/// alone: after a crash the rows stored before it read its value, from
/// the WAL and from a checkpoint; one added by a transaction still running
/// when the server died is not there, and the rows read as before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_column_added_without_a_rewrite_survives_crashes() {
    let dir = std::env::temp_dir().join(format!("snapscale-durability-missing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let everything = "SELECT * FROM items ORDER BY id";
    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    c.batch_execute(
        "CREATE TABLE items (id int PRIMARY KEY, name text);
         INSERT INTO items SELECT g, 'item' || g FROM generate_series(1, 3000) g;
         ALTER TABLE items ADD COLUMN price numeric(8,2) DEFAULT 1.5, ADD COLUMN note text;
         CREATE INDEX items_price ON items (price);
         UPDATE items SET price = 2, note = 'n' WHERE id <= 10;
         INSERT INTO items (id, name) VALUES (3001, 'late')",
    )
    .await
    .unwrap();
    let committed = rows(&c, everything).await;
    assert_eq!(
        committed[0],
        vec![Some("1".into()), Some("item1".into()), Some("2.00".into()), Some("n".into())]
    );
    assert_eq!(
        committed[2999],
        vec![Some("3000".into()), Some("item3000".into()), Some("1.50".into()), None]
    );
    drop(c);
    crash_in_transaction(
        server,
        "BEGIN; ALTER TABLE items ADD COLUMN gone int DEFAULT 7; INSERT INTO items VALUES (0, 'x', 1, 'y', 8)",
    )
    .await;

    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    assert_eq!(rows(&c, everything).await, committed, "after a crash");
    let cheap = rows(&c, "SELECT count(*) FROM items WHERE price = 1.5").await;
    assert_eq!(cheap, vec![vec![Some("2991".into())]], "the index on the added column");
    c.batch_execute("ALTER TABLE items ADD COLUMN qty int DEFAULT 3; CHECKPOINT").await.unwrap();
    let committed = rows(&c, everything).await;
    assert_eq!(committed[5].last(), Some(&Some("3".into())));
    drop(c);
    server.crash().await;

    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    assert_eq!(rows(&c, everything).await, committed, "after a checkpoint and a crash");
    drop(c);
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Functions and procedures are catalog rows (ROUTINE-ROWS): made,
/// replaced and dropped in committed transactions, they are there (or
/// gone) after a crash, before and after a checkpoint; one made by a
/// transaction the crash cut short is not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn functions_survive_crashes_as_the_catalog_does() {
    let dir = std::env::temp_dir().join(format!("snapscale-durability-functions-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let calls = "SELECT twice(21), greet('you'), (SELECT count(*) FROM pg_proc WHERE proname = 'gone')";
    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    c.batch_execute(
        "CREATE TABLE log (msg text);
         CREATE FUNCTION twice(x int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT x * 2';
         CREATE FUNCTION greet(who text) RETURNS text LANGUAGE plpgsql AS $$ BEGIN RETURN 'hi ' || who; END $$;
         CREATE OR REPLACE FUNCTION greet(who text) RETURNS text LANGUAGE plpgsql
           AS $$ BEGIN RETURN 'hello ' || who; END $$;
         CREATE FUNCTION gone() RETURNS int LANGUAGE sql AS 'SELECT 1';
         DROP FUNCTION gone();
         CREATE PROCEDURE note(m text) LANGUAGE sql AS 'INSERT INTO log VALUES (m)'",
    )
    .await
    .unwrap();
    let committed = rows(&c, calls).await;
    assert_eq!(committed, vec![vec![Some("42".into()), Some("hello you".into()), Some("0".into())]]);
    drop(c);
    crash_in_transaction(server, "BEGIN; CREATE FUNCTION gone() RETURNS int LANGUAGE sql AS 'SELECT 2'")
        .await;

    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    assert_eq!(rows(&c, calls).await, committed, "after a crash");
    c.batch_execute("CALL note('after'); CHECKPOINT").await.unwrap();
    drop(c);
    server.crash().await;

    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    assert_eq!(rows(&c, calls).await, committed, "after a checkpoint and a crash");
    assert_eq!(rows(&c, "SELECT msg FROM log").await, vec![vec![Some("after".into())]]);
    drop(c);
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// A table's triggers are part of its catalog row (TRIGGER-ROWS): created,
/// disabled and dropped with their transactions, they survive crashes
/// and checkpoints as the table does, and keep firing after recovery
/// (which replays the rows their functions wrote, never firing them).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn triggers_survive_crashes_as_their_table_does() {
    let dir = std::env::temp_dir().join(format!("snapscale-durability-triggers-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let state =
        "SELECT (SELECT string_agg(tgname || ':' || tgenabled, ',' ORDER BY tgname) FROM pg_trigger), \
                 (SELECT count(*) FROM audit), (SELECT string_agg(v, ',' ORDER BY k) FROM t)";
    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    c.batch_execute(
        "CREATE TABLE t (k int PRIMARY KEY, v text);
         CREATE TABLE audit (what text);
         CREATE FUNCTION up() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.v := upper(NEW.v); RETURN NEW; END $$;
         CREATE FUNCTION log() RETURNS trigger LANGUAGE plpgsql AS $$
           BEGIN INSERT INTO audit VALUES (TG_OP || ' ' || NEW.k); RETURN NULL; END $$;
         CREATE TRIGGER a_up BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION up();
         CREATE TRIGGER b_log AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION log();
         CREATE TRIGGER c_gone AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION log();
         DROP TRIGGER c_gone ON t;
         INSERT INTO t VALUES (1, 'one')",
    )
    .await
    .unwrap();
    let committed = rows(&c, state).await;
    assert_eq!(committed, vec![vec![Some("a_up:O,b_log:O".into()), Some("1".into()), Some("ONE".into())]]);
    drop(c);
    crash_in_transaction(
        server,
        "BEGIN; ALTER TABLE t DISABLE TRIGGER a_up; INSERT INTO t VALUES (9, 'nine')",
    )
    .await;

    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    assert_eq!(rows(&c, state).await, committed, "after a crash");
    c.batch_execute("ALTER TABLE t DISABLE TRIGGER b_log; INSERT INTO t VALUES (2, 'two'); CHECKPOINT")
        .await
        .unwrap();
    drop(c);
    server.crash().await;

    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    let after = vec![vec![Some("a_up:O,b_log:D".into()), Some("1".into()), Some("ONE,TWO".into())]];
    assert_eq!(rows(&c, state).await, after, "after a checkpoint and a crash");
    c.batch_execute("INSERT INTO t VALUES (3, 'three')").await.unwrap();
    assert_eq!(rows(&c, "SELECT v FROM t WHERE k = 3").await, vec![vec![Some("THREE".into())]]);
    drop(c);
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cascading delete is its transaction's: committed, the referencing
/// rows are gone after a crash; running when the server dies, the
/// referenced row and every referencing one are all still there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cascading_delete_is_all_or_nothing_across_crashes() {
    let dir = std::env::temp_dir().join(format!("snapscale-durability-cascade-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let counts =
        "SELECT (SELECT count(*) FROM parents), (SELECT count(*) FROM children), (SELECT count(*) FROM toys)";
    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    c.batch_execute(
        "CREATE TABLE parents (id int PRIMARY KEY);
         CREATE TABLE children (id int PRIMARY KEY, parent int REFERENCES parents ON DELETE CASCADE);
         CREATE TABLE toys (id int, child int REFERENCES children ON DELETE CASCADE);
         INSERT INTO parents SELECT g FROM generate_series(1, 10) g;
         INSERT INTO children SELECT g, g % 10 + 1 FROM generate_series(1, 2000) g;
         INSERT INTO toys SELECT g, g FROM generate_series(1, 2000) g;
         DELETE FROM parents WHERE id = 1",
    )
    .await
    .unwrap();
    let committed = rows(&c, counts).await;
    assert_eq!(committed, vec![vec![Some("9".into()), Some("1800".into()), Some("1800".into())]]);
    // Running when the server dies: 1 600 rows cascaded, part of them in
    // the WAL already.
    let (doomed, task) = connect_with_task(&server).await;
    doomed.batch_execute("BEGIN; DELETE FROM parents WHERE id <= 9").await.unwrap();
    assert_eq!(
        rows(&doomed, counts).await,
        vec![vec![Some("1".into()), Some("200".into()), Some("200".into())]]
    );
    drop(c);
    server.crash().await;
    drop(doomed);
    task.abort();
    let server = start_in(Some(&dir), |_| {}).await;
    let c = connect(&server).await;
    assert_eq!(rows(&c, counts).await, committed, "after a crash");
    // Child 10 went with parent 1.
    let err = c.batch_execute("INSERT INTO toys VALUES (0, 10)").await.unwrap_err();
    assert_eq!(err.code().map(|s| s.code()), Some("23503"), "{err}");
    drop(c);
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
