//! Backend messages of the query phase, written straight into the
//! connection's output buffer: errors and notices with their fields, row
//! descriptions with PostgreSQL's type OIDs and sizes, data rows in text or
//! binary, and the short acknowledgements of the extended protocol.
//!
//! Why not pgwire's message types: each of those is built as an owned
//! value (a `Vec` of fields, a `BytesMut` per data row, a `String` per
//! tag) and then copied into the buffer; at a point lookup per round trip
//! those allocations and copies were a tenth of the server's instructions
//! (docs/results/speed.md). A message here borrows what it describes and
//! is encoded once, in place. pgwire still runs startup and
//! authentication (`startup.rs`).

use std::io;

use snapscale_sql::wire::encode_binary;
use snapscale_sql::{Column, Notice, SqlError, SqlState, SqlType, Value};

/// A message the server writes: its type byte, its length, its body.
pub trait Message {
    /// Appends the whole message to `out`.
    fn encode(&self, out: &mut Vec<u8>) -> io::Result<()>;
}

/// Writes a message of type `ty` whose body `body` appends, then fills in
/// the length. A body past the protocol's int32 length is refused (the
/// connection then ends, as it would for any write error) and `out` is left
/// as it was.
fn framed(out: &mut Vec<u8>, ty: u8, body: impl FnOnce(&mut Vec<u8>)) -> io::Result<()> {
    let start = out.len();
    out.push(ty);
    put_be(out, 0i32);
    body(out);
    let Ok(len) = i32::try_from(out.len() - start - 1) else {
        out.truncate(start);
        return Err(io::Error::other("a backend message longer than the protocol allows"));
    };
    out[start + 1..start + 5].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// An integer of the protocol, in network byte order.
trait NetInt: Copy {
    fn put(self, out: &mut Vec<u8>);
}

macro_rules! net_int {
    ($($t:ty),*) => {$(
        impl NetInt for $t {
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_be_bytes());
            }
        }
    )*};
}

net_int!(i16, u16, i32, u32);

/// Appends `v` in network byte order (a store of its width, not a copy
/// through a slice of unknown length).
fn put_be(out: &mut Vec<u8>, v: impl NetInt) {
    v.put(out);
}

/// A count of columns or parameters, which the protocol carries in 16 bits
/// and clients read as signed. The binder keeps rows within 1 664 columns
/// and parameters within 65 535 (PostgreSQL's limits), so a larger count is
/// a bug; it ends the connection rather than desynchronise the client.
fn count(n: usize, max: usize) -> io::Result<u16> {
    match u16::try_from(n) {
        Ok(c) if n <= max => Ok(c),
        _ => Err(io::Error::other(format!("a backend message counting {n} fields, more than {max}"))),
    }
}

/// A NUL-terminated string. The protocol cannot carry a NUL inside one, so
/// an interior NUL (from a client's bytes quoted in a message) ends the
/// string there rather than shift every field after it.
fn put_cstr(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    let end = memchr_nul(bytes).unwrap_or(bytes.len());
    out.extend_from_slice(&bytes[..end]);
    out.push(0);
}

fn memchr_nul(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == 0)
}

/// A message with no body: ParseComplete, BindComplete, CloseComplete,
/// NoData, PortalSuspended, EmptyQueryResponse, CopyDone.
#[derive(Clone, Copy, Debug)]
pub struct Bare(u8);

pub const PARSE_COMPLETE: Bare = Bare(b'1');
pub const BIND_COMPLETE: Bare = Bare(b'2');
pub const CLOSE_COMPLETE: Bare = Bare(b'3');
pub const NO_DATA: Bare = Bare(b'n');
pub const PORTAL_SUSPENDED: Bare = Bare(b's');
pub const EMPTY_QUERY: Bare = Bare(b'I');
pub const COPY_DONE: Bare = Bare(b'c');

