//! snapscale's SQL layer: types and values with PostgreSQL's text I/O, the
//! transactional catalog, the binder, the executor, COPY's text format,
//! and the per-connection session that ties them to a transaction. The
//! invariants are in this crate's README.md.

mod bind;
mod catalog;
mod conn;
mod copy;
mod ddl;
mod durable;
mod error;
mod exec;
mod expr;
mod index;
mod plan;
mod preparse;
pub mod sqlstate;
pub mod stack;
pub mod types;
pub mod wire;

pub use catalog::{Database, Durability};
pub use conn::{Cancel, Conn, Gucs, Notice, Output, Prepared};
pub use error::SqlError;
pub use plan::Column;
pub use preparse::Parsed;
pub use sqlstate::SqlState;
pub use types::{int_arith, IntOp, SqlType, Value};
