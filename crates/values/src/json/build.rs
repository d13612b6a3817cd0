//! Turning SQL values into json: to_json / to_jsonb, the builders
//! (json[b]_build_object, json[b]_build_array, json[b]_object) and the
//! aggregates (json[b]_agg, json[b]_object_agg).
//!
//! The SQL layer converts each argument to a [`JsonInput`], which carries
//! the distinctions PostgreSQL's formatting depends on: numbers are written
//! bare (unless NaN or infinite), text is quoted, json is inserted as is,
//! and arrays and composites get an extra line break in json_agg. The json
//! builders produce PostgreSQL's text layout exactly (`{"a" : 1}` for
//! json_build_object, `{ "a" : 1 }` for json_object_agg, `[1, 2]` for
//! json_agg); the jsonb ones produce [`Jsonb`] values.

use std::sync::Arc;

use snapscale_sqlstate::SqlState;

use super::out::escape_json;
use super::value::Jsonb;
use crate::numeric::Numeric;
use crate::SqlError;

/// A SQL value as the json builders see it.
#[derive(Clone, Debug)]
pub enum JsonInput {
    /// SQL NULL.
    Null,
    /// boolean.
    Bool(bool),
    /// numeric: bare when finite, a string ("NaN", "Infinity") otherwise.
    Numeric(Numeric),
    /// Another number type's output text (integers, floats): bare when it
    /// is a valid json number, quoted otherwise ("NaN", "Infinity").
    NumberText(String),
    /// Any other scalar's output text (text, dates in ISO form, uuid, ...):
    /// written as a json string.
    Text(String),
    /// A json value's text: inserted as is.
    Json(String),
    /// A jsonb value.
    Jsonb(Jsonb),
    /// A SQL array or composite already rendered as json text.
    Structured(String),
}

fn is_json_number(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if b.first() == Some(&b'-') {
        i = 1;
    }
    let digits = |i: &mut usize| {
        let st = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > st
    };
    if b.get(i) == Some(&b'0') {
        i += 1;
    } else if !digits(&mut i) {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == b.len()
}

fn invalid(msg: impl Into<String>) -> SqlError {
    SqlError::new(SqlState::INVALID_PARAMETER_VALUE, msg)
}

fn key_not_scalar() -> SqlError {
    invalid("key value must be scalar, not array, composite, or json")
}

/// Appends the json text of `v` (datum_to_json).
fn put_json(out: &mut String, v: &JsonInput) {
    match v {
        JsonInput::Null => out.push_str("null"),
        JsonInput::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        JsonInput::Numeric(n) => {
            let s = n.to_string();
            if n.is_finite() {
                out.push_str(&s);
            } else {
                escape_json(out, &s);
            }
        }
        JsonInput::NumberText(s) => {
            if is_json_number(s) {
                out.push_str(s);
            } else {
                escape_json(out, s);
            }
        }
        JsonInput::Text(s) => escape_json(out, s),
        JsonInput::Json(s) | JsonInput::Structured(s) => out.push_str(s),
        JsonInput::Jsonb(j) => out.push_str(&j.to_text()),
    }
}

/// The text of a scalar used as an object key.
fn key_text(v: &JsonInput) -> Result<String, SqlError> {
    Ok(match v {
        JsonInput::Null => "null".to_owned(),
        JsonInput::Bool(b) => (if *b { "true" } else { "false" }).to_owned(),
        JsonInput::Numeric(n) => n.to_string(),
        JsonInput::NumberText(s) | JsonInput::Text(s) => s.clone(),
        JsonInput::Json(_) | JsonInput::Jsonb(_) | JsonInput::Structured(_) => return Err(key_not_scalar()),
    })
}

fn put_key(out: &mut String, v: &JsonInput) -> Result<(), SqlError> {
    let k = key_text(v)?;
    escape_json(out, &k);
    Ok(())
}

/// to_json: the json text of one value.
pub fn to_json(v: &JsonInput) -> String {
    let mut s = String::new();
    put_json(&mut s, v);
    s
}

/// to_jsonb: one value as jsonb.
pub fn to_jsonb(v: &JsonInput) -> Result<Jsonb, SqlError> {
    Ok(match v {
        JsonInput::Null => Jsonb::Null,
        JsonInput::Bool(b) => Jsonb::Bool(*b),
        JsonInput::Numeric(n) => {
            if n.is_finite() {
                Jsonb::Number(n.clone())
            } else {
                Jsonb::string(n.to_string())
            }
        }
        JsonInput::NumberText(s) => {
            if is_json_number(s) {
                Jsonb::Number(Numeric::parse(s)?)
            } else {
                Jsonb::string(s.as_str())
            }
        }
        JsonInput::Text(s) => Jsonb::string(s.as_str()),
        JsonInput::Json(s) | JsonInput::Structured(s) => Jsonb::parse(s)?,
        JsonInput::Jsonb(j) => j.clone(),
    })
}

fn even_args(args: &[JsonInput], func: &str) -> Result<(), SqlError> {
    if !args.len().is_multiple_of(2) {
        return Err(invalid("argument list must have even number of elements")
            .with_hint(format!("The arguments of {func} must consist of alternating keys and values.")));
    }
    Ok(())
}

/// json_build_object(VARIADIC "any"): `{"a" : 1, "b" : 2}`.
pub fn json_build_object(args: &[JsonInput]) -> Result<String, SqlError> {
    even_args(args, "json_build_object()")?;
    let mut out = String::from("{");
    for (i, pair) in args.chunks(2).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        if matches!(pair[0], JsonInput::Null) {
            return Err(invalid(format!("argument {} cannot be null", 2 * i + 1))
                .with_hint("Object keys should be text."));
        }
        put_key(&mut out, &pair[0])?;
        out.push_str(" : ");
        put_json(&mut out, &pair[1]);
    }
    out.push('}');
    Ok(out)
}

