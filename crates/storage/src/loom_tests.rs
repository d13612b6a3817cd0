//! Loom models of the row header's lock-free protocol. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p
//! snapscale-storage --release --lib loom_`.

use std::sync::Arc;

use loom::thread;
use snapscale_txn::{Hints, Xid};

use crate::version::{NewXmax, Version, NO_TID};

fn plain(x: u64) -> NewXmax {
    NewXmax::Xid { xid: Xid(x), mode: snapscale_txn::RowLockMode::Update, lock_only: false }
}

/// HINT-XMAX: a reader that decided "xmax aborted" for one deleter never
/// leaves that hint on a newer deleter installed concurrently.
#[test]
fn loom_stale_xmax_hint_never_sticks() {
    loom::model(|| {
        let v = Arc::new(Version::new(Xid(5), 0, ()));
        v.set_xmax(plain(7), 0, NO_TID);
        let writer = {
            let v = Arc::clone(&v);
            thread::spawn(move || v.set_xmax(plain(9), 0, 3))
        };
        let seen = v.header();
        if seen.xids.xmax == Xid(7) {
            let hints = v.hints_for(&seen);
            hints.set_bits(Hints::XMAX_INVALID); // "7 aborted"
            v.keep_hints(&seen, &hints);
        }
        writer.join().unwrap();
        let now = v.header();
        assert_eq!(now.xids.xmax, Xid(9));
        assert_eq!(v.hints_for(&now).get() & Hints::XMAX_INVALID, 0, "stale hint on the new deleter");
    });
}

/// XMAX-PUBLISH: a reader that sees the new xmax sees the `next` link and
/// cmax stored before it.
#[test]
fn loom_new_xmax_comes_with_its_link() {
    loom::model(|| {
        let v = Arc::new(Version::new(Xid(5), 0, ()));
        let writer = {
            let v = Arc::clone(&v);
            thread::spawn(move || v.set_xmax(plain(9), 4, 3))
        };
        let h = v.header();
        if h.xids.xmax == Xid(9) {
            assert_eq!((h.next, h.xids.cmax), (3, 4), "xmax published before its link");
        }
        writer.join().unwrap();
    });
}

/// FREEZE-TRUNCATE: a standby's reader scans a version whose inserter
/// (xid 63, status-log page 0) committed long ago, while a vacuum freezes
/// it and publishes the table's frozen xid, and another thread advances
/// the engine's frozen xid from it, truncating the status log, and then
/// replays xid 128, whose page reuses page 0's memory (XIDMAP-REUSE). A
/// reader that finds the status gone reads the header again and finds it
/// frozen: it sees the row, and nothing panics. Fails when the table's
/// frozen xid is published Relaxed: the truncation then does not follow
/// the mark, and the reader's second read may miss it.
#[test]
fn loom_freeze_then_truncate_vs_reader() {
    use snapscale_txn::{Engine, EngineConfig, IsolationLevel, RunningXacts, SnapshotMode};

    use crate::table::{Table, VacuumOptions};

    // The start-up (65 xids' pages extended, 64 marked aborted) runs before
    // any thread is spawned, but loom counts its accesses as branches too.
    let mut model = loom::model::Builder::new();
    model.max_branches = 20_000;
    model.check(|| {
        // Loom's status-log pages hold 64 xids; four in the ring.
        let engine = Engine::new(EngineConfig {
            max_sessions: 4,
            snapshot_mode: SnapshotMode::KnownAssigned,
            status_log_pages: 4,
            standby: true,
            ..EngineConfig::default()
        });
        // The xid space starts at 63, the last xid of page 0; 64..127
        // finished before the start (pages 0 and 1 are resident).
        let start =
            RunningXacts { next_xid: Xid(128), oldest_running: Xid(63), xids: vec![(Xid(63), Xid::INVALID)] };
        let mut replayer = engine.replayer(&start);
        let table = Arc::new(Table::new(Xid(63)));
        table.replay_insert(Xid(63), 1u8);
        replayer.commit(Xid(63), &[]).unwrap();
        let mut reader = engine.attach().unwrap();
        reader.begin(IsolationLevel::RepeatableRead).unwrap();
        let snapshot = reader.statement_snapshot().unwrap();
        let vacuum = {
            let (engine, table) = (Arc::clone(&engine), Arc::clone(&table));
            thread::spawn(move || {
                let mut s = engine.attach().unwrap();
                let options = VacuumOptions { freeze_min_age: 0, remove: false };
                assert_eq!(table.vacuum_with(&mut s, options, |_| {}).frozen, 1);
            })
        };
        let truncator = {
            let (engine, table) = (Arc::clone(&engine), Arc::clone(&table));
            thread::spawn(move || {
                engine.advance_frozen_xid(table.frozen_xid());
                replayer.observe(Xid(128)).unwrap();
            })
        };
        let rows = table.scan(&reader.reader(&snapshot));
        assert_eq!(rows.len(), 1, "a committed row must stay visible");
        vacuum.join().unwrap();
        truncator.join().unwrap();
    });
}

