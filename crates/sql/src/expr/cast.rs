//! Casts: between the value types as PostgreSQL's cast functions convert
//! them (text through each type's input and output, the date/time types on
//! the session's wall clock), and to the oid alias types, whose names the
//! statement's catalog gives.

use std::sync::Arc;

use snapscale_sqlstate::SqlState;
use snapscale_values::numeric::Numeric;
use snapscale_values::{int_arith, IntOp, SqlError, SqlType, Style, Value};

use super::Ctx;

/// Converts `v` to `ty` as [`cast`] does, looking names of catalog objects
/// up for the oid alias types (`'t'::regclass`, `oid::regclass`).
pub fn cast_in(v: Value, ty: SqlType, explicit: bool, cx: &Ctx<'_>) -> Result<Value, SqlError> {
    let SqlType::Reg(reg) = ty else { return cast(v, ty, explicit, cx.style()) };
    let by_oid = |oid: u32| {
        let name = match (oid, cx.catalog.and_then(|n| n.name_of(reg, oid))) {
            (0, _) => "-".to_owned(),
            (_, Some(name)) => name,
            (_, None) => oid.to_string(),
        };
        Value::Reg(oid, name.into())
    };
    Ok(match v {
        Value::Null => Value::Null,
        Value::Reg(oid, _) => by_oid(oid),
        Value::Int(i) => by_oid(u32::try_from(i).map_err(|_| SqlError::out_of_range("oid"))?),
        Value::Text(s) => {
            if let Ok(Value::Int(oid)) = Value::parse(SqlType::Oid, &s) {
                return Ok(by_oid(oid as u32));
            }
            let found = cx.catalog.and_then(|n| n.oid_of(reg, &s));
            match found {
                Some((oid, name)) => Value::Reg(oid, name.into()),
                None => return Err(reg.missing(&s)),
            }
        }
        other => {
            return Err(SqlError::new(
                SqlState::CANNOT_COERCE,
                format!("cannot cast type {} to {}", describe(&other), ty.name()),
            ))
        }
    })
}

