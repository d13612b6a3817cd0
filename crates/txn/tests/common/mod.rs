//! Helpers shared by the integration tests.

// Each test binary compiles this module and uses only some of its helpers.
#![allow(dead_code)]

use std::sync::Arc;

use snapscale_txn::{Engine, EngineConfig, SnapshotMode};

/// An engine in `mode` with reuse verification on.
pub fn engine(mode: SnapshotMode, max_sessions: usize) -> Arc<Engine> {
    Engine::new(EngineConfig {
        max_sessions,
        snapshot_mode: mode,
        status_log_pages: 64,
        csn_log_pages: 64,
        verify_reuse: true,
        ..EngineConfig::default()
    })
}

/// A small deterministic generator (xorshift64*), so stress runs need no crate.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Runs one xid-bearing transaction to completion, so `latest_completed`
/// moves past every xid handed out so far (they stop being "running by the
/// xmax rule" and must be listed in snapshots).
pub fn complete_one(engine: &Arc<Engine>) -> snapscale_txn::Xid {
    let mut s = engine.attach().expect("a free slot");
    s.begin(snapscale_txn::IsolationLevel::ReadCommitted).unwrap();
    let x = s.assign_xid().unwrap();
    s.commit().unwrap();
    x
}
