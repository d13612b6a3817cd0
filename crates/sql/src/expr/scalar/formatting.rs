//! The data type formatting functions (snapscale_values::formatting):
//! to_char of numbers, timestamps and intervals, to_number, to_date and
//! to_timestamp, in the session's TimeZone.

use snapscale_values::formatting;
use snapscale_values::{SqlError, Style, Value};

use super::{text, Scalar};

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
pub const TO_CHAR_INT4: Scalar = Scalar::styled("to_char", to_char_int4);
pub const TO_NUMBER: Scalar = Scalar::styled("to_number", to_number);
pub const TO_DATE: Scalar = Scalar::styled("to_date", to_date);
pub const TO_TIMESTAMP: Scalar = Scalar::styled("to_timestamp", to_timestamp);
pub const TO_TIMESTAMP_EPOCH: Scalar = Scalar::styled("to_timestamp", to_timestamp_epoch);
