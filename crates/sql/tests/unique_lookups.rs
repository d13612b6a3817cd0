//! UNIQUE-ONE-VISIBLE under concurrency: a lookup by a whole unique key
//! stops at the first version its snapshot sees, newest first. Writers
//! update the rows of a few keys, delete and re-insert others and vacuum
//! (so tids are freed and reused under other keys) while readers look the
//! keys up: a key that always exists is always found exactly once, and a
//! REPEATABLE READ transaction reads the same value for it every time.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::runtime;
use snapscale_sql::guc::SessionSettings;
use snapscale_sql::{Conn, Database, DatabaseConfig, Output, SnapshotMode, Value};

/// Keys that are never deleted.
const KEPT: i64 = 6;
/// Keys deleted and inserted again, which free and take tids: eight per
/// writer, each writer its own.
const CHURNED: std::ops::Range<i64> = 100..116;

async fn run(conn: &mut Conn<SessionSettings>, sql: &str) -> Vec<Vec<Value>> {
    let mut rows = Vec::new();
    for statement in conn.parse(sql).unwrap() {
        // Two writers may update one row: READ COMMITTED waits for the
        // first and updates its version, so nothing here fails.
        match conn.execute_parsed(statement).await {
            Ok(Output::Rows { rows: r, .. }) => rows.extend(r.iter().map(|row| row.to_vec())),
            Ok(_) => {}
            Err(e) => panic!("{sql}: {e}"),
        }
    }
    conn.sync().await.unwrap();
    rows
}

fn writer(db: Arc<Database>, seed: i64, rounds: i64) {
    runtime().block_on(async {
        let mut c = Conn::new(Arc::clone(&db), db.attach().unwrap(), SessionSettings::default());
        for i in 0..rounds {
            let kept = (seed + i) % KEPT + 1;
            run(&mut c, &format!("UPDATE u SET v = v + 1 WHERE id = {kept}")).await;
            let churned = CHURNED.start + seed * 8 + i % 8;
            run(&mut c, &format!("DELETE FROM u WHERE id = {churned}; INSERT INTO u VALUES ({churned}, 0)"))
                .await;
            if i % 25 == 0 {
                run(&mut c, "VACUUM u").await;
            }
        }
    });
}

fn reader(db: Arc<Database>, stop: Arc<AtomicBool>) -> u64 {
    runtime().block_on(async {
        let mut c = Conn::new(Arc::clone(&db), db.attach().unwrap(), SessionSettings::default());
        let mut lookups = 0;
        // Relaxed: a stop flag; the writers' joins order everything else.
        while !stop.load(Ordering::Relaxed) {
            for id in 1..=KEPT {
                let rows = run(&mut c, &format!("SELECT v FROM u WHERE id = {id}")).await;
                assert_eq!(rows.len(), 1, "key {id}, which is never deleted, found {} times", rows.len());
                lookups += 1;
            }
            run(&mut c, "BEGIN ISOLATION LEVEL REPEATABLE READ").await;
            let first = run(&mut c, "SELECT v FROM u WHERE id = 1").await;
            for _ in 0..5 {
                let again = run(&mut c, "SELECT v FROM u WHERE id = 1").await;
                assert_eq!(again, first, "a REPEATABLE READ snapshot reads one value");
                lookups += 1;
            }
            run(&mut c, "COMMIT").await;
        }
        lookups
    })
}

#[test]
fn unique_lookups_find_every_kept_key_once_under_updates_and_vacuum() {
    for mode in [SnapshotMode::Csn, SnapshotMode::Dense] {
        let db = Database::in_memory(DatabaseConfig { snapshot_mode: mode, ..DatabaseConfig::default() });
        runtime().block_on(async {
            let mut c = Conn::new(Arc::clone(&db), db.attach().unwrap(), SessionSettings::default());
            run(&mut c, "CREATE TABLE u (id int PRIMARY KEY, v int)").await;
            run(&mut c, &format!("INSERT INTO u SELECT g, 0 FROM generate_series(1, {KEPT}) g")).await;
            let (lo, hi) = (CHURNED.start, CHURNED.end - 1);
            run(&mut c, &format!("INSERT INTO u SELECT g, 0 FROM generate_series({lo}, {hi}) g")).await;
        });
        let stop = Arc::new(AtomicBool::new(false));
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (db, stop) = (Arc::clone(&db), Arc::clone(&stop));
                std::thread::Builder::new()
                    .stack_size(snapscale_sql::stack::STATEMENT_THREAD_STACK)
                    .spawn(move || reader(db, stop))
                    .unwrap()
            })
            .collect();
        let writers: Vec<_> = (0..2)
            .map(|seed| {
                let db = Arc::clone(&db);
                std::thread::Builder::new()
                    .stack_size(snapscale_sql::stack::STATEMENT_THREAD_STACK)
                    .spawn(move || writer(db, seed, 1500))
                    .unwrap()
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        // Relaxed: see `reader`.
        stop.store(true, Ordering::Relaxed);
        let lookups: u64 = readers.into_iter().map(|r| r.join().unwrap()).sum();
        assert!(lookups > 0);
        println!("{mode}: {lookups} lookups checked");
    }
}
