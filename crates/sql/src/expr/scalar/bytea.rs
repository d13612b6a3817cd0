//! bytea's functions: encode/decode (hex, base64, escape), the digests
//! (md5, sha224 … sha512), get_byte/set_byte, substring, position and
//! overlay, and gen_random_uuid().
//!
//! Base64 is written here rather than taken from a crate: PostgreSQL's
//! dialect breaks output lines every 76 characters, and on input skips
//! whitespace anywhere, accepts padding between quanta and reports its own
//! three errors, which no general-purpose engine reproduces.

use md5::Md5;
use sha2::{Digest, Sha224, Sha256, Sha384, Sha512};
use snapscale_sqlstate::SqlState;
use snapscale_values::{parse_bytea, SqlError, Value};

use super::{bytes, int, text, Scalar};

const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity(data.len() * 4 / 3 + data.len() / 57 + 4);
    let mut line = 0;
    for chunk in data.chunks(3) {
        let n = chunk.iter().enumerate().fold(0u32, |acc, (i, b)| acc | u32::from(*b) << (16 - 8 * i));
        let symbols = chunk.len() + 1;
        for i in 0..4 {
            out.push(if i < symbols { BASE64[(n >> (18 - 6 * i) & 63) as usize] as char } else { '=' });
        }
        line += 4;
        // A full line ends after the group that fills it, even the last.
        if line >= 76 && (chunk.len() == 3) {
            out.push('\n');
            line = 0;
        }
    }
    out
}

fn base64_decode(input: &str) -> Result<Vec<u8>, SqlError> {
    let invalid = |m: String| SqlError::new(SqlState::INVALID_PARAMETER_VALUE, m);
    let mut out = Vec::with_capacity(input.len() * 3 / 4);
    let (mut quantum, mut pos, mut end) = (0u32, 0, 0);
    for c in input.chars() {
        if matches!(c, ' ' | '\t' | '\n' | '\r') {
            continue;
        }
        let sextet = if c == '=' {
            // Padding marks how many bytes the quanta hold from here on.
            if end == 0 {
                end = match pos {
                    2 => 1,
                    3 => 2,
                    _ => return Err(invalid("unexpected \"=\" while decoding base64 sequence".into())),
                };
            }
            0
        } else {
            let found = BASE64.iter().position(|&b| c.is_ascii() && b == c as u8);
            let Some(v) = found else {
                return Err(invalid(format!("invalid symbol \"{c}\" found while decoding base64 sequence")));
            };
            v as u32
        };
        quantum = quantum << 6 | sextet;
        pos += 1;
        if pos == 4 {
            out.push((quantum >> 16) as u8);
            if end == 0 || end > 1 {
                out.push((quantum >> 8) as u8);
            }
            if end == 0 || end > 2 {
                out.push(quantum as u8);
            }
            (quantum, pos) = (0, 0);
        }
    }
    if pos != 0 {
        return Err(invalid("invalid base64 end sequence".into())
            .with_hint("Input data is missing padding, is truncated, or is otherwise corrupted."));
    }
    Ok(out)
}

/// encode's escape format: a zero byte and bytes with the high bit as
/// `\ooo`, a backslash doubled, the rest as themselves.
fn escape_encode(data: &[u8]) -> String {
    let mut s = String::with_capacity(data.len());
    for &b in data {
        match b {
            0 | 0x80.. => s.push_str(&format!("\\{b:03o}")),
            b'\\' => s.push_str("\\\\"),
            _ => s.push(b as char),
        }
    }
    s
}

fn unrecognized(format: &str) -> SqlError {
    SqlError::new(SqlState::INVALID_PARAMETER_VALUE, format!("unrecognized encoding: \"{format}\""))
}

fn encode(args: &[Value]) -> Result<Value, SqlError> {
    let data = bytes(&args[0]);
    let format = text(&args[1]);
    Ok(Value::Text(match format.to_ascii_lowercase().as_str() {
        "hex" => snapscale_values::format_bytea_hex(data)[2..].to_owned(),
        "base64" => base64_encode(data),
        "escape" => escape_encode(data),
        _ => return Err(unrecognized(format)),
    }))
}

