//! double precision text I/O as PostgreSQL 15 does it (shortest exact
//! output, extra_float_digits = 1) and its comparison rules.

use std::cmp::Ordering;

use snapscale_sqlstate::SqlState;

use crate::error::SqlError;

/// Parses float8 input: decimal or exponent notation, NaN, [+-]Infinity
/// (case-insensitive), surrounding whitespace. Overflow is 22003.
pub(crate) fn parse(input: &str) -> Result<f64, SqlError> {
    let t = input.trim();
    let lower = t.to_ascii_lowercase();
    match lower.as_str() {
        "nan" => return Ok(f64::NAN),
        "infinity" | "+infinity" | "inf" | "+inf" => return Ok(f64::INFINITY),
        "-infinity" | "-inf" => return Ok(f64::NEG_INFINITY),
        _ => {}
    }
    // Rust's parser also accepts "inf" spellings and underscores-free
    // decimals; reject anything PostgreSQL would not read as a number.
    let plausible = !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit() || b"+-.eE".contains(&b));
    let v: f64 = if plausible { t.parse().ok() } else { None }
        .ok_or_else(|| SqlError::invalid_input("double precision", input))?;
    // Digits that round to zero underflow (a subnormal result is kept),
    // as PostgreSQL's strtod check has it.
    let underflow =
        v == 0.0 && t.split(['e', 'E']).next().is_some_and(|m| m.bytes().any(|b| (b'1'..=b'9').contains(&b)));
    if v.is_infinite() || underflow {
        return Err(SqlError::new(
            SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
            format!("\"{t}\" is out of range for type double precision"),
        ));
    }
    Ok(v)
}

/// Parses float4 input (real) as PostgreSQL's float4in: the text as
/// float8 reads it, then out of range (22003) if it overflows real or
/// underflows to zero from non-zero digits.
pub(crate) fn parse_f32(input: &str) -> Result<f32, SqlError> {
    let v = parse(input).map_err(|e| {
        if e.code == SqlState::INVALID_TEXT_REPRESENTATION {
            SqlError::invalid_input("real", input)
        } else {
            real_out_of_range(input)
        }
    })?;
    // Rounded once, from the digits (as strtof does): through double
    // precision it could round twice.
    let r = if v.is_finite() { input.trim().parse::<f32>().unwrap_or(v as f32) } else { v as f32 };
    let underflow = r == 0.0 && v != 0.0;
    if (r.is_infinite() && v.is_finite()) || underflow {
        return Err(real_out_of_range(input));
    }
    Ok(r)
}

fn real_out_of_range(input: &str) -> SqlError {
    SqlError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("\"{}\" is out of range for type real", input.trim()),
    )
}

/// Formats a real like PostgreSQL 15: its shortest exact digits, fixed
/// between exponents -4 and 6, else d.ddde±XX.
pub(crate) fn format_f32(v: f32) -> String {
    if v.is_nan() || v.is_infinite() || v == 0.0 {
        return format(f64::from(v));
    }
    shortest(&format!("{v:e}"), 6)
}

/// Formats like PostgreSQL 15: the shortest digits that read back exactly,
/// in fixed notation when the decimal exponent is in [-4, 15), else as
/// d.ddde±XX.
pub(crate) fn format(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // Rust's `{:e}` gives the shortest round-trip digits: "d.ddde±x".
    shortest(&format!("{v:e}"), 15)
}

/// Rust's shortest scientific form (`{:e}`) as PostgreSQL writes it:
/// fixed notation for decimal exponents in [-4, `fixed_below`).
fn shortest(sci: &str, fixed_below: i32) -> String {
    let (mantissa, exp) = sci.split_once('e').expect("`{:e}` has an exponent");
    let exp: i32 = exp.parse().expect("an integer exponent");
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if negative { "-" } else { "" };
    if !(-4..fixed_below).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() { String::new() } else { format!(".{rest}") };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{frac}e{esign}{:02}", exp.abs());
    }
    let point = exp + 1; // digits before the decimal point
    if point <= 0 {
        format!("{sign}0.{}{digits}", "0".repeat((-point) as usize))
    } else if point as usize >= digits.len() {
        format!("{sign}{digits}{}", "0".repeat(point as usize - digits.len()))
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{sign}{int}.{frac}")
    }
}

/// PostgreSQL's float order: NaN equals NaN and sorts above every number;
/// -0 equals 0.
pub(crate) fn pg_cmp(a: f64, b: f64) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => a.partial_cmp(&b).expect("no NaN here"),
    }
}
