//! The date/time functions whose answer depends on a time zone: `AT TIME
//! ZONE` (PostgreSQL's `timezone(zone, value)`), `date_trunc` and
//! `date_part` / `EXTRACT`.
//!
//! A timestamp is a wall-clock time and a timestamptz an instant; moving
//! between them needs a zone, the session's unless one is named. Both
//! functions work on the wall clock: truncating an instant to the day
//! means midnight where the session is.

use snapscale_sqlstate::SqlState;
use snapscale_values::{civil_date, day_number, Interval, SqlError, Value, Zone};

const USECS_PER_DAY: i64 = 86_400_000_000;

/// The zone a value names: text as a tz database name, an abbreviation or
/// a POSIX zone; an interval as hours east of UTC.
fn zone_of(v: &Value) -> Result<Zone, SqlError> {
    match v {
        Value::Text(name) => Zone::named(name).ok_or_else(|| {
            SqlError::new(SqlState::INVALID_PARAMETER_VALUE, format!("time zone \"{name}\" not recognized"))
        }),
        Value::Interval(Interval { months: 0, days: 0, micros }) => i32::try_from(micros / 1_000_000)
            .ok()
            .filter(|s| s.abs() < 16 * 3600)
            .map(Zone::Fixed)
            .ok_or_else(|| interval_zone_error(v)),
        other => Err(interval_zone_error(other)),
    }
}

fn interval_zone_error(v: &Value) -> SqlError {
    SqlError::new(
        SqlState::INVALID_PARAMETER_VALUE,
        format!("interval time zone \"{}\" must not include months or days", v.to_text().unwrap_or_default()),
    )
}

/// `value AT TIME ZONE zone`: a timestamp read as wall-clock time in
/// `zone` becomes the instant; an instant becomes the wall-clock time
/// there.
pub(super) fn at_zone(zone: &Value, value: &Value) -> Result<Value, SqlError> {
    if matches!(zone, Value::Null) {
        return Ok(Value::Null);
    }
    Ok(match value {
        Value::Timestamp(t) => Value::TimestampTz(zone_of(zone)?.to_utc(*t)),
        Value::TimestampTz(t) => Value::Timestamp(zone_of(zone)?.local(*t)),
        _ => Value::Null,
    })
}

/// A date_trunc unit, as PostgreSQL spells them (singular, plural and
/// the short forms).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unit {
    Microseconds,
    Milliseconds,
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    Decade,
    Century,
    Millennium,
}

fn unit(name: &str, type_name: &str) -> Result<Unit, SqlError> {
    Ok(match name.to_ascii_lowercase().as_str() {
        "microsecond" | "microseconds" | "us" | "usec" | "usecs" | "useconds" => Unit::Microseconds,
        "millisecond" | "milliseconds" | "ms" | "msec" | "msecs" | "mseconds" => Unit::Milliseconds,
        "second" | "seconds" | "s" | "sec" | "secs" => Unit::Second,
        "minute" | "minutes" | "m" | "min" | "mins" => Unit::Minute,
        "hour" | "hours" | "h" | "hr" | "hrs" => Unit::Hour,
        "day" | "days" | "d" => Unit::Day,
        "week" | "weeks" | "w" => Unit::Week,
        "month" | "months" | "mon" | "mons" => Unit::Month,
        "quarter" | "qtr" => Unit::Quarter,
        "year" | "years" | "y" | "yr" | "yrs" => Unit::Year,
        "decade" | "decades" | "dec" | "decs" => Unit::Decade,
        "century" | "centuries" | "c" | "cent" => Unit::Century,
        "millennium" | "millennia" | "millenniums" | "mil" | "mils" => Unit::Millennium,
        _ => {
            return Err(SqlError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("unit \"{}\" not recognized for type {type_name}", name.to_ascii_lowercase()),
            ))
        }
    })
}

