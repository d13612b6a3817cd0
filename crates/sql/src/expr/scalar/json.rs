//! json and jsonb's operators and functions over snapscale_values::json:
//! field and path access (`->`, `->>`, `#>`, `#>>`), containment and
//! existence (`@>`, `<@`, `?`, `?|`, `?&`), jsonb's edits (`||`, `-`,
//! `#-`, jsonb_set, jsonb_insert), the builders (to_json[b],
//! json[b]_build_object/array) and the inspection functions. The SQL
//! values a builder takes become `JsonInput`s here ([`json_input`]).

use snapscale_values::json::{self, JsonInput, JsonText, Jsonb, PathStep};
use snapscale_values::{SqlError, Value, Zone};

use super::{int, text, Scalar};

fn jsonb(v: &Value) -> &Jsonb {
    static NULL: Jsonb = Jsonb::Null;
    match v {
        Value::Jsonb(j) => j,
        _ => &NULL,
    }
}

fn json_text(v: &Value) -> &str {
    match v {
        Value::Json(t) => t,
        Value::Text(t) => t,
        _ => "null",
    }
}

/// A text[] argument as a path: its elements, NULL ones as `None`.
fn path(v: &Value) -> Vec<PathStep<'_>> {
    match v {
        Value::Array(items) => {
            items.iter().map(|i| if let Value::Text(s) = i { Some(s.as_str()) } else { None }).collect()
        }
        _ => Vec::new(),
    }
}

fn opt_jsonb(v: Option<Jsonb>) -> Value {
    v.map_or(Value::Null, Value::Jsonb)
}

fn opt_text(v: Option<String>) -> Value {
    v.map_or(Value::Null, Value::Text)
}

fn opt_json(v: Option<&str>) -> Value {
    v.map_or(Value::Null, |t| Value::Json(t.into()))
}

/// A SQL value as the json builders see it: numbers bare, text quoted,
/// json inserted, dates and timestamps in ISO 8601 form, arrays as json
/// arrays of their elements. A value whose text PostgreSQL could not
/// write fails as its output function would (TEXT-SIZE).
pub fn json_input(v: &Value, zone: Zone) -> Result<JsonInput, SqlError> {
    Ok(match v {
        Value::Null => JsonInput::Null,
        Value::Bool(b) => JsonInput::Bool(*b),
        Value::Int(i) => JsonInput::NumberText(i.to_string()),
        Value::Float(_) | Value::Float4(_) => JsonInput::NumberText(v.to_text().unwrap_or_default()),
        Value::Numeric(n) => JsonInput::Numeric(n.clone()),
        Value::Json(t) => JsonInput::Json(t.to_string()),
        Value::Jsonb(j) => JsonInput::Jsonb(j.clone()),
        Value::Timestamp(_) | Value::TimestampTz(_) => {
            let text = v.to_text_in(zone).unwrap_or_default().replacen(' ', "T", 1);
            JsonInput::Text(iso_offset(text))
        }
        Value::Array(array) => {
            let mut out = String::new();
            let mut items = array.iter();
            json_level(&mut out, array.dims(), &mut items, zone)?;
            JsonInput::Structured(out)
        }
        other => JsonInput::Text(other.try_text_in(zone)?.unwrap_or_default()),
    })
}

/// One dimension of an array as a json array (`[]` for the empty array).
fn json_level<'a>(
    out: &mut String,
    dims: &[snapscale_values::Dim],
    items: &mut impl Iterator<Item = &'a Value>,
    zone: Zone,
) -> Result<(), SqlError> {
    out.push('[');
    let Some(dim) = dims.first() else {
        out.push(']');
        return Ok(());
    };
    for i in 0..dim.len {
        if i > 0 {
            out.push(',');
        }
        if dims.len() > 1 {
            json_level(out, &dims[1..], items, zone)?;
        } else if let Some(v) = items.next() {
            out.push_str(&json::to_json(&json_input(v, zone)?));
        }
    }
    out.push(']');
    Ok(())
}

/// A timestamptz's offset as JSON writes it: `+02:00`, not `+02`.
fn iso_offset(text: String) -> String {
    let tail = text.rfind(['+', '-']).filter(|&i| i > 10).map(|i| &text[i..]);
    match tail {
        Some(offset) if offset.len() == 3 => format!("{text}:00"),
        _ => text,
    }
}

