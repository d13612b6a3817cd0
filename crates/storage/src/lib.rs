//! snapscale's MVCC storage: tables of row versions, PostgreSQL's update
//! outcomes, pruning, the write-ahead log device and checkpoint files.
//! Visibility decisions come from `snapscale-txn`; the formats and
//! invariants are in this crate's README.md. (The file-backed modules are
//! left out of loom builds: loom models the in-memory protocols only.)

#[cfg(not(loom))]
pub mod checkpoint;
#[cfg(not(loom))]
pub mod log;
pub(crate) mod table;
mod version;

#[cfg(all(test, loom))]
mod loom_tests;

pub use snapscale_txn::{MultiXactId, RowLockMode};
pub use table::{Liveness, Outcome, StorageError, Table, VacuumOptions, VacuumStats};
pub use version::Tid;
