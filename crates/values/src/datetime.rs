//! date, timestamp, timestamp with time zone, time and time with time
//! zone: PostgreSQL's representations, text formats in every DateStyle
//! (`encode`, `decode`), and the calendar arithmetic they share.
//!
//! Dates count days from 2000-01-01 and timestamps microseconds from
//! 2000-01-01 00:00:00, PostgreSQL's epoch; `i32::MIN`/`i32::MAX` and
//! `i64::MIN`/`i64::MAX` are `-infinity` and `infinity`. The unstyled
//! functions here read and print with PostgreSQL's defaults (DateStyle
//! `ISO, MDY`, IntervalStyle `postgres`).

mod age;
mod bin;
mod decode;
mod encode;
pub mod extract;
mod series;
#[cfg(test)]
mod tests;
mod time;
mod trunc;

pub use age::age;
pub use bin::date_bin;
pub use decode::{
    parse_date_styled, parse_interval_qualified, parse_interval_styled, parse_time_styled,
    parse_timestamp_styled, parse_timestamptz_styled, parse_timetz_styled, round_time,
};
pub use encode::{
    format_date_styled, format_interval_styled, format_time, format_timestamp_styled,
    format_timestamptz_styled, format_timetz,
};
pub use series::timestamp_series;
pub use time::{
    time_from_wire, time_to_wire, timetz_cmp, timetz_from_wire, timetz_to_wire, TimeTz, MAX_TZ_OFFSET_SECS,
};
pub use trunc::trunc_interval;

use crate::error::SqlError;
use crate::style::Style;

use super::zone::Zone;

pub use crate::calendar::{civil_date, day_number, is_finite_timestamp, timestamp_in_range};
pub(crate) use crate::calendar::{days_in_month, valid_julian, EPOCH_2000, USECS_PER_DAY};

/// The current instant, microseconds since 2000-01-01 UTC (what the
/// unstyled parsers take `now` and `today` from).
pub fn current_instant() -> i64 {
    let unix = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0);
    unix - EPOCH_2000 * USECS_PER_DAY
}

/// Parses date input with PostgreSQL's default DateStyle (`ISO, MDY`),
/// in UTC.
pub fn parse_date(input: &str) -> Result<i32, SqlError> {
    parse_date_styled(input, &Style::default(), current_instant())
}

/// Parses timestamp input with the default DateStyle. A zone suffix is
/// read and ignored, as PostgreSQL ignores it for timestamp without time
/// zone.
pub fn parse_timestamp(input: &str) -> Result<i64, SqlError> {
    parse_timestamp_styled(input, &Style::default(), current_instant())
}

/// Parses timestamp with time zone input with the default DateStyle: the
/// instant, in microseconds since 2000-01-01 UTC. A zone in the input
/// says where the wall-clock time was read; without one it is `zone`'s,
/// the session's.
pub fn parse_timestamptz(input: &str, zone: Zone) -> Result<i64, SqlError> {
    parse_timestamptz_styled(input, &Style::from(zone), current_instant())
}

/// Formats a date as ISO `YYYY-MM-DD` (` BC` after years before 1 AD).
pub fn format_date(days: i32) -> String {
    format_date_styled(days, &Style::default())
}

/// Formats a timestamp as ISO `YYYY-MM-DD HH:MM:SS[.ffffff]` (trailing
/// zeros of the fraction dropped, as PostgreSQL does).
pub fn format_timestamp(usecs: i64) -> String {
    format_timestamp_styled(usecs, &Style::default())
}

/// Formats an instant as PostgreSQL shows a timestamp with time zone in
/// DateStyle ISO: the wall-clock time in `zone` and that zone's offset
/// then (`+01`, `-03:30`, `-04:56:02` for local mean time).
pub fn format_timestamptz(usecs: i64, zone: Zone) -> String {
    format_timestamptz_styled(usecs, &Style::from(zone))
}

/// Formats an interval in PostgreSQL's default IntervalStyle, `postgres`:
/// `1 year 2 mons 3 days 04:05:06`, `00:00:00` for zero.
pub fn format_interval(v: crate::Interval) -> String {
    format_interval_styled(&v, &Style::default())
}

/// Parses interval input as PostgreSQL does under IntervalStyle
/// `postgres` (see `parse_interval_styled`).
pub fn parse_interval(input: &str) -> Result<crate::Interval, SqlError> {
    parse_interval_styled(input, &Style::default())
}

/// A date/time value held to `precision` fractional digits of a second,
/// as a `timestamp(p)`, `time(p)` or `interval(p)` column or cast holds
/// it: rounded half away from zero (PostgreSQL's AdjustTimestampForTypmod
/// and its kin, which, like PostgreSQL 15, let the last microseconds of
/// the range round up past it); infinities stay.
pub fn adjust_precision(v: crate::Value, precision: u8) -> Result<crate::Value, SqlError> {
    use crate::Value;
    let p = Some(precision);
    Ok(match v {
        Value::Timestamp(t) if is_finite_timestamp(t) => Value::Timestamp(round_time(t, p)),
        Value::TimestampTz(t) if is_finite_timestamp(t) => Value::TimestampTz(round_time(t, p)),
        Value::Time(t) => Value::Time(round_time(t, p)),
        Value::TimeTz(t) => Value::TimeTz(TimeTz { micros: round_time(t.micros, p), zone: t.zone }),
        Value::Interval(i) => Value::Interval(crate::Interval { micros: round_time(i.micros, p), ..i }),
        other => other,
    })
}

/// A value as a column or cast of type modifier `typmod` holds it: a
/// timestamp's or time's precision, an interval's qualifier and precision
/// (`Interval::adjust`).
pub fn adjust_typmod(v: crate::Value, typmod: i32) -> Result<crate::Value, SqlError> {
    match v {
        crate::Value::Interval(i) => Ok(crate::Value::Interval(i.adjust(typmod))),
        v => adjust_precision(v, typmod.clamp(0, 6) as u8),
    }
}