/// Converts `v` to `ty`. Assignment (`explicit = false`) refuses a too
/// long string (22001); an explicit cast truncates it, as PostgreSQL does.
/// `zone` is the session's TimeZone: where timestamptz meets text, date
/// and timestamp.
pub fn cast(
    v: Value,
    ty: SqlType,
    explicit: bool,
    style: impl Into<Style> + Copy,
) -> Result<Value, SqlError> {
    let style: Style = style.into();
    let zone = style.zone;
    let type_error = |v: &Value| {
        SqlError::new(
            SqlState::DATATYPE_MISMATCH,
            format!("cannot convert {} to type {}", describe(v), ty.name()),
        )
    };
    Ok(match (v, ty) {
        (Value::Null, _) => Value::Null,
        (Value::Int(i), SqlType::Int2 | SqlType::Int4 | SqlType::Int8) => {
            Value::Int(int_arith(ty, IntOp::Add, i, 0)?)
        }
        (Value::Int(i), SqlType::Float8) => Value::Float(i as f64),
        (Value::Int(i), SqlType::Float4) => Value::Float4(i as f32),
        (Value::Float4(f), SqlType::Float4) => Value::Float4(f),
        (Value::Float4(f), SqlType::Float8) => Value::Float(f64::from(f)),
        (Value::Float(f), SqlType::Float4) => Value::Float4(narrow(f)?),
        (Value::Float4(f), SqlType::Numeric(typmod)) => {
            let n = Numeric::from_f32(f);
            Value::Numeric(if typmod >= 0 { n.apply_typmod_raw(typmod)? } else { n })
        }
        (Value::Numeric(n), SqlType::Float4) => Value::Float4(n.to_f32()?),
        (Value::Float4(f), SqlType::Int2 | SqlType::Int4 | SqlType::Int8) => {
            return cast(Value::Float(f64::from(f)), ty, explicit, style)
        }
        (Value::Float(f), SqlType::Float8) => Value::Float(f),
        (Value::Float(f), SqlType::Int2 | SqlType::Int4 | SqlType::Int8) => {
            let r = f.round_ties_even();
            if !r.is_finite() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r) {
                return Err(SqlError::out_of_range(ty.name()));
            }
            Value::Int(int_arith(ty, IntOp::Add, r as i64, 0)?)
        }
        (Value::Bool(b), SqlType::Bool) => Value::Bool(b),
        (v @ Value::Uuid(_), SqlType::Uuid)
        | (v @ Value::Bytes(_), SqlType::Bytea)
        | (v @ Value::Json(_), SqlType::Json)
        | (v @ Value::Jsonb(_), SqlType::Jsonb)
        | (v @ Value::JsonPath(_), SqlType::JsonPath)
        | (v @ Value::Time(_), SqlType::Time)
        | (v @ Value::TimeTz(_), SqlType::TimeTz) => v,
        (Value::TimeTz(t), SqlType::Time) => Value::Time(t.micros),
        // A time's zone is the session's offset today, as PostgreSQL
        // takes it.
        (Value::Time(t), SqlType::TimeTz) => {
            let offset =
                (zone.local(snapscale_values::now_micros()) - snapscale_values::now_micros()) / 1_000_000;
            Value::TimeTz(snapscale_values::TimeTz { micros: t, zone: -(offset as i32) })
        }
        (Value::Timestamp(t), SqlType::Time) => Value::Time(t.rem_euclid(86_400_000_000)),
        (Value::TimestampTz(t), SqlType::Time) => Value::Time(zone.local(t).rem_euclid(86_400_000_000)),
        (Value::TimestampTz(t), SqlType::TimeTz) => {
            let local = zone.local(t);
            let offset = (local - t) / 1_000_000;
            Value::TimeTz(snapscale_values::TimeTz {
                micros: local.rem_euclid(86_400_000_000),
                zone: -(offset as i32),
            })
        }
        // json and jsonb convert through their text (jsonb normalises).
        (Value::Json(text), SqlType::Jsonb) => Value::Jsonb(snapscale_values::json::jsonb_in(&text)?),
        (Value::Jsonb(j), SqlType::Json) => Value::Json(j.to_text().into()),
        // A jsonb scalar converts to the SQL type it holds, with
        // PostgreSQL's error for any other kind.
        (
            Value::Jsonb(j),
            ty @ (SqlType::Numeric(_)
            | SqlType::Int2
            | SqlType::Int4
            | SqlType::Int8
            | SqlType::Float8
            | SqlType::Bool),
        ) => jsonb_scalar(&j, ty, style)?,
        (Value::Numeric(n), SqlType::Numeric(typmod)) => {
            Value::Numeric(if typmod >= 0 { n.apply_typmod_raw(typmod)? } else { n })
        }
        (Value::Int(i), SqlType::Numeric(typmod)) => {
            let n = Numeric::from(i);
            Value::Numeric(if typmod >= 0 { n.apply_typmod_raw(typmod)? } else { n })
        }
        (Value::Float(f), SqlType::Numeric(typmod)) => {
            let n = Numeric::from_f64(f);
            Value::Numeric(if typmod >= 0 { n.apply_typmod_raw(typmod)? } else { n })
        }
        (Value::Numeric(n), SqlType::Float8) => Value::Float(n.to_f64()?),
        (Value::Numeric(n), SqlType::Int2) => Value::Int(n.to_i16()?.into()),
        (Value::Numeric(n), SqlType::Int4) => Value::Int(n.to_i32()?.into()),
        (Value::Numeric(n), SqlType::Int8) => Value::Int(n.to_i64()?),
        (Value::Text(s), SqlType::Varchar(Some(n)) | SqlType::Char(n)) if explicit => {
            let cut: String = s.chars().take(n as usize).collect();
            Value::parse_in(ty, &cut, style)?
        }
        (Value::Text(s), _) => Value::parse_in(ty, &s, style)?,
        // Dates and timestamps are wall-clock times; a timestamptz is an
        // instant, whose wall-clock time is the session zone's.
        (
            v @ (Value::Date(_) | Value::Timestamp(_) | Value::TimestampTz(_)),
            SqlType::Date | SqlType::Timestamp | SqlType::TimestampTz,
        ) => {
            // ±infinity stays itself in every one of the three types.
            let infinite = match v {
                Value::Date(d) => (d == i32::MIN || d == i32::MAX).then_some(d > 0),
                Value::Timestamp(t) | Value::TimestampTz(t) => {
                    (t == i64::MIN || t == i64::MAX).then_some(t > 0)
                }
                _ => None,
            };
            if let Some(late) = infinite {
                return Ok(match ty {
                    SqlType::Date => Value::Date(if late { i32::MAX } else { i32::MIN }),
                    SqlType::Timestamp => Value::Timestamp(if late { i64::MAX } else { i64::MIN }),
                    _ => Value::TimestampTz(if late { i64::MAX } else { i64::MIN }),
                });
            }
            let local = match v {
                Value::Date(d) => i64::from(d)
                    .checked_mul(86_400_000_000)
                    .filter(|t| snapscale_values::timestamp_in_range(*t))
                    .ok_or_else(|| {
                        SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "date out of range for timestamp")
                    })?,
                Value::Timestamp(t) => t,
                Value::TimestampTz(t) if ty == SqlType::TimestampTz => return Ok(Value::TimestampTz(t)),
                Value::TimestampTz(t) => zone.local(t),
                _ => unreachable!("matched above"),
            };
            match ty {
                SqlType::Date => Value::Date(
                    i32::try_from(local.div_euclid(86_400_000_000))
                        .map_err(|_| SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "date out of range"))?,
                ),
                SqlType::Timestamp => Value::Timestamp(local),
                _ => Value::TimestampTz(zone.to_utc(local)),
            }
        }
        (Value::Int(i), SqlType::Oid) => {
            Value::Int(u32::try_from(i).map_err(|_| SqlError::out_of_range("oid"))?.into())
        }
        (Value::Reg(oid, _), SqlType::Oid | SqlType::Int8) => Value::Int(oid.into()),
        (Value::Reg(oid, _), SqlType::Int4) => Value::Int(i64::from(oid as i32)),
        (Value::Reg(oid, _), SqlType::Reg(_)) => Value::Reg(oid, oid.to_string().into()),
        (Value::Int(i), SqlType::Reg(_)) => Value::Reg(i as u32, i.to_string().into()),
        (Value::Array(items), SqlType::Array(_) | SqlType::Int2Vector | SqlType::OidVector) => {
            let elem = ty.elem().expect("an array type");
            let cast_items = items
                .iter()
                .map(|v| cast(v.clone(), elem, explicit, style))
                .collect::<Result<Vec<_>, _>>()?;
            Value::Array(Arc::new(items.reshaped(cast_items)))
        }
        (v @ Value::Array(_), SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_) | SqlType::Name) => {
            Value::parse(ty, &v.try_text_in(style)?.unwrap_or_default())?
        }
        (v, SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_) | SqlType::Name | SqlType::Char1)
        | (v, SqlType::Refcursor) => {
            let text = v.try_text_in(style)?.unwrap_or_default();
            Value::parse(ty, &text)?
        }
        (v, _) => return Err(type_error(&v)),
    })
}

