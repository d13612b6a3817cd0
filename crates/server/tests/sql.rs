//! SQL over the wire with a PostgreSQL driver (tokio-postgres), in every
//! snapshot mode: types and their errors, SQLSTATEs, the extended protocol
//! with binary parameters, COPY, transactional DDL, temporary tables,
//! savepoints, cancel requests, and multi-session READ COMMITTED and
//! REPEATABLE READ schedules (blocking, the re-check, 40001).

mod wire;

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use snapscale_sql::SnapshotMode;
use tokio_postgres::types::Type;
use tokio_postgres::{Client, NoTls};
use wire::{code, connect, rows, start};

fn s(v: &str) -> Option<String> {
    Some(v.to_owned())
}

#[tokio::test]
async fn types_and_their_errors() {
    for mode in SnapshotMode::ALL {
        let server = start(|s| s.snapshot_mode = mode).await;
        let c = connect(&server).await;
        c.batch_execute(
            "CREATE TABLE t (a int2, b int4 NOT NULL, c int8, d float8, e bool, f text, g varchar(3), h char(4), \
             i date, j timestamp)",
        )
        .await
        .unwrap();
        c.batch_execute(
            "INSERT INTO t VALUES (-32768, 2147483647, 9223372036854775807, 1.5, 'yes', 'x''y', 'ab ', 'ab', \
             '2024-02-29', '2024-02-29 13:14:15.5')",
        )
        .await
        .unwrap();
        assert_eq!(
            rows(&c, "SELECT * FROM t").await,
            vec![vec![
                s("-32768"),
                s("2147483647"),
                s("9223372036854775807"),
                s("1.5"),
                s("t"),
                s("x'y"),
                s("ab "),
                s("ab  "),
                s("2024-02-29"),
                s("2024-02-29 13:14:15.5")
            ]],
            "{mode}"
        );
        // char(n) compares without its padding; its length counts it.
        assert_eq!(rows(&c, "SELECT count(*) FROM t WHERE h = 'ab'").await, vec![vec![s("1")]]);
        // Binary results through the driver.
        let row = c.query_one("SELECT a, b, c, d, e, f, h FROM t", &[]).await.unwrap();
        assert_eq!(row.get::<_, i16>(0), -32768);
        assert_eq!(row.get::<_, i32>(1), i32::MAX);
        assert_eq!(row.get::<_, i64>(2), i64::MAX);
        assert_eq!(row.get::<_, f64>(3), 1.5);
        assert!(row.get::<_, bool>(4));
        assert_eq!(row.get::<_, String>(5), "x'y");
        assert_eq!(row.columns()[6].type_(), &Type::BPCHAR);
        // Errors, with PostgreSQL's SQLSTATEs.
        assert_eq!(code(c.batch_execute("INSERT INTO t (b) VALUES ('12x')").await), "22P02");
        assert_eq!(code(c.batch_execute("INSERT INTO t (b) VALUES (2147483648)").await), "22003");
        assert_eq!(code(c.batch_execute("INSERT INTO t (a, b) VALUES (40000, 1)").await), "22003");
        assert_eq!(code(c.batch_execute("SELECT b + 1 FROM t").await), "22003");
        assert_eq!(code(c.batch_execute("SELECT b / 0 FROM t").await), "22012");
        assert_eq!(code(c.batch_execute("INSERT INTO t (b, g) VALUES (1, 'abcd')").await), "22001");
        assert_eq!(code(c.batch_execute("INSERT INTO t (a) VALUES (1)").await), "23502");
        assert_eq!(code(c.batch_execute("INSERT INTO t (b, i) VALUES (1, '2023-02-29')").await), "22008");
        assert_eq!(code(c.batch_execute("SELECT * FROM nope").await), "42P01");
        assert_eq!(code(c.batch_execute("SELECT nope FROM t").await), "42703");
        assert_eq!(code(c.batch_execute("SELEC 1").await), "42601");
        assert_eq!(code(c.batch_execute("CREATE TABLE n (x numeric)").await), "0A000");
        assert_eq!(code(c.batch_execute("SELECT * FROM t a JOIN t b ON true").await), "0A000");
        assert_eq!(code(c.batch_execute("CREATE TABLE t (x int)").await), "42P07");
        assert_eq!(code(c.batch_execute("SELECT f + 1 FROM t").await), "42883");
        assert_eq!(code(c.batch_execute("SELECT a, count(*) FROM t").await), "42803");
    }
}

