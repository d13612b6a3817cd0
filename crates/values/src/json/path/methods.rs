//! Item methods that need more than a line: `.double()` with PostgreSQL's
//! float8 input rules, and the byte layout of PostgreSQL's binary jsonb,
//! which `.keyvalue()` ids are computed from (an object's id is its byte
//! offset inside the jsonb it came from).

use snapscale_sqlstate::SqlState;

use super::exec::{It, V};
use crate::json::Jsonb;
use crate::numeric::Numeric;
use crate::SqlError;

/// `.double()` on a non-array item.
pub(crate) fn double(jb: &It) -> Result<It, SqlError> {
    let bad = |msg: &str| SqlError::new(SqlState::NON_NUMERIC_SQL_JSON_ITEM, msg.to_string());
    match &jb.v {
        V::J(Jsonb::Number(n)) => match crate::float::parse(&n.to_string()) {
            Ok(f) if f.is_finite() => Ok(jb.clone()),
            _ => Err(bad(
                "numeric argument of jsonpath item method .double() is out of range for type double precision",
            )),
        },
        V::J(Jsonb::String(s)) => match crate::float::parse(s) {
            Ok(f) if f.is_finite() => Ok(It::free(Jsonb::Number(Numeric::from_f64(f)))),
            _ => Err(bad(
                "string argument of jsonpath item method .double() is not a valid representation of a double precision number",
            )),
        },
        _ => Err(bad("jsonpath item method .double() can only be applied to a string or numeric value")),
    }
}

fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// Bytes of a numeric in jsonb: a 4-byte varlena header, the 2- or
/// 4-byte numeric header, and 2 bytes per base-10000 digit.
fn numeric_len(n: &Numeric) -> usize {
    if !n.is_finite() {
        return 6;
    }
    let text = n.to_string();
    let text = text.trim_start_matches('-');
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let mut groups: Vec<u32> = Vec::new();
    let lead = int.len() % 4;
    let mut start = 0;
    if lead > 0 {
        groups.push(int[..lead].parse().unwrap_or(0));
        start = lead;
    }
    while start < int.len() {
        groups.push(int[start..start + 4].parse().unwrap_or(0));
        start += 4;
    }
    let mut weight = groups.len() as i64 - 1;
    let mut f = frac.to_string();
    while f.len() % 4 != 0 {
        f.push('0');
    }
    for i in (0..f.len()).step_by(4) {
        groups.push(f[i..i + 4].parse().unwrap_or(0));
    }
    let first = groups.iter().position(|&g| g != 0);
    let ndigits = match first {
        None => {
            weight = 0;
            0
        }
        Some(i) => {
            weight -= i as i64;
            let last = groups.iter().rposition(|&g| g != 0).unwrap_or(i);
            last - i + 1
        }
    };
    let dscale = frac.len() as i64;
    let short = dscale <= 63 && (-64..=63).contains(&weight);
    4 + if short { 2 } else { 4 } + 2 * ndigits
}

/// Offsets of a container's values (array elements, object values in key
/// order) from the container's start, and its total length.
fn layout(c: &Jsonb) -> (Vec<usize>, usize) {
    let (vals, mut pos): (Vec<&Jsonb>, usize) = match c {
        Jsonb::Array(a) => (a.iter().collect(), 4 + 4 * a.len()),
        Jsonb::Object(o) => {
            let keys: usize = o.iter().map(|(k, _)| k.len()).sum();
            (o.iter().map(|(_, v)| v).collect(), 4 + 8 * o.len() + keys)
        }
        _ => return (Vec::new(), 0),
    };
    let mut offs = Vec::with_capacity(vals.len());
    for v in vals {
        match v {
            Jsonb::Null | Jsonb::Bool(_) => offs.push(pos),
            Jsonb::String(s) => {
                offs.push(pos);
                pos += s.len();
            }
            Jsonb::Number(n) => {
                pos = align4(pos);
                offs.push(pos);
                pos += numeric_len(n);
            }
            Jsonb::Array(_) | Jsonb::Object(_) => {
                pos = align4(pos);
                offs.push(pos);
                pos += layout(v).1;
            }
        }
    }
    (offs, pos)
}

/// Byte offsets of a container's values from its start, as PostgreSQL
/// lays the container out.
pub(crate) fn child_offsets(c: &Jsonb) -> Vec<usize> {
    layout(c).0
}
