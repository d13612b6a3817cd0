//! uuid: 16 bytes, read as 32 hex digits (an optional hyphen after each
//! group of four, optional braces around the whole) and written in the
//! standard 8-4-4-4-12 lower-case form.

use crate::error::SqlError;

/// Reads uuid text input.
pub fn parse_uuid(input: &str) -> Result<[u8; 16], SqlError> {
    let bad = || SqlError::invalid_input("uuid", input);
    let bytes = input.as_bytes();
    let braced = bytes.first() == Some(&b'{');
    let mut i = usize::from(braced);
    let mut out = [0u8; 16];
    let digit = |c: Option<&u8>| c.and_then(|c| (*c as char).to_digit(16)).map(|d| d as u8);
    for (n, byte) in out.iter_mut().enumerate() {
        let hi = digit(bytes.get(i)).ok_or_else(bad)?;
        let lo = digit(bytes.get(i + 1)).ok_or_else(bad)?;
        *byte = hi << 4 | lo;
        i += 2;
        if n % 2 == 1 && n < 15 && bytes.get(i) == Some(&b'-') {
            i += 1;
        }
    }
    if braced {
        if bytes.get(i) != Some(&b'}') {
            return Err(bad());
        }
        i += 1;
    }
    if i != bytes.len() {
        return Err(bad());
    }
    Ok(out)
}

/// The standard form: 8-4-4-4-12 lower-case hex digits.
pub fn format_uuid(u: &[u8; 16]) -> String {
    let mut s = String::with_capacity(36);
    for (n, b) in u.iter().enumerate() {
        if matches!(n, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push_str(&format!("{b:02x}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_reads_postgresqls_forms_and_writes_the_standard_one() {
        for input in [
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
            "{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}",
            "A0EEBC999C0B4EF8BB6D6BB9BD380A11",
            "a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11",
            "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}",
        ] {
            assert_eq!(
                format_uuid(&parse_uuid(input).unwrap()),
                "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11",
                "{input}"
            );
        }
        for bad in [
            "{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11",
            "a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}",
            " 11111111-1111-1111-1111-111111111111",
            "11111111-1111-1111-1111-111111111111 ",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a1",
            "a0eebc999-c0b-4ef8-bb6d-6bb9bd380a11",
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11-",
        ] {
            let e = parse_uuid(bad).unwrap_err();
            assert_eq!(e.message, format!("invalid input syntax for type uuid: \"{bad}\""));
        }
    }
}