#[tokio::test]
async fn queries_filter_sort_group_and_limit() {
    for mode in SnapshotMode::ALL {
        let server = start(|s| s.snapshot_mode = mode).await;
        let c = connect(&server).await;
        c.batch_execute("CREATE TABLE k (id int PRIMARY KEY, grp text, v int)").await.unwrap();
        c.batch_execute(
            "INSERT INTO k VALUES (1, 'a', 10), (2, 'b', 20), (3, 'a', 30), (4, 'b', NULL), (5, 'c', 50)",
        )
        .await
        .unwrap();
        assert_eq!(
            rows(&c, "SELECT grp, count(*), count(v), sum(v), min(v), max(v), avg(v) FROM k GROUP BY grp ORDER BY grp")
                .await,
            vec![
                vec![s("a"), s("2"), s("2"), s("40"), s("10"), s("30"), s("20")],
                vec![s("b"), s("2"), s("1"), s("20"), s("20"), s("20"), s("20")],
                vec![s("c"), s("1"), s("1"), s("50"), s("50"), s("50"), s("50")],
            ],
            "{mode}"
        );
        assert_eq!(
            rows(&c, "SELECT id FROM k WHERE v IS NOT NULL ORDER BY v DESC LIMIT 2 OFFSET 1").await,
            vec![vec![s("3")], vec![s("2")]]
        );
        assert_eq!(
            rows(&c, "SELECT id FROM k WHERE id BETWEEN 2 AND 3 ORDER BY 1").await,
            vec![vec![s("2")], vec![s("3")]]
        );
        assert_eq!(rows(&c, "SELECT id FROM k WHERE id > 4").await, vec![vec![s("5")]]);
        assert_eq!(rows(&c, "SELECT id FROM k WHERE grp IN ('c') AND id = 5").await, vec![vec![s("5")]]);
        assert_eq!(rows(&c, "SELECT count(*) FROM k WHERE v > 100").await, vec![vec![s("0")]]);
        assert_eq!(
            rows(&c, "SELECT grp FROM k GROUP BY grp HAVING sum(v) > 30 ORDER BY grp").await,
            vec![vec![s("a")], vec![s("c")]]
        );
        // NULLs sort last ascending, first descending.
        assert_eq!(rows(&c, "SELECT id FROM k ORDER BY v DESC LIMIT 1").await, vec![vec![s("4")]]);
        // INSERT ... SELECT, UPDATE / DELETE ... RETURNING.
        c.batch_execute("CREATE TABLE k2 (id int, v int)").await.unwrap();
        assert_eq!(c.execute("INSERT INTO k2 SELECT id, v FROM k WHERE grp = 'a'", &[]).await.unwrap(), 2);
        let r = c.query("UPDATE k SET v = v + 1 WHERE id = $1 RETURNING id, v", &[&3i32]).await.unwrap();
        assert_eq!((r[0].get::<_, i32>(0), r[0].get::<_, i32>(1)), (3, 31));
        let r = c.query("DELETE FROM k WHERE grp = 'b' RETURNING id", &[]).await.unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(rows(&c, "SELECT count(*) FROM k").await, vec![vec![s("3")]]);
        // A primary key refuses duplicates, also through an UPDATE.
        assert_eq!(code(c.execute("INSERT INTO k VALUES (1, 'z', 0)", &[]).await), "23505");
        assert_eq!(code(c.execute("UPDATE k SET id = 1 WHERE id = 3", &[]).await), "23505");
        c.batch_execute("CREATE INDEX k_grp ON k (grp); CREATE UNIQUE INDEX k_v ON k (v)").await.unwrap();
        assert_eq!(rows(&c, "SELECT id FROM k WHERE v = 31").await, vec![vec![s("3")]]);
        assert_eq!(
            rows(&c, "SELECT id FROM k WHERE grp = 'a' ORDER BY id").await,
            vec![vec![s("1")], vec![s("3")]]
        );
        assert_eq!(code(c.execute("INSERT INTO k VALUES (9, 'a', 10)", &[]).await), "23505");
        assert_eq!(code(c.execute("CREATE UNIQUE INDEX k_g2 ON k (grp)", &[]).await), "23505");
        for maintenance in ["VACUUM k", "VACUUM", "VACUUM ANALYZE k", "ANALYZE k"] {
            c.batch_execute(maintenance).await.unwrap_or_else(|e| panic!("{mode}: {maintenance}: {e}"));
        }
        assert_eq!(code(c.batch_execute("BEGIN; VACUUM k").await), "25001");
        c.batch_execute("ROLLBACK").await.unwrap();
    }
}

