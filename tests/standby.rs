//! Hot standby, end to end: a real primary and two real standbys (one in
//! each standby snapshot mode, `known-assigned` and `csn`), as child
//! processes, for every primary snapshot mode.
//!
//! * The standbys are started from empty data directories (a base backup)
//!   before `pgbench -i`, so its one large transaction streams to them while
//!   it runs. Sessions on both standbys loop REPEATABLE READ transactions
//!   from before `pgbench -i` (the tables do not exist yet: 42P01 until
//!   they appear) through `pgbench` tpcb-like on the primary, checking that
//!   sum(abalance) = sum(tbalance) = sum(bbalance) = sum(delta) (never half a
//!   transaction) and that the history only grows (a prefix of the
//!   primary's commits): its count never falls, and rows seen by earlier
//!   transactions (the newest of each, and the first ever seen) are still
//!   there.
//! * Writes, DDL, nextval and every way of asking for a read-write
//!   transaction are refused on a standby as PostgreSQL 15 refuses them.
//! * After the load stops and the standbys catch up, every table is
//!   identical on all three servers.
//! * Both standbys, killed with SIGKILL, restart from their own
//!   restartpoints and WAL (no new base backup; the `csn` standby from
//!   `Replayer::running()` as its restartpoint recorded it) and catch up
//!   again.
//! * A primary killed in the middle of a transaction that had streamed
//!   records leaves no in-progress xid on the standbys once the restarted
//!   primary's running-transactions record arrives, and nothing of that
//!   transaction is ever visible.
//!
//! Skips with a message when pgbench is absent (CI installs it).
//! `SNAPSCALE_STANDBY_MODES=csn,dense` restricts the primary modes.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

const PRIMARY_MODES: [&str; 6] = ["pgproc", "pgxact", "dense", "dense-cached", "shared-cached", "csn"];
const STANDBY_MODES: [&str; 2] = ["known-assigned", "csn"];

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn pgbench_available() -> bool {
    Command::new("pgbench").arg("--version").output().is_ok_and(|o| o.status.success())
}

struct Server {
    child: Child,
    port: u16,
    dir: PathBuf,
    args: Vec<String>,
}

impl Server {
    fn log(&self) -> PathBuf {
        self.dir.with_extension("log")
    }

    fn start(dir: PathBuf, port: u16, args: Vec<String>) -> Server {
        let log =
            std::fs::OpenOptions::new().create(true).append(true).open(dir.with_extension("log")).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_snapscale"))
            .args(["serve", "--port", &port.to_string(), "--data-dir"])
            .arg(&dir)
            .args(&args)
            .env("SNAPSCALE_LOG", "info")
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .expect("the snapscale binary starts");
        Server { child, port, dir, args }
    }

    fn kill(&mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().unwrap();
    }

    fn restart(&mut self) {
        *self = Server::start(self.dir.clone(), self.port, self.args.clone());
    }

