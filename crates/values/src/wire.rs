//! Values in the protocol's formats: parameters arrive as text or binary,
//! results leave as text or binary (rust-postgres asks for binary).

use snapscale_sqlstate::SqlState;

use crate::error::SqlError;
use crate::{SqlType, Value, Zone};

/// PostgreSQL's epoch (2000-01-01) is the origin of binary dates and
/// timestamps, as it is of [`Value::Date`] and [`Value::Timestamp`].
fn protocol_violation(ty: SqlType) -> SqlError {
    SqlError::new(
        SqlState::INVALID_BINARY_REPRESENTATION,
        format!("incorrect binary data format in bind parameter of type {}", ty.name()),
    )
}

/// Decodes a Bind parameter of type `ty`; `None` bytes are NULL. Text
/// input of a timestamptz without a zone is wall-clock time in `zone`, the
/// session's TimeZone.
pub fn decode_param(
    ty: SqlType,
    binary: bool,
    bytes: Option<&[u8]>,
    zone: impl Into<crate::Style> + Copy,
) -> Result<Value, SqlError> {
    let Some(bytes) = bytes else { return Ok(Value::Null) };
    if !binary {
        let text = std::str::from_utf8(bytes).map_err(|_| {
            SqlError::new(
                SqlState::CHARACTER_NOT_IN_REPERTOIRE,
                "invalid byte sequence for encoding \"UTF8\"",
            )
        })?;
        return Value::parse_in(ty, text, zone);
    }
    let fixed = |n: usize| -> Result<&[u8], SqlError> {
        if bytes.len() == n {
            Ok(bytes)
        } else {
            Err(protocol_violation(ty))
        }
    };
    Ok(match ty {
        SqlType::Int2 => Value::Int(i16::from_be_bytes(fixed(2)?.try_into().expect("2 bytes")).into()),
        SqlType::Int4 => Value::Int(i32::from_be_bytes(fixed(4)?.try_into().expect("4 bytes")).into()),
        SqlType::Int8 => Value::Int(i64::from_be_bytes(fixed(8)?.try_into().expect("8 bytes"))),
        SqlType::Float8 => Value::Float(f64::from_be_bytes(fixed(8)?.try_into().expect("8 bytes"))),
        SqlType::Float4 => Value::Float4(f32::from_be_bytes(fixed(4)?.try_into().expect("4 bytes"))),
        SqlType::Bool => Value::Bool(fixed(1)?[0] != 0),
        SqlType::Date => Value::Date(i32::from_be_bytes(fixed(4)?.try_into().expect("4 bytes"))),
        SqlType::Timestamp => Value::Timestamp(i64::from_be_bytes(fixed(8)?.try_into().expect("8 bytes"))),
        SqlType::TimestampTz => {
            Value::TimestampTz(i64::from_be_bytes(fixed(8)?.try_into().expect("8 bytes")))
        }
        // PostgreSQL's layout: microseconds, days, months.
        SqlType::Interval => {
            let b = fixed(16)?;
            let micros = i64::from_be_bytes(b[..8].try_into().expect("8 bytes"));
            let days = i32::from_be_bytes(b[8..12].try_into().expect("4 bytes"));
            let months = i32::from_be_bytes(b[12..16].try_into().expect("4 bytes"));
            Value::Interval(crate::Interval { months, days, micros })
        }
        SqlType::Text
        | SqlType::Varchar(_)
        | SqlType::Char(_)
        | SqlType::Name
        | SqlType::Char1
        | SqlType::Refcursor => {
            let text = std::str::from_utf8(bytes).map_err(|_| protocol_violation(ty))?;
            Value::parse(ty, text)?
        }
        SqlType::Oid => Value::Int(u32::from_be_bytes(fixed(4)?.try_into().expect("4 bytes")).into()),
        // The oid; its name is looked up when the value is cast or printed
        // (`types::Reg`), here it prints as the number.
        SqlType::Reg(_) => {
            let oid = u32::from_be_bytes(fixed(4)?.try_into().expect("4 bytes"));
            Value::Reg(oid, oid.to_string().into())
        }
        SqlType::Array(_) | SqlType::Int2Vector | SqlType::OidVector => decode_array(ty, bytes)?,
        SqlType::Record(_) => {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "input of anonymous composite types is not implemented",
            ))
        }
        // PostgreSQL's binary record needs the attributes' types: refused.
        SqlType::Composite(u) => {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("binary input of composite type {} is not supported", u.name()),
            ))
        }
        SqlType::Enum(_) => {
            let text = std::str::from_utf8(bytes).map_err(|_| protocol_violation(ty))?;
            Value::parse(ty, text)?
        }
        // PostgreSQL's void_recv takes any bytes.
        SqlType::Void | SqlType::Trigger | SqlType::Poly(_) => Value::Text(String::new()),
        SqlType::Uuid => Value::Uuid(fixed(16)?.try_into().expect("16 bytes")),
        SqlType::Bytea => Value::Bytes(bytes.into()),
        SqlType::Json => Value::Json(crate::json::json_from_wire(bytes)?.into()),
        SqlType::Jsonb => Value::Jsonb(crate::json::Jsonb::from_wire(bytes)?),
        SqlType::JsonPath => Value::JsonPath(crate::json::JsonPath::from_wire(bytes)?.into()),
        SqlType::Time => Value::Time(crate::time_from_wire(bytes)?),
        SqlType::TimeTz => Value::TimeTz(crate::timetz_from_wire(bytes)?),
        SqlType::Numeric(typmod) => {
            let n = crate::numeric::Numeric::from_wire(bytes)?;
            Value::Numeric(if typmod >= 0 { n.apply_typmod_raw(typmod)? } else { n })
        }
    })
}