#[tokio::test]
async fn extended_protocol_with_binary_and_inferred_parameters() {
    for mode in SnapshotMode::ALL {
        let server = start(|s| s.snapshot_mode = mode).await;
        let mut c = connect(&server).await;
        c.batch_execute("CREATE TABLE p (a int8 PRIMARY KEY, b text, c float8, d bool, e int2)")
            .await
            .unwrap();
        // The driver asks Describe for the types, then sends binary values.
        let insert = c.prepare("INSERT INTO p VALUES ($1, $2, $3, $4, $5)").await.unwrap();
        assert_eq!(
            insert.params(),
            &[Type::INT8, Type::TEXT, Type::FLOAT8, Type::BOOL, Type::INT2],
            "{mode}"
        );
        for i in 0..5i64 {
            c.execute(&insert, &[&i, &format!("row {i}"), &(i as f64 / 2.0), &(i % 2 == 0), &(i as i16)])
                .await
                .unwrap();
        }
        c.execute(&insert, &[&9i64, &None::<String>, &None::<f64>, &None::<bool>, &None::<i16>])
            .await
            .unwrap();
        let select = c.prepare("SELECT b, c FROM p WHERE a = $1 AND d = $2").await.unwrap();
        assert_eq!(select.params(), &[Type::INT8, Type::BOOL]);
        assert_eq!(select.columns()[0].type_(), &Type::TEXT);
        let r = c.query(&select, &[&4i64, &true]).await.unwrap();
        assert_eq!((r[0].get::<_, String>(0), r[0].get::<_, f64>(1)), ("row 4".into(), 2.0));
        // Arithmetic context types an untyped parameter.
        let upd = c.prepare("UPDATE p SET e = e + $1 WHERE a = $2").await.unwrap();
        assert_eq!(upd.params(), &[Type::INT2, Type::INT8]);
        assert_eq!(c.execute(&upd, &[&10i16, &1i64]).await.unwrap(), 1);
        // A declared type wins.
        let typed = c.prepare_typed("SELECT count(*) FROM p WHERE a > $1", &[Type::INT4]).await.unwrap();
        let n: i64 = c.query_one(&typed, &[&1i32]).await.unwrap().get(0);
        assert_eq!(n, 4);
        let r = c.query_one("SELECT b FROM p WHERE a = $1", &[&9i64]).await.unwrap();
        assert_eq!(r.get::<_, Option<String>>(0), None);
        // Portals fetched in pieces (max_rows) through a transaction.
        let tx = c.transaction().await.unwrap();
        let portal = tx.bind("SELECT a FROM p ORDER BY a", &[]).await.unwrap();
        let first = tx.query_portal(&portal, 2).await.unwrap();
        let rest = tx.query_portal(&portal, 100).await.unwrap();
        assert_eq!((first.len(), rest.len()), (2, 4));
        tx.commit().await.unwrap();
    }
}

