//! Arithmetic operators and the simple numeric functions, with
//! PostgreSQL's result display scales and its NaN / infinity rules.
//!
//! Inline values take i128 fast paths for `+`, `-` and `*` so that the
//! common case neither allocates nor walks digit arrays; everything else
//! goes through the base-10000 working form exactly as numeric.c does.

use snapscale_sqlstate::SqlState;

use super::repr::{Numeric, Repr, DSCALE_MAX, WEIGHT_MAX};
use super::var::{Var, DEC_DIGITS};
use crate::SqlError;

/// Smallest significant digits a quotient gets (NUMERIC_MIN_SIG_DIGITS).
pub(crate) const MIN_SIG_DIGITS: i32 = 16;
/// Largest scale a computed result picks for itself.
pub(crate) const MAX_DISPLAY_SCALE: i32 = 1000;

/// PostgreSQL's select_div_scale: enough scale for 16 significant digits,
/// at least either input's scale, at most 1000.
pub(crate) fn select_div_scale(a: &Var, b: &Var) -> i32 {
    let first = |v: &Var| -> (i32, u16) {
        for (i, &d) in v.digits.iter().enumerate() {
            if d != 0 {
                return (v.weight - i as i32, d);
            }
        }
        (0, 0)
    };
    let (w1, d1) = first(a);
    let (w2, d2) = first(b);
    let mut qweight = w1 - w2;
    if d1 <= d2 {
        qweight -= 1;
    }
    let rscale = MIN_SIG_DIGITS - qweight * DEC_DIGITS;
    rscale.max(a.dscale).max(b.dscale).clamp(0, MAX_DISPLAY_SCALE)
}

/// Aligns two inline values to a common scale, if that fits an i128.
fn align(a: i64, da: u16, b: i64, db: u16) -> Option<(i128, i128, u16)> {
    let d = da.max(db);
    let pa = 10i128.checked_pow(u32::from(d - da))?;
    let pb = 10i128.checked_pow(u32::from(d - db))?;
    Some((i128::from(a).checked_mul(pa)?, i128::from(b).checked_mul(pb)?, d))
}

/// A scaled i128 result, inline when it fits.
fn from_i128_scaled(v: i128, dscale: u16) -> Result<Numeric, SqlError> {
    match i64::try_from(v) {
        Ok(coef) => Ok(Numeric(Repr::Small { coef, dscale })),
        Err(_) => Numeric::from_var(Var::from_scaled(v, i32::from(dscale))),
    }
}

impl Numeric {
    /// `self + other`; display scale is the larger input scale.
    /// Infinity + -Infinity is NaN.
    pub fn add(&self, other: &Numeric) -> Result<Numeric, SqlError> {
        match (&self.0, &other.0) {
            (Repr::Small { coef: a, dscale: da }, Repr::Small { coef: b, dscale: db }) => {
                if let Some((x, y, d)) = align(*a, *da, *b, *db) {
                    return from_i128_scaled(x + y, d);
                }
            }
            (Repr::NaN, _) | (_, Repr::NaN) => return Ok(Numeric::NAN),
            (Repr::PosInf, Repr::NegInf) | (Repr::NegInf, Repr::PosInf) => return Ok(Numeric::NAN),
            (Repr::PosInf, _) | (_, Repr::PosInf) => return Ok(Numeric::INFINITY),
            (Repr::NegInf, _) | (_, Repr::NegInf) => return Ok(Numeric::NEG_INFINITY),
            _ => {}
        }
        Numeric::from_var(Var::add(&self.finite_var(), &other.finite_var()))
    }

    /// `self - other`; display scale is the larger input scale.
    /// Infinity - Infinity is NaN.
    pub fn sub(&self, other: &Numeric) -> Result<Numeric, SqlError> {
        self.add(&other.neg())
    }

    /// `self * other`; display scale is the sum of the input scales (capped
    /// at 16383 by rounding). Zero times an infinity is NaN.
    pub fn mul(&self, other: &Numeric) -> Result<Numeric, SqlError> {
        if !self.is_finite() || !other.is_finite() {
            return Ok(special_mul(self, other));
        }
        if let (Repr::Small { coef: a, dscale: da }, Repr::Small { coef: b, dscale: db }) =
            (&self.0, &other.0)
        {
            let d = i32::from(*da) + i32::from(*db);
            if d <= DSCALE_MAX {
                return from_i128_scaled(i128::from(*a) * i128::from(*b), d as u16);
            }
        }
        let (a, b) = (self.finite_var(), other.finite_var());
        let mut r = Var::mul(&a, &b, a.dscale + b.dscale);
        if r.dscale > DSCALE_MAX {
            r.round(DSCALE_MAX);
        }
        Numeric::from_var(r)
    }

