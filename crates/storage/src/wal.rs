//! Write-ahead hooks: every change is offered to the log before it is
//! applied, so the durability issue can add a real log without restructuring
//! the table code. Commit records are written by the transaction path.

use snapscale_txn::Xid;

use crate::version::Tid;

/// A change about to be applied.
#[derive(Debug)]
pub enum WalRecord<'a, R> {
    /// A new row version.
    Insert { table: u32, xid: Xid, row: &'a R },
    /// `old` is replaced by a new version holding `row`.
    Update { table: u32, xid: Xid, old: Tid, row: &'a R },
    /// `tid` is deleted.
    Delete { table: u32, xid: Xid, tid: Tid },
    /// `tid` is locked (SELECT FOR UPDATE).
    Lock { table: u32, xid: Xid, tid: Tid },
}

/// Where changes are logged.
pub trait Wal<R>: Send + Sync {
    /// Logs `record`; called before the change is applied.
    fn log(&self, record: WalRecord<'_, R>);
}

/// No log: data lives in memory only (until the durability issue).
#[derive(Debug, Default)]
pub struct NoWal;

impl<R> Wal<R> for NoWal {
    fn log(&self, _record: WalRecord<'_, R>) {}
}
