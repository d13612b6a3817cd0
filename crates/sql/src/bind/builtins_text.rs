//! The string functions' signatures (implementations in
//! `expr/scalar/text.rs`), bound as `builtins.rs` binds its own.
//!
//! Where PostgreSQL has a text and a bytea version of a name, the text one
//! is listed first: an unknown literal takes the first on a tie, and
//! PostgreSQL prefers text for it.
//!
//! concat, concat_ws and format take any number of arguments of any type
//! after their fixed ones (`VARIADIC "any"`), at least one (`concat()` does
//! not exist): their signatures list the repeated `Any` twice, so that a
//! call needs one more argument than the fixed ones (`sv` takes the last
//! listed as repeating zero or more times).

use snapscale_values::{Elem, SqlType};

use super::builtins::{s, sv, Any, Builtin, BOOL, BYTEA, INT4, INT8, TEXT};
use crate::expr::scalar;

const TEXT_ARRAY: SqlType = SqlType::Array(Elem::Text);

pub(super) static STRINGS: &[Builtin] = &[
    s("repeat", &[TEXT, INT4], SqlType::Text, scalar::REPEAT),
    s("replace", &[TEXT, TEXT, TEXT], SqlType::Text, scalar::REPLACE),
    s("reverse", &[TEXT], SqlType::Text, scalar::REVERSE),
    // Also what the binder's `overlay(s PLACING r FROM n [FOR m])` is to
    // call.
    s("overlay", &[TEXT, TEXT, INT4], SqlType::Text, scalar::OVERLAY),
    s("overlay", &[TEXT, TEXT, INT4, INT4], SqlType::Text, scalar::OVERLAY),
    s("left", &[TEXT, INT4], SqlType::Text, scalar::LEFT),
    s("right", &[TEXT, INT4], SqlType::Text, scalar::RIGHT),
    s("lpad", &[TEXT, INT4], SqlType::Text, scalar::LPAD),
    s("lpad", &[TEXT, INT4, TEXT], SqlType::Text, scalar::LPAD),
    s("rpad", &[TEXT, INT4], SqlType::Text, scalar::RPAD),
    s("rpad", &[TEXT, INT4, TEXT], SqlType::Text, scalar::RPAD),
    s("btrim", &[TEXT], SqlType::Text, scalar::BTRIM),
    s("btrim", &[TEXT, TEXT], SqlType::Text, scalar::BTRIM),
    s("btrim", &[BYTEA, BYTEA], SqlType::Bytea, scalar::BYTEA_BTRIM),
    s("ltrim", &[TEXT], SqlType::Text, scalar::LTRIM),
    s("ltrim", &[TEXT, TEXT], SqlType::Text, scalar::LTRIM),
    s("ltrim", &[BYTEA, BYTEA], SqlType::Bytea, scalar::BYTEA_LTRIM),
    s("rtrim", &[TEXT], SqlType::Text, scalar::RTRIM),
    s("rtrim", &[TEXT, TEXT], SqlType::Text, scalar::RTRIM),
    s("rtrim", &[BYTEA, BYTEA], SqlType::Bytea, scalar::BYTEA_RTRIM),
    s("initcap", &[TEXT], SqlType::Text, scalar::INITCAP),
    s("split_part", &[TEXT, TEXT, INT4], SqlType::Text, scalar::SPLIT_PART),
    s("ascii", &[TEXT], SqlType::Int4, scalar::ASCII),
    s("chr", &[INT4], SqlType::Text, scalar::CHR),
    s("translate", &[TEXT, TEXT, TEXT], SqlType::Text, scalar::TRANSLATE),
    s("starts_with", &[TEXT, TEXT], SqlType::Bool, scalar::STARTS_WITH),
    s("to_hex", &[INT4], SqlType::Text, scalar::TO_HEX4),
    s("to_hex", &[INT8], SqlType::Text, scalar::TO_HEX8),
    s("char_length", &[TEXT], SqlType::Int4, scalar::CHAR_LENGTH),
    s("character_length", &[TEXT], SqlType::Int4, scalar::CHAR_LENGTH),
    s("octet_length", &[TEXT], SqlType::Int4, scalar::TEXT_OCTET_LENGTH),
    s("bit_length", &[TEXT], SqlType::Int4, scalar::BIT_LENGTH),
    s("bit_length", &[BYTEA], SqlType::Int4, scalar::BIT_LENGTH),
    s("quote_nullable", &[TEXT], SqlType::Text, scalar::QUOTE_NULLABLE),
    s("quote_nullable", &[Any], SqlType::Text, scalar::QUOTE_NULLABLE),
    s("parse_ident", &[TEXT], TEXT_ARRAY, scalar::PARSE_IDENT),
    s("parse_ident", &[TEXT, BOOL], TEXT_ARRAY, scalar::PARSE_IDENT),
    s("string_to_array", &[TEXT, TEXT], TEXT_ARRAY, scalar::STRING_TO_ARRAY),
    s("string_to_array", &[TEXT, TEXT, TEXT], TEXT_ARRAY, scalar::STRING_TO_ARRAY),
    s("regexp_replace", &[TEXT, TEXT, TEXT], SqlType::Text, scalar::REGEXP_REPLACE),
    // The flags form first: PostgreSQL reads an unknown fourth argument as
    // flags.
    s("regexp_replace", &[TEXT, TEXT, TEXT, TEXT], SqlType::Text, scalar::REGEXP_REPLACE_FLAGS),
    s("regexp_replace", &[TEXT, TEXT, TEXT, INT4], SqlType::Text, scalar::REGEXP_REPLACE_FROM),
    s("regexp_replace", &[TEXT, TEXT, TEXT, INT4, INT4], SqlType::Text, scalar::REGEXP_REPLACE_FROM),
    s("regexp_replace", &[TEXT, TEXT, TEXT, INT4, INT4, TEXT], SqlType::Text, scalar::REGEXP_REPLACE_FROM),
    s("regexp_match", &[TEXT, TEXT], TEXT_ARRAY, scalar::REGEXP_MATCH),
    s("regexp_match", &[TEXT, TEXT, TEXT], TEXT_ARRAY, scalar::REGEXP_MATCH),
    s("regexp_like", &[TEXT, TEXT], SqlType::Bool, scalar::REGEXP_LIKE),
    s("regexp_like", &[TEXT, TEXT, TEXT], SqlType::Bool, scalar::REGEXP_LIKE),
    // The functions behind `~`, `!~`, `~*` and `!~*`.
    s("textregexeq", &[TEXT, TEXT], SqlType::Bool, scalar::TEXTREGEXEQ),
    s("textregexne", &[TEXT, TEXT], SqlType::Bool, scalar::TEXTREGEXNE),
    s("texticregexeq", &[TEXT, TEXT], SqlType::Bool, scalar::TEXTICREGEXEQ),
    s("texticregexne", &[TEXT, TEXT], SqlType::Bool, scalar::TEXTICREGEXNE),
    s("regexp_count", &[TEXT, TEXT], SqlType::Int4, scalar::REGEXP_COUNT),
    s("regexp_count", &[TEXT, TEXT, INT4], SqlType::Int4, scalar::REGEXP_COUNT),
    s("regexp_count", &[TEXT, TEXT, INT4, TEXT], SqlType::Int4, scalar::REGEXP_COUNT),
    s("regexp_instr", &[TEXT, TEXT], SqlType::Int4, scalar::REGEXP_INSTR),
    s("regexp_instr", &[TEXT, TEXT, INT4], SqlType::Int4, scalar::REGEXP_INSTR),
    s("regexp_instr", &[TEXT, TEXT, INT4, INT4], SqlType::Int4, scalar::REGEXP_INSTR),
    s("regexp_instr", &[TEXT, TEXT, INT4, INT4, INT4], SqlType::Int4, scalar::REGEXP_INSTR),
    s("regexp_instr", &[TEXT, TEXT, INT4, INT4, INT4, TEXT], SqlType::Int4, scalar::REGEXP_INSTR),
    s("regexp_instr", &[TEXT, TEXT, INT4, INT4, INT4, TEXT, INT4], SqlType::Int4, scalar::REGEXP_INSTR),
    s("regexp_substr", &[TEXT, TEXT], SqlType::Text, scalar::REGEXP_SUBSTR),
    s("regexp_substr", &[TEXT, TEXT, INT4], SqlType::Text, scalar::REGEXP_SUBSTR),
    s("regexp_substr", &[TEXT, TEXT, INT4, INT4], SqlType::Text, scalar::REGEXP_SUBSTR),
    s("regexp_substr", &[TEXT, TEXT, INT4, INT4, TEXT], SqlType::Text, scalar::REGEXP_SUBSTR),
    s("regexp_substr", &[TEXT, TEXT, INT4, INT4, TEXT, INT4], SqlType::Text, scalar::REGEXP_SUBSTR),
    s("regexp_split_to_array", &[TEXT, TEXT], TEXT_ARRAY, scalar::REGEXP_SPLIT_TO_ARRAY),
    s("regexp_split_to_array", &[TEXT, TEXT, TEXT], TEXT_ARRAY, scalar::REGEXP_SPLIT_TO_ARRAY),
    sv("concat", &[Any, Any], SqlType::Text, scalar::CONCAT),
    sv("concat_ws", &[TEXT, Any, Any], SqlType::Text, scalar::CONCAT_WS),
    // format(text) is a function of its own in PostgreSQL: no argument
    // need follow the format.
    sv("format", &[TEXT, Any], SqlType::Text, scalar::FORMAT),
    // What the binder's `substring(s FROM pattern)` is to call (the SQL
    // syntax reaches no entry by itself).
    s("substring", &[TEXT, TEXT], SqlType::Text, scalar::SUBSTRING_REGEX),
    // `substring(s SIMILAR pattern ESCAPE escape)`, and the same with
    // FROM and FOR.
    s("substring", &[TEXT, TEXT, TEXT], SqlType::Text, scalar::SUBSTRING_SIMILAR),
    s("overlay", &[BYTEA, BYTEA, INT4], SqlType::Bytea, scalar::BYTEA_OVERLAY),
    s("overlay", &[BYTEA, BYTEA, INT4, INT4], SqlType::Bytea, scalar::BYTEA_OVERLAY),
    // What `LIKE … ESCAPE` and `SIMILAR TO … [ESCAPE]` call.
    s("like_escape", &[TEXT, TEXT], SqlType::Text, scalar::LIKE_ESCAPE),
    s("like_escape", &[BYTEA, BYTEA], SqlType::Bytea, scalar::BYTEA_LIKE_ESCAPE),
    s("similar_to_escape", &[TEXT], SqlType::Text, scalar::SIMILAR_TO_ESCAPE),
    s("similar_to_escape", &[TEXT, TEXT], SqlType::Text, scalar::SIMILAR_TO_ESCAPE),
    s("unistr", &[TEXT], SqlType::Text, scalar::UNISTR),
    s("get_bit", &[BYTEA, INT8], SqlType::Int4, scalar::GET_BIT),
    s("set_bit", &[BYTEA, INT8, INT4], SqlType::Bytea, scalar::SET_BIT),
    s("bit_count", &[BYTEA], SqlType::Int8, scalar::BIT_COUNT),
];