/// Truncates a wall-clock time (microseconds since 2000-01-01) to `unit`.
fn truncate(local: i64, unit: Unit) -> i64 {
    let days = local.div_euclid(USECS_PER_DAY);
    let time = local.rem_euclid(USECS_PER_DAY);
    let within_day = |step: i64| days * USECS_PER_DAY + time - time % step;
    let (y, m, _) = civil_date(days);
    // The first year of a decade, century or millennium as PostgreSQL
    // counts them (centuries and millennia start at year 1).
    let first_year =
        |span: i64| if span == 10 { y.div_euclid(10) * 10 } else { (y - 1).div_euclid(span) * span + 1 };
    let day = match unit {
        Unit::Microseconds => return local,
        Unit::Milliseconds => return within_day(1_000),
        Unit::Second => return within_day(1_000_000),
        Unit::Minute => return within_day(60_000_000),
        Unit::Hour => return within_day(3_600_000_000),
        Unit::Day => days,
        // ISO weeks start on Monday; 2000-01-01 was a Saturday.
        Unit::Week => days - (days + 5).rem_euclid(7),
        Unit::Month => day_number(y, m, 1),
        Unit::Quarter => day_number(y, (m - 1) / 3 * 3 + 1, 1),
        Unit::Year => day_number(y, 1, 1),
        Unit::Decade => day_number(first_year(10), 1, 1),
        Unit::Century => day_number(first_year(100), 1, 1),
        Unit::Millennium => day_number(first_year(1000), 1, 1),
    };
    day * USECS_PER_DAY
}

/// `date_trunc(unit, value [, zone])`: a timestamp truncated as it is, an
/// instant truncated on the wall clock of `zone` (the session's if none
/// is named) and read back there.
pub(super) fn date_trunc(args: &[Value], session: Zone) -> Result<Value, SqlError> {
    if args.iter().any(|a| matches!(a, Value::Null)) {
        return Ok(Value::Null);
    }
    let Value::Text(name) = &args[0] else { return Ok(Value::Null) };
    // ±infinity truncates to itself.
    if let Value::Timestamp(t) | Value::TimestampTz(t) = &args[1] {
        if *t == i64::MIN || *t == i64::MAX {
            return Ok(args[1].clone());
        }
    }
    Ok(match &args[1] {
        Value::Timestamp(t) => Value::Timestamp(truncate(*t, unit(name, "timestamp without time zone")?)),
        Value::TimestampTz(t) => {
            let unit = unit(name, "timestamp with time zone")?;
            let zone = match args.get(2) {
                Some(z) => zone_of(z)?,
                None => session,
            };
            // Below a day the instant keeps its offset (an hour cut in
            // the repeated hour of a jump back stays in it); from a day up
            // the offset is the one in force at the truncated time.
            let offset = zone.offset_at(*t);
            let cut = truncate(t.saturating_add(offset), unit);
            let day_or_more = !matches!(
                unit,
                Unit::Microseconds | Unit::Milliseconds | Unit::Second | Unit::Minute | Unit::Hour
            );
            Value::TimestampTz(if day_or_more { zone.to_utc(cut) } else { cut.saturating_sub(offset) })
        }
        _ => Value::Null,
    })
}

/// Microseconds in a day, as f64, for fractions.
const DAY_F: f64 = 86_400_000_000.0;
/// The Julian day of 2000-01-01.
const JULIAN_2000: i64 = 2_451_545;

/// What date_part / EXTRACT can ask for beyond date_trunc's units.
fn part(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    Some(match lower.as_str() {
        "dow" => "dow",
        "isodow" => "isodow",
        "doy" => "doy",
        "epoch" => "epoch",
        "isoyear" => "isoyear",
        "julian" | "j" => "julian",
        "timezone" => "timezone",
        "timezone_h" | "timezone_hour" => "timezone_hour",
        "timezone_m" | "timezone_minute" => "timezone_minute",
        _ => return None,
    })
}

fn not_supported(name: &str, type_name: &str) -> SqlError {
    SqlError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        format!("unit \"{}\" not supported for type {type_name}", name.to_ascii_lowercase()),
    )
}

