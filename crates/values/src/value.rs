//! The column types and the values of SQL, with PostgreSQL's text input
//! and output.
//!
//! Each type reads and writes the text format PostgreSQL 15 uses, and
//! rejects bad input with PostgreSQL's SQLSTATE and wording (22P02 invalid
//! syntax, 22003 out of range, 22001 too long, 22007/22008 bad dates).
//! `numeric` is refused with 0A000 until an exact decimal type lands.

use std::cmp::Ordering;

use snapscale_sqlstate::SqlState;

use crate::error::SqlError;
use crate::{array, float, format_array, oid, parse_array, record, Interval, Reg, Style, Zone};

/// PostgreSQL's epoch (2000-01-01) in Unix seconds.
const PG_EPOCH: i64 = 946_684_800;

/// Now, in microseconds since 2000-01-01 UTC (timestamptz's unit).
pub fn now_micros() -> i64 {
    let d = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    d.as_micros() as i64 - PG_EPOCH * 1_000_000
}

/// A column type.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum SqlType {
    /// smallint / int2.
    Int2,
    /// integer / int4.
    Int4,
    /// bigint / int8.
    Int8,
    /// double precision / float8.
    Float8,
    /// real / float4.
    Float4,
    /// boolean.
    Bool,
    /// text.
    Text,
    /// character varying(n); `None` = unlimited.
    Varchar(Option<u32>),
    /// character(n), blank-padded.
    Char(u32),
    /// date.
    Date,
    /// timestamp without time zone.
    Timestamp,
    /// timestamp with time zone: an instant, shown in the session's zone
    /// (UTC, the only zone).
    TimestampTz,
    /// interval (days and time; no months).
    Interval,
    /// oid: an object's identifier (an unsigned 32-bit number).
    Oid,
    /// name: an identifier, at most 63 bytes.
    Name,
    /// "char": one byte (the catalogs' kind codes).
    Char1,
    /// An oid alias type (regclass, regtype, …): compares as the oid,
    /// reads and prints as the object's name.
    Reg(Reg),
    /// An array of `Elem` values, of any number of dimensions.
    Array(Elem),
    /// int2vector and oidvector: the catalogs' zero-based arrays, printed
    /// as space-separated numbers.
    Int2Vector,
    OidVector,
    /// A record (row value) of a known shape: what its fields are named
    /// and hold.
    Record(Rec),
    /// numeric, with PostgreSQL's type modifier (`(precision << 16 |
    /// scale) + 4`, -1 for none): an exact decimal.
    Numeric(i32),
    /// json: validated text, kept as written.
    Json,
    /// jsonb: a normalised JSON value.
    Jsonb,
    /// jsonpath: an SQL/JSON path expression.
    JsonPath,
    /// time without time zone.
    Time,
    /// time with time zone.
    TimeTz,
    /// uuid: 16 bytes.
    Uuid,
    /// A user-defined enum type: its values are [`Value::Enum`] labels.
    Enum(crate::UserType),
    /// A user-defined composite type (`CREATE TYPE … AS (…)`): its values
    /// are [`Value::Record`]s of its attributes, which the catalog names.
    Composite(crate::UserType),
    /// bytea: a binary string.
    Bytea,
    /// refcursor: a cursor's name (text), what PL/pgSQL's cursor variables
    /// hold.
    Refcursor,
    /// void: what a function that returns nothing returns
    /// (`pg_advisory_lock`). Its one value is not NULL and prints as the
    /// empty string (held as an empty text).
    Void,
    /// trigger: what a trigger function returns (a pseudo-type: no value
    /// has it outside a trigger call).
    Trigger,
    /// A polymorphic pseudo-type of a function's parameter or result
    /// (anyelement, anyarray, …): each call resolves it to a type.
    Poly(Poly),
}

/// The polymorphic pseudo-types.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Poly {
    AnyElement,
    AnyArray,
    AnyNonArray,
    AnyEnum,
    AnyCompatible,
    AnyCompatibleArray,
    AnyCompatibleNonArray,
}

impl Poly {
    pub const ALL: [Poly; 7] = [
        Poly::AnyElement,
        Poly::AnyArray,
        Poly::AnyNonArray,
        Poly::AnyEnum,
        Poly::AnyCompatible,
        Poly::AnyCompatibleArray,
        Poly::AnyCompatibleNonArray,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Poly::AnyElement => "anyelement",
            Poly::AnyArray => "anyarray",
            Poly::AnyNonArray => "anynonarray",
            Poly::AnyEnum => "anyenum",
            Poly::AnyCompatible => "anycompatible",
            Poly::AnyCompatibleArray => "anycompatiblearray",
            Poly::AnyCompatibleNonArray => "anycompatiblenonarray",
        }
    }

    pub fn oid(self) -> u32 {
        match self {
            Poly::AnyElement => 2283,
            Poly::AnyArray => 2277,
            Poly::AnyNonArray => 2776,
            Poly::AnyEnum => 3500,
            Poly::AnyCompatible => 5077,
            Poly::AnyCompatibleArray => 5078,
            Poly::AnyCompatibleNonArray => 5079,
        }
    }

    /// The pseudo-type a name names.
    pub fn named(name: &str) -> Option<Poly> {
        Poly::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Of the anycompatible family (resolved to a common type) rather
    /// than the anyelement one (resolved to the one type given).
    pub fn compatible(self) -> bool {
        matches!(self, Poly::AnyCompatible | Poly::AnyCompatibleArray | Poly::AnyCompatibleNonArray)
    }

    /// An array of the resolved type.
    pub fn is_array(self) -> bool {
        matches!(self, Poly::AnyArray | Poly::AnyCompatibleArray)
    }
}

