//! snapscale's lock manager: PostgreSQL's eight table-level lock modes on
//! relations, transaction-id locks for "wait until that transaction ends",
//! advisory locks held by a transaction or by the session, the fast path
//! for weak relation locks, asynchronous waiting with `lock_timeout`, and
//! deadlock detection.
//!
//! See the crate README for the data structures, the interlocks
//! (FASTPATH-TRANSFER, STRONG-COUNTER, LAZY-VXID, DEADLOCK-CHECK,
//! WAIT-CANCEL, SESSION-HOLDS, XID-WAIT) and the lock-ordering rules.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! use snapscale_lock::{LockConfig, LockManager, LockMode, LockTag};
//!
//! let locks = LockManager::new(LockConfig { max_sessions: 4, ..LockConfig::default() });
//! locks.lock(0, LockTag::Relation(16384), LockMode::AccessShare).await.unwrap();
//! assert!(!locks.try_lock(1, LockTag::Relation(16384), LockMode::AccessExclusive).unwrap());
//! locks.release_all(0);
//! assert!(locks.try_lock(1, LockTag::Relation(16384), LockMode::AccessExclusive).unwrap());
//! # }
//! ```

#![warn(missing_docs, unreachable_pub, missing_debug_implementations)]

mod deadlock;
mod error;
mod manager;
mod mode;
mod sync;
mod table;
mod tag;
mod wait;

#[cfg(all(test, loom))]
mod loom_tests;

pub use error::LockError;
pub use manager::{HeldLock, LockConfig, LockManager, WaitPolicy};
pub use mode::LockMode;
pub use tag::LockTag;
