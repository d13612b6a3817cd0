//! The functions behind SQL's string syntax and the string functions
//! that came with it: `LIKE … ESCAPE` (like_escape), `SIMILAR TO …
//! [ESCAPE …]` (similar_to_escape, then `~`), `substring(s SIMILAR p
//! ESCAPE e)`, overlay and LIKE over bytea, the rows of regexp_matches,
//! unistr, and bytea's bit functions; each with PostgreSQL's results and
//! errors.

use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use super::text::{
    check_alloc, compile, re_options, re_options_not_global, regexp_split_to_array, reported_groups, scan,
    string_to_array, ReFlags,
};
use super::{bytes, int, text, Scalar};

fn invalid_escape_string() -> SqlError {
    SqlError::new(SqlState::INVALID_ESCAPE_SEQUENCE, "invalid escape string")
        .with_hint("Escape string must be empty or one character.")
}

/// The escape character of an ESCAPE clause: `None` for '' (no escape
/// character), else exactly one character.
fn escape_char(e: &str) -> Result<Option<char>, SqlError> {
    let mut chars = e.chars();
    match (chars.next(), chars.next()) {
        (None, _) => Ok(None),
        (Some(c), None) => Ok(Some(c)),
        _ => Err(invalid_escape_string()),
    }
}

/// A LIKE pattern written with escape character `escape` rewritten with
/// the backslash, LIKE's own escape character.
fn backslash_pattern(pattern: impl Iterator<Item = char>, escape: Option<char>) -> String {
    let mut out = String::new();
    let mut escaped = false;
    for c in pattern {
        if escaped {
            out.push('\\');
            out.push(c);
            escaped = false;
        } else if Some(c) == escape {
            escaped = true;
        } else if c == '\\' {
            out.push_str("\\\\");
        } else {
            out.push(c);
        }
    }
    if escaped {
        // LIKE then refuses a pattern that ends with its escape.
        out.push('\\');
    }
    out
}

/// `like_escape(pattern, escape)`: the pattern of `LIKE pattern ESCAPE
/// escape` with the backslash as its escape character.
fn like_escape(args: &[Value]) -> Result<Value, SqlError> {
    let (pattern, escape) = (text(&args[0]), text(&args[1]));
    let escape = escape_char(escape)?;
    if escape == Some('\\') {
        return Ok(Value::Text(pattern.to_owned()));
    }
    Ok(Value::Text(backslash_pattern(pattern.chars(), escape)))
}

/// Bytes as the characters U+0000..U+00FF, one per byte (LIKE over
/// bytea matches byte by byte).
pub(crate) fn latin1(b: &[u8]) -> String {
    b.iter().map(|&c| char::from(c)).collect()
}

fn from_latin1(s: &str) -> Vec<u8> {
    s.chars().map(|c| c as u32 as u8).collect()
}

/// `like_escape(bytea, bytea)`.
fn bytea_like_escape(args: &[Value]) -> Result<Value, SqlError> {
    let (pattern, escape) = (bytes(&args[0]), bytes(&args[1]));
    let escape = match escape {
        [] => None,
        [c] => Some(char::from(*c)),
        _ => return Err(invalid_escape_string()),
    };
    if escape == Some('\\') {
        return Ok(Value::Bytes(pattern.into()));
    }
    let out = backslash_pattern(pattern.iter().map(|&c| char::from(c)), escape);
    Ok(Value::Bytes(from_latin1(&out).into()))
}

fn too_many_separators() -> SqlError {
    SqlError::new(
        SqlState::INVALID_USE_OF_ESCAPE_CHARACTER,
        "SQL regular expression may not contain more than two escape-double-quote separators",
    )
}

