//! COPY's text format: one line per row, columns separated by the
//! delimiter (a tab by default), the NULL string (`\N` by default) for
//! NULL, backslash escapes, and an optional `\.` end-of-data line.

use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use super::CopyOptions;

/// Splits one line (without its newline) into fields; `None` is NULL.
/// Data delimiters are always escaped, so raw ones separate fields, and a
/// field is NULL exactly when its raw text is the NULL string.
pub fn parse_line(line: &str, o: &CopyOptions) -> Result<Vec<Option<String>>, SqlError> {
    line.split(o.delimiter)
        .map(|raw| if raw == o.null { Ok(None) } else { unescape(raw).map(Some) })
        .collect()
}

fn unescape(raw: &str) -> Result<String, SqlError> {
    let mut field = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            field.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            return Err(SqlError::new(
                SqlState::BAD_COPY_FILE_FORMAT,
                "unterminated backslash escape in COPY data",
            ));
        };
        match e {
            'b' => field.push('\u{8}'),
            'f' => field.push('\u{c}'),
            'n' => field.push('\n'),
            'r' => field.push('\r'),
            't' => field.push('\t'),
            'v' => field.push('\u{b}'),
            '0'..='7' => {
                let mut v = e.to_digit(8).expect("octal digit");
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                field.push(char::from_u32(v & 0xff).unwrap_or('\u{fffd}'));
            }
            'x' if chars.peek().is_some_and(|d| d.is_ascii_hexdigit()) => {
                let mut v = 0;
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(16)) {
                        Some(d) => {
                            v = v * 16 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                field.push(char::from_u32(v).unwrap_or('\u{fffd}'));
            }
            other => field.push(other),
        }
    }
    Ok(field)
}

/// Formats one row.
pub fn format_row(
    values: &[Value],
    o: &CopyOptions,
    zone: impl Into<snapscale_values::Style> + Copy,
) -> Vec<u8> {
    let mut out = String::new();
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(o.delimiter);
        }
        match v.to_text_in(zone) {
            None => out.push_str(&o.null),
            // Most values hold nothing to escape: copied whole.
            Some(s)
                if !s.bytes().any(|b| matches!(b, b'\\' | b'\n' | b'\r' | b'\t' | 8 | 11 | 12))
                    && !s.contains(o.delimiter) =>
            {
                out.push_str(&s)
            }
            Some(s) => {
                for c in s.chars() {
                    match c {
                        '\\' => out.push_str("\\\\"),
                        '\n' => out.push_str("\\n"),
                        '\r' => out.push_str("\\r"),
                        '\t' => out.push_str("\\t"),
                        '\u{8}' => out.push_str("\\b"),
                        '\u{c}' => out.push_str("\\f"),
                        '\u{b}' => out.push_str("\\v"),
                        c if c == o.delimiter => {
                            out.push('\\');
                            out.push(c);
                        }
                        c => out.push(c),
                    }
                }
            }
        }
    }
    out.push('\n');
    out.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text() -> CopyOptions {
        CopyOptions::default()
    }

    #[test]
    fn fields_nulls_and_escapes() {
        assert_eq!(
            parse_line("1\t\\N\ta\\tb\\\\c\t", &text()).unwrap(),
            vec![Some("1".into()), None, Some("a\tb\\c".into()), Some(String::new())]
        );
        // An escaped backslash followed by N is the text "\N", not NULL.
        assert_eq!(parse_line("\\\\N", &text()).unwrap(), vec![Some("\\N".into())]);
        assert_eq!(parse_line("\\101\\x41", &text()).unwrap(), vec![Some("AA".into())]);
    }

    #[test]
    fn formats_round_trip() {
        let row = vec![Value::Int(1), Value::Null, Value::Text("a\tb\\".into())];
        let line = String::from_utf8(format_row(&row, &text(), snapscale_values::Zone::UTC)).unwrap();
        assert_eq!(line, "1\t\\N\ta\\tb\\\\\n");
        let back = parse_line(line.trim_end_matches('\n'), &text()).unwrap();
        assert_eq!(back, vec![Some("1".into()), None, Some("a\tb\\".into())]);
    }
}