fn decode(args: &[Value]) -> Result<Value, SqlError> {
    let input = text(&args[0]);
    let format = text(&args[1]);
    let data = match format.to_ascii_lowercase().as_str() {
        "hex" => parse_bytea(&format!("\\x{input}"))?,
        "base64" => base64_decode(input)?,
        // The escape form is bytea's own escape input; a leading `\x` is
        // two characters there, not the hex form.
        "escape" if input.starts_with("\\x") || input.starts_with("\\X") => {
            return Err(SqlError::new(
                SqlState::INVALID_TEXT_REPRESENTATION,
                "invalid input syntax for type bytea",
            ))
        }
        "escape" => parse_bytea(input)?,
        _ => return Err(unrecognized(format)),
    };
    Ok(Value::Bytes(data.into()))
}

fn hex_text(digest: &[u8]) -> Value {
    Value::Text(snapscale_values::format_bytea_hex(digest)[2..].to_owned())
}

fn md5(args: &[Value]) -> Result<Value, SqlError> {
    Ok(hex_text(&Md5::digest(bytes(&args[0]))))
}

fn sha224(args: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Bytes(Sha224::digest(bytes(&args[0])).to_vec().into()))
}

fn sha256(args: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Bytes(Sha256::digest(bytes(&args[0])).to_vec().into()))
}

fn sha384(args: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Bytes(Sha384::digest(bytes(&args[0])).to_vec().into()))
}

fn sha512(args: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Bytes(Sha512::digest(bytes(&args[0])).to_vec().into()))
}

/// The byte at `n` (from 0), or 2202E naming the valid range.
fn byte_index(data: &[u8], n: i64) -> Result<usize, SqlError> {
    usize::try_from(n).ok().filter(|&i| i < data.len()).ok_or_else(|| {
        SqlError::new(
            SqlState::ARRAY_SUBSCRIPT_ERROR,
            format!("index {n} out of valid range, 0..{}", data.len() as i64 - 1),
        )
    })
}

fn get_byte(args: &[Value]) -> Result<Value, SqlError> {
    let data = bytes(&args[0]);
    Ok(Value::Int(data[byte_index(data, int(&args[1]))?].into()))
}

fn set_byte(args: &[Value]) -> Result<Value, SqlError> {
    let mut data = bytes(&args[0]).to_vec();
    let i = byte_index(&data, int(&args[1]))?;
    data[i] = int(&args[2]) as u8;
    Ok(Value::Bytes(data.into()))
}

fn octet_length(args: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Int(bytes(&args[0]).len() as i64))
}

/// `substring(bytes FROM start [FOR count])`: SQL's rule, where positions
/// before 1 count but select nothing; a negative count is 22011.
fn substr(args: &[Value]) -> Result<Value, SqlError> {
    let data = bytes(&args[0]);
    let start = int(&args[1]);
    let end = match args.get(2) {
        None => i64::MAX,
        Some(count) => {
            let count = int(count);
            if count < 0 {
                return Err(SqlError::new(
                    SqlState::SUBSTRING_ERROR,
                    "negative substring length not allowed",
                ));
            }
            start.saturating_add(count)
        }
    };
    let from = (start.max(1) - 1).min(data.len() as i64) as usize;
    let to = (end.max(1) - 1).clamp(from as i64, data.len() as i64) as usize;
    Ok(Value::Bytes(data[from..to].into()))
}

/// `position(needle IN haystack)`: from 1, 0 if absent (an empty needle is
/// at 1).
fn position(args: &[Value]) -> Result<Value, SqlError> {
    let (needle, haystack) = (bytes(&args[0]), bytes(&args[1]));
    let at =
        if needle.is_empty() { Some(0) } else { haystack.windows(needle.len()).position(|w| w == needle) };
    Ok(Value::Int(at.map_or(0, |i| i as i64 + 1)))
}

/// `position(needle IN haystack)` for text: in characters, from 1.
fn text_position(args: &[Value]) -> Result<Value, SqlError> {
    let (needle, haystack) = (text(&args[0]), text(&args[1]));
    Ok(Value::Int(haystack.find(needle).map_or(0, |at| haystack[..at].chars().count() as i64 + 1)))
}

