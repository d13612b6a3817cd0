//! The table's unit tests (FREEZE-TRUNCATE's re-read, deterministically).
use snapscale_txn::{EngineConfig, IsolationLevel, SnapshotMode};

use super::*;

/// FREEZE-TRUNCATE's re-read, deterministically: a reader reads a
/// header (not frozen yet), then vacuum freezes the version, the
/// engine's frozen xid passes it, and the status log reuses its page,
/// all before the reader asks the status log. The reader is told the
/// status is gone, reads the header again and finds it frozen.
#[test]
fn a_reader_that_finds_a_status_gone_reads_the_header_again() {
    for mode in SnapshotMode::ALL {
        let e = Engine::new(EngineConfig {
            max_sessions: 4,
            snapshot_mode: mode,
            status_log_pages: 2,
            csn_log_pages: 64,
            log_page_bytes: 64,
            ..EngineConfig::default()
        });
        let t = Table::<u8>::new(e.compute_horizons().oldest_considered_running);
        let mut w = e.attach().unwrap();
        w.begin(IsolationLevel::ReadCommitted).unwrap();
        let tid = t.insert(&mut w, 1).unwrap();
        w.commit().unwrap();
        let per_page = 256;
        for _ in 0..per_page {
            w.begin(IsolationLevel::ReadCommitted).unwrap();
            w.assign_xid().unwrap();
            w.commit().unwrap();
        }
        let mut r = e.attach().unwrap();
        r.begin(IsolationLevel::RepeatableRead).unwrap();
        let snap = r.statement_snapshot().unwrap();
        let reader = r.reader(&snap);
        let v = t.get(tid).unwrap();
        let mut calls = 0;
        let seen = v.decide(|h| {
            calls += 1;
            if calls == 1 {
                assert_ne!(h.xids.xmin, Xid::FROZEN, "{mode}");
                // Everything happens between the header read and the
                // status lookup.
                let mut vac = e.attach().unwrap();
                let options = VacuumOptions { freeze_min_age: 0, remove: true };
                assert_eq!(t.vacuum_with(&mut vac, options, |_| {}).frozen, 1, "{mode}");
                e.advance_frozen_xid(t.frozen_xid());
                for _ in 0..per_page {
                    w.begin(IsolationLevel::ReadCommitted).unwrap();
                    w.assign_xid().unwrap();
                    w.commit().unwrap();
                }
                assert!(e.try_did_commit(v.raw_xmin()).is_err(), "{mode}: the status is gone");
            } else {
                assert_eq!(h.xids.xmin, Xid::FROZEN, "{mode}: read again, frozen");
            }
            Ok(reader.try_sees(&h.xids, &v.hints_for(h))?)
        });
        assert!(seen, "{mode}");
        assert_eq!(calls, 2, "{mode}: one re-read");
    }
}
