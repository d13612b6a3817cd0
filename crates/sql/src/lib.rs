//! snapscale's SQL layer. So far: types and values with PostgreSQL's text
//! I/O and errors. The binder, planner, executor and catalog come next
//! (see crates/server/README.md for the order).

mod error;
pub mod types;

pub use error::SqlError;
pub use types::{int_arith, IntOp, SqlType, Value};
