//! json[b]_populate_record[set] and json[b]_to_record[set]: a JSON object
//! read into a row of known attributes, each converted as PostgreSQL's
//! populate_record_field converts it: null to NULL, a json or jsonb
//! attribute taking the member's JSON, an array from a JSON array (one
//! dimension per level of nesting) or from a string in array syntax, a
//! composite from an object or a string in record syntax, anything else
//! from the member's text through the type's input.

use std::sync::Arc;

use snapscale_sqlstate::SqlState;
use snapscale_values::json::{JsonNode, JsonText, NodeKind};
use snapscale_values::{Array, Dim, SqlError, SqlType, Value, MAX_DIMS};

use super::user_types::TypeOp;
use super::Ctx;

/// What a JSON value is read as.
#[derive(Debug, PartialEq)]
pub enum Target {
    /// A type read from text (json and jsonb take the JSON itself).
    Scalar(SqlType),
    /// An array of the element target.
    Array(Box<Target>),
    /// A row of named attributes.
    Record(Vec<(String, Target)>),
    /// A domain: the base's target, then the domain's checks
    /// ([`TypeOp::Domain`]).
    Domain(Box<Target>, Arc<TypeOp>),
}

/// Which function, for its error messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Populate {
    pub jsonb: bool,
    /// A set of rows from an array of objects (`…_recordset`).
    pub set: bool,
    /// `json[b]_to_record[set]` rather than `…_populate_…`.
    pub to: bool,
}

impl Populate {
    fn name(self) -> String {
        format!(
            "{}_{}_record{}",
            if self.jsonb { "jsonb" } else { "json" },
            if self.to { "to" } else { "populate" },
            if self.set { "set" } else { "" }
        )
    }
}

/// Where in the document a conversion is, for the HINT of "expected JSON
/// array": the attribute's key, then array positions.
struct Place<'k> {
    key: Option<&'k str>,
    indexes: Vec<usize>,
}

impl Place<'_> {
    fn hint(&self) -> String {
        let key = self.key.map(|k| format!(" of key \"{k}\"")).unwrap_or_default();
        if self.indexes.is_empty() {
            format!("See the value{key}.")
        } else {
            let at: String = self.indexes.iter().map(|i| format!("[{i}]")).collect();
            format!("See the array element {at}{key}.")
        }
    }
}

fn expected_array(place: &Place<'_>) -> SqlError {
    SqlError::new(SqlState::INVALID_TEXT_REPRESENTATION, "expected JSON array").with_hint(place.hint())
}

fn ragged() -> SqlError {
    SqlError::new(SqlState::INVALID_TEXT_REPRESENTATION, "malformed JSON array")
        .with_detail("Multidimensional arrays must have sub-arrays with matching dimensions.")
}

/// Runs the function: `args` are the base record (or NULL) and the JSON.
/// A single row is a record; a set is an array of records.
pub(super) fn eval(p: Populate, fields: &Target, args: &[Value], cx: &Ctx<'_>) -> Result<Value, SqlError> {
    let base = match &args[0] {
        Value::Record(r) => Some(r.clone()),
        _ => None,
    };
    let parsed;
    let jsonb;
    let root = match &args[1] {
        Value::Null => {
            if p.set {
                return Ok(Value::array(Vec::new()));
            }
            return Ok(base.map_or_else(|| null_record(fields), Value::Record));
        }
        Value::Jsonb(j) => {
            jsonb = j.clone();
            JsonNode::Jsonb(&jsonb)
        }
        Value::Json(t) => {
            parsed = JsonText::parse(t)?;
            JsonNode::root(&parsed)
        }
        Value::Text(t) => {
            parsed = JsonText::parse(t)?;
            JsonNode::root(&parsed)
        }
        _ => return Ok(Value::Null),
    };
    if !p.set {
        return record(fields, root, base.as_deref(), cx);
    }
    match root.kind() {
        NodeKind::Array => {}
        NodeKind::Object => {
            return Err(SqlError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("cannot call {} on an object", p.name()),
            ))
        }
        _ => {
            return Err(SqlError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("cannot call {} on a scalar", p.name()),
            ))
        }
    }
    let mut rows = Vec::new();
    for element in root.elements() {
        if element.kind() != NodeKind::Object {
            return Err(SqlError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("argument of {} must be an array of objects", p.name()),
            ));
        }
        rows.push(record(fields, element, base.as_deref(), cx)?);
    }
    Ok(Value::array(rows))
}

