//! SQL values and their types: what the engine stores in rows and the SQL
//! layer computes on, with PostgreSQL's text formats (`value.rs` and one
//! module per type family), its binary formats (`wire.rs`), and the error
//! report a statement fails with (`error.rs`).
//!
//! Both the engine (rows, catalog definitions, WAL records) and the SQL
//! layer (binding, evaluation, COPY, the protocol's formats) use them, so
//! they sit below both. See README.md for the types and their formats.

pub mod array;
mod bytea;
mod calendar;
mod datetime;
mod enum_label;
mod error;
mod float;
pub mod formatting;
mod interval;
pub mod json;
pub mod numeric;
mod oid;
mod record;
mod style;
mod text_size;
mod uuid;
mod value;
pub mod wire;
mod zone;

pub use array::funcs::adjust_typmod as adjust_array_typmod;
pub use array::{format_array, parse_array, too_many_dims, Array, Dim, MAX_DIMS};
pub use bytea::{format_bytea_escape, format_bytea_hex, parse_bytea};
pub use datetime::extract;
pub use datetime::{
    adjust_precision, adjust_typmod, format_interval, parse_interval, parse_interval_qualified,
};
pub use datetime::{
    age, civil_date, current_instant, date_bin, day_number, format_date, format_date_styled,
    format_interval_styled, format_time, format_timestamp, format_timestamp_styled, format_timestamptz,
    format_timestamptz_styled, format_timetz, is_finite_timestamp, parse_date, parse_date_styled,
    parse_interval_styled, parse_time_styled, parse_timestamp, parse_timestamp_styled, parse_timestamptz,
    parse_timestamptz_styled, parse_timetz_styled, round_time, time_from_wire, time_to_wire,
    timestamp_in_range, timestamp_series, timetz_cmp, timetz_from_wire, timetz_to_wire, trunc_interval,
    TimeTz, MAX_TZ_OFFSET_SECS,
};
pub use enum_label::{EnumLabel, OrderKey, UserType};
pub use error::{ErrorData, ErrorObject, InternalQuery, SqlError};
pub use interval::{range as interval_range, Interval};
pub use oid::{quote_ident, Reg};
pub use record::parse_record;
pub use style::{show_datestyle, DateOrder, DateStyle, IntervalStyle, Style};
pub use uuid::{format_uuid, parse_uuid};
pub use value::*;
pub use zone::Zone;