#[tokio::test]
async fn copy_in_and_out() {
    for mode in SnapshotMode::ALL {
        let server = start(|s| s.snapshot_mode = mode).await;
        let c = connect(&server).await;
        c.batch_execute("CREATE TABLE cp (a int, b text, c char(3))").await.unwrap();
        let sink = c.copy_in("COPY cp FROM STDIN").await.unwrap();
        futures::pin_mut!(sink);
        sink.send(bytes::Bytes::from_static(b"1\tone\tx\n2\t\\N\t\\N\n3\ttab\\there")).await.unwrap();
        sink.send(bytes::Bytes::from_static(b"\tyz\n\\.\n")).await.unwrap();
        assert_eq!(sink.finish().await.unwrap(), 3, "{mode}");
        assert_eq!(
            rows(&c, "SELECT a, b, c FROM cp ORDER BY a").await,
            vec![
                vec![s("1"), s("one"), s("x  ")],
                vec![s("2"), None, None],
                vec![s("3"), s("tab\there"), s("yz ")]
            ]
        );
        let out = c.copy_out("COPY cp (a, b) TO STDOUT").await.unwrap();
        let chunks: Vec<_> = out.collect().await;
        let text: String =
            chunks.into_iter().map(|b| String::from_utf8(b.unwrap().to_vec()).unwrap()).collect();
        let mut lines: Vec<&str> = text.lines().collect();
        lines.sort_unstable();
        assert_eq!(lines, ["1\tone", "2\t\\N", "3\ttab\\there"]);
        // Bad data fails the whole COPY.
        let sink = c.copy_in("COPY cp FROM STDIN").await.unwrap();
        futures::pin_mut!(sink);
        let _ = sink.send(bytes::Bytes::from_static(b"4\tok\tok\nnot-a-number\tx\tx\n")).await;
        assert_eq!(code(sink.finish().await), "22P02");
        assert_eq!(rows(&c, "SELECT count(*) FROM cp").await, vec![vec![s("3")]]);
        assert_eq!(code(c.batch_execute("COPY cp FROM '/etc/passwd'").await), "0A000");
    }
}

#[tokio::test]
async fn ddl_is_transactional_and_invalidates_other_sessions_caches() {
    for mode in SnapshotMode::ALL {
        let server = start(|s| s.snapshot_mode = mode).await;
        let a = connect(&server).await;
        let b = connect(&server).await;
        a.batch_execute("BEGIN; CREATE TABLE gone (x int); INSERT INTO gone VALUES (1)").await.unwrap();
        // Invisible to others until commit.
        assert_eq!(code(b.batch_execute("SELECT * FROM gone").await), "42P01", "{mode}");
        a.batch_execute("ROLLBACK").await.unwrap();
        assert_eq!(code(a.batch_execute("SELECT * FROM gone").await), "42P01");
        a.batch_execute("CREATE TABLE kept (x int); INSERT INTO kept VALUES (1), (2)").await.unwrap();
        assert_eq!(rows(&b, "SELECT count(*) FROM kept").await, vec![vec![s("2")]]);
        a.batch_execute("BEGIN; DROP TABLE kept; ROLLBACK").await.unwrap();
        a.batch_execute("BEGIN; TRUNCATE kept; ROLLBACK").await.unwrap();
        assert_eq!(rows(&b, "SELECT count(*) FROM kept").await, vec![vec![s("2")]]);
        a.batch_execute("TRUNCATE kept").await.unwrap();
        assert_eq!(rows(&b, "SELECT count(*) FROM kept").await, vec![vec![s("0")]]);
        // b has `kept` cached; a replaces it with another definition.
        a.batch_execute("DROP TABLE kept; CREATE TABLE kept (y text, z int)").await.unwrap();
        a.batch_execute("INSERT INTO kept VALUES ('new', 1)").await.unwrap();
        assert_eq!(rows(&b, "SELECT y FROM kept").await, vec![vec![s("new")]]);
        // A prepared statement of b is re-planned against the new table.
        let st = b.prepare("SELECT count(*) FROM kept").await.unwrap();
        a.batch_execute("TRUNCATE kept").await.unwrap();
        let n: i64 = b.query_one(&st, &[]).await.unwrap().get(0);
        assert_eq!(n, 0);
        // ALTER TABLE ADD PRIMARY KEY checks the existing rows.
        a.batch_execute("INSERT INTO kept VALUES ('d', 1), ('d', 2)").await.unwrap();
        assert_eq!(code(a.batch_execute("ALTER TABLE kept ADD PRIMARY KEY (y)").await), "23505");
        a.batch_execute("ALTER TABLE kept ADD PRIMARY KEY (z)").await.unwrap();
        assert_eq!(code(b.batch_execute("INSERT INTO kept VALUES ('e', 2)").await), "23505");
        assert_eq!(code(b.batch_execute("INSERT INTO kept VALUES ('e', NULL)").await), "23502");
        assert_eq!(code(a.batch_execute("ALTER TABLE kept ADD PRIMARY KEY (y)").await), "42P16");
        // DROP TABLE IF EXISTS on a missing table is a notice, not an error.
        a.batch_execute("DROP TABLE IF EXISTS nothing_here").await.unwrap();
        assert_eq!(code(a.batch_execute("DROP TABLE nothing_here").await), "42P01");
    }
}

