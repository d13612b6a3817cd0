//! snapscale's database engine: what lies under SQL and is shared by every
//! connection.
//!
//! ```text
//!   database      what connections share; open, attach a backend,   database.rs
//!                 shut down
//!   xact          the transaction manager: begin → commit / abort,   xact/
//!                 relation locks and waits, the commit sequence
//!   catalog       relation definitions as MVCC rows, their storage,  catalog.rs, relcache.rs
//!                 indexes, sequences; a backend's catalog cache      index.rs, sequence.rs
//!   WAL           record formats and redo, a backend's buffer,       redo/, wal_buffer.rs
//!                 checkpoints, crash recovery, what the WAL keeps    durable.rs, recovery.rs,
//!                 for standbys                                       wal_retention.rs
//!   vacuum        freezing, the frozen xid, autovacuum               autovacuum.rs, vacuum_state.rs
//!   a session's   cancel requests, advisory locks, pg_stat_activity, cancel.rs, advisory.rs,
//!   shared state  what the session functions read                    activity.rs, session_view.rs
//! ```
//!
//! Nothing here knows SQL text, the binder, the planner or the executor:
//! the SQL layer (`snapscale-sql`) works through [`Xact`] and
//! [`Database`]. Replication (senders, a standby's replay) is
//! `snapscale-replication`, built on this crate. The invariants and
//! interlocks are in README.md.
//!
//! The types of the layer below that the SQL layer works with (snapshots,
//! tids, lock modes, row-lock modes) are re-exported here, so that the SQL
//! layer depends on the engine alone.

pub mod activity;
pub mod advisory;
pub mod analyze;
pub mod autoanalyze;
pub mod autovacuum;
pub mod cancel;
pub mod catalog;
pub mod database;
pub mod durable;
pub mod errors;
pub mod index;
pub mod missing;
pub mod names;
pub mod recovery;
pub mod redo;
pub mod relcache;
pub mod routines;
pub mod sequence;
pub mod session_view;
pub mod stats;
pub mod triggers;
pub mod user_types;
pub mod vacuum_state;
pub mod wal_buffer;
pub mod wal_retention;
pub mod xact;

pub use activity::{ClientInfo, SslStatus};
pub use cancel::Cancel;
pub use catalog::{Rel, Row};
pub use database::{Backend, Database, DatabaseConfig, Durability};
pub use session_view::SessionView;
pub use snapscale_lock::{HeldLock, LockMode, LockTag, WaitPolicy};
pub use snapscale_storage::log::{format_lsn, parse_lsn, Fault as WalFault, Lsn};
pub use snapscale_storage::{Liveness, Outcome, RowLockMode, StorageError, Tid};
pub use snapscale_txn::{IsolationLevel, Snapshot, SnapshotMode, TxnError, Xid};
pub use vacuum_state::{AutovacuumConfig, AutovacuumWorker, FrozenXid, XidLogState, XidLogs};
pub use xact::{Notice, NoticeQueue, Xact, XactConfig};