    async fn connect(&mut self) -> Client {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            match tokio_postgres::connect(&format!("host=127.0.0.1 port={} user=test", self.port), NoTls)
                .await
            {
                Ok((client, conn)) => {
                    tokio::spawn(conn);
                    return client;
                }
                Err(_) => {
                    if let Ok(Some(status)) = self.child.try_wait() {
                        panic!("the server exited with {status}:\n{}", read(&self.log()));
                    }
                    assert!(Instant::now() < deadline, "the server did not come up:\n{}", read(&self.log()));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn fresh_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("snapscale-standby-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    let _ = std::fs::remove_file(d.with_extension("log"));
    d
}

fn pgbench(port: u16, args: &[&str]) {
    let out = Command::new("pgbench")
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "-U", "test"])
        .args(args)
        .arg("postgres")
        .output()
        .expect("pgbench runs");
    assert!(
        out.status.success(),
        "pgbench {args:?} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The text values of every row `sql` returns.
async fn rows(c: &Client, sql: &str) -> Vec<Vec<Option<String>>> {
    let mut out = Vec::new();
    for m in c.simple_query(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}")) {
        if let SimpleQueryMessage::Row(r) = m {
            out.push((0..r.len()).map(|i| r.get(i).map(str::to_owned)).collect());
        }
    }
    out
}

async fn one(c: &Client, sql: &str) -> Option<String> {
    rows(c, sql).await.pop().and_then(|mut r| r.remove(0))
}

fn parse_lsn(text: &str) -> u64 {
    let (hi, lo) = text.split_once('/').expect("an LSN");
    (u64::from_str_radix(hi, 16).unwrap() << 32) | u64::from_str_radix(lo, 16).unwrap()
}

/// Waits until `standby` has replayed everything `primary` has written.
async fn catch_up(primary: &Client, standby: &mut Server, what: &str) {
    let target = parse_lsn(&one(primary, "SELECT pg_current_wal_lsn()").await.unwrap());
    let c = standby.connect().await;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let replayed = one(&c, "SELECT pg_last_wal_replay_lsn()").await.map_or(0, |t| parse_lsn(&t));
        if replayed >= target {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: the standby replayed to {replayed:X}, not {target:X}:\n{}",
            read(&standby.log())
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

const TABLES: [&str; 5] = [
    "SELECT * FROM pgbench_accounts ORDER BY aid",
    "SELECT * FROM pgbench_tellers ORDER BY tid",
    "SELECT * FROM pgbench_branches ORDER BY bid",
    "SELECT * FROM pgbench_history ORDER BY tid, bid, aid, delta, mtime",
    "SELECT * FROM serials ORDER BY id",
];

async fn assert_identical(primary: &Client, standby: &Client, what: &str) {
    for sql in TABLES {
        let (a, b) = (rows(primary, sql).await, rows(standby, sql).await);
        assert!(!a.is_empty() || sql.contains("history"), "{what}: {sql} returned nothing");
        assert_eq!(a.len(), b.len(), "{what}: {sql}: row counts differ");
        assert!(a == b, "{what}: {sql}: the standby's rows differ from the primary's");
    }
}

/// Loops REPEATABLE READ transactions on a standby until `stop`: the four
/// sums agree in every transaction, and the history only grows: its count
/// never falls, and rows seen by earlier transactions (the newest row of
/// each of the last few, and the first row ever seen) are still there, as
/// many times as then. Until the tables exist a transaction fails with
/// 42P01 and is retried. Counts the transactions that checked in `checked`.
async fn check_consistency(port: u16, stop: Arc<AtomicBool>, checked: Arc<AtomicU64>, mode: String) {
    let (mut c, conn) =
        tokio_postgres::connect(&format!("host=127.0.0.1 port={port} user=checker"), NoTls).await.unwrap();
    tokio::spawn(conn);
    let mut last_history = 0i64;
    // (WHERE clause naming one history row, how many such rows were seen).
    let mut witnesses: Vec<(String, i64)> = Vec::new();
    let mut first_witness: Option<(String, i64)> = None;
    while !stop.load(Ordering::Relaxed) {
        let tx = c.build_transaction().isolation_level(tokio_postgres::IsolationLevel::RepeatableRead);
        let tx = tx.start().await.unwrap();
        let checks = async {
            let sum = |sql: &'static str| {
                let tx = &tx;
                async move { Ok::<i64, tokio_postgres::Error>(tx.query_one(sql, &[]).await?.get::<_, i64>(0)) }
            };
            let accounts = sum("SELECT coalesce(sum(abalance), 0) FROM pgbench_accounts").await?;
            let tellers = sum("SELECT coalesce(sum(tbalance), 0) FROM pgbench_tellers").await?;
            let branches = sum("SELECT coalesce(sum(bbalance), 0) FROM pgbench_branches").await?;
            let history = sum("SELECT coalesce(sum(delta), 0) FROM pgbench_history").await?;
            let count = sum("SELECT count(*) FROM pgbench_history").await?;
            let mut still = Vec::new();
            for (row, _) in witnesses.iter().chain(&first_witness) {
                still.push(
                    tx.query_one(&format!("SELECT count(*) FROM pgbench_history WHERE {row}"), &[])
                        .await?
                        .get::<_, i64>(0),
                );
            }
            let newest = tx
                .simple_query(
                    "SELECT tid, bid, aid, delta, mtime FROM pgbench_history \
                     ORDER BY mtime DESC, aid DESC, tid DESC, bid DESC, delta DESC LIMIT 1",
                )
                .await?;
            let newest = newest.into_iter().find_map(|m| match m {
                SimpleQueryMessage::Row(r) => Some(format!(
                    "tid = {} AND bid = {} AND aid = {} AND delta = {} AND mtime = '{}'",
                    r.get(0).unwrap(),
                    r.get(1).unwrap(),
                    r.get(2).unwrap(),
                    r.get(3).unwrap(),
                    r.get(4).unwrap()
                )),
                _ => None,
            });
            let newest = match newest {
                Some(row) => {
                    let n = tx
                        .query_one(&format!("SELECT count(*) FROM pgbench_history WHERE {row}"), &[])
                        .await?;
                    Some((row, n.get::<_, i64>(0)))
                }
                None => None,
            };
            Ok::<_, tokio_postgres::Error>((accounts, tellers, branches, history, count, still, newest))
        };
        let (accounts, tellers, branches, history, count, still, newest) = match checks.await {
            Ok(v) => v,
            Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => {
                drop(tx);
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
            Err(e) => panic!("standby ({mode}): a consistency check failed: {e}"),
        };
        tx.commit().await.unwrap();
        assert!(
            accounts == tellers && tellers == branches && branches == history,
            "standby ({mode}): a REPEATABLE READ transaction saw half a transaction: accounts {accounts}, \
             tellers {tellers}, branches {branches}, history {history}"
        );
        assert!(count >= last_history, "standby ({mode}): the history shrank from {last_history} to {count}");
        for ((row, then), now) in witnesses.iter().chain(&first_witness).zip(still) {
            assert!(
                now >= *then,
                "standby ({mode}): the history lost a row an earlier transaction saw ({then} → {now}): {row}"
            );
        }
        last_history = count;
        if let Some(w) = newest {
            first_witness.get_or_insert_with(|| w.clone());
            witnesses.push(w);
            if witnesses.len() > 4 {
                witnesses.remove(0);
            }
        }
        checked.fetch_add(1, Ordering::Relaxed);
    }
}

/// Every way of asking a standby for a read-write transaction fails as in
/// PostgreSQL 15 (0A000 from the transaction_read_only check hook; 25001
/// once the transaction has run a query), and leaves the session usable.
async fn refuses_read_write(c: &Client, mode: &str) {
    const RECOVERY: &str = "cannot set transaction read-write mode during recovery";
    for (sql, code, message) in [
        ("BEGIN READ WRITE", "0A000", RECOVERY),
        ("BEGIN TRANSACTION READ WRITE", "0A000", RECOVERY),
        ("START TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ WRITE", "0A000", RECOVERY),
        ("SET TRANSACTION READ WRITE", "0A000", RECOVERY),
        ("BEGIN; SET TRANSACTION READ WRITE", "0A000", RECOVERY),
        ("SET transaction_read_only = off", "0A000", RECOVERY),
        ("BEGIN; SET transaction_read_only = off", "0A000", RECOVERY),
        (
            "BEGIN; SELECT 1; SET TRANSACTION READ WRITE",
            "25001",
            "transaction read-write mode must be set before any query",
        ),
    ] {
        let e = c.batch_execute(sql).await.unwrap_err();
        let db = e.as_db_error().unwrap_or_else(|| panic!("{sql}: {e}"));
        assert_eq!((db.code().code(), db.message()), (code, message), "{mode}: {sql} on a standby");
        c.batch_execute("ROLLBACK").await.unwrap();
    }
    // A failed BEGIN READ WRITE leaves no block behind (PostgreSQL ends the
    // block it had started): the next statement runs on its own.
    let e = c.batch_execute("BEGIN READ WRITE").await.unwrap_err();
    assert_eq!(e.code().map(|c| c.code()), Some("0A000"), "{e}");
    assert_eq!(one(c, "SELECT 1").await.as_deref(), Some("1"));
    // What PostgreSQL accepts on a standby.
    for sql in [
        "BEGIN READ ONLY; COMMIT",
        "SET transaction_read_only = on",
        "RESET transaction_read_only",
        "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
    ] {
        c.batch_execute(sql).await.unwrap_or_else(|e| panic!("{mode}: {sql} on a standby: {e}"));
    }
    assert_eq!(one(c, "SHOW transaction_read_only").await.as_deref(), Some("on"));
}

/// The running xids a session's snapshot lists (`xmin:xmax:xip,...`).
fn running(snapshot: &str) -> (u64, Vec<u64>) {
    let mut parts = snapshot.split(':');
    let xmin = parts.next().unwrap().parse().unwrap();
    let _xmax = parts.next();
    let xip =
        parts.next().unwrap_or("").split(',').filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
    (xmin, xip)
}

async fn scenario(mode: &str) {
    let primary_port = free_port();
    let common = |extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = ["--set", "fsync=off"].iter().map(|s| s.to_string()).collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    let mut primary = Server::start(
        fresh_dir(&format!("{mode}-primary")),
        primary_port,
        common(&["--snapshot-mode", mode]),
    );
    let p = primary.connect().await;
    let conninfo = format!("primary_conninfo=host=127.0.0.1 port={primary_port} user=replicator");
    let mut standbys: Vec<Server> = STANDBY_MODES
        .iter()
        .map(|sm| {
            Server::start(
                fresh_dir(&format!("{mode}-standby-{sm}")),
                free_port(),
                common(&["--snapshot-mode", sm, "--set", &conninfo, "--set", "checkpoint_timeout=2s"]),
            )
        })
        .collect();
    for s in &mut standbys {
        let c = s.connect().await;
        assert_eq!(one(&c, "SELECT pg_is_in_recovery()").await.as_deref(), Some("t"));
        assert_eq!(one(&c, "SHOW transaction_read_only").await.as_deref(), Some("on"));
        let e = c.batch_execute("CREATE TABLE t (a int)").await.unwrap_err();
        assert_eq!(e.code().map(|c| c.code()), Some("25006"), "DDL on a standby: {e}");
        refuses_read_write(&c, mode).await;
    }
    assert_eq!(one(&p, "SELECT pg_is_in_recovery()").await.as_deref(), Some("f"));

    // Checkers on both standbys from before pgbench -i (its tables do not
    // exist yet) until the end of the tpcb-like load.
    let stop = Arc::new(AtomicBool::new(false));
    let counts: Vec<Arc<AtomicU64>> = STANDBY_MODES.iter().map(|_| Arc::new(AtomicU64::new(0))).collect();
    let checkers: Vec<_> = standbys
        .iter()
        .zip(STANDBY_MODES)
        .zip(&counts)
        .map(|((s, sm), n)| {
            tokio::spawn(check_consistency(s.port, Arc::clone(&stop), Arc::clone(n), sm.to_owned()))
        })
        .collect();
    // Initialisation streams while it runs.
    tokio::task::spawn_blocking(move || pgbench(primary_port, &["-i", "-s", "1"])).await.unwrap();
    let during_init: Vec<u64> = counts.iter().map(|n| n.load(Ordering::Relaxed)).collect();
    // Sequences replay too: one used in the transaction that creates it
    // (its values reach the WAL before its CATALOG record does).
    p.batch_execute(
        "CREATE TABLE serials (id serial PRIMARY KEY, v int DEFAULT 7); INSERT INTO serials (v) VALUES (1)",
    )
    .await
    .unwrap();
    p.batch_execute("BEGIN; CREATE SEQUENCE fresh; INSERT INTO serials (v) SELECT nextval('fresh'); COMMIT")
        .await
        .unwrap();
    // User-defined types replay: an enum's values, a label added before
    // another, a committed RENAME VALUE (stored values follow it) and a
    // rolled-back one (they do not), a domain and a composite column.
    for sql in [
        "CREATE TYPE mood AS ENUM ('sad', 'happy'); CREATE DOMAIN pos AS int CHECK (VALUE > 0);
         CREATE TYPE pair AS (a int, b text); CREATE TABLE moods (id pos PRIMARY KEY, m mood, p pair);
         INSERT INTO moods VALUES (1, 'happy', ROW(1, 'x')), (2, 'sad', NULL)",
        "ALTER TYPE mood ADD VALUE 'ok' BEFORE 'happy'",
        "INSERT INTO moods VALUES (3, 'ok', '(2,y)')",
        "ALTER TYPE mood RENAME VALUE 'sad' TO 'blue'",
        "BEGIN; ALTER TYPE mood RENAME VALUE 'happy' TO 'glad'; ROLLBACK",
        // ALTER TABLE replays: a rewrite into new storage, a constraint
        // and a rename, then rows changed by their ids in the new storage.
        "CREATE TABLE altered (id int PRIMARY KEY, a text, b int); INSERT INTO altered VALUES (1, 'x', 1), (2, 'y', 2)",
        "ALTER TABLE altered ADD COLUMN c int DEFAULT 5, DROP COLUMN a, ALTER COLUMN b TYPE bigint, ADD CHECK (c > 0)",
        "ALTER TABLE altered RENAME TO renamed; UPDATE renamed SET c = 6 WHERE id = 2; DELETE FROM renamed WHERE id = 1",
        "BEGIN; ALTER TABLE renamed DROP COLUMN c; ROLLBACK",
        // A column added without a rewrite (MISSING-COLUMN): the stored
        // row reads its missing value on the standby too.
        "ALTER TABLE renamed ADD COLUMN d text DEFAULT 'dd'; INSERT INTO renamed VALUES (3, 3, 3, 'own')",
    ] {
        p.batch_execute(sql).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    let altered = "SELECT * FROM renamed ORDER BY id";
    let altered_want = rows(&p, altered).await;
    assert_eq!(
        altered_want,
        vec![
            vec![Some("2".into()), Some("2".into()), Some("6".into()), Some("dd".into())],
            vec![Some("3".into()), Some("3".into()), Some("3".into()), Some("own".into())]
        ]
    );
    let moods = "SELECT id, m::text, (p).b FROM moods ORDER BY m, id";
    let want = rows(&p, moods).await;
    assert_eq!(
        want[0],
        vec![Some("2".into()), Some("blue".into()), None],
        "{mode}: the primary's enum order"
    );
    for s in &mut standbys {
        catch_up(&p, s, &format!("{mode}: after pgbench -i")).await;
        let c = s.connect().await;
        assert_eq!(rows(&c, moods).await, want, "{mode}: user types on a standby");
        assert_eq!(rows(&c, altered).await, altered_want, "{mode}: an altered table on a standby");
        let e = c.batch_execute("SELECT nextval('serials_id_seq')").await.unwrap_err();
        assert_eq!(e.code().map(|c| c.code()), Some("25006"), "nextval on a standby: {e}");
        for (sql, command) in [
            ("INSERT INTO pgbench_history VALUES (1, 1, 1, 0, now(), NULL)", "INSERT"),
            ("UPDATE pgbench_accounts SET abalance = 1 WHERE aid = 1", "UPDATE"),
            ("DELETE FROM pgbench_history", "DELETE"),
        ] {
            let e = c.batch_execute(sql).await.unwrap_err();
            let db = e.as_db_error().unwrap_or_else(|| panic!("{sql}: {e}"));
            assert_eq!(
                (db.code().code(), db.message()),
                ("25006", format!("cannot execute {command} in a read-only transaction").as_str()),
                "{mode}: {sql} on a standby"
            );
        }
        // Lag in time, as PostgreSQL users read it.
        let c = s.connect().await;
        let lag =
            "SELECT now() - pg_last_xact_replay_timestamp() BETWEEN interval '0' AND interval '5 minutes'";
        assert_eq!(one(&c, lag).await.as_deref(), Some("t"), "{mode}: replay lag in time");
    }
    // REL-KEY on a standby: what a session's name finds follows the
    // schemas and relations replay makes and drops.
    p.batch_execute("CREATE TABLE shadow (v text); INSERT INTO shadow VALUES ('public')").await.unwrap();
    let mut readers = Vec::new();
    for (s, sm) in standbys.iter_mut().zip(STANDBY_MODES) {
        catch_up(&p, s, &format!("{mode} → {sm}: a table in public")).await;
        let c = s.connect().await;
        c.batch_execute("SET search_path = app, public").await.unwrap();
        assert_eq!(one(&c, "SELECT v FROM shadow").await.as_deref(), Some("public"), "{mode} → {sm}");
        readers.push(c);
    }
    p.batch_execute(
        "CREATE SCHEMA app; CREATE TABLE app.shadow (v text); INSERT INTO app.shadow VALUES ('app')",
    )
    .await
    .unwrap();
    for ((s, sm), c) in standbys.iter_mut().zip(STANDBY_MODES).zip(&readers) {
        catch_up(&p, s, &format!("{mode} → {sm}: a schema first on the path")).await;
        assert_eq!(one(c, "SELECT v FROM shadow").await.as_deref(), Some("app"), "{mode} → {sm}: shadowed");
    }
    p.batch_execute("DROP SCHEMA app CASCADE").await.unwrap();
    for ((s, sm), c) in standbys.iter_mut().zip(STANDBY_MODES).zip(&readers) {
        catch_up(&p, s, &format!("{mode} → {sm}: the schema dropped")).await;
        assert_eq!(
            one(c, "SELECT v FROM shadow").await.as_deref(),
            Some("public"),
            "{mode} → {sm}: uncovered"
        );
    }
    drop(readers);
    let before_load: Vec<u64> = counts.iter().map(|n| n.load(Ordering::Relaxed)).collect();
    tokio::task::spawn_blocking(move || {
        pgbench(primary_port, &["-c", "4", "-j", "2", "-T", "4", "-M", "prepared"])
    })
    .await
    .unwrap();
    stop.store(true, Ordering::Relaxed);
    for (((c, sm), n), (init, before)) in
        checkers.into_iter().zip(STANDBY_MODES).zip(&counts).zip(during_init.iter().zip(&before_load))
    {
        c.await.unwrap();
        let total = n.load(Ordering::Relaxed);
        assert!(*init > 0, "{mode} → {sm}: no consistency check ran during pgbench -i");
        assert!(total > *before, "{mode} → {sm}: no consistency check ran during the load");
        eprintln!(
            "{mode} → {sm}: REPEATABLE READ checks passed: {init} during pgbench -i, {} during the load",
            total - before
        );
    }
    for (s, sm) in standbys.iter_mut().zip(STANDBY_MODES) {
        catch_up(&p, s, &format!("{mode} → {sm}: after the load")).await;
        let c = s.connect().await;
        assert_identical(&p, &c, &format!("{mode} → {sm}: after the load")).await;
    }

    // A row updated beside FOR KEY SHARE lockers (on the primary its xmax
    // names a multixact of them and the updater) replays as an update by
    // the updater's own xid: the standby shows the committed value while
    // the lockers still run, and nothing of their locks (MULTI-WAL in the
    // storage crate's README).
    let (l1, l2) = (primary.connect().await, primary.connect().await);
    for l in [&l1, &l2] {
        l.batch_execute("BEGIN; SELECT bid FROM pgbench_branches WHERE bid = 1 FOR KEY SHARE").await.unwrap();
    }
    p.batch_execute("UPDATE pgbench_branches SET filler = 'multi' WHERE bid = 1").await.unwrap();
    for (s, sm) in standbys.iter_mut().zip(STANDBY_MODES) {
        catch_up(&p, s, &format!("{mode} → {sm}: after an update beside share locks")).await;
        let c = s.connect().await;
        let filler = one(&c, "SELECT filler FROM pgbench_branches WHERE bid = 1").await;
        assert_eq!(filler.as_deref().map(str::trim), Some("multi"), "{mode} → {sm}: the committed update");
    }
    for l in [&l1, &l2] {
        l.batch_execute("COMMIT").await.unwrap();
    }

    // Both standbys, killed with SIGKILL, resume from their own
    // restartpoints (the csn standby's running list is
    // `Replayer::running()`), without a new base backup.
    for victim in &mut standbys {
        victim.kill();
    }
    tokio::task::spawn_blocking(move || pgbench(primary_port, &["-c", "2", "-T", "2"])).await.unwrap();
    for (victim, sm) in standbys.iter_mut().zip(STANDBY_MODES) {
        let log = read(&victim.log());
        assert!(log.contains("restartpoint done"), "{mode} → {sm}: the standby took no restartpoint:\n{log}");
        victim.restart();
        catch_up(&p, victim, &format!("{mode} → {sm}: after the standby's restart")).await;
        let c = victim.connect().await;
        assert_identical(&p, &c, &format!("{mode} → {sm}: after the standby's restart")).await;
        let log = read(&victim.log());
        assert_eq!(
            log.matches("taking a base backup").count(),
            1,
            "{mode} → {sm}: the restart took a new base backup"
        );
    }

    // A primary killed mid-transaction: the transaction has streamed
    // records (it outgrows its WAL buffer) but never commits.
    let p2 = primary.connect().await;
    p2.batch_execute("BEGIN; CREATE TABLE phantom (a int, b text)").await.unwrap();
    p2.batch_execute("INSERT INTO phantom SELECT aid, filler FROM pgbench_accounts").await.unwrap();
    // A later commit: a standby snapshot's xmax is one past the latest
    // completed xid (as in PostgreSQL), so only then does it list the open
    // transaction as running.
    p.batch_execute("INSERT INTO pgbench_history VALUES (1, 1, 1, 0, now(), NULL)").await.unwrap();
    let mut phantom = Vec::new();
    for s in &mut standbys {
        let c = s.connect().await;
        let deadline = Instant::now() + Duration::from_secs(60);
        let xid = loop {
            let snap = one(&c, "SELECT pg_current_snapshot()").await.unwrap();
            if let Some(&x) = running(&snap).1.first() {
                break x;
            }
            assert!(Instant::now() < deadline, "{mode}: the standby never saw the open transaction ({snap})");
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        phantom.push(xid);
    }
    primary.kill();
    drop((p, p2));
    primary.restart();
    let p = primary.connect().await;
    p.batch_execute("INSERT INTO pgbench_history VALUES (1, 1, 1, 0, now(), NULL)").await.unwrap();
    // The crash did not take the sequences back (the key is unique).
    p.batch_execute("INSERT INTO serials (v) SELECT nextval('fresh')").await.unwrap();
    for (s, xid) in standbys.iter_mut().zip(phantom) {
        catch_up(&p, s, &format!("{mode}: after the primary's crash")).await;
        let c = s.connect().await;
        let snap = one(&c, "SELECT pg_current_snapshot()").await.unwrap();
        let (xmin, xip) = running(&snap);
        assert!(
            xmin > xid && !xip.contains(&xid),
            "{mode}: xid {xid} of the crashed transaction is still in progress on the standby ({snap})"
        );
        let e = c.batch_execute("SELECT count(*) FROM phantom").await.unwrap_err();
        assert_eq!(e.code().map(|c| c.code()), Some("42P01"), "the crashed transaction's table is visible");
        assert_identical(&p, &c, &format!("{mode}: after the primary's crash")).await;
    }
    for s in standbys.iter().chain([&primary]) {
        let _ = std::fs::remove_dir_all(&s.dir);
        let _ = std::fs::remove_file(s.log());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn standbys_replay_consistently_in_every_mode() {
    if !pgbench_available() {
        eprintln!("SKIPPED: pgbench is not installed (apt-get install postgresql-client)");
        return;
    }
    let only = std::env::var("SNAPSCALE_STANDBY_MODES").ok();
    for mode in PRIMARY_MODES {
        if only.as_deref().is_some_and(|o| !o.split(',').any(|m| m == mode)) {
            continue;
        }
        let started = Instant::now();
        scenario(mode).await;
        eprintln!("primary {mode}: passed in {:.1} s", started.elapsed().as_secs_f64());
    }
}
