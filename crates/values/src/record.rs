//! Records (row values) in PostgreSQL's text format: `(1,"a b",)`.

use crate::{Style, Value};

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
                push_escaped(&mut out, &text, true);
                out.push('"');
            } else {
                out.push_str(&text);
            }
        }
    }
    out.push(')');
    out
}

/// Appends `text` with each double quote and backslash escaped: doubled
/// when `doubled` (record_out), else preceded by a backslash (array_out).
/// Copies whole runs, not characters: a nested record's text is mostly
/// runs of quotes, and can be a gigabyte long (text_size.rs). The cuts
/// fall beside ASCII bytes, so every slice is on a character boundary.
pub(crate) fn push_escaped(out: &mut String, text: &str, doubled: bool) {
    let bytes = text.as_bytes();
    let special = |b: &u8| *b == b'"' || *b == b'\\';
    let mut at = 0;
    while let Some(k) = bytes[at..].iter().position(special) {
        let first = at + k;
        out.push_str(&text[at..first]);
        let c = bytes[first];
        let run = bytes[first..].iter().position(|b| *b != c).unwrap_or(bytes.len() - first);
        let specials = &text[first..first + run];
        if doubled {
            out.push_str(specials);
            out.push_str(specials);
        } else {
            out.reserve(2 * run);
            for ch in specials.chars() {
                out.push('\\');
                out.push(ch);
            }
        }
        at = first + run;
    }
    out.push_str(&text[at..]);
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
        let detail = |s: &str, n| parse_record(s, n).unwrap_err().detail.clone().unwrap();
        assert_eq!(detail("1,2)", 2), "Missing left parenthesis.");
        assert_eq!(detail("(1)", 2), "Too few columns.");
        assert_eq!(detail("(1,2,3)", 2), "Too many columns.");
        assert_eq!(detail("(1,2", 2), "Unexpected end of input.");
        assert_eq!(detail("(1,2) x", 2), "Junk after right parenthesis.");
    }
}
