//! The server over the wire, for what only the protocol shows: startup and
//! authentication, ReadyForQuery's status byte, ParameterStatus, notices
//! and error fields, the extended protocol, prepared statements and
//! portals, max_connections, statement_timeout. What the statements answer
//! is specified by the SQL layer's scripts (`crates/sql/tests/scripts/`).

mod wire;

use wire::{error_code, error_of, start, status, tags, Msg, Raw};

#[tokio::test]
async fn startup_reports_postgresql_15_and_is_ready() {
    let server = start(|_| {}).await;
    assert_eq!(Raw::first_answer(server.addr).await, Msg::Auth(0), "trust: AuthenticationOk at once");
    let (_c, msgs) = Raw::connect(server.addr).await;
    let version = msgs.iter().find_map(|m| match m {
        Msg::ParameterStatus(k, v) if k == "server_version" => Some(v.clone()),
        _ => None,
    });
    assert!(version.as_deref().is_some_and(|v| v.starts_with("15.")), "{msgs:?}");
    assert_eq!(status(&msgs), 'I');
}

/// ReadyForQuery's status byte follows the block: I idle, T in a block, E
/// in a failed one (until ROLLBACK, whose COMMIT answers ROLLBACK), also
/// when a multi-statement query stops at its first error. (What the
/// statements answer is in the SQL layer's scripts.)
#[tokio::test]
async fn ready_for_query_reports_the_block_state() {
    let server = start(|_| {}).await;
    let (mut c, _) = Raw::connect(server.addr).await;
    let m = c.query("BEGIN").await;
    assert_eq!((tags(&m), status(&m)), (vec!["BEGIN".to_string()], 'T'));
    let m = c.query("SELECT 1/0").await;
    assert_eq!((error_code(&m).as_deref(), status(&m)), (Some("22012"), 'E'), "{m:?}");
    let m = c.query("SHOW lock_timeout").await;
    assert_eq!((error_code(&m).as_deref(), status(&m)), (Some("25P02"), 'E'));
    let m = c.query("COMMIT").await;
    assert_eq!((tags(&m), status(&m)), (vec!["ROLLBACK".to_string()], 'I'));
    let m = c.query("BEGIN; SELECT 1/0; COMMIT").await;
    assert_eq!(tags(&m), ["BEGIN"]);
    assert_eq!((error_code(&m).as_deref(), status(&m)), (Some("22012"), 'E'));
    let m = c.query("ROLLBACK").await;
    assert_eq!(status(&m), 'I');
    // An error outside a block leaves the session idle.
    let m = c.query("BEGIN ISOLATION LEVEL SERIALIZABLE").await;
    assert_eq!((error_code(&m).as_deref(), status(&m)), (Some("0A000"), 'I'), "never silently downgraded");
    let m = c.query("START TRANSACTION ISOLATION LEVEL REPEATABLE READ").await;
    assert_eq!((tags(&m), status(&m)), (vec!["START TRANSACTION".to_string()], 'T'));
    let m = c.query("END").await;
    assert_eq!((tags(&m), status(&m)), (vec!["COMMIT".to_string()], 'I'));
}

#[tokio::test]
async fn savepoints_nest_release_and_recover_a_failed_block() {
    let server = start(|_| {}).await;
    let (mut c, _) = Raw::connect(server.addr).await;
    let m = c.query("SAVEPOINT a").await;
    assert_eq!(error_code(&m).as_deref(), Some("25P01"), "outside a block");
    c.query("BEGIN").await;
    assert_eq!(tags(&c.query("SAVEPOINT a").await), ["SAVEPOINT"]);
    assert_eq!(tags(&c.query("SAVEPOINT b").await), ["SAVEPOINT"]);
    assert_eq!(tags(&c.query("RELEASE SAVEPOINT b").await), ["RELEASE"]);
    let m = c.query("RELEASE b").await;
    assert_eq!(error_code(&m).as_deref(), Some("3B001"), "{m:?}");
    // The failed RELEASE failed the block; ROLLBACK TO recovers it: later
    // statements run and COMMIT commits (not ROLLBACK).
    let m = c.query("ROLLBACK TO SAVEPOINT a").await;
    assert_eq!(tags(&m), ["ROLLBACK"]);
    assert_eq!(tags(&c.query("RELEASE a").await), ["RELEASE"]);
    let m = c.query("COMMIT").await;
    assert_eq!((tags(&m), status(&m)), (vec!["COMMIT".to_string()], 'I'));
}

