//! The data type formatting functions (snapscale_values::formatting):
//! to_char of numbers, timestamps and intervals, to_number, to_date and
//! to_timestamp, in the session's TimeZone.

use snapscale_values::formatting;
use snapscale_values::{SqlError, Style, Value};

use super::{text, Scalar};

// The date/time functions of plain arguments (EXTRACT, age, date_bin,
// make_interval) live with the rest of the date/time evaluation; the
// binder's tables name them here, with to_char and to_timestamp.
pub use crate::expr::datetime::{AGE, DATE_BIN, EXTRACT, MAKE_INTERVAL};

fn to_char(a: &[Value], style: Style) -> Result<Value, SqlError> {
    let fmt = text(&a[1]);
    let out = match &a[0] {
        Value::Numeric(n) => Some(formatting::to_char_numeric(n, fmt)?),
        Value::Float(f) => Some(formatting::to_char_f64(*f, fmt)?),
        Value::Float4(f) => Some(formatting::to_char_f32(*f, fmt)?),
        Value::Int(i) => Some(formatting::to_char_i64(*i, fmt)?),
        Value::Timestamp(t) => formatting::to_char_timestamp(*t, fmt, None)?,
        Value::TimestampTz(t) => formatting::to_char_timestamp(*t, fmt, Some(style.zone))?,
        Value::Interval(i) => formatting::to_char_interval(i.months, i.days, i.micros, fmt)?,
        _ => None,
    };
    Ok(out.map_or(Value::Null, Value::Text))
}

/// to_char of an integer: int4 has its own rounding of EEEE and V.
fn to_char_int4(a: &[Value], _: Style) -> Result<Value, SqlError> {
    let Value::Int(i) = a[0] else { return Ok(Value::Null) };
    Ok(Value::Text(formatting::to_char_i32(i as i32, text(&a[1]))?))
}

fn to_number(a: &[Value], _: Style) -> Result<Value, SqlError> {
    Ok(formatting::to_number(text(&a[0]), text(&a[1]))?.map_or(Value::Null, Value::Numeric))
}

fn to_date(a: &[Value], _: Style) -> Result<Value, SqlError> {
    Ok(Value::Date(formatting::to_date(text(&a[0]), text(&a[1]))?))
}

fn to_timestamp(a: &[Value], style: Style) -> Result<Value, SqlError> {
    Ok(Value::TimestampTz(formatting::to_timestamp_in(text(&a[0]), text(&a[1]), style.zone)?))
}

/// to_timestamp(seconds since the Unix epoch): PostgreSQL's float8
/// version, infinities kept, 22008 out of range.
fn to_timestamp_epoch(a: &[Value], _: Style) -> Result<Value, SqlError> {
    let secs = match &a[0] {
        Value::Float(f) => *f,
        Value::Int(i) => *i as f64,
        Value::Numeric(n) => n.to_f64()?,
        _ => return Ok(Value::Null),
    };
    if secs.is_nan() {
        return Err(SqlError::new(
            snapscale_sqlstate::SqlState::DATETIME_FIELD_OVERFLOW,
            "timestamp cannot be NaN",
        ));
    }
    if secs.is_infinite() {
        return Ok(Value::TimestampTz(if secs > 0.0 { i64::MAX } else { i64::MIN }));
    }
    // Seconds from 1970 to 2000, PostgreSQL's epoch.
    let micros = ((secs - 946_684_800.0) * 1e6).round();
    if !(-211_813_488_000_000_000.0..9_224_318_016_000_000_000.0).contains(&micros) {
        return Err(SqlError::new(
            snapscale_sqlstate::SqlState::DATETIME_FIELD_OVERFLOW,
            format!(
                "timestamp out of range: \"{}\"",
                snapscale_values::Value::Float(secs).to_text().unwrap_or_default()
            ),
        ));
    }
    Ok(Value::TimestampTz(micros as i64))
}

pub const TO_CHAR: Scalar = Scalar::styled("to_char", to_char);
/// A date/time value to a column's or a cast's type modifier
/// (`timestamp(2)`, `interval day to minute`).
pub const ADJUST_TYPMOD: Scalar = Scalar::new("adjust_typmod", adjust_typmod);

fn adjust_typmod(args: &[Value]) -> Result<Value, SqlError> {
    let typmod = match args[1] {
        Value::Int(t) => t as i32,
        _ => -1,
    };
    snapscale_values::adjust_typmod(args[0].clone(), typmod)
}
/// An array to its column's type modifier (`char(5)[]`,
/// `timestamp(2)[]`): arguments the array, the modifier and the array
/// type's OID, which names the element type.
pub const ADJUST_ARRAY_TYPMOD: Scalar = Scalar::new("adjust_typmod", adjust_array_typmod);

