//! INSERT … ON CONFLICT, and a unique index's check, under concurrency. Writers upsert counters over a
//! few keys, with keys deleted by one of them now and then (so a key's
//! row comes and goes, and a conflicting row may vanish between the search
//! and the lock), in READ COMMITTED. The checker: no upsert ever fails
//! (no 23505, no 21000), and at the end each key's count plus the counts
//! deleted with it equals the number of upserts of that key: every upsert
//! inserted or incremented exactly once.

mod common;

use std::sync::Arc;

use common::runtime;
use snapscale_sql::guc::SessionSettings;
use snapscale_sql::{Conn, Database, DatabaseConfig, Output, SnapshotMode, Value};

const KEYS: i64 = 4;
const WRITERS: i64 = 3;
const ROUNDS: i64 = 400;

async fn run(conn: &mut Conn<SessionSettings>, sql: &str) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for statement in conn.parse(sql).unwrap() {
        match conn.execute_parsed(statement).await {
            Ok(Output::Rows { rows: r, .. }) => rows.extend(r.iter().map(|row| row.to_vec())),
            Ok(_) => {}
            Err(e) => panic!("{sql}: {e}"),
        }
    }
    conn.sync().await.unwrap();
    rows
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        other => panic!("not an integer: {other:?}"),
    }
}

/// Upserts; the first writer also deletes a key now and then, keeping
/// what it deleted in `gone` (the row locked first, so that no upsert
/// increments it between the copy and the delete). Returns how many upserts it made per key.
fn writer(db: Arc<Database>, seed: i64) -> Vec<i64> {
    runtime().block_on(async {
        let mut c = Conn::new(Arc::clone(&db), db.attach().unwrap(), SessionSettings::default());
        let mut made = vec![0; KEYS as usize];
        for i in 0..ROUNDS {
            let k = (seed * 7 + i * 3) % KEYS;
            run(&mut c, &format!("INSERT INTO c VALUES ({k}, 1) ON CONFLICT (k) DO UPDATE SET n = c.n + excluded.n"))
                .await;
            made[k as usize] += 1;
            if seed == 0 && i % 10 == 5 {
                let d = i % KEYS;
                run(
                    &mut c,
                    &format!(
                        "BEGIN; SELECT n FROM c WHERE k = {d} FOR UPDATE; INSERT INTO gone SELECT k, n FROM c WHERE k = {d};
                         DELETE FROM c WHERE k = {d}; COMMIT"
                    ),
                )
                .await;
            }
        }
        made
    })
}

#[test]
fn concurrent_upserts_insert_or_increment_exactly_once() {
    for mode in [SnapshotMode::Csn, SnapshotMode::Dense] {
        let db = Database::in_memory(DatabaseConfig { snapshot_mode: mode, ..DatabaseConfig::default() });
        runtime().block_on(async {
            let mut c = Conn::new(Arc::clone(&db), db.attach().unwrap(), SessionSettings::default());
            run(
                &mut c,
                "CREATE TABLE c (k int PRIMARY KEY, n int NOT NULL); CREATE TABLE gone (k int, n int)",
            )
            .await;
        });
        let writers: Vec<_> = (0..WRITERS)
            .map(|seed| {
                let db = Arc::clone(&db);
                std::thread::Builder::new()
                    .stack_size(snapscale_sql::stack::STATEMENT_THREAD_STACK)
                    .spawn(move || writer(db, seed))
                    .unwrap()
            })
            .collect();
        let mut made = vec![0; KEYS as usize];
        for w in writers {
            for (k, n) in w.join().unwrap().into_iter().enumerate() {
                made[k] += n;
            }
        }
        runtime().block_on(async {
            let mut c = Conn::new(Arc::clone(&db), db.attach().unwrap(), SessionSettings::default());
            let counted = run(
                &mut c,
                "SELECT k, sum(n) FROM (SELECT k, n FROM c UNION ALL SELECT k, n FROM gone) x GROUP BY k ORDER BY k",
            )
            .await;
            let counted: Vec<i64> = counted.iter().map(|r| int(&r[1])).collect();
            assert_eq!(counted, made, "{mode}: each key's upserts, counted once each");
            let rows = run(&mut c, "SELECT count(*) FROM c GROUP BY k HAVING count(*) > 1").await;
            assert!(rows.is_empty(), "{mode}: one row per key: {rows:?}");
        });
        println!("{mode}: {} upserts checked", made.iter().sum::<i64>());
    }
}

/// UNIQUE-CHECK against updates that keep the key: an INSERT of a key
/// whose row is being updated must find the row (the old version's
/// updater committing between the check's walk of the entries and its
/// look at the version must not hide the new one). Inserters that only
/// ever insert existing keys must always get 23505.
#[test]
fn inserts_of_a_key_being_updated_always_conflict() {
    for mode in [SnapshotMode::Csn, SnapshotMode::Dense] {
        let db = Database::in_memory(DatabaseConfig { snapshot_mode: mode, ..DatabaseConfig::default() });
        runtime().block_on(async {
            let mut c = Conn::new(Arc::clone(&db), db.attach().unwrap(), SessionSettings::default());
            run(&mut c, "CREATE TABLE u (k int PRIMARY KEY, n int); INSERT INTO u VALUES (0, 0), (1, 0)")
                .await;
        });
        let updaters: Vec<_> = (0..2)
            .map(|seed| {
                let db = Arc::clone(&db);
                std::thread::Builder::new()
                    .stack_size(snapscale_sql::stack::STATEMENT_THREAD_STACK)
                    .spawn(move || {
                        runtime().block_on(async {
                            let mut c =
                                Conn::new(Arc::clone(&db), db.attach().unwrap(), SessionSettings::default());
                            for i in 0..ROUNDS {
                                run(&mut c, &format!("UPDATE u SET n = n + 1 WHERE k = {}", (seed + i) % 2))
                                    .await;
                            }
                        })
                    })
                    .unwrap()
            })
            .collect();
        let inserter = {
            let db = Arc::clone(&db);
            std::thread::Builder::new()
                .stack_size(snapscale_sql::stack::STATEMENT_THREAD_STACK)
                .spawn(move || {
                    runtime().block_on(async {
                        let mut c =
                            Conn::new(Arc::clone(&db), db.attach().unwrap(), SessionSettings::default());
                        for i in 0..ROUNDS {
                            let sql = format!("INSERT INTO u VALUES ({}, -1)", i % 2);
                            let statement = c.parse(&sql).unwrap().pop().unwrap();
                            let err = c.execute_parsed(statement).await.expect_err("the key exists");
                            assert_eq!(err.code.code(), "23505", "{sql}: {err}");
                            c.sync().await.unwrap();
                        }
                    })
                })
                .unwrap()
        };
        for u in updaters {
            u.join().unwrap();
        }
        inserter.join().unwrap();
        runtime().block_on(async {
            let mut c = Conn::new(Arc::clone(&db), db.attach().unwrap(), SessionSettings::default());
            let rows = run(&mut c, "SELECT k, n FROM u ORDER BY k").await;
            let total: i64 = rows.iter().map(|r| int(&r[1])).sum();
            assert_eq!((rows.len(), total), (2, 2 * ROUNDS), "{mode}: the two rows, every update counted");
        });
    }
}