/// The shapes of record a function returns.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Rec {
    /// `information_schema._pg_expandarray(array)`: (x, n), an element and
    /// its position from 1.
    ExpandArray(Elem),
    /// `json[b]_each[_text](value)`: (key, value), the value json, jsonb
    /// or text.
    KeyValue(Elem),
    /// A row constructor's record (`ROW(1, 'a')`): its fields have no
    /// names to select them by.
    Anonymous,
}

impl Rec {
    /// The fields' names and types.
    pub fn fields(self) -> Vec<(&'static str, SqlType)> {
        match self {
            Rec::ExpandArray(e) => vec![("x", e.ty()), ("n", SqlType::Int4)],
            Rec::KeyValue(e) => vec![("key", SqlType::Text), ("value", e.ty())],
            Rec::Anonymous => Vec::new(),
        }
    }
}

/// The element type of an array.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Elem {
    Bool,
    Int2,
    Int4,
    Int8,
    Float8,
    Text,
    Varchar,
    Bpchar,
    Name,
    Char1,
    Oid,
    Date,
    Timestamp,
    TimestampTz,
    Interval,
    RegType,
    Uuid,
    Bytea,
    Numeric,
    Json,
    Jsonb,
    Float4,
    Time,
    TimeTz,
    /// A user-defined enum type.
    Enum(crate::UserType),
    /// A user-defined composite type: elements are [`Value::Record`]s.
    Composite(crate::UserType),
}

impl Elem {
    /// The element's type.
    pub fn ty(self) -> SqlType {
        match self {
            Elem::Bool => SqlType::Bool,
            Elem::Int2 => SqlType::Int2,
            Elem::Int4 => SqlType::Int4,
            Elem::Int8 => SqlType::Int8,
            Elem::Float8 => SqlType::Float8,
            Elem::Text => SqlType::Text,
            Elem::Varchar => SqlType::Varchar(None),
            // Elements of any length: the column's type modifier, if any,
            // holds them to one (`adjust_array_typmod`).
            Elem::Bpchar => SqlType::Char(0),
            Elem::Name => SqlType::Name,
            Elem::Char1 => SqlType::Char1,
            Elem::Oid => SqlType::Oid,
            Elem::Date => SqlType::Date,
            Elem::Timestamp => SqlType::Timestamp,
            Elem::TimestampTz => SqlType::TimestampTz,
            Elem::Interval => SqlType::Interval,
            Elem::RegType => SqlType::Reg(Reg::Type),
            Elem::Uuid => SqlType::Uuid,
            Elem::Bytea => SqlType::Bytea,
            Elem::Numeric => SqlType::Numeric(-1),
            Elem::Json => SqlType::Json,
            Elem::Jsonb => SqlType::Jsonb,
            Elem::Float4 => SqlType::Float4,
            Elem::Time => SqlType::Time,
            Elem::TimeTz => SqlType::TimeTz,
            Elem::Enum(u) => SqlType::Enum(u),
            Elem::Composite(u) => SqlType::Composite(u),
        }
    }

    /// The element type of arrays of `ty`, if there are such arrays.
    pub fn of(ty: SqlType) -> Option<Elem> {
        Some(match ty {
            SqlType::Bool => Elem::Bool,
            SqlType::Int2 => Elem::Int2,
            SqlType::Int4 => Elem::Int4,
            SqlType::Int8 => Elem::Int8,
            SqlType::Float8 => Elem::Float8,
            SqlType::Text => Elem::Text,
            SqlType::Varchar(_) => Elem::Varchar,
            SqlType::Char(_) => Elem::Bpchar,
            SqlType::Name => Elem::Name,
            SqlType::Char1 => Elem::Char1,
            SqlType::Oid => Elem::Oid,
            SqlType::Date => Elem::Date,
            SqlType::Timestamp => Elem::Timestamp,
            SqlType::TimestampTz => Elem::TimestampTz,
            SqlType::Interval => Elem::Interval,
            SqlType::Reg(Reg::Type) => Elem::RegType,
            SqlType::Uuid => Elem::Uuid,
            SqlType::Bytea => Elem::Bytea,
            SqlType::Numeric(_) => Elem::Numeric,
            SqlType::Json => Elem::Json,
            SqlType::Jsonb => Elem::Jsonb,
            SqlType::Float4 => Elem::Float4,
            SqlType::Time => Elem::Time,
            SqlType::TimeTz => Elem::TimeTz,
            SqlType::Enum(u) => Elem::Enum(u),
            SqlType::Composite(u) => Elem::Composite(u),
            _ => return None,
        })
    }

