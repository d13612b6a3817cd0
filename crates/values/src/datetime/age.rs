//! age(timestamp, timestamp): the difference of two timestamps counted
//! on the calendar, in years, months and days, the way a person's age is.
//!
//! PostgreSQL subtracts the two times field by field and then borrows
//! downwards: a negative day count borrows the length of a month, the
//! month of whichever timestamp is the later one's reference (the
//! earlier timestamp, as PostgreSQL picks it). The result is not
//! `a - b`: `age('2020-03-31', '2020-02-29')` is `1 mon 2 days`.

use snapscale_sqlstate::SqlState;

use crate::calendar::{civil_date, days_in_month, USECS_PER_DAY};
use crate::error::SqlError;
use crate::interval::Interval;
use crate::zone::Zone;

/// A timestamp's broken-down wall-clock fields (the year astronomical).
#[derive(Clone, Copy)]
struct Fields {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    usec: i64,
}

impl Fields {
    /// The fields of a wall-clock time (wide: `infinity` moved east of
    /// UTC is past i64); `None` before the first Julian day, where
    /// PostgreSQL's calendar stops (`-infinity` is there).
    fn of(local: i128) -> Option<Fields> {
        let day = i128::from(USECS_PER_DAY);
        let days = i64::try_from(local.div_euclid(day)).ok()?;
        let time = local.rem_euclid(day) as i64;
        if days + JULIAN_2000 < 0 {
            return None;
        }
        let (year, month, day) = civil_date(days);
        Some(Fields {
            year,
            month: i64::from(month),
            day: i64::from(day),
            hour: time / 3_600_000_000,
            minute: time / 60_000_000 % 60,
            second: time / 1_000_000 % 60,
            usec: time % 1_000_000,
        })
    }

    fn minus(self, o: Fields) -> Fields {
        Fields {
            year: self.year - o.year,
            month: self.month - o.month,
            day: self.day - o.day,
            hour: self.hour - o.hour,
            minute: self.minute - o.minute,
            second: self.second - o.second,
            usec: self.usec - o.usec,
        }
    }

    fn negated(self) -> Fields {
        Fields { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0, usec: 0 }.minus(self)
    }

    fn month_length(self) -> i64 {
        i64::from(days_in_month(self.year, self.month as u32))
    }
}

/// The Julian day of 2000-01-01.
const JULIAN_2000: i64 = 2_451_545;

fn out_of_range() -> SqlError {
    SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "timestamp out of range")
}

/// `age(a, b)` of two timestamps, or with `zone` of two instants read on
/// that zone's wall clock (a difference of offsets is ignored, as
/// PostgreSQL ignores it). PostgreSQL 15 reads `infinity` as the
/// microsecond count it is stored as, a day in the year 294277, and
/// `-infinity` as out of range; so does this.
pub fn age(a: i64, b: i64, zone: Option<Zone>) -> Result<Interval, SqlError> {
    let local = |t: i64| i128::from(t) + i128::from(zone.map_or(0, |z| z.offset_at(t)));
    let fa = Fields::of(local(a)).ok_or_else(out_of_range)?;
    let fb = Fields::of(local(b)).ok_or_else(out_of_range)?;
    let backwards = a < b;
    // Borrowing works on a non-negative difference; the sign comes back
    // at the end.
    let mut d = if backwards { fa.minus(fb).negated() } else { fa.minus(fb) };
    while d.usec < 0 {
        d.usec += 1_000_000;
        d.second -= 1;
    }
    while d.second < 0 {
        d.second += 60;
        d.minute -= 1;
    }
    while d.minute < 0 {
        d.minute += 60;
        d.hour -= 1;
    }
    while d.hour < 0 {
        d.hour += 24;
        d.day -= 1;
    }
    let borrow_from = if backwards { fa } else { fb };
    while d.day < 0 {
        d.day += borrow_from.month_length();
        d.month -= 1;
    }
    while d.month < 0 {
        d.month += 12;
        d.year -= 1;
    }
    if backwards {
        d = d.negated();
    }
    to_interval(d)
}

fn to_interval(d: Fields) -> Result<Interval, SqlError> {
    let overflow = || SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "interval out of range");
    let months = i32::try_from(d.year * 12 + d.month).map_err(|_| overflow())?;
    let days = i32::try_from(d.day).map_err(|_| overflow())?;
    let micros = ((d.hour * 60 + d.minute) * 60 + d.second) * 1_000_000 + d.usec;
    Ok(Interval { months, days, micros })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{format_interval, parse_timestamp, parse_timestamptz};

    fn age_of(a: &str, b: &str) -> String {
        format_interval(age(parse_timestamp(a).unwrap(), parse_timestamp(b).unwrap(), None).unwrap())
    }

    // Each expected value is PostgreSQL 15's answer.
    #[test]
    fn borrows_as_postgresql() {
        for (a, b, want) in [
            ("2020-03-31", "2020-02-29", "1 mon 2 days"),
            ("2020-02-29", "2020-03-31", "-1 mons -2 days"),
            ("2001-04-10", "1957-06-13", "43 years 9 mons 27 days"),
            ("1957-06-13", "2001-04-10", "-43 years -9 mons -27 days"),
            ("2020-01-01 00:00:00", "2019-12-31 23:59:59.5", "00:00:00.5"),
            ("2020-01-01", "2020-01-01", "00:00:00"),
            ("0001-01-01", "0001-12-31 BC", "1 day"),
        ] {
            assert_eq!(age_of(a, b), want, "age({a}, {b})");
        }
    }

    #[test]
    fn instants_on_the_wall_clock_and_infinity() {
        let zone = Zone::named("America/New_York").unwrap();
        let t = |s: &str| parse_timestamptz(s, zone).unwrap();
        let got = age(t("2021-03-15 00:00"), t("2021-03-13 12:00"), Some(zone)).unwrap();
        assert_eq!(format_interval(got), "1 day 12:00:00");
        let e = age(i64::MIN, 0, None).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (SqlState::DATETIME_FIELD_OVERFLOW, "timestamp out of range")
        );
        let jan_2020 = parse_timestamp("2020-01-01").unwrap();
        let got = age(i64::MAX, jan_2020, None).unwrap();
        assert_eq!(format_interval(got), "292257 years 8 days 04:00:54.775807");
    }
}