fn field(a: &[Value]) -> Result<Value, SqlError> {
    Ok(opt_jsonb(jsonb(&a[0]).field(text(&a[1]))))
}
fn field_text(a: &[Value]) -> Result<Value, SqlError> {
    Ok(opt_text(jsonb(&a[0]).field_text(text(&a[1]))))
}
fn element(a: &[Value]) -> Result<Value, SqlError> {
    Ok(opt_jsonb(jsonb(&a[0]).element(int(&a[1]) as i32)))
}
fn element_text(a: &[Value]) -> Result<Value, SqlError> {
    Ok(opt_text(jsonb(&a[0]).element_text(int(&a[1]) as i32)))
}
fn extract_path(a: &[Value]) -> Result<Value, SqlError> {
    Ok(opt_jsonb(jsonb(&a[0]).extract_path(&path(&a[1]))))
}
fn extract_path_text(a: &[Value]) -> Result<Value, SqlError> {
    Ok(opt_text(jsonb(&a[0]).extract_path_text(&path(&a[1]))))
}
/// The variadic path functions: the path is the arguments after the
/// first.
fn variadic_path(a: &[Value]) -> Value {
    Value::array(a[1..].to_vec())
}
fn extract_path_variadic(a: &[Value]) -> Result<Value, SqlError> {
    extract_path(&[a[0].clone(), variadic_path(a)])
}
fn extract_path_text_variadic(a: &[Value]) -> Result<Value, SqlError> {
    extract_path_text(&[a[0].clone(), variadic_path(a)])
}
fn json_extract_path_variadic(a: &[Value]) -> Result<Value, SqlError> {
    json_extract_path(&[a[0].clone(), variadic_path(a)])
}
fn json_extract_path_text_variadic(a: &[Value]) -> Result<Value, SqlError> {
    json_extract_path_text(&[a[0].clone(), variadic_path(a)])
}
fn json_field(a: &[Value]) -> Result<Value, SqlError> {
    Ok(opt_json(JsonText::parse(json_text(&a[0]))?.field(text(&a[1]))))
}
fn json_field_text(a: &[Value]) -> Result<Value, SqlError> {
    Ok(opt_text(JsonText::parse(json_text(&a[0]))?.field_text(text(&a[1]))))
}
fn json_element(a: &[Value]) -> Result<Value, SqlError> {
    Ok(opt_json(JsonText::parse(json_text(&a[0]))?.element(int(&a[1]) as i32)))
}
fn json_element_text(a: &[Value]) -> Result<Value, SqlError> {
    Ok(opt_text(JsonText::parse(json_text(&a[0]))?.element_text(int(&a[1]) as i32)))
}
fn json_extract_path(a: &[Value]) -> Result<Value, SqlError> {
    Ok(opt_json(json::json_extract_path(json_text(&a[0]), &path(&a[1]))?))
}
fn json_extract_path_text(a: &[Value]) -> Result<Value, SqlError> {
    Ok(opt_text(json::json_extract_path_text(json_text(&a[0]), &path(&a[1]))?))
}
fn contains(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Bool(jsonb(&a[0]).contains(jsonb(&a[1]))))
}
fn contained_in(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Bool(jsonb(&a[0]).contained_in(jsonb(&a[1]))))
}
fn exists(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Bool(jsonb(&a[0]).exists(text(&a[1]))))
}
fn exists_any(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Bool(jsonb(&a[0]).exists_any(&path(&a[1]))))
}
fn exists_all(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Bool(jsonb(&a[0]).exists_all(&path(&a[1]))))
}
fn concat(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Jsonb(jsonb(&a[0]).concat(jsonb(&a[1]))))
}
fn delete_key(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Jsonb(jsonb(&a[0]).delete_key(text(&a[1]))?))
}
fn delete_keys(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Jsonb(jsonb(&a[0]).delete_keys(&path(&a[1]))?))
}
fn delete_index(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Jsonb(jsonb(&a[0]).delete_index(int(&a[1]) as i32)?))
}
fn delete_path(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Jsonb(jsonb(&a[0]).delete_path(&path(&a[1]))?))
}
fn set(a: &[Value]) -> Result<Value, SqlError> {
    let create = !matches!(a.get(3), Some(Value::Bool(false)));
    Ok(Value::Jsonb(jsonb(&a[0]).set_path(&path(&a[1]), jsonb(&a[2]), create)?))
}
fn insert(a: &[Value]) -> Result<Value, SqlError> {
    let after = matches!(a.get(3), Some(Value::Bool(true)));
    Ok(Value::Jsonb(jsonb(&a[0]).insert_path(&path(&a[1]), jsonb(&a[2]), after)?))
}
fn strip_nulls(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Jsonb(jsonb(&a[0]).strip_nulls()))
}
fn json_strip_nulls(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Json(json::json_strip_nulls(json_text(&a[0]))?.into()))
}
fn pretty(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Text(jsonb(&a[0]).pretty()))
}
fn type_of(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Text(jsonb(&a[0]).type_name().into()))
}
fn json_type_of(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Text(json::json_typeof(json_text(&a[0]))?.into()))
}
fn array_length(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Int(jsonb(&a[0]).array_length()?.into()))
}
fn json_array_length(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Int(json::json_array_length(json_text(&a[0]))?.into()))
}