impl Message for Bare {
    fn encode(&self, out: &mut Vec<u8>) -> io::Result<()> {
        out.push(self.0);
        put_be(out, 4i32);
        Ok(())
    }
}

/// CommandComplete with its tag (`SELECT 1`, `UPDATE 3`, …).
pub struct CommandComplete<'a>(pub &'a str);

impl Message for CommandComplete<'_> {
    fn encode(&self, out: &mut Vec<u8>) -> io::Result<()> {
        framed(out, b'C', |out| put_cstr(out, self.0))
    }
}

/// ReadyForQuery with the transaction status byte (I, T or E).
pub struct ReadyForQuery(pub u8);

impl Message for ReadyForQuery {
    fn encode(&self, out: &mut Vec<u8>) -> io::Result<()> {
        out.push(b'Z');
        put_be(out, 5i32);
        out.push(self.0);
        Ok(())
    }
}

/// ParameterStatus: a reported setting's name and value.
pub struct ParameterStatus<'a>(pub &'a str, pub &'a str);

impl Message for ParameterStatus<'_> {
    fn encode(&self, out: &mut Vec<u8>) -> io::Result<()> {
        framed(out, b'S', |out| {
            put_cstr(out, self.0);
            put_cstr(out, self.1);
        })
    }
}

/// ParameterDescription: the type OIDs of a statement's parameters.
pub struct ParameterDescription<'a>(pub &'a [SqlType]);

impl Message for ParameterDescription<'_> {
    fn encode(&self, out: &mut Vec<u8>) -> io::Result<()> {
        // At most 65 535 parameters (42P02 past that, at parse).
        let n = count(self.0.len(), usize::from(u16::MAX))?;
        framed(out, b't', |out| {
            put_be(out, n);
            for ty in self.0 {
                put_be(out, ty.oid());
            }
        })
    }
}

/// ErrorResponse (severity ERROR or FATAL) with PostgreSQL's fields.
pub struct ErrorResponse<'a> {
    pub severity: &'a str,
    pub error: &'a SqlError,
}

/// An ERROR.
pub fn error(e: &SqlError) -> ErrorResponse<'_> {
    ErrorResponse { severity: "ERROR", error: e }
}

/// A FATAL error (the connection ends after it).
pub fn fatal(e: &SqlError) -> ErrorResponse<'_> {
    ErrorResponse { severity: "FATAL", error: e }
}

impl Message for ErrorResponse<'_> {
    fn encode(&self, out: &mut Vec<u8>) -> io::Result<()> {
        let e = self.error;
        framed(out, b'E', |out| {
            let mut field = |tag: u8, value: &str| {
                out.push(tag);
                put_cstr(out, value);
            };
            field(b'S', self.severity);
            field(b'V', self.severity);
            field(b'C', e.sqlstate());
            field(b'M', &e.message);
            if let Some(d) = &e.detail {
                field(b'D', d);
            }
            if let Some(p) = e.position {
                field(b'P', itoa::Buffer::new().format(p));
            }
            if let Some(h) = &e.hint {
                field(b'H', h);
            }
            if let Some(i) = &e.internal {
                field(b'p', itoa::Buffer::new().format(i.position));
                field(b'q', &i.query);
            }
            if let Some(w) = &e.context {
                field(b'W', w);
            }
            if let Some(o) = &e.object {
                for (tag, value) in [
                    (b's', &o.schema),
                    (b't', &o.table),
                    (b'c', &o.column),
                    (b'd', &o.datatype),
                    (b'n', &o.constraint),
                ] {
                    if let Some(v) = value {
                        field(tag, v);
                    }
                }
            }
            out.push(0);
        })
    }
}

/// NoticeResponse (NOTICE or WARNING).
pub struct NoticeResponse<'a>(pub &'a Notice);

