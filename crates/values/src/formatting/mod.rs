//! PostgreSQL 15's data type formatting functions: `to_char` for numbers,
//! timestamps and intervals, `to_number`, `to_date` and `to_timestamp`,
//! with PostgreSQL's templates, output and errors byte for byte (C
//! locale: English names, `.` and `,`).
//!
//! Modules: `template` (the pattern parser shared by all of them),
//! `number` (number templates both ways), `datetime` (date/time output),
//! `parse_datetime` (date/time input), `calendar` (Julian days and ISO
//! weeks) and `names` (month and day names, Roman numerals, ordinals).

mod calendar;
mod datetime;
mod names;
mod number;
mod parse_datetime;
mod template;

#[cfg(test)]
mod tests;

pub use datetime::{to_char_interval, to_char_timestamp};
pub use number::{to_char_f32, to_char_f64, to_char_i32, to_char_i64, to_char_numeric, to_number};
pub use parse_datetime::{to_date, to_timestamp, to_timestamp_in};