    /// The OID of the array type.
    fn array_oid(self) -> u32 {
        match self {
            Elem::Bool => 1000,
            Elem::Int2 => 1005,
            Elem::Int4 => 1007,
            Elem::Int8 => 1016,
            Elem::Float8 => 1022,
            Elem::Text => 1009,
            Elem::Varchar => 1015,
            Elem::Bpchar => 1014,
            Elem::Name => 1003,
            Elem::Char1 => 1002,
            Elem::Oid => 1028,
            Elem::Date => 1182,
            Elem::Timestamp => 1115,
            Elem::TimestampTz => 1185,
            Elem::Interval => 1187,
            Elem::RegType => 2211,
            Elem::Uuid => 2951,
            Elem::Bytea => 1001,
            Elem::Numeric => 1231,
            Elem::Json => 199,
            Elem::Jsonb => 3807,
            Elem::Float4 => 1021,
            Elem::Time => 1183,
            Elem::TimeTz => 1270,
            Elem::Enum(u) | Elem::Composite(u) => u.array_oid(),
        }
    }
}

impl SqlType {
    /// PostgreSQL's type OID (what RowDescription and Describe report).
    pub fn oid(self) -> u32 {
        match self {
            SqlType::Bool => 16,
            SqlType::Int8 => 20,
            SqlType::Int2 => 21,
            SqlType::Int4 => 23,
            SqlType::Text => 25,
            SqlType::Float8 => 701,
            SqlType::Char(_) => 1042,
            SqlType::Varchar(_) => 1043,
            SqlType::Date => 1082,
            SqlType::Timestamp => 1114,
            SqlType::TimestampTz => 1184,
            SqlType::Interval => 1186,
            SqlType::Oid => 26,
            SqlType::Name => 19,
            SqlType::Char1 => 18,
            SqlType::Reg(r) => r.type_oid(),
            SqlType::Enum(u) | SqlType::Composite(u) => u.oid(),
            SqlType::Array(e) => e.array_oid(),
            SqlType::Int2Vector => 22,
            SqlType::OidVector => 30,
            SqlType::Record(_) => 2249,
            SqlType::Void => 2278,
            SqlType::Trigger => 2279,
            SqlType::Poly(p) => p.oid(),
            SqlType::Uuid => 2950,
            SqlType::Bytea => 17,
            SqlType::Refcursor => 1790,
            SqlType::Numeric(_) => 1700,
            SqlType::Json => 114,
            SqlType::Jsonb => 3802,
            SqlType::Float4 => 700,
            SqlType::JsonPath => 4072,
            SqlType::Time => 1083,
            SqlType::TimeTz => 1266,
        }
    }

    /// The type an OID names, among the supported ones (PostgreSQL's
    /// defaults for those with a length).
    pub fn from_oid(oid: u32) -> Option<SqlType> {
        let scalars = [
            SqlType::Bool,
            SqlType::Int2,
            SqlType::Int4,
            SqlType::Int8,
            SqlType::Float8,
            SqlType::Text,
            SqlType::Varchar(None),
            SqlType::Char(1),
            SqlType::Date,
            SqlType::Timestamp,
            SqlType::TimestampTz,
            SqlType::Interval,
            SqlType::Oid,
            SqlType::Name,
            SqlType::Char1,
            SqlType::Int2Vector,
            SqlType::OidVector,
            SqlType::Uuid,
            SqlType::Bytea,
            SqlType::Refcursor,
            SqlType::Numeric(-1),
            SqlType::Json,
            SqlType::Jsonb,
            SqlType::Float4,
            SqlType::JsonPath,
            SqlType::Time,
            SqlType::TimeTz,
        ];
        scalars.into_iter().chain(Reg::ALL.into_iter().map(SqlType::Reg)).find(|t| t.oid() == oid).or_else(
            || {
                scalars
                    .into_iter()
                    .chain([SqlType::Reg(Reg::Type)])
                    .filter_map(Elem::of)
                    .map(SqlType::Array)
                    .find(|t| t.oid() == oid)
            },
        )
    }

    /// PostgreSQL's type modifier (pg_attribute.atttypmod): a length + 4
    /// for varchar(n) and char(n), numeric's encoded precision and scale,
    /// -1 for none.
    pub fn typmod(self) -> i32 {
        match self {
            SqlType::Char(0) => -1,
            SqlType::Varchar(Some(n)) | SqlType::Char(n) => n as i32 + 4,
            SqlType::Numeric(typmod) => typmod,
            _ => -1,
        }
    }

    /// The type with modifier `typmod` (as [`SqlType::typmod`] gives it).
    pub fn with_typmod(self, typmod: i32) -> SqlType {
        match (self, typmod) {
            (SqlType::Varchar(_), m) if m >= 4 => SqlType::Varchar(Some((m - 4) as u32)),
            (SqlType::Char(_), m) if m >= 4 => SqlType::Char((m - 4) as u32),
            (SqlType::Numeric(_), m) => SqlType::Numeric(m),
            (t, _) => t,
        }
    }

    /// The element type, for an array.
    pub fn elem(self) -> Option<SqlType> {
        match self {
            SqlType::Array(e) => Some(e.ty()),
            SqlType::Int2Vector => Some(SqlType::Int2),
            SqlType::OidVector => Some(SqlType::Oid),
            _ => None,
        }
    }