impl Message for NoticeResponse<'_> {
    fn encode(&self, out: &mut Vec<u8>) -> io::Result<()> {
        let n = self.0;
        framed(out, b'N', |out| {
            for (tag, value) in
                [(b'S', n.severity), (b'V', n.severity), (b'C', n.sqlstate()), (b'M', &n.message)]
            {
                out.push(tag);
                put_cstr(out, value);
            }
            if let Some(detail) = &n.detail {
                out.push(b'D');
                put_cstr(out, detail);
            }
            if let Some(hint) = &n.hint {
                out.push(b'H');
                put_cstr(out, hint);
            }
            if let Some(p) = n.position {
                out.push(b'P');
                put_cstr(out, itoa::Buffer::new().format(p));
            }
            out.push(0);
        })
    }
}

/// Result formats per column, as Bind gave them: every column in text (no
/// codes, or one 0), every column in binary (one 1), or one code each.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Formats {
    #[default]
    Text,
    Binary,
    Each(Box<[bool]>),
}

impl Formats {
    /// True if column (or parameter) `i` is in binary.
    pub fn binary(&self, i: usize) -> bool {
        match self {
            Formats::Text => false,
            Formats::Binary => true,
            Formats::Each(each) => each.get(i).copied().unwrap_or(false),
        }
    }
}

/// Format codes as Bind sends them: none = all text, one = all columns,
/// else one per column. A count that is neither 0, 1 nor `n` is 08P01 with
/// the message `mismatch` words; codes other than 0 and 1 are 22023.
pub fn formats(codes: &[i16], n: usize, mismatch: impl FnOnce() -> String) -> Result<Formats, SqlError> {
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
        [] | [0] => Formats::Text,
        [_] => Formats::Binary,
        many => Formats::Each(many.iter().map(|c| *c == 1).collect()),
    })
}

fn type_size(ty: SqlType) -> i16 {
    match ty {
        SqlType::Bool => 1,
        SqlType::Int2 => 2,
        SqlType::Int4 | SqlType::Date | SqlType::Float4 => 4,
        SqlType::Int8 | SqlType::Float8 | SqlType::Timestamp | SqlType::TimestampTz | SqlType::Time => 8,
        SqlType::TimeTz => 12,
        SqlType::Interval | SqlType::Uuid => 16,
        SqlType::Char1 => 1,
        // void is pass-by-value with PostgreSQL's typlen 4.
        SqlType::Oid
        | SqlType::Reg(_)
        | SqlType::Void
        | SqlType::Trigger
        | SqlType::Poly(_)
        | SqlType::Enum(_) => 4,
        SqlType::Name => 64,
        SqlType::Text
        | SqlType::Varchar(_)
        | SqlType::Char(_)
        | SqlType::Array(_)
        | SqlType::Int2Vector
        | SqlType::OidVector
        | SqlType::Record(_)
        | SqlType::Composite(_)
        | SqlType::Bytea
        | SqlType::Refcursor
        | SqlType::Numeric(_)
        | SqlType::Json
        | SqlType::Jsonb
        | SqlType::JsonPath => -1,
    }
}

fn type_modifier(ty: SqlType) -> i32 {
    ty.typmod()
}

/// RowDescription of `columns` sent in `formats`.
pub struct RowDescription<'a> {
    pub columns: &'a [Column],
    pub formats: &'a Formats,
}

impl Message for RowDescription<'_> {
    fn encode(&self, out: &mut Vec<u8>) -> io::Result<()> {
        // A select list has at most 1 664 columns (54011 at bind).
        let n = count(self.columns.len(), i16::MAX as usize)?;
        framed(out, b'T', |out| {
            put_be(out, n);
            for (i, c) in self.columns.iter().enumerate() {
                put_cstr(out, &c.name);
                // Table OID and column number: not tracked (0), as for an
                // expression.
                put_be(out, 0u32);
                put_be(out, 0i16);
                put_be(out, c.ty.oid());
                put_be(out, type_size(c.ty));
                put_be(out, type_modifier(c.ty));
                put_be(out, i16::from(self.formats.binary(i)));
            }
        })
    }
}

