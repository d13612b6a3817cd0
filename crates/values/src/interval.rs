//! interval: months, days and microseconds kept apart, as PostgreSQL keeps
//! them, because neither a month nor a day has a fixed length (a day
//! across a daylight-saving change lasts 23 or 25 hours).
//!
//! Comparison treats a month as 30 days and a day as 24 hours (so
//! `'1 mon' = '30 days'` and `'1 day' = '24 hours'`), as PostgreSQL's
//! interval_cmp_value does. Text input and output are in
//! `datetime::decode` and `datetime::encode`, under every IntervalStyle.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use snapscale_sqlstate::SqlState;

use crate::calendar::{civil_date, day_number, days_in_month, is_finite_timestamp};
use crate::error::SqlError;
use crate::zone::Zone;

const USECS_PER_SEC: i64 = 1_000_000;
const USECS_PER_DAY: i64 = 86_400 * USECS_PER_SEC;
const DAYS_PER_MONTH: i32 = 30;

/// An interval value, PostgreSQL's layout.
#[derive(Clone, Copy, Debug, Default)]
pub struct Interval {
    /// Months (a year is 12).
    pub months: i32,
    /// Whole days.
    pub days: i32,
    /// The time part, in microseconds (may exceed a day: `'25 hours'`).
    pub micros: i64,
}

/// Equal when the spans are (interval_cmp_value): `'1 mon' = '30 days'`.
impl PartialEq for Interval {
    fn eq(&self, other: &Interval) -> bool {
        self.cmp_value() == other.cmp_value()
    }
}

impl Eq for Interval {}

impl PartialOrd for Interval {
    fn partial_cmp(&self, other: &Interval) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Interval {
    fn cmp(&self, other: &Interval) -> Ordering {
        self.cmp_value().cmp(&other.cmp_value())
    }
}

/// Hashes the span, so equal intervals hash alike.
impl Hash for Interval {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.cmp_value().hash(state);
    }
}

fn out_of_range() -> SqlError {
    SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "interval out of range")
}

fn timestamp_out_of_range() -> SqlError {
    SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "timestamp out of range")
}

impl Interval {
    /// An interval of days and microseconds.
    pub fn new(months: i32, days: i32, micros: i64) -> Interval {
        Interval { months, days, micros }
    }

