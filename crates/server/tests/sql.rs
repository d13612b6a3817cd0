//! SQL over the wire with a PostgreSQL driver (tokio-postgres), in every
//! snapshot mode, for what only the protocol shows: binary results, the
//! extended protocol with binary and inferred parameters and portals, COPY,
//! max_connections, and cancel requests. SQL behaviour itself (isolation,
//! DDL, savepoints, locks, types and errors) is specified by the SQL
//! layer's scripts (`crates/sql/tests/scripts/`).

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

/// What only a driver shows: results in binary, with their types. (Text
/// forms and errors are in the SQL layer's scripts.)
#[tokio::test]
async fn binary_results_through_a_driver() {
    for mode in SnapshotMode::ALL {
        let server = start(|s| s.snapshot_mode = mode).await;
        let c = connect(&server).await;
        c.batch_execute(
            "CREATE TABLE t (a int2, b int4 NOT NULL, c int8, d float8, e bool, f text, h char(4))",
        )
        .await
        .unwrap();
        c.batch_execute(
            "INSERT INTO t VALUES (-32768, 2147483647, 9223372036854775807, 1.5, 'yes', 'x''y', 'ab')",
        )
        .await
        .unwrap();
        let row = c.query_one("SELECT a, b, c, d, e, f, h FROM t", &[]).await.unwrap();
        assert_eq!(row.get::<_, i16>(0), -32768, "{mode}");
        assert_eq!(row.get::<_, i32>(1), i32::MAX);
        assert_eq!(row.get::<_, i64>(2), i64::MAX);
        assert_eq!(row.get::<_, f64>(3), 1.5);
        assert!(row.get::<_, bool>(4));
        assert_eq!(row.get::<_, String>(5), "x'y");
        assert_eq!(row.columns()[6].type_(), &Type::BPCHAR);
        assert_eq!(code(c.batch_execute("SELECT b + 1 FROM t").await), "22003");
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

/// COPY's sub-protocol through a driver: CopyInResponse, a row split
/// across CopyData messages, CopyDone and its tag; CopyOutResponse and the
/// CopyData lines. (COPY's text format, bad rows and defaults are in the
/// SQL layer's scripts.)
#[tokio::test]
async fn copy_in_and_out() {
    let server = start(|_| {}).await;
    let c = connect(&server).await;
    c.batch_execute("CREATE TABLE cp (a int, b text, c char(3))").await.unwrap();
    let sink = c.copy_in("COPY cp FROM STDIN").await.unwrap();
    futures::pin_mut!(sink);
    sink.send(bytes::Bytes::from_static(b"1\tone\tx\n2\t\\N\t\\N\n3\ttab\\there")).await.unwrap();
    sink.send(bytes::Bytes::from_static(b"\tyz\n\\.\n")).await.unwrap();
    assert_eq!(sink.finish().await.unwrap(), 3);
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
    let text: String = chunks.into_iter().map(|b| String::from_utf8(b.unwrap().to_vec()).unwrap()).collect();
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["1\tone", "2\t\\N", "3\ttab\\there"]);
    // Bad data: the error answers CopyDone, and the session goes on.
    let sink = c.copy_in("COPY cp FROM STDIN").await.unwrap();
    futures::pin_mut!(sink);
    let _ = sink.send(bytes::Bytes::from_static(b"4\tok\tok\nnot-a-number\tx\tx\n")).await;
    assert_eq!(code(sink.finish().await), "22P02");
    assert_eq!(rows(&c, "SELECT 1").await, vec![vec![s("1")]]);
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

/// Waits until the server's lock manager has a queued request (blocking
/// observed, not guessed from a sleep), and `h` has not finished.
async fn blocked<T>(server: &wire::TestServer, h: &tokio::task::JoinHandle<T>) -> bool {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while server.db.lock_waits() == 0 {
        assert!(std::time::Instant::now() < deadline, "the statement never waited");
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    !h.is_finished()
}

/// Advisory locks over the wire: `pg_advisory_lock` returns void (OID
/// 2278, in text and in binary, as a driver's prepared statement asks), a
/// cancel request ends a wait for one with 57014, and a connection's end
/// releases its session-level locks. (What they do is in the SQL layer's
/// script `advisory_locks.test`.)
#[tokio::test]
async fn advisory_locks_through_a_driver() {
    let server = start(|_| {}).await;
    let a = connect(&server).await;
    let b = std::sync::Arc::new(connect(&server).await);
    let row = a
        .query_one("SELECT pg_advisory_lock($1::bigint), pg_try_advisory_lock(2, 3)", &[&1i64])
        .await
        .unwrap();
    assert_eq!(row.columns()[0].type_(), &Type::VOID);
    assert_eq!(row.columns()[1].type_(), &Type::BOOL);
    assert!(row.get::<_, bool>(1));
    assert_eq!(rows(&a, "SELECT pg_advisory_lock(1)").await, vec![vec![s("")]]);
    let token = b.cancel_token();
    let h = spawn_exec(b.clone(), "SELECT pg_advisory_lock(1)");
    assert!(blocked(&server, &h).await);
    token.cancel_query(NoTls).await.unwrap();
    let waited = tokio::time::timeout(Duration::from_secs(5), h).await.expect("cancelled in time").unwrap();
    assert_eq!(code(waited), "57014");
    assert_eq!(server.db.lock_waits(), 0);
    assert_eq!(rows(&b, "SELECT pg_try_advisory_lock(1)").await, vec![vec![s("f")]]);
    drop(a);
    // The server notices the closed connection on its own time.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while rows(&b, "SELECT pg_try_advisory_lock(1), pg_try_advisory_lock(2, 3)").await
        != vec![vec![s("t"), s("t")]]
    {
        assert!(std::time::Instant::now() < deadline, "the closed connection's locks were never released");
        b.batch_execute("SELECT pg_advisory_unlock_all()").await.unwrap();
        tokio::time::sleep(Duration::from_millis(10)).await;
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
        assert!(blocked(&server, &h).await);
        token.cancel_query(NoTls).await.unwrap();
        let waited =
            tokio::time::timeout(Duration::from_secs(5), h).await.expect("cancelled in time").unwrap();
        assert_eq!(code(waited), "57014", "{mode}");
        a.batch_execute("COMMIT").await.unwrap();
        // The connection is usable afterwards, and a stale cancel does not
        // hit its next statement.
        token.cancel_query(NoTls).await.unwrap();
        // cancel_query returns once the request is sent, not once the
        // server acted on it (as with PostgreSQL, a cancel still in flight
        // hits whatever runs when it lands): give it time to land while
        // the connection is idle. Too little time fails this test; it
        // cannot make it pass wrongly.
        tokio::time::sleep(Duration::from_millis(200)).await;
        assert_eq!(rows(&b, "SELECT count(*) FROM w").await, vec![vec![s("1")]]);
    }
}
