//! `numeric(p, s)`: declaring, encoding and enforcing a type modifier.
//!
//! PostgreSQL stores the modifier as one integer (atttypmod) that the
//! catalog and the protocol's RowDescription carry, so we encode it the
//! same way; enforcing it rounds to the scale and then rejects values with
//! too many digits before the point.

use snapscale_sqlstate::SqlState;

use super::repr::{Numeric, Repr};
use super::var::DEC_DIGITS;
use crate::SqlError;

/// Largest declared precision.
pub const NUMERIC_MAX_PRECISION: i32 = 1000;
/// Smallest declared scale (PostgreSQL 15 allows negative scales).
pub const NUMERIC_MIN_SCALE: i32 = -1000;
/// Largest declared scale (may exceed the precision since PostgreSQL 15).
pub const NUMERIC_MAX_SCALE: i32 = 1000;

/// Checks a declared `numeric(precision[, scale])` (numerictypmodin) and
/// returns its atttypmod; `scale` is `None` for `numeric(p)` (scale 0).
pub fn numeric_typmod_in(precision: i32, scale: Option<i32>) -> Result<i32, SqlError> {
    if !(1..=NUMERIC_MAX_PRECISION).contains(&precision) {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("NUMERIC precision {precision} must be between 1 and {NUMERIC_MAX_PRECISION}"),
        ));
    }
    let scale = scale.unwrap_or(0);
    if !(NUMERIC_MIN_SCALE..=NUMERIC_MAX_SCALE).contains(&scale) {
        return Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            format!("NUMERIC scale {scale} must be between {NUMERIC_MIN_SCALE} and {NUMERIC_MAX_SCALE}"),
        ));
    }
    Ok(make_numeric_typmod(precision, scale))
}

/// Encodes (precision, scale) as atttypmod: `((p << 16) | (s & 0x7ff)) + 4`.
pub fn make_numeric_typmod(precision: i32, scale: i32) -> i32 {
    ((precision << 16) | (scale & 0x7ff)) + 4
}

/// Decodes atttypmod into (precision, scale); `None` for -1 (no modifier)
/// or any other value below 4.
pub fn numeric_typmod_decode(typmod: i32) -> Option<(i32, i32)> {
    if typmod < 4 {
        return None;
    }
    let t = typmod - 4;
    Some(((t >> 16) & 0xffff, ((t & 0x7ff) ^ 1024) - 1024))
}

/// numerictypmodout: `(p,s)`, or empty without a modifier.
pub fn numeric_typmod_out(typmod: i32) -> String {
    match numeric_typmod_decode(typmod) {
        Some((p, s)) => format!("({p},{s})"),
        None => String::new(),
    }
}

impl Numeric {
    /// Coerces to `numeric(precision, scale)`: rounds half away from zero
    /// to `scale` places, then fails with 22003 `numeric field overflow`
    /// (DETAIL `A field with precision P, scale S must round to an absolute
    /// value less than 10^N.`) if too many digits remain before the point.
    /// NaN passes; infinities fail (`... cannot hold an infinite value.`).
    pub fn apply_typmod(&self, precision: u32, scale: i32) -> Result<Numeric, SqlError> {
        let precision = precision as i32;
        let field_overflow = |detail: String| {
            SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "numeric field overflow").with_detail(detail)
        };
        match &self.0 {
            Repr::NaN => return Ok(Numeric::NAN),
            Repr::PosInf | Repr::NegInf => {
                return Err(field_overflow(format!(
                    "A field with precision {precision}, scale {scale} cannot hold an infinite value."
                )))
            }
            _ => {}
        }
        let maxdigits = precision - scale;
        let rounded = self.round_for_typmod(scale)?;
        if let Some(ddigits) = rounded.integer_digits() {
            if ddigits > maxdigits {
                let bound = if maxdigits != 0 { format!("10^{maxdigits}") } else { "1".to_owned() };
                return Err(field_overflow(format!(
                    "A field with precision {precision}, scale {scale} must round to an absolute value less than {bound}."
                )));
            }
        }
        Ok(rounded)
    }

    /// Applies an atttypmod (as stored in the catalog); -1 means none.
    pub fn apply_typmod_raw(&self, typmod: i32) -> Result<Numeric, SqlError> {
        match numeric_typmod_decode(typmod) {
            Some((p, s)) => self.apply_typmod(p as u32, s),
            None => Ok(self.clone()),
        }
    }

    /// Rounds at `scale` with a display scale of at least 0.
    fn round_for_typmod(&self, scale: i32) -> Result<Numeric, SqlError> {
        if let Repr::Small { dscale, .. } = &self.0 {
            if i32::from(*dscale) == scale {
                return Ok(self.clone());
            }
        }
        let mut v = self.finite_var();
        v.round(scale);
        if v.dscale < 0 {
            v.dscale = 0;
        }
        Numeric::from_var(v)
    }

    /// Decimal digits before the point of a non-zero finite value
    /// (floor(log10|x|) + 1, so 0.012 gives -1); `None` for zero.
    fn integer_digits(&self) -> Option<i32> {
        match &self.0 {
            Repr::Small { coef, dscale } => {
                if *coef == 0 {
                    return None;
                }
                let n = coef.unsigned_abs().ilog10() as i32 + 1;
                Some(n - i32::from(*dscale))
            }
            Repr::Big(v) => {
                let first = *v.digits.first()?;
                Some(v.weight * DEC_DIGITS + first.ilog10() as i32 + 1)
            }
            _ => None,
        }
    }
}