/// After ROLLBACK TO recovers a failed block, ReadyForQuery says 'T'
/// again, as PostgreSQL's does: the server's own protocol loop reports the
/// session's block state after every message (E -> T included).
#[tokio::test]
async fn rollback_to_reports_in_transaction_status() {
    let server = start(|_| {}).await;
    let (mut c, _) = Raw::connect(server.addr).await;
    assert_eq!(status(&c.query("BEGIN; SAVEPOINT a").await), 'T');
    let m = c.query("SELECT 1/0").await;
    assert_eq!((error_code(&m).as_deref(), status(&m)), (Some("22012"), 'E'));
    let m = c.query("ROLLBACK TO a").await;
    assert_eq!((tags(&m), status(&m)), (vec!["ROLLBACK".to_string()], 'T'));
}

/// application_name comes from the startup packet. (SET and SHOW are in
/// the SQL layer's scripts.)
#[tokio::test]
async fn application_name_comes_from_the_startup_packet() {
    let server = start(|_| {}).await;
    let (mut c, _) = Raw::connect(server.addr).await;
    let m = c.query("SHOW application_name").await;
    assert!(m.contains(&Msg::Row(vec![Some("wire-tests".into())])), "{m:?}");
}

/// An empty query answers EmptyQueryResponse, not a command tag.
#[tokio::test]
async fn an_empty_query_answers_empty_query_response() {
    let server = start(|_| {}).await;
    let (mut c, _) = Raw::connect(server.addr).await;
    assert_eq!(c.query("").await, vec![Msg::EmptyQuery, Msg::Ready('I')]);
}

#[tokio::test]
async fn max_connections_refuses_with_53300_and_frees_slots() {
    let server = start(|s| s.max_connections = 2).await;
    let (a, _) = Raw::connect(server.addr).await;
    let (_b, _) = Raw::connect(server.addr).await;
    let (_c, msgs) = Raw::connect(server.addr).await;
    assert!(
        matches!(msgs.first(), Some(Msg::Error { severity, code, .. }) if severity == "FATAL" && code == "53300"),
        "{msgs:?}"
    );
    drop(a);
    // The slot comes back once the server notices the disconnect.
    let mut ok = false;
    for _ in 0..100 {
        let (_d, msgs) = Raw::connect(server.addr).await;
        if error_code(&msgs).is_none() {
            ok = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(ok, "a freed slot was never reused");
}

#[tokio::test]
async fn a_postgresql_driver_connects_and_runs_transactions() {
    let server = start(|_| {}).await;
    let (client, conn) = tokio_postgres::connect(
        &format!("host={} port={} user=tester dbname=tests", server.addr.ip(), server.addr.port()),
        tokio_postgres::NoTls,
    )
    .await
    .expect("tokio-postgres connects");
    tokio::spawn(conn);
    client.batch_execute("BEGIN; SAVEPOINT s; ROLLBACK TO s; COMMIT;").await.unwrap();
    let rows = client.simple_query("SHOW server_version").await.unwrap();
    let version = rows.iter().find_map(|m| match m {
        tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_owned),
        _ => None,
    });
    assert!(version.is_some_and(|v| v.starts_with("15.")));
    let e = client.batch_execute("LISTEN channel").await.unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("0A000"));
}

#[tokio::test]
async fn the_extended_protocol_runs_the_same_statements() {
    let server = start(|_| {}).await;
    let (client, conn) = tokio_postgres::connect(
        &format!("host={} port={} user=tester dbname=tests", server.addr.ip(), server.addr.port()),
        tokio_postgres::NoTls,
    )
    .await
    .unwrap();
    tokio::spawn(conn);
    // Parse / Bind / Describe / Execute / Sync, as drivers send them.
    client.execute("BEGIN ISOLATION LEVEL REPEATABLE READ", &[]).await.unwrap();
    let rows = client.query("SHOW transaction_isolation", &[]).await.unwrap();
    assert_eq!(rows[0].columns()[0].name(), "transaction_isolation");
    assert_eq!(rows[0].get::<_, String>(0), "repeatable read");
    client.execute("SAVEPOINT s", &[]).await.unwrap();
    let e = client.execute("LISTEN channel", &[]).await.unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("0A000"));
    let e = client.query("SHOW port", &[]).await.unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("25P02"), "failed block");
    client.execute("ROLLBACK TO s", &[]).await.unwrap();
    client.execute("COMMIT", &[]).await.unwrap();
    let e = client.execute("BEGIN; COMMIT", &[]).await.unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("42601"), "one statement per prepared statement");
    let e = client.execute("BEGIN ISOLATION LEVEL SERIALIZABLE", &[]).await.unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("0A000"));
}

