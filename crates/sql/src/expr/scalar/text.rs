//! The string functions: what PostgreSQL's manual lists under "String
//! Functions and Operators" and "POSIX Regular Expressions" that are
//! called as functions, each with PostgreSQL's results and errors (a UTF8
//! database with the C.UTF-8 locale: characters are Unicode scalar values,
//! case mappings and classes are Unicode's).
//!
//! Sizes are bounded as PostgreSQL bounds them: a function that sizes its
//! result up front (repeat, lpad, rpad, translate) refuses a result over
//! 1 GB before allocating it (54000 "requested length too large"), and one
//! that builds its result piece by piece (replace, concat, format,
//! regexp_replace) fails as PostgreSQL's StringInfo fails, with its
//! "out of memory" and the same detail.
//!
//! Regular expressions are PostgreSQL's Advanced, Extended (`(?e)`) and
//! Basic REs (the `b` flag, and the `e` flag, which PostgreSQL reads as
//! Basic too), translated into the `regex` crate's syntax by a parser that
//! reports PostgreSQL's syntax errors. What the crate cannot express is
//! refused with 0A000: back references, and lookahead and lookbehind
//! constraints. Matching is the crate's leftmost-first, where PostgreSQL's
//! is POSIX leftmost-longest with a greediness chosen per RE: results
//! differ only where an alternation's earlier branch matches less than a
//! later one (`a|ab`), or where a non-greedy quantifier comes first and a
//! greedy one later (`Y*?([0-9]{1,3})`: PostgreSQL makes the whole RE
//! non-greedy).

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;

use regex::{CaptureLocations, Regex};
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType, Value};

use super::{bytes, int, text, Scalar};

// ---------------------------------------------------------------------------
// Sizes

/// PostgreSQL's MaxAllocSize: no allocation, so no value, is larger.
const MAX_ALLOC_SIZE: usize = 0x3fff_ffff;

/// The most bytes a text value holds: MaxAllocSize less its 4-byte header.
const MAX_TEXT: usize = MAX_ALLOC_SIZE - 4;

/// UTF-8's longest character: PostgreSQL sizes lpad's, rpad's and
/// translate's worst case by it, so their limits count characters as 4.
const MAX_CHAR_LEN: usize = 4;

fn too_large() -> SqlError {
    SqlError::new(SqlState::PROGRAM_LIMIT_EXCEEDED, "requested length too large")
}

/// A result built as PostgreSQL builds one in a StringInfo: an append
/// that would take it to MaxAllocSize fails as there, before anything is
/// allocated for it.
#[derive(Default)]
struct Builder(String);

impl Builder {
    /// Fails unless `needed` more bytes fit (enlargeStringInfo's rule).
    fn reserve(&self, needed: usize) -> Result<(), SqlError> {
        if needed >= MAX_ALLOC_SIZE - self.0.len() {
            return Err(SqlError::new(SqlState::PROGRAM_LIMIT_EXCEEDED, "out of memory").with_detail(
                format!(
                    "Cannot enlarge string buffer containing {} bytes by {needed} more bytes.",
                    self.0.len()
                ),
            ));
        }
        Ok(())
    }

    fn push(&mut self, s: &str) -> Result<(), SqlError> {
        self.reserve(s.len())?;
        self.0.push_str(s);
        Ok(())
    }

    fn push_spaces(&mut self, n: usize) -> Result<(), SqlError> {
        self.reserve(n)?;
        self.0.extend(std::iter::repeat_n(' ', n));
        Ok(())
    }

    /// The text value. A buffer can hold up to 4 bytes more than a text
    /// value can; PostgreSQL's copy into a value then fails on its size.
    fn finish(self) -> Result<Value, SqlError> {
        check_alloc(self.0.len())?;
        Ok(Value::Text(self.0))
    }
}

// ---------------------------------------------------------------------------
// Helpers

/// A non-strict function: it is called with NULL arguments too.
const fn lenient(name: &'static str, call: fn(&[Value]) -> Result<Value, SqlError>) -> Scalar {
    Scalar { name, call, styled: None, strict: false, volatile: false }
}

/// The argument as an integer bound as `integer`.
fn int4(v: &Value) -> i32 {
    int(v).clamp(i32::MIN.into(), i32::MAX.into()) as i32
}

/// An argument of any type in its type's text form (a timestamp with time
/// zone in UTC: the session's zone is not known here). Fails where the
/// output function would (TEXT-SIZE: deeply nested records).
fn any_text(v: &Value) -> Result<Cow<'_, str>, SqlError> {
    Ok(match v {
        Value::Text(s) => Cow::Borrowed(s),
        v => Cow::Owned(v.try_text_in(snapscale_values::Zone::UTC)?.unwrap_or_default()),
    })
}

/// An argument of any type cast to text, which differs from its text form
/// for a boolean (`true`, not `t`).
fn cast_text(v: &Value) -> Result<Cow<'_, str>, SqlError> {
    Ok(match v {
        Value::Bool(b) => Cow::Borrowed(if *b { "true" } else { "false" }),
        v => any_text(v)?,
    })
}

/// The byte offset of character `n` (the length for the end); `None`
/// past the end.
fn char_offset(s: &str, n: usize) -> Option<usize> {
    s.char_indices().map(|(i, _)| i).chain(std::iter::once(s.len())).nth(n)
}

/// The first `n` characters of `s`, and how many there are.
pub(super) fn clip_chars(s: &str, n: usize) -> (&str, usize) {
    match s.char_indices().nth(n) {
        Some((at, _)) => (&s[..at], n),
        None => (s, s.chars().count()),
    }
}

/// How many characters precede byte `at`.
fn chars_before(s: &str, at: usize) -> usize {
    s[..at].chars().count()
}