/// The ISO 8601 year and week of a day (weeks start on Monday; week 1
/// holds the year's first Thursday).
fn iso_week(days: i64) -> (i64, i64) {
    let isodow = (days + 5).rem_euclid(7) + 1;
    let thursday = days - isodow + 4;
    let (year, _, _) = civil_date(thursday);
    (year, (thursday - day_number(year, 1, 1)) / 7 + 1)
}

/// A field of a wall-clock time (microseconds since 2000-01-01); `epoch`
/// is seconds since 1970-01-01 of that wall clock (the caller corrects it
/// for an instant).
fn field_of(local: i64, name: &str, type_name: &str) -> Result<f64, SqlError> {
    let days = local.div_euclid(USECS_PER_DAY);
    let time = local.rem_euclid(USECS_PER_DAY);
    let (y, m, d) = civil_date(days);
    let secs_in_minute = time % 60_000_000;
    let dow = (days + 6).rem_euclid(7);
    if let Some(p) = part(name) {
        return Ok(match p {
            "dow" => dow as f64,
            "isodow" => (if dow == 0 { 7 } else { dow }) as f64,
            "doy" => (days - day_number(y, 1, 1) + 1) as f64,
            "epoch" => (local as f64) / 1e6 + 946_684_800.0,
            "isoyear" => iso_week(days).0 as f64,
            "julian" => (days + JULIAN_2000) as f64 + time as f64 / DAY_F,
            _ => return Err(not_supported(name, type_name)),
        });
    }
    Ok(match unit(name, type_name)? {
        Unit::Microseconds => secs_in_minute as f64,
        Unit::Milliseconds => secs_in_minute as f64 / 1e3,
        Unit::Second => secs_in_minute as f64 / 1e6,
        Unit::Minute => (time / 60_000_000 % 60) as f64,
        Unit::Hour => (time / 3_600_000_000) as f64,
        Unit::Day => f64::from(d),
        Unit::Week => iso_week(days).1 as f64,
        Unit::Month => f64::from(m),
        Unit::Quarter => f64::from((m - 1) / 3 + 1),
        Unit::Year => y as f64,
        Unit::Decade => y.div_euclid(10) as f64,
        Unit::Century => (if y > 0 { (y + 99) / 100 } else { -((99 - (y - 1)) / 100) }) as f64,
        Unit::Millennium => (if y > 0 { (y + 999) / 1000 } else { -((999 - (y - 1)) / 1000) }) as f64,
    })
}

/// A field of an interval (days and time; snapscale's intervals have no
/// months, so the month-based fields are 0).
fn interval_field(i: Interval, name: &str) -> Result<f64, SqlError> {
    const TYPE: &str = "interval";
    if part(name) == Some("epoch") {
        // PostgreSQL's year for an epoch is 365.25 days; a month 30 days.
        let years = f64::from(i.months / 12) * 365.25 * 86_400.0;
        let months = f64::from(i.months % 12) * 30.0 * 86_400.0;
        return Ok(years + months + f64::from(i.days) * 86_400.0 + i.micros as f64 / 1e6);
    }
    if part(name).is_some() {
        return Err(not_supported(name, TYPE));
    }
    let in_minute = i.micros % 60_000_000;
    Ok(match unit(name, TYPE)? {
        Unit::Microseconds => in_minute as f64,
        Unit::Milliseconds => in_minute as f64 / 1e3,
        Unit::Second => in_minute as f64 / 1e6,
        Unit::Minute => (i.micros / 60_000_000 % 60) as f64,
        Unit::Hour => (i.micros / 3_600_000_000) as f64,
        Unit::Day => f64::from(i.days),
        Unit::Week => return Err(not_supported(name, TYPE)),
        Unit::Month => f64::from(i.months % 12),
        Unit::Quarter => f64::from((i.months % 12) / 3 + 1),
        Unit::Year => f64::from(i.months / 12),
        Unit::Decade => f64::from(i.months / 120),
        Unit::Century => f64::from(i.months / 1200),
        Unit::Millennium => f64::from(i.months / 12000),
    })
}