#[tokio::test]
async fn temporary_tables_are_private_and_end_with_the_session() {
    for mode in SnapshotMode::ALL {
        let server = start(|s| s.snapshot_mode = mode).await;
        let a = connect(&server).await;
        let b = connect(&server).await;
        a.batch_execute("CREATE TABLE shared_name (x int); INSERT INTO shared_name VALUES (1)")
            .await
            .unwrap();
        a.batch_execute("CREATE TEMP TABLE mine (x int); INSERT INTO mine VALUES (7)").await.unwrap();
        a.batch_execute("CREATE TEMPORARY TABLE shared_name (x int)").await.unwrap();
        assert_eq!(
            rows(&a, "SELECT count(*) FROM shared_name").await,
            vec![vec![s("0")]],
            "{mode}: pg_temp first"
        );
        assert_eq!(rows(&b, "SELECT count(*) FROM shared_name").await, vec![vec![s("1")]]);
        assert_eq!(code(b.batch_execute("SELECT * FROM mine").await), "42P01");
        // b may have its own table of that name.
        b.batch_execute("CREATE TEMP TABLE mine (y text)").await.unwrap();
        drop(a);
        // After a disconnects, its temporary tables are gone (checked by
        // creating the name as a permanent table).
        let c = connect(&server).await;
        let mut tries = 0;
        while c.batch_execute("CREATE TABLE mine (z int)").await.is_err() {
            tries += 1;
            assert!(tries < 50, "a's temporary table outlived its session");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(rows(&c, "SELECT count(*) FROM mine").await, vec![vec![s("0")]]);
    }
}

#[tokio::test]
async fn savepoints_undo_their_part_only() {
    for mode in SnapshotMode::ALL {
        let server = start(|s| s.snapshot_mode = mode).await;
        let c = connect(&server).await;
        c.batch_execute("CREATE TABLE sp (x int PRIMARY KEY)").await.unwrap();
        c.batch_execute(
            "BEGIN; INSERT INTO sp VALUES (1); SAVEPOINT a; INSERT INTO sp VALUES (2); ROLLBACK TO a; \
             INSERT INTO sp VALUES (3); SAVEPOINT b; INSERT INTO sp VALUES (4); RELEASE b; COMMIT",
        )
        .await
        .unwrap();
        assert_eq!(
            rows(&c, "SELECT x FROM sp ORDER BY x").await,
            vec![vec![s("1")], vec![s("3")], vec![s("4")]],
            "{mode}"
        );
        // An error inside a savepoint: ROLLBACK TO recovers the block.
        c.batch_execute("BEGIN; SAVEPOINT a").await.unwrap();
        assert_eq!(code(c.batch_execute("INSERT INTO sp VALUES (1)").await), "23505");
        assert_eq!(code(c.batch_execute("INSERT INTO sp VALUES (5)").await), "25P02");
        c.batch_execute("ROLLBACK TO a; INSERT INTO sp VALUES (5); COMMIT").await.unwrap();
        assert_eq!(rows(&c, "SELECT count(*) FROM sp").await, vec![vec![s("4")]]);
        // DDL in a rolled-back savepoint vanishes with it.
        c.batch_execute("BEGIN; SAVEPOINT a; CREATE TABLE inner_t (x int); ROLLBACK TO a; COMMIT")
            .await
            .unwrap();
        assert_eq!(code(c.batch_execute("SELECT * FROM inner_t").await), "42P01");
        // A multi-statement query is one implicit transaction.
        assert_eq!(
            code(c.batch_execute("INSERT INTO sp VALUES (6); INSERT INTO sp VALUES (1)").await),
            "23505"
        );
        assert_eq!(rows(&c, "SELECT count(*) FROM sp WHERE x = 6").await, vec![vec![s("0")]]);
    }
}

#[tokio::test]
async fn max_connections_is_enforced() {
    for mode in SnapshotMode::ALL {
        let server = start(|s| {
            s.max_connections = 2;
            s.snapshot_mode = mode;
        })
        .await;
        let _a = connect(&server).await;
        let b = connect(&server).await;
        let conninfo = format!("host={} port={} user=t dbname=t", server.addr.ip(), server.addr.port());
        let e = tokio_postgres::connect(&conninfo, NoTls).await.err().expect("a third connection is refused");
        assert_eq!(e.code().map(|c| c.code()), Some("53300"), "{mode}: {e}");
        // A slot comes back when its connection ends.
        drop(b);
        let mut tries = 0;
        while tokio_postgres::connect(&conninfo, NoTls).await.is_err() {
            tries += 1;
            assert!(tries < 50, "{mode}: the slot was not freed");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Runs `sql` on `c` in the background; the handle says when it ended.
fn spawn_exec(
    c: std::sync::Arc<Client>,
    sql: &'static str,
) -> tokio::task::JoinHandle<Result<u64, tokio_postgres::Error>> {
    tokio::spawn(async move { c.execute(sql, &[]).await })
}

async fn still_blocked<T>(h: &tokio::task::JoinHandle<T>) -> bool {
    tokio::time::sleep(Duration::from_millis(150)).await;
    !h.is_finished()
}

#[tokio::test]
async fn read_committed_waits_and_rechecks_the_newest_version() {
    for mode in SnapshotMode::ALL {
        let server = start(|s| s.snapshot_mode = mode).await;
        let a = connect(&server).await;
        let b = std::sync::Arc::new(connect(&server).await);
        a.batch_execute("CREATE TABLE acc (id int PRIMARY KEY, bal int)").await.unwrap();
        a.batch_execute("INSERT INTO acc VALUES (1, 100), (2, 100)").await.unwrap();
        // b's update waits for a, then applies to a's new version.
        a.batch_execute("BEGIN; UPDATE acc SET bal = bal + 1 WHERE id = 1").await.unwrap();
        let h = spawn_exec(b.clone(), "UPDATE acc SET bal = bal * 2 WHERE id = 1");
        assert!(still_blocked(&h).await, "{mode}: the second writer waits");
        a.batch_execute("COMMIT").await.unwrap();
        assert_eq!(h.await.unwrap().unwrap(), 1);
        assert_eq!(rows(&a, "SELECT bal FROM acc WHERE id = 1").await, vec![vec![s("202")]]);
        // The re-check: the newest version no longer matches b's WHERE.
        a.batch_execute("BEGIN; UPDATE acc SET bal = 0 WHERE id = 2").await.unwrap();
        let h = spawn_exec(b.clone(), "UPDATE acc SET bal = bal + 5 WHERE id = 2 AND bal = 100");
        assert!(still_blocked(&h).await);
        a.batch_execute("COMMIT").await.unwrap();
        assert_eq!(h.await.unwrap().unwrap(), 0, "{mode}: re-checked against the committed version");
        // If the first writer aborts, the second changes the old version.
        a.batch_execute("BEGIN; DELETE FROM acc WHERE id = 2").await.unwrap();
        let h = spawn_exec(b.clone(), "UPDATE acc SET bal = bal + 7 WHERE id = 2");
        assert!(still_blocked(&h).await);
        a.batch_execute("ROLLBACK").await.unwrap();
        assert_eq!(h.await.unwrap().unwrap(), 1);
        assert_eq!(rows(&a, "SELECT bal FROM acc WHERE id = 2").await, vec![vec![s("7")]]);
        // A deleted row is skipped.
        a.batch_execute("BEGIN; DELETE FROM acc WHERE id = 2").await.unwrap();
        let h = spawn_exec(b.clone(), "UPDATE acc SET bal = 1 WHERE id = 2");
        assert!(still_blocked(&h).await);
        a.batch_execute("COMMIT").await.unwrap();
        assert_eq!(h.await.unwrap().unwrap(), 0);
        // SELECT FOR UPDATE blocks writers until the locker ends.
        a.batch_execute("BEGIN").await.unwrap();
        assert_eq!(rows(&a, "SELECT bal FROM acc WHERE id = 1 FOR UPDATE").await, vec![vec![s("202")]]);
        let h = spawn_exec(b.clone(), "UPDATE acc SET bal = 0 WHERE id = 1");
        assert!(still_blocked(&h).await, "{mode}: FOR UPDATE holds the row");
        a.batch_execute("COMMIT").await.unwrap();
        assert_eq!(h.await.unwrap().unwrap(), 1);
        // Two inserters of one key: the second waits and then fails.
        a.batch_execute("BEGIN; INSERT INTO acc VALUES (3, 0)").await.unwrap();
        let h = spawn_exec(b.clone(), "INSERT INTO acc VALUES (3, 1)");
        assert!(still_blocked(&h).await);
        a.batch_execute("COMMIT").await.unwrap();
        assert_eq!(code(h.await.unwrap()), "23505");
        // ... and succeeds if the first aborts.
        a.batch_execute("BEGIN; INSERT INTO acc VALUES (4, 0)").await.unwrap();
        let h = spawn_exec(b.clone(), "INSERT INTO acc VALUES (4, 1)");
        assert!(still_blocked(&h).await);
        a.batch_execute("ROLLBACK").await.unwrap();
        assert_eq!(h.await.unwrap().unwrap(), 1);
    }
}

#[tokio::test]
async fn repeatable_read_keeps_its_snapshot_and_fails_conflicting_writes() {
    for mode in SnapshotMode::ALL {
        let server = start(|s| s.snapshot_mode = mode).await;
        let a = connect(&server).await;
        let b = std::sync::Arc::new(connect(&server).await);
        a.batch_execute("CREATE TABLE rr (id int PRIMARY KEY, v int)").await.unwrap();
        a.batch_execute("INSERT INTO rr VALUES (1, 1), (2, 2)").await.unwrap();
        b.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ").await.unwrap();
        assert_eq!(rows(&b, "SELECT sum(v) FROM rr").await, vec![vec![s("3")]]);
        a.batch_execute("UPDATE rr SET v = 10 WHERE id = 1; INSERT INTO rr VALUES (3, 3)").await.unwrap();
        assert_eq!(rows(&b, "SELECT sum(v) FROM rr").await, vec![vec![s("3")]], "{mode}: one snapshot");
        assert_eq!(code(b.execute("UPDATE rr SET v = 0 WHERE id = 1", &[]).await), "40001");
        b.batch_execute("ROLLBACK").await.unwrap();
        // A concurrent writer still running: wait, then 40001 if it commits ...
        b.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ").await.unwrap();
        rows(&b, "SELECT 1 FROM rr").await;
        a.batch_execute("BEGIN; UPDATE rr SET v = 20 WHERE id = 2").await.unwrap();
        let h = spawn_exec(b.clone(), "UPDATE rr SET v = 0 WHERE id = 2");
        assert!(still_blocked(&h).await);
        a.batch_execute("COMMIT").await.unwrap();
        assert_eq!(code(h.await.unwrap()), "40001");
        b.batch_execute("ROLLBACK").await.unwrap();
        // ... and success if it aborts.
        b.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ").await.unwrap();
        rows(&b, "SELECT 1 FROM rr").await;
        a.batch_execute("BEGIN; DELETE FROM rr WHERE id = 3").await.unwrap();
        let h = spawn_exec(b.clone(), "UPDATE rr SET v = 30 WHERE id = 3");
        assert!(still_blocked(&h).await);
        a.batch_execute("ROLLBACK").await.unwrap();
        assert_eq!(h.await.unwrap().unwrap(), 1);
        b.batch_execute("COMMIT").await.unwrap();
        assert_eq!(rows(&a, "SELECT v FROM rr WHERE id = 3").await, vec![vec![s("30")]]);
        // A deleted row is a concurrent delete for REPEATABLE READ.
        b.batch_execute("BEGIN ISOLATION LEVEL REPEATABLE READ").await.unwrap();
        rows(&b, "SELECT 1 FROM rr").await;
        a.batch_execute("DELETE FROM rr WHERE id = 3").await.unwrap();
        assert_eq!(code(b.execute("DELETE FROM rr WHERE id = 3", &[]).await), "40001");
        b.batch_execute("ROLLBACK").await.unwrap();
    }
}

#[tokio::test]
async fn a_cancel_request_stops_a_waiting_statement() {
    for mode in SnapshotMode::ALL {
        let server = start(|s| s.snapshot_mode = mode).await;
        let a = connect(&server).await;
        let b = std::sync::Arc::new(connect(&server).await);
        a.batch_execute("CREATE TABLE w (id int PRIMARY KEY); INSERT INTO w VALUES (1)").await.unwrap();
        a.batch_execute("BEGIN; UPDATE w SET id = 1 WHERE id = 1").await.unwrap();
        let token = b.cancel_token();
        let h = spawn_exec(b.clone(), "DELETE FROM w WHERE id = 1");
        assert!(still_blocked(&h).await);
        token.cancel_query(NoTls).await.unwrap();
        let waited =
            tokio::time::timeout(Duration::from_secs(5), h).await.expect("cancelled in time").unwrap();
        assert_eq!(code(waited), "57014", "{mode}");
        a.batch_execute("COMMIT").await.unwrap();
        // The connection is usable afterwards, and a stale cancel does not
        // hit its next statement.
        token.cancel_query(NoTls).await.unwrap();
        assert_eq!(rows(&b, "SELECT count(*) FROM w").await, vec![vec![s("1")]]);
    }
}

#[tokio::test]
async fn pruning_keeps_memory_flat_under_updates() {
    for mode in SnapshotMode::ALL {
        let server = start(|s| s.snapshot_mode = mode).await;
        let c = connect(&server).await;
        c.batch_execute("CREATE TABLE hot (id int PRIMARY KEY, n int)").await.unwrap();
        c.batch_execute("INSERT INTO hot VALUES (1, 0), (2, 0), (3, 0)").await.unwrap();
        let update = c.prepare("UPDATE hot SET n = n + 1 WHERE id = $1").await.unwrap();
        for i in 0..4000 {
            c.execute(&update, &[&(i % 3 + 1)]).await.unwrap();
        }
        let (slots, present) = server.db.version_counts();
        assert!(
            slots < 2500 && present < 2500,
            "{mode}: 4000 updates left {slots} slots, {present} versions"
        );
        c.batch_execute("VACUUM hot").await.unwrap();
        let (_, present) = server.db.version_counts();
        assert!(present < 50, "{mode}: VACUUM left {present} versions of 3 rows");
        assert_eq!(rows(&c, "SELECT sum(n) FROM hot").await, vec![vec![s("4000")]]);
    }
}
