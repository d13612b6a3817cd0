//! snapscale's SQL layer: from SQL text to work on MVCC storage.
//!
//! ```text
//!   parse      the pre-parser and sqlparser                  parse.rs
//!   bind       names and types → a logical plan             bind/
//!   plan       access paths, operators → a physical plan    plan/
//!   execute    operators over a transaction                 exec/
//!   xact       the transaction manager: begin → commit      xact.rs
//!   session    a connection: block, settings, statements    session/
//!   guc        the settings a session may SET and SHOW      guc/
//!   database   what connections share; WAL and recovery     database.rs, durable.rs, redo/, catalog.rs
//! ```
//!
//! The invariants and interlocks are in this crate's README.md.

mod activity;
mod advisory;
mod autovacuum;
mod bind;
mod cancel;
mod catalog;
mod catalog_views;
mod copy;
mod database;
mod durable;
mod exec;
mod expr;
pub mod guc;
mod index;
mod limits;
mod lock_syntax;
mod nesting;
mod output;
mod parse;
mod plan;
mod recovery;
mod redo;
mod relcache;
mod sequence;
mod sequence_syntax;
mod session;
pub mod stack;
mod standby;
mod statement;
mod syntax_error;
mod vacuum_state;
mod wal_buffer;
mod wal_retention;
mod wal_senders;
mod xact;

pub use activity::ClientInfo;
pub use cancel::Cancel;
pub use catalog::Row;
pub use database::{Backend, Database, DatabaseConfig, Durability};
pub use snapscale_values::{wire, ErrorObject, SqlError, Zone};
pub use output::Output;
pub use parse::Parsed;
pub use plan::Column;
pub use session::{Conn, Gucs, Prepared};
pub use snapscale_lock::WaitPolicy;
pub use snapscale_storage::log::{Fault as WalFault, Lsn};
pub use snapscale_txn::{IsolationLevel, SnapshotMode};
pub use snapscale_sqlstate::SqlState;
pub use standby::{has_checkpoint, install_base_backup, Standby, StandbyConfig};
pub use snapscale_values::{int_arith, IntOp, SqlType, Value};
pub use vacuum_state::{AutovacuumConfig, AutovacuumWorker, FrozenXid, XidLogState, XidLogs};
pub use wal_senders::{format_lsn, parse_lsn, BaseBackup, Retention, SystemIdentity, WalSender};
pub use xact::Notice;