/// PostgreSQL's binary array: dimensions, a has-NULLs flag, the element
/// type's OID, each dimension's length and lower bound, then each element
/// as a length (-1 for NULL) and its binary form.
fn decode_array(ty: SqlType, bytes: &[u8]) -> Result<Value, SqlError> {
    let elem = ty.elem().expect("an array type");
    let mut at = 0;
    let int = |at: &mut usize| -> Result<i32, SqlError> {
        let b = bytes.get(*at..*at + 4).ok_or_else(|| protocol_violation(ty))?;
        *at += 4;
        Ok(i32::from_be_bytes(b.try_into().expect("4 bytes")))
    };
    let ndim = int(&mut at)?;
    let flags = int(&mut at)?;
    let elem_oid = int(&mut at)? as u32;
    if ndim < 0 {
        return Err(SqlError::new(
            SqlState::INVALID_BINARY_REPRESENTATION,
            format!("invalid number of dimensions: {ndim}"),
        ));
    }
    if ndim as usize > crate::MAX_DIMS {
        return Err(crate::too_many_dims(ndim as usize));
    }
    if flags != 0 && flags != 1 {
        return Err(SqlError::new(SqlState::INVALID_BINARY_REPRESENTATION, "invalid array flags"));
    }
    if elem_oid != elem.oid() && !(elem_oid == 1043 && elem == SqlType::Text) {
        return Err(SqlError::new(
            SqlState::DATATYPE_MISMATCH,
            format!("wrong element type in binary array: {elem_oid}, expected {}", elem.oid()),
        ));
    }
    let mut dims = Vec::with_capacity(ndim as usize);
    let mut count: usize = 1;
    for _ in 0..ndim {
        let len = int(&mut at)?;
        let lower = int(&mut at)?;
        if len < 0 {
            return Err(protocol_violation(ty));
        }
        count = count.saturating_mul(len as usize);
        dims.push(crate::Dim { lower, len });
    }
    if ndim == 0 {
        count = 0;
    }
    // Each element takes at least its 4-byte length.
    if count > bytes.len() / 4 {
        return Err(protocol_violation(ty));
    }
    let mut items = Vec::with_capacity(count);
    for _ in 0..count {
        let len = int(&mut at)?;
        if len < 0 {
            items.push(Value::Null);
            continue;
        }
        let end = at
            .checked_add(len as usize)
            .filter(|&e| e <= bytes.len())
            .ok_or_else(|| protocol_violation(ty))?;
        items.push(decode_param(elem, true, Some(&bytes[at..end]), Zone::UTC)?);
        at = end;
    }
    if at != bytes.len() {
        return Err(protocol_violation(ty));
    }
    Ok(Value::Array(std::sync::Arc::new(crate::Array::from_parts(dims, items)?)))
}

