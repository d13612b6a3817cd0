//! One-dimensional arrays in PostgreSQL's text format: `{1,2,NULL}`, with
//! elements quoted (`"a b"`) when they are empty, hold a delimiter, a brace,
//! a quote, a backslash or white space, or read as NULL.

use std::cmp::Ordering;
use std::sync::Arc;

use snapscale_sqlstate::SqlState;

use super::{SqlType, Style, Value};
use crate::error::SqlError;

fn malformed(input: &str, detail: &str) -> SqlError {
    SqlError::new(SqlState::INVALID_TEXT_REPRESENTATION, format!("malformed array literal: \"{input}\""))
        .with_detail(detail.to_owned())
}

/// Reads an array of `elem` from its text form.
pub fn parse_array(elem: SqlType, input: &str, zone: impl Into<Style> + Copy) -> Result<Value, SqlError> {
    let t = input.trim();
    let Some(body) = t.strip_prefix('{') else {
        return Err(malformed(input, "Array value must start with \"{\" or dimension information."));
    };
    let mut chars = body.chars().peekable();
    let mut items = Vec::new();
    // An empty array.
    while chars.peek().is_some_and(|c| c.is_whitespace()) {
        chars.next();
    }
    if chars.peek() == Some(&'}') {
        chars.next();
        if chars.any(|c| !c.is_whitespace()) {
            return Err(malformed(input, "Junk after closing right brace."));
        }
        return Ok(Value::Array(Arc::from(items)));
    }
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut text = String::new();
        let mut quoted = false;
        match chars.peek() {
            Some('{') => {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "multidimensional arrays are not supported",
                ))
            }
            Some('"') => {
                quoted = true;
                chars.next();
                loop {
                    match chars.next() {
                        None => return Err(malformed(input, "Unexpected end of input.")),
                        Some('"') => break,
                        Some('\\') => text
                            .push(chars.next().ok_or_else(|| malformed(input, "Unexpected end of input."))?),
                        Some(c) => text.push(c),
                    }
                }
                while chars.peek().is_some_and(|c| c.is_whitespace()) {
                    chars.next();
                }
            }
            _ => {
                let mut trailing_space = 0;
                loop {
                    match chars.peek() {
                        None => return Err(malformed(input, "Unexpected end of input.")),
                        Some(',' | '}') => break,
                        Some('{' | '"') => {
                            return Err(malformed(input, "Unexpected array element."));
                        }
                        Some('\\') => {
                            chars.next();
                            text.push(
                                chars.next().ok_or_else(|| malformed(input, "Unexpected end of input."))?,
                            );
                            trailing_space = 0;
                        }
                        Some(&c) => {
                            chars.next();
                            text.push(c);
                            trailing_space =
                                if c.is_whitespace() { trailing_space + c.len_utf8() } else { 0 };
                        }
                    }
                }
                text.truncate(text.len() - trailing_space);
                if text.is_empty() {
                    return Err(malformed(input, "Unexpected \",\" character."));
                }
            }
        }
        items.push(if !quoted && text.eq_ignore_ascii_case("null") {
            Value::Null
        } else {
            Value::parse_in(elem, &text, zone)?
        });
        match chars.next() {
            Some(',') => continue,
            Some('}') => break,
            _ => return Err(malformed(input, "Unexpected end of input.")),
        }
    }
    if chars.any(|c| !c.is_whitespace()) {
        return Err(malformed(input, "Junk after closing right brace."));
    }
    Ok(Value::Array(Arc::from(items)))
}

/// Writes an array's text form.
pub fn format_array(items: &[Value], zone: impl Into<Style> + Copy) -> String {
    let mut out = String::from("{");
    for (i, v) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        match v.to_text_in(zone) {
            None => out.push_str("NULL"),
            Some(text) => {
                let quote = text.is_empty()
                    || text.eq_ignore_ascii_case("null")
                    || text.chars().any(|c| matches!(c, '{' | '}' | ',' | '"' | '\\') || c.is_whitespace());
                if quote {
                    out.push('"');
                    for c in text.chars() {
                        if c == '"' || c == '\\' {
                            out.push('\\');
                        }
                        out.push(c);
                    }
                    out.push('"');
                } else {
                    out.push_str(&text);
                }
            }
        }
    }
    out.push('}');
    out
}

/// A record's text form: `(a,b)`, a NULL field empty, a field quoted when
/// it is empty or holds a parenthesis, a comma, a quote, a backslash or
/// white space.
pub fn format_record(fields: &[Value], zone: impl Into<Style> + Copy) -> String {
    let mut out = String::from("(");
    for (i, v) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        if let Some(text) = v.to_text_in(zone) {
            let quote = text.is_empty()
                || text.chars().any(|c| matches!(c, '(' | ')' | ',' | '"' | '\\') || c.is_whitespace());
            if quote {
                out.push('"');
                for c in text.chars() {
                    if c == '"' || c == '\\' {
                        out.push(c);
                    }
                    out.push(c);
                }
                out.push('"');
            } else {
                out.push_str(&text);
            }
        }
    }
    out.push(')');
    out
}