/// `strpos(haystack, needle)`: position's arguments the other way round.
fn strpos(args: &[Value]) -> Result<Value, SqlError> {
    text_position(&[args[1].clone(), args[0].clone()])
}

/// char(n) as text: without its trailing blanks.
fn bpchar_to_text(args: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Text(text(&args[0]).trim_end_matches(' ').to_owned()))
}

fn concat(args: &[Value]) -> Result<Value, SqlError> {
    let mut data = bytes(&args[0]).to_vec();
    data.extend_from_slice(bytes(&args[1]));
    Ok(Value::Bytes(data.into()))
}

fn gen_random_uuid(_: &[Value]) -> Result<Value, SqlError> {
    let mut u = [0u8; 16];
    getrandom::fill(&mut u).map_err(|e| {
        SqlError::new(SqlState::INTERNAL_ERROR, format!("could not generate random values: {e}"))
    })?;
    // Version 4 (random), variant RFC 4122.
    u[6] = u[6] & 0x0f | 0x40;
    u[8] = u[8] & 0x3f | 0x80;
    Ok(Value::Uuid(u))
}

/// `random()`: a float8 in [0, 1) from the system's random source (53
/// bits, a double's precision).
fn random(_: &[Value]) -> Result<Value, SqlError> {
    let mut b = [0u8; 8];
    getrandom::fill(&mut b).map_err(|e| {
        SqlError::new(SqlState::INTERNAL_ERROR, format!("could not generate random values: {e}"))
    })?;
    let bits = u64::from_le_bytes(b) >> 11;
    Ok(Value::Float(bits as f64 / (1u64 << 53) as f64))
}

pub const RANDOM: Scalar = Scalar::volatile("random", random);
pub const ENCODE: Scalar = Scalar::new("encode", encode);
pub const DECODE: Scalar = Scalar::new("decode", decode);
pub const MD5: Scalar = Scalar::new("md5", md5);
pub const SHA224: Scalar = Scalar::new("sha224", sha224);
pub const SHA256: Scalar = Scalar::new("sha256", sha256);
pub const SHA384: Scalar = Scalar::new("sha384", sha384);
pub const SHA512: Scalar = Scalar::new("sha512", sha512);
pub const GET_BYTE: Scalar = Scalar::new("get_byte", get_byte);
pub const SET_BYTE: Scalar = Scalar::new("set_byte", set_byte);
pub const OCTET_LENGTH: Scalar = Scalar::new("octet_length", octet_length);
pub const BYTEA_SUBSTR: Scalar = Scalar::new("substr", substr);
pub const BYTEA_POSITION: Scalar = Scalar::new("position", position);
pub const TEXT_POSITION: Scalar = Scalar::new("position", text_position);
pub const STRPOS: Scalar = Scalar::new("strpos", strpos);
pub const BPCHAR_TO_TEXT: Scalar = Scalar::new("text", bpchar_to_text);
pub const BYTEA_CONCAT: Scalar = Scalar::new("byteacat", concat);
pub const GEN_RANDOM_UUID: Scalar = Scalar::volatile("gen_random_uuid", gen_random_uuid);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_is_postgresqls_dialect() {
        let long = vec![0xab; 60];
        let text = base64_encode(&long);
        assert_eq!(text.split('\n').map(str::len).collect::<Vec<_>>(), [76, 4]);
        assert_eq!(base64_encode(&[0xab; 57]).len(), 77, "a full last line ends with a newline");
        assert_eq!(base64_decode(&text).unwrap(), long);
        assert_eq!(base64_decode("YWJj ZA==").unwrap(), b"abcd");
        assert_eq!(base64_decode("YQ==YQ==").unwrap(), b"aa");
        assert_eq!(base64_decode("YWJjZA=").unwrap_err().message, "invalid base64 end sequence");
        assert_eq!(
            base64_decode("YW*j").unwrap_err().message,
            "invalid symbol \"*\" found while decoding base64 sequence"
        );
        assert_eq!(
            base64_decode("Y===").unwrap_err().message,
            "unexpected \"=\" while decoding base64 sequence"
        );
        assert_eq!(escape_encode(b"\x00\x01\\\x7f\x80\xffA"), "\\000\u{1}\\\\\u{7f}\\200\\377A");
    }
}
