//! The date/time functions whose answer depends on a time zone: `AT TIME
//! ZONE` (PostgreSQL's `timezone(zone, value)`), `date_trunc`,
//! `date_part` / `EXTRACT` and `age`; and `date_bin` and `make_interval`
//! beside them (the computations are snapscale_values').
//!
//! A timestamp is a wall-clock time and a timestamptz an instant; moving
//! between them needs a zone, the session's unless one is named. Both
//! functions work on the wall clock: truncating an instant to the day
//! means midnight where the session is.

use snapscale_sqlstate::SqlState;
use snapscale_values::extract::{self, Part};
use snapscale_values::{civil_date, day_number, Interval, SqlError, Style, Value, Zone};

use super::scalar::Scalar;

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
/// A time with time zone takes the zone's offset at `now` (the
/// transaction's start), as PostgreSQL's timetz_zone does.
pub(super) fn at_zone(zone: &Value, value: &Value, now: i64) -> Result<Value, SqlError> {
    if matches!(zone, Value::Null) {
        return Ok(Value::Null);
    }
    Ok(match value {
        Value::Timestamp(t) => Value::TimestampTz(zone_of(zone)?.to_utc(*t)),
        Value::TimestampTz(t) => Value::Timestamp(zone_of(zone)?.local(*t)),
        Value::TimeTz(t) => Value::TimeTz(t.in_zone(zone_of(zone)?.offset_at(now) / 1_000_000)),
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

/// date_trunc's unit, looked up as PostgreSQL looks it up (the interval
/// unit words, on their first ten letters): 22023 for a word that is no
/// unit, 0A000 for a unit that truncates nothing (`timezone`).
fn unit(name: &str, type_name: &str) -> Result<Unit, SqlError> {
    use extract::Field;
    let lower = extract::lower_units(name);
    let Some(field) = extract::delta_unit(&lower) else {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("unit \"{lower}\" not recognized for type {type_name}"),
        ));
    };
    Ok(match field {
        Field::Microseconds => Unit::Microseconds,
        Field::Milliseconds => Unit::Milliseconds,
        Field::Second => Unit::Second,
        Field::Minute => Unit::Minute,
        Field::Hour => Unit::Hour,
        Field::Day => Unit::Day,
        Field::Week => Unit::Week,
        Field::Month => Unit::Month,
        Field::Quarter => Unit::Quarter,
        Field::Year => Unit::Year,
        Field::Decade => Unit::Decade,
        Field::Century => Unit::Century,
        Field::Millennium => Unit::Millennium,
        _ => {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("unit \"{lower}\" not supported for type {type_name}"),
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
        Value::Interval(i) => Value::Interval(snapscale_values::trunc_interval(*i, name)?),
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

/// A field of a date/time value, as date_part and EXTRACT compute it; a
/// timestamptz is read on the wall clock of `zone`.
fn part(unit: &str, value: &Value, zone: Zone) -> Result<Option<Part>, SqlError> {
    Ok(Some(match value {
        Value::Timestamp(t) => extract::extract_timestamp(*t, None, unit)?,
        Value::TimestampTz(t) => extract::extract_timestamp(*t, Some(zone.offset_at(*t)), unit)?,
        Value::Date(d) => extract::extract_date(*d, unit)?,
        Value::Time(t) => extract::extract_time(*t, unit)?,
        Value::TimeTz(t) => extract::extract_timetz(*t, unit)?,
        Value::Interval(i) => extract::extract_interval(*i, unit)?,
        _ => return Ok(None),
    }))
}

/// `date_part(unit, value)`, in double precision (a date is bound as a
/// timestamp, as PostgreSQL's date_part of a date is).
pub(super) fn date_part(args: &[Value], zone: Zone) -> Result<Value, SqlError> {
    let Value::Text(unit) = &args[0] else { return Ok(Value::Null) };
    let value = part(unit, &args[1], zone)?.and_then(Part::to_f64);
    Ok(value.map_or(Value::Null, Value::Float))
}

/// `EXTRACT(field FROM value)`: numeric, exact.
fn extract_numeric(args: &[Value], style: Style) -> Result<Value, SqlError> {
    let Value::Text(unit) = &args[0] else { return Ok(Value::Null) };
    let value = match part(unit, &args[1], style.zone)? {
        Some(p) => p.to_numeric()?,
        None => None,
    };
    Ok(value.map_or(Value::Null, Value::Numeric))
}

/// `age(a, b)` of timestamps, or of instants on the session's wall
/// clock.
fn age(args: &[Value], style: Style) -> Result<Value, SqlError> {
    Ok(match (&args[0], &args[1]) {
        (Value::Timestamp(a), Value::Timestamp(b)) => Value::Interval(snapscale_values::age(*a, *b, None)?),
        (Value::TimestampTz(a), Value::TimestampTz(b)) => {
            Value::Interval(snapscale_values::age(*a, *b, Some(style.zone))?)
        }
        _ => Value::Null,
    })
}

/// `date_bin(stride, source, origin)`, a timestamp or an instant alike.
fn date_bin(args: &[Value]) -> Result<Value, SqlError> {
    Ok(match (&args[0], &args[1], &args[2]) {
        (Value::Interval(i), Value::Timestamp(t), Value::Timestamp(o)) => {
            Value::Timestamp(snapscale_values::date_bin(*i, *t, *o)?)
        }
        (Value::Interval(i), Value::TimestampTz(t), Value::TimestampTz(o)) => {
            Value::TimestampTz(snapscale_values::date_bin(*i, *t, *o)?)
        }
        _ => Value::Null,
    })
}

/// `make_interval(years, months, weeks, days, hours, mins, secs)`, every
/// argument given (the binder fills in the defaults).
fn make_interval(args: &[Value]) -> Result<Value, SqlError> {
    let mut fields = [0i32; 6];
    for (f, v) in fields.iter_mut().zip(args) {
        let Value::Int(i) = v else { return Ok(Value::Null) };
        *f = *i as i32;
    }
    let Some(Value::Float(secs)) = args.get(6) else { return Ok(Value::Null) };
    Ok(Value::Interval(Interval::make(fields, *secs)?))
}

pub const EXTRACT: Scalar = Scalar::styled("extract", extract_numeric);
pub const AGE: Scalar = Scalar::styled("age", age);
pub const DATE_BIN: Scalar = Scalar::new("date_bin", date_bin);
pub const MAKE_INTERVAL: Scalar = Scalar::new("make_interval", make_interval);

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