fn null_record(fields: &Target) -> Value {
    match fields {
        Target::Record(f) => Value::Record(vec![Value::Null; f.len()].into()),
        _ => Value::Null,
    }
}

/// A row from an object: each attribute from its member, or from `base`
/// (NULL without one) when the object has no such member.
fn record(
    target: &Target,
    node: JsonNode<'_>,
    base: Option<&[Value]>,
    cx: &Ctx<'_>,
) -> Result<Value, SqlError> {
    let (fields, domain) = match target {
        Target::Record(f) => (f, None),
        Target::Domain(inner, checks) => match &**inner {
            Target::Record(f) => (f, Some(checks)),
            _ => return Ok(Value::Null),
        },
        _ => return Ok(Value::Null),
    };
    match node.kind() {
        NodeKind::Object => {}
        NodeKind::Array => return Err(composite_error("an array")),
        _ => return Err(composite_error("a scalar")),
    }
    let mut out = Vec::with_capacity(fields.len());
    for (i, (name, t)) in fields.iter().enumerate() {
        let base_value = base.and_then(|b| b.get(i));
        let v = match node.field(name) {
            // A nested object fills the base's record for that attribute.
            Some(member) if member.kind() == NodeKind::Object && is_record(t) => {
                let inner = match base_value {
                    Some(Value::Record(r)) => Some(&r[..]),
                    _ => None,
                };
                let v = record(t, member, inner, cx)?;
                check_domain(t, v, cx)?
            }
            Some(member) => value(t, member, &mut Place { key: Some(name), indexes: Vec::new() }, cx)?,
            // An absent attribute keeps the base's value, and is still
            // checked against its domain.
            None => {
                let v = base.and_then(|b| b.get(i)).cloned().unwrap_or(Value::Null);
                check_domain(t, v, cx)?
            }
        };
        out.push(v);
    }
    let row = Value::Record(out.into());
    match domain {
        Some(d) => check(d, row, cx),
        None => Ok(row),
    }
}

/// Whether `t` reads a record (possibly through domains).
fn is_record(t: &Target) -> bool {
    match t {
        Target::Record(_) => true,
        Target::Domain(inner, _) => is_record(inner),
        _ => false,
    }
}

fn composite_error(what: &str) -> SqlError {
    SqlError::new(SqlState::INVALID_PARAMETER_VALUE, format!("cannot call populate_composite on {what}"))
}

fn check(op: &TypeOp, v: Value, cx: &Ctx<'_>) -> Result<Value, SqlError> {
    if let TypeOp::Domain(d) = op {
        d.check(&v, cx)?;
    }
    Ok(v)
}

/// `v` checked against the domains `target` names, outermost last.
fn check_domain(target: &Target, v: Value, cx: &Ctx<'_>) -> Result<Value, SqlError> {
    match target {
        Target::Domain(_, d) => check(d, v, cx),
        _ => Ok(v),
    }
}

/// One member converted to `target`.
fn value(
    target: &Target,
    node: JsonNode<'_>,
    place: &mut Place<'_>,
    cx: &Ctx<'_>,
) -> Result<Value, SqlError> {
    match target {
        Target::Domain(inner, d) => {
            let v = value(inner, node, place, cx)?;
            check(d, v, cx)
        }
        _ if node.kind() == NodeKind::Null => Ok(Value::Null),
        Target::Scalar(SqlType::Json) => Ok(Value::Json(node.json().into())),
        Target::Scalar(SqlType::Jsonb) => Ok(Value::Jsonb(node.to_jsonb()?)),
        Target::Scalar(ty) => {
            let text = node.text().unwrap_or_default();
            Value::parse_in(*ty, &text, cx.style())
        }
        Target::Record(fields) => match node.kind() {
            NodeKind::String => record_from_text(fields, &node.text().unwrap_or_default(), cx),
            _ => record(target, node, None, cx),
        },
        Target::Array(elem) => match node.kind() {
            NodeKind::Array => array(elem, node, place, cx),
            NodeKind::String => array_from_text(elem, &node.text().unwrap_or_default(), cx),
            _ => Err(expected_array(place)),
        },
    }
}