fn adjust_array_typmod(args: &[Value]) -> Result<Value, SqlError> {
    let (Value::Int(typmod), Value::Int(oid)) = (&args[1], &args[2]) else { return Ok(args[0].clone()) };
    let Some(elem) = snapscale_values::SqlType::from_oid(*oid as u32).and_then(|t| match t {
        snapscale_values::SqlType::Array(e) => Some(e),
        _ => None,
    }) else {
        return Ok(args[0].clone());
    };
    snapscale_values::adjust_array_typmod(args[0].clone(), elem, *typmod as i32)
}
pub const TO_CHAR_INT4: Scalar = Scalar::styled("to_char", to_char_int4);
pub const TO_NUMBER: Scalar = Scalar::styled("to_number", to_number);
pub const TO_DATE: Scalar = Scalar::styled("to_date", to_date);
pub const TO_TIMESTAMP: Scalar = Scalar::styled("to_timestamp", to_timestamp);
pub const TO_TIMESTAMP_EPOCH: Scalar = Scalar::styled("to_timestamp", to_timestamp_epoch);

// ------------------------------------------------- date/time functions

fn interval_of(v: &Value) -> snapscale_values::Interval {
    match v {
        Value::Interval(i) => *i,
        _ => snapscale_values::Interval { months: 0, days: 0, micros: 0 },
    }
}

fn justify_hours(a: &[Value], _: Style) -> Result<Value, SqlError> {
    Ok(Value::Interval(interval_of(&a[0]).justify_hours()?))
}

fn justify_days(a: &[Value], _: Style) -> Result<Value, SqlError> {
    Ok(Value::Interval(interval_of(&a[0]).justify_days()?))
}

fn justify_interval(a: &[Value], _: Style) -> Result<Value, SqlError> {
    Ok(Value::Interval(interval_of(&a[0]).justify_interval()?))
}

/// isfinite: false for ±infinity (intervals are always finite in 15).
fn isfinite(a: &[Value], _: Style) -> Result<Value, SqlError> {
    Ok(Value::Bool(match &a[0] {
        Value::Date(d) => *d != i32::MIN && *d != i32::MAX,
        Value::Timestamp(t) | Value::TimestampTz(t) => *t != i64::MIN && *t != i64::MAX,
        _ => true,
    }))
}

fn int_arg(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        _ => 0,
    }
}

fn out_of_range(what: &str) -> SqlError {
    SqlError::new(snapscale_sqlstate::SqlState::DATETIME_FIELD_OVERFLOW, what.to_owned())
}

/// A calendar date from its fields, PostgreSQL's make_date rules: year 0
/// does not exist, negative years are BC, the day must exist.
fn date_from(y: i64, m: i64, d: i64) -> Result<i32, SqlError> {
    let bad = || {
        SqlError::new(
            snapscale_sqlstate::SqlState::DATETIME_FIELD_OVERFLOW,
            format!("date field value out of range: {y}-{m:02}-{d:02}"),
        )
    };
    if y == 0 || !(1..=12).contains(&m) || d < 1 {
        return Err(bad());
    }
    // BC years count back from 1 BC = year 0 of the proleptic calendar.
    let year = if y < 0 { y + 1 } else { y };
    let (m, d) = (m as u32, d as u32);
    let days = snapscale_values::day_number(year, m, d);
    if snapscale_values::civil_date(days) != (year, m, d) {
        return Err(bad());
    }
    i32::try_from(days).map_err(|_| bad())
}

fn make_date(a: &[Value], _: Style) -> Result<Value, SqlError> {
    Ok(Value::Date(date_from(int_arg(&a[0]), int_arg(&a[1]), int_arg(&a[2]))?))
}

/// Hours, minutes and fractional seconds as microseconds since midnight,
/// with make_time's check (24:00:00 allowed).
fn time_from(h: i64, m: i64, s: f64) -> Result<i64, SqlError> {
    let micros = (s * 1e6).round();
    let total =
        h.checked_mul(3_600_000_000).and_then(|x| x.checked_add(m * 60_000_000)).map(|x| x as f64 + micros);
    match total {
        Some(t)
            if (0..=59).contains(&m)
                && (0.0..60e6).contains(&micros)
                && (0.0..=86_400e6).contains(&t)
                && h >= 0 =>
        {
            Ok(t as i64)
        }
        _ => {
            // The seconds as C's %02g writes them.
            let secs = snapscale_values::Value::Float(s).to_text().unwrap_or_default();
            Err(out_of_range(&format!("time field value out of range: {h}:{m:02}:{secs:0>2}")))
        }
    }
}

fn float_arg(v: &Value) -> f64 {
    match v {
        Value::Float(f) => *f,
        Value::Int(i) => *i as f64,
        _ => 0.0,
    }
}

