//! COPY's binary format: a signature, flags and a header extension, then
//! each row as a field count and each field as a length (-1 for NULL) and
//! its binary form, then -1 as the count. Integers are big-endian.

use snapscale_sqlstate::SqlState;
use snapscale_values::wire::{decode_param, encode_binary};
use snapscale_values::{SqlError, SqlType, Value};

/// The 11-byte signature that starts the data.
pub(crate) const SIGNATURE: &[u8; 11] = b"PGCOPY\n\xff\r\n\0";

/// The header: signature, flags (none), header extension length (0).
pub(crate) fn header() -> Vec<u8> {
    let mut out = SIGNATURE.to_vec();
    out.extend_from_slice(&0i32.to_be_bytes());
    out.extend_from_slice(&0i32.to_be_bytes());
    out
}

/// The trailer: a field count of -1.
pub(crate) fn trailer() -> Vec<u8> {
    (-1i16).to_be_bytes().to_vec()
}

/// One row.
pub(crate) fn format_row(values: &[Value], types: &[SqlType]) -> Vec<u8> {
    let mut out = (values.len() as i16).to_be_bytes().to_vec();
    for (v, ty) in values.iter().zip(types) {
        match encode_binary(*ty, v) {
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
            Some(b) => {
                out.extend_from_slice(&(b.len() as i32).to_be_bytes());
                out.extend_from_slice(&b);
            }
        }
    }
    out
}

fn bad(message: &str) -> SqlError {
    SqlError::new(SqlState::BAD_COPY_FILE_FORMAT, message.to_owned())
}

/// What the front of a buffer of binary COPY data holds.
pub(crate) enum Next {
    /// Not enough bytes yet.
    More,
    /// The header, `n` bytes.
    Header(usize),
    /// A row of `n` bytes, its fields decoded.
    Row(usize, Vec<Value>),
    /// The trailer, `n` bytes.
    End(usize),
}

/// Reads the next item of `data` (`header_done`: the header was read).
pub(crate) fn next(data: &[u8], header_done: bool, types: &[SqlType]) -> Result<Next, SqlError> {
    if !header_done {
        if data.len() < SIGNATURE.len() + 8 {
            return Ok(Next::More);
        }
        if &data[..SIGNATURE.len()] != SIGNATURE {
            return Err(bad("COPY file signature not recognized"));
        }
        let flags = u32::from_be_bytes(data[11..15].try_into().expect("4 bytes"));
        if flags & 0x0001_0000 != 0 {
            return Err(bad("invalid COPY file header (WITH OIDS)"));
        }
        if flags & 0xffff_0000 != 0 {
            return Err(bad("unrecognized critical flags in COPY file header"));
        }
        let extension = u32::from_be_bytes(data[15..19].try_into().expect("4 bytes")) as usize;
        let total =
            19usize.checked_add(extension).ok_or_else(|| bad("invalid COPY file header (wrong length)"))?;
        return Ok(if data.len() < total { Next::More } else { Next::Header(total) });
    }
    if data.len() < 2 {
        return Ok(Next::More);
    }
    let count = i16::from_be_bytes([data[0], data[1]]);
    if count == -1 {
        return Ok(Next::End(2));
    }
    if count as usize != types.len() {
        return Err(bad(&format!("row field count is {count}, expected {}", types.len())));
    }
    let mut at = 2;
    let mut values = Vec::with_capacity(types.len());
    for ty in types {
        if data.len() < at + 4 {
            return Ok(Next::More);
        }
        let len = i32::from_be_bytes(data[at..at + 4].try_into().expect("4 bytes"));
        at += 4;
        if len == -1 {
            values.push(Value::Null);
            continue;
        }
        let len = usize::try_from(len).map_err(|_| bad("invalid field size"))?;
        if data.len() < at + len {
            return Ok(Next::More);
        }
        // Binary forms carry no zone.
        values.push(decode_param(*ty, true, Some(&data[at..at + len]), snapscale_values::Zone::UTC)?);
        at += len;
    }
    Ok(Next::Row(at, values))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let types = [SqlType::Int4, SqlType::Text, SqlType::Int8];
        let row = vec![Value::Int(7), Value::Null, Value::Int(-1)];
        let mut data = header();
        data.extend(format_row(&row, &types));
        data.extend(trailer());
        let Next::Header(n) = next(&data, false, &types).unwrap() else { panic!() };
        let Next::Row(m, values) = next(&data[n..], true, &types).unwrap() else { panic!() };
        assert_eq!(values, row);
        assert!(matches!(next(&data[n + m..], true, &types).unwrap(), Next::End(2)));
        // Any prefix asks for more.
        for cut in 0..n {
            assert!(matches!(next(&data[..cut], false, &types).unwrap(), Next::More));
        }
        assert!(matches!(next(&data[n..n + m - 1], true, &types).unwrap(), Next::More));
    }
}