/// A SQL regular expression (SIMILAR TO's) as PostgreSQL's ARE syntax,
/// in the parts its escape-double-quote separators divide it into.
fn similar_parts(pattern: &str, escape: Option<char>) -> Result<Vec<String>, SqlError> {
    let mut parts = vec![String::new()];
    let mut escaped = false;
    // In a bracket expression: how far into it (1 right after `[`, 2
    // after `[^`, 3 further on), for a `]` that is a member there.
    let mut class: Option<u8> = None;
    for c in pattern.chars() {
        let out = parts.last_mut().expect("one part at least");
        if escaped {
            escaped = false;
            if c == '"' && class.is_none() {
                if parts.len() == 3 {
                    return Err(too_many_separators());
                }
                parts.push(String::new());
            } else {
                out.push('\\');
                out.push(c);
            }
        } else if Some(c) == escape {
            escaped = true;
        } else if let Some(pos) = class {
            if c == '\\' {
                out.push('\\');
            }
            out.push(c);
            class = match c {
                ']' if pos > 2 => None,
                '^' if pos == 1 => Some(2),
                _ => Some(3),
            };
        } else {
            match c {
                '[' => {
                    out.push('[');
                    class = Some(1);
                }
                '%' => out.push_str(".*"),
                '_' => out.push('.'),
                '(' => out.push_str("(?:"),
                '\\' | '.' | '^' | '$' => {
                    out.push('\\');
                    out.push(c);
                }
                c => out.push(c),
            }
        }
    }
    Ok(parts)
}

/// The escape of similar_to_escape's second argument.
fn similar_escape(args: &[Value]) -> Result<Option<char>, SqlError> {
    match args.get(1) {
        None => Ok(Some('\\')),
        Some(v) => escape_char(text(v)),
    }
}

/// `similar_to_escape(pattern [, escape])`: the ARE that `SIMILAR TO`
/// matches with `~`.
fn similar_to_escape(args: &[Value]) -> Result<Value, SqlError> {
    let escape = similar_escape(args)?;
    let parts = similar_parts(text(&args[0]), escape)?;
    let re = match parts.as_slice() {
        [whole] => format!("^(?:{whole})$"),
        [a, b] => format!("^(?:{a}){{1,1}}?({b})$"),
        [a, b, c] => format!("^(?:{a}){{1,1}}?({b}){{1,1}}(?:{c})$"),
        _ => unreachable!("at most three parts"),
    };
    Ok(Value::Text(re))
}

/// `substring(s SIMILAR pattern ESCAPE escape)`: the text the middle part
/// matches when the whole pattern matches all of `s`, the first and last
/// parts matching as little as they can (PostgreSQL's rule), NULL if it
/// does not match; without separators, all of `s`.
fn substring_similar(args: &[Value]) -> Result<Value, SqlError> {
    let s = text(&args[0]);
    let escape = escape_char(text(&args[2]))?;
    let parts = similar_parts(text(&args[1]), escape).map_err(|e| {
        let mut e = e;
        e.context = Some("SQL function \"substring\" statement 1".into());
        e
    })?;
    let whole = |p: &str| compile(&format!("^(?:{p})$"), ReFlags::default());
    let (first, middle, last) = match parts.as_slice() {
        [whole_pattern] => {
            return Ok(if whole(whole_pattern)?.is_match(s) {
                Value::Text(s.to_owned())
            } else {
                Value::Null
            });
        }
        [a, b] => (whole(a)?, whole(b)?, None),
        [a, b, c] => (whole(a)?, whole(b)?, Some(whole(c)?)),
        _ => unreachable!("at most three parts"),
    };
    let bounds: Vec<usize> = s.char_indices().map(|(i, _)| i).chain(std::iter::once(s.len())).collect();
    for (n, &i) in bounds.iter().enumerate() {
        if !first.is_match(&s[..i]) {
            continue;
        }
        for &j in bounds[n..].iter().rev() {
            let rest_matches = match &last {
                Some(last) => last.is_match(&s[j..]),
                None => j == s.len(),
            };
            if rest_matches && middle.is_match(&s[i..j]) {
                return Ok(Value::Text(s[i..j].to_owned()));
            }
        }
    }
    Ok(Value::Null)
}

/// `regexp_matches(s, pattern [, flags])`'s rows, as one array of arrays
/// (a set-returning call unnests it): the groups of the first match, or
/// of every match with the `g` flag.
fn regexp_matches(args: &[Value]) -> Result<Value, SqlError> {
    let (flags, global) = re_options(args.get(2))?;
    let s = text(&args[0]);
    let re = compile(text(&args[1]), flags)?;
    let mut rows = Vec::new();
    scan(&re, s, 0, |locs| {
        let groups = reported_groups(&re, locs, true);
        let item =
            |g: Option<(usize, usize)>| g.map_or(Value::Null, |(a, b)| Value::Text(s[a..b].to_owned()));
        rows.push(Value::array(groups.into_iter().map(item).collect::<Vec<_>>()));
        Ok(global)
    })?;
    Ok(Value::array(rows))
}

