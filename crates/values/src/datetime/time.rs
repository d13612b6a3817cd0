//! time and time with time zone: their values, order and binary formats.
//!
//! A time is microseconds since midnight, `0..=86_400_000_000` (24:00:00
//! is a time). A timetz adds the zone as seconds *west* of UTC, as
//! PostgreSQL stores and sends it (the text form prints it east:
//! `10:00:00-08` has zone 28800).

use std::cmp::Ordering;

use snapscale_sqlstate::SqlState;

use super::USECS_PER_DAY;
use crate::error::SqlError;

/// The largest zone offset a timetz holds: 15:59:59.
pub const MAX_TZ_OFFSET_SECS: i32 = 16 * 3600 - 1;

/// A time with time zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimeTz {
    /// Microseconds since midnight, local to the zone.
    pub micros: i64,
    /// Seconds west of UTC (PostgreSQL's sign).
    pub zone: i32,
}

impl TimeTz {
    /// The same instant of the day on the clock of a zone `east` seconds
    /// east of UTC (`timetz AT TIME ZONE`), wrapped into the day.
    pub fn in_zone(self, east: i64) -> TimeTz {
        let west = -east;
        let micros = (i64::from(self.zone) - west)
            .saturating_mul(1_000_000)
            .saturating_add(self.micros)
            .rem_euclid(USECS_PER_DAY);
        TimeTz { micros, zone: west as i32 }
    }
}

impl PartialOrd for TimeTz {
    fn partial_cmp(&self, other: &TimeTz) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// PostgreSQL's order: by the UTC time, then by zone.
impl Ord for TimeTz {
    fn cmp(&self, other: &TimeTz) -> Ordering {
        timetz_cmp(*self, *other)
    }
}

/// Orders two timetz values as PostgreSQL does: by the time in UTC, ties
/// by zone (so `10:00+01` and `09:00+00` are not equal).
pub fn timetz_cmp(a: TimeTz, b: TimeTz) -> Ordering {
    let ua = a.micros + i64::from(a.zone) * 1_000_000;
    let ub = b.micros + i64::from(b.zone) * 1_000_000;
    ua.cmp(&ub).then(a.zone.cmp(&b.zone))
}

fn time_out_of_range() -> SqlError {
    SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "time out of range")
}

/// A time's binary format: microseconds, big-endian i64.
pub fn time_to_wire(micros: i64) -> [u8; 8] {
    micros.to_be_bytes()
}

/// Reads a time's binary format; 22008 `time out of range` outside
/// 00:00:00..=24:00:00.
pub fn time_from_wire(bytes: &[u8]) -> Result<i64, SqlError> {
    let b: [u8; 8] = bytes.try_into().map_err(|_| {
        SqlError::new(SqlState::INVALID_BINARY_REPRESENTATION, "incorrect binary data format")
    })?;
    let t = i64::from_be_bytes(b);
    if !(0..=USECS_PER_DAY).contains(&t) {
        return Err(time_out_of_range());
    }
    Ok(t)
}

/// A timetz's binary format: microseconds (i64) and the zone in seconds
/// west (i32), big-endian.
pub fn timetz_to_wire(t: TimeTz) -> [u8; 12] {
    let mut out = [0u8; 12];
    out[..8].copy_from_slice(&t.micros.to_be_bytes());
    out[8..].copy_from_slice(&t.zone.to_be_bytes());
    out
}

/// Reads a timetz's binary format, with PostgreSQL's range checks.
pub fn timetz_from_wire(bytes: &[u8]) -> Result<TimeTz, SqlError> {
    if bytes.len() != 12 {
        return Err(SqlError::new(SqlState::INVALID_BINARY_REPRESENTATION, "incorrect binary data format"));
    }
    let micros = i64::from_be_bytes(bytes[..8].try_into().expect("8 bytes"));
    if !(0..=USECS_PER_DAY).contains(&micros) {
        return Err(time_out_of_range());
    }
    let zone = i32::from_be_bytes(bytes[8..].try_into().expect("4 bytes"));
    if !(-MAX_TZ_OFFSET_SECS..=MAX_TZ_OFFSET_SECS).contains(&zone) {
        return Err(SqlError::new(
            SqlState::INVALID_TIME_ZONE_DISPLACEMENT_VALUE,
            "time zone displacement out of range",
        ));
    }
    Ok(TimeTz { micros, zone })
}
