//! Errors of the transaction layer, each with PostgreSQL's SQLSTATE.

use std::fmt;

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
    /// The xid range between the oldest unfinished xid and the next one would
    /// exceed the status log's ring.
    XidSpaceExhausted {
        /// The oldest xid still tracked.
        oldest: Xid,
        /// How many xids the ring describes.
        capacity: u64,
        /// The session slot and xmin of the oldest snapshot, if one holds
        /// the ring back.
        held_by: Option<(u32, Xid)>,
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

impl TxnError {
    /// PostgreSQL's SQLSTATE for this error.
    pub fn sqlstate(&self) -> &'static str {
        match self {
            // too_many_connections: PostgreSQL refuses the connection.
            TxnError::TooManySessions { .. } => "53300",
            // program_limit_exceeded: a hard limit of this build.
            TxnError::XidSpaceExhausted { .. } | TxnError::TooManyCommands => "54000",
            // no_active_sql_transaction.
            TxnError::NoTransaction => "25P01",
            // active_sql_transaction.
            TxnError::AlreadyInTransaction => "25001",
            // savepoint_exception / invalid_savepoint_specification.
            TxnError::NoSubtransaction => "3B001",
            // read_only_sql_transaction.
            TxnError::ReadOnly => "25006",
        }
    }
}

impl fmt::Display for TxnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TxnError::TooManySessions { max } => write!(f, "sorry, too many clients already (max {max})"),
            TxnError::XidSpaceExhausted { oldest, capacity, held_by } => {
                write!(
                    f,
                    "cannot assign a transaction id: {capacity} xids since the oldest tracked one ({oldest}) \
                     are in use"
                )?;
                match held_by {
                    Some((slot, xmin)) => write!(
                        f,
                        "; the oldest snapshot (session slot {slot}, xmin {xmin}) holds them back: end that \
                         transaction"
                    ),
                    None => f.write_str("; end long-running transactions"),
                }
            }
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