/// `regexp_split_to_table(s, pattern [, flags])`'s rows, as an array.
fn regexp_split_to_table(args: &[Value]) -> Result<Value, SqlError> {
    re_options_not_global(args.get(2), "regexp_split_to_table")?;
    regexp_split_to_array(args)
}

/// `overlay(bytes PLACING r FROM start [FOR count])`.
fn bytea_overlay(args: &[Value]) -> Result<Value, SqlError> {
    let (s, r, start) = (bytes(&args[0]), bytes(&args[1]), int(&args[2]));
    let count = args.get(3).map_or(r.len() as i64, int);
    if start <= 0 {
        return Err(SqlError::new(SqlState::SUBSTRING_ERROR, "negative substring length not allowed"));
    }
    let resume = i32::try_from(start + count)
        .map_err(|_| SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range"))?;
    let head = &s[..((start - 1) as usize).min(s.len())];
    let tail = &s[(resume.max(1) as usize - 1).min(s.len())..];
    check_alloc(head.len() + r.len() + tail.len())?;
    Ok(Value::Bytes([head, r, tail].concat().into()))
}

/// `unistr(s)`: s with its Unicode escapes (`\XXXX`, `\+XXXXXX`,
/// `\uXXXX`, `\UXXXXXXXX`) and `\\` decoded.
fn unistr(args: &[Value]) -> Result<Value, SqlError> {
    let s = text(&args[0]);
    let b = s.as_bytes();
    let invalid = || {
        SqlError::new(SqlState::SYNTAX_ERROR, "invalid Unicode escape")
            .with_hint("Unicode escapes must be \\XXXX, \\+XXXXXX, \\uXXXX, or \\UXXXXXXXX.")
    };
    let surrogate = || SqlError::new(SqlState::SYNTAX_ERROR, "invalid Unicode surrogate pair");
    let hex = |at: usize, n: usize| {
        b.get(at..at + n)
            .filter(|d| d.iter().all(u8::is_ascii_hexdigit))
            .map(|d| u32::from_str_radix(std::str::from_utf8(d).expect("ascii"), 16).expect("hex"))
    };
    let mut out = String::with_capacity(s.len());
    let mut pending: Option<u32> = None;
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' {
            if pending.is_some() {
                return Err(surrogate());
            }
            let c = s[i..].chars().next().expect("in bounds");
            out.push(c);
            i += c.len_utf8();
            continue;
        }
        let (skip, digits) = match b.get(i + 1) {
            Some(b'\\') => {
                if pending.is_some() {
                    return Err(surrogate());
                }
                out.push('\\');
                i += 2;
                continue;
            }
            Some(b'+') => (2, 6),
            Some(b'u') => (2, 4),
            Some(b'U') => (2, 8),
            _ => (1, 4),
        };
        let code = hex(i + skip, digits).ok_or_else(invalid)?;
        i += skip + digits;
        let code = match pending.take() {
            Some(high) if (0xDC00..=0xDFFF).contains(&code) => {
                0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)
            }
            Some(_) => return Err(surrogate()),
            None if (0xD800..=0xDBFF).contains(&code) => {
                pending = Some(code);
                continue;
            }
            None if (0xDC00..=0xDFFF).contains(&code) => return Err(surrogate()),
            None => code,
        };
        match char::from_u32(code).filter(|_| code != 0) {
            Some(c) => out.push(c),
            None => {
                return Err(SqlError::new(
                    SqlState::INVALID_PARAMETER_VALUE,
                    format!("invalid Unicode code point: {code:04X}"),
                ))
            }
        }
    }
    if pending.is_some() {
        return Err(surrogate());
    }
    Ok(Value::Text(out))
}

/// The byte and bit of bit `n` of `data`, or 2202E.
fn bit_index(data: &[u8], n: i64) -> Result<(usize, u8), SqlError> {
    let bits = data.len() as i64 * 8;
    if n < 0 || n >= bits {
        return Err(SqlError::new(
            SqlState::ARRAY_SUBSCRIPT_ERROR,
            format!("index {n} out of valid range, 0..{}", bits - 1),
        ));
    }
    Ok(((n / 8) as usize, (n % 8) as u8))
}