/// towupper's mapping: one character, itself where Unicode's uppercase is
/// several (`ß`).
fn upper_char(c: char) -> char {
    let mut up = c.to_uppercase();
    match (up.next(), up.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

/// towlower's mapping: one character (`İ`, the only character whose full
/// lowercase is two, lowers to `i`).
fn lower_char(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

/// quote_literal's quoting: quotes doubled, and a string with a backslash
/// written as an escape string with the backslashes doubled.
pub(crate) fn quote_literal(s: &str) -> String {
    let body = s.replace('\'', "''");
    if body.contains('\\') {
        format!("E'{}'", body.replace('\\', "\\\\"))
    } else {
        format!("'{body}'")
    }
}

/// The keywords that PostgreSQL's quote_identifier quotes: all but the
/// unreserved ones (pg_get_keywords() with catcode other than U), sorted.
#[rustfmt::skip]
const QUOTED_KEYWORDS: &[&str] = &[
    "all", "analyse", "analyze", "and", "any", "array", "as", "asc", "asymmetric", "authorization", "between",
    "bigint", "binary", "bit", "boolean", "both", "case", "cast", "char", "character", "check", "coalesce",
    "collate", "collation", "column", "concurrently", "constraint", "create", "cross", "current_catalog",
    "current_date", "current_role", "current_schema", "current_time", "current_timestamp", "current_user",
    "dec", "decimal", "default", "deferrable", "desc", "distinct", "do", "else", "end", "except", "exists",
    "extract", "false", "fetch", "float", "for", "foreign", "freeze", "from", "full", "grant", "greatest",
    "group", "grouping", "having", "ilike", "in", "initially", "inner", "inout", "int", "integer",
    "intersect", "interval", "into", "is", "isnull", "join", "lateral", "leading", "least", "left", "like",
    "limit", "localtime", "localtimestamp", "national", "natural", "nchar", "none", "normalize", "not",
    "notnull", "null", "nullif", "numeric", "offset", "on", "only", "or", "order", "out", "outer", "overlaps",
    "overlay", "placing", "position", "precision", "primary", "real", "references", "returning", "right",
    "row", "select", "session_user", "setof", "similar", "smallint", "some", "substring", "symmetric",
    "table", "tablesample", "then", "time", "timestamp", "to", "trailing", "treat", "trim", "true", "union",
    "unique", "user", "using", "values", "varchar", "variadic", "verbose", "when", "where", "window", "with",
    "xmlattributes", "xmlconcat", "xmlelement", "xmlexists", "xmlforest", "xmlnamespaces", "xmlparse",
    "xmlpi", "xmlroot", "xmlserialize", "xmltable",
];

/// PostgreSQL's quote_identifier: quoted unless it is lower-case letters,
/// digits and underscores not starting with a digit, and not a keyword.
pub(crate) fn quote_identifier(s: &str) -> String {
    let quoted = snapscale_values::quote_ident(s);
    if quoted.len() == s.len() && QUOTED_KEYWORDS.binary_search(&s).is_ok() {
        format!("\"{s}\"")
    } else {
        quoted
    }
}

// ---------------------------------------------------------------------------
// Plain string functions

/// `repeat(s, n)`: s n times (none for n ≤ 0).
fn repeat(args: &[Value]) -> Result<Value, SqlError> {
    let (s, count) = (text(&args[0]), int4(&args[1]).max(0) as usize);
    if s.len().checked_mul(count).is_none_or(|len| len > MAX_TEXT) {
        return Err(too_large());
    }
    Ok(Value::Text(s.repeat(count)))
}

/// text_catenate's check: a value of `len` bytes is allocated with its
/// header, and an allocation past MaxAllocSize is refused.
pub(super) fn check_alloc(len: usize) -> Result<(), SqlError> {
    if len > MAX_TEXT {
        return Err(SqlError::new(
            SqlState::INTERNAL_ERROR,
            format!("invalid memory alloc request size {}", len + 4),
        ));
    }
    Ok(())
}

/// `overlay(s PLACING r FROM start [FOR count])`: s with `count`
/// characters from `start` (r's length by default) replaced by r.
fn overlay(args: &[Value]) -> Result<Value, SqlError> {
    let (s, r, start) = (text(&args[0]), text(&args[1]), int4(&args[2]));
    let count = args.get(3).map_or_else(|| r.chars().count() as i32, int4);
    if start <= 0 {
        return Err(SqlError::new(SqlState::SUBSTRING_ERROR, "negative substring length not allowed"));
    }
    let resume = start
        .checked_add(count)
        .ok_or_else(|| SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range"))?;
    let head = clip_chars(s, (start - 1) as usize).0;
    let tail_at = clip_chars(s, resume.max(1) as usize - 1).0.len();
    let tail = &s[tail_at..];
    check_alloc(head.len() + r.len())?;
    check_alloc(head.len() + r.len() + tail.len())?;
    Ok(Value::Text([head, r, tail].concat()))
}

/// `replace(s, from, to)`: every occurrence, left to right, not
/// overlapping.
fn replace(args: &[Value]) -> Result<Value, SqlError> {
    let (s, from, to) = (text(&args[0]), text(&args[1]), text(&args[2]));
    if from.is_empty() || !s.contains(from) {
        return Ok(Value::Text(s.to_owned()));
    }
    let mut out = Builder::default();
    let mut copied = 0;
    for (at, _) in s.match_indices(from) {
        out.push(&s[copied..at])?;
        out.push(to)?;
        copied = at + from.len();
    }
    out.push(&s[copied..])?;
    out.finish()
}

fn reverse(args: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Text(text(&args[0]).chars().rev().collect()))
}

/// `left(s, n)`: the first n characters; all but the last |n| for a
/// negative n.
fn left(args: &[Value]) -> Result<Value, SqlError> {
    let (s, n) = (text(&args[0]), i64::from(int4(&args[1])));
    let keep = if n < 0 { s.chars().count() as i64 + n } else { n };
    Ok(Value::Text(clip_chars(s, keep.max(0) as usize).0.to_owned()))
}

/// `right(s, n)`: the last n characters; all but the first |n| for a
/// negative n.
fn right(args: &[Value]) -> Result<Value, SqlError> {
    let (s, n) = (text(&args[0]), int4(&args[1]));
    // PostgreSQL negates in 32 bits, where -(-2147483648) stays negative
    // and so skips nothing: right(s, -2147483648) is all of s.
    let skip = if n < 0 { i64::from(n.wrapping_neg()) } else { s.chars().count() as i64 - i64::from(n) };
    let at = clip_chars(s, skip.max(0) as usize).0.len();
    Ok(Value::Text(s[at..].to_owned()))
}

/// lpad and rpad: `s` cut or filled to `len` characters, the fill repeated
/// from its start (nothing to fill with leaves `s` as it is, cut).
fn pad(args: &[Value], on_left: bool) -> Result<Value, SqlError> {
    let s = text(&args[0]);
    let len = int4(&args[1]).max(0) as usize;
    let fill = args.get(2).map_or(" ", text);
    let (kept, kept_chars) = clip_chars(s, len);
    let len = if fill.is_empty() { kept_chars } else { len };
    if len.checked_mul(MAX_CHAR_LEN).is_none_or(|bytes| bytes > MAX_TEXT) {
        return Err(too_large());
    }
    let filler: String = fill.chars().cycle().take(len - kept_chars).collect();
    Ok(Value::Text(if on_left { filler + kept } else { kept.to_owned() + &filler }))
}

fn lpad(args: &[Value]) -> Result<Value, SqlError> {
    pad(args, true)
}

fn rpad(args: &[Value]) -> Result<Value, SqlError> {
    pad(args, false)
}

/// The trims: characters of the set (a space by default) removed from the
/// chosen ends.
fn trim(args: &[Value], start: bool, end: bool) -> Result<Value, SqlError> {
    let s = text(&args[0]);
    let set = args.get(1).map_or(" ", text);
    let in_set = |c: char| set.contains(c);
    let s = if start { s.trim_start_matches(in_set) } else { s };
    let s = if end { s.trim_end_matches(in_set) } else { s };
    Ok(Value::Text(s.to_owned()))
}

fn btrim(args: &[Value]) -> Result<Value, SqlError> {
    trim(args, true, true)
}

fn ltrim(args: &[Value]) -> Result<Value, SqlError> {
    trim(args, true, false)
}

fn rtrim(args: &[Value]) -> Result<Value, SqlError> {
    trim(args, false, true)
}

/// The bytea trims: bytes of the set removed from the chosen ends.
fn bytea_trim(args: &[Value], start: bool, end: bool) -> Result<Value, SqlError> {
    let (mut data, set) = (bytes(&args[0]), bytes(&args[1]));
    while start && data.first().is_some_and(|b| set.contains(b)) {
        data = &data[1..];
    }
    while end && data.last().is_some_and(|b| set.contains(b)) {
        data = &data[..data.len() - 1];
    }
    Ok(Value::Bytes(data.into()))
}

fn bytea_btrim(args: &[Value]) -> Result<Value, SqlError> {
    bytea_trim(args, true, true)
}

fn bytea_ltrim(args: &[Value]) -> Result<Value, SqlError> {
    bytea_trim(args, true, false)
}

fn bytea_rtrim(args: &[Value]) -> Result<Value, SqlError> {
    bytea_trim(args, false, true)
}

/// `initcap(s)`: each letter upper case after a character that is not a
/// letter or digit, lower case after one that is.
fn initcap(args: &[Value]) -> Result<Value, SqlError> {
    let s = text(&args[0]);
    let mut out = String::with_capacity(s.len());
    let mut in_word = false;
    for c in s.chars() {
        let c = if in_word { lower_char(c) } else { upper_char(c) };
        out.push(c);
        in_word = c.is_alphanumeric();
    }
    Ok(Value::Text(out))
}

/// `split_part(s, sep, n)`: field n (from 1, or from the end for a
/// negative n), fields separated by non-overlapping occurrences of `sep`
/// found left to right.
fn split_part(args: &[Value]) -> Result<Value, SqlError> {
    let (s, sep, n) = (text(&args[0]), text(&args[1]), i64::from(int4(&args[2])));
    if n == 0 {
        return Err(SqlError::new(SqlState::INVALID_PARAMETER_VALUE, "field position must not be zero"));
    }
    if s.is_empty() {
        return Ok(Value::Text(String::new()));
    }
    if sep.is_empty() {
        let whole = n == 1 || n == -1;
        return Ok(Value::Text(if whole { s.to_owned() } else { String::new() }));
    }
    // A field from the end is the one that many from the start.
    let n = if n < 0 { s.matches(sep).count() as i64 + 2 + n } else { n };
    let field = if n < 1 { None } else { s.split(sep).nth((n - 1) as usize) };
    Ok(Value::Text(field.unwrap_or_default().to_owned()))
}

/// `ascii(s)`: the first character's code point, 0 for an empty string.
fn ascii(args: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Int(text(&args[0]).chars().next().map_or(0, |c| i64::from(u32::from(c)))))
}

/// `chr(n)`: the character with code point n.
fn chr(args: &[Value]) -> Result<Value, SqlError> {
    let n = int(&args[0]);
    if n < 0 {
        return Err(SqlError::new(SqlState::INVALID_PARAMETER_VALUE, "character number must be positive"));
    }
    if n == 0 {
        return Err(SqlError::new(SqlState::PROGRAM_LIMIT_EXCEEDED, "null character not permitted"));
    }
    if n > 0x10ffff {
        return Err(SqlError::new(
            SqlState::PROGRAM_LIMIT_EXCEEDED,
            format!("requested character too large for encoding: {n}"),
        ));
    }
    // Surrogates are no characters in UTF-8.
    let c = u32::try_from(n).ok().and_then(char::from_u32).ok_or_else(|| {
        SqlError::new(
            SqlState::PROGRAM_LIMIT_EXCEEDED,
            format!("requested character not valid for encoding: {n}"),
        )
    })?;
    Ok(Value::Text(c.to_string()))
}

/// `translate(s, from, to)`: each character of `from` replaced by the one
/// at the same place in `to`, or removed where `to` is shorter (the first
/// occurrence in `from` decides).
fn translate(args: &[Value]) -> Result<Value, SqlError> {
    let (s, from, to) = (text(&args[0]), text(&args[1]), text(&args[2]));
    if s.len().checked_mul(MAX_CHAR_LEN).is_none_or(|bytes| bytes > MAX_TEXT) {
        return Err(too_large());
    }
    let mut to = to.chars();
    let mut map: HashMap<char, Option<char>> = HashMap::new();
    for c in from.chars() {
        let replacement = to.next();
        map.entry(c).or_insert(replacement);
    }
    Ok(Value::Text(s.chars().filter_map(|c| map.get(&c).copied().unwrap_or(Some(c))).collect()))
}

fn starts_with(args: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Bool(text(&args[0]).starts_with(text(&args[1]))))
}

/// `to_hex(integer)`: two's complement in 32 bits.
fn to_hex4(args: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Text(format!("{:x}", int4(&args[0]) as u32)))
}

/// `to_hex(bigint)`: two's complement in 64 bits.
fn to_hex8(args: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Text(format!("{:x}", int(&args[0]) as u64)))
}

fn char_length(args: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Int(text(&args[0]).chars().count() as i64))
}

fn octet_length(args: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Int(text(&args[0]).len() as i64))
}

fn bit_length(args: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Int(bytes(&args[0]).len() as i64 * 8))
}

/// `quote_nullable(x)`: quote_literal of x cast to text, or `NULL`
/// unquoted.
fn quote_nullable(args: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Text(match &args[0] {
        Value::Null => "NULL".to_owned(),
        v => quote_literal(&cast_text(v)?),
    }))
}

/// `string_to_array(s, sep [, null])`: the fields between occurrences of
/// `sep` (each character for a NULL `sep`), fields equal to `null` as
/// NULL; NULL for a NULL string, no elements for an empty one.
pub(super) fn string_to_array(args: &[Value]) -> Result<Value, SqlError> {
    let Value::Text(s) = &args[0] else { return Ok(Value::Null) };
    let null = match args.get(2) {
        Some(Value::Text(n)) => Some(n.as_str()),
        _ => None,
    };
    let field = |f: &str| if Some(f) == null { Value::Null } else { Value::Text(f.to_owned()) };
    let items: Vec<Value> = match &args[1] {
        _ if s.is_empty() => Vec::new(),
        Value::Text(sep) if sep.is_empty() => vec![field(s)],
        Value::Text(sep) => s.split(sep.as_str()).map(field).collect(),
        _ => s.char_indices().map(|(at, c)| field(&s[at..at + c.len_utf8()])).collect(),
    };
    Ok(Value::array(items))
}

