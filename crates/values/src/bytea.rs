//! bytea: binary strings, with PostgreSQL's two text forms. Input takes
//! the hex form (`\x` then pairs of hex digits, blanks allowed between
//! pairs) or the escape form (bytes as themselves, `\\` for a backslash,
//! `\ooo` for any byte in octal); output is the hex form (PostgreSQL's
//! default `bytea_output`) or, asked for, the escape form.

use snapscale_sqlstate::SqlState;

use crate::error::SqlError;

/// Reads bytea text input.
pub fn parse_bytea(input: &str) -> Result<Vec<u8>, SqlError> {
    if let Some(hex) = input.strip_prefix("\\x").or_else(|| input.strip_prefix("\\X")) {
        return parse_hex(hex);
    }
    parse_escape(input)
}

fn hex_digit(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

fn parse_hex(hex: &str) -> Result<Vec<u8>, SqlError> {
    let bytes = hex.as_bytes();
    let mut out = Vec::with_capacity(bytes.len() / 2);
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if matches!(c, b' ' | b'\t' | b'\n' | b'\r') {
            i += 1;
            continue;
        }
        let invalid = |at: usize| {
            let ch = hex[at..].chars().next().unwrap_or_default();
            SqlError::new(SqlState::INVALID_PARAMETER_VALUE, format!("invalid hexadecimal digit: \"{ch}\""))
        };
        let hi = hex_digit(c).ok_or_else(|| invalid(i))?;
        let Some(&c2) = bytes.get(i + 1) else {
            return Err(SqlError::new(
                SqlState::INVALID_PARAMETER_VALUE,
                "invalid hexadecimal data: odd number of digits",
            ));
        };
        let lo = hex_digit(c2).ok_or_else(|| invalid(i + 1))?;
        out.push(hi << 4 | lo);
        i += 2;
    }
    Ok(out)
}

fn parse_escape(input: &str) -> Result<Vec<u8>, SqlError> {
    let bytes = input.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    let octal = |c: u8| (b'0'..=b'7').contains(&c);
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            out.push(bytes[i]);
            i += 1;
        } else if bytes.get(i + 1) == Some(&b'\\') {
            out.push(b'\\');
            i += 2;
        } else if let [a @ b'0'..=b'3', b, c, ..] = bytes[i + 1..] {
            if !octal(b) || !octal(c) {
                return Err(bad_escape());
            }
            out.push((a - b'0') << 6 | (b - b'0') << 3 | (c - b'0'));
            i += 4;
        } else {
            return Err(bad_escape());
        }
    }
    Ok(out)
}

/// PostgreSQL's message names no input here.
fn bad_escape() -> SqlError {
    SqlError::new(SqlState::INVALID_TEXT_REPRESENTATION, "invalid input syntax for type bytea")
}

/// The hex form: `\x` and two lower-case digits per byte.
pub fn format_bytea_hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 + bytes.len() * 2);
    s.push_str("\\x");
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// The escape form: printable ASCII as itself, a backslash doubled, any
/// other byte as `\ooo`.
pub fn format_bytea_escape(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len());
    for &b in bytes {
        match b {
            b'\\' => s.push_str("\\\\"),
            0x20..=0x7e => s.push(b as char),
            _ => s.push_str(&format!("\\{:03o}", b)),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytea_reads_and_writes_as_postgresql() {
        assert_eq!(parse_bytea("\\x DE ad be\tEF").unwrap(), vec![0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(parse_bytea("a\\\\b\\001\\377").unwrap(), b"a\\b\x01\xff".to_vec());
        assert_eq!(format_bytea_hex(&[0, 0xab, 0x10]), "\\x00ab10");
        assert_eq!(format_bytea_escape(b"a\\b\x01\xff~"), "a\\\\b\\001\\377~");
        let e = parse_bytea("\\x1").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (SqlState::INVALID_PARAMETER_VALUE, "invalid hexadecimal data: odd number of digits")
        );
        let e = parse_bytea("\\x1g").unwrap_err();
        assert_eq!(e.message, "invalid hexadecimal digit: \"g\"");
        let e = parse_bytea("\\8").unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (SqlState::INVALID_TEXT_REPRESENTATION, "invalid input syntax for type bytea")
        );
    }
}
