//! How a `Numeric` is held: small values inline, big ones boxed.
//!
//! Most numerics in real tables (money, quantities, ids) have a coefficient
//! that fits an i64, so those live inline with their display scale and cost
//! no allocation; anything longer keeps its base-10000 digits on the heap.
//! Every constructor goes through [`Numeric::from_var`], which enforces
//! PostgreSQL's storage limits and picks the canonical form.

use std::borrow::Cow;
use std::fmt;

use snapscale_sqlstate::SqlState;

use super::var::{Var, DEC_DIGITS};
use crate::SqlError;

/// Largest base-10000 weight PostgreSQL can store (int16).
pub(crate) const WEIGHT_MAX: i32 = i16::MAX as i32;
/// Largest display scale PostgreSQL can store (14 bits).
pub(crate) const DSCALE_MAX: i32 = 0x3FFF;

/// PostgreSQL's `numeric`: an exact decimal with a display scale, or NaN,
/// +Infinity or -Infinity.
///
/// Equality and ordering are by value (1.0 = 1.00), with NaN equal to
/// itself and above everything, as PostgreSQL sorts them.
#[derive(Clone)]
pub struct Numeric(pub(crate) Repr);

/// The representation; `Small` whenever the coefficient fits an i64.
#[derive(Clone)]
pub(crate) enum Repr {
    /// `coef * 10^-dscale`.
    Small {
        coef: i64,
        dscale: u16,
    },
    /// A finite value whose coefficient does not fit an i64 (stripped).
    Big(Box<Var>),
    NaN,
    PosInf,
    NegInf,
}

/// 22003 for values outside the storage format.
pub(crate) fn overflow() -> SqlError {
    SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "value overflows numeric format")
}

impl Numeric {
    /// NaN.
    pub const NAN: Numeric = Numeric(Repr::NaN);
    /// +Infinity.
    pub const INFINITY: Numeric = Numeric(Repr::PosInf);
    /// -Infinity.
    pub const NEG_INFINITY: Numeric = Numeric(Repr::NegInf);
    /// Zero with display scale 0.
    pub const ZERO: Numeric = Numeric(Repr::Small { coef: 0, dscale: 0 });

    /// `coef * 10^-dscale`, e.g. `from_scaled(150, 2)` is 1.50; `None` if
    /// `dscale` exceeds PostgreSQL's 16383.
    pub fn from_scaled(coef: i64, dscale: u16) -> Option<Numeric> {
        (i32::from(dscale) <= DSCALE_MAX).then_some(Numeric(Repr::Small { coef, dscale }))
    }

    /// Builds the canonical form of a finite working value, failing with
    /// PostgreSQL's 22003 when it exceeds the storage limits.
    pub(crate) fn from_var(mut var: Var) -> Result<Numeric, SqlError> {
        var.strip();
        if var.dscale > DSCALE_MAX || var.dscale < 0 || (!var.digits.is_empty() && var.weight > WEIGHT_MAX) {
            return Err(overflow());
        }
        if let Some(coef) = var.to_scaled_i64() {
            return Ok(Numeric(Repr::Small { coef, dscale: var.dscale as u16 }));
        }
        Ok(Numeric(Repr::Big(Box::new(var))))
    }

    /// The working form of a finite value (`None` for NaN and infinities).
    pub(crate) fn var(&self) -> Option<Cow<'_, Var>> {
        match &self.0 {
            Repr::Small { coef, dscale } => {
                Some(Cow::Owned(Var::from_scaled(i128::from(*coef), i32::from(*dscale))))
            }
            Repr::Big(v) => Some(Cow::Borrowed(v)),
            _ => None,
        }
    }

    /// Whether this is NaN.
    pub fn is_nan(&self) -> bool {
        matches!(self.0, Repr::NaN)
    }

    /// Whether this is +Infinity or -Infinity.
    pub fn is_infinite(&self) -> bool {
        matches!(self.0, Repr::PosInf | Repr::NegInf)
    }

    /// Whether this is neither NaN nor infinite.
    pub fn is_finite(&self) -> bool {
        matches!(self.0, Repr::Small { .. } | Repr::Big(_))
    }

    /// Whether the value is held inline (no heap allocation).
    pub fn is_inline(&self) -> bool {
        !matches!(self.0, Repr::Big(_))
    }

    /// -1, 0 or 1 for finite values and infinities; `None` for NaN.
    pub(crate) fn signum_opt(&self) -> Option<i32> {
        match &self.0 {
            Repr::Small { coef, .. } => Some(coef.signum() as i32),
            Repr::Big(v) => Some(v.sign()),
            Repr::NaN => None,
            Repr::PosInf => Some(1),
            Repr::NegInf => Some(-1),
        }
    }

    /// The display scale (`scale()` in SQL); `None` for NaN and infinities,
    /// where PostgreSQL returns NULL.
    pub fn scale(&self) -> Option<i32> {
        match &self.0 {
            Repr::Small { dscale, .. } => Some(i32::from(*dscale)),
            Repr::Big(v) => Some(v.dscale),
            _ => None,
        }
    }

    /// The working form, for finite values only.
    pub(crate) fn finite_var(&self) -> Var {
        self.var().expect("finite numeric").into_owned()
    }
}

impl From<i64> for Numeric {
    /// Exact, display scale 0, never allocates.
    fn from(v: i64) -> Numeric {
        Numeric(Repr::Small { coef: v, dscale: 0 })
    }
}

impl From<i32> for Numeric {
    /// Exact, display scale 0.
    fn from(v: i32) -> Numeric {
        Numeric::from(i64::from(v))
    }
}

impl From<i16> for Numeric {
    /// Exact, display scale 0.
    fn from(v: i16) -> Numeric {
        Numeric::from(i64::from(v))
    }
}

impl fmt::Display for Numeric {
    /// numeric_out: all `dscale` fractional digits, no exponent.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::NaN => f.write_str("NaN"),
            Repr::PosInf => f.write_str("Infinity"),
            Repr::NegInf => f.write_str("-Infinity"),
            Repr::Small { coef, dscale } => fmt_small(f, *coef, usize::from(*dscale)),
            Repr::Big(v) => f.write_str(&v.to_plain_string()),
        }
    }
}

/// Writes `coef * 10^-dscale` without allocating for the common case.
fn fmt_small(f: &mut fmt::Formatter<'_>, coef: i64, dscale: usize) -> fmt::Result {
    let mut buf = [0u8; 24];
    let mut n = coef.unsigned_abs();
    let mut len = 0;
    loop {
        buf[len] = b'0' + (n % 10) as u8;
        n /= 10;
        len += 1;
        if n == 0 {
            break;
        }
    }
    buf[..len].reverse();
    let digits = std::str::from_utf8(&buf[..len]).unwrap_or("0");
    if coef < 0 {
        f.write_str("-")?;
    }
    if dscale == 0 {
        return f.write_str(digits);
    }
    if len > dscale {
        f.write_str(&digits[..len - dscale])?;
        f.write_str(".")?;
        f.write_str(&digits[len - dscale..])
    } else {
        f.write_str("0.")?;
        for _ in 0..dscale - len {
            f.write_str("0")?;
        }
        f.write_str(digits)
    }
}

impl fmt::Debug for Numeric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Numeric({self})")
    }
}

/// Base-10000 weight of a value whose leading decimal digit is at 10^k.
pub(crate) fn weight_of_decimal_exponent(k: i64) -> i64 {
    k.div_euclid(i64::from(DEC_DIGITS))
}