/// MULTI-PUBLISH: a reader that finds a multixact in a row's xmax finds its
/// members in the log. A FOR KEY SHARE locker holds the row; another
/// session's FOR SHARE creates a multi of both and installs it while a
/// reader asks who holds the row. Fails when `set_xmax` publishes the word
/// Relaxed: the reader then finds the multi's page missing or its words
/// unwritten ("read before it was created", "MULTI-PUBLISH violated").
#[test]
fn loom_multi_members_come_with_its_id() {
    use snapscale_txn::{Engine, EngineConfig, IsolationLevel, RowLockMode, SnapshotMode};

    use crate::table::{Outcome, Table};

    let mut model = loom::model::Builder::new();
    model.max_branches = 20_000;
    model.check(|| {
        let engine = Engine::new(EngineConfig {
            max_sessions: 4,
            snapshot_mode: SnapshotMode::Dense,
            status_log_pages: 4,
            ..EngineConfig::default()
        });
        let table = Arc::new(Table::new(Xid::FIRST_NORMAL));
        let mut k = engine.attach().unwrap();
        k.begin(IsolationLevel::ReadCommitted).unwrap();
        let tid = table.insert(&mut k, 1u8).unwrap();
        k.commit().unwrap();
        k.begin(IsolationLevel::ReadCommitted).unwrap();
        assert_eq!(table.lock_row(&mut k, tid, RowLockMode::KeyShare).unwrap(), Outcome::Ok(tid));
        let mut s = engine.attach().unwrap();
        s.begin(IsolationLevel::ReadCommitted).unwrap();
        s.assign_xid().unwrap();
        let locker = {
            let table = Arc::clone(&table);
            thread::spawn(move || {
                assert_eq!(table.lock_row(&mut s, tid, RowLockMode::Share).unwrap(), Outcome::Ok(tid));
                s
            })
        };
        let (multi, members) = table.holders(&k, tid).unwrap();
        assert_eq!(members.len(), if multi.is_some() { 2 } else { 1 });
        drop(locker.join().unwrap());
    });
}