    /// `self / other` rounded at PostgreSQL's select_div_scale. Errors
    /// with 22012 `division by zero`; finite / infinity is 0.
    pub fn div(&self, other: &Numeric) -> Result<Numeric, SqlError> {
        if let Some(r) = special_div(self, other)? {
            return Ok(r);
        }
        let (a, b) = (self.finite_var(), other.finite_var());
        let rscale = select_div_scale(&a, &b);
        Numeric::from_var(Var::div(&a, &b, rscale, true)?)
    }

    /// `div(self, other)`: the quotient truncated toward zero, scale 0.
    pub fn div_trunc(&self, other: &Numeric) -> Result<Numeric, SqlError> {
        if let Some(r) = special_div(self, other)? {
            return Ok(r);
        }
        Numeric::from_var(Var::div(&self.finite_var(), &other.finite_var(), 0, false)?)
    }

    /// `self % other` (`mod()`): sign of the dividend, display scale the
    /// larger input scale. Infinity % x is NaN; x % Infinity is x.
    pub fn rem(&self, other: &Numeric) -> Result<Numeric, SqlError> {
        if self.is_nan() || other.is_nan() {
            return Ok(Numeric::NAN);
        }
        if self.is_infinite() {
            if other.signum_opt() == Some(0) {
                return Err(SqlError::division_by_zero());
            }
            return Ok(Numeric::NAN);
        }
        if other.is_infinite() {
            return Ok(self.clone());
        }
        if let (Repr::Small { coef: a, dscale: da }, Repr::Small { coef: b, dscale: db }) =
            (&self.0, &other.0)
        {
            if let Some((x, y, d)) = align(*a, *da, *b, *db) {
                if y == 0 {
                    return Err(SqlError::division_by_zero());
                }
                return from_i128_scaled(x % y, d);
            }
        }
        Numeric::from_var(mod_var(&self.finite_var(), &other.finite_var())?)
    }

    /// Negation; never fails.
    pub fn neg(&self) -> Numeric {
        match &self.0 {
            Repr::Small { coef, dscale } if *coef != i64::MIN => {
                Numeric(Repr::Small { coef: -coef, dscale: *dscale })
            }
            Repr::Small { coef, dscale } => {
                let v = Var::from_scaled(-i128::from(*coef), i32::from(*dscale));
                Numeric(Repr::Big(Box::new(v)))
            }
            Repr::Big(v) => {
                let mut v = (**v).clone();
                if !v.is_zero() {
                    v.neg = !v.neg;
                }
                Numeric(Repr::Big(Box::new(v)))
            }
            Repr::NaN => Numeric::NAN,
            Repr::PosInf => Numeric::NEG_INFINITY,
            Repr::NegInf => Numeric::INFINITY,
        }
    }

    /// Absolute value; never fails.
    pub fn abs(&self) -> Numeric {
        match self.signum_opt() {
            Some(s) if s < 0 => self.neg(),
            _ => self.clone(),
        }
    }

    /// `sign()`: -1, 0 or 1 (scale 0; ±Infinity give ±1), NaN for NaN.
    pub fn sign(&self) -> Numeric {
        match self.signum_opt() {
            None => Numeric::NAN,
            Some(s) => Numeric::from(i64::from(s)),
        }
    }

    /// `round(x, s)`: half away from zero at `s` places (negative `s`
    /// rounds left of the point, giving scale 0).
    pub fn round(&self, scale: i32) -> Result<Numeric, SqlError> {
        if !self.is_finite() {
            return Ok(self.clone());
        }
        let scale = scale.clamp(-(WEIGHT_MAX + 1) * DEC_DIGITS - 1, DSCALE_MAX);
        let mut v = self.finite_var();
        v.round(scale);
        if scale < 0 {
            v.dscale = 0;
        }
        Numeric::from_var(v)
    }

    /// `trunc(x, s)`: toward zero at `s` places (negative `s` allowed).
    pub fn trunc(&self, scale: i32) -> Result<Numeric, SqlError> {
        if !self.is_finite() {
            return Ok(self.clone());
        }
        let scale = scale.clamp(-(WEIGHT_MAX + 1) * DEC_DIGITS, DSCALE_MAX);
        let mut v = self.finite_var();
        v.trunc(scale);
        if scale < 0 {
            v.dscale = 0;
        }
        Numeric::from_var(v)
    }

