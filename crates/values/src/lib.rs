//! SQL values and their types: what the engine stores in rows and the SQL
//! layer computes on, with PostgreSQL's text formats (`value.rs` and one
//! module per type family), its binary formats (`wire.rs`), and the error
//! report a statement fails with (`error.rs`).
//!
//! Both the engine (rows, catalog definitions, WAL records) and the SQL
//! layer (binding, evaluation, COPY, the protocol's formats) use them, so
//! they sit below both. See README.md for the types and their formats.

mod array;
mod bytea;
mod datetime;
mod error;
mod float;
mod interval;
pub mod json;
pub mod numeric;
mod oid;
mod uuid;
mod value;
pub mod wire;
mod zone;

pub use array::{format_array, parse_array};
pub use bytea::{format_bytea_escape, format_bytea_hex, parse_bytea};
pub use datetime::{
    civil_date, day_number, format_date, format_timestamp, format_timestamptz, parse_date, parse_timestamp,
    parse_timestamptz, timestamp_in_range,
};
pub use error::{ErrorObject, SqlError};
pub use interval::{format_interval, parse_interval, Interval};
pub use oid::{quote_ident, Reg};
pub use uuid::{format_uuid, parse_uuid};
pub use value::*;
pub use zone::Zone;
