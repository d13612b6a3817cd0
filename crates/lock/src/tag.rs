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
    /// An advisory lock: an application's key, meaningful only to the
    /// application (PostgreSQL's user locks). The fields are what
    /// `pg_locks` shows: a `bigint` key is split into its high and low
    /// halves with `objsubid` 1, a pair of `integer` keys is kept as it is
    /// with `objsubid` 2, so the two key spaces never collide
    /// ([`LockTag::advisory_bigint`], [`LockTag::advisory_pair`]).
    Advisory {
        /// The key's high half, or the first integer.
        classid: u32,
        /// The key's low half, or the second integer.
        objid: u32,
        /// 1 for a `bigint` key, 2 for an `(integer, integer)` key.
        objsubid: u16,
    },
    /// One row version of a relation: the place in line of the sessions
    /// waiting to change or lock it (PostgreSQL's tuple lock). A waiter
    /// holds it while it waits for the row's current locker to end, so
    /// the waiters after it queue here, first come first served, instead
    /// of racing for the row when the locker ends.
    Tuple {
        /// The relation's storage.
        relation: u32,
        /// The version's tid.
        tid: u64,
    },
}

impl LockTag {
    /// The advisory lock on one `bigint` key (PostgreSQL's
    /// `SET_LOCKTAG_INT64`).
    pub fn advisory_bigint(key: i64) -> LockTag {
        let key = key as u64;
        LockTag::Advisory { classid: (key >> 32) as u32, objid: key as u32, objsubid: 1 }
    }

    /// The advisory lock on a pair of `integer` keys (PostgreSQL's
    /// `SET_LOCKTAG_INT32`): a different lock from any `bigint` key's.
    pub fn advisory_pair(key1: i32, key2: i32) -> LockTag {
        LockTag::Advisory { classid: key1 as u32, objid: key2 as u32, objsubid: 2 }
    }

    /// A 64-bit mix of the tag's fields (splitmix64's finaliser), so that
    /// consecutive oids spread over partitions and counters.
    fn hash(self) -> u64 {
        let (kind, a, b): (u64, u64, u64) = match self {
            LockTag::Relation(oid) => (1, oid.into(), 0),
            LockTag::Transaction(xid) => (2, xid, 0),
            LockTag::VirtualTransaction { slot, local } => (3, slot.into(), local),
            LockTag::Advisory { classid, objid, objsubid } => {
                (4 + u64::from(objsubid), (u64::from(classid) << 32) | u64::from(objid), 0)
            }
            LockTag::Tuple { relation, tid } => (7, relation.into(), tid),
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
            // PostgreSQL writes the database first: [db,classid,objid,objsubid].
            LockTag::Advisory { classid, objid, objsubid } => {
                write!(f, "advisory lock [{classid},{objid},{objsubid}]")
            }
            LockTag::Tuple { relation, tid } => write!(f, "tuple ({tid}) of relation {relation}"),
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
        assert_eq!(LockTag::advisory_bigint(5).strong_counter(), None);
    }

    #[test]
    fn advisory_keys_split_as_pg_locks_shows_them() {
        assert_eq!(LockTag::advisory_bigint(5), LockTag::Advisory { classid: 0, objid: 5, objsubid: 1 });
        assert_eq!(
            LockTag::advisory_bigint(-1),
            LockTag::Advisory { classid: u32::MAX, objid: u32::MAX, objsubid: 1 }
        );
        assert_eq!(
            LockTag::advisory_bigint(1 << 32),
            LockTag::Advisory { classid: 1, objid: 0, objsubid: 1 }
        );
        assert_eq!(
            LockTag::advisory_pair(3, -4),
            LockTag::Advisory { classid: 3, objid: 4_294_967_292, objsubid: 2 }
        );
        assert_ne!(LockTag::advisory_bigint(5), LockTag::advisory_pair(0, 5), "two key spaces");
        assert_ne!(LockTag::advisory_bigint(5).hash(), LockTag::advisory_pair(0, 5).hash());
        let parts: std::collections::HashSet<_> =
            (0..64).map(|k| LockTag::advisory_bigint(k).partition()).collect();
        assert_eq!(parts.len(), PARTITIONS, "consecutive keys spread over partitions");
        assert_eq!(LockTag::advisory_pair(1, 2).to_string(), "advisory lock [1,2,2]");
    }
}