    /// `ceil()`: smallest integer not below, scale 0.
    pub fn ceil(&self) -> Result<Numeric, SqlError> {
        if !self.is_finite() {
            return Ok(self.clone());
        }
        Numeric::from_var(self.finite_var().ceil())
    }

    /// `floor()`: largest integer not above, scale 0.
    pub fn floor(&self) -> Result<Numeric, SqlError> {
        if !self.is_finite() {
            return Ok(self.clone());
        }
        Numeric::from_var(self.finite_var().floor())
    }

    /// `min_scale()`: fewest fractional digits that represent the value
    /// exactly; `None` (SQL NULL) for NaN and infinities.
    pub fn min_scale(&self) -> Option<i32> {
        let v = self.var()?;
        let Some(last) = v.digits.iter().rposition(|&d| d != 0) else {
            return Some(0);
        };
        let mut min_scale = (last as i32 - v.weight) * DEC_DIGITS;
        if min_scale <= 0 {
            return Some(0);
        }
        let mut d = v.digits[last];
        while d % 10 == 0 {
            min_scale -= 1;
            d /= 10;
        }
        Some(min_scale)
    }

    /// `trim_scale()`: the same value with its scale reduced to
    /// [`Numeric::min_scale`].
    pub fn trim_scale(&self) -> Numeric {
        match self.min_scale() {
            None => self.clone(),
            Some(s) => {
                let mut v = self.finite_var();
                v.dscale = s;
                Numeric::from_var(v).unwrap_or_else(|_| self.clone())
            }
        }
    }

    /// `gcd()`: non-negative, scale the larger input scale; NaN if either
    /// input is NaN or infinite.
    pub fn gcd(&self, other: &Numeric) -> Result<Numeric, SqlError> {
        if !self.is_finite() || !other.is_finite() {
            return Ok(Numeric::NAN);
        }
        Numeric::from_var(gcd_var(&self.finite_var(), &other.finite_var())?)
    }

    /// `lcm()`: non-negative, zero if either input is zero, scale the
    /// larger input scale; NaN if either input is NaN or infinite.
    pub fn lcm(&self, other: &Numeric) -> Result<Numeric, SqlError> {
        if !self.is_finite() || !other.is_finite() {
            return Ok(Numeric::NAN);
        }
        let (a, b) = (self.finite_var(), other.finite_var());
        let mut r = if a.is_zero() || b.is_zero() {
            Var::zero(0)
        } else {
            let g = gcd_var(&a, &b)?;
            let q = Var::div(&a, &g, 0, false)?;
            let mut r = Var::mul(&b, &q, b.dscale);
            r.neg = false;
            r
        };
        r.dscale = a.dscale.max(b.dscale);
        Numeric::from_var(r)
    }

    /// `factorial(n)`: errors for negative `n` and for results that cannot
    /// be stored (n > 32177).
    pub fn factorial(n: i64) -> Result<Numeric, SqlError> {
        if n < 0 {
            return Err(SqlError::new(
                SqlState::NUMERIC_VALUE_OUT_OF_RANGE,
                "factorial of a negative number is undefined",
            ));
        }
        if n <= 1 {
            return Ok(Numeric::from(1i64));
        }
        if n > 32177 {
            return Err(super::repr::overflow());
        }
        if n <= 20 {
            return Ok(Numeric::from((2..=n).product::<i64>()));
        }
        // Multiply by runs of factors that fit an i64 together.
        let mut r = Var::from_i128(1);
        let mut k = 2i64;
        while k <= n {
            let mut chunk: i64 = 1;
            while k <= n && chunk.checked_mul(k).is_some_and(|c| c < 1 << 40) {
                chunk *= k;
                k += 1;
            }
            r = Var::mul(&r, &Var::from_i128(i128::from(chunk)), 0);
        }
        Numeric::from_var(r)
    }

