//! PRUNE: memory stays flat under updates. A committer that notices many
//! dead versions in a heap prunes it; VACUUM prunes on demand.

use std::sync::Arc;

use snapscale_sql::guc::SessionSettings;
use snapscale_sql::{Conn, Database, DatabaseConfig, SnapshotMode, Value};

async fn run(conn: &mut Conn<SessionSettings>, sql: &str) {
    for statement in conn.parse(sql).unwrap() {
        conn.execute_parsed(statement).await.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
    conn.sync().await.unwrap();
}

#[test]
fn pruning_keeps_memory_flat_under_updates() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .thread_stack_size(snapscale_sql::stack::STATEMENT_THREAD_STACK)
        .enable_all()
        .build()
        .unwrap();
    for mode in SnapshotMode::ALL {
        let db = Database::in_memory(DatabaseConfig { snapshot_mode: mode, ..DatabaseConfig::default() });
        let mut c = Conn::new(Arc::clone(&db), db.attach().unwrap(), SessionSettings::default());
        runtime.block_on(async {
            run(
                &mut c,
                "CREATE TABLE hot (id int PRIMARY KEY, n int); INSERT INTO hot VALUES (1, 0), (2, 0), (3, 0)",
            )
            .await;
            let update = c.prepare_sql("UPDATE hot SET n = n + 1 WHERE id = $1", &[]).unwrap();
            for i in 0..4000 {
                c.execute(&update, &[Value::Int(i % 3 + 1)]).await.unwrap();
                c.sync().await.unwrap();
            }
            let (slots, present) = db.version_counts();
            assert!(
                slots < 2500 && present < 2500,
                "{mode}: 4000 updates left {slots} slots, {present} versions"
            );
            run(&mut c, "VACUUM hot").await;
            let (_, present) = db.version_counts();
            assert!(present < 50, "{mode}: VACUUM left {present} versions of 3 rows");
        });
    }
}