#[tokio::test]
async fn scram_sha_256_when_configured() {
    let server = start(|s| {
        s.auth_method = snapscale_server::AuthMethod::ScramSha256;
        s.password = Some("pencil".into());
    })
    .await;
    let conninfo = |pw: &str| {
        format!(
            "host={} port={} user=tester dbname=tests password={pw}",
            server.addr.ip(),
            server.addr.port()
        )
    };
    let (client, conn) =
        tokio_postgres::connect(&conninfo("pencil"), tokio_postgres::NoTls).await.expect("SCRAM login");
    tokio::spawn(conn);
    client.batch_execute("BEGIN; COMMIT").await.unwrap();
    let e = tokio_postgres::connect(&conninfo("crayon"), tokio_postgres::NoTls)
        .await
        .err()
        .expect("wrong password refused");
    assert_eq!(e.code().map(|c| c.code()), Some("28P01"), "{e}");
    let db = e.as_db_error().expect("a server error");
    // PostgreSQL names the startup packet's user (libpq sends the SCRAM
    // exchange's own user name empty).
    assert_eq!(db.message(), "password authentication failed for user \"tester\"");
    assert_eq!(db.severity(), "FATAL");
    // A startup is answered with a SASL request, not a session.
    assert_eq!(Raw::first_answer(server.addr).await, Msg::Auth(10));
    // A replication connection (a standby's WAL receiver) is told the same.
    for (params, password) in [
        (&[("user", "replicator"), ("replication", "true")][..], "crayon"),
        (&[("user", "tester"), ("database", "tests")][..], "crayon"),
    ] {
        let (code, message) = scram_failure(server.addr, params, password).await;
        let user = params[0].1;
        assert_eq!(code, "28P01", "{params:?}");
        assert_eq!(message, format!("password authentication failed for user \"{user}\""), "{params:?}");
    }
}

/// A SCRAM-SHA-256 exchange by hand (as libpq runs it, with an empty user
/// name in the SCRAM messages), for connections tokio-postgres cannot
/// open (replication); returns the SQLSTATE and message that end it.
async fn scram_failure(
    addr: std::net::SocketAddr,
    params: &[(&str, &str)],
    password: &str,
) -> (String, String) {
    use postgres_protocol::authentication::sasl::{ChannelBinding, ScramSha256, SCRAM_SHA_256};
    use postgres_protocol::message::frontend;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    async fn next(stream: &mut tokio::net::TcpStream) -> (u8, Vec<u8>) {
        let kind = stream.read_u8().await.unwrap();
        let len = stream.read_i32().await.unwrap() as usize;
        let mut body = vec![0; len - 4];
        stream.read_exact(&mut body).await.unwrap();
        (kind, body)
    }
    let mut out = bytes::BytesMut::new();
    frontend::startup_message(params.iter().copied(), &mut out).unwrap();
    stream.write_all(&out).await.unwrap();
    let (kind, body) = next(&mut stream).await;
    assert_eq!((kind, &body[..4]), (b'R', &10i32.to_be_bytes()[..]), "a SASL request");
    let mut scram = ScramSha256::new(password.as_bytes(), ChannelBinding::unsupported());
    out.clear();
    frontend::sasl_initial_response(SCRAM_SHA_256, scram.message(), &mut out).unwrap();
    stream.write_all(&out).await.unwrap();
    let (kind, body) = next(&mut stream).await;
    assert_eq!((kind, &body[..4]), (b'R', &11i32.to_be_bytes()[..]), "SASL continue");
    scram.update(&body[4..]).unwrap();
    out.clear();
    frontend::sasl_response(scram.message(), &mut out).unwrap();
    stream.write_all(&out).await.unwrap();
    let (kind, body) = next(&mut stream).await;
    assert_eq!(kind, b'E', "an error ends the exchange");
    let (mut code, mut message) = (String::new(), String::new());
    for field in body.split(|&b| b == 0).filter(|f| !f.is_empty()) {
        let text = String::from_utf8_lossy(&field[1..]).into_owned();
        match field[0] {
            b'C' => code = text,
            b'M' => message = text,
            _ => {}
        }
    }
    (code, message)
}

