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

mod bind;
mod catalog_views;
mod copy;
mod exec;
mod expr;
pub mod guc;
mod limits;
mod output;
mod parse;
mod plan;
mod session;
pub mod stack;
mod statement;

pub use output::Output;
pub use parse::Parsed;
pub use plan::Column;
pub use session::{Conn, Gucs, Prepared};

// What the server works with from the layers below: the database it
// opens and attaches connections to, values and their formats, and the
// one SQLSTATE type. The server depends on this crate alone (and on
// snapscale-replication for the network ends of replication).
pub use snapscale_engine::{
    format_lsn, parse_lsn, AutovacuumConfig, AutovacuumWorker, Backend, Cancel, ClientInfo, Database,
    DatabaseConfig, Durability, FrozenXid, IsolationLevel, Lsn, Notice, Row, SnapshotMode, WaitPolicy,
    WalFault, XidLogState, XidLogs,
};
pub use snapscale_sqlstate::SqlState;
pub use snapscale_values::{int_arith, wire, ErrorObject, IntOp, SqlError, SqlType, Value, Zone};