/// DataRow: `row`'s values in `formats`, text columns showing timestamptz
/// in `zone`, the session's TimeZone.
pub struct DataRow<'a> {
    pub columns: &'a [Column],
    pub formats: &'a Formats,
    pub row: &'a [Value],
    pub zone: snapscale_sql::Style,
}

impl Message for DataRow<'_> {
    fn encode(&self, out: &mut Vec<u8>) -> io::Result<()> {
        let n = count(self.row.len(), i16::MAX as usize)?;
        framed(out, b'D', |out| {
            put_be(out, n);
            for (i, v) in self.row.iter().enumerate() {
                let ty = self.columns[i].ty;
                if self.formats.binary(i) {
                    put_value(out, encode_binary(ty, v).as_deref());
                    continue;
                }
                // The common kinds are written in place; the rest through
                // their text form (the same text: Value::to_text_as).
                match v {
                    Value::Null => put_be(out, -1i32),
                    Value::Int(n) => put_value(out, Some(itoa::Buffer::new().format(*n).as_bytes())),
                    Value::Text(s) => put_value(out, Some(s.as_bytes())),
                    Value::Bool(b) => put_value(out, Some(if *b { b"t" } else { b"f" })),
                    other => put_value(out, other.to_text_as(ty, self.zone).as_deref().map(str::as_bytes)),
                }
            }
        })
    }
}

/// One DataRow field: its length and bytes, or −1 for NULL.
fn put_value(out: &mut Vec<u8>, bytes: Option<&[u8]>) {
    match bytes {
        None => put_be(out, -1i32),
        Some(b) => {
            // A value of a gigabyte or more is refused by `framed`, whose
            // length check covers the whole message.
            put_be(out, i32::try_from(b.len()).unwrap_or(i32::MAX));
            out.extend_from_slice(b);
        }
    }
}

/// CopyInResponse ('G'), CopyOutResponse ('H') or CopyBothResponse ('W'):
/// the overall format and as many column formats, all the same.
pub struct CopyResponse {
    pub kind: u8,
    pub binary: bool,
    pub columns: usize,
}

impl Message for CopyResponse {
    fn encode(&self, out: &mut Vec<u8>) -> io::Result<()> {
        let n = count(self.columns, i16::MAX as usize)?;
        framed(out, self.kind, |out| {
            let format = i16::from(self.binary);
            out.push(u8::from(self.binary));
            put_be(out, n);
            for _ in 0..self.columns {
                put_be(out, format);
            }
        })
    }
}

/// CopyData.
pub struct CopyData<'a>(pub &'a [u8]);