/// The whitespace PostgreSQL's scanner skips.
fn skip_scanner_space(b: &[u8], mut at: usize) -> usize {
    while b.get(at).is_some_and(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0c)) {
        at += 1;
    }
    at
}

/// A byte that may start an unquoted identifier: a letter, `_`, or any
/// byte of a non-ASCII character.
fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_' || c >= 0x80
}

fn is_ident_cont(c: u8) -> bool {
    is_ident_start(c) || c.is_ascii_digit() || c == b'$'
}

/// `parse_ident(name [, strict])`: a qualified name's parts, unquoted
/// ones with their ASCII letters lowered; anything after the name is an
/// error in strict mode (the default).
fn parse_ident(args: &[Value]) -> Result<Value, SqlError> {
    let s = text(&args[0]);
    let strict = args.get(1).is_none_or(|v| matches!(v, Value::Bool(true)));
    let invalid = |detail: Option<&str>| {
        let e = SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("string is not a valid identifier: \"{s}\""),
        );
        detail.map_or(e.clone(), |d| e.with_detail(d))
    };
    let b = s.as_bytes();
    let mut parts = Vec::new();
    let mut at = skip_scanner_space(b, 0);
    let mut after_dot = false;
    loop {
        if b.get(at) == Some(&b'"') {
            // A quoted part, `""` standing for a quote.
            let mut name = String::new();
            at += 1;
            loop {
                let Some(len) = b[at..].iter().position(|&c| c == b'"') else {
                    return Err(invalid(Some("String has unclosed double quotes.")));
                };
                name.push_str(&s[at..at + len]);
                at += len + 1;
                if b.get(at) != Some(&b'"') {
                    break;
                }
                name.push('"');
                at += 1;
            }
            if name.is_empty() {
                return Err(invalid(Some("Quoted identifier must not be empty.")));
            }
            parts.push(Value::Text(name));
        } else if b.get(at).copied().is_some_and(is_ident_start) {
            let start = at;
            at += 1;
            while b.get(at).copied().is_some_and(is_ident_cont) {
                at += 1;
            }
            parts.push(Value::Text(s[start..at].to_ascii_lowercase()));
        } else {
            return Err(match b.get(at) {
                Some(b'.') => invalid(Some("No valid identifier before \".\".")),
                _ if after_dot => invalid(Some("No valid identifier after \".\".")),
                _ => invalid(None),
            });
        }
        at = skip_scanner_space(b, at);
        match b.get(at) {
            Some(b'.') => {
                after_dot = true;
                at = skip_scanner_space(b, at + 1);
            }
            None => break,
            Some(_) if strict => return Err(invalid(None)),
            Some(_) => break,
        }
    }
    Ok(Value::array(parts))
}

// ---------------------------------------------------------------------------
// concat, concat_ws and format: variadic "any"

/// The non-NULL values' text, `sep` between them.
fn join(values: &[Value], sep: &str) -> Result<Value, SqlError> {
    let mut out = Builder::default();
    for (i, v) in values.iter().filter(|v| !matches!(v, Value::Null)).enumerate() {
        if i > 0 {
            out.push(sep)?;
        }
        out.push(&any_text(v)?)?;
    }
    out.finish()
}

fn concat(args: &[Value]) -> Result<Value, SqlError> {
    join(args, "")
}

/// `concat_ws(sep, …)`: NULL for a NULL separator.
fn concat_ws(args: &[Value]) -> Result<Value, SqlError> {
    match &args[0] {
        Value::Text(sep) => join(&args[1..], sep),
        _ => Ok(Value::Null),
    }
}

fn format_error(message: &str) -> SqlError {
    SqlError::new(SqlState::INVALID_PARAMETER_VALUE, message)
}

fn unterminated_format() -> SqlError {
    format_error("unterminated format() type specifier").with_hint("For a single \"%\" use \"%%\".")
}

fn number_out_of_range() -> SqlError {
    SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "number is out of range")
}

fn argument_zero() -> SqlError {
    format_error("format specifies argument 0, but arguments are numbered from 1")
}

/// One conversion's `[position$][-][width]`: positions from 1, a width
/// argument's position 0 for "the next argument".
#[derive(Default)]
struct Spec {
    arg: Option<usize>,
    width_arg: Option<usize>,
    left: bool,
    width: i32,
}

/// A cursor over a format string, which always stands on a character: a
/// step past the end is PostgreSQL's "unterminated" error.
struct FormatCursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl FormatCursor<'_> {
    fn byte(&self) -> u8 {
        self.b[self.at]
    }

    fn advance(&mut self) -> Result<(), SqlError> {
        self.at += 1;
        if self.at >= self.b.len() {
            return Err(unterminated_format());
        }
        Ok(())
    }

    /// A run of digits as an int4, if there is one.
    fn digits(&mut self) -> Result<Option<i32>, SqlError> {
        let mut value: Option<i32> = None;
        while self.byte().is_ascii_digit() {
            let digit = i32::from(self.byte() - b'0');
            let v = value.unwrap_or(0).checked_mul(10).and_then(|v| v.checked_add(digit));
            value = Some(v.ok_or_else(number_out_of_range)?);
            self.advance()?;
        }
        Ok(value)
    }

    /// The part of a conversion between `%` and its type letter.
    fn spec(&mut self) -> Result<Spec, SqlError> {
        let mut spec = Spec::default();
        if let Some(n) = self.digits()? {
            if self.byte() != b'$' {
                spec.width = n;
                return Ok(spec);
            }
            if n == 0 {
                return Err(argument_zero());
            }
            spec.arg = Some(n as usize);
            self.advance()?;
        }
        while self.byte() == b'-' {
            spec.left = true;
            self.advance()?;
        }
        if self.byte() == b'*' {
            self.advance()?;
            spec.width_arg = Some(match self.digits()? {
                Some(n) => {
                    if self.byte() != b'$' {
                        return Err(format_error("width argument position must be ended by \"$\""));
                    }
                    if n == 0 {
                        return Err(argument_zero());
                    }
                    self.advance()?;
                    n as usize
                }
                None => 0,
            });
        } else if let Some(n) = self.digits()? {
            spec.width = n;
        }
        Ok(spec)
    }
}

/// A width taken from an argument: NULL is 0, anything else is read as an
/// integer from its text.
fn width_of(v: &Value) -> Result<i32, SqlError> {
    match v {
        Value::Null => Ok(0),
        v => match Value::parse(SqlType::Int4, &any_text(v)?)? {
            // Parsed as an int4, so in range.
            Value::Int(n) => Ok(n as i32),
            _ => Ok(0),
        },
    }
}

/// Appends `s` padded with spaces to `width` characters: on the right
/// for a `-` flag or a negative width, else on the left.
fn append_padded(out: &mut Builder, s: &str, left: bool, width: i32) -> Result<(), SqlError> {
    if width == 0 {
        return out.push(s);
    }
    if width == i32::MIN {
        return Err(number_out_of_range());
    }
    let left = left || width < 0;
    let pad = (width.unsigned_abs() as usize).saturating_sub(s.chars().count());
    if left {
        out.push(s)?;
        out.push_spaces(pad)
    } else {
        out.push_spaces(pad)?;
        out.push(s)
    }
}

/// `format(fmt, …)`: `%s` (NULL as nothing), `%I` (quote_ident; NULL is
/// an error), `%L` (quote_literal; NULL as `NULL`) and `%%`, each with an
/// optional `position$`, `-` flag and width (`*` or `*position$` to take
/// it from an argument).
fn format(args: &[Value]) -> Result<Value, SqlError> {
    let Value::Text(fmt) = &args[0] else { return Ok(Value::Null) };
    let mut out = Builder::default();
    let mut cur = FormatCursor { b: fmt.as_bytes(), at: 0 };
    let mut next_arg = 1;
    // The end of the text copied so far.
    let mut copied = 0;
    while cur.at < cur.b.len() {
        if cur.byte() != b'%' {
            cur.at += 1;
            continue;
        }
        out.push(&fmt[copied..cur.at])?;
        cur.advance()?;
        if cur.byte() == b'%' {
            out.push("%")?;
        } else {
            let spec = cur.spec()?;
            // The cursor moved over ASCII only, so it is on a character.
            let conversion = fmt[cur.at..].chars().next().unwrap_or_default();
            convert(&mut out, args, &mut next_arg, &spec, conversion)?;
        }
        cur.at += 1;
        copied = cur.at;
    }
    out.push(&fmt[copied..])?;
    out.finish()
}

/// One conversion: its argument (and width argument) taken from
/// `next_arg` on, or from the positions the spec names.
fn convert(
    out: &mut Builder,
    args: &[Value],
    next_arg: &mut usize,
    spec: &Spec,
    conversion: char,
) -> Result<(), SqlError> {
    let too_few = || format_error("too few arguments for format()");
    if !matches!(conversion, 's' | 'I' | 'L') {
        return Err(format_error(&format!("unrecognized format() type specifier \"{conversion}\""))
            .with_hint("For a single \"%\" use \"%%\"."));
    }
    let mut width = spec.width;
    if let Some(position) = spec.width_arg {
        if position > 0 {
            *next_arg = position;
        }
        width = width_of(args.get(*next_arg).ok_or_else(too_few)?)?;
        *next_arg += 1;
    }
    if let Some(position) = spec.arg {
        *next_arg = position;
    }
    let value = args.get(*next_arg).ok_or_else(too_few)?;
    *next_arg += 1;
    let formatted: Cow<'_, str> = match (conversion, value) {
        ('s', Value::Null) => "".into(),
        ('L', Value::Null) => "NULL".into(),
        ('I', Value::Null) => {
            return Err(SqlError::new(
                SqlState::NULL_VALUE_NOT_ALLOWED,
                "null values cannot be formatted as an SQL identifier",
            ))
        }
        ('I', v) => quote_identifier(&any_text(v)?).into(),
        ('L', v) => quote_literal(&any_text(v)?).into(),
        (_, v) => any_text(v)?,
    };
    append_padded(out, &formatted, spec.left, width)
}