/// `get_bit(bytes, n)`: bit n, counting from the lowest bit of the first
/// byte.
fn get_bit(args: &[Value]) -> Result<Value, SqlError> {
    let data = bytes(&args[0]);
    let (byte, bit) = bit_index(data, int(&args[1]))?;
    Ok(Value::Int(i64::from((data[byte] >> bit) & 1)))
}

/// `set_bit(bytes, n, value)`.
fn set_bit(args: &[Value]) -> Result<Value, SqlError> {
    let mut data = bytes(&args[0]).to_vec();
    let (byte, bit) = bit_index(&data, int(&args[1]))?;
    match int(&args[2]) {
        0 => data[byte] &= !(1 << bit),
        1 => data[byte] |= 1 << bit,
        _ => {
            return Err(SqlError::new(SqlState::INVALID_PARAMETER_VALUE, "new bit must be 0 or 1"));
        }
    }
    Ok(Value::Bytes(data.into()))
}

/// `bit_count(bytes)`: how many bits are set.
fn bit_count(args: &[Value]) -> Result<Value, SqlError> {
    Ok(Value::Int(bytes(&args[0]).iter().map(|b| i64::from(b.count_ones())).sum()))
}

pub const LIKE_ESCAPE: Scalar = Scalar::new("like_escape", like_escape);
pub const BYTEA_LIKE_ESCAPE: Scalar = Scalar::new("like_escape", bytea_like_escape);
pub const SIMILAR_TO_ESCAPE: Scalar = Scalar::new("similar_to_escape", similar_to_escape);
pub const SUBSTRING_SIMILAR: Scalar = Scalar::new("substring", substring_similar);
pub const REGEXP_MATCHES: Scalar = Scalar::new("regexp_matches", regexp_matches);
pub const REGEXP_SPLIT_TO_TABLE: Scalar = Scalar::new("regexp_split_to_table", regexp_split_to_table);
/// Not strict: a NULL delimiter splits into characters, as
/// string_to_array does.
pub const STRING_TO_TABLE: Scalar =
    Scalar { name: "string_to_table", call: string_to_array, styled: None, strict: false, volatile: false };
pub const BYTEA_OVERLAY: Scalar = Scalar::new("overlay", bytea_overlay);
pub const UNISTR: Scalar = Scalar::new("unistr", unistr);
pub const GET_BIT: Scalar = Scalar::new("get_bit", get_bit);
pub const SET_BIT: Scalar = Scalar::new("set_bit", set_bit);
pub const BIT_COUNT: Scalar = Scalar::new("bit_count", bit_count);

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Value {
        Value::Text(s.into())
    }

    #[test]
    fn like_escape_rewrites_to_backslashes() {
        assert_eq!(like_escape(&[t("a#%b\\"), t("#")]).unwrap(), t("a\\%b\\\\"));
        assert_eq!(like_escape(&[t("a\\b"), t("")]).unwrap(), t("a\\\\b"));
        assert!(like_escape(&[t("a"), t("##")]).is_err());
    }

    #[test]
    fn similar_to_escape_is_postgresqls() {
        assert_eq!(similar_to_escape(&[t("a%b_(c)")]).unwrap(), t("^(?:a.*b.(?:c))$"));
        assert_eq!(similar_to_escape(&[t("a#\"b#\"c"), t("#")]).unwrap(), t("^(?:a){1,1}?(b){1,1}(?:c)$"));
        assert_eq!(similar_to_escape(&[t("[]%][^]%]"), t("#")]).unwrap(), t("^(?:[]%][^]%])$"));
    }

    #[test]
    fn substring_similar_takes_the_middle() {
        let sub = |p: &str| substring_similar(&[t("abcdefg"), t(p), t("#")]).unwrap();
        assert_eq!(sub("a#\"(b_d)#\"%"), t("bcd"));
        assert_eq!(sub("a*#\"%#\"g*"), t("abcdefg"));
        assert_eq!(sub("a|b#\"%#\"g"), t("bcdef"));
        assert_eq!(sub("a#\"%g"), t("bcdefg"));
        assert_eq!(sub("a%g"), t("abcdefg"));
        assert_eq!(sub("x#\"%#\"g"), Value::Null);
    }
}