// The builders see their arguments' SQL types only through the values;
// the session's zone does not reach a Scalar, so timestamptz arguments
// are written in UTC here (see json_input).
fn inputs(a: &[Value]) -> Result<Vec<JsonInput>, SqlError> {
    a.iter().map(|v| json_input(v, Zone::UTC)).collect()
}
fn to_json(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Json(json::to_json(&json_input(&a[0], Zone::UTC)?).into()))
}
fn to_jsonb(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Jsonb(json::to_jsonb(&json_input(&a[0], Zone::UTC)?)?))
}
/// row_to_json: `a` is whether to break lines, then the row's fields as
/// pairs of name and value: a json object without spaces (with a line
/// break and a space before each field after the first when pretty).
fn row_to_json(a: &[Value]) -> Result<Value, SqlError> {
    let pretty = matches!(a.first(), Some(Value::Bool(true)));
    let mut out = String::from("{");
    for (i, pair) in a.get(1..).unwrap_or_default().chunks(2).enumerate() {
        if i > 0 {
            out.push_str(if pretty { ",\n " } else { "," });
        }
        let name = match &pair[0] {
            Value::Text(n) => n.clone(),
            _ => String::new(),
        };
        out.push_str(&json::to_json(&JsonInput::Text(name)));
        out.push(':');
        out.push_str(&json::to_json(&json_input(pair.get(1).unwrap_or(&Value::Null), Zone::UTC)?));
    }
    out.push('}');
    Ok(Value::Json(out.into()))
}
fn build_object(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Json(json::json_build_object(&inputs(a)?)?.into()))
}
fn jsonb_build_object(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Jsonb(json::jsonb_build_object(&inputs(a)?)?))
}
fn build_array(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Json(json::json_build_array(&inputs(a)?).into()))
}
fn jsonb_build_array(a: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Jsonb(json::jsonb_build_array(&inputs(a)?)?))
}