// ---------------------------------------------------------------------------
// Regular expressions: PostgreSQL's syntax, translated

/// An RE's flavour.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Flavor {
    Advanced,
    Extended,
    Basic,
    /// The whole pattern is a literal string (`q`, `***=`).
    Literal,
}

/// The compile options of an RE (PostgreSQL's cflags).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(super) struct ReFlags {
    flavor: Flavor,
    icase: bool,
    /// `.` and `[^…]` do not match a newline.
    nlstop: bool,
    /// `^` and `$` match at newlines too.
    nlanch: bool,
    /// Whitespace and `#` comments are ignored.
    expanded: bool,
}

impl Default for ReFlags {
    fn default() -> ReFlags {
        ReFlags { flavor: Flavor::Advanced, icase: false, nlstop: false, nlanch: false, expanded: false }
    }
}

impl ReFlags {
    /// Applies an option letter of the flags argument or (`embedded`) of a
    /// leading `(?…)`; false for a letter that is none.
    fn apply(&mut self, c: char, embedded: bool) -> bool {
        match c {
            'b' => self.flavor = Flavor::Basic,
            'c' => self.icase = false,
            // PostgreSQL's flags argument clears REG_EXTENDED with
            // REG_ADVANCED, so its `e` gives Basic REs; `(?e)` gives EREs.
            'e' if embedded => self.flavor = Flavor::Extended,
            'e' => self.flavor = Flavor::Basic,
            'i' => self.icase = true,
            'm' | 'n' => (self.nlstop, self.nlanch) = (true, true),
            'p' => (self.nlstop, self.nlanch) = (true, false),
            'q' => self.flavor = Flavor::Literal,
            's' => (self.nlstop, self.nlanch) = (false, false),
            't' => self.expanded = false,
            'w' => (self.nlstop, self.nlanch) = (false, true),
            'x' => self.expanded = true,
            _ => return false,
        }
        true
    }
}

/// 2201B, in the words of PostgreSQL's regular expression library.
fn invalid_re(reason: &str) -> SqlError {
    SqlError::new(SqlState::INVALID_REGULAR_EXPRESSION, format!("invalid regular expression: {reason}"))
}

fn re_not_supported(what: &str) -> SqlError {
    SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, format!("{what} in regular expressions are not supported"))
}

const EESCAPE: &str = "invalid escape \\ sequence";
const EPAREN: &str = "parentheses () not balanced";
const EBRACK: &str = "brackets [] not balanced";
const EBRACE: &str = "braces {} not balanced";
const BADBR: &str = "invalid repetition count(s)";
const BADRPT: &str = "quantifier operand invalid";
const ERANGE: &str = "invalid character range";
const ECTYPE: &str = "invalid character class";
const ECOLLATE: &str = "invalid collating element";
const ESUBREG: &str = "invalid backreference number";
const BADOPT: &str = "invalid embedded option";
const ETOOBIG: &str = "regular expression is too complex";

/// The largest bound in `{m,n}` (PostgreSQL's DUPMAX).
const DUPMAX: u32 = 255;

/// A class that matches nothing: what a character escape names that no
/// UTF-8 text holds (a surrogate, or a value past U+10FFFF).
const NEVER: &str = r"[^\x{0}-\x{10FFFF}]";

/// What the RE before a quantifier ends with, which decides whether the
/// quantifier has an operand.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Last {
    /// The start of the RE, a branch or a group.
    Nothing,
    /// An atom, which a quantifier applies to.
    Atom,
    /// A quantifier or a constraint, which a quantifier cannot follow.
    Other,
    /// A `^` anchor, after which a BRE's `*` is literal.
    Caret,
}

/// One element of a bracket expression.
enum Item {
    /// A character by its code (possibly no valid character).
    Char(u32),
    /// A class, in the regex crate's syntax inside brackets.
    Class(&'static str),
}

/// An open group.
#[derive(Clone, Copy)]
enum Group {
    /// Capturing group number n (from 1).
    Capture(usize),
    /// `(?:…)`.
    Plain,
    /// A lookahead or lookbehind constraint, parsed for its syntax only.
    Lookaround,
}

/// Translates a PostgreSQL RE into the regex crate's syntax.
struct Translator<'a> {
    p: &'a str,
    at: usize,
    flags: ReFlags,
    out: String,
    /// Capturing groups opened so far; `closed[n - 1]` once group n ends.
    closed: Vec<bool>,
    open: Vec<Group>,
    /// What PostgreSQL accepts but the regex crate cannot do, reported
    /// once the whole RE has parsed (a syntax error comes first, as in
    /// PostgreSQL).
    unsupported: Option<&'static str>,
    last: Last,
}

impl<'a> Translator<'a> {
    fn new(p: &'a str, flags: ReFlags) -> Translator<'a> {
        Translator {
            p,
            at: 0,
            flags,
            out: String::new(),
            closed: Vec::new(),
            open: Vec::new(),
            unsupported: None,
            last: Last::Nothing,
        }
    }

    fn peek(&self) -> Option<char> {
        self.p[self.at..].chars().next()
    }

    fn peek2(&self) -> Option<char> {
        self.p[self.at..].chars().nth(1)
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        let found = self.peek() == Some(c);
        if found {
            self.at += c.len_utf8();
        }
        found
    }

    fn advanced(&self) -> bool {
        self.flags.flavor == Flavor::Advanced
    }

    /// The whole translation: the pattern in the regex crate's syntax.
    fn translate(mut self) -> Result<String, SqlError> {
        self.prefixes()?;
        let body = match self.flags.flavor {
            Flavor::Literal => regex::escape(&self.p[self.at..]),
            Flavor::Advanced | Flavor::Extended | Flavor::Basic => {
                self.body()?;
                if let Some(what) = self.unsupported {
                    return Err(re_not_supported(what));
                }
                std::mem::take(&mut self.out)
            }
        };
        Ok(if self.flags.icase { format!("(?i){body}") } else { body })
    }

    /// A leading `***=` (the rest is literal) or `***:` (the rest is an
    /// ARE), then an ARE's embedded options `(?letters)`.
    fn prefixes(&mut self) -> Result<(), SqlError> {
        if self.flags.flavor == Flavor::Literal {
            return Ok(());
        }
        if self.p.len() >= 4 && self.p.starts_with("***") {
            match self.p.as_bytes()[3] {
                b'=' => {
                    self.flags.flavor = Flavor::Literal;
                    self.at = 4;
                    return Ok(());
                }
                b':' => {
                    self.flags.flavor = Flavor::Advanced;
                    self.at = 4;
                }
                b'?' => return Err(invalid_re("invalid regexp (reg version 0.8)")),
                _ => return Err(invalid_re(BADRPT)),
            }
        }
        let rest = &self.p.as_bytes()[self.at..];
        if self.advanced() && rest.len() >= 3 && rest.starts_with(b"(?") && rest[2].is_ascii_alphabetic() {
            self.at += 2;
            while let Some(c) = self.peek().filter(char::is_ascii_alphabetic) {
                if !self.flags.apply(c, true) {
                    return Err(invalid_re(BADOPT));
                }
                self.at += 1;
            }
            if !self.eat(')') {
                return Err(invalid_re(BADOPT));
            }
        }
        Ok(())
    }

    /// Skips an expanded RE's whitespace and `#` comments.
    fn skip_expanded(&mut self) {
        if !self.flags.expanded {
            return;
        }
        loop {
            while self.peek().is_some_and(char::is_whitespace) {
                self.next();
            }
            if self.peek() != Some('#') {
                return;
            }
            while self.peek().is_some_and(|c| c != '\n') {
                self.next();
            }
        }
    }

    fn body(&mut self) -> Result<(), SqlError> {
        if self.flags.flavor == Flavor::Basic {
            return self.basic_body();
        }
        loop {
            self.skip_expanded();
            let Some(c) = self.next() else { break };
            match c {
                '(' => self.open_group()?,
                ')' => self.close_group()?,
                '|' => {
                    self.out.push('|');
                    self.last = Last::Nothing;
                }
                '^' => self.caret(),
                '$' => self.dollar(),
                '.' => self.dot(),
                '[' => self.bracket()?,
                '\\' => self.escape()?,
                '*' | '+' | '?' => self.quantifier(c.encode_utf8(&mut [0; 4]))?,
                '{' if self.peek().is_some_and(|d| d.is_ascii_digit()) => self.bound()?,
                c => self.literal(u32::from(c)),
            }
        }
        if !self.open.is_empty() {
            return Err(invalid_re(EPAREN));
        }
        Ok(())
    }

    /// A Basic RE, where `\(`, `\)`, `\{` and `\}` are the operators and
    /// the bare characters literal, `*` is literal first in the RE or a
    /// group or after `^`, `^` is an anchor only there and `$` only last
    /// in the RE or a group.
    fn basic_body(&mut self) -> Result<(), SqlError> {
        loop {
            self.skip_expanded();
            let Some(c) = self.next() else { break };
            match c {
                '*' if matches!(self.last, Last::Nothing | Last::Caret) => self.literal(u32::from('*')),
                '*' => self.quantifier("*")?,
                '^' if self.last == Last::Nothing => self.caret(),
                '$' if self.at == self.p.len() || self.p[self.at..].starts_with("\\)") => self.dollar(),
                '.' => self.dot(),
                '[' => self.bracket()?,
                '\\' => match self.next().ok_or_else(|| invalid_re(EESCAPE))? {
                    '(' => self.open_group()?,
                    ')' => self.close_group()?,
                    '{' => self.bound()?,
                    '<' => self.constraint(r"\b{start}"),
                    '>' => self.constraint(r"\b{end}"),
                    // A BRE's back reference is one digit.
                    d @ '1'..='9' => self.back_reference(d as usize - '0' as usize)?,
                    c => self.literal(u32::from(c)),
                },
                c => self.literal(u32::from(c)),
            }
        }
        if !self.open.is_empty() {
            return Err(invalid_re(EPAREN));
        }
        Ok(())
    }

    fn caret(&mut self) {
        self.out.push_str(if self.flags.nlanch { "(?m:^)" } else { "^" });
        self.last = Last::Caret;
    }

    fn dollar(&mut self) {
        self.constraint(if self.flags.nlanch { "(?m:$)" } else { "$" });
    }

    fn dot(&mut self) {
        self.atom(if self.flags.nlstop { r"[^\n]" } else { "(?s:.)" });
    }

    fn atom(&mut self, s: &str) {
        self.out.push_str(s);
        self.last = Last::Atom;
    }

    fn constraint(&mut self, s: &str) {
        self.out.push_str(s);
        self.last = Last::Other;
    }

    fn literal(&mut self, code: u32) {
        match char::from_u32(code) {
            // Control characters are written as codes, to keep the
            // translation printable.
            Some(c) if c.is_control() => self.atom(&format!(r"\x{{{code:X}}}")),
            Some(c) => self.atom(&regex::escape(c.encode_utf8(&mut [0; 4]))),
            None => self.atom(NEVER),
        }
    }

    fn open_group(&mut self) -> Result<(), SqlError> {
        if self.advanced() && self.peek() == Some('?') {
            let kind = self.p[self.at..].chars().nth(1);
            let (group, len) = match kind {
                Some(':') => (Group::Plain, 2),
                Some('=' | '!') => {
                    self.unsupported.get_or_insert("lookahead constraints");
                    (Group::Lookaround, 2)
                }
                Some('<') if matches!(self.p[self.at..].chars().nth(2), Some('=' | '!')) => {
                    self.unsupported.get_or_insert("lookbehind constraints");
                    (Group::Lookaround, 3)
                }
                // `?` right after `(` quantifies nothing.
                _ => return Err(invalid_re(BADRPT)),
            };
            self.at += len;
            self.out.push_str("(?:");
            self.open.push(group);
        } else {
            self.closed.push(false);
            self.open.push(Group::Capture(self.closed.len()));
            self.out.push('(');
        }
        self.last = Last::Nothing;
        Ok(())
    }

    fn close_group(&mut self) -> Result<(), SqlError> {
        let group = self.open.pop().ok_or_else(|| invalid_re(EPAREN))?;
        self.out.push(')');
        self.last = match group {
            Group::Capture(n) => {
                self.closed[n - 1] = true;
                Last::Atom
            }
            Group::Plain => Last::Atom,
            // A constraint, which no quantifier may follow.
            Group::Lookaround => Last::Other,
        };
        Ok(())
    }

    /// `*`, `+` or `?`, and an ARE's `?` after it for the non-greedy form.
    fn quantifier(&mut self, q: &str) -> Result<(), SqlError> {
        if self.last != Last::Atom {
            return Err(invalid_re(BADRPT));
        }
        self.out.push_str(q);
        if self.advanced() && self.eat('?') {
            self.out.push('?');
        }
        self.last = Last::Other;
        Ok(())
    }

    /// A number of at most DUPMAX in a bound.
    fn bound_number(&mut self) -> Result<u32, SqlError> {
        let mut n = 0u32;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            n = n * 10 + d;
            if n > DUPMAX {
                return Err(invalid_re(BADBR));
            }
            self.next();
        }
        Ok(n)
    }

