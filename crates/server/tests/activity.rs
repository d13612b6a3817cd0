//! pg_stat_activity and pg_locks over the wire: what each connection is
//! doing and waiting for, as another connection sees it.

mod wire;

use wire::{start, Msg, Raw};

/// The rows of a one-statement query, as text.
fn rows(msgs: &[Msg]) -> Vec<Vec<Option<String>>> {
    msgs.iter()
        .filter_map(|m| match m {
            Msg::Row(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn sessions_show_their_state_query_xid_and_lock_waits() {
    let server = start(|_| {}).await;
    let (mut holder, _) =
        Raw::connect_with(server.addr, &[("user", "postgres"), ("application_name", "holder")]).await;
    let (mut waiter, _) =
        Raw::connect_with(server.addr, &[("user", "postgres"), ("application_name", "waiter")]).await;
    let (mut watcher, _) = Raw::connect(server.addr).await;
    watcher.query("CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 0)").await;
    holder.query("BEGIN; UPDATE t SET v = 1 WHERE id = 1").await;
    // The waiter's UPDATE queues behind the holder's xid.
    waiter.send_raw(&wire::message(b'Q', b"UPDATE t SET v = 2 WHERE id = 1\0")).await;
    let waiting = |m: &[Msg]| rows(m).iter().any(|r| r[1].as_deref() == Some("waiter") && r[3].is_some());
    let sql =
        "SELECT pid, application_name, state, wait_event_type, wait_event, backend_xid IS NOT NULL, query \
               FROM pg_stat_activity ORDER BY application_name";
    let mut seen = watcher.query(sql).await;
    for _ in 0..200 {
        if waiting(&seen) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        seen = watcher.query(sql).await;
    }
    let all = rows(&seen);
    let find = |app: &str| {
        all.iter().find(|r| r[1].as_deref() == Some(app)).unwrap_or_else(|| panic!("{app}: {all:?}"))
    };
    let h = find("holder");
    assert_eq!(h[2].as_deref(), Some("idle in transaction"), "{h:?}");
    assert_eq!(h[5].as_deref(), Some("t"), "the holder has an xid: {h:?}");
    assert_eq!(h[6].as_deref(), Some("BEGIN; UPDATE t SET v = 1 WHERE id = 1"));
    let w = find("waiter");
    assert_eq!(
        (w[2].as_deref(), w[3].as_deref(), w[4].as_deref()),
        (Some("active"), Some("Lock"), Some("transactionid")),
        "{w:?}"
    );
    assert_eq!(w[6].as_deref(), Some("UPDATE t SET v = 2 WHERE id = 1"));
    let me = all.iter().find(|r| r[6].as_deref() == Some(sql)).expect("the watcher sees itself");
    assert_eq!(me[2].as_deref(), Some("active"));

    // pg_locks: the holder's granted locks, the waiter's ungranted ShareLock
    // on the holder's xid.
    let holder_pid = h[0].clone();
    let waiter_pid = w[0].clone();
    let locks = rows(
        &watcher
            .query(
                "SELECT pid, locktype, relation::regclass, mode, granted, transactionid IS NOT NULL FROM pg_locks \
                 ORDER BY pid, locktype, mode",
            )
            .await,
    );
    let has = |pid: &Option<String>, kind: &str, rel: Option<&str>, mode: &str, granted: &str| {
        locks.iter().any(|r| {
            r[0] == *pid
                && r[1].as_deref() == Some(kind)
                && (rel.is_none() || r[2].as_deref() == rel)
                && r[3].as_deref() == Some(mode)
                && r[4].as_deref() == Some(granted)
        })
    };
    assert!(has(&holder_pid, "relation", Some("t"), "RowExclusiveLock", "t"), "{locks:?}");
    assert!(has(&holder_pid, "transactionid", None, "ExclusiveLock", "t"), "{locks:?}");
    assert!(has(&waiter_pid, "transactionid", None, "ShareLock", "f"), "{locks:?}");

    holder.query("COMMIT").await;
    let done = waiter.read_until_ready().await;
    assert!(done.contains(&Msg::Complete("UPDATE 1".into())), "{done:?}");
    let after = rows(
        &watcher
            .query("SELECT state, wait_event FROM pg_stat_activity WHERE application_name = 'waiter'")
            .await,
    );
    assert_eq!(after, vec![vec![Some("idle".into()), None]]);
    // A closed connection leaves the view.
    drop(holder);
    let mut left = 1;
    for _ in 0..200 {
        left = rows(
            &watcher.query("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'holder'").await,
        )[0][0]
            .as_deref()
            .map_or(1, |n| n.parse().unwrap());
        if left == 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(left, 0);
}
