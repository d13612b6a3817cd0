//! json and jsonb's functions and operators (implementations in
//! `expr/scalar/json.rs`). Operators are entries named by their symbol,
//! which no function call can name: `a -> b` binds as `"->"(a, b)`, with
//! the text key before the integer index, as an unknown literal resolves.

use snapscale_values::{Elem, SqlType};

use super::builtins::{s, sv, Any, Arg, Builtin, Is, INT4, TEXT};
use crate::expr::scalar;

const JSONB: Arg = Is(SqlType::Jsonb);
const JSON: Arg = Is(SqlType::Json);
const PATH: Arg = Is(SqlType::JsonPath);
const TEXTS: Arg = Is(SqlType::Array(Elem::Text));
const BOOL: Arg = Is(SqlType::Bool);
const B: SqlType = SqlType::Jsonb;
const J: SqlType = SqlType::Json;
const T: SqlType = SqlType::Text;

pub(super) static JSON_FUNCTIONS: &[Builtin] = &[
    s("->", &[JSONB, TEXT], B, scalar::JSONB_FIELD),
    s("->", &[JSONB, INT4], B, scalar::JSONB_ELEMENT),
    s("->", &[JSON, TEXT], J, scalar::JSON_FIELD),
    s("->", &[JSON, INT4], J, scalar::JSON_ELEMENT),
    s("->>", &[JSONB, TEXT], T, scalar::JSONB_FIELD_TEXT),
    s("->>", &[JSONB, INT4], T, scalar::JSONB_ELEMENT_TEXT),
    s("->>", &[JSON, TEXT], T, scalar::JSON_FIELD_TEXT),
    s("->>", &[JSON, INT4], T, scalar::JSON_ELEMENT_TEXT),
    s("#>", &[JSONB, TEXTS], B, scalar::JSONB_PATH),
    s("#>", &[JSON, TEXTS], J, scalar::JSON_PATH),
    s("#>>", &[JSONB, TEXTS], T, scalar::JSONB_PATH_TEXT),
    s("#>>", &[JSON, TEXTS], T, scalar::JSON_PATH_TEXT),
    s("@>", &[JSONB, JSONB], SqlType::Bool, scalar::JSONB_CONTAINS),
    s("<@", &[JSONB, JSONB], SqlType::Bool, scalar::JSONB_CONTAINED),
    s("?", &[JSONB, TEXT], SqlType::Bool, scalar::JSONB_EXISTS),
    s("?|", &[JSONB, TEXTS], SqlType::Bool, scalar::JSONB_EXISTS_ANY),
    s("?&", &[JSONB, TEXTS], SqlType::Bool, scalar::JSONB_EXISTS_ALL),
    s("||", &[JSONB, JSONB], B, scalar::JSONB_CONCAT),
    s("-", &[JSONB, TEXT], B, scalar::JSONB_DELETE_KEY),
    s("-", &[JSONB, TEXTS], B, scalar::JSONB_DELETE_KEYS),
    s("-", &[JSONB, INT4], B, scalar::JSONB_DELETE_INDEX),
    s("#-", &[JSONB, TEXTS], B, scalar::JSONB_DELETE_PATH),
    s("@?", &[JSONB, PATH], SqlType::Bool, scalar::JSONB_PATH_EXISTS_OP),
    s("@@", &[JSONB, PATH], SqlType::Bool, scalar::JSONB_PATH_MATCH_OP),
    s("jsonb_path_exists", &[JSONB, PATH], SqlType::Bool, scalar::JSONB_PATH_EXISTS),
    s("jsonb_path_exists", &[JSONB, PATH, JSONB], SqlType::Bool, scalar::JSONB_PATH_EXISTS),
    s("jsonb_path_exists", &[JSONB, PATH, JSONB, BOOL], SqlType::Bool, scalar::JSONB_PATH_EXISTS),
    s("jsonb_path_match", &[JSONB, PATH], SqlType::Bool, scalar::JSONB_PATH_MATCH),
    s("jsonb_path_match", &[JSONB, PATH, JSONB], SqlType::Bool, scalar::JSONB_PATH_MATCH),
    s("jsonb_path_match", &[JSONB, PATH, JSONB, BOOL], SqlType::Bool, scalar::JSONB_PATH_MATCH),
    s("jsonb_path_query_array", &[JSONB, PATH], B, scalar::JSONB_PATH_QUERY_ARRAY),
    s("jsonb_path_query_array", &[JSONB, PATH, JSONB], B, scalar::JSONB_PATH_QUERY_ARRAY),
    s("jsonb_path_query_array", &[JSONB, PATH, JSONB, BOOL], B, scalar::JSONB_PATH_QUERY_ARRAY),
    s("jsonb_path_query_first", &[JSONB, PATH], B, scalar::JSONB_PATH_QUERY_FIRST),
    s("jsonb_path_query_first", &[JSONB, PATH, JSONB], B, scalar::JSONB_PATH_QUERY_FIRST),
    s("jsonb_path_query_first", &[JSONB, PATH, JSONB, BOOL], B, scalar::JSONB_PATH_QUERY_FIRST),
    sv("jsonb_extract_path", &[JSONB, TEXT], B, scalar::JSONB_PATH_VARIADIC),
    sv("jsonb_extract_path_text", &[JSONB, TEXT], T, scalar::JSONB_PATH_TEXT_VARIADIC),
    sv("json_extract_path", &[JSON, TEXT], J, scalar::JSON_PATH_VARIADIC),
    sv("json_extract_path_text", &[JSON, TEXT], T, scalar::JSON_PATH_TEXT_VARIADIC),
    s("jsonb_set", &[JSONB, TEXTS, JSONB], B, scalar::JSONB_SET),
    s("jsonb_set", &[JSONB, TEXTS, JSONB, BOOL], B, scalar::JSONB_SET),
    s("jsonb_insert", &[JSONB, TEXTS, JSONB], B, scalar::JSONB_INSERT),
    s("jsonb_insert", &[JSONB, TEXTS, JSONB, BOOL], B, scalar::JSONB_INSERT),
    s("jsonb_strip_nulls", &[JSONB], B, scalar::JSONB_STRIP_NULLS),
    s("json_strip_nulls", &[JSON], J, scalar::JSON_STRIP_NULLS),
    s("jsonb_pretty", &[JSONB], T, scalar::JSONB_PRETTY),
    s("jsonb_typeof", &[JSONB], T, scalar::JSONB_TYPEOF),
    s("json_typeof", &[JSON], T, scalar::JSON_TYPEOF),
    s("jsonb_array_length", &[JSONB], SqlType::Int4, scalar::JSONB_ARRAY_LENGTH),
    s("json_array_length", &[JSON], SqlType::Int4, scalar::JSON_ARRAY_LENGTH),
    s("to_json", &[Any], J, scalar::TO_JSON),
    s("to_jsonb", &[Any], B, scalar::TO_JSONB),
    s("array_to_json", &[Any], J, scalar::TO_JSON),
    s("json_object", &[TEXTS], J, scalar::JSON_OBJECT),
    s("jsonb_object", &[TEXTS], B, scalar::JSONB_OBJECT),
    s("json_object", &[TEXTS, TEXTS], J, scalar::JSON_OBJECT_TWO),
    s("jsonb_object", &[TEXTS, TEXTS], B, scalar::JSONB_OBJECT_TWO),
    // The functions behind jsonb's operators, by their own names.
    s("jsonb_contains", &[JSONB, JSONB], SqlType::Bool, scalar::JSONB_CONTAINS),
    s("jsonb_contained", &[JSONB, JSONB], SqlType::Bool, scalar::JSONB_CONTAINED),
    s("jsonb_exists", &[JSONB, TEXT], SqlType::Bool, scalar::JSONB_EXISTS),
    s("jsonb_exists_any", &[JSONB, TEXTS], SqlType::Bool, scalar::JSONB_EXISTS_ANY),
    s("jsonb_exists_all", &[JSONB, TEXTS], SqlType::Bool, scalar::JSONB_EXISTS_ALL),
    s("jsonb_concat", &[JSONB, JSONB], B, scalar::JSONB_CONCAT),
    s("jsonb_delete", &[JSONB, TEXT], B, scalar::JSONB_DELETE_KEY),
    s("jsonb_delete", &[JSONB, INT4], B, scalar::JSONB_DELETE_INDEX),
    s("jsonb_delete", &[JSONB, TEXTS], B, scalar::JSONB_DELETE_KEYS),
    s("jsonb_delete_path", &[JSONB, TEXTS], B, scalar::JSONB_DELETE_PATH),
    sv("json_build_object", &[Any], J, scalar::JSON_BUILD_OBJECT),
    sv("jsonb_build_object", &[Any], B, scalar::JSONB_BUILD_OBJECT),
    sv("json_build_array", &[Any], J, scalar::JSON_BUILD_ARRAY),
    sv("jsonb_build_array", &[Any], B, scalar::JSONB_BUILD_ARRAY),
];