    /// `{m}`, `{m,}` or `{m,n}` (the `{` taken, a digit next).
    fn bound(&mut self) -> Result<(), SqlError> {
        if self.last != Last::Atom {
            return Err(invalid_re(BADRPT));
        }
        let min = self.bound_number()?;
        let max = if self.eat(',') {
            if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                Some(self.bound_number()?)
            } else {
                None
            }
        } else {
            Some(min)
        };
        if max.is_some_and(|max| min > max) {
            return Err(invalid_re(BADBR));
        }
        // A BRE's bound ends with `\}`.
        if self.flags.flavor == Flavor::Basic {
            match self.next() {
                None => return Err(invalid_re(EBRACE)),
                Some('\\') => {}
                Some(_) => return Err(invalid_re(BADBR)),
            }
        }
        match self.next() {
            None => return Err(invalid_re(EBRACE)),
            Some('}') => {}
            Some(_) => return Err(invalid_re(BADBR)),
        }
        let bound = match max {
            Some(max) if max == min => format!("{{{min}}}"),
            Some(max) => format!("{{{min},{max}}}"),
            None => format!("{{{min},}}"),
        };
        self.out.push_str(&bound);
        if self.advanced() && self.eat('?') {
            self.out.push('?');
        }
        self.last = Last::Other;
        Ok(())
    }

    /// Up to `max` digits in `radix` (at least `min`), as a code; `None`
    /// if there are fewer than `min`.
    fn digits(&mut self, radix: u32, min: usize, max: usize) -> Option<u32> {
        let mut value = 0u32;
        let mut len = 0;
        while len < max {
            let Some(d) = self.peek().and_then(|c| c.to_digit(radix)) else { break };
            value = value.saturating_mul(radix).saturating_add(d);
            self.next();
            len += 1;
        }
        (len >= min).then_some(value)
    }

    /// An octal escape's value: up to three digits, the first already
    /// seen (one digit fewer where three make more than a byte).
    fn octal(&mut self, first_at: usize) -> Result<u32, SqlError> {
        self.at = first_at;
        let value = self.digits(8, 1, 3).ok_or_else(|| invalid_re(EESCAPE))?;
        if value > 0xff {
            self.at -= 1;
            return Ok(value >> 3);
        }
        Ok(value)
    }

    /// After `\` and a digit 1–9: a back reference (`None`) if it is one
    /// digit or a number no larger than the groups opened so far
    /// (PostgreSQL's rule), otherwise an octal character code.
    fn back_reference_or_octal(&mut self) -> Result<Option<u32>, SqlError> {
        let first_at = self.at - 1;
        self.at = first_at;
        let n = self.digits(10, 1, usize::MAX).unwrap_or(0);
        let one_digit = self.at == first_at + 1;
        if one_digit || (n > 0 && n as usize <= self.closed.len()) {
            self.back_reference(n as usize)?;
            return Ok(None);
        }
        self.octal(first_at).map(Some)
    }

    /// Back reference `n`: to a group that has ended, which the regex
    /// crate cannot match again (an atom here, refused at the end); to any
    /// other, an error.
    fn back_reference(&mut self, n: usize) -> Result<(), SqlError> {
        if n == 0 || self.closed.get(n - 1) != Some(&true) {
            return Err(invalid_re(ESUBREG));
        }
        self.unsupported.get_or_insert("back references");
        self.atom("()");
        Ok(())
    }

    /// A character-entry escape's code (the letter after `\` taken), or
    /// `None` if the letter is not one.
    fn entry_escape(&mut self, c: char) -> Result<Option<u32>, SqlError> {
        let code = match c {
            'a' => 0x07,
            'b' => 0x08,
            'B' => u32::from('\\'),
            'e' => 0x1b,
            'f' => 0x0c,
            'n' => 0x0a,
            'r' => 0x0d,
            't' => 0x09,
            'v' => 0x0b,
            'c' => self.next().map(|c| u32::from(c) & 0x1f).ok_or_else(|| invalid_re(EESCAPE))?,
            'u' => self.digits(16, 4, 4).ok_or_else(|| invalid_re(EESCAPE))?,
            'U' => self.digits(16, 8, 8).ok_or_else(|| invalid_re(EESCAPE))?,
            'x' => self.digits(16, 1, usize::MAX).ok_or_else(|| invalid_re(EESCAPE))?,
            '0' => self.octal(self.at - 1)?,
            _ => return Ok(None),
        };
        Ok(Some(code))
    }

    /// A backslash escape outside brackets.
    fn escape(&mut self) -> Result<(), SqlError> {
        let c = self.next().ok_or_else(|| invalid_re(EESCAPE))?;
        if !self.advanced() {
            // An ERE's backslash makes any character literal.
            self.literal(u32::from(c));
            return Ok(());
        }
        match c {
            'A' => self.constraint(r"\A"),
            'Z' => self.constraint(r"\z"),
            'm' => self.constraint(r"\b{start}"),
            'M' => self.constraint(r"\b{end}"),
            'y' => self.constraint(r"\b"),
            'Y' => self.constraint(r"\B"),
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => self.atom(class_escape(c, false)),
            '1'..='9' => {
                if let Some(code) = self.back_reference_or_octal()? {
                    self.literal(code);
                }
            }
            // Only an ASCII letter or digit makes an escape; any other
            // character is itself.
            c => match self.entry_escape(c)? {
                Some(code) => self.literal(code),
                None if c.is_ascii_alphanumeric() => return Err(invalid_re(EESCAPE)),
                None => self.literal(u32::from(c)),
            },
        }
        Ok(())
    }

    /// A backslash escape inside brackets: a character or a class.
    fn bracket_escape(&mut self) -> Result<Item, SqlError> {
        let c = self.next().ok_or_else(|| invalid_re(EESCAPE))?;
        match c {
            'd' | 'D' | 's' | 'S' | 'w' | 'W' => Ok(Item::Class(class_escape(c, true))),
            '1'..='9' => match self.back_reference_or_octal() {
                Ok(Some(code)) => Ok(Item::Char(code)),
                _ => Err(invalid_re(EESCAPE)),
            },
            c => match self.entry_escape(c)? {
                Some(code) => Ok(Item::Char(code)),
                None if c.is_ascii_alphanumeric() => Err(invalid_re(EESCAPE)),
                None => Ok(Item::Char(u32::from(c))),
            },
        }
    }

    /// The text of `[.x.]`, `[=x=]` or `[:x:]` (the `[` and the first
    /// delimiter taken).
    fn bracket_name(&mut self, delimiter: char) -> Result<&'a str, SqlError> {
        let start = self.at;
        let close = [delimiter as u8, b']'];
        let len = self.p.as_bytes()[start..]
            .windows(2)
            .position(|w| w == close)
            .ok_or_else(|| invalid_re(EBRACK))?;
        self.at = start + len + 2;
        Ok(&self.p[start..start + len])
    }

    /// One element of a bracket expression (its first character taken).
    fn bracket_item(&mut self, c: char) -> Result<Item, SqlError> {
        match c {
            '[' if matches!(self.peek(), Some('.' | '=')) => {
                let delimiter = self.next().unwrap_or('.');
                let name = self.bracket_name(delimiter)?;
                let mut chars = name.chars();
                match (chars.next(), chars.next()) {
                    (Some(c), None) => Ok(Item::Char(u32::from(c))),
                    _ => Err(invalid_re(ECOLLATE)),
                }
            }
            '[' if self.peek() == Some(':') => {
                self.next();
                let name = self.bracket_name(':')?;
                named_class(name).map(Item::Class).ok_or_else(|| invalid_re(ECTYPE))
            }
            '\\' if self.advanced() => self.bracket_escape(),
            c => Ok(Item::Char(u32::from(c))),
        }
    }

    /// A bracket expression (the `[` taken).
    fn bracket(&mut self) -> Result<(), SqlError> {
        let negated = self.eat('^');
        let mut items = String::new();
        let mut first = true;
        loop {
            let c = self.next().ok_or_else(|| invalid_re(EBRACK))?;
            if c == ']' && !first {
                break;
            }
            first = false;
            let starts_range = |t: &Self| t.peek() == Some('-') && t.peek2().is_some_and(|c| c != ']');
            let lo = match self.bracket_item(c)? {
                Item::Class(_) if starts_range(self) => return Err(invalid_re(ERANGE)),
                Item::Class(class) => {
                    items.push_str(class);
                    continue;
                }
                Item::Char(lo) => lo,
            };
            if !starts_range(self) {
                push_range(&mut items, lo, lo);
                continue;
            }
            self.next();
            let c = self.next().ok_or_else(|| invalid_re(EBRACK))?;
            let Item::Char(hi) = self.bracket_item(c)? else { return Err(invalid_re(ERANGE)) };
            if lo > hi {
                return Err(invalid_re(ERANGE));
            }
            push_range(&mut items, lo, hi);
            // `a-c-e`: a range cannot start where one ended.
            if starts_range(self) {
                return Err(invalid_re(ERANGE));
            }
        }
        let class = match (items.is_empty(), negated) {
            (true, false) => NEVER.to_owned(),
            (true, true) if self.flags.nlstop => r"[^\n]".to_owned(),
            (true, true) => "(?s:.)".to_owned(),
            (false, false) => format!("[{items}]"),
            (false, true) if self.flags.nlstop => format!(r"[^{items}\n]"),
            (false, true) => format!("[^{items}]"),
        };
        self.atom(&class);
        Ok(())
    }
}

