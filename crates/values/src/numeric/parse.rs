//! numeric_in: the text form PostgreSQL 15 accepts.
//!
//! Leading and trailing whitespace, one sign, digits with at most one
//! point, an optional exponent (which, like C's strtol, may itself be
//! preceded by whitespace and a sign), or NaN / Infinity / inf spelled in
//! any case. No underscores, no hex: those arrived in PostgreSQL 16.

use super::repr::{overflow, weight_of_decimal_exponent, Numeric, Repr, DSCALE_MAX, WEIGHT_MAX};
use super::var::{Var, DEC_DIGITS};
use crate::SqlError;

/// C's isspace in the C locale.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Special spellings, longest first where one is a prefix of another.
const SPECIALS: [(&str, Repr); 7] = [
    ("NaN", Repr::NaN),
    ("Infinity", Repr::PosInf),
    ("+Infinity", Repr::PosInf),
    ("-Infinity", Repr::NegInf),
    ("inf", Repr::PosInf),
    ("+inf", Repr::PosInf),
    ("-inf", Repr::NegInf),
];

impl Numeric {
    /// Parses numeric's text form (numeric_in without a typmod).
    ///
    /// Errors: 22P02 `invalid input syntax for type numeric: "<input>"`,
    /// 22003 `value overflows numeric format` when the value needs more than
    /// 131072 digits before the point or 16383 after it.
    pub fn parse(input: &str) -> Result<Numeric, SqlError> {
        let syntax = || SqlError::invalid_input("numeric", input);
        let b = input.as_bytes();
        let mut i = 0;
        while i < b.len() && is_space(b[i]) {
            i += 1;
        }
        for (word, repr) in SPECIALS {
            let w = word.as_bytes();
            if b.len() - i >= w.len() && b[i..i + w.len()].eq_ignore_ascii_case(w) {
                if b[i + w.len()..].iter().all(|&c| is_space(c)) {
                    return Ok(Numeric(repr));
                }
                return Err(syntax());
            }
        }
        let mut neg = false;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            neg = b[i] == b'-';
            i += 1;
        }
        // Significant digits (leading zeros dropped), count after the point.
        let mut digits: Vec<u8> = Vec::new();
        let mut frac: i64 = 0;
        let mut have_dp = false;
        if i < b.len() && b[i] == b'.' {
            have_dp = true;
            i += 1;
        }
        if i >= b.len() || !b[i].is_ascii_digit() {
            return Err(syntax());
        }
        while i < b.len() {
            let c = b[i];
            if c.is_ascii_digit() {
                if !(digits.is_empty() && c == b'0') {
                    digits.push(c - b'0');
                }
                if have_dp {
                    frac += 1;
                }
                i += 1;
            } else if c == b'.' {
                if have_dp {
                    return Err(syntax());
                }
                have_dp = true;
                i += 1;
            } else {
                break;
            }
        }
        let mut exponent: i64 = 0;
        if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
            i += 1;
            // strtol: whitespace, sign, at least one digit.
            let mut j = i;
            while j < b.len() && is_space(b[j]) {
                j += 1;
            }
            let mut eneg = false;
            if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                eneg = b[j] == b'-';
                j += 1;
            }
            let start = j;
            let mut e: i64 = 0;
            while j < b.len() && b[j].is_ascii_digit() {
                e = e.saturating_mul(10).saturating_add(i64::from(b[j] - b'0'));
                j += 1;
            }
            if j == start {
                return Err(syntax());
            }
            i = j;
            exponent = if eneg { -e } else { e };
            let limit = i64::from(i32::MAX / 2);
            if exponent >= limit || exponent <= -limit {
                // PostgreSQL reports this before looking at trailing junk.
                return Err(overflow());
            }
        }
        if b[i..].iter().any(|&c| !is_space(c)) {
            return Err(syntax());
        }
        let dscale = (frac - exponent).max(0);
        if dscale > i64::from(DSCALE_MAX) {
            return Err(overflow());
        }
        // Exponent of the last significant digit.
        let low = exponent - frac;
        if digits.is_empty() {
            return Ok(Numeric(Repr::Small { coef: 0, dscale: dscale as u16 }));
        }
        let top = low + digits.len() as i64 - 1;
        if weight_of_decimal_exponent(top) > i64::from(WEIGHT_MAX) {
            return Err(overflow());
        }
        // Fast path: the coefficient at dscale fits an i64.
        if digits.len() <= 18 && low + dscale <= 18 - digits.len() as i64 {
            let mut coef: i64 = 0;
            for &d in &digits {
                coef = coef * 10 + i64::from(d);
            }
            for _ in 0..(low + dscale) {
                coef *= 10;
            }
            if neg {
                coef = -coef;
            }
            return Ok(Numeric(Repr::Small { coef, dscale: dscale as u16 }));
        }
        Numeric::from_var(decimal_digits_to_var(neg, &digits, low, dscale as i32))
    }
}

/// Builds a var from decimal digits whose last one sits at 10^`low`.
pub(crate) fn decimal_digits_to_var(neg: bool, digits: &[u8], low: i64, dscale: i32) -> Var {
    let dec = i64::from(DEC_DIGITS);
    let pad_right = low.rem_euclid(dec) as usize;
    let low = low - pad_right as i64;
    let total = digits.len() + pad_right;
    let pad_left = (DEC_DIGITS as usize - total % DEC_DIGITS as usize) % DEC_DIGITS as usize;
    let mut all = vec![0u8; pad_left];
    all.extend_from_slice(digits);
    all.extend(std::iter::repeat_n(0u8, pad_right));
    let base_digits: Vec<u16> = all
        .chunks(DEC_DIGITS as usize)
        .map(|c| c.iter().fold(0u16, |acc, &d| acc * 10 + u16::from(d)))
        .collect();
    let low_pos = (low / dec) as i32;
    let weight = low_pos + base_digits.len() as i32 - 1;
    let mut v = Var { neg, weight, dscale, digits: base_digits };
    v.strip();
    v
}