    /// `width_bucket(operand, low, high, count)` for numerics.
    pub fn width_bucket(
        operand: &Numeric,
        low: &Numeric,
        high: &Numeric,
        count: i32,
    ) -> Result<i32, SqlError> {
        let wb = |m: &str| SqlError::new(SqlState::INVALID_ARGUMENT_FOR_WIDTH_BUCKET_FUNCTION, m);
        if count <= 0 {
            return Err(wb("count must be greater than zero"));
        }
        if operand.is_nan() || low.is_nan() || high.is_nan() {
            return Err(wb("operand, lower bound, and upper bound cannot be NaN"));
        }
        if low.is_infinite() || high.is_infinite() {
            return Err(wb("lower and upper bounds must be finite"));
        }
        let count_var = Var::from_i128(i128::from(count));
        let result = match low.cmp(high) {
            std::cmp::Ordering::Equal => return Err(wb("lower bound cannot equal upper bound")),
            std::cmp::Ordering::Less => {
                if operand < low {
                    Var::zero(0)
                } else if operand >= high {
                    Var::add(&count_var, &Var::from_i128(1))
                } else {
                    compute_bucket(operand, low, high, &count_var, false)?
                }
            }
            std::cmp::Ordering::Greater => {
                if operand > low {
                    Var::zero(0)
                } else if operand <= high {
                    Var::add(&count_var, &Var::from_i128(1))
                } else {
                    compute_bucket(operand, low, high, &count_var, true)?
                }
            }
        };
        result
            .to_i64_rounded()
            .and_then(|v| i32::try_from(v).ok())
            .ok_or_else(|| SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "integer out of range"))
    }
}

/// The bucket number for an operand strictly inside the bounds.
fn compute_bucket(
    operand: &Numeric,
    low: &Numeric,
    high: &Numeric,
    count: &Var,
    reversed: bool,
) -> Result<Var, SqlError> {
    let (o, l, h) = (operand.finite_var(), low.finite_var(), high.finite_var());
    let (num, den) =
        if reversed { (Var::sub(&l, &o), Var::sub(&l, &h)) } else { (Var::sub(&o, &l), Var::sub(&h, &l)) };
    let num = Var::mul(&num, count, num.dscale + count.dscale);
    let q = Var::div(&num, &den, select_div_scale(&num, &den), true)?;
    Ok(Var::add(&q, &Var::from_i128(1)).floor())
}

/// `x - trunc(x / y) * y`, scale the larger input scale.
pub(crate) fn mod_var(a: &Var, b: &Var) -> Result<Var, SqlError> {
    let q = Var::div(a, b, 0, false)?;
    let p = Var::mul(b, &q, b.dscale);
    Ok(Var::sub(a, &p))
}

/// Euclid's algorithm on absolute values.
fn gcd_var(a: &Var, b: &Var) -> Result<Var, SqlError> {
    let dscale = a.dscale.max(b.dscale);
    let c = a.cmp_abs(b);
    let (mut x, mut y) =
        if c == std::cmp::Ordering::Less { (b.clone(), a.clone()) } else { (a.clone(), b.clone()) };
    if c == std::cmp::Ordering::Equal || y.is_zero() {
        x.neg = false;
        x.dscale = dscale;
        return Ok(x);
    }
    loop {
        let m = mod_var(&x, &y)?;
        if m.is_zero() {
            break;
        }
        x = y;
        y = m;
    }
    y.neg = false;
    y.dscale = dscale;
    Ok(y)
}

/// NaN / infinity rules of multiplication.
fn special_mul(a: &Numeric, b: &Numeric) -> Numeric {
    if a.is_nan() || b.is_nan() {
        return Numeric::NAN;
    }
    let (sa, sb) = (a.signum_opt().unwrap_or(0), b.signum_opt().unwrap_or(0));
    match sa * sb {
        0 => Numeric::NAN,
        1 => Numeric::INFINITY,
        _ => Numeric::NEG_INFINITY,
    }
}

/// NaN / infinity rules of division (`/` and `div()`); `None` when both
/// operands are finite and non-zero division should proceed.
fn special_div(a: &Numeric, b: &Numeric) -> Result<Option<Numeric>, SqlError> {
    if a.is_finite() && b.is_finite() {
        if b.signum_opt() == Some(0) {
            return Err(SqlError::division_by_zero());
        }
        return Ok(None);
    }
    if a.is_nan() || b.is_nan() {
        return Ok(Some(Numeric::NAN));
    }
    if a.is_infinite() {
        if b.is_infinite() {
            return Ok(Some(Numeric::NAN));
        }
        let sa = a.signum_opt().unwrap_or(0);
        return match b.signum_opt().unwrap_or(0) {
            0 => Err(SqlError::division_by_zero()),
            sb if sa * sb > 0 => Ok(Some(Numeric::INFINITY)),
            _ => Ok(Some(Numeric::NEG_INFINITY)),
        };
    }
    // Finite divided by an infinity.
    Ok(Some(Numeric::ZERO))
}
