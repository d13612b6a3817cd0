//! What a lock is taken on, and where its state lives.
//!
//! A tag hashes to one of `PARTITIONS` lock-table partitions and, for
//! relations, to one of `STRONG_COUNTERS` strong-lock counters. The hash is
//! fixed (not randomised per process) so a tag's partition is the same in
//! every run, which keeps tests and diagnostics reproducible.

use std::fmt;

/// Number of lock-table partitions (PostgreSQL's NUM_LOCK_PARTITIONS).
#[cfg(not(loom))]
pub(crate) const PARTITIONS: usize = 16;
/// Shrunk under loom: each partition is a modelled mutex; the logic does not
/// depend on the count.
#[cfg(loom)]
pub(crate) const PARTITIONS: usize = 2;

/// Number of strong-lock counters (PostgreSQL's FAST_PATH_STRONG_LOCK_HASH_PARTITIONS).
#[cfg(not(loom))]
pub(crate) const STRONG_COUNTERS: usize = 1024;
/// Shrunk under loom: each counter is a modelled atomic.
#[cfg(loom)]
pub(crate) const STRONG_COUNTERS: usize = 2;

/// The object a lock protects.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LockTag {
    /// A relation, by oid (one database per server, so no database oid).
    Relation(u32),
    /// A transaction id; its owner holds it in `Exclusive` mode until it ends.
    Transaction(u64),
    /// A virtual transaction id: the owner's session slot and local counter.
    VirtualTransaction {
        /// The owner's session slot.
        slot: u32,
        /// The owner's per-session transaction counter.
        local: u64,
    },
}

impl LockTag {
    /// A 64-bit mix of the tag's fields (splitmix64's finaliser), so that
    /// consecutive oids spread over partitions and counters.
    fn hash(self) -> u64 {
        let (kind, a, b): (u64, u64, u64) = match self {
            LockTag::Relation(oid) => (1, oid.into(), 0),
            LockTag::Transaction(xid) => (2, xid, 0),
            LockTag::VirtualTransaction { slot, local } => (3, slot.into(), local),
        };
        let mut z = kind.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ a ^ b.rotate_left(32);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    pub(crate) fn partition(self) -> usize {
        (self.hash() % PARTITIONS as u64) as usize
    }

    /// The strong-lock counter of a relation tag. Only relation locks use the
    /// fast path, so only they have one.
    pub(crate) fn strong_counter(self) -> Option<usize> {
        match self {
            LockTag::Relation(_) => Some(((self.hash() >> 8) % STRONG_COUNTERS as u64) as usize),
            _ => None,
        }
    }
}

impl fmt::Display for LockTag {
    /// PostgreSQL's DescribeLockTag wording (without the database).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LockTag::Relation(oid) => write!(f, "relation {oid}"),
            LockTag::Transaction(xid) => write!(f, "transaction {xid}"),
            LockTag::VirtualTransaction { slot, local } => write!(f, "virtual transaction {slot}/{local}"),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn relations_spread_over_partitions_and_counters() {
        let parts: std::collections::HashSet<_> = (0..64).map(|o| LockTag::Relation(o).partition()).collect();
        assert_eq!(parts.len(), PARTITIONS);
        let counters: std::collections::HashSet<_> =
            (0..64).map(|o| LockTag::Relation(o).strong_counter().unwrap()).collect();
        assert!(counters.len() > 48, "{}", counters.len());
        assert_eq!(LockTag::Transaction(5).strong_counter(), None);
    }
}