/// `date_part(unit, value)` and `EXTRACT(unit FROM value)`, as double
/// precision. A timestamptz is read on the wall clock of `zone`; a date
/// (EXTRACT's own) has no time of day to give.
pub(super) fn date_part(args: &[Value], zone: Zone) -> Result<Value, SqlError> {
    if args.iter().any(|a| matches!(a, Value::Null)) {
        return Ok(Value::Null);
    }
    let Value::Text(name) = &args[0] else { return Ok(Value::Null) };
    let infinite = match &args[1] {
        Value::Timestamp(t) | Value::TimestampTz(t) => (*t == i64::MIN || *t == i64::MAX).then_some(*t > 0),
        Value::Date(d) => (*d == i32::MIN || *d == i32::MAX).then_some(*d > 0),
        _ => None,
    };
    if let Some(positive) = infinite {
        // PostgreSQL: the fields that grow without bound are ±Infinity,
        // the rest NULL.
        let unbounded = matches!(
            name.to_ascii_lowercase().as_str(),
            "epoch"
                | "julian"
                | "year"
                | "years"
                | "y"
                | "yr"
                | "yrs"
                | "isoyear"
                | "decade"
                | "decades"
                | "dec"
                | "decs"
                | "century"
                | "centuries"
                | "c"
                | "cent"
                | "cents"
                | "millennium"
                | "millennia"
                | "millenniums"
                | "mil"
                | "mils"
        );
        return Ok(if unbounded {
            Value::Float(if positive { f64::INFINITY } else { f64::NEG_INFINITY })
        } else {
            Value::Null
        });
    }
    Ok(Value::Float(match &args[1] {
        Value::Timestamp(t) => {
            if matches!(part(name), Some(p) if p.starts_with("timezone")) {
                return Err(not_supported(name, "timestamp without time zone"));
            }
            field_of(*t, name, "timestamp without time zone")?
        }
        Value::TimestampTz(t) => {
            let offset = zone.offset_at(*t);
            match part(name) {
                Some("epoch") => (*t as f64) / 1e6 + 946_684_800.0,
                Some("timezone") => (offset / 1_000_000) as f64,
                Some("timezone_hour") => (offset / 3_600_000_000) as f64,
                Some("timezone_minute") => (offset / 60_000_000 % 60) as f64,
                _ => field_of(t.saturating_add(offset), name, "timestamp with time zone")?,
            }
        }
        Value::Date(d) => {
            const TYPE: &str = "date";
            let time_of_day = match part(name) {
                Some(p) => p.starts_with("timezone"),
                None => matches!(
                    unit(name, TYPE)?,
                    Unit::Microseconds | Unit::Milliseconds | Unit::Second | Unit::Minute | Unit::Hour
                ),
            };
            if time_of_day {
                return Err(not_supported(name, TYPE));
            }
            field_of(i64::from(*d) * USECS_PER_DAY, name, TYPE)?
        }
        Value::Interval(i) => interval_field(*i, name)?,
        _ => return Ok(Value::Null),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use snapscale_values::{format_timestamp, parse_timestamp};

    #[test]
    fn truncation_follows_postgresql_calendar() {
        let t = |s: &str| parse_timestamp(s).unwrap();
        for (unit, input, want) in [
            (Unit::Week, "2024-03-13 10:00", "2024-03-11 00:00:00"),
            (Unit::Week, "2024-03-11 00:00", "2024-03-11 00:00:00"),
            (Unit::Week, "2000-01-01 00:00", "1999-12-27 00:00:00"),
            (Unit::Quarter, "2024-05-10", "2024-04-01 00:00:00"),
            (Unit::Decade, "2024-05-10", "2020-01-01 00:00:00"),
            (Unit::Century, "2024-05-10", "2001-01-01 00:00:00"),
            (Unit::Century, "2000-05-10", "1901-01-01 00:00:00"),
            (Unit::Millennium, "2024-05-10", "2001-01-01 00:00:00"),
            (Unit::Milliseconds, "2024-05-10 01:02:03.456789", "2024-05-10 01:02:03.456"),
            (Unit::Hour, "1999-12-31 23:59:59", "1999-12-31 23:00:00"),
        ] {
            assert_eq!(format_timestamp(truncate(t(input), unit)), want, "{input}");
        }
    }
}
