//! The WAL each connected standby (or base backup in progress) still
//! needs: checkpoints remove segments only below the oldest of them
//! (WAL-RETAIN), as a physical replication slot would while connected.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

use snapscale_storage::log::Lsn;

/// The oldest LSN each connected standby (or base backup) still needs.
#[derive(Debug, Default)]
pub struct Senders {
    needed: Mutex<HashMap<u64, Lsn>>,
    next_id: AtomicU64,
}

impl Senders {
    pub fn register(&self, from: Lsn) -> u64 {
        // Relaxed: only uniqueness matters.
        let id = self.next_id.fetch_add(1, Relaxed);
        self.needed.lock().expect("senders poisoned").insert(id, from);
        id
    }

    pub fn update(&self, id: u64, needed: Lsn) {
        if let Some(n) = self.needed.lock().expect("senders poisoned").get_mut(&id) {
            *n = (*n).max(needed);
        }
    }

    pub fn remove(&self, id: u64) {
        self.needed.lock().expect("senders poisoned").remove(&id);
    }

    /// The oldest LSN some standby still needs.
    pub fn oldest_needed(&self) -> Option<Lsn> {
        self.needed.lock().expect("senders poisoned").values().copied().min()
    }
}