    /// The name PostgreSQL uses in messages ("integer", "character varying").
    pub fn name(self) -> &'static str {
        match self {
            SqlType::Enum(u) | SqlType::Composite(u) => u.name(),
            SqlType::Int2 => "smallint",
            SqlType::Int4 => "integer",
            SqlType::Int8 => "bigint",
            SqlType::Float8 => "double precision",
            SqlType::Bool => "boolean",
            SqlType::Text => "text",
            SqlType::Varchar(_) => "character varying",
            SqlType::Char(_) => "character",
            SqlType::Date => "date",
            SqlType::Timestamp => "timestamp without time zone",
            SqlType::TimestampTz => "timestamp with time zone",
            SqlType::Interval => "interval",
            SqlType::Oid => "oid",
            SqlType::Name => "name",
            SqlType::Char1 => "\"char\"",
            SqlType::Reg(r) => r.type_name(),
            SqlType::Array(e) => match e {
                Elem::Bool => "boolean[]",
                Elem::Int2 => "smallint[]",
                Elem::Int4 => "integer[]",
                Elem::Int8 => "bigint[]",
                Elem::Float8 => "double precision[]",
                Elem::Text => "text[]",
                Elem::Varchar => "character varying[]",
                Elem::Bpchar => "character[]",
                Elem::Name => "name[]",
                Elem::Char1 => "\"char\"[]",
                Elem::Oid => "oid[]",
                Elem::Date => "date[]",
                Elem::Timestamp => "timestamp without time zone[]",
                Elem::TimestampTz => "timestamp with time zone[]",
                Elem::Interval => "interval[]",
                Elem::RegType => "regtype[]",
                Elem::Uuid => "uuid[]",
                Elem::Bytea => "bytea[]",
                Elem::Numeric => "numeric[]",
                Elem::Json => "json[]",
                Elem::Jsonb => "jsonb[]",
                Elem::Float4 => "real[]",
                Elem::Time => "time without time zone[]",
                Elem::TimeTz => "time with time zone[]",
                Elem::Enum(u) | Elem::Composite(u) => u.array_name(),
            },
            SqlType::Int2Vector => "int2vector",
            SqlType::OidVector => "oidvector",
            SqlType::Record(_) => "record",
            SqlType::Void => "void",
            SqlType::Trigger => "trigger",
            SqlType::Poly(p) => p.name(),
            SqlType::Uuid => "uuid",
            SqlType::Bytea => "bytea",
            SqlType::Refcursor => "refcursor",
            SqlType::Numeric(_) => "numeric",
            SqlType::Json => "json",
            SqlType::Jsonb => "jsonb",
            SqlType::Float4 => "real",
            SqlType::JsonPath => "jsonpath",
            SqlType::Time => "time without time zone",
            SqlType::TimeTz => "time with time zone",
        }
    }

    /// PostgreSQL's internal name of the type (`int4`, `timestamptz`): what
    /// a cast's output column is called.
    pub fn internal_name(self) -> &'static str {
        match self {
            SqlType::Enum(u) | SqlType::Composite(u) => u.name(),
            SqlType::Int2 => "int2",
            SqlType::Int4 => "int4",
            SqlType::Int8 => "int8",
            SqlType::Float8 => "float8",
            SqlType::Bool => "bool",
            SqlType::Text => "text",
            SqlType::Varchar(_) => "varchar",
            SqlType::Char(_) => "bpchar",
            SqlType::Date => "date",
            SqlType::Timestamp => "timestamp",
            SqlType::TimestampTz => "timestamptz",
            SqlType::Interval => "interval",
            SqlType::Oid => "oid",
            SqlType::Name => "name",
            SqlType::Char1 => "char",
            SqlType::Reg(r) => r.type_name(),
            SqlType::Array(e) => match e {
                Elem::Bool => "_bool",
                Elem::Int2 => "_int2",
                Elem::Int4 => "_int4",
                Elem::Int8 => "_int8",
                Elem::Float8 => "_float8",
                Elem::Text => "_text",
                Elem::Varchar => "_varchar",
                Elem::Bpchar => "_bpchar",
                Elem::Name => "_name",
                Elem::Char1 => "_char",
                Elem::Oid => "_oid",
                Elem::Date => "_date",
                Elem::Timestamp => "_timestamp",
                Elem::TimestampTz => "_timestamptz",
                Elem::Interval => "_interval",
                Elem::RegType => "_regtype",
                Elem::Uuid => "_uuid",
                Elem::Bytea => "_bytea",
                Elem::Numeric => "_numeric",
                Elem::Json => "_json",
                Elem::Jsonb => "_jsonb",
                Elem::Float4 => "_float4",
                Elem::Time => "_time",
                Elem::TimeTz => "_timetz",
                Elem::Enum(u) | Elem::Composite(u) => u.array_internal(),
            },
            SqlType::Int2Vector => "int2vector",
            SqlType::OidVector => "oidvector",
            SqlType::Record(_) => "record",
            SqlType::Void => "void",
            SqlType::Trigger => "trigger",
            SqlType::Poly(p) => p.name(),
            SqlType::Uuid => "uuid",
            SqlType::Bytea => "bytea",
            SqlType::Refcursor => "refcursor",
            SqlType::Numeric(_) => "numeric",
            SqlType::Json => "json",
            SqlType::Jsonb => "jsonb",
            SqlType::Float4 => "float4",
            SqlType::JsonPath => "jsonpath",
            SqlType::Time => "time",
            SqlType::TimeTz => "timetz",
        }
    }

    /// True for the types a stored table's column may have (the catalog's
    /// own types, and arrays of them, are also allowed; the oid alias
    /// types, whose values name catalog objects, are not).
    pub fn storable(self) -> bool {
        !matches!(
            self,
            SqlType::Reg(_)
                | SqlType::Array(Elem::RegType)
                | SqlType::Record(_)
                | SqlType::Void
                | SqlType::Trigger
                | SqlType::Poly(_)
        )
    }

    /// Resolves a type name as written in DDL (`int`, `int4`, `varchar`,
    /// `character varying`, `bpchar`, ...) with its optional length.
    pub fn from_name(name: &str, length: Option<u32>) -> Result<SqlType, SqlError> {
        let n = name.trim().to_ascii_lowercase();
        Ok(match n.as_str() {
            "smallint" | "int2" => SqlType::Int2,
            "integer" | "int" | "int4" => SqlType::Int4,
            "bigint" | "int8" => SqlType::Int8,
            "double precision" | "float8" | "float" => SqlType::Float8,
            "real" | "float4" => SqlType::Float4,
            "boolean" | "bool" => SqlType::Bool,
            "text" => SqlType::Text,
            "varchar" | "character varying" => SqlType::Varchar(length),
            "char" | "character" => SqlType::Char(length.unwrap_or(1)),
            // bpchar without a length is blank-padded of any length.
            "bpchar" => SqlType::Char(length.unwrap_or(0)),
            "date" => SqlType::Date,
            "timestamp" | "timestamp without time zone" => SqlType::Timestamp,
            "timestamptz" | "timestamp with time zone" => SqlType::TimestampTz,
            "interval" => SqlType::Interval,
            "oid" => SqlType::Oid,
            "name" => SqlType::Name,
            "\"char\"" => SqlType::Char1,
            "int2vector" => SqlType::Int2Vector,
            "oidvector" => SqlType::OidVector,
            "regclass" => SqlType::Reg(Reg::Class),
            "regtype" => SqlType::Reg(Reg::Type),
            "regnamespace" => SqlType::Reg(Reg::Namespace),
            "regproc" => SqlType::Reg(Reg::Proc),
            "regprocedure" => SqlType::Reg(Reg::Procedure),
            "regrole" => SqlType::Reg(Reg::Role),
            "pg_node_tree" => SqlType::Text,
            "uuid" => SqlType::Uuid,
            "json" => SqlType::Json,
            "jsonb" => SqlType::Jsonb,
            "jsonpath" => SqlType::JsonPath,
            "time" | "time without time zone" => SqlType::Time,
            "timetz" | "time with time zone" => SqlType::TimeTz,
            "bytea" => SqlType::Bytea,
            "refcursor" => SqlType::Refcursor,
            "numeric" | "decimal" => SqlType::Numeric(-1),
            "record" => SqlType::Record(Rec::Anonymous),
            // An array type's internal name: `_int4` is int4[].
            _ if n.len() > 1 && n.starts_with('_') && !n[1..].contains(' ') => {
                match SqlType::from_name(&n[1..], None).ok().and_then(Elem::of) {
                    Some(e) => SqlType::Array(e),
                    None => {
                        return Err(SqlError::new(
                            SqlState::UNDEFINED_OBJECT,
                            format!("type \"{n}\" does not exist"),
                        ))
                    }
                }
            }
            _ => {
                return Err(SqlError::new(SqlState::UNDEFINED_OBJECT, format!("type \"{n}\" does not exist")))
            }
        })
    }
}

