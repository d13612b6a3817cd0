//! PostgreSQL 15's `json` and `jsonb` types: input validation and parsing
//! with PostgreSQL's error reports, the normalised [`Jsonb`] value with its
//! text, binary and storage formats and btree order, and the operators and
//! functions over both types.
//!
//! Modules: `lexer` (tokens and error reports), `parse` (the grammar,
//! iterative, with the nesting limit), `value` ([`Jsonb`] and its token
//! walk), `out` (jsonb_out, jsonb_pretty, string quoting), `ord`
//! (comparison and hashing), `wire` (send/recv and storage encoding),
//! `ops` (jsonb operators and functions), `text` (the json-text functions,
//! which work on the original text), `build` (to_json, the builders and
//! the aggregates).

mod build;
mod lexer;
mod node;
mod ops;
mod ord;
mod out;
mod parse;
pub mod path;
mod subscript;
mod text;
mod value;
mod wire;

#[cfg(test)]
mod tests;

pub use build::{
    json_build_array, json_build_object, json_object, json_object_two_arg, jsonb_build_array,
    jsonb_build_object, jsonb_object, jsonb_object_two_arg, to_json, to_jsonb, JsonAgg, JsonInput,
    JsonObjectAgg, JsonbAgg, JsonbObjectAgg,
};
pub use node::{JsonNode, NodeKind};
pub use ops::PathStep;
pub use ord::compare;
pub use out::escape_json;
pub use parse::set_max_stack_depth;
pub use path::JsonPath;
pub use text::{
    json_array_elements, json_array_elements_text, json_array_length, json_each, json_each_text,
    json_extract_path, json_extract_path_text, json_object_keys, json_strip_nulls, json_typeof, JsonText,
};
pub use value::{key_order, Jsonb};
pub use wire::{json_from_wire, json_to_wire};

use crate::SqlError;

/// json_in: checks that `input` is valid json; the value is the text as
/// given.
pub fn json_in(input: &str) -> Result<(), SqlError> {
    parse::validate(input)
}

/// jsonb_in.
pub fn jsonb_in(input: &str) -> Result<Jsonb, SqlError> {
    Jsonb::parse(input)
}

/// Attaches PostgreSQL's CONTEXT line to a json input error.
///
/// `SqlError` has no CONTEXT field yet, so the text is dropped here (tests
/// see it through a thread-local). PostgreSQL sends, for every json syntax
/// error, `CONTEXT:  JSON data, line N: <excerpt>` where the excerpt is the
/// erroring line up to the end of the bad token, at most ~50 bytes, with
/// `...` before it when the line start was cut and after it when more
/// input follows on that line; `context` is that text without the
/// `CONTEXT:  ` prefix. Once `SqlError` gains a context field, store it
/// here.
pub(crate) fn attach_context(mut err: SqlError, context: String) -> SqlError {
    #[cfg(test)]
    tests::LAST_CONTEXT.with(|c| *c.borrow_mut() = Some(context.clone()));
    err.context = Some(context);
    err
}