/// Arrays compare element by element (a NULL element above any value), then
/// by length.
pub(super) fn compare(a: &[Value], b: &[Value]) -> Option<Ordering> {
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (Value::Null, Value::Null) => Ordering::Equal,
            (Value::Null, _) => Ordering::Greater,
            (_, Value::Null) => Ordering::Less,
            _ => x.compare(y)?,
        };
        if o != Ordering::Equal {
            return Some(o);
        }
    }
    Some(a.len().cmp(&b.len()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Zone;

    fn round(elem: SqlType, text: &str) -> String {
        match parse_array(elem, text, Zone::UTC).unwrap() {
            Value::Array(items) => format_array(&items, Zone::UTC),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn text_form_as_postgresql_writes_it() {
        assert_eq!(round(SqlType::Int4, "{1, 2 ,3}"), "{1,2,3}");
        assert_eq!(round(SqlType::Int4, "{}"), "{}");
        assert_eq!(round(SqlType::Int4, " { 1 , NULL } "), "{1,NULL}");
        assert_eq!(
            round(SqlType::Text, r#"{a,"b c","","NULL",NULL,"q\"x",d\,e}"#),
            r#"{a,"b c","","NULL",NULL,"q\"x","d,e"}"#
        );
        assert_eq!(round(SqlType::Text, "{ab cd }"), r#"{"ab cd"}"#);
    }

    #[test]
    fn malformed_input_is_22p02() {
        for bad in ["1,2", "{1,2", "{1,,2}", "{1}x", "{\"a}", "{a\"b}"] {
            assert_eq!(
                parse_array(SqlType::Text, bad, Zone::UTC).unwrap_err().code,
                SqlState::INVALID_TEXT_REPRESENTATION,
                "{bad}"
            );
        }
        assert_eq!(
            parse_array(SqlType::Int4, "{{1},{2}}", Zone::UTC).unwrap_err().code,
            SqlState::FEATURE_NOT_SUPPORTED
        );
        assert_eq!(
            parse_array(SqlType::Int4, "{x}", Zone::UTC).unwrap_err().code,
            SqlState::INVALID_TEXT_REPRESENTATION
        );
    }
}

/// The fields of a record literal as PostgreSQL's record_in reads them:
/// `(a,"b c",,"x""y")` → `a`, `b c`, NULL, `x"y`. A field left empty is
/// NULL, `""` is the empty string; quotes and backslashes escape, and
/// blanks are kept (the field's type decides). `arity` fields are
/// expected; errors are 22P02 "malformed record literal" with
/// PostgreSQL's DETAIL.
pub fn parse_record(input: &str, arity: usize) -> Result<Vec<Option<String>>, crate::SqlError> {
    let malformed = |detail: &str| {
        crate::SqlError::new(
            snapscale_sqlstate::SqlState::INVALID_TEXT_REPRESENTATION,
            format!("malformed record literal: \"{input}\""),
        )
        .with_detail(detail.to_owned())
    };
    let mut chars = input.trim_start().chars().peekable();
    if chars.next() != Some('(') {
        return Err(malformed("Missing left parenthesis."));
    }
    let mut fields = Vec::with_capacity(arity);
    loop {
        if fields.len() == arity {
            return Err(malformed("Too many columns."));
        }
        let mut text = String::new();
        let mut quoted_any = false;
        let mut in_quotes = false;
        loop {
            let c = chars.next().ok_or_else(|| malformed("Unexpected end of input."))?;
            match c {
                '\\' => text.push(chars.next().ok_or_else(|| malformed("Unexpected end of input."))?),
                '"' if in_quotes && chars.peek() == Some(&'"') => {
                    chars.next();
                    text.push('"');
                }
                '"' => {
                    in_quotes = !in_quotes;
                    quoted_any = true;
                }
                ',' | ')' if !in_quotes => {
                    fields.push((quoted_any || !text.is_empty()).then_some(text));
                    if c == ')' {
                        if fields.len() < arity {
                            return Err(malformed("Too few columns."));
                        }
                        if chars.any(|c| !c.is_whitespace()) {
                            return Err(malformed("Junk after right parenthesis."));
                        }
                        return Ok(fields);
                    }
                    break;
                }
                c => text.push(c),
            }
        }
    }
}

#[cfg(test)]
mod record_tests {
    use super::parse_record;

    #[test]
    fn reads_fields_as_record_in_does() {
        let f = parse_record(r#"(1,"a b",,"x""y",\,)"#, 5).unwrap();
        assert_eq!(
            f,
            vec![Some("1".into()), Some("a b".into()), None, Some("x\"y".into()), Some(",".into())]
        );
        assert_eq!(parse_record("( 1 ,\"\")", 2).unwrap(), vec![Some(" 1 ".into()), Some(String::new())]);
        let detail = |s: &str, n| parse_record(s, n).unwrap_err().detail.unwrap();
        assert_eq!(detail("1,2)", 2), "Missing left parenthesis.");
        assert_eq!(detail("(1)", 2), "Too few columns.");
        assert_eq!(detail("(1,2,3)", 2), "Too many columns.");
        assert_eq!(detail("(1,2", 2), "Unexpected end of input.");
        assert_eq!(detail("(1,2) x", 2), "Junk after right parenthesis.");
    }
}
