//! snapscale's MVCC storage: tables of row versions, PostgreSQL's update
//! outcomes, pruning, and write-ahead hooks. Visibility decisions come from
//! `snapscale-txn`; the invariants are in this crate's README.md.

pub mod checkpoint;
#[cfg(not(loom))]
pub mod log;
mod table;
mod version;
mod wal;

#[cfg(all(test, loom))]
mod loom_tests;

pub use table::{Liveness, Outcome, StorageError, Table};
pub use version::Tid;
pub use wal::{NoWal, Wal, WalRecord};