/// A value of some [`SqlType`], or NULL.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// A boolean.
    Bool(bool),
    /// Any integer type (the column type says which range applies).
    Int(i64),
    /// double precision.
    Float(f64),
    /// real.
    Float4(f32),
    /// text, varchar and char (char values are stored padded).
    Text(String),
    /// Days since 2000-01-01 (PostgreSQL's epoch).
    Date(i32),
    /// Microseconds since 2000-01-01 00:00:00.
    Timestamp(i64),
    /// Microseconds since 2000-01-01 00:00:00 UTC.
    TimestampTz(i64),
    /// A span of days and time.
    Interval(Interval),
    /// An array, for any array type.
    Array(std::sync::Arc<crate::Array>),
    /// A record's fields (a row value), for any record type.
    Record(std::sync::Arc<[Value]>),
    /// An oid alias value: the oid, and the object's name as it prints.
    Reg(u32, std::sync::Arc<str>),
    /// A uuid.
    Uuid([u8; 16]),
    /// A bytea.
    Bytes(std::sync::Arc<[u8]>),
    /// A numeric.
    Numeric(crate::numeric::Numeric),
    /// A json value: its text as written (validated).
    Json(std::sync::Arc<str>),
    /// A jsonb value.
    Jsonb(crate::json::Jsonb),
    /// A jsonpath.
    JsonPath(std::sync::Arc<crate::json::JsonPath>),
    /// A label of an enum type (shared with its type's definition).
    Enum(std::sync::Arc<crate::EnumLabel>),
    /// A time of day: microseconds since midnight.
    Time(i64),
    /// A time of day with its zone's offset.
    TimeTz(crate::TimeTz),
}

impl Value {
    /// A one-dimensional array (from 1) of `items`.
    pub fn array(items: Vec<Value>) -> Value {
        Value::Array(std::sync::Arc::new(crate::Array::new(items)))
    }
}

fn int_range(ty: SqlType) -> (i64, i64) {
    match ty {
        SqlType::Int2 => (i16::MIN.into(), i16::MAX.into()),
        SqlType::Int4 => (i32::MIN.into(), i32::MAX.into()),
        _ => (i64::MIN, i64::MAX),
    }
}