    /// `make_interval(years, months, weeks, days, hours, mins, secs)`:
    /// seconds rounded to the microsecond, half to even. PostgreSQL 15
    /// checks only that the seconds are finite; the rest wraps around as
    /// its integer arithmetic does, and seconds past the time's range
    /// become its lowest value, as its conversion does.
    pub fn make(fields: [i32; 6], secs: f64) -> Result<Interval, SqlError> {
        let [years, months, weeks, days, hours, mins] = fields;
        if !secs.is_finite() {
            return Err(out_of_range());
        }
        let micros = (secs * 1e6).round_ties_even();
        let micros = if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&micros) {
            micros as i64
        } else {
            i64::MIN
        };
        Ok(Interval {
            months: years.wrapping_mul(12).wrapping_add(months),
            days: weeks.wrapping_mul(7).wrapping_add(days),
            micros: (i64::from(hours) * 3_600_000_000)
                .wrapping_add(i64::from(mins) * 60_000_000)
                .wrapping_add(micros),
        })
    }

    /// The span in microseconds with a month as 30 days and a day as 24
    /// hours: what PostgreSQL compares, sorts and hashes.
    pub fn cmp_value(self) -> i128 {
        let days = i128::from(self.months) * 30 + i128::from(self.days);
        days * i128::from(USECS_PER_DAY) + i128::from(self.micros)
    }

    /// The same as [`Interval::cmp_value`] (kept for callers of the
    /// month-less interval).
    pub fn total_micros(self) -> i128 {
        self.cmp_value()
    }

    /// Orders as PostgreSQL does: by [`Interval::cmp_value`].
    pub fn cmp_span(self, other: Interval) -> Ordering {
        self.cmp_value().cmp(&other.cmp_value())
    }

    /// The difference of two timestamps, whole days split out as
    /// PostgreSQL's `timestamp - timestamp` does (hours below 24, no
    /// months). Infinite timestamps cannot be subtracted.
    pub fn between(later: i64, earlier: i64) -> Result<Interval, SqlError> {
        if !is_finite_timestamp(later) || !is_finite_timestamp(earlier) {
            return Err(SqlError::new(
                SqlState::DATETIME_FIELD_OVERFLOW,
                "cannot subtract infinite timestamps",
            ));
        }
        // PostgreSQL subtracts without an overflow check.
        let diff = later.wrapping_sub(earlier);
        Interval { months: 0, days: 0, micros: diff }.justify_hours()
    }

    /// `self + other` (field by field), or `self - other` if `negate`.
    pub fn add(self, other: Interval, negate: bool) -> Result<Interval, SqlError> {
        let other = if negate { other.negate()? } else { other };
        Ok(Interval {
            months: self.months.checked_add(other.months).ok_or_else(out_of_range)?,
            days: self.days.checked_add(other.days).ok_or_else(out_of_range)?,
            micros: self.micros.checked_add(other.micros).ok_or_else(out_of_range)?,
        })
    }

    /// `-self` (interval_um).
    pub fn negate(self) -> Result<Interval, SqlError> {
        Ok(Interval {
            months: self.months.checked_neg().ok_or_else(out_of_range)?,
            days: self.days.checked_neg().ok_or_else(out_of_range)?,
            micros: self.micros.checked_neg().ok_or_else(out_of_range)?,
        })
    }

    /// A timestamp moved by this interval (backwards if `negate`), as
    /// PostgreSQL's timestamp + interval: the months first (the day of the
    /// month kept, or the month's last day if it is shorter), then the
    /// days, then the time. Infinite timestamps stay as they are.
    pub fn shift(self, timestamp: i64, negate: bool) -> Result<i64, SqlError> {
        self.shift_with(timestamp, negate, None)
    }

    /// Adds (or with `negate` subtracts) the interval to an instant whose
    /// wall clock runs in `zone`, as PostgreSQL's timestamptz + interval:
    /// months and days move the wall clock (a day across a daylight-saving
    /// change keeps the time of day), the time part is elapsed time.
    pub fn shift_in(self, instant: i64, negate: bool, zone: Zone) -> Result<i64, SqlError> {
        self.shift_with(instant, negate, Some(zone))
    }

    fn shift_with(self, t: i64, negate: bool, zone: Option<Zone>) -> Result<i64, SqlError> {
        if !is_finite_timestamp(t) {
            return Ok(t);
        }
        let span = if negate {
            // PostgreSQL negates each field without a check.
            Interval {
                months: self.months.wrapping_neg(),
                days: self.days.wrapping_neg(),
                micros: self.micros.wrapping_neg(),
            }
        } else {
            self
        };
        let to_local = |t: i64| zone.map_or(t, |z| z.local(t));
        let from_local = |l: i64| zone.map_or(l, |z| z.to_utc(l));
        let mut t = t;
        if span.months != 0 {
            let local = to_local(t);
            let (days, time) = (local.div_euclid(USECS_PER_DAY), local.rem_euclid(USECS_PER_DAY));
            let (y, m, d) = civil_date(days);
            let month = i64::from(m) + i64::from(span.months);
            if month > i64::from(i32::MAX) || month < i64::from(i32::MIN) {
                return Err(timestamp_out_of_range());
            }
            let y = y + (month - 1).div_euclid(12);
            let m = (month - 1).rem_euclid(12) as u32 + 1;
            let d = d.min(days_in_month(y, m));
            let local = tm_to_timestamp(y, m, d, time)?;
            t = from_local(local);
        }
        if span.days != 0 {
            let local = to_local(t);
            let (days, time) = (local.div_euclid(USECS_PER_DAY), local.rem_euclid(USECS_PER_DAY));
            let julian = days + 2_451_545 + i64::from(span.days);
            let min_julian = if zone.is_some() { -1 } else { 0 };
            if julian < min_julian || julian > i64::from(i32::MAX) {
                return Err(timestamp_out_of_range());
            }
            let (y, m, d) = civil_date(julian - 2_451_545);
            t = from_local(tm_to_timestamp(y, m, d, time)?);
        }
        let t = t.checked_add(span.micros).ok_or_else(timestamp_out_of_range)?;
        if !crate::calendar::timestamp_in_range(t) {
            return Err(timestamp_out_of_range());
        }
        Ok(t)
    }

    /// justify_hours: whole days out of the time part into the days, the
    /// signs of days and time made to agree.
    pub fn justify_hours(self) -> Result<Interval, SqlError> {
        let mut r = self;
        let whole = r.micros / USECS_PER_DAY;
        r.micros -= whole * USECS_PER_DAY;
        r.days = i32::try_from(i64::from(r.days) + whole).map_err(|_| out_of_range())?;
        if r.days > 0 && r.micros < 0 {
            r.micros += USECS_PER_DAY;
            r.days -= 1;
        } else if r.days < 0 && r.micros > 0 {
            r.micros -= USECS_PER_DAY;
            r.days += 1;
        }
        Ok(r)
    }

    /// justify_days: whole 30-day months out of the days into the months,
    /// the signs of months and days made to agree.
    pub fn justify_days(self) -> Result<Interval, SqlError> {
        let mut r = self;
        let whole = r.days / DAYS_PER_MONTH;
        r.days -= whole * DAYS_PER_MONTH;
        r.months = r.months.checked_add(whole).ok_or_else(out_of_range)?;
        if r.months > 0 && r.days < 0 {
            r.days += DAYS_PER_MONTH;
            r.months -= 1;
        } else if r.months < 0 && r.days > 0 {
            r.days -= DAYS_PER_MONTH;
            r.months += 1;
        }
        Ok(r)
    }

    /// justify_interval: both of the above, every field given one sign.
    pub fn justify_interval(self) -> Result<Interval, SqlError> {
        let mut r = self;
        if (r.days > 0 && r.micros > 0) || (r.days < 0 && r.micros < 0) {
            let whole = r.days / DAYS_PER_MONTH;
            r.days -= whole * DAYS_PER_MONTH;
            r.months = r.months.checked_add(whole).ok_or_else(out_of_range)?;
        }
        let whole_days = r.micros / USECS_PER_DAY;
        r.micros -= whole_days * USECS_PER_DAY;
        // |days| < 30 here, or days and time differ in sign: no overflow
        // beyond i64, but it may leave i32 (PostgreSQL wraps; we refuse).
        let days = i64::from(r.days) + whole_days;
        let whole = days / i64::from(DAYS_PER_MONTH);
        let days = days - whole * i64::from(DAYS_PER_MONTH);
        r.days = days as i32;
        r.months = i32::try_from(i64::from(r.months) + whole).map_err(|_| out_of_range())?;
        if r.months > 0 && (r.days < 0 || (r.days == 0 && r.micros < 0)) {
            r.days += DAYS_PER_MONTH;
            r.months -= 1;
        } else if r.months < 0 && (r.days > 0 || (r.days == 0 && r.micros > 0)) {
            r.days -= DAYS_PER_MONTH;
            r.months += 1;
        }
        if r.days > 0 && r.micros < 0 {
            r.micros += USECS_PER_DAY;
            r.days -= 1;
        } else if r.days < 0 && r.micros > 0 {
            r.micros -= USECS_PER_DAY;
            r.days += 1;
        }
        Ok(r)
    }

    /// `interval * factor` (interval_mul): fractions of months cascade
    /// into days (30 to a month) and fractions of days into the time.
    pub fn mul_f64(self, factor: f64) -> Result<Interval, SqlError> {
        self.scale(factor, |x, f| x * f)
    }

    /// `interval / factor` (interval_div), 22012 for zero.
    pub fn div_f64(self, factor: f64) -> Result<Interval, SqlError> {
        if factor == 0.0 {
            return Err(SqlError::division_by_zero());
        }
        self.scale(factor, |x, f| x / f)
    }

    fn scale(self, factor: f64, op: impl Fn(f64, f64) -> f64) -> Result<Interval, SqlError> {
        let fits_i32 = |x: f64| (-2_147_483_648.0..2_147_483_648.0).contains(&x);
        let round = |x: f64| (x * 1e6).round_ties_even() / 1e6;
        let month_product = op(f64::from(self.months), factor);
        if !fits_i32(month_product) {
            return Err(out_of_range());
        }
        let months = month_product as i32;
        let day_product = op(f64::from(self.days), factor);
        if !fits_i32(day_product) {
            return Err(out_of_range());
        }
        let mut days = day_product as i32;
        let month_remainder_days = round((month_product - f64::from(months)) * 30.0);
        let mut sec_remainder = round(
            (day_product - f64::from(days) + month_remainder_days - f64::from(month_remainder_days as i32))
                * 86_400.0,
        );
        if sec_remainder.abs() >= 86_400.0 {
            let whole = (sec_remainder / 86_400.0) as i32;
            days = days.checked_add(whole).ok_or_else(out_of_range)?;
            sec_remainder -= f64::from(whole) * 86_400.0;
        }
        days = days.checked_add(month_remainder_days as i32).ok_or_else(out_of_range)?;
        let micros = (op(self.micros as f64, factor) + sec_remainder * 1e6).round_ties_even();
        if micros.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&micros) {
            return Err(out_of_range());
        }
        Ok(Interval { months, days, micros: micros as i64 })
    }
}

