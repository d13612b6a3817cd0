//! date_bin(stride, source, origin): the start of the stride-wide bin,
//! counted from `origin`, that holds `source`. Timestamps and instants
//! bin alike: the bins are fixed lengths of elapsed time, which is why a
//! stride may not hold months or years.

use snapscale_sqlstate::SqlState;

use crate::calendar::{is_finite_timestamp, timestamp_in_range, USECS_PER_DAY};
use crate::error::SqlError;
use crate::interval::Interval;

fn range_error(message: &str) -> SqlError {
    SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, message)
}

/// `date_bin(stride, source, origin)` on microseconds since 2000-01-01
/// (timestamp or timestamptz alike), with PostgreSQL's errors.
pub fn date_bin(stride: Interval, source: i64, origin: i64) -> Result<i64, SqlError> {
    if !is_finite_timestamp(source) {
        return Ok(source);
    }
    if !is_finite_timestamp(origin) {
        return Err(range_error("origin out of range"));
    }
    if stride.months != 0 {
        return Err(SqlError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            "timestamps cannot be binned into intervals containing months or years",
        ));
    }
    let width = i64::from(stride.days)
        .checked_mul(USECS_PER_DAY)
        .and_then(|d| d.checked_add(stride.micros))
        .ok_or_else(|| range_error("interval out of range"))?;
    if width <= 0 {
        return Err(range_error("stride must be greater than zero"));
    }
    let diff = source.checked_sub(origin).ok_or_else(|| range_error("interval out of range"))?;
    // Bins run back from the origin too: a source before it falls in the
    // bin below, not the one towards the origin.
    let start = origin + (diff - diff % width);
    if diff % width < 0 {
        return start
            .checked_sub(width)
            .filter(|t| timestamp_in_range(*t))
            .ok_or_else(|| range_error("timestamp out of range"));
    }
    Ok(start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{format_timestamp, parse_interval, parse_timestamp};

    fn bin(stride: &str, source: &str, origin: &str) -> Result<String, SqlError> {
        let t = |s: &str| parse_timestamp(s).unwrap();
        date_bin(parse_interval(stride).unwrap(), t(source), t(origin)).map(format_timestamp)
    }

    // Each expected value is PostgreSQL 15's answer.
    #[test]
    fn bins_from_the_origin() {
        for (stride, source, origin, want) in [
            ("15 minutes", "2020-02-11 15:44:17", "2001-01-01", "2020-02-11 15:30:00"),
            ("15 minutes", "2020-02-11 15:44:17", "2001-01-01 00:02:30", "2020-02-11 15:32:30"),
            ("1 day", "2020-02-11 15:44:17", "2020-02-12", "2020-02-11 00:00:00"),
            ("7 days", "1999-12-25", "2000-01-01 12:00", "1999-12-18 12:00:00"),
            ("1 hour 30 min", "2020-01-01 00:00", "2020-01-01 00:00", "2020-01-01 00:00:00"),
        ] {
            assert_eq!(bin(stride, source, origin).unwrap(), want, "date_bin({stride}, {source}, {origin})");
        }
    }

    #[test]
    fn refuses_what_postgresql_refuses() {
        let err = |stride: &str| bin(stride, "2020-01-01", "2000-01-01").unwrap_err();
        assert_eq!(err("1 month").code, SqlState::FEATURE_NOT_SUPPORTED);
        assert_eq!(err("0 days").message, "stride must be greater than zero");
        assert_eq!(err("-1 hour").message, "stride must be greater than zero");
        assert_eq!(err("2147483647 days").message, "interval out of range");
        let week = parse_interval("7 days").unwrap();
        assert_eq!(date_bin(week, i64::MAX, 0).unwrap(), i64::MAX);
        assert_eq!(date_bin(week, 0, i64::MIN).unwrap_err().message, "origin out of range");
    }
}