/// Parses PostgreSQL's integer text: optional whitespace, an optional sign,
/// decimal digits, optional whitespace.
fn parse_int(ty: SqlType, input: &str) -> Result<Value, SqlError> {
    let t = input.trim_matches(|c: char| c.is_ascii_whitespace());
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(SqlError::invalid_input(ty.name(), input));
    }
    let (lo, hi) = int_range(ty);
    match t.parse::<i64>() {
        Ok(v) if v >= lo && v <= hi => Ok(Value::Int(v)),
        _ => Err(SqlError::out_of_range_input(ty.name(), input)),
    }
}

/// PostgreSQL's parse_bool, behind boolean input, boolean settings and
/// storage parameters: unique prefixes of true/false/yes/no, on/off (at
/// least two letters), 1/0; case-insensitive; surrounding whitespace.
pub fn pg_bool(input: &str) -> Option<bool> {
    let t = input.trim().to_ascii_lowercase();
    let prefix_of = |word: &str, min: usize| t.len() >= min && word.starts_with(t.as_str());
    if prefix_of("true", 1) || prefix_of("yes", 1) || prefix_of("on", 2) || t == "1" {
        Some(true)
    } else if prefix_of("false", 1) || prefix_of("no", 1) || prefix_of("off", 2) || t == "0" {
        Some(false)
    } else {
        None
    }
}

fn parse_bool(input: &str) -> Result<Value, SqlError> {
    pg_bool(input).map(Value::Bool).ok_or_else(|| SqlError::invalid_input("boolean", input))
}

/// Applies varchar(n) / char(n) length rules: too long is an error unless
/// the excess is all spaces (then truncated); char(n) pads with spaces.
fn fit_length(ty: SqlType, input: &str, limit: u32, pad: bool) -> Result<Value, SqlError> {
    // bpchar of no declared length (an array's elements): as written.
    if limit == 0 {
        return Ok(Value::Text(input.to_owned()));
    }
    let len = input.chars().count();
    let limit = limit as usize;
    let mut s: String = if len > limit {
        let (keep, excess) = input.split_at(input.char_indices().nth(limit).map_or(input.len(), |(i, _)| i));
        if !excess.chars().all(|c| c == ' ') {
            return Err(SqlError::new(
                SqlState::STRING_DATA_RIGHT_TRUNCATION_22001,
                format!("value too long for type {}({limit})", ty.name()),
            ));
        }
        keep.to_owned()
    } else {
        input.to_owned()
    };
    if pad {
        s.extend(std::iter::repeat_n(' ', limit - s.chars().count()));
    }
    Ok(Value::Text(s))
}

impl Value {
    /// Reads `input` as PostgreSQL's text format for `ty`, a timestamp
    /// with time zone without a zone of its own in UTC (see
    /// [`Value::parse_in`]).
    pub fn parse(ty: SqlType, input: &str) -> Result<Value, SqlError> {
        Self::parse_in(ty, input, Zone::UTC)
    }

