//! A standby whose stream broke off in the middle of a record (the primary
//! crashed, say) resumes at the end of its whole records, and the new
//! stream sends that record again from its start.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use snapscale_sql::guc::SessionSettings;
use snapscale_sql::replication::{install_base_backup, Standby, StandbyConfig};
use snapscale_sql::{Conn, Database, DatabaseConfig, Durability};

fn data_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("snapscale-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn config(dir: &std::path::Path) -> DatabaseConfig {
    DatabaseConfig {
        max_connections: 4,
        durability: Some(Durability { data_dir: dir.to_owned(), fsync: false, segment_size: 1 << 20 }),
        ..DatabaseConfig::default()
    }
}

#[test]
fn a_stream_resumed_in_the_middle_of_a_record_sends_it_again() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(snapscale_sql::stack::STATEMENT_THREAD_STACK)
        .enable_all()
        .build()
        .unwrap();
    let (primary_dir, standby_dir) = (data_dir("resume-primary"), data_dir("resume-standby"));
    runtime.block_on(async {
        let primary = Database::open(config(&primary_dir)).unwrap();
        let backup = snapscale_sql::replication::base_backup(&primary).await.unwrap();
        let system_id = snapscale_sql::replication::identify_system(&primary).unwrap().system_id;
        install_base_backup(&standby_dir, &backup.checkpoint, system_id).unwrap();
        let standby_config =
            StandbyConfig { restartpoint_interval: Duration::from_secs(3600), max_wal_size: 1 << 30 };
        let (_standby_db, standby) = Standby::open(config(&standby_dir), standby_config).unwrap();

        let mut conn = Conn::new(Arc::clone(&primary), primary.attach().unwrap(), SessionSettings::default());
        for statement in conn.parse("CREATE TABLE t (x int); INSERT INTO t VALUES (1)").unwrap() {
            conn.execute_parsed(statement).await.unwrap();
        }
        conn.sync().await.unwrap();

        let from = standby.resume_lsn();
        let mut sender = snapscale_sql::replication::wal_sender(&primary, from).unwrap();
        let (lsn, bytes) = sender.next(1 << 20, Duration::from_secs(5)).await.unwrap().expect("WAL to send");
        assert_eq!(lsn, from);
        assert!(bytes.len() > 8, "a record, whole");
        // The first stream ends after a few bytes of a record: they are
        // kept, waiting for the rest.
        standby.receive(lsn, &bytes[..5]).await.unwrap();
        assert_eq!(standby.resume_lsn(), from, "no whole record yet");
        // The next stream starts where the whole records end.
        standby.receive(standby.resume_lsn(), &bytes).await.unwrap();
        assert_eq!(standby.resume_lsn(), lsn + bytes.len() as u64);
    });
    let _ = std::fs::remove_dir_all(primary_dir);
    let _ = std::fs::remove_dir_all(standby_dir);
}