pub(super) fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Int(_) => "integer",
        Value::Float(_) => "double precision",
        Value::Float4(_) => "real",
        Value::Text(_) => "text",
        Value::Date(_) => "date",
        Value::Timestamp(_) => "timestamp",
        Value::TimestampTz(_) => "timestamp with time zone",
        Value::Interval(_) => "interval",
        Value::Array(_) => "array",
        Value::Record(_) => "record",
        Value::Reg(..) => "oid",
        Value::Uuid(_) => "uuid",
        Value::Bytes(_) => "bytea",
        Value::Numeric(_) => "numeric",
        Value::Json(_) => "json",
        Value::Jsonb(_) => "jsonb",
        Value::JsonPath(_) => "jsonpath",
        Value::Time(_) => "time without time zone",
        Value::TimeTz(_) => "time with time zone",
        Value::Enum(_) => "enum",
    }
}

/// `jsonb::numeric` and its kin: the scalar as the SQL type, or 22023
/// "cannot cast jsonb object to type numeric".
fn jsonb_scalar(j: &snapscale_values::json::Jsonb, ty: SqlType, style: Style) -> Result<Value, SqlError> {
    use snapscale_values::json::Jsonb;
    let target = match ty {
        SqlType::Bool => "boolean",
        SqlType::Numeric(_) => "numeric",
        SqlType::Int2 => "smallint",
        SqlType::Int4 => "integer",
        SqlType::Int8 => "bigint",
        _ => "double precision",
    };
    let kind = match j {
        Jsonb::Null => "null",
        Jsonb::Bool(_) => "boolean",
        Jsonb::Number(_) => "numeric",
        Jsonb::String(_) => "string",
        Jsonb::Array(_) => "array",
        Jsonb::Object(_) => "object",
    };
    let wrong = || {
        SqlError::new(SqlState::INVALID_PARAMETER_VALUE, format!("cannot cast jsonb {kind} to type {target}"))
    };
    match (j, ty) {
        (Jsonb::Bool(b), SqlType::Bool) => Ok(Value::Bool(*b)),
        (Jsonb::Number(n), ty) if ty != SqlType::Bool => cast(Value::Numeric(n.clone()), ty, true, style),
        _ => Err(wrong()),
    }
}

/// double precision to real, with PostgreSQL's overflow and underflow
/// errors (22003).
fn narrow(f: f64) -> Result<f32, SqlError> {
    let r = f as f32;
    if r.is_infinite() && f.is_finite() {
        return Err(SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow"));
    }
    if r == 0.0 && f != 0.0 {
        return Err(SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: underflow"));
    }
    Ok(r)
}