/// Encodes a result value in binary format for a column of type `ty`;
/// `None` is NULL.
pub fn encode_binary(ty: SqlType, v: &Value) -> Option<Vec<u8>> {
    Some(match (ty, v) {
        (_, Value::Null) => return None,
        (SqlType::Int2, Value::Int(i)) => (*i as i16).to_be_bytes().to_vec(),
        (SqlType::Int4, Value::Int(i)) => (*i as i32).to_be_bytes().to_vec(),
        (SqlType::Int8, Value::Int(i)) => i.to_be_bytes().to_vec(),
        (SqlType::Float8, Value::Float(f)) => f.to_be_bytes().to_vec(),
        (SqlType::Float4, Value::Float4(f)) => f.to_be_bytes().to_vec(),
        (SqlType::Float8, Value::Int(i)) => (*i as f64).to_be_bytes().to_vec(),
        (SqlType::Bool, Value::Bool(b)) => vec![u8::from(*b)],
        (SqlType::Date, Value::Date(d)) => d.to_be_bytes().to_vec(),
        (SqlType::Timestamp, Value::Timestamp(t)) | (SqlType::TimestampTz, Value::TimestampTz(t)) => {
            t.to_be_bytes().to_vec()
        }
        (SqlType::Interval, Value::Interval(i)) => {
            let mut b = i.micros.to_be_bytes().to_vec();
            b.extend_from_slice(&i.days.to_be_bytes());
            b.extend_from_slice(&i.months.to_be_bytes());
            b
        }
        (SqlType::Oid, Value::Int(i)) => (*i as u32).to_be_bytes().to_vec(),
        (SqlType::Uuid, Value::Uuid(u)) => u.to_vec(),
        (SqlType::Bytea, Value::Bytes(b)) => b.to_vec(),
        (SqlType::Time, Value::Time(t)) => crate::time_to_wire(*t).to_vec(),
        (SqlType::TimeTz, Value::TimeTz(t)) => crate::timetz_to_wire(*t).to_vec(),
        (SqlType::JsonPath, Value::JsonPath(p)) => {
            let mut b = Vec::new();
            p.to_wire(&mut b);
            b
        }
        (SqlType::Jsonb, Value::Jsonb(j)) => {
            let mut b = Vec::new();
            j.to_wire(&mut b);
            b
        }
        (SqlType::Numeric(_), Value::Numeric(n)) => {
            let mut b = Vec::new();
            n.to_wire(&mut b);
            b
        }
        (SqlType::Reg(_), Value::Reg(oid, _)) => oid.to_be_bytes().to_vec(),
        (SqlType::Array(_) | SqlType::Int2Vector | SqlType::OidVector, Value::Array(items)) => {
            let elem = ty.elem().expect("an array type");
            let mut b = Vec::new();
            b.extend_from_slice(&(items.ndims() as i32).to_be_bytes());
            b.extend_from_slice(&i32::from(items.iter().any(|v| matches!(v, Value::Null))).to_be_bytes());
            b.extend_from_slice(&elem.oid().to_be_bytes());
            for d in items.dims() {
                b.extend_from_slice(&d.len.to_be_bytes());
                b.extend_from_slice(&d.lower.to_be_bytes());
            }
            for v in items.iter() {
                match encode_binary(elem, v) {
                    None => b.extend_from_slice(&(-1i32).to_be_bytes()),
                    Some(e) => {
                        b.extend_from_slice(&(e.len() as i32).to_be_bytes());
                        b.extend_from_slice(&e);
                    }
                }
            }
            b
        }
        // PostgreSQL's binary record: the field count, then each field's
        // type OID, length (-1 for NULL) and binary form.
        (SqlType::Record(r), Value::Record(fields)) => {
            let types = r.fields();
            let mut b = (fields.len() as i32).to_be_bytes().to_vec();
            for (v, (_, ty)) in fields.iter().zip(types) {
                b.extend_from_slice(&ty.oid().to_be_bytes());
                match encode_binary(ty, v) {
                    None => b.extend_from_slice(&(-1i32).to_be_bytes()),
                    Some(e) => {
                        b.extend_from_slice(&(e.len() as i32).to_be_bytes());
                        b.extend_from_slice(&e);
                    }
                }
            }
            b
        }
        // The binary form of the text types is their text, which no zone
        // changes.
        (ty, v) => v.to_text_as(ty, crate::Zone::UTC).unwrap_or_default().into_bytes(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_round_trips() {
        for (ty, v) in [
            (SqlType::Int2, Value::Int(-7)),
            (SqlType::Int4, Value::Int(1 << 30)),
            (SqlType::Int8, Value::Int(-(1 << 40))),
            (SqlType::Float8, Value::Float(2.5)),
            (SqlType::Bool, Value::Bool(true)),
            (SqlType::Text, Value::Text("héllo".into())),
            (SqlType::Date, Value::Date(-3)),
            (SqlType::Timestamp, Value::Timestamp(123_456_789)),
            (SqlType::TimestampTz, Value::TimestampTz(-123_456_789)),
            (SqlType::Oid, Value::Int(4_000_000_000)),
            (SqlType::Array(crate::Elem::Int4), Value::array(vec![Value::Int(1), Value::Null])),
            (SqlType::Array(crate::Elem::Text), Value::array(Vec::new())),
            (
                SqlType::Int2Vector,
                Value::Array(std::sync::Arc::new(crate::Array::with_lower(
                    0,
                    vec![Value::Int(1), Value::Int(3)],
                ))),
            ),
            (SqlType::Uuid, Value::Uuid([7; 16])),
            (SqlType::Bytea, Value::Bytes(vec![0, 255, 92].into())),
            (SqlType::Array(crate::Elem::Uuid), Value::array(vec![Value::Uuid([1; 16]), Value::Null])),
            (
                SqlType::Array(crate::Elem::Int8),
                crate::parse_array(SqlType::Int8, "[0:1][-1:1]={{1,2,3},{4,NULL,6}}", Zone::UTC).unwrap(),
            ),
        ] {
            let bytes = encode_binary(ty, &v);
            assert_eq!(decode_param(ty, true, bytes.as_deref(), Zone::UTC).unwrap(), v, "{ty:?}");
        }
        assert_eq!(decode_param(SqlType::Int4, true, Some(&[1, 2]), Zone::UTC).unwrap_err().code, "22P03");
        // Seven dimensions, and a negative count of them.
        let header = |ndim: i32| [ndim.to_be_bytes(), 0i32.to_be_bytes(), 23i32.to_be_bytes()].concat();
        let array = SqlType::Array(crate::Elem::Int4);
        assert_eq!(decode_param(array, true, Some(&header(7)), Zone::UTC).unwrap_err().code, "54000");
        assert_eq!(decode_param(array, true, Some(&header(-1)), Zone::UTC).unwrap_err().code, "22P03");
        assert_eq!(decode_param(SqlType::Int4, false, Some(b"42"), Zone::UTC).unwrap(), Value::Int(42));
        assert_eq!(decode_param(SqlType::Int4, false, None, Zone::UTC).unwrap(), Value::Null);
    }
}