/// Adds the characters `lo..=hi` to a class's items, without the codes
/// that are no characters (surrogates, past U+10FFFF).
fn push_range(items: &mut String, lo: u32, hi: u32) {
    let hi = hi.min(0x10ffff);
    let lo = if (0xd800..0xe000).contains(&lo) { 0xe000 } else { lo };
    let hi = if (0xd800..0xe000).contains(&hi) { 0xd7ff } else { hi };
    if lo > hi {
        return;
    }
    push_class_char(items, lo);
    if hi > lo {
        items.push('-');
        push_class_char(items, hi);
    }
}

/// Adds a character to a class's items: as itself if it is a letter or
/// digit, else by its code (no character is then special).
fn push_class_char(items: &mut String, code: u32) {
    match char::from_u32(code) {
        Some(c) if c.is_alphanumeric() => items.push(c),
        _ => items.push_str(&format!(r"\x{{{code:X}}}")),
    }
}

/// `\d`, `\s`, `\w` and their negations, inside brackets or as an atom.
/// PostgreSQL's classes follow the locale's (C.UTF-8): digits are ASCII,
/// letters Unicode's, and a word character is a letter, digit or `_`.
fn class_escape(c: char, in_brackets: bool) -> &'static str {
    match (c, in_brackets) {
        ('d', true) => "0-9",
        ('d', false) => "[0-9]",
        ('D', _) => "[^0-9]",
        ('s', _) => r"\s",
        ('S', _) => r"\S",
        ('w', true) => r"\p{Alphabetic}\p{Nd}_",
        ('w', false) => r"[\p{Alphabetic}\p{Nd}_]",
        _ => r"[^\p{Alphabetic}\p{Nd}_]",
    }
}

/// `[:name:]`'s characters, in the regex crate's syntax inside brackets
/// (its own `[:name:]` classes are ASCII only).
fn named_class(name: &str) -> Option<&'static str> {
    Some(match name {
        "alnum" => r"\p{Alphabetic}\p{Nd}",
        "alpha" => r"\p{Alphabetic}",
        "ascii" => r"\x00-\x7F",
        "blank" => r"\t\p{Zs}",
        "cntrl" => r"\p{Cc}",
        "digit" => "0-9",
        "graph" => r"[^\s\p{C}]",
        "lower" => r"\p{Lowercase}",
        "print" => r"[^\p{C}\p{Zl}\p{Zp}]",
        "punct" => r"\p{P}\p{S}",
        "space" => r"\s",
        "upper" => r"\p{Uppercase}",
        "xdigit" => "0-9A-Fa-f",
        "word" => r"\p{Alphabetic}\p{Nd}_",
        _ => return None,
    })
}

/// Patterns at most this long are kept compiled, per thread.
const CACHED_PATTERN: usize = 4 << 10;

thread_local! {
    /// Compiled patterns, by pattern and then flags: a statement applies
    /// one pattern to many rows.
    static PATTERNS: RefCell<HashMap<String, Vec<(ReFlags, Regex)>>> = RefCell::new(HashMap::new());
}

/// The pattern compiled with `flags`.
pub(super) fn compile(pattern: &str, flags: ReFlags) -> Result<Regex, SqlError> {
    let cached = PATTERNS.with(|cache| {
        let cache = cache.borrow();
        cache.get(pattern)?.iter().find(|(f, _)| *f == flags).map(|(_, re)| re.clone())
    });
    if let Some(re) = cached {
        return Ok(re);
    }
    let source = Translator::new(pattern, flags).translate()?;
    // The crate's limits on the compiled program stand for PostgreSQL's on
    // its automaton.
    let re = regex::RegexBuilder::new(&source)
        .size_limit(64 << 20)
        .dfa_size_limit(16 << 20)
        .build()
        .map_err(|_| invalid_re(ETOOBIG))?;
    if pattern.len() <= CACHED_PATTERN {
        PATTERNS.with(|cache| {
            let mut cache = cache.borrow_mut();
            if cache.len() >= 64 {
                cache.clear();
            }
            cache.entry(pattern.to_owned()).or_default().push((flags, re.clone()));
        });
    }
    Ok(re)
}

/// The flags argument: the compile options, and whether `g` was given.
pub(super) fn re_options(opts: Option<&Value>) -> Result<(ReFlags, bool), SqlError> {
    let mut flags = ReFlags::default();
    let mut global = false;
    for c in opts.map_or("", text).chars() {
        if c == 'g' {
            global = true;
        } else if !flags.apply(c, false) {
            return Err(SqlError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                format!("invalid regular expression option: \"{c}\""),
            ));
        }
    }
    Ok((flags, global))
}

/// The flags of a function that finds one match or all of them itself.
pub(super) fn re_options_not_global(opts: Option<&Value>, function: &str) -> Result<ReFlags, SqlError> {
    let (flags, global) = re_options(opts)?;
    if global {
        let e = SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("{function}() does not support the \"global\" option"),
        );
        return Err(if function == "regexp_match" {
            e.with_hint("Use the regexp_matches function instead.")
        } else {
            e
        });
    }
    Ok(flags)
}

/// A positive int4 parameter (`start`, `n`), or 22023 naming it.
fn positive(v: &Value, name: &str) -> Result<usize, SqlError> {
    let n = int4(v);
    if n <= 0 {
        return Err(invalid_parameter(name, n));
    }
    Ok(n as usize)
}

fn invalid_parameter(name: &str, n: i32) -> SqlError {
    SqlError::new(SqlState::INVALID_PARAMETER_VALUE, format!("invalid value for parameter \"{name}\": {n}"))
}

/// Finds matches as PostgreSQL does: from byte `start`, each search after
/// the first from the previous match's end, or a character further after
/// an empty match (so an empty match right after a non-empty one counts,
/// unlike the regex crate's iterator). `each` says whether to go on.
pub(super) fn scan(
    re: &Regex,
    s: &str,
    start: usize,
    mut each: impl FnMut(&CaptureLocations) -> Result<bool, SqlError>,
) -> Result<(), SqlError> {
    let mut locs = re.capture_locations();
    let mut at = start;
    while at <= s.len() {
        let Some(m) = re.captures_read_at(&mut locs, s, at) else { break };
        if !each(&locs)? {
            break;
        }
        at = m.end();
        if m.is_empty() {
            at += s[at..].chars().next().map_or(1, char::len_utf8);
        }
    }
    Ok(())
}

/// A match's reported groups: each one's byte range, `None` for a group
/// that did not take part.
pub(super) type Groups = Vec<Option<(usize, usize)>>;

/// The match's groups' positions, as PostgreSQL reports them: the groups
/// if the RE has any (and they are wanted), else the whole match.
pub(super) fn reported_groups(re: &Regex, locs: &CaptureLocations, want_groups: bool) -> Groups {
    if want_groups && re.captures_len() > 1 {
        (1..re.captures_len()).map(|i| locs.get(i)).collect()
    } else {
        vec![locs.get(0)]
    }
}