/// jsonb_build_object(VARIADIC "any").
pub fn jsonb_build_object(args: &[JsonInput]) -> Result<Jsonb, SqlError> {
    even_args(args, "jsonb_build_object()")?;
    let mut pairs: Vec<(Arc<str>, Jsonb)> = Vec::with_capacity(args.len() / 2);
    for (i, pair) in args.chunks(2).enumerate() {
        if matches!(pair[0], JsonInput::Null) {
            return Err(invalid(format!("argument {}: key must not be null", 2 * i + 1)));
        }
        let k = key_text(&pair[0])?;
        pairs.push((Arc::from(k), to_jsonb(&pair[1])?));
    }
    Ok(Jsonb::object(pairs))
}

/// json_build_array(VARIADIC "any"): `[1, "a", null]`.
pub fn json_build_array(args: &[JsonInput]) -> String {
    let mut out = String::from("[");
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        put_json(&mut out, a);
    }
    out.push(']');
    out
}

/// jsonb_build_array(VARIADIC "any").
pub fn jsonb_build_array(args: &[JsonInput]) -> Result<Jsonb, SqlError> {
    Ok(Jsonb::array(args.iter().map(to_jsonb).collect::<Result<_, _>>()?))
}

fn subscript_error(msg: &str) -> SqlError {
    SqlError::new(SqlState::ARRAY_SUBSCRIPT_ERROR, msg)
}

fn null_key() -> SqlError {
    SqlError::new(SqlState::NULL_VALUE_NOT_ALLOWED, "null value not allowed for object key")
}

/// Checks json_object(text[])'s shape and returns its (key, value) pairs:
/// `dims` are the array's dimensions, `elems` its elements in order.
fn one_arg_pairs<'e>(
    dims: &[usize],
    elems: &'e [Option<&'e str>],
) -> Result<Vec<(&'e str, Option<&'e str>)>, SqlError> {
    match dims.len() {
        0 => return Ok(Vec::new()),
        1 => {
            if !dims[0].is_multiple_of(2) {
                return Err(subscript_error("array must have even number of elements"));
            }
        }
        2 => {
            if dims[1] != 2 {
                return Err(subscript_error("array must have two columns"));
            }
        }
        _ => return Err(subscript_error("wrong number of array subscripts")),
    }
    elems.chunks(2).map(|p| Ok((p[0].ok_or_else(null_key)?, p.get(1).copied().flatten()))).collect()
}

fn two_arg_pairs<'e>(
    keys: &'e [Option<&'e str>],
    key_ndims: usize,
    values: &'e [Option<&'e str>],
    value_ndims: usize,
) -> Result<Vec<(&'e str, Option<&'e str>)>, SqlError> {
    if key_ndims > 1 || key_ndims != value_ndims {
        return Err(subscript_error("wrong number of array subscripts"));
    }
    if key_ndims == 0 {
        return Ok(Vec::new());
    }
    if keys.len() != values.len() {
        return Err(subscript_error("mismatched array dimensions"));
    }
    keys.iter().zip(values).map(|(k, v)| Ok((k.ok_or_else(null_key)?, *v))).collect()
}

fn object_text(pairs: &[(&str, Option<&str>)]) -> String {
    let mut out = String::from("{");
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        escape_json(&mut out, k);
        out.push_str(" : ");
        match v {
            Some(v) => escape_json(&mut out, v),
            None => out.push_str("null"),
        }
    }
    out.push('}');
    out
}

fn object_jsonb(pairs: &[(&str, Option<&str>)]) -> Jsonb {
    Jsonb::object(pairs.iter().map(|(k, v)| (*k, v.map_or(Jsonb::Null, Jsonb::string))).collect())
}

/// json_object(text[]): a flat array of alternating keys and values, or a
/// two-column two-dimensional one.
pub fn json_object(dims: &[usize], elems: &[Option<&str>]) -> Result<String, SqlError> {
    Ok(object_text(&one_arg_pairs(dims, elems)?))
}

