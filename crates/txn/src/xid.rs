//! Transaction identifiers and command ids.
//!
//! Xids are 64-bit and never wrap, so they compare as plain integers: none
//! of PostgreSQL's circular arithmetic, epochs or freezing. The three
//! lowest values are reserved as in PostgreSQL.

use std::fmt;

/// A transaction id. `Xid::INVALID` means "no xid" (a transaction that has
/// not written yet, or an empty slot).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Xid(pub u64);

impl Xid {
    /// No transaction.
    pub const INVALID: Xid = Xid(0);
    /// The transaction that created the initial catalog: always committed.
    pub const BOOTSTRAP: Xid = Xid(1);
    /// Marks a version visible to everyone (what freezing would write).
    pub const FROZEN: Xid = Xid(2);
    /// The first xid handed to a real transaction.
    pub const FIRST_NORMAL: Xid = Xid(3);

    /// True for xids handed out to transactions (not one of the reserved values).
    pub fn is_normal(self) -> bool {
        self >= Self::FIRST_NORMAL
    }

    /// True unless this is `Xid::INVALID`.
    pub fn is_valid(self) -> bool {
        self != Self::INVALID
    }

    /// The next xid.
    pub fn next(self) -> Xid {
        Xid(self.0 + 1)
    }

    /// The raw value.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Debug for Xid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "x{}", self.0)
    }
}

impl fmt::Display for Xid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A command id: the per-transaction statement counter. A snapshot's `curcid`
/// is the first command id whose effects it does not see.
pub type CommandId = u32;

/// A virtual transaction id: (session slot, local counter). Every top-level
/// transaction gets one at start without touching shared state; it identifies
/// xid-less transactions for waits and locks.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct VirtualXid {
    /// The proc-array slot of the session.
    pub slot: u32,
    /// The session's transaction counter.
    pub local: u64,
}