pub(crate) fn path_args(a: &[Value]) -> Result<(&Jsonb, &json::JsonPath, Option<&Jsonb>, bool), SqlError> {
    static EMPTY: std::sync::OnceLock<Jsonb> = std::sync::OnceLock::new();
    let Value::JsonPath(path) = &a[1] else {
        return Err(SqlError::new(
            snapscale_sqlstate::SqlState::DATATYPE_MISMATCH,
            "argument must be a jsonpath",
        ));
    };
    let vars = match a.get(2) {
        Some(Value::Jsonb(v)) => Some(v),
        _ => Some(EMPTY.get_or_init(|| Jsonb::object(Vec::<(String, Jsonb)>::new()))),
    };
    Ok((jsonb(&a[0]), path, vars, matches!(a.get(3), Some(Value::Bool(true)))))
}
fn path_query_array(a: &[Value]) -> Result<Value, SqlError> {
    let (target, path, vars, silent) = path_args(a)?;
    Ok(Value::Jsonb(Jsonb::array(json::path::path_query(target, path, vars, silent)?)))
}
fn path_query_first(a: &[Value]) -> Result<Value, SqlError> {
    let (target, path, vars, silent) = path_args(a)?;
    Ok(opt_jsonb(json::path::path_query(target, path, vars, silent)?.into_iter().next()))
}
fn path_exists(a: &[Value]) -> Result<Value, SqlError> {
    let (target, path, vars, silent) = path_args(a)?;
    Ok(json::path::path_exists(target, path, vars, silent)?.map_or(Value::Null, Value::Bool))
}
fn path_match(a: &[Value]) -> Result<Value, SqlError> {
    let (target, path, vars, silent) = path_args(a)?;
    Ok(json::path::path_match(target, path, vars, silent)?.map_or(Value::Null, Value::Bool))
}
/// `@?` and `@@`: silent, as PostgreSQL's operators are.
fn path_exists_op(a: &[Value]) -> Result<Value, SqlError> {
    path_exists(&[a[0].clone(), a[1].clone(), Value::Null, Value::Bool(true)])
}
fn path_match_op(a: &[Value]) -> Result<Value, SqlError> {
    path_match(&[a[0].clone(), a[1].clone(), Value::Null, Value::Bool(true)])
}

/// A builder's NULL arguments are values, not a reason to skip the call.
const fn lenient(name: &'static str, call: fn(&[Value]) -> Result<Value, SqlError>) -> Scalar {
    Scalar { name, call, styled: None, strict: false, volatile: false }
}

pub const JSONB_PATH_QUERY_ARRAY: Scalar = Scalar::new("jsonb_path_query_array", path_query_array);
pub const JSONB_PATH_QUERY_FIRST: Scalar = Scalar::new("jsonb_path_query_first", path_query_first);
pub const JSONB_PATH_EXISTS: Scalar = Scalar::new("jsonb_path_exists", path_exists);
pub const JSONB_PATH_MATCH: Scalar = Scalar::new("jsonb_path_match", path_match);
pub const JSONB_PATH_EXISTS_OP: Scalar = Scalar::new("@?", path_exists_op);
pub const JSONB_PATH_MATCH_OP: Scalar = Scalar::new("@@", path_match_op);
pub const JSONB_FIELD: Scalar = Scalar::new("->", field);
pub const JSONB_FIELD_TEXT: Scalar = Scalar::new("->>", field_text);
pub const JSONB_ELEMENT: Scalar = Scalar::new("->", element);
pub const JSONB_ELEMENT_TEXT: Scalar = Scalar::new("->>", element_text);
pub const JSONB_PATH: Scalar = Scalar::new("#>", extract_path);
pub const JSONB_PATH_TEXT: Scalar = Scalar::new("#>>", extract_path_text);
pub const JSONB_PATH_VARIADIC: Scalar = Scalar::new("jsonb_extract_path", extract_path_variadic);
pub const JSONB_PATH_TEXT_VARIADIC: Scalar =
    Scalar::new("jsonb_extract_path_text", extract_path_text_variadic);
pub const JSON_PATH_VARIADIC: Scalar = Scalar::new("json_extract_path", json_extract_path_variadic);
pub const JSON_PATH_TEXT_VARIADIC: Scalar =
    Scalar::new("json_extract_path_text", json_extract_path_text_variadic);
pub const JSON_FIELD: Scalar = Scalar::new("->", json_field);
pub const JSON_FIELD_TEXT: Scalar = Scalar::new("->>", json_field_text);
pub const JSON_ELEMENT: Scalar = Scalar::new("->", json_element);
pub const JSON_ELEMENT_TEXT: Scalar = Scalar::new("->>", json_element_text);
pub const JSON_PATH: Scalar = Scalar::new("#>", json_extract_path);
pub const JSON_PATH_TEXT: Scalar = Scalar::new("#>>", json_extract_path_text);
/// A text array's dimension lengths and its elements (NULL as `None`).
fn text_array(v: &Value) -> (Vec<usize>, Vec<Option<&str>>) {
    let Value::Array(a) = v else { return (Vec::new(), Vec::new()) };
    let dims = a.dims().iter().map(|d| d.len as usize).collect();
    let elems = a.iter().map(|x| if let Value::Text(t) = x { Some(t.as_str()) } else { None }).collect();
    (dims, elems)
}

