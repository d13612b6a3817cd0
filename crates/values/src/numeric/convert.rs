//! Casts between numeric and the integer and floating-point types.
//!
//! Integer casts round half away from zero and report PostgreSQL's
//! per-type range errors; float casts go through decimal text exactly as
//! PostgreSQL does (15 / 6 significant digits one way, correctly rounded
//! parsing of numeric_out's text the other), so they agree bit for bit.

use snapscale_sqlstate::SqlState;

use super::parse::decimal_digits_to_var;
use super::repr::{Numeric, Repr};
use crate::SqlError;

impl Numeric {
    /// Rounds to an integer and checks it against `[min, max]`.
    fn to_int(&self, type_name: &str, min: i64, max: i64) -> Result<i64, SqlError> {
        let range =
            || SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, format!("{type_name} out of range"));
        let v = match &self.0 {
            Repr::NaN => {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    format!("cannot convert NaN to {type_name}"),
                ))
            }
            Repr::PosInf | Repr::NegInf => {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    format!("cannot convert infinity to {type_name}"),
                ))
            }
            Repr::Small { coef, dscale: 0 } => *coef,
            Repr::Small { coef, dscale } if *dscale <= 18 => {
                let p = 10i64.pow(u32::from(*dscale));
                let (q, r) = (coef / p, coef % p);
                // Half away from zero: compare twice the remainder with p.
                if r.unsigned_abs() * 2 >= p.unsigned_abs() {
                    q + coef.signum()
                } else {
                    q
                }
            }
            _ => self.finite_var().to_i64_rounded().ok_or_else(range)?,
        };
        if v < min || v > max {
            return Err(range());
        }
        Ok(v)
    }

    /// numeric → bigint: rounds half away from zero; 22003 `bigint out of
    /// range`, 0A000 `cannot convert NaN to bigint` / `... infinity ...`.
    pub fn to_i64(&self) -> Result<i64, SqlError> {
        self.to_int("bigint", i64::MIN, i64::MAX)
    }

    /// numeric → integer, as [`Numeric::to_i64`] with `integer` errors.
    pub fn to_i32(&self) -> Result<i32, SqlError> {
        self.to_int("integer", i64::from(i32::MIN), i64::from(i32::MAX)).map(|v| v as i32)
    }

    /// numeric → smallint, as [`Numeric::to_i64`] with `smallint` errors.
    pub fn to_i16(&self) -> Result<i16, SqlError> {
        self.to_int("smallint", i64::from(i16::MIN), i64::from(i16::MAX)).map(|v| v as i16)
    }

    /// float8 → numeric: the value printed with 15 significant digits
    /// (`%.15g`), so 0.1 becomes exactly 0.1; NaN and infinities map.
    pub fn from_f64(v: f64) -> Numeric {
        from_float(v, 15)
    }

    /// float4 → numeric: as [`Numeric::from_f64`] with 6 digits.
    pub fn from_f32(v: f32) -> Numeric {
        from_float(f64::from(v), 6)
    }

    /// numeric → float8: the nearest double to the decimal value; 22003
    /// `"<value>" is out of range for type double precision` when it
    /// overflows or underflows to zero.
    pub fn to_f64(&self) -> Result<f64, SqlError> {
        match &self.0 {
            Repr::NaN => Ok(f64::NAN),
            Repr::PosInf => Ok(f64::INFINITY),
            Repr::NegInf => Ok(f64::NEG_INFINITY),
            Repr::Small { coef, dscale: 0 } if coef.unsigned_abs() < (1u64 << 53) => Ok(*coef as f64),
            _ => {
                let s = self.to_string();
                let v: f64 = s.parse().unwrap_or(f64::NAN);
                if v.is_infinite() || (v == 0.0 && self.signum_opt() != Some(0)) {
                    return Err(float_range("double precision", &s));
                }
                Ok(v)
            }
        }
    }

    /// numeric → real, as [`Numeric::to_f64`] with `real` errors.
    pub fn to_f32(&self) -> Result<f32, SqlError> {
        match &self.0 {
            Repr::NaN => Ok(f32::NAN),
            Repr::PosInf => Ok(f32::INFINITY),
            Repr::NegInf => Ok(f32::NEG_INFINITY),
            _ => {
                let s = self.to_string();
                let v: f32 = s.parse().unwrap_or(f32::NAN);
                if v.is_infinite() || (v == 0.0 && self.signum_opt() != Some(0)) {
                    return Err(float_range("real", &s));
                }
                Ok(v)
            }
        }
    }
}

/// float8in / float4in's range error for numeric_out's text.
fn float_range(type_name: &str, text: &str) -> SqlError {
    SqlError::new(
        SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
        format!("\"{text}\" is out of range for type {type_name}"),
    )
}

/// `%.{sig}g` of `v`, read back as a numeric.
fn from_float(v: f64, sig: usize) -> Numeric {
    if v.is_nan() {
        return Numeric::NAN;
    }
    if v.is_infinite() {
        return if v > 0.0 { Numeric::INFINITY } else { Numeric::NEG_INFINITY };
    }
    if v == 0.0 {
        return Numeric::ZERO;
    }
    let s = format!("{:.*e}", sig - 1, v.abs());
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let mut digits: Vec<u8> = mant.bytes().filter(u8::is_ascii_digit).map(|b| b - b'0').collect();
    while digits.len() > 1 && digits.last() == Some(&0) {
        digits.pop();
    }
    let low = exp - (digits.len() as i64 - 1);
    let dscale = (-low).max(0) as i32;
    let var = decimal_digits_to_var(v < 0.0, &digits, low, dscale);
    Numeric::from_var(var).unwrap_or(Numeric::NAN)
}