/// jsonb_object(text[]).
pub fn jsonb_object(dims: &[usize], elems: &[Option<&str>]) -> Result<Jsonb, SqlError> {
    Ok(object_jsonb(&one_arg_pairs(dims, elems)?))
}

/// json_object(keys text[], values text[]); `*_ndims` are the arrays'
/// numbers of dimensions.
pub fn json_object_two_arg(
    keys: &[Option<&str>],
    key_ndims: usize,
    values: &[Option<&str>],
    value_ndims: usize,
) -> Result<String, SqlError> {
    Ok(object_text(&two_arg_pairs(keys, key_ndims, values, value_ndims)?))
}

/// jsonb_object(keys text[], values text[]).
pub fn jsonb_object_two_arg(
    keys: &[Option<&str>],
    key_ndims: usize,
    values: &[Option<&str>],
    value_ndims: usize,
) -> Result<Jsonb, SqlError> {
    Ok(object_jsonb(&two_arg_pairs(keys, key_ndims, values, value_ndims)?))
}

/// json_agg's state: `[1, 2, null]`; arrays and composites after the first
/// row are preceded by a line break and a space.
#[derive(Clone, Debug, Default)]
pub struct JsonAgg {
    text: Option<String>,
}

impl JsonAgg {
    pub fn new() -> JsonAgg {
        JsonAgg::default()
    }

    /// Adds one row's value.
    pub fn add(&mut self, v: &JsonInput) {
        let first = self.text.is_none();
        let out = self.text.get_or_insert_with(|| String::from("["));
        if !first {
            out.push_str(", ");
            if matches!(v, JsonInput::Structured(_)) {
                out.push_str("\n ");
            }
        }
        put_json(out, v);
    }

    /// The result; `None` (SQL NULL) when no rows were added.
    pub fn finish(&self) -> Option<String> {
        self.text.as_ref().map(|t| format!("{t}]"))
    }
}

/// jsonb_agg's state.
#[derive(Clone, Debug, Default)]
pub struct JsonbAgg {
    items: Option<Vec<Jsonb>>,
}

impl JsonbAgg {
    pub fn new() -> JsonbAgg {
        JsonbAgg::default()
    }

    pub fn add(&mut self, v: &JsonInput) -> Result<(), SqlError> {
        let j = to_jsonb(v)?;
        self.items.get_or_insert_with(Vec::new).push(j);
        Ok(())
    }

    /// The result; `None` when no rows were added.
    pub fn finish(&self) -> Option<Jsonb> {
        self.items.as_ref().map(|v| Jsonb::array(v.clone()))
    }
}

fn field_name_null() -> SqlError {
    invalid("field name must not be null")
}

/// json_object_agg's state: `{ "a" : 1, "b" : 2 }`, repeats kept.
#[derive(Clone, Debug, Default)]
pub struct JsonObjectAgg {
    text: Option<String>,
}

impl JsonObjectAgg {
    pub fn new() -> JsonObjectAgg {
        JsonObjectAgg::default()
    }

    pub fn add(&mut self, key: &JsonInput, value: &JsonInput) -> Result<(), SqlError> {
        let first = self.text.is_none();
        let mut out = self.text.take().unwrap_or_else(|| String::from("{ "));
        if !first {
            out.push_str(", ");
        }
        let r = (|| {
            if matches!(key, JsonInput::Null) {
                return Err(field_name_null());
            }
            put_key(&mut out, key)
        })();
        if let Err(e) = r {
            // Leave the state as it was.
            if !first {
                out.truncate(out.len() - 2);
                self.text = Some(out);
            }
            return Err(e);
        }
        out.push_str(" : ");
        put_json(&mut out, value);
        self.text = Some(out);
        Ok(())
    }

    /// The result; `None` when no rows were added.
    pub fn finish(&self) -> Option<String> {
        self.text.as_ref().map(|t| format!("{t} }}"))
    }
}

/// jsonb_object_agg's state; a repeated key keeps its last value.
#[derive(Clone, Debug, Default)]
pub struct JsonbObjectAgg {
    pairs: Option<Vec<(Arc<str>, Jsonb)>>,
}

impl JsonbObjectAgg {
    pub fn new() -> JsonbObjectAgg {
        JsonbObjectAgg::default()
    }

    pub fn add(&mut self, key: &JsonInput, value: &JsonInput) -> Result<(), SqlError> {
        if matches!(key, JsonInput::Null) {
            return Err(field_name_null());
        }
        let k = key_text(key)?;
        let v = to_jsonb(value)?;
        self.pairs.get_or_insert_with(Vec::new).push((Arc::from(k), v));
        Ok(())
    }

    /// The result; `None` when no rows were added.
    pub fn finish(&self) -> Option<Jsonb> {
        self.pairs.as_ref().map(|p| Jsonb::object(p.clone()))
    }
}