fn json_object_one(a: &[Value]) -> Result<Value, SqlError> {
    let (dims, elems) = text_array(&a[0]);
    Ok(Value::Json(json::json_object(&dims, &elems)?.into()))
}

fn jsonb_object_one(a: &[Value]) -> Result<Value, SqlError> {
    let (dims, elems) = text_array(&a[0]);
    Ok(Value::Jsonb(json::jsonb_object(&dims, &elems)?))
}

fn json_object_two(a: &[Value]) -> Result<Value, SqlError> {
    let ((kd, keys), (vd, values)) = (text_array(&a[0]), text_array(&a[1]));
    Ok(Value::Json(json::json_object_two_arg(&keys, kd.len(), &values, vd.len())?.into()))
}

fn jsonb_object_two(a: &[Value]) -> Result<Value, SqlError> {
    let ((kd, keys), (vd, values)) = (text_array(&a[0]), text_array(&a[1]));
    Ok(Value::Jsonb(json::jsonb_object_two_arg(&keys, kd.len(), &values, vd.len())?))
}

pub const JSON_OBJECT: Scalar = Scalar::new("json_object", json_object_one);
pub const JSONB_OBJECT: Scalar = Scalar::new("jsonb_object", jsonb_object_one);
pub const JSON_OBJECT_TWO: Scalar = Scalar::new("json_object", json_object_two);
pub const JSONB_OBJECT_TWO: Scalar = Scalar::new("jsonb_object", jsonb_object_two);
pub const JSONB_CONTAINS: Scalar = Scalar::new("@>", contains);
pub const JSONB_CONTAINED: Scalar = Scalar::new("<@", contained_in);
pub const JSONB_EXISTS: Scalar = Scalar::new("?", exists);
pub const JSONB_EXISTS_ANY: Scalar = Scalar::new("?|", exists_any);
pub const JSONB_EXISTS_ALL: Scalar = Scalar::new("?&", exists_all);
pub const JSONB_CONCAT: Scalar = Scalar::new("||", concat);
pub const JSONB_DELETE_KEY: Scalar = Scalar::new("-", delete_key);
pub const JSONB_DELETE_KEYS: Scalar = Scalar::new("-", delete_keys);
pub const JSONB_DELETE_INDEX: Scalar = Scalar::new("-", delete_index);
pub const JSONB_DELETE_PATH: Scalar = Scalar::new("#-", delete_path);
pub const JSONB_SET: Scalar = Scalar::new("jsonb_set", set);
pub const JSONB_INSERT: Scalar = Scalar::new("jsonb_insert", insert);
pub const JSONB_STRIP_NULLS: Scalar = Scalar::new("jsonb_strip_nulls", strip_nulls);
pub const JSON_STRIP_NULLS: Scalar = Scalar::new("json_strip_nulls", json_strip_nulls);
pub const JSONB_PRETTY: Scalar = Scalar::new("jsonb_pretty", pretty);
pub const JSONB_TYPEOF: Scalar = Scalar::new("jsonb_typeof", type_of);
pub const JSON_TYPEOF: Scalar = Scalar::new("json_typeof", json_type_of);
pub const JSONB_ARRAY_LENGTH: Scalar = Scalar::new("jsonb_array_length", array_length);
pub const JSON_ARRAY_LENGTH: Scalar = Scalar::new("json_array_length", json_array_length);
pub const TO_JSON: Scalar = lenient("to_json", to_json);
pub const ROW_TO_JSON: Scalar = lenient("row_to_json", row_to_json);
pub const TO_JSONB: Scalar = lenient("to_jsonb", to_jsonb);
pub const JSON_BUILD_OBJECT: Scalar = lenient("json_build_object", build_object);
pub const JSONB_BUILD_OBJECT: Scalar = lenient("jsonb_build_object", jsonb_build_object);
pub const JSON_BUILD_ARRAY: Scalar = lenient("json_build_array", build_array);
pub const JSONB_BUILD_ARRAY: Scalar = lenient("jsonb_build_array", jsonb_build_array);