#[tokio::test]
async fn read_write_requests_on_a_primary() {
    // Every transaction on a primary is read-write already: PostgreSQL
    // accepts each way of asking for it (a standby refuses them, in
    // tests/standby.rs).
    let server = start(|_| {}).await;
    let (mut c, _) = Raw::connect(server.addr).await;
    for sql in [
        "BEGIN READ WRITE; COMMIT",
        "BEGIN TRANSACTION READ WRITE; COMMIT",
        "START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE; COMMIT",
        "BEGIN; SET TRANSACTION READ WRITE; COMMIT",
        "SET transaction_read_only = off",
        "BEGIN; SET transaction_read_only = off; SELECT 1; COMMIT",
        "RESET transaction_read_only",
        "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
    ] {
        let m = c.query(sql).await;
        assert_eq!((error_code(&m), status(&m)), (None, 'I'), "{sql}: {m:?}");
    }
    let m = c.query("SHOW transaction_read_only").await;
    assert!(m.contains(&Msg::Row(vec![Some("off".into())])), "{m:?}");
}

#[tokio::test]
async fn trust_is_refused_beyond_loopback() {
    let settings =
        snapscale_server::Settings { listen_addresses: "0.0.0.0".into(), port: 0, ..Default::default() };
    let err = snapscale_server::Server::bind(settings).await.err().expect("refused");
    assert!(err.to_string().contains("only allowed on loopback"), "{err}");
}

#[tokio::test]
async fn client_settings_are_reported_and_filter_notices() {
    let server = start(|_| {}).await;
    let (mut c, startup) = Raw::connect(server.addr).await;
    let reported = |msgs: &[Msg], name: &str| {
        msgs.iter().find_map(|m| match m {
            Msg::ParameterStatus(k, v) if k == name => Some(v.clone()),
            _ => None,
        })
    };
    assert_eq!(reported(&startup, "DateStyle").as_deref(), Some("ISO, MDY"));
    assert_eq!(reported(&startup, "TimeZone").as_deref(), Some("UTC"));
    // A reported setting changed by SET is reported before ReadyForQuery;
    // one that did not change is not.
    let m = c.query("SET DateStyle = 'ISO, DMY'; SET extra_float_digits = 3").await;
    assert_eq!(reported(&m, "DateStyle").as_deref(), Some("ISO, DMY"), "{m:?}");
    assert_eq!(reported(&m, "TimeZone"), None, "{m:?}");
    // A rollback that undoes a SET reports the old value again.
    let m = c.query("BEGIN; SET TimeZone = 'Etc/UTC'; ROLLBACK").await;
    assert_eq!(reported(&m, "TimeZone"), None, "unchanged once the block ended: {m:?}");
    assert_eq!(reported(&c.query("RESET ALL").await, "DateStyle").as_deref(), Some("ISO, MDY"));
    // client_min_messages filters notices.
    c.query("SET client_min_messages = error").await;
    let m = c.query("COMMIT").await;
    assert!(!m.iter().any(|m| matches!(m, Msg::Notice { .. })), "{m:?}");
    c.query("RESET client_min_messages").await;
    let m = c.query("COMMIT").await;
    assert!(m.iter().any(|m| matches!(m, Msg::Notice { code, .. } if code == "25P01")), "{m:?}");
}

