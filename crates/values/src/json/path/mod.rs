//! PostgreSQL 15's SQL/JSON path language (`jsonpath`): the type's input
//! with PostgreSQL's errors, its canonical output, its binary and storage
//! forms, and the evaluator behind jsonb_path_query, jsonb_path_exists
//! (`@?`) and jsonb_path_match (`@@`).
//!
//! Modules: `lex` (tokens, escapes and scanner errors), `parse` (the
//! grammar and the post-parse checks), `ast` (the parsed items), `out`
//! (jsonpath_out), `exec` (the evaluator), `methods` (`.double()` and the
//! jsonb layout behind `.keyvalue()` ids), `datetime` (`.datetime()`),
//! `regex` (`like_regex`).

mod ast;
mod datetime;
mod exec;
mod lex;
mod methods;
mod out;
mod parse;
mod regex;

#[cfg(test)]
mod tests;

use std::fmt;

use snapscale_sqlstate::SqlState;

use self::ast::Chain;
use self::exec::Res;
use crate::json::Jsonb;
use crate::SqlError;

/// A parsed jsonpath.
#[derive(Clone, Debug)]
pub struct JsonPath {
    lax: bool,
    expr: Chain,
}

/// Two paths are equal when they print the same (jsonpath has no equality
/// operator in SQL; values compare so for tests and plan caching).
impl PartialEq for JsonPath {
    fn eq(&self, other: &JsonPath) -> bool {
        self.to_string() == other.to_string()
    }
}

impl JsonPath {
    /// jsonpath_in.
    pub fn parse(input: &str) -> Result<JsonPath, SqlError> {
        match parse::parse(input)? {
            Some((lax, expr)) => Ok(JsonPath { lax, expr }),
            None => Err(SqlError::invalid_input("jsonpath", input)),
        }
    }

    /// True for lax mode (the default), false for `strict`.
    pub fn is_lax(&self) -> bool {
        self.lax
    }

    /// Storage encoding: the canonical text, length-prefixed.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let text = self.to_string();
        out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
    }

    /// Reads what [`JsonPath::encode`] wrote; returns the path and the
    /// bytes used.
    pub fn decode(buf: &[u8]) -> Result<(JsonPath, usize), SqlError> {
        let bad = || SqlError::new(SqlState::DATA_CORRUPTED, "invalid stored jsonpath value");
        let len = buf.get(..4).ok_or_else(bad)?;
        let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let text = buf.get(4..4 + len).ok_or_else(bad)?;
        let text = std::str::from_utf8(text).map_err(|_| bad())?;
        Ok((JsonPath::parse(text)?, 4 + len))
    }

    /// jsonpath_send: version 1, then the text.
    pub fn to_wire(&self, out: &mut Vec<u8>) {
        out.push(1);
        out.extend_from_slice(self.to_string().as_bytes());
    }

    /// jsonpath_recv.
    pub fn from_wire(buf: &[u8]) -> Result<JsonPath, SqlError> {
        match buf.first() {
            Some(1) => {}
            Some(v) => {
                return Err(SqlError::new(
                    SqlState::INTERNAL_ERROR,
                    format!("unsupported jsonpath version number: {v}"),
                ))
            }
            None => {
                return Err(SqlError::new(SqlState::PROTOCOL_VIOLATION, "insufficient data left in message"));
            }
        }
        let text = std::str::from_utf8(&buf[1..]).map_err(|_| {
            SqlError::new(
                SqlState::CHARACTER_NOT_IN_REPERTOIRE,
                "invalid byte sequence for encoding \"UTF8\"",
            )
        })?;
        JsonPath::parse(text)
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        if !self.lax {
            s.push_str("strict ");
        }
        out::chain(&mut s, &self.expr, false, true);
        f.write_str(&s)
    }
}

/// jsonb_path_query: every item `path` yields over `target`. `vars` is
/// the jsonb object of `$name` variables (None: none given); `silent`
/// suppresses the structural and evaluation errors PostgreSQL suppresses
/// (items found before a suppressed error are still returned, as in
/// PostgreSQL).
pub fn path_query(
    target: &Jsonb,
    path: &JsonPath,
    vars: Option<&Jsonb>,
    silent: bool,
) -> Result<Vec<Jsonb>, SqlError> {
    let mut found = Vec::new();
    exec::execute(&path.expr, path.lax, target, vars, !silent, Some(&mut found))?;
    Ok(found.into_iter().map(exec::It::into_jsonb).collect())
}

/// jsonb_path_exists and `@?`: None is SQL NULL (a suppressed error).
pub fn path_exists(
    target: &Jsonb,
    path: &JsonPath,
    vars: Option<&Jsonb>,
    silent: bool,
) -> Result<Option<bool>, SqlError> {
    Ok(match exec::execute(&path.expr, path.lax, target, vars, !silent, None)? {
        Res::Error => None,
        Res::Ok => Some(true),
        Res::NotFound => Some(false),
    })
}

/// jsonb_path_match and `@@`: the single boolean the path yields; None
/// is SQL NULL.
pub fn path_match(
    target: &Jsonb,
    path: &JsonPath,
    vars: Option<&Jsonb>,
    silent: bool,
) -> Result<Option<bool>, SqlError> {
    let mut found = Vec::new();
    exec::execute(&path.expr, path.lax, target, vars, !silent, Some(&mut found))?;
    if found.len() == 1 {
        match &found[0].v {
            exec::V::J(Jsonb::Bool(b)) => return Ok(Some(*b)),
            exec::V::J(Jsonb::Null) => return Ok(None),
            _ => {}
        }
    }
    if !silent {
        return Err(SqlError::new(
            SqlState::SINGLETON_SQL_JSON_ITEM_REQUIRED,
            "single boolean result is expected",
        ));
    }
    Ok(None)
}