/// MULTI-TRUNCATE: a reader scans a row whose xmax is a multi of a
/// finished key-share locker and an aborted no-key updater, while vacuum
/// replaces it and publishes the table's oldest multi, and another thread
/// advances the engine's oldest multi from it and creates a multi whose
/// page reuses the old one's (two-word pages, a ring of two). A reader
/// that finds the multi gone reads the header again and finds it
/// replaced: it sees the row, and nothing panics. Fails when the table's
/// oldest multi is published Relaxed ("MULTI-TRUNCATE violated").
#[test]
fn loom_multi_replaced_then_truncated_vs_reader() {
    use snapscale_txn::{
        Engine, EngineConfig, IsolationLevel, Member, MemberStatus, RowLockMode, SnapshotMode,
    };

    use crate::table::{Outcome, Table, VacuumOptions};

    let mut model = loom::model::Builder::new();
    model.max_branches = 20_000;
    model.check(|| {
        let engine = Engine::new(EngineConfig {
            max_sessions: 4,
            snapshot_mode: SnapshotMode::Dense,
            status_log_pages: 4,
            multixact_log_pages: 2,
            ..EngineConfig::default()
        });
        let table = Arc::new(Table::new(Xid::FIRST_NORMAL));
        let mut k = engine.attach().unwrap();
        k.begin(IsolationLevel::ReadCommitted).unwrap();
        let tid = table.insert(&mut k, 1u8).unwrap();
        k.commit().unwrap();
        k.begin(IsolationLevel::ReadCommitted).unwrap();
        table.lock_row(&mut k, tid, RowLockMode::KeyShare).unwrap();
        let mut u = engine.attach().unwrap();
        u.begin(IsolationLevel::ReadCommitted).unwrap();
        assert!(matches!(table.update_as(&mut u, tid, 2, RowLockMode::NoKeyUpdate).unwrap(), Outcome::Ok(_)));
        u.abort();
        k.commit().unwrap();
        // The multi {k, u} sits at positions 1..=3, pages 0 and 1.
        let mut reader = engine.attach().unwrap();
        reader.begin(IsolationLevel::RepeatableRead).unwrap();
        let snapshot = reader.statement_snapshot().unwrap();
        let vacuum = {
            let (engine, table) = (Arc::clone(&engine), Arc::clone(&table));
            thread::spawn(move || {
                let mut s = engine.attach().unwrap();
                let options = VacuumOptions { freeze_min_age: 0, remove: false };
                table.vacuum_with(&mut s, options, |_| {});
            })
        };
        let truncator = {
            let (engine, table) = (Arc::clone(&engine), Arc::clone(&table));
            thread::spawn(move || {
                engine.advance_oldest_multi(table.min_multi());
                // Reuses page 0 if the log was truncated past it.
                let _ = engine.create_multi(&[Member { xid: Xid(9), status: MemberStatus::Update }]);
            })
        };
        let rows = table.scan(&reader.reader(&snapshot));
        assert_eq!(rows, [(tid, 1)], "the row stays visible");
        vacuum.join().unwrap();
        truncator.join().unwrap();
    });
}

/// SLOTS-READ: a reader that learns a tid the way an index scan does
/// (through a Release store made after the push) finds the version in its
/// cell, in a segment it did not see being built.
#[test]
fn loom_slot_found_through_a_published_tid() {
    use crate::table::slots::Slots;
    use snapscale_sync::atomic::{AtomicU64, Ordering::*};
    loom::model(|| {
        let slots = Arc::new(Slots::new());
        let published = Arc::new(AtomicU64::new(u64::MAX));
        let writer = {
            let (slots, published) = (Arc::clone(&slots), Arc::clone(&published));
            thread::spawn(move || {
                let tid = slots.push(Arc::new(7u64));
                published.store(tid, Release);
            })
        };
        let tid = published.load(Acquire);
        if tid != u64::MAX {
            assert_eq!(slots.get(tid).as_deref(), Some(&7));
        }
        writer.join().unwrap();
    });
}

/// SLOTS-READ: writers racing to build the second segment get distinct
/// tids and one segment (the loser frees its own), and
/// lose no version; a concurrent scan sees only versions that were stored.
#[test]
fn loom_racing_pushes_build_one_segment() {
    use crate::table::slots::Slots;
    loom::model(|| {
        let slots = Arc::new(Slots::new());
        // The first segment (two cells under loom) is full.
        slots.push(Arc::new(0u64));
        slots.push(Arc::new(1u64));
        let writers: Vec<_> = (2..4u64)
            .map(|n| {
                let slots = Arc::clone(&slots);
                thread::spawn(move || (slots.push(Arc::new(n)), n))
            })
            .collect();
        for (tid, v) in slots.present() {
            assert!(tid < 4 && *v < 4);
        }
        let mut tids: Vec<_> = writers
            .into_iter()
            .map(|w| {
                let (tid, n) = w.join().unwrap();
                assert_eq!(slots.get(tid).as_deref(), Some(&n));
                tid
            })
            .collect();
        tids.sort();
        assert_eq!(tids, vec![2, 3]);
        assert_eq!(slots.present().len(), 4);
    });
}