/// The end of SET LOCAL is reported like any change of a reported setting
/// (as in PostgreSQL, when ReadyForQuery finds the value differs from the
/// one last reported). (What SET LOCAL does is in the SQL layer's scripts.)
#[tokio::test]
async fn the_end_of_set_local_is_reported() {
    let server = start(|_| {}).await;
    let (mut c, _) = Raw::connect(server.addr).await;
    let date_style = |m: &[Msg]| {
        m.iter().find_map(|m| match m {
            Msg::ParameterStatus(k, v) if k == "DateStyle" => Some(v.clone()),
            _ => None,
        })
    };
    let m = c.query("BEGIN; SET LOCAL DateStyle = 'ISO, DMY'").await;
    assert_eq!(date_style(&m).as_deref(), Some("ISO, DMY"), "{m:?}");
    let m = c.query("COMMIT").await;
    assert_eq!(date_style(&m).as_deref(), Some("ISO, MDY"), "{m:?}");
    let m = c.query("BEGIN; SET LOCAL DateStyle = 'ISO, DMY'; COMMIT").await;
    assert_eq!(date_style(&m), None, "back where it was reported: {m:?}");
}

#[tokio::test]
async fn deallocate_and_discard_all_release_prepared_statements() {
    let server = start(|_| {}).await;
    let (client, conn) = tokio_postgres::connect(
        &format!("host={} port={} user=tester", server.addr.ip(), server.addr.port()),
        tokio_postgres::NoTls,
    )
    .await
    .expect("tokio-postgres connects");
    tokio::spawn(conn);
    let statement = client.prepare("SELECT 1").await.unwrap();
    client.query(&statement, &[]).await.unwrap();
    client.batch_execute("DEALLOCATE ALL").await.unwrap();
    let e = client.query(&statement, &[]).await.unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("26000"), "{e}");
    let e = client.batch_execute("DEALLOCATE nope").await.unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("26000"), "{e}");
    // DISCARD ALL deallocates them too. (What else it resets is in the SQL
    // layer's scripts.)
    let statement = client.prepare("SELECT 2").await.unwrap();
    client.batch_execute("DISCARD ALL").await.unwrap();
    assert_eq!(client.query(&statement, &[]).await.unwrap_err().code().map(|c| c.code()), Some("26000"));
}

#[tokio::test]
async fn session_functions_answer_as_postgresql_does() {
    let server = start(|_| {}).await;
    let (client, conn) = tokio_postgres::connect(
        &format!("host={} port={} user=tester dbname=shop", server.addr.ip(), server.addr.port()),
        tokio_postgres::NoTls,
    )
    .await
    .expect("tokio-postgres connects");
    tokio::spawn(conn);
    // The startup packet's user and database, the backend's pid. (The
    // settings functions are in the SQL layer's scripts.)
    let row = client
        .query_one(
            "SELECT version(), current_user, session_user, current_role, current_database(), current_schema(), \
             pg_backend_pid()",
            &[],
        )
        .await
        .unwrap();
    assert!(row.get::<_, String>(0).starts_with("PostgreSQL 15."), "{:?}", row.get::<_, String>(0));
    for i in 1..=3 {
        assert_eq!(row.get::<_, String>(i), "tester");
    }
    assert_eq!(row.get::<_, String>(4), "shop");
    assert_eq!(row.get::<_, String>(5), "public");
    assert!(row.get::<_, i32>(6) > 0);
}

#[tokio::test]
async fn constraint_violations_name_their_table_column_and_constraint() {
    let server = start(|_| {}).await;
    let (client, conn) = tokio_postgres::connect(
        &format!("host={} port={} user=tester", server.addr.ip(), server.addr.port()),
        tokio_postgres::NoTls,
    )
    .await
    .expect("tokio-postgres connects");
    tokio::spawn(conn);
    client.batch_execute("CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL)").await.unwrap();
    client.batch_execute("INSERT INTO items VALUES (1, 'a')").await.unwrap();
    let e = client.batch_execute("INSERT INTO items VALUES (1, 'b')").await.unwrap_err();
    let db = e.as_db_error().expect("a server error");
    assert_eq!(db.code().code(), "23505");
    assert_eq!(
        (db.schema(), db.table(), db.constraint()),
        (Some("public"), Some("items"), Some("items_pkey"))
    );
    let e = client.batch_execute("INSERT INTO items VALUES (2, NULL)").await.unwrap_err();
    let db = e.as_db_error().expect("a server error");
    assert_eq!(db.code().code(), "23502");
    assert_eq!((db.schema(), db.table(), db.column()), (Some("public"), Some("items"), Some("name")));
}