/// A record from its text form (`(abc,42,…)`), each attribute read as
/// its type reads text.
fn record_from_text(fields: &[(String, Target)], text: &str, cx: &Ctx<'_>) -> Result<Value, SqlError> {
    let raw = snapscale_values::parse_record(text, fields.len())?;
    let mut out = Vec::with_capacity(fields.len());
    for ((_, t), f) in fields.iter().zip(raw) {
        out.push(match f {
            None => check_domain(t, Value::Null, cx)?,
            Some(s) => from_text(t, &s, cx)?,
        });
    }
    Ok(Value::Record(out.into()))
}

/// A value of `target` from its SQL text form.
fn from_text(target: &Target, text: &str, cx: &Ctx<'_>) -> Result<Value, SqlError> {
    match target {
        Target::Scalar(ty) => Value::parse_in(*ty, text, cx.style()),
        Target::Domain(inner, d) => {
            let v = from_text(inner, text, cx)?;
            check(d, v, cx)
        }
        Target::Record(fields) => record_from_text(fields, text, cx),
        Target::Array(elem) => array_from_text(elem, text, cx),
    }
}

/// An array from its text form (`{1,2}`), the elements read as `elem`
/// reads text.
fn array_from_text(elem: &Target, text: &str, cx: &Ctx<'_>) -> Result<Value, SqlError> {
    let Value::Array(a) = Value::parse_in(SqlType::Array(snapscale_values::Elem::Text), text, cx.style())?
    else {
        return Ok(Value::Null);
    };
    let items = a
        .iter()
        .map(|v| match v {
            Value::Text(s) => from_text(elem, s, cx),
            _ => check_domain(elem, Value::Null, cx),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Value::Array(Arc::new(a.reshaped(items))))
}

/// An array from a JSON array: as many dimensions as its first element
/// nests arrays, every sub-array of the same length.
fn array(elem: &Target, node: JsonNode<'_>, place: &mut Place<'_>, cx: &Ctx<'_>) -> Result<Value, SqlError> {
    // The dimensions, from the first element at each level.
    let mut lens: Vec<Option<usize>> = Vec::new();
    let mut items = Vec::new();
    walk(elem, node, 0, &mut lens, &mut items, place, cx)?;
    let lens: Vec<usize> = lens.into_iter().map(|l| l.unwrap_or(0)).collect();
    if lens.contains(&0) || items.is_empty() {
        return Ok(Value::Array(Arc::new(Array::empty())));
    }
    let dims = lens.iter().map(|&len| Dim { lower: 1, len: len as i32 }).collect();
    Ok(Value::Array(Arc::new(Array::from_parts(dims, items)?)))
}

#[allow(clippy::too_many_arguments)]
fn walk(
    elem: &Target,
    node: JsonNode<'_>,
    level: usize,
    lens: &mut Vec<Option<usize>>,
    items: &mut Vec<Value>,
    place: &mut Place<'_>,
    cx: &Ctx<'_>,
) -> Result<(), SqlError> {
    let elements = node.elements();
    if level >= MAX_DIMS {
        return Err(snapscale_values::too_many_dims(level + 1));
    }
    if lens.len() == level {
        lens.push(Some(elements.len()));
    } else if lens[level] != Some(elements.len()) {
        return Err(ragged());
    }
    for (i, e) in elements.into_iter().enumerate() {
        place.indexes.push(i);
        let nested = e.kind() == NodeKind::Array;
        // The first element of the first sub-array decides the depth.
        let deeper = lens.len() > level + 1;
        let first = items.is_empty() && !deeper && i == 0;
        if nested && (deeper || first) {
            walk(elem, e, level + 1, lens, items, place, cx)?;
        } else if deeper {
            return Err(expected_array(place));
        } else {
            // At the innermost level an array is an element like any
            // other (json, or text its type may not read).
            items.push(value(elem, e, place, cx)?);
        }
        place.indexes.pop();
    }
    Ok(())
}