/// Appends regexp_replace's replacement for one match: `\1`–`\9` a
/// group's text (nothing for a group that did not match), `\&` the whole
/// match, `\\` a backslash; any other backslash is itself.
fn substitute(
    out: &mut Builder,
    replacement: &str,
    s: &str,
    locs: &CaptureLocations,
) -> Result<(), SqlError> {
    let mut rest = replacement;
    while let Some(at) = rest.find('\\') {
        out.push(&rest[..at])?;
        let after = &rest[at + 1..];
        let group = match after.as_bytes().first() {
            Some(&d @ b'1'..=b'9') => Some(usize::from(d - b'0')),
            Some(b'&') => Some(0),
            Some(b'\\') => None,
            _ => {
                out.push("\\")?;
                rest = after;
                continue;
            }
        };
        match group {
            Some(i) => {
                if let Some((from, to)) = locs.get(i) {
                    out.push(&s[from..to])?;
                }
            }
            None => out.push("\\")?,
        }
        rest = &after[1..];
    }
    out.push(rest)
}

/// regexp_replace's work: the `n`th match from character `start` replaced
/// (every match for n = 0).
fn replace_matches(
    s: &str,
    pattern: &str,
    replacement: &str,
    flags: ReFlags,
    start: usize,
    n: usize,
) -> Result<Value, SqlError> {
    let re = compile(pattern, flags)?;
    let Some(from) = char_offset(s, start) else { return Ok(Value::Text(s.to_owned())) };
    let mut out = Builder::default();
    let mut copied = 0;
    let mut seen = 0;
    scan(&re, s, from, |locs| {
        seen += 1;
        if n > 0 && seen != n {
            return Ok(true);
        }
        let (begin, end) = locs.get(0).unwrap_or_default();
        out.push(&s[copied..begin])?;
        substitute(&mut out, replacement, s, locs)?;
        copied = end;
        Ok(n == 0)
    })?;
    out.push(&s[copied..])?;
    out.finish()
}

/// `regexp_replace(s, pattern, replacement)`: the first match.
fn regexp_replace(args: &[Value]) -> Result<Value, SqlError> {
    replace_matches(text(&args[0]), text(&args[1]), text(&args[2]), ReFlags::default(), 0, 1)
}

/// `regexp_replace(s, pattern, replacement, flags)`: every match with `g`.
fn regexp_replace_flags(args: &[Value]) -> Result<Value, SqlError> {
    // The flags form is chosen for an unknown literal: a flags string that
    // looks like a number was probably meant as the start.
    if let Some(c) = text(&args[3]).chars().next().filter(char::is_ascii_digit) {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("invalid regular expression option: \"{c}\""),
        )
        .with_hint(
            "If you meant to use regexp_replace() with a start parameter, cast the fourth argument to integer explicitly.",
        ));
    }
    let (flags, global) = re_options(args.get(3))?;
    replace_matches(text(&args[0]), text(&args[1]), text(&args[2]), flags, 0, usize::from(!global))
}

/// `regexp_replace(s, pattern, replacement, start [, n [, flags]])`: the
/// nth match (every one for 0) from character `start`; without n, the
/// first match, or every one with `g`.
fn regexp_replace_from(args: &[Value]) -> Result<Value, SqlError> {
    let start = positive(&args[3], "start")?;
    let n = match args.get(4).map(int4) {
        Some(n) if n < 0 => return Err(invalid_parameter("n", n)),
        n => n,
    };
    let (flags, global) = re_options(args.get(5))?;
    let n = n.map_or(usize::from(!global), |n| n as usize);
    replace_matches(text(&args[0]), text(&args[1]), text(&args[2]), flags, start - 1, n)
}

/// `regexp_match(s, pattern [, flags])`: the first match's groups (or the
/// whole match, for an RE without groups), NULL if none.
fn regexp_match(args: &[Value]) -> Result<Value, SqlError> {
    let flags = re_options_not_global(args.get(2), "regexp_match")?;
    let s = text(&args[0]);
    let re = compile(text(&args[1]), flags)?;
    let mut found = None;
    scan(&re, s, 0, |locs| {
        found = Some(reported_groups(&re, locs, true));
        Ok(false)
    })?;
    Ok(found.map_or(Value::Null, |groups| {
        let item =
            |g: Option<(usize, usize)>| g.map_or(Value::Null, |(a, b)| Value::Text(s[a..b].to_owned()));
        Value::array(groups.into_iter().map(item).collect::<Vec<_>>())
    }))
}

/// `regexp_like(s, pattern [, flags])`.
fn regexp_like(args: &[Value]) -> Result<Value, SqlError> {
    let flags = re_options_not_global(args.get(2), "regexp_like")?;
    Ok(Value::Bool(compile(text(&args[1]), flags)?.is_match(text(&args[0]))))
}

/// `textregexeq(s, pattern)` and its kin, the functions behind `~`, `~*`,
/// `!~` and `!~*`.
fn regex_operator(args: &[Value], icase: bool, negated: bool) -> Result<Value, SqlError> {
    let flags = ReFlags { icase, ..ReFlags::default() };
    Ok(Value::Bool(compile(text(&args[1]), flags)?.is_match(text(&args[0])) != negated))
}

fn textregexeq(args: &[Value]) -> Result<Value, SqlError> {
    regex_operator(args, false, false)
}

fn textregexne(args: &[Value]) -> Result<Value, SqlError> {
    regex_operator(args, false, true)
}

fn texticregexeq(args: &[Value]) -> Result<Value, SqlError> {
    regex_operator(args, true, false)
}

fn texticregexne(args: &[Value]) -> Result<Value, SqlError> {
    regex_operator(args, true, true)
}

/// The matches of `pattern` in `s` from character `start`, as positions
/// of their reported groups, up to `limit` of them.
fn matches_from(
    s: &str,
    pattern: &str,
    flags: ReFlags,
    start: usize,
    want_groups: bool,
    limit: usize,
) -> Result<Vec<Groups>, SqlError> {
    let re = compile(pattern, flags)?;
    let mut found = Vec::new();
    if let Some(from) = char_offset(s, start) {
        scan(&re, s, from, |locs| {
            found.push(reported_groups(&re, locs, want_groups));
            Ok(found.len() < limit)
        })?;
    }
    Ok(found)
}

/// `regexp_count(s, pattern [, start [, flags]])`.
fn regexp_count(args: &[Value]) -> Result<Value, SqlError> {
    let start = args.get(2).map_or(Ok(1), |v| positive(v, "start"))?;
    let flags = re_options_not_global(args.get(3), "regexp_count")?;
    let s = text(&args[0]);
    let re = compile(text(&args[1]), flags)?;
    let mut count = 0i64;
    if let Some(from) = char_offset(s, start - 1) {
        scan(&re, s, from, |_| {
            count += 1;
            Ok(true)
        })?;
    }
    Ok(Value::Int(count))
}

/// The group regexp_instr and regexp_substr report: `subexpr` of the nth
/// match (the whole match for 0, or for an RE without groups); `None` if
/// there is no such match or group, `Some(None)` if it did not match.
fn nth_group(
    s: &str,
    pattern: &str,
    flags: ReFlags,
    start: usize,
    n: usize,
    subexpr: usize,
) -> Result<Option<Option<(usize, usize)>>, SqlError> {
    let matches = matches_from(s, pattern, flags, start - 1, subexpr > 0, n)?;
    let Some(groups) = matches.get(n - 1) else { return Ok(None) };
    if subexpr > groups.len() {
        return Ok(None);
    }
    Ok(Some(groups[subexpr.max(1) - 1]))
}

/// A non-negative int4 parameter `subexpr`.
fn subexpr(v: Option<&Value>) -> Result<usize, SqlError> {
    match v.map(int4) {
        Some(n) if n < 0 => Err(invalid_parameter("subexpr", n)),
        n => Ok(n.unwrap_or(0) as usize),
    }
}

/// `regexp_instr(s, pattern [, start [, n [, endoption [, flags [,
/// subexpr]]]]])`: where the match (or group) starts, or ends with
/// endoption 1, in characters from 1; 0 if there is none.
fn regexp_instr(args: &[Value]) -> Result<Value, SqlError> {
    let start = args.get(2).map_or(Ok(1), |v| positive(v, "start"))?;
    let n = args.get(3).map_or(Ok(1), |v| positive(v, "n"))?;
    let end = match args.get(4).map(int4) {
        Some(e @ (0 | 1)) => e == 1,
        Some(e) => return Err(invalid_parameter("endoption", e)),
        None => false,
    };
    let subexpr = subexpr(args.get(6))?;
    let flags = re_options_not_global(args.get(5), "regexp_instr")?;
    let s = text(&args[0]);
    let found = nth_group(s, text(&args[1]), flags, start, n, subexpr)?;
    Ok(Value::Int(match found.flatten() {
        Some((a, b)) => chars_before(s, if end { b } else { a }) as i64 + 1,
        None => 0,
    }))
}

/// `regexp_substr(s, pattern [, start [, n [, flags [, subexpr]]]])`: the
/// text of the match (or group); NULL if there is none.
fn regexp_substr(args: &[Value]) -> Result<Value, SqlError> {
    let start = args.get(2).map_or(Ok(1), |v| positive(v, "start"))?;
    let n = args.get(3).map_or(Ok(1), |v| positive(v, "n"))?;
    let subexpr = subexpr(args.get(5))?;
    let flags = re_options_not_global(args.get(4), "regexp_substr")?;
    let s = text(&args[0]);
    let found = nth_group(s, text(&args[1]), flags, start, n, subexpr)?;
    Ok(found.flatten().map_or(Value::Null, |(a, b)| Value::Text(s[a..b].to_owned())))
}

/// `regexp_split_to_array(s, pattern [, flags])`: the text between
/// matches, ignoring empty matches at either end of the string or right
/// after a match.
pub(super) fn regexp_split_to_array(args: &[Value]) -> Result<Value, SqlError> {
    let flags = re_options_not_global(args.get(2), "regexp_split_to_array")?;
    let s = text(&args[0]);
    let re = compile(text(&args[1]), flags)?;
    let mut pieces = Vec::new();
    let (mut piece_start, mut previous_end) = (0, 0);
    scan(&re, s, 0, |locs| {
        let (begin, end) = locs.get(0).unwrap_or_default();
        if begin < s.len() && end > previous_end {
            pieces.push(Value::Text(s[piece_start..begin].to_owned()));
            piece_start = end;
        }
        previous_end = end;
        Ok(true)
    })?;
    pieces.push(Value::Text(s[piece_start..].to_owned()));
    Ok(Value::array(pieces))
}