fn make_time(a: &[Value], _: Style) -> Result<Value, SqlError> {
    Ok(Value::Time(time_from(int_arg(&a[0]), int_arg(&a[1]), float_arg(&a[2]))?))
}

fn make_timestamp(a: &[Value], _: Style) -> Result<Value, SqlError> {
    let day = date_from(int_arg(&a[0]), int_arg(&a[1]), int_arg(&a[2]))?;
    let time = time_from(int_arg(&a[3]), int_arg(&a[4]), float_arg(&a[5]))?;
    Ok(Value::Timestamp(i64::from(day) * 86_400_000_000 + time))
}

fn make_timestamptz(a: &[Value], style: Style) -> Result<Value, SqlError> {
    let Value::Timestamp(local) = make_timestamp(a, style)? else { unreachable!("a timestamp") };
    Ok(Value::TimestampTz(style.zone.to_utc(local)))
}

pub const JUSTIFY_HOURS: Scalar = Scalar::styled("justify_hours", justify_hours);
pub const JUSTIFY_DAYS: Scalar = Scalar::styled("justify_days", justify_days);
pub const JUSTIFY_INTERVAL: Scalar = Scalar::styled("justify_interval", justify_interval);
pub const ISFINITE: Scalar = Scalar::styled("isfinite", isfinite);
pub const MAKE_DATE: Scalar = Scalar::styled("make_date", make_date);
pub const MAKE_TIME: Scalar = Scalar::styled("make_time", make_time);
pub const MAKE_TIMESTAMP: Scalar = Scalar::styled("make_timestamp", make_timestamp);
pub const MAKE_TIMESTAMPTZ: Scalar = Scalar::styled("make_timestamptz", make_timestamptz);
pub const MAKE_TIMESTAMPTZ_IN: Scalar = Scalar::styled("make_timestamptz", make_timestamptz_in);

/// `make_timestamptz(…, zone)`: the wall-clock time read in `zone`.
fn make_timestamptz_in(a: &[Value], style: Style) -> Result<Value, SqlError> {
    let Value::Timestamp(local) = make_timestamp(&a[..6], style)? else { unreachable!("a timestamp") };
    let Value::Text(zone) = &a[6] else { return Ok(Value::Null) };
    Ok(Value::TimestampTz(sane_zone(zone)?.to_utc(local)))
}

/// A zone as make_timestamptz reads it (PostgreSQL's parse_sane_timezone):
/// `±hh[:mm[:ss]]` or `±hhmm` east of UTC (ISO 8601's sign, not POSIX's),
/// else a zone name or abbreviation; a bare number is refused.
fn sane_zone(z: &str) -> Result<snapscale_values::Zone, SqlError> {
    use snapscale_sqlstate::SqlState;
    let syntax = || {
        SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid input syntax for type numeric time zone: \"{z}\""),
        )
    };
    let b = z.as_bytes();
    match b.first() {
        Some(c) if c.is_ascii_digit() => {
            Err(syntax().with_hint("Numeric time zones must have \"-\" or \"+\" as first character."))
        }
        Some(b'+' | b'-') => {
            // Digits as C's strtol reads them: none is 0.
            let number = |at: &mut usize| -> i64 {
                let start = *at;
                while b.get(*at).is_some_and(u8::is_ascii_digit) {
                    *at += 1;
                }
                z[start..*at].parse::<i64>().unwrap_or(if *at == start { 0 } else { i64::MAX })
            };
            let mut at = 1;
            let mut hour = number(&mut at);
            let (mut minute, mut second) = (0, 0);
            if b.get(at) == Some(&b':') {
                at += 1;
                minute = number(&mut at);
                if b.get(at) == Some(&b':') {
                    at += 1;
                    second = number(&mut at);
                }
            } else if at == b.len() && b.len() > 3 {
                minute = hour % 100;
                hour /= 100;
            }
            if !(0..=15).contains(&hour) || !(0..60).contains(&minute) || !(0..60).contains(&second) {
                return Err(SqlError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("numeric time zone \"{z}\" out of range"),
                ));
            }
            // Not a numeric zone after all: a POSIX zone, if it is one.
            if at != b.len() {
                return snapscale_values::Zone::named(z).ok_or_else(syntax);
            }
            let east = (hour * 3600 + minute * 60 + second) as i32;
            Ok(snapscale_values::Zone::Fixed(if b[0] == b'-' { -east } else { east }))
        }
        _ => snapscale_values::Zone::named(z).ok_or_else(|| {
            SqlError::new(SqlState::INVALID_PARAMETER_VALUE, format!("time zone \"{z}\" not recognized"))
        }),
    }
}
