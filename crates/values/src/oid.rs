//! Object identifiers: oid, name, the oid alias types (regclass, regtype,
//! …), and the catalogs' vectors (int2vector, oidvector).

use std::sync::Arc;

use snapscale_sqlstate::SqlState;

use super::{SqlType, Value};
use crate::error::SqlError;

/// An oid alias type: what kind of object its oid names.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
pub enum Reg {
    Class,
    Type,
    Namespace,
    Proc,
    Procedure,
    Role,
}

impl Reg {
    pub const ALL: [Reg; 6] = [Reg::Class, Reg::Type, Reg::Namespace, Reg::Proc, Reg::Procedure, Reg::Role];

    pub(super) fn type_oid(self) -> u32 {
        match self {
            Reg::Class => 2205,
            Reg::Type => 2206,
            Reg::Namespace => 4089,
            Reg::Proc => 24,
            Reg::Procedure => 2202,
            Reg::Role => 4096,
        }
    }

    pub(super) fn type_name(self) -> &'static str {
        match self {
            Reg::Class => "regclass",
            Reg::Type => "regtype",
            Reg::Namespace => "regnamespace",
            Reg::Proc => "regproc",
            Reg::Procedure => "regprocedure",
            Reg::Role => "regrole",
        }
    }

    /// What PostgreSQL calls the kind of object in "does not exist".
    pub fn object(self) -> &'static str {
        match self {
            Reg::Class => "relation",
            Reg::Type => "type",
            Reg::Namespace => "schema",
            Reg::Proc | Reg::Procedure => "function",
            Reg::Role => "role",
        }
    }

    /// The value for an object found by name or oid (`name` as it prints).
    pub fn value(oid: u32, name: &str) -> Value {
        Value::Reg(oid, Arc::from(name))
    }

    /// The error for a name that names no object of this kind.
    pub fn missing(self, name: &str) -> SqlError {
        let (code, message) = match self {
            Reg::Class => (SqlState::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist")),
            Reg::Type => (SqlState::UNDEFINED_OBJECT, format!("type \"{name}\" does not exist")),
            Reg::Namespace => (SqlState::INVALID_SCHEMA_NAME, format!("schema \"{name}\" does not exist")),
            Reg::Proc | Reg::Procedure => {
                (SqlState::UNDEFINED_FUNCTION, format!("function \"{name}\" does not exist"))
            }
            Reg::Role => (SqlState::UNDEFINED_OBJECT, format!("role \"{name}\" does not exist")),
        };
        SqlError::new(code, message)
    }
}

/// oid input: a decimal number within 32 bits (negative numbers wrap, as
/// PostgreSQL accepts them).
pub(super) fn parse_oid(input: &str) -> Result<u32, SqlError> {
    let t = input.trim();
    let bad = || SqlError::invalid_input("oid", input);
    let n: i64 = t.parse().map_err(|_| bad())?;
    if !(-(1i64 << 31)..(1i64 << 32)).contains(&n) {
        return Err(SqlError::out_of_range_input("oid", input));
    }
    Ok(n as u32)
}

/// A name keeps at most 63 bytes (whole characters).
pub(super) fn truncate_name(input: &str) -> String {
    let mut end = input.len().min(63);
    while !input.is_char_boundary(end) {
        end -= 1;
    }
    input[..end].to_owned()
}

/// int2vector / oidvector input: numbers separated by spaces.
pub(super) fn parse_vector(ty: SqlType, input: &str) -> Result<Value, SqlError> {
    let elem = ty.elem().expect("a vector type");
    let items = input.split_whitespace().map(|n| Value::parse(elem, n)).collect::<Result<Vec<_>, _>>()?;
    Ok(Value::Array(Arc::new(crate::Array::with_lower(0, items))))
}

/// An identifier as PostgreSQL prints it: in double quotes unless it is
/// lower-case letters, digits and underscores not starting with a digit.
pub fn quote_ident(name: &str) -> String {
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain {
        name.to_owned()
    } else {
        format!("\"{}\"", name.replace('"', "\"\""))
    }
}
