//! Errors of the transaction layer, each with PostgreSQL's SQLSTATE.

use std::fmt;

use snapscale_sqlstate::SqlState;

use crate::xid::Xid;

/// What can go wrong in the transaction layer.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TxnError {
    /// Every proc-array slot is taken.
    TooManySessions {
        /// The configured capacity.
        max: usize,
    },
    /// The xid range between the oldest xid a log must still describe and
    /// the next one would exceed that log's ring.
    XidSpaceExhausted {
        /// Which log is full.
        log: XidLog,
        /// The oldest xid it still describes.
        oldest: Xid,
        /// How many xids its ring describes.
        capacity: u64,
        /// What keeps it from being truncated.
        held_by: HeldBy,
    },
    /// The multixact log's ring cannot take another multi: the oldest one
    /// a row version may still reference is too far back (vacuum replaces
    /// finished ones; MULTI-TRUNCATE).
    MultiXactSpaceExhausted {
        /// The log's truncation point.
        oldest: crate::MultiXactId,
        /// Positions (members plus one per multi) its ring holds.
        capacity: u64,
    },
    /// The operation needs a transaction and there is none.
    NoTransaction,
    /// `begin` inside a transaction.
    AlreadyInTransaction,
    /// Release or rollback of a subtransaction when none is open.
    NoSubtransaction,
    /// More than 2^32 − 2 commands in one transaction.
    TooManyCommands,
    /// An xid was asked for on a hot standby, whose sessions are read-only.
    ReadOnly,
}

/// One of the logs indexed by xid.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum XidLog {
    /// The commit-status log (2 bits per xid): truncated below the frozen
    /// xid and the horizon.
    Status,
    /// The subtransactions' parent links (PostgreSQL's pg_subtrans):
    /// truncated below the horizon.
    ParentLinks,
    /// The CSN log (`csn` mode): truncated below the horizon.
    Csn,
}

impl XidLog {
    /// Its name in messages.
    pub fn name(self) -> &'static str {
        match self {
            XidLog::Status => "status log",
            XidLog::ParentLinks => "parent-link map",
            XidLog::Csn => "CSN log",
        }
    }
}

/// What keeps a full log from being truncated (the real cause of an
/// [`TxnError::XidSpaceExhausted`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum HeldBy {
    /// The oldest snapshot: the session in `slot` advertises `xmin`, taken
    /// `age` xids ago.
    Snapshot { slot: u32, xmin: Xid, age: u64 },
    /// The oldest running transaction, `age` xids old, in `slot` when the
    /// proc array knows it (`csn` mode keeps xids in the CSN log only).
    Transaction { slot: Option<u32>, xid: Xid, age: u64 },
    /// Row versions older than `frozen` may still need their status: some
    /// table has not been frozen past it yet (`age` xids ago). Vacuum
    /// (autovacuum, or VACUUM (FREEZE)) frees the log.
    Unfrozen { frozen: Xid, age: u64 },
}

impl fmt::Display for HeldBy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeldBy::Snapshot { slot, xmin, age } => write!(
                f,
                "the oldest snapshot (session slot {slot}, xmin {xmin}, {age} xids old) holds them back: end \
                 that transaction"
            ),
            HeldBy::Transaction { slot: Some(slot), xid, age } => write!(
                f,
                "transaction {xid} (session slot {slot}), running for {age} xids, holds them back: end it"
            ),
            HeldBy::Transaction { slot: None, xid, age } => {
                write!(f, "transaction {xid}, running for {age} xids, holds them back: end it")
            }
            HeldBy::Unfrozen { frozen, age } => write!(
                f,
                "rows older than xid {frozen} ({age} xids old) are not frozen yet: run VACUUM (FREEZE)"
            ),
        }
    }
}

impl TxnError {
    /// PostgreSQL's SQLSTATE for this error.
    pub fn sqlstate(&self) -> SqlState {
        match self {
            // PostgreSQL refuses the connection.
            TxnError::TooManySessions { .. } => SqlState::TOO_MANY_CONNECTIONS,
            // A hard limit of this build.
            TxnError::XidSpaceExhausted { .. }
            | TxnError::MultiXactSpaceExhausted { .. }
            | TxnError::TooManyCommands => SqlState::PROGRAM_LIMIT_EXCEEDED,
            TxnError::NoTransaction => SqlState::NO_ACTIVE_SQL_TRANSACTION,
            TxnError::AlreadyInTransaction => SqlState::ACTIVE_SQL_TRANSACTION,
            // savepoint_exception's invalid_savepoint_specification.
            TxnError::NoSubtransaction => SqlState::INVALID_SAVEPOINT_SPECIFICATION,
            TxnError::ReadOnly => SqlState::READ_ONLY_SQL_TRANSACTION,
        }
    }
}

impl fmt::Display for TxnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TxnError::TooManySessions { max } => write!(f, "sorry, too many clients already (max {max})"),
            TxnError::XidSpaceExhausted { log, oldest, capacity, held_by } => write!(
                f,
                "cannot assign a transaction id: the {}'s {capacity} xids since xid {oldest} are in use; \
                 {held_by}",
                log.name()
            ),
            TxnError::MultiXactSpaceExhausted { oldest, capacity } => write!(
                f,
                "cannot create a multixact: the multixact log's {capacity} members since multixact {oldest} \
                 are in use; rows locked by several transactions long ago are not frozen yet"
            ),
            TxnError::NoTransaction => f.write_str("there is no transaction in progress"),
            TxnError::AlreadyInTransaction => f.write_str("there is already a transaction in progress"),
            TxnError::NoSubtransaction => f.write_str("no such savepoint"),
            TxnError::TooManyCommands => {
                f.write_str("cannot have more than 2^32-2 commands in a transaction")
            }
            TxnError::ReadOnly => f.write_str("cannot assign a transaction id during recovery"),
        }
    }
}

impl std::error::Error for TxnError {}