/// Local date and time of day as a timestamp, with PostgreSQL's range
/// checks (tm2timestamp).
fn tm_to_timestamp(y: i64, m: u32, d: u32, time: i64) -> Result<i64, SqlError> {
    if !crate::calendar::valid_julian(y, m) {
        return Err(timestamp_out_of_range());
    }
    let t = day_number(y, m, d)
        .checked_mul(USECS_PER_DAY)
        .and_then(|t| t.checked_add(time))
        .ok_or_else(timestamp_out_of_range)?;
    if !crate::calendar::timestamp_in_range(t) {
        return Err(timestamp_out_of_range());
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{format_interval, parse_interval};

    fn iv(s: &str) -> Interval {
        parse_interval(s).unwrap()
    }

    #[test]
    fn compares_by_span() {
        assert_eq!(iv("1 mon"), iv("30 days"));
        assert_eq!(iv("1 day"), iv("24 hours"));
        assert!(iv("1 year") > iv("359 days"));
        assert_eq!(iv("1 day").cmp_span(iv("24 hours")), Ordering::Equal);
        let d = Interval::between(USECS_PER_DAY + 3_600_000_000, 0).unwrap();
        assert_eq!((d.months, d.days, d.micros), (0, 1, 3_600_000_000));
        assert_eq!(format_interval(Interval::between(0, 1_500_000).unwrap()), "-00:00:01.5");
    }

    #[test]
    fn justify_and_scale() {
        let j = |s: &str, f: fn(Interval) -> Result<Interval, SqlError>| format_interval(f(iv(s)).unwrap());
        assert_eq!(j("1 mon -1 hour", Interval::justify_interval), "29 days 23:00:00");
        assert_eq!(
            j("6 months 3 days 52 hours 3 minutes 2 seconds", Interval::justify_hours),
            "6 mons 5 days 04:03:02"
        );
        assert_eq!(j("35 days", Interval::justify_days), "1 mon 5 days");
        assert_eq!(format_interval(iv("1 mon").mul_f64(0.5).unwrap()), "15 days");
        assert_eq!(format_interval(iv("1 day").div_f64(3.0).unwrap()), "08:00:00");
        assert_eq!(format_interval(iv("1 mon 1 day").mul_f64(1.5).unwrap()), "1 mon 16 days 12:00:00");
        assert_eq!(iv("1 day").div_f64(0.0).unwrap_err().code, SqlState::DIVISION_BY_ZERO);
    }

    // Each expected value is PostgreSQL 15's answer.
    #[test]
    fn make_wraps_as_postgresql() {
        let make = |f: [i32; 6], s: f64| format_interval(Interval::make(f, s).unwrap());
        assert_eq!(make([1, 2, 3, 4, 5, 6], 7.5), "1 year 2 mons 25 days 05:06:07.5");
        assert_eq!(make([0, 0, 0, 0, 0, 0], 1.0000005), "00:00:01.000001");
        assert_eq!(make([i32::MAX, 0, 0, 0, 0, 0], 0.0), "-1 years");
        assert_eq!(make([0, 0, 0, 0, 0, 0], 1e300), "-2562047788:00:54.775808");
        assert_eq!(make([0, 0, 0, 0, i32::MAX, i32::MAX], 9e12), "-440820534:54:49.551616");
        assert_eq!(Interval::make([0; 6], f64::INFINITY).unwrap_err().message, "interval out of range");
    }

    #[test]
    fn shifts_months_first() {
        let ts = crate::parse_timestamp("2000-01-31 10:00").unwrap();
        let t = iv("1 mon 1 day 1 hour").shift(ts, false).unwrap();
        assert_eq!(crate::format_timestamp(t), "2000-03-01 11:00:00");
        let t = iv("1 mon").shift(ts, true).unwrap();
        assert_eq!(crate::format_timestamp(t), "1999-12-31 10:00:00");
        assert_eq!(iv("1 day").shift(i64::MAX, false).unwrap(), i64::MAX);
    }
}

/// PostgreSQL's interval qualifiers (`YEAR TO MONTH`, `MINUTE TO SECOND`,
/// …) as sets of its field bits (INTERVAL_MASK), and its interval typmod:
/// the range in the high half, the fractional-second precision (0xFFFF
/// for none) in the low half, so that `atttypmod` is PostgreSQL's own.
pub mod range {
    pub const MONTH: u32 = 1 << 1;
    pub const YEAR: u32 = 1 << 2;
    pub const DAY: u32 = 1 << 3;
    pub const HOUR: u32 = 1 << 10;
    pub const MINUTE: u32 = 1 << 11;
    pub const SECOND: u32 = 1 << 12;
    /// No qualifier.
    pub const FULL: u32 = 0x7FFF;
    const FULL_PRECISION: u32 = 0xFFFF;

    /// The typmod of `interval [range] [(precision)]`.
    pub fn typmod(range: u32, precision: Option<u8>) -> i32 {
        (((range & 0x7FFF) << 16) | precision.map_or(FULL_PRECISION, u32::from)) as i32
    }

    /// The range of a typmod (FULL for -1).
    pub fn of(typmod: i32) -> u32 {
        if typmod < 0 {
            FULL
        } else {
            (typmod as u32 >> 16) & 0x7FFF
        }
    }

    /// The precision of a typmod, if it has one.
    pub fn precision(typmod: i32) -> Option<u8> {
        let p = typmod as u32 & 0xFFFF;
        (typmod >= 0 && p != FULL_PRECISION).then_some(p.min(6) as u8)
    }

    /// How the qualifier prints in format_type (` day to minute`).
    pub fn name(range: u32) -> Option<&'static str> {
        Some(match range {
            YEAR => " year",
            MONTH => " month",
            DAY => " day",
            HOUR => " hour",
            MINUTE => " minute",
            SECOND => " second",
            r if r == YEAR | MONTH => " year to month",
            r if r == DAY | HOUR => " day to hour",
            r if r == DAY | HOUR | MINUTE => " day to minute",
            r if r == DAY | HOUR | MINUTE | SECOND => " day to second",
            r if r == HOUR | MINUTE => " hour to minute",
            r if r == HOUR | MINUTE | SECOND => " hour to second",
            r if r == MINUTE | SECOND => " minute to second",
            _ => return None,
        })
    }
}

impl Interval {
    /// The interval as a column or cast of `typmod` holds it: the fields
    /// below its qualifier's last one dropped, the fraction of a second
    /// rounded to its precision (PostgreSQL's AdjustIntervalForTypmod).
    pub fn adjust(self, modifier: i32) -> Interval {
        use range::{DAY, HOUR, MINUTE, MONTH, YEAR};
        const HOUR_US: i64 = 3_600_000_000;
        const MINUTE_US: i64 = 60_000_000;
        let mut i = self;
        let r = range::of(modifier);
        if r == YEAR {
            i = Interval { months: i.months / 12 * 12, days: 0, micros: 0 };
        } else if r == MONTH || r == YEAR | MONTH {
            i = Interval { days: 0, micros: 0, ..i };
        } else if r == DAY {
            i.micros = 0;
        } else if r == HOUR || r == DAY | HOUR {
            i.micros = i.micros / HOUR_US * HOUR_US;
        } else if r == MINUTE || r == DAY | HOUR | MINUTE || r == HOUR | MINUTE {
            i.micros = i.micros / MINUTE_US * MINUTE_US;
        }
        if let Some(p) = range::precision(modifier) {
            i.micros = crate::round_time(i.micros, Some(p));
        }
        i
    }
}
