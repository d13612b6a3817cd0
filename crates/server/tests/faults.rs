//! The WAL's failure paths: a full disk and a failing fsync fail the
//! commit, refuse every later write until a restart, and never corrupt
//! what was committed; a corrupt checkpoint stops the start-up with a
//! clear message.

mod wire;

use snapscale_sql::WalFault as Fault;
use tokio_postgres::Client;
use wire::{code, connect, start_in};

async fn ids(c: &Client) -> Vec<i32> {
    c.query("SELECT id FROM t ORDER BY id", &[]).await.unwrap().iter().map(|r| r.get(0)).collect()
}

fn dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("snapscale-faults-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_fails_the_commit_and_stops_writes_until_restart() {
    let d = dir("enospc");
    let server = start_in(Some(&d), |_| {}).await;
    let c = connect(&server).await;
    c.batch_execute("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)").await.unwrap();
    server.db.inject_wal_fault(Fault::WriteNoSpace);
    // Half a batch reaches the file: some whole change records, no commit.
    assert_eq!(
        code(c.batch_execute("INSERT INTO t VALUES (2), (3), (4), (5), (6), (7)").await),
        "53100",
        "disk full"
    );
    // Every later write is refused, at its first change; reads go on.
    assert_eq!(code(c.batch_execute("INSERT INTO t VALUES (3)").await), "53100");
    assert_eq!(code(c.batch_execute("CREATE TABLE u (x int)").await), "53100");
    assert_eq!(ids(&c).await, [1], "the failed commit is not visible");
    drop(c);
    server.crash().await;
    // The half-written record is a torn tail: recovery stops before it.
    let server = start_in(Some(&d), |_| {}).await;
    let c = connect(&server).await;
    assert_eq!(ids(&c).await, [1]);
    c.batch_execute("INSERT INTO t VALUES (4)").await.unwrap();
    drop(c);
    server.crash().await;
    let server = start_in(Some(&d), |_| {}).await;
    let c = connect(&server).await;
    assert_eq!(ids(&c).await, [1, 4], "the log goes on after the torn tail, without its leftovers");
    drop(c);
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&d);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_fsync_is_never_counted_as_success() {
    let d = dir("eio");
    let server = start_in(Some(&d), |_| {}).await;
    let c = connect(&server).await;
    c.batch_execute("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)").await.unwrap();
    server.db.inject_wal_fault(Fault::FsyncIo);
    assert_eq!(code(c.batch_execute("INSERT INTO t VALUES (2)").await), "58030");
    assert_eq!(ids(&c).await, [1], "not acknowledged, not visible");
    assert_eq!(
        code(c.batch_execute("INSERT INTO t VALUES (3)").await),
        "58030",
        "no retry of a failed fsync"
    );
    drop(c);
    server.crash().await;
    // The record of row 2 reached the file before the fsync failed, so it
    // may count after the restart (its outcome was never acknowledged
    // either way); row 1 must be there and row 3 must not.
    let server = start_in(Some(&d), |_| {}).await;
    let c = connect(&server).await;
    let after = ids(&c).await;
    assert!(after == [1] || after == [1, 2], "{after:?}");
    c.batch_execute("INSERT INTO t VALUES (5)").await.unwrap();
    drop(c);
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&d);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_checkpoint_stops_the_start_up() {
    let d = dir("ckpt");
    let server = start_in(Some(&d), |_| {}).await;
    let c = connect(&server).await;
    c.batch_execute("CREATE TABLE t (id int); INSERT INTO t VALUES (1)").await.unwrap();
    drop(c);
    server.shutdown().await;
    let checkpoint = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_str().unwrap().starts_with("checkpoint-"))
        .expect("the shutdown wrote a checkpoint");
    let mut bytes = std::fs::read(&checkpoint).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0x55;
    std::fs::write(&checkpoint, bytes).unwrap();
    let settings = snapscale_server::Settings { port: 0, data_directory: d.clone(), ..Default::default() };
    let e = snapscale_server::Server::bind(settings).await.err().expect("refuses to start");
    assert!(e.to_string().contains("corrupt"), "{e}");
    let _ = std::fs::remove_dir_all(&d);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_checkpoint_never_names_wal_that_is_not_durable() {
    let d = dir("redo");
    let server = start_in(Some(&d), |_| {}).await;
    let c = connect(&server).await;
    c.batch_execute("CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1)").await.unwrap();
    // An abort record and an asynchronous commit: appended, not waited for.
    c.batch_execute("BEGIN; INSERT INTO t VALUES (2); ROLLBACK").await.unwrap();
    c.batch_execute("SET synchronous_commit = off; INSERT INTO t VALUES (3)").await.unwrap();
    drop(c);
    server.shutdown().await;
    // The control file's redo point lies within the WAL on disk.
    let control = std::fs::read(d.join("control")).unwrap();
    let redo = u64::from_le_bytes(control[8..16].try_into().unwrap());
    let wal_end: u64 = std::fs::read_dir(d.join("wal"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            let start = u64::from_str_radix(p.file_stem().unwrap().to_str().unwrap(), 16).unwrap();
            start + std::fs::metadata(&p).unwrap().len()
        })
        .max()
        .unwrap();
    assert!(wal_end >= redo, "redo {redo:X} beyond the WAL's end {wal_end:X}");
    // If the WAL is lost altogether (fsync = off and a machine crash), the
    // checkpoint alone is consistent, and the log restarts at its redo point.
    std::fs::remove_dir_all(d.join("wal")).unwrap();
    let server = start_in(Some(&d), |_| {}).await;
    let c = connect(&server).await;
    assert_eq!(ids(&c).await, [1, 3]);
    c.batch_execute("INSERT INTO t VALUES (4)").await.unwrap();
    drop(c);
    server.crash().await;
    let server = start_in(Some(&d), |_| {}).await;
    let c = connect(&server).await;
    assert_eq!(ids(&c).await, [1, 3, 4]);
    drop(c);
    server.shutdown().await;
    let _ = std::fs::remove_dir_all(&d);
}
