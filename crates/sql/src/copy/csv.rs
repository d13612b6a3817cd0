//! COPY's CSV format: fields separated by the delimiter, quoted with the
//! quote character when they hold the delimiter, the quote, a newline or a
//! carriage return, begin or end with a space, or read as the NULL string;
//! inside quotes the escape character (by default the quote itself) escapes
//! a quote. An unquoted field equal to the NULL string (by default empty)
//! is NULL; a quoted one never is.

use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use super::CopyOptions;

/// Writes one record (with its newline).
pub(crate) fn format_row(
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
            Some(s) => push_field(&mut out, &s, o),
        }
    }
    out.push('\n');
    out.into_bytes()
}

/// The header record: the column names.
pub(crate) fn format_header(names: &[String], o: &CopyOptions) -> Vec<u8> {
    let mut out = String::new();
    for (i, n) in names.iter().enumerate() {
        if i > 0 {
            out.push(o.delimiter);
        }
        push_field(&mut out, n, o);
    }
    out.push('\n');
    out.into_bytes()
}

fn push_field(out: &mut String, s: &str, o: &CopyOptions) {
    let quote = s == o.null
        || s.contains([o.delimiter, o.quote, '\n', '\r'])
        || s.starts_with(' ')
        || s.ends_with(' ')
        || s == "\\.";
    if !quote {
        out.push_str(s);
        return;
    }
    out.push(o.quote);
    for c in s.chars() {
        if c == o.quote || c == o.escape {
            out.push(o.escape);
        }
        out.push(c);
    }
    out.push(o.quote);
}

/// The end of the first whole record in `data` (the index of its newline),
/// if there is one: a newline inside quotes is part of a field.
pub(crate) fn record_end(data: &[u8], o: &CopyOptions) -> Option<usize> {
    let (q, e) = (o.quote as u8, o.escape as u8);
    let mut in_quotes = false;
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        if in_quotes {
            if b == e && e != q && data.get(i + 1).is_some_and(|&n| n == q || n == e) {
                i += 2;
                continue;
            }
            if b == q {
                if e == q && data.get(i + 1) == Some(&q) {
                    i += 2;
                    continue;
                }
                in_quotes = false;
            }
        } else if b == q {
            in_quotes = true;
        } else if b == b'\n' {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Splits one record (without its newline) into fields; `None` is NULL.
pub(crate) fn parse_record(line: &str, o: &CopyOptions) -> Result<Vec<Option<String>>, SqlError> {
    let mut fields = Vec::new();
    let mut chars = line.chars().peekable();
    loop {
        let mut field = String::new();
        let mut quoted = false;
        loop {
            match chars.peek().copied() {
                None => break,
                Some(c) if c == o.delimiter => break,
                Some(c) if c == o.quote => {
                    quoted = true;
                    chars.next();
                    loop {
                        match chars.next() {
                            None => {
                                return Err(SqlError::new(
                                    SqlState::BAD_COPY_FILE_FORMAT,
                                    "unterminated CSV quoted field",
                                ))
                            }
                            Some(c)
                                if c == o.escape
                                    && chars.peek().is_some_and(|&n| n == o.quote || n == o.escape) =>
                            {
                                field.push(chars.next().expect("peeked"));
                            }
                            Some(c) if c == o.quote => break,
                            Some(c) => field.push(c),
                        }
                    }
                }
                Some(c) => {
                    field.push(c);
                    chars.next();
                }
            }
        }
        fields.push(if !quoted && field == o.null { None } else { Some(field) });
        if chars.next().is_none() {
            return Ok(fields);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::copy::CopyFormat;

    fn csv() -> CopyOptions {
        CopyOptions { format: CopyFormat::Csv, delimiter: ',', null: String::new(), ..CopyOptions::default() }
    }

    #[test]
    fn round_trips_with_quotes_and_nulls() {
        let o = csv();
        let row =
            vec![Value::Int(1), Value::Null, Value::Text("a,\"b\"\nc".into()), Value::Text(String::new())];
        let text = String::from_utf8(format_row(&row, &o, snapscale_values::Zone::UTC)).unwrap();
        assert_eq!(text, "1,,\"a,\"\"b\"\"\nc\",\"\"\n");
        let end = record_end(text.as_bytes(), &o).unwrap();
        assert_eq!(end, text.len() - 1);
        let back = parse_record(&text[..end], &o).unwrap();
        assert_eq!(back, vec![Some("1".into()), None, Some("a,\"b\"\nc".into()), Some(String::new())]);
    }

    #[test]
    fn a_quote_left_open_is_an_error() {
        assert_eq!(parse_record("\"abc", &csv()).unwrap_err().code, SqlState::BAD_COPY_FILE_FORMAT);
    }
}