#[tokio::test]
async fn an_enum_declared_by_oid_in_parse_and_a_domain_check_naming_its_domain() {
    let server = start(|_| {}).await;
    let (client, conn) = tokio_postgres::connect(
        &format!("host={} port={} user=tester", server.addr.ip(), server.addr.port()),
        tokio_postgres::NoTls,
    )
    .await
    .expect("tokio-postgres connects");
    tokio::spawn(conn);
    client
        .batch_execute(
            "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy'); \
             CREATE DOMAIN pos AS integer CHECK (VALUE > 0); CREATE TABLE moods (m mood, p pos)",
        )
        .await
        .unwrap();
    // PostgreSQL's errdomainconstraint: the schema, the domain, its constraint.
    let e = client.batch_execute("INSERT INTO moods (p) VALUES (0)").await.unwrap_err();
    let db = e.as_db_error().expect("a server error");
    assert_eq!(db.code().code(), "23514");
    assert_eq!(
        (db.schema(), db.datatype(), db.constraint(), db.table()),
        (Some("public"), Some("pos"), Some("pos_check"), None)
    );
    // psycopg sends a registered enum's oid in Parse, and its value in
    // binary (enum_recv's: the label's text) or text.
    let oid: u32 = client.query_one("SELECT 'mood'::regtype::oid", &[]).await.unwrap().get(0);
    let (mut c, _) = Raw::connect(server.addr).await;
    let mut batch =
        wire::parse_message("", "INSERT INTO moods (m) VALUES ($1) RETURNING m::text, m > 'sad'", &[oid]);
    batch.extend(wire::bind_message("", "", &[1], &[(5, b"happy")], &[]));
    batch.extend(wire::execute_message("", 0));
    batch.extend(wire::parse_message("", "SELECT m FROM moods WHERE m = $1 OR m < $1", &[oid]));
    batch.extend(wire::bind_message("", "", &[0], &[(5, b"happy")], &[]));
    batch.extend(wire::execute_message("", 0));
    batch.extend(wire::parse_message("", "SELECT $1", &[oid]));
    batch.extend(wire::bind_message("", "", &[], &[(5, b"angry")], &[]));
    batch.extend(wire::execute_message("", 0));
    batch.extend(wire::sync_message());
    c.send_raw(&batch).await;
    let msgs = c.read_until_ready().await;
    let rows: Vec<&Msg> = msgs.iter().filter(|m| matches!(m, Msg::Row(_))).collect();
    assert_eq!(
        rows,
        [&Msg::Row(vec![Some("happy".into()), Some("t".into())]), &Msg::Row(vec![Some("happy".into())])]
    );
    assert_eq!(
        error_of(&msgs).map(|(_, code, m)| (code, m)),
        Some(("22P02".into(), "invalid input value for enum mood: \"angry\"".into()))
    );
}

#[tokio::test]
async fn statement_timeout_cancels_a_statement_that_runs_too_long() {
    let server = start(|_| {}).await;
    let (mut holder, _) = Raw::connect(server.addr).await;
    let (mut c, _) = Raw::connect(server.addr).await;
    holder.query("CREATE TABLE slow (a int)").await;
    assert_eq!(tags(&c.query("SET statement_timeout = '200ms'").await), ["SET"]);
    // Fast statements are untouched, and a timer left from one never
    // reaches a later statement.
    c.query("SELECT count(*) FROM slow").await;
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    assert_eq!(error_code(&c.query("SELECT count(*) FROM slow").await), None);
    holder.query("BEGIN; LOCK TABLE slow").await;
    let started = std::time::Instant::now();
    let m = c.query("SELECT count(*) FROM slow").await;
    let (_, code, message) = wire::error_of(&m).expect("an error");
    assert_eq!((code.as_str(), message.as_str()), ("57014", "canceling statement due to statement timeout"));
    assert!(started.elapsed() >= std::time::Duration::from_millis(200), "not before its time");
    c.query("RESET statement_timeout").await;
    holder.query("COMMIT").await;
    assert_eq!(error_code(&c.query("SELECT count(*) FROM slow").await), None);
}