    /// Reads `input` as PostgreSQL's text format for `ty`; a timestamp
    /// with time zone that names no zone is wall-clock time in `zone` (the
    /// session's TimeZone).
    pub fn parse_in(ty: SqlType, input: &str, style: impl Into<Style> + Copy) -> Result<Value, SqlError> {
        let style: Style = style.into();
        match ty {
            SqlType::Int2 | SqlType::Int4 | SqlType::Int8 => parse_int(ty, input),
            SqlType::Float8 => float::parse(input).map(Value::Float),
            SqlType::Float4 => float::parse_f32(input).map(Value::Float4),
            SqlType::Bool => parse_bool(input),
            SqlType::Text | SqlType::Varchar(None) => Ok(Value::Text(input.to_owned())),
            SqlType::Varchar(Some(n)) => fit_length(ty, input, n, false),
            SqlType::Char(n) => fit_length(ty, input, n, true),
            SqlType::Date => {
                crate::parse_date_styled(input, &style, crate::current_instant()).map(Value::Date)
            }
            SqlType::Timestamp => {
                crate::parse_timestamp_styled(input, &style, crate::current_instant()).map(Value::Timestamp)
            }
            SqlType::TimestampTz => crate::parse_timestamptz_styled(input, &style, crate::current_instant())
                .map(Value::TimestampTz),
            SqlType::Interval => crate::parse_interval_styled(input, &style).map(Value::Interval),
            SqlType::Oid => oid::parse_oid(input).map(|o| Value::Int(o.into())),
            SqlType::Name => Ok(Value::Text(oid::truncate_name(input))),
            SqlType::Refcursor => Ok(Value::Text(input.to_owned())),
            SqlType::Char1 => Ok(Value::Text(input.chars().next().map(String::from).unwrap_or_default())),
            // Reading a name needs the catalog: the binder and the evaluator
            // do it (`types::Reg`); a number is taken as the oid itself.
            SqlType::Reg(r) => match oid::parse_oid(input) {
                Ok(o) => Ok(Value::Reg(o, input.trim().into())),
                Err(_) => Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    format!("{} input of a name is resolved when the statement is bound", r.type_name()),
                )),
            },
            SqlType::Array(e) => parse_array(e.ty(), input, style),
            SqlType::Int2Vector | SqlType::OidVector => oid::parse_vector(ty, input),
            SqlType::Record(_) => Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "input of anonymous composite types is not implemented",
            )),
            // Its labels or attributes are in the catalog: the SQL layer
            // reads them.
            SqlType::Enum(u) | SqlType::Composite(u) => Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("input of type {} is resolved against its catalog definition", u.name()),
            )),
            // PostgreSQL's void_in takes any text.
            SqlType::Void => Ok(Value::Text(String::new())),
            SqlType::Trigger | SqlType::Poly(_) => Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("cannot accept a value of type {}", ty.name()),
            )),
            SqlType::Uuid => crate::uuid::parse_uuid(input).map(Value::Uuid),
            SqlType::Bytea => crate::bytea::parse_bytea(input).map(|b| Value::Bytes(b.into())),
            SqlType::Json => crate::json::json_in(input).map(|()| Value::Json(input.into())),
            SqlType::Jsonb => crate::json::jsonb_in(input).map(Value::Jsonb),
            SqlType::JsonPath => crate::json::JsonPath::parse(input).map(|p| Value::JsonPath(p.into())),
            SqlType::Time => {
                crate::parse_time_styled(input, &style, crate::current_instant(), None).map(Value::Time)
            }
            SqlType::TimeTz => crate::parse_timetz_styled(input, &style, crate::current_instant(), None)
                .map(|(micros, zone)| Value::TimeTz(crate::TimeTz { micros, zone })),
            SqlType::Numeric(typmod) => {
                let n = crate::numeric::Numeric::parse(input)?;
                Ok(Value::Numeric(if typmod >= 0 { n.apply_typmod_raw(typmod)? } else { n }))
            }
        }
    }

    /// Writes the value in PostgreSQL's text format, a timestamp with time
    /// zone in UTC (see [`Value::to_text_in`]); `None` for NULL.
    pub fn to_text(&self) -> Option<String> {
        self.to_text_in(Zone::UTC)
    }

    /// Writes the value in PostgreSQL's text format, a timestamp with time
    /// zone as wall-clock time in `zone` (the session's TimeZone); `None`
    /// for NULL.
    ///
    /// A record or array nesting others is measured first (TEXT-SIZE), and
    /// one whose text PostgreSQL could not write panics here, costing its
    /// statement: callers that can fail call [`Value::check_text`] first,
    /// or [`Value::try_text_in`], and fail as PostgreSQL does.
    pub fn to_text_in(&self, style: impl Into<Style> + Copy) -> Option<String> {
        let style: Style = style.into();
        if crate::text_size::nests_composites(self) {
            if let Err(e) = crate::text_size::check(self, style) {
                panic!("{}", e.message);
            }
        }
        Some(match self {
            Value::Null => return None,
            Value::Bool(b) => if *b { "t" } else { "f" }.to_owned(),
            Value::Int(i) => i.to_string(),
            Value::Float(f) => float::format(*f),
            Value::Float4(f) => float::format_f32(*f),
            Value::Text(s) => s.clone(),
            Value::Date(d) => crate::format_date_styled(*d, &style),
            Value::Timestamp(t) => crate::format_timestamp_styled(*t, &style),
            Value::TimestampTz(t) => crate::format_timestamptz_styled(*t, &style),
            Value::Interval(i) => crate::format_interval_styled(i, &style),
            Value::Array(items) => format_array(items, style),
            Value::Record(fields) => record::format_record(fields, style),
            Value::Reg(_, name) => name.to_string(),
            Value::Uuid(u) => crate::uuid::format_uuid(u),
            Value::Bytes(b) if style.bytea_escape => crate::bytea::format_bytea_escape(b),
            Value::Bytes(b) => crate::bytea::format_bytea_hex(b),
            Value::Numeric(n) => n.to_string(),
            Value::Json(j) => j.to_string(),
            Value::Jsonb(j) => j.to_text(),
            Value::JsonPath(p) => p.to_string(),
            Value::Time(t) => crate::format_time(*t),
            Value::TimeTz(t) => crate::format_timetz(t.micros, t.zone),
            Value::Enum(l) => l.name().to_string(),
        })
    }

    /// Fails as PostgreSQL's output function would when the value's text
    /// form is too long to write (TEXT-SIZE: records nested in records
    /// double their quotes at every level); `Ok` for every other value.
    pub fn check_text(&self, style: impl Into<Style> + Copy) -> Result<(), SqlError> {
        crate::text_size::check(self, style.into())
    }

    /// [`Value::to_text_in`], failing as PostgreSQL does where the text is
    /// too long to write instead of panicking.
    pub fn try_text_in(&self, style: impl Into<Style> + Copy) -> Result<Option<String>, SqlError> {
        self.check_text(style)?;
        Ok(self.to_text_in(style))
    }

    /// The text form of a value of type `ty`: as [`Value::to_text_in`],
    /// but int2vector and oidvector print as space-separated numbers.
    pub fn to_text_as(&self, ty: SqlType, zone: impl Into<Style> + Copy) -> Option<String> {
        match (ty, self) {
            (SqlType::Int2Vector | SqlType::OidVector, Value::Array(items)) => {
                Some(items.iter().map(|v| v.to_text().unwrap_or_default()).collect::<Vec<_>>().join(" "))
            }
            _ => self.to_text_in(zone),
        }
    }

    /// [`Value::to_text_as`], failing where PostgreSQL's output function
    /// would (TEXT-SIZE) instead of past the limit.
    pub fn try_text_as(
        &self,
        ty: SqlType,
        style: impl Into<Style> + Copy,
    ) -> Result<Option<String>, SqlError> {
        self.check_text(style)?;
        Ok(self.to_text_as(ty, style))
    }

    /// Compares two non-NULL values as SQL does: numbers across integer and
    /// float types; char(n) ignoring trailing spaces is the caller's to
    /// arrange (values of char columns compare with their padding stripped).
    /// `None` for NULL or incomparable kinds.
    pub fn compare(&self, other: &Value) -> Option<Ordering> {
        match (self, other) {
            (Value::Int(a), Value::Int(b)) => Some(a.cmp(b)),
            (Value::Int(a), Value::Float(b)) => (*a as f64).partial_cmp(b),
            (Value::Float(a), Value::Int(b)) => a.partial_cmp(&(*b as f64)),
            (Value::Float(a), Value::Float(b)) => Some(float::pg_cmp(*a, *b)),
            // real meets the other numbers as double precision (exactly).
            (Value::Float4(a), b) if b.is_number() => Value::Float(f64::from(*a)).compare(b),
            (a, Value::Float4(b)) if a.is_number() => a.compare(&Value::Float(f64::from(*b))),
            (Value::Bool(a), Value::Bool(b)) => Some(a.cmp(b)),
            (Value::Text(a), Value::Text(b)) => Some(a.cmp(b)),
            (Value::Date(a), Value::Date(b)) => Some(a.cmp(b)),
            (Value::Timestamp(a), Value::Timestamp(b)) | (Value::TimestampTz(a), Value::TimestampTz(b)) => {
                Some(a.cmp(b))
            }
            (Value::Interval(a), Value::Interval(b)) => Some(a.cmp_span(*b)),
            (Value::Reg(a, _), Value::Reg(b, _)) => Some(a.cmp(b)),
            (Value::Reg(a, _), Value::Int(b)) => Some(i64::from(*a).cmp(b)),
            (Value::Int(a), Value::Reg(b, _)) => Some(a.cmp(&i64::from(*b))),
            (Value::Array(a), Value::Array(b)) => a.compare(b),
            (Value::Record(a), Value::Record(b)) => {
                Some(array::compare_items(a, b)?.then(a.len().cmp(&b.len())))
            }
            (Value::Uuid(a), Value::Uuid(b)) => Some(a.cmp(b)),
            (Value::Numeric(a), Value::Numeric(b)) => Some(a.cmp(b)),
            (Value::Jsonb(a), Value::Jsonb(b)) => Some(a.cmp(b)),
            (Value::Time(a), Value::Time(b)) => Some(a.cmp(b)),
            (Value::TimeTz(a), Value::TimeTz(b)) => Some(crate::timetz_cmp(*a, *b)),
            (Value::Numeric(a), Value::Int(b)) => Some(a.cmp(&crate::numeric::Numeric::from(*b))),
            (Value::Int(a), Value::Numeric(b)) => Some(crate::numeric::Numeric::from(*a).cmp(b)),
            // numeric meets float8 as float8, PostgreSQL's implicit cast.
            (Value::Numeric(a), Value::Float(b)) => Some(float::pg_cmp(a.to_f64().unwrap_or(f64::NAN), *b)),
            (Value::Float(a), Value::Numeric(b)) => Some(float::pg_cmp(*a, b.to_f64().unwrap_or(f64::NAN))),
            (Value::Bytes(a), Value::Bytes(b)) => Some(a.cmp(b)),
            (Value::Enum(a), Value::Enum(b)) => Some(a.order(b)),
            _ => None,
        }
    }
}