/// `substring(s FROM pattern)` (textregexsubstr): the first group's text
/// if the RE has groups, else the whole match's; NULL if none matched.
pub(super) fn substring_regex(args: &[Value]) -> Result<Value, SqlError> {
    let s = text(&args[0]);
    let re = compile(text(&args[1]), ReFlags::default())?;
    let mut found = None;
    scan(&re, s, 0, |locs| {
        found = Some(reported_groups(&re, locs, true)[0]);
        Ok(false)
    })?;
    Ok(found.flatten().map_or(Value::Null, |(a, b)| Value::Text(s[a..b].to_owned())))
}

pub const REPEAT: Scalar = Scalar::new("repeat", repeat);
pub const REPLACE: Scalar = Scalar::new("replace", replace);
pub const OVERLAY: Scalar = Scalar::new("overlay", overlay);
pub const REVERSE: Scalar = Scalar::new("reverse", reverse);
pub const LEFT: Scalar = Scalar::new("left", left);
pub const RIGHT: Scalar = Scalar::new("right", right);
pub const LPAD: Scalar = Scalar::new("lpad", lpad);
pub const RPAD: Scalar = Scalar::new("rpad", rpad);
pub const BTRIM: Scalar = Scalar::new("btrim", btrim);
pub const LTRIM: Scalar = Scalar::new("ltrim", ltrim);
pub const RTRIM: Scalar = Scalar::new("rtrim", rtrim);
pub const BYTEA_BTRIM: Scalar = Scalar::new("btrim", bytea_btrim);
pub const BYTEA_LTRIM: Scalar = Scalar::new("ltrim", bytea_ltrim);
pub const BYTEA_RTRIM: Scalar = Scalar::new("rtrim", bytea_rtrim);
pub const INITCAP: Scalar = Scalar::new("initcap", initcap);
pub const SPLIT_PART: Scalar = Scalar::new("split_part", split_part);
pub const ASCII: Scalar = Scalar::new("ascii", ascii);
pub const CHR: Scalar = Scalar::new("chr", chr);
pub const TRANSLATE: Scalar = Scalar::new("translate", translate);
pub const STARTS_WITH: Scalar = Scalar::new("starts_with", starts_with);
pub const TO_HEX4: Scalar = Scalar::new("to_hex", to_hex4);
pub const TO_HEX8: Scalar = Scalar::new("to_hex", to_hex8);
pub const CHAR_LENGTH: Scalar = Scalar::new("char_length", char_length);
pub const TEXT_OCTET_LENGTH: Scalar = Scalar::new("octet_length", octet_length);
pub const BIT_LENGTH: Scalar = Scalar::new("bit_length", bit_length);
pub const QUOTE_NULLABLE: Scalar = lenient("quote_nullable", quote_nullable);
pub const PARSE_IDENT: Scalar = Scalar::new("parse_ident", parse_ident);
pub const STRING_TO_ARRAY: Scalar = lenient("string_to_array", string_to_array);
pub const CONCAT: Scalar = lenient("concat", concat);
pub const CONCAT_WS: Scalar = lenient("concat_ws", concat_ws);
pub const FORMAT: Scalar = lenient("format", format);
pub const REGEXP_REPLACE: Scalar = Scalar::new("regexp_replace", regexp_replace);
pub const REGEXP_REPLACE_FLAGS: Scalar = Scalar::new("regexp_replace", regexp_replace_flags);
pub const REGEXP_REPLACE_FROM: Scalar = Scalar::new("regexp_replace", regexp_replace_from);
pub const REGEXP_MATCH: Scalar = Scalar::new("regexp_match", regexp_match);
pub const REGEXP_LIKE: Scalar = Scalar::new("regexp_like", regexp_like);
pub const TEXTREGEXEQ: Scalar = Scalar::new("textregexeq", textregexeq);
pub const TEXTREGEXNE: Scalar = Scalar::new("textregexne", textregexne);
pub const TEXTICREGEXEQ: Scalar = Scalar::new("texticregexeq", texticregexeq);
pub const TEXTICREGEXNE: Scalar = Scalar::new("texticregexne", texticregexne);
pub const REGEXP_COUNT: Scalar = Scalar::new("regexp_count", regexp_count);
pub const REGEXP_INSTR: Scalar = Scalar::new("regexp_instr", regexp_instr);
pub const REGEXP_SUBSTR: Scalar = Scalar::new("regexp_substr", regexp_substr);
pub const REGEXP_SPLIT_TO_ARRAY: Scalar = Scalar::new("regexp_split_to_array", regexp_split_to_array);
/// For the binder's `substring(s FROM pattern)`, which no table entry
/// reaches (`substring` is SQL syntax).
pub const SUBSTRING_REGEX: Scalar = Scalar::new("substring", substring_regex);

#[cfg(test)]
mod tests {
    use super::*;

    fn translated(p: &str) -> Result<String, String> {
        Translator::new(p, ReFlags::default()).translate().map_err(|e| e.into_data().message)
    }

    #[test]
    fn translation_reports_postgresqls_syntax_errors() {
        for (p, reason) in [
            ("(a", EPAREN),
            ("a)", EPAREN),
            ("[a", EBRACK),
            ("[z-a]", ERANGE),
            ("[a-c-e]", ERANGE),
            ("[[:foo:]]", ECTYPE),
            ("\\q", EESCAPE),
            ("a\\", EESCAPE),
            ("a{2", EBRACE),
            ("a{2x", BADBR),
            ("a{256}", BADBR),
            ("a{3,2}", BADBR),
            ("*a", BADRPT),
            ("a**", BADRPT),
            ("^*", BADRPT),
            ("a(?i)", BADRPT),
            ("(?z)a", BADOPT),
            ("(a)\\2", ESUBREG),
            ("[[.ab.]]", ECOLLATE),
            // What the regex crate cannot do is refused only after the
            // whole RE has parsed.
            ("(a)\\1(", EPAREN),
            ("(?=a)*", BADRPT),
        ] {
            assert_eq!(translated(p), Err(format!("invalid regular expression: {reason}")), "{p}");
        }
        assert!(translated("(a)\\1").unwrap_err().contains("back references"));
        assert!(translated("(?=a)").unwrap_err().contains("lookahead"));
    }

    /// Patterns, formats and strings made of the characters that mean
    /// something to the parsers, and a few that are more than a byte.
    fn tricky() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::string::string_regex(r"[a-c0-9\\\[\]\(\)\{\}\^\$\.\*\+\?\|:=!<>,#%$ *ILs\-éx€\n]{0,24}")
            .expect("a valid strategy")
    }

    proptest::proptest! {
        #[test]
        fn no_input_panics(p in tricky(), s in tricky(), r in tricky(), n in -5i64..30) {
            let t = |v: &str| Value::Text(v.to_owned());
            for flags in ["", "i", "n", "x", "b", "e", "q", "p", "w"] {
                let _ = regexp_replace_from(&[t(&s), t(&p), t(&r), Value::Int(1), Value::Int(0), t(flags)]);
                let _ = regexp_split_to_array(&[t(&s), t(&p), t(flags)]);
                let _ = regexp_instr(&[t(&s), t(&p), Value::Int(n.max(1)), Value::Int(1), Value::Int(1), t(flags), Value::Int(n.max(0))]);
            }
            // What the parser accepts, the regex crate must too.
            for flavor in [Flavor::Advanced, Flavor::Extended, Flavor::Basic] {
                let flags = ReFlags { flavor, expanded: n % 3 == 0, nlstop: n % 2 == 0, ..ReFlags::default() };
                if let Ok(source) = Translator::new(&p, flags).translate() {
                    let built = regex::Regex::new(&source);
                    proptest::prop_assert!(
                        !matches!(built, Err(regex::Error::Syntax(_))),
                        "{p:?} became {source:?}: {built:?}"
                    );
                }
            }
            let _ = regexp_match(&[t(&s), t(&p)]);
            let _ = format(&[t(&p), t(&s), Value::Int(n), Value::Null]);
            let _ = parse_ident(&[t(&p), Value::Bool(false)]);
            let _ = split_part(&[t(&s), t(&r), Value::Int(n)]);
            let _ = pad(&[t(&s), Value::Int(n), t(&r)], n % 2 == 0);
            let _ = left(&[t(&s), Value::Int(n - 10)]);
            let _ = right(&[t(&s), Value::Int(n - 10)]);
            let _ = translate(&[t(&s), t(&p), t(&r)]);
            let _ = string_to_array(&[t(&s), t(&r), t(&p)]);
        }
    }

    #[test]
    fn translation_keeps_postgresqls_meaning() {
        assert_eq!(translated("a{,2}").unwrap(), r"a\{,2\}");
        assert_eq!(translated(r"\mab\M").unwrap(), r"\b{start}ab\b{end}");
        assert_eq!(translated(r"a\bb\B").unwrap(), r"a\x{8}b\\");
        assert_eq!(translated("***=a*").unwrap(), r"a\*");
        assert_eq!(translated("(?i)a.").unwrap(), "(?i)a(?s:.)");
        assert_eq!(translated(r"[]a\d-]").unwrap(), r"[\x{5D}a0-9\x{2D}]");
        assert_eq!(translated(r"\141\0").unwrap(), r"a\x{0}");
        assert_eq!(translated(r"\x110000").unwrap(), NEVER);
        assert!(compile("[^a]", ReFlags { nlstop: true, ..ReFlags::default() })
            .is_ok_and(|re| !re.is_match("\n")));
        assert!(Regex::new(NEVER).is_ok_and(|re| !re.is_match("\u{10ffff}")));
    }
}
