//! snapscale's SQL layer: from SQL text to work on the database.
//!
//! ```text
//!   parse      the pre-parser, its guard ahead of sqlparser,   parse/
//!              and sqlparser
//!   bind       names and types → a logical plan               bind/
//!   plan       access paths, operators → a physical plan      plan/
//!   execute    operators over a transaction                   exec/, expr/
//!   session    a connection: block, settings, statements      session/
//!   guc        every setting: the server's and a session's    guc/
//! ```
//!
//! What lies under SQL (the database, the transaction manager, the
//! catalog, the WAL) is `snapscale-engine`'s; this crate reaches it, and
//! the layers below, through that crate. The invariants and interlocks are
//! in this crate's README.md.

mod bind;
mod catalog_views;
mod copy;
mod exec;
mod explain;
mod expr;
pub mod guc;
mod limits;
mod output;
mod parse;
mod pl_exec;
mod plan;
mod plpgsql;
mod portals;
mod session;
mod setting_kinds;
pub mod stack;
mod statement;

pub use output::Output;

/// Makes the engine compute index expressions and predicates with this
/// crate's SQL: call it before opening a database whose indexes may have
/// them (a standby's replay computes keys before any session exists).
/// Sessions call it too; only the first call installs.
pub fn install_index_keys() {
    bind::index_keys::install();
}
pub use parse::Parsed;
pub use plan::Column;
pub use session::{Conn, Gucs, Prepared};

// What the server works with from the layers below: the database it
// opens and attaches connections to, values and their formats, the one
// SQLSTATE type, and replication, whose network ends are the server's.
// The server depends on this crate alone.
pub use snapscale_engine::{
    format_lsn, parse_lsn, AutovacuumConfig, AutovacuumWorker, Backend, Cancel, ClientInfo, Database,
    DatabaseConfig, Durability, FrozenXid, IsolationLevel, Lsn, Notice, Row, SnapshotMode, SslStatus,
    WaitPolicy, WalFault, XidLogState, XidLogs,
};
pub use snapscale_replication as replication;
pub use snapscale_sqlstate::SqlState;
pub use snapscale_values::{int_arith, wire, ErrorObject, IntOp, SqlError, SqlType, Style, Value, Zone};