#[tokio::test]
async fn prepare_and_execute_share_the_protocols_statement_names() {
    let server = start(|_| {}).await;
    let (mut c, _) = Raw::connect(server.addr).await;
    c.query("CREATE TABLE pe (id int PRIMARY KEY, name text)").await;
    assert_eq!(
        tags(&c.query("PREPARE ins (int, text) AS INSERT INTO pe VALUES ($1, $2)").await),
        ["PREPARE"]
    );
    assert_eq!(
        tags(&c.query("EXECUTE ins(1, 'a'); EXECUTE ins(-2, NULL)").await),
        ["INSERT 0 1", "INSERT 0 1"]
    );
    c.query("PREPARE sel AS SELECT name FROM pe WHERE id = $1").await;
    let m = c.query("EXECUTE sel(1)").await;
    assert!(m.contains(&Msg::Row(vec![Some("a".into())])) && tags(&m) == ["SELECT 1"], "{m:?}");
    let m = c.query("EXECUTE sel(-2)").await;
    assert!(m.contains(&Msg::Row(vec![None])), "NULL passes as NULL: {m:?}");
    assert_eq!(error_code(&c.query("EXECUTE sel('x')").await).as_deref(), Some("22P02"));
    assert_eq!(error_code(&c.query("EXECUTE sel").await).as_deref(), Some("42601"));
    assert_eq!(error_code(&c.query("EXECUTE nope(1)").await).as_deref(), Some("26000"));
    assert_eq!(error_code(&c.query("PREPARE sel AS SELECT 1").await).as_deref(), Some("42P05"));
    assert_eq!(error_code(&c.query("EXECUTE ins(1 + 2, 'b')").await).as_deref(), Some("0A000"));
    // A failed block refuses EXECUTE like any statement.
    let m = c.query("BEGIN; EXECUTE nope; ").await;
    assert_eq!((error_code(&m).as_deref(), status(&m)), (Some("26000"), 'E'));
    assert_eq!(error_code(&c.query("EXECUTE sel(1)").await).as_deref(), Some("25P02"));
    c.query("ROLLBACK").await;
    assert_eq!(tags(&c.query("DEALLOCATE sel").await), ["DEALLOCATE"]);
    assert_eq!(error_code(&c.query("EXECUTE sel(1)").await).as_deref(), Some("26000"));
}

/// timestamptz parameters and results in binary (oid 1184), as drivers
/// send a language's instant type; and SERIAL keys returned by INSERT.
#[tokio::test]
async fn timestamptz_and_serial_keys_through_a_driver() {
    let server = start(|_| {}).await;
    let (client, conn) = tokio_postgres::connect(
        &format!("host={} port={} user=tester", server.addr.ip(), server.addr.port()),
        tokio_postgres::NoTls,
    )
    .await
    .unwrap();
    tokio::spawn(conn);
    client
        .batch_execute(
            "CREATE TABLE ev (id bigserial PRIMARY KEY, at timestamptz NOT NULL, note text DEFAULT 'none')",
        )
        .await
        .unwrap();
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_micros(1_700_000_000_123_456);
    let insert = client.prepare("INSERT INTO ev (at) VALUES ($1) RETURNING id, at, note").await.unwrap();
    assert_eq!(insert.params(), &[tokio_postgres::types::Type::TIMESTAMPTZ]);
    let mut ids = Vec::new();
    for _ in 0..3 {
        let row = client.query_one(&insert, &[&at]).await.unwrap();
        ids.push(row.get::<_, i64>(0));
        assert_eq!(row.get::<_, std::time::SystemTime>(1), at);
        assert_eq!(row.get::<_, String>(2), "none");
    }
    assert_eq!(ids, [1, 2, 3]);
    let text = client.simple_query("SELECT at FROM ev WHERE id = 1").await.unwrap();
    let shown = text.iter().find_map(|m| match m {
        tokio_postgres::SimpleQueryMessage::Row(r) => r.get(0).map(str::to_owned),
        _ => None,
    });
    assert_eq!(shown.as_deref(), Some("2023-11-14 22:13:20.123456+00"));
    let n: i64 = client.query_one("SELECT count(*) FROM ev WHERE at <= now()", &[]).await.unwrap().get(0);
    assert_eq!(n, 3);
}

