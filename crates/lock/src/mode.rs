//! PostgreSQL's eight table-level lock modes and their conflict table.
//!
//! The table is the one in the PostgreSQL manual, "Explicit Locking",
//! "Table-level Lock Modes" (Table 13.2, conflicting lock modes): each mode
//! lists the modes it conflicts with. It is symmetric, which the tests check.
//!
//! The fast path (see `manager/fastpath.rs`) splits the modes in three groups:
//!
//! * weak (AccessShare, RowShare, RowExclusive): what ordinary DML takes; they
//!   conflict with no weak mode, so they may be recorded in the holder's own
//!   fast-path slots instead of the shared table;
//! * strong (Share, ShareRowExclusive, Exclusive, AccessExclusive): each
//!   conflicts with at least one weak mode (RowExclusive), so acquiring one
//!   bumps the strong-lock counter and transfers fast-path entries first
//!   (FASTPATH-TRANSFER, STRONG-COUNTER);
//! * ShareUpdateExclusive is neither: it conflicts with no weak mode, so it
//!   needs no transfer, but it conflicts with itself and so cannot use the
//!   fast path (whose entries are invisible to other lockers). PostgreSQL's
//!   test is the same: `mode > ShareUpdateExclusiveLock`.

use std::fmt;

/// A table-level lock mode, weakest first (PostgreSQL's numbering minus one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum LockMode {
    /// `SELECT`.
    AccessShare = 0,
    /// `SELECT FOR UPDATE/SHARE`.
    RowShare = 1,
    /// `INSERT`, `UPDATE`, `DELETE`, `MERGE`.
    RowExclusive = 2,
    /// `VACUUM`, `ANALYZE`, `CREATE INDEX CONCURRENTLY`.
    ShareUpdateExclusive = 3,
    /// `CREATE INDEX`; also the mode a transaction-id waiter takes.
    Share = 4,
    /// `CREATE TRIGGER`, some `ALTER TABLE` forms.
    ShareRowExclusive = 5,
    /// `REFRESH MATERIALIZED VIEW CONCURRENTLY`; also a transaction's lock on its own id.
    Exclusive = 6,
    /// `DROP TABLE`, `TRUNCATE`, `LOCK TABLE` without a mode.
    AccessExclusive = 7,
}

/// Bit set of modes, bit `m as u8` for mode `m`.
pub(crate) type ModeMask = u8;

const fn bit(m: LockMode) -> ModeMask {
    1 << m as u8
}

use LockMode::*;

/// `CONFLICTS[m]`: the modes `m` conflicts with, transcribed row by row from
/// the manual's table.
const CONFLICTS: [ModeMask; 8] = [
    // AccessShare
    bit(AccessExclusive),
    // RowShare
    bit(Exclusive) | bit(AccessExclusive),
    // RowExclusive
    bit(Share) | bit(ShareRowExclusive) | bit(Exclusive) | bit(AccessExclusive),
    // ShareUpdateExclusive
    bit(ShareUpdateExclusive) | bit(Share) | bit(ShareRowExclusive) | bit(Exclusive) | bit(AccessExclusive),
    // Share
    bit(RowExclusive)
        | bit(ShareUpdateExclusive)
        | bit(ShareRowExclusive)
        | bit(Exclusive)
        | bit(AccessExclusive),
    // ShareRowExclusive
    bit(RowExclusive)
        | bit(ShareUpdateExclusive)
        | bit(Share)
        | bit(ShareRowExclusive)
        | bit(Exclusive)
        | bit(AccessExclusive),
    // Exclusive
    bit(RowShare)
        | bit(RowExclusive)
        | bit(ShareUpdateExclusive)
        | bit(Share)
        | bit(ShareRowExclusive)
        | bit(Exclusive)
        | bit(AccessExclusive),
    // AccessExclusive
    0xff,
];

const WEAK_MASK: ModeMask = bit(AccessShare) | bit(RowShare) | bit(RowExclusive);

impl LockMode {
    /// All eight modes, weakest first.
    pub const ALL: [LockMode; 8] = [
        AccessShare,
        RowShare,
        RowExclusive,
        ShareUpdateExclusive,
        Share,
        ShareRowExclusive,
        Exclusive,
        AccessExclusive,
    ];

    /// Whether a lock in `self` and a lock in `other` held by two different
    /// sessions on the same object would conflict.
    pub fn conflicts_with(self, other: LockMode) -> bool {
        CONFLICTS[self as usize] & bit(other) != 0
    }

    /// A weak mode may be taken through the fast path: it conflicts with no
    /// weak mode.
    pub fn is_weak(self) -> bool {
        bit(self) & WEAK_MASK != 0
    }

    /// A strong mode conflicts with some weak mode, so its acquirer must bump
    /// the strong-lock counter and transfer fast-path entries first.
    pub fn is_strong(self) -> bool {
        CONFLICTS[self as usize] & WEAK_MASK != 0 && !self.is_weak()
    }

    /// PostgreSQL's name, as used in error details and `pg_locks.mode`.
    pub fn pg_name(self) -> &'static str {
        match self {
            AccessShare => "AccessShareLock",
            RowShare => "RowShareLock",
            RowExclusive => "RowExclusiveLock",
            ShareUpdateExclusive => "ShareUpdateExclusiveLock",
            Share => "ShareLock",
            ShareRowExclusive => "ShareRowExclusiveLock",
            Exclusive => "ExclusiveLock",
            AccessExclusive => "AccessExclusiveLock",
        }
    }

    pub(crate) fn bit(self) -> ModeMask {
        bit(self)
    }

    pub(crate) fn conflict_mask(self) -> ModeMask {
        CONFLICTS[self as usize]
    }
}

impl fmt::Display for LockMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.pg_name())
    }
}

/// Unit tests of the table's shape; `tests/conflicts.rs` checks every pair
/// against the manual's matrix written out independently.
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_is_symmetric() {
        for a in LockMode::ALL {
            for b in LockMode::ALL {
                assert_eq!(a.conflicts_with(b), b.conflicts_with(a), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn weak_and_strong_groups() {
        let weak: Vec<_> = LockMode::ALL.into_iter().filter(|m| m.is_weak()).collect();
        let strong: Vec<_> = LockMode::ALL.into_iter().filter(|m| m.is_strong()).collect();
        assert_eq!(weak, [AccessShare, RowShare, RowExclusive]);
        assert_eq!(strong, [Share, ShareRowExclusive, Exclusive, AccessExclusive]);
        // PostgreSQL's ConflictsWithRelationFastPath: mode > ShareUpdateExclusiveLock.
        for m in LockMode::ALL {
            assert_eq!(m.is_strong(), m > ShareUpdateExclusive);
            for w in [AccessShare, RowShare, RowExclusive] {
                assert!(!m.is_weak() || !m.conflicts_with(w));
            }
        }
    }
}
