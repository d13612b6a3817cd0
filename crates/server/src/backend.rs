//! Backend messages built from the SQL layer's values: errors and notices
//! with their fields, row descriptions with PostgreSQL's type OIDs and
//! sizes, data rows in text or binary.

use bytes::{BufMut, BytesMut};
use pgwire::messages::data::{DataRow, FieldDescription, RowDescription};
use pgwire::messages::response::{ErrorResponse, NoticeResponse};
use pgwire::messages::PgWireBackendMessage;
use snapscale_sql::types::Zone;
use snapscale_sql::wire::encode_binary;
use snapscale_sql::SqlState;
use snapscale_sql::{Column, Notice, SqlError, SqlType, Value};

/// An ErrorResponse; `severity` is ERROR or FATAL.
pub fn error(severity: &str, e: &SqlError) -> PgWireBackendMessage {
    let mut fields = vec![
        (b'S', severity.to_owned()),
        (b'V', severity.to_owned()),
        (b'C', e.code.code().to_owned()),
        (b'M', e.message.clone()),
    ];
    if let Some(d) = &e.detail {
        fields.push((b'D', d.clone()));
    }
    if let Some(p) = e.position {
        fields.push((b'P', p.to_string()));
    }
    if let Some(h) = &e.hint {
        fields.push((b'H', h.clone()));
    }
    if let Some(o) = &e.object {
        for (tag, value) in [(b's', &o.schema), (b't', &o.table), (b'c', &o.column), (b'n', &o.constraint)] {
            if let Some(v) = value {
                fields.push((tag, v.clone()));
            }
        }
    }
    PgWireBackendMessage::ErrorResponse(ErrorResponse::new(fields))
}

/// A NoticeResponse (NOTICE or WARNING).
pub fn notice(n: Notice) -> PgWireBackendMessage {
    let fields = vec![
        (b'S', n.severity.to_owned()),
        (b'V', n.severity.to_owned()),
        (b'C', n.code.code().to_owned()),
        (b'M', n.message),
    ];
    PgWireBackendMessage::NoticeResponse(NoticeResponse::new(fields))
}

fn type_size(ty: SqlType) -> i16 {
    match ty {
        SqlType::Bool => 1,
        SqlType::Int2 => 2,
        SqlType::Int4 | SqlType::Date => 4,
        SqlType::Int8 | SqlType::Float8 | SqlType::Timestamp | SqlType::TimestampTz => 8,
        SqlType::Interval => 16,
        SqlType::Char1 => 1,
        // void is pass-by-value with PostgreSQL's typlen 4.
        SqlType::Oid | SqlType::Reg(_) | SqlType::Void => 4,
        SqlType::Name => 64,
        SqlType::Text
        | SqlType::Varchar(_)
        | SqlType::Char(_)
        | SqlType::Array(_)
        | SqlType::Int2Vector
        | SqlType::OidVector
        | SqlType::Record(_) => -1,
    }
}

fn type_modifier(ty: SqlType) -> i32 {
    match ty {
        SqlType::Varchar(Some(n)) | SqlType::Char(n) => n as i32 + 4,
        _ => -1,
    }
}

/// RowDescription; `binary[i]` says column i is sent in binary.
pub fn row_description(columns: &[Column], binary: &[bool]) -> PgWireBackendMessage {
    let fields = columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            FieldDescription::new(
                c.name.clone(),
                0,
                0,
                c.ty.oid(),
                type_size(c.ty),
                type_modifier(c.ty),
                i16::from(binary.get(i).copied().unwrap_or(false)),
            )
        })
        .collect();
    PgWireBackendMessage::RowDescription(RowDescription::new(fields))
}

/// DataRow.
/// DataRow; text columns show timestamptz in `zone`, the session's
/// TimeZone.
pub fn data_row(columns: &[Column], binary: &[bool], row: &[Value], zone: Zone) -> PgWireBackendMessage {
    let mut data = BytesMut::new();
    for (i, v) in row.iter().enumerate() {
        let bytes = if binary.get(i).copied().unwrap_or(false) {
            encode_binary(columns[i].ty, v)
        } else {
            v.to_text_as(columns[i].ty, zone).map(String::into_bytes)
        };
        match bytes {
            None => data.put_i32(-1),
            Some(b) => {
                data.put_i32(b.len() as i32);
                data.put_slice(&b);
            }
        }
    }
    PgWireBackendMessage::DataRow(DataRow::new(data, row.len() as i16))
}

/// Format codes as Bind sends them: none = all text, one = all columns,
/// else one per column. A count that is neither 0, 1 nor `n` is 08P01 with
/// the message `mismatch` words; codes other than 0 and 1 are 22023.
pub fn formats(codes: &[i16], n: usize, mismatch: impl FnOnce() -> String) -> Result<Vec<bool>, SqlError> {
    if codes.len() > 1 && codes.len() != n {
        return Err(SqlError::new(SqlState::PROTOCOL_VIOLATION, mismatch()));
    }
    if let Some(bad) = codes.iter().find(|c| !matches!(c, 0 | 1)) {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("unsupported format code: {bad}"),
        ));
    }
    Ok(match codes {
        [] => vec![false; n],
        [one] => vec![*one == 1; n],
        many => many.iter().map(|c| *c == 1).collect(),
    })
}

/// The type a Parse message declares for a parameter: `None` to infer it.
pub fn declared_type(oid: u32) -> Result<Option<SqlType>, SqlError> {
    Ok(Some(match oid {
        0 => return Ok(None),
        16 => SqlType::Bool,
        20 => SqlType::Int8,
        21 => SqlType::Int2,
        23 => SqlType::Int4,
        25 => SqlType::Text,
        701 => SqlType::Float8,
        1042 => SqlType::Char(1),
        1043 => SqlType::Varchar(None),
        1082 => SqlType::Date,
        1114 => SqlType::Timestamp,
        1184 => SqlType::TimestampTz,
        1186 => SqlType::Interval,
        // unknown: infer from context.
        705 => return Ok(None),
        other => SqlType::from_oid(other).ok_or_else(|| {
            SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("parameter type oid {other} is not supported"),
            )
        })?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_counts_and_codes() {
        let never = || unreachable!();
        assert_eq!(formats(&[], 2, never).unwrap(), [false, false]);
        assert_eq!(formats(&[1], 2, never).unwrap(), [true, true]);
        assert_eq!(formats(&[0, 1], 2, never).unwrap(), [false, true]);
        let e = formats(&[0, 1], 3, || "two for three".into()).unwrap_err();
        assert_eq!((e.code, e.message.as_str()), (SqlState::PROTOCOL_VIOLATION, "two for three"));
        assert_eq!(formats(&[7], 1, never).unwrap_err().message, "unsupported format code: 7");
        assert_eq!(formats(&[0, -1], 2, never).unwrap_err().code, SqlState::INVALID_PARAMETER_VALUE);
    }
}