/// Startup parameters are settings of the new session (libpq sends PGTZ as
/// `timezone`, pgjdbc sends TimeZone; PGOPTIONS arrives as `options`):
/// ParameterStatus reports them, SHOW and the values follow them, and a
/// bad value ends the connection with FATAL and its SQLSTATE — under trust
/// and under SCRAM alike.
#[tokio::test]
async fn startup_parameters_set_the_sessions_settings() {
    let reported = |msgs: &[Msg], name: &str| {
        msgs.iter().find_map(|m| match m {
            Msg::ParameterStatus(k, v) if k == name => Some(v.clone()),
            _ => None,
        })
    };
    let server = start(|_| {}).await;
    let params = [
        ("user", "tester"),
        ("database", "tests"),
        ("TimeZone", "america/new_york"),
        ("options", "-c DateStyle=ISO,DMY --search-path=s1"),
        ("a_setting_snapscale_does_not_have", "x"),
    ];
    let (mut c, startup) = Raw::connect_with(server.addr, &params).await;
    assert_eq!(reported(&startup, "TimeZone").as_deref(), Some("America/New_York"), "{startup:?}");
    assert_eq!(reported(&startup, "DateStyle").as_deref(), Some("ISO, DMY"), "{startup:?}");
    let m = c.query("SHOW search_path; SELECT timestamptz '2024-07-01 12:00+00'").await;
    assert!(m.contains(&Msg::Row(vec![Some("s1".into())])), "{m:?}");
    assert!(m.contains(&Msg::Row(vec![Some("2024-07-01 08:00:00-04".into())])), "{m:?}");
    // The first change is reported against what startup said.
    assert_eq!(reported(&c.query("SET TimeZone = 'UTC'").await, "TimeZone").as_deref(), Some("UTC"));

    let (_, refused) =
        Raw::connect_with(server.addr, &[("user", "tester"), ("TimeZone", "Mars/Olympus")]).await;
    assert_eq!(
        error_of(&refused).map(|(s, c, _)| (s, c)),
        Some(("FATAL".into(), "22023".into())),
        "{refused:?}"
    );
    let (_, refused) = Raw::connect_with(server.addr, &[("user", "tester"), ("options", "-x")]).await;
    assert_eq!(error_of(&refused).map(|(_, c, _)| c).as_deref(), Some("42601"), "{refused:?}");

    let scram = start(|s| {
        s.auth_method = snapscale_server::AuthMethod::ScramSha256;
        s.password = Some("pencil".into());
    })
    .await;
    let (client, conn) = tokio_postgres::connect(
        &format!(
            "host={} port={} user=tester password=pencil options='-c TimeZone=Asia/Tokyo'",
            scram.addr.ip(),
            scram.addr.port()
        ),
        tokio_postgres::NoTls,
    )
    .await
    .expect("SCRAM login with options");
    tokio::spawn(conn);
    let shown = client.simple_query("SHOW TimeZone").await.unwrap();
    assert!(
        shown.iter().any(
            |m| matches!(m, tokio_postgres::SimpleQueryMessage::Row(r) if r.get(0) == Some("Asia/Tokyo"))
        ),
        "{shown:?}"
    );
}

/// A syntax error is worded as PostgreSQL words it and carries its
/// position (the P field, 1-based characters into the whole query string)
/// for a client to point at: psql's `LINE 2:` and caret.
#[tokio::test]
async fn a_syntax_error_carries_its_position() {
    use tokio_postgres::error::ErrorPosition;
    let server = start(|_| {}).await;
    let client = wire::connect(&server).await;
    for (sql, message, position) in [
        ("SELEC 1", "syntax error at or near \"SELEC\"", 1),
        ("SELECT 1;\nSELECT é, 2 2", "syntax error at or near \"2\"", 23),
        ("SELECT 1 +   ", "syntax error at end of input", 14),
        ("SELECT 1 + ;", "syntax error at or near \";\"", 12),
    ] {
        let e = client.simple_query(sql).await.expect_err(sql);
        let db = e.as_db_error().expect("a server error");
        assert_eq!((db.code().code(), db.message()), ("42601", message), "{sql}");
        assert_eq!(db.position(), Some(&ErrorPosition::Original(position)), "{sql}");
    }
    // The extended protocol reports it too (Parse of one statement).
    let e = client.prepare("SELECT 1 1").await.expect_err("prepare");
    assert_eq!(e.as_db_error().and_then(|d| d.position()), Some(&ErrorPosition::Original(10)));
}