impl Message for CopyData<'_> {
    fn encode(&self, out: &mut Vec<u8>) -> io::Result<()> {
        framed(out, b'd', |out| out.extend_from_slice(self.0))
    }
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
        assert_eq!(formats(&[], 2, never).unwrap(), Formats::Text);
        assert_eq!(formats(&[1], 2, never).unwrap(), Formats::Binary);
        assert_eq!(formats(&[0], 2, never).unwrap(), Formats::Text);
        assert_eq!(formats(&[0, 1], 2, never).unwrap(), Formats::Each(Box::new([false, true])));
        let e = formats(&[0, 1], 3, || "two for three".into()).unwrap_err();
        assert_eq!((e.code, e.message.as_str()), (SqlState::PROTOCOL_VIOLATION, "two for three"));
        assert_eq!(formats(&[7], 1, never).unwrap_err().message, "unsupported format code: 7");
        assert_eq!(formats(&[0, -1], 2, never).unwrap_err().code, SqlState::INVALID_PARAMETER_VALUE);
    }

    fn encoded(m: impl Message) -> Vec<u8> {
        let mut out = Vec::new();
        m.encode(&mut out).unwrap();
        out
    }

    #[test]
    fn messages_are_framed_as_the_protocol_says() {
        assert_eq!(encoded(BIND_COMPLETE), b"2\0\0\0\x04");
        assert_eq!(encoded(ReadyForQuery(b'I')), b"Z\0\0\0\x05I");
        assert_eq!(encoded(CommandComplete("SELECT 1")), b"C\0\0\0\x0dSELECT 1\0");
        let columns = [
            Column { name: "a".into(), ty: SqlType::Int4 },
            Column { name: "b".into(), ty: SqlType::Text },
            Column { name: "c".into(), ty: SqlType::Bool },
        ];
        let row = [Value::Int(-42), Value::Null, Value::Bool(true)];
        let text = DataRow {
            columns: &columns,
            formats: &Formats::Text,
            row: &row,
            zone: snapscale_sql::Style::default(),
        };
        assert_eq!(encoded(text), b"D\0\0\0\x16\0\x03\0\0\0\x03-42\xff\xff\xff\xff\0\0\0\x01t");
        let binary = DataRow {
            columns: &columns[..1],
            formats: &Formats::Binary,
            row: &row[..1],
            zone: snapscale_sql::Style::default(),
        };
        assert_eq!(encoded(binary), b"D\0\0\0\x0e\0\x01\0\0\0\x04\xff\xff\xff\xd6");
        let description = RowDescription { columns: &columns[..1], formats: &Formats::Text };
        assert_eq!(
            encoded(description),
            b"T\0\0\0\x1a\0\x01a\0\0\0\0\0\0\0\0\0\0\x17\0\x04\xff\xff\xff\xff\0\0"
        );
    }

    #[test]
    fn a_count_the_protocol_cannot_carry_is_refused_not_wrapped() {
        let columns: Vec<Column> =
            (0..40_000).map(|i| Column { name: format!("c{i}"), ty: SqlType::Int4 }).collect();
        let mut out = b"before".to_vec();
        assert!(RowDescription { columns: &columns, formats: &Formats::Text }.encode(&mut out).is_err());
        assert_eq!(out, b"before", "nothing of it is left in the buffer");
        let row = vec![Value::Null; 40_000];
        let data = DataRow {
            columns: &columns,
            formats: &Formats::Text,
            row: &row,
            zone: snapscale_sql::Style::default(),
        };
        assert!(data.encode(&mut out).is_err());
        assert!(RowDescription { columns: &columns[..1664], formats: &Formats::Text }
            .encode(&mut out)
            .is_ok());
    }

    #[test]
    fn an_interior_nul_ends_the_string_instead_of_shifting_the_fields() {
        let e = SqlError::new(SqlState::INVALID_PARAMETER_VALUE, "bad\0value");
        let bytes = encoded(error(&e));
        let len = i32::from_be_bytes(bytes[1..5].try_into().unwrap()) as usize;
        assert_eq!(len + 1, bytes.len(), "the length matches what was written");
        assert!(bytes.windows(4).any(|w| w == b"Mbad"));
        assert!(!bytes.windows(5).any(|w| w == b"value"));
        assert_eq!(bytes.last(), Some(&0));
    }

    #[test]
    fn fields_of_an_error_in_postgresql_order() {
        let e = SqlError::new(SqlState::UNIQUE_VIOLATION, "dup").with_detail("Key exists.");
        let bytes = encoded(error(&e));
        assert_eq!(&bytes[5..], b"SERROR\0VERROR\0C23505\0Mdup\0DKey exists.\0\0");
    }

    #[test]
    fn a_domain_check_names_its_schema_data_type_and_constraint() {
        // As PostgreSQL's errdomainconstraint fills them (psycopg's
        // diag.datatype_name, node-postgres' dataType).
        let e = SqlError::new(SqlState::CHECK_VIOLATION, "v")
            .on_datatype("public", "pos")
            .on_constraint("pos_check");
        let bytes = encoded(error(&e));
        assert_eq!(&bytes[5..], b"SERROR\0VERROR\0C23514\0Mv\0spublic\0dpos\0npos_check\0\0");
    }
}