impl Value {
    /// An integer, float or numeric value.
    pub fn is_number(&self) -> bool {
        matches!(self, Value::Int(_) | Value::Float(_) | Value::Float4(_) | Value::Numeric(_))
    }
}

/// An integer operator.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum IntOp {
    /// +
    Add,
    /// -
    Sub,
    /// *
    Mul,
    /// /
    Div,
    /// %
    Rem,
}

/// Integer arithmetic in `ty`'s range, with PostgreSQL's errors: 22003
/// "integer out of range", 22012 "division by zero".
pub fn int_arith(ty: SqlType, op: IntOp, a: i64, b: i64) -> Result<i64, SqlError> {
    if matches!(op, IntOp::Div | IntOp::Rem) && b == 0 {
        return Err(SqlError::division_by_zero());
    }
    let r = match op {
        IntOp::Add => a.checked_add(b),
        IntOp::Sub => a.checked_sub(b),
        IntOp::Mul => a.checked_mul(b),
        IntOp::Div => a.checked_div(b),
        // x % -1 is 0 in PostgreSQL, even for the minimum value.
        IntOp::Rem => Some(if b == -1 { 0 } else { a % b }),
    };
    let (lo, hi) = int_range(ty);
    r.filter(|v| *v >= lo && *v <= hi).ok_or_else(|| SqlError::out_of_range(ty.name()))
}

// Rows of the catalog views are built from Rust values.
impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Text(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::Text(s)
    }
}

impl From<u32> for Value {
    fn from(i: u32) -> Value {
        Value::Int(i.into())
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}

impl From<i32> for Value {
    fn from(i: i32) -> Value {
        Value::Int(i.into())
    }
}

impl From<char> for Value {
    fn from(c: char) -> Value {
        Value::Text(c.to_string())
    }
}
