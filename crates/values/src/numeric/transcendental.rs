//! sqrt, exp, ln, log and power, with PostgreSQL's scale selection.
//!
//! PostgreSQL picks each result's scale from rough estimates of its
//! magnitude and computes with guard digits before a final rounding. We
//! follow the same scale choices and the same reduction steps, with exact
//! intermediate divisions, so the rounded results agree with PostgreSQL's.

use snapscale_sqlstate::SqlState;

use super::arith::{MAX_DISPLAY_SCALE, MIN_SIG_DIGITS};
use super::nat;
use super::repr::{overflow, Numeric, WEIGHT_MAX};
use super::var::{from_nat, to_nat, Var, DEC_DIGITS};
use crate::SqlError;

// PostgreSQL's own (slightly truncated) constants: scale estimates are
// truncated to integers, so the exact constants could pick other scales.
/// log10(e) as numeric.c writes it.
#[allow(clippy::approx_constant)]
const PG_LOG10_E: f64 = 0.434294481903252;
/// log10(2) as numeric.c writes it.
#[allow(clippy::approx_constant)]
const PG_LOG10_2: f64 = 0.301029995663981;
/// ln(10) as numeric.c writes it.
#[allow(clippy::approx_constant)]
const PG_LN_10: f64 = 2.302585092994046;

/// NUMERIC_MAX_RESULT_SCALE.
const MAX_RESULT_SCALE: i32 = MAX_DISPLAY_SCALE * 2;

fn power_error(msg: &str) -> SqlError {
    SqlError::new(SqlState::INVALID_ARGUMENT_FOR_POWER_FUNCTION, msg)
}

fn log_error(msg: &str) -> SqlError {
    SqlError::new(SqlState::INVALID_ARGUMENT_FOR_LOGARITHM, msg)
}

fn int(v: i128) -> Var {
    Var::from_i128(v)
}

/// `v` with display scale `s` (for constants such as 0.9).
fn scaled(coef: i128, s: i32) -> Var {
    Var::from_scaled(coef, s)
}

/// Square root correctly rounded at `rscale` (which may be negative).
pub(crate) fn sqrt_var(arg: &Var, rscale: i32) -> Result<Var, SqlError> {
    match arg.sign() {
        0 => return Ok(Var::zero(rscale)),
        s if s < 0 => return Err(power_error("cannot take square root of a negative number")),
        _ => {}
    }
    let mut a = arg.clone();
    a.strip();
    // Base-10000 fractional digits of the root: one decimal more than rscale.
    let f = (rscale + 1 + DEC_DIGITS - 1).div_euclid(DEC_DIGITS);
    let low = a.weight - a.digits.len() as i32 + 1;
    let shift = low + 2 * f;
    let mut n = to_nat(&a.digits);
    if shift >= 0 {
        let mut v = vec![0u32; shift as usize];
        v.extend(n);
        n = v;
    } else {
        let drop = ((-shift) as usize).min(n.len());
        n.drain(..drop);
    }
    let s = nat::isqrt(&n);
    let mut r = from_nat(&s, -f);
    r.round(rscale);
    r.strip();
    Ok(r)
}

/// e^x rounded at `rscale`.
pub(crate) fn exp_var(arg: &Var, rscale: i32) -> Result<Var, SqlError> {
    let mut x = arg.clone();
    let mut val = x.to_f64();
    if val.abs() >= f64::from(MAX_RESULT_SCALE * 3) {
        if val > 0.0 {
            return Err(overflow());
        }
        return Ok(Var::zero(rscale));
    }
    let dweight = (val * PG_LOG10_E) as i32;
    let mut ndiv2 = 0;
    if val.abs() > 0.01 {
        ndiv2 = 1;
        val /= 2.0;
        while val.abs() > 0.01 {
            ndiv2 += 1;
            val /= 2.0;
        }
        let local = x.dscale + ndiv2;
        x = Var::div(&x, &int(1 << ndiv2), local, true)?;
    }
    let mut sig_digits = 1 + dweight + rscale + (f64::from(ndiv2) * PG_LOG10_2) as i32;
    sig_digits = sig_digits.max(0) + 8;
    let mut local = sig_digits - 1;
    let mut result = Var::add(&int(1), &x);
    let mut elem = Var::mul(&x, &x, local);
    let mut ni = 2;
    elem = Var::div(&elem, &int(ni), local, true)?;
    while !elem.is_zero() {
        result = Var::add(&result, &elem);
        elem = Var::mul(&elem, &x, local);
        ni += 1;
        elem = Var::div(&elem, &int(ni), local, true)?;
    }
    while ndiv2 > 0 {
        ndiv2 -= 1;
        local = (sig_digits - result.weight * 2 * DEC_DIGITS).max(0);
        result = Var::mul(&result, &result, local);
    }
    result.round(rscale);
    result.strip();
    Ok(result)
}

/// Estimated decimal weight of ln(var), used to choose scales.
pub(crate) fn estimate_ln_dweight(var: &Var) -> i32 {
    if var.sign() <= 0 {
        return 0;
    }
    if var.cmp(&scaled(9, 1)) != std::cmp::Ordering::Less
        && var.cmp(&scaled(11, 1)) != std::cmp::Ordering::Greater
    {
        let x = Var::sub(var, &int(1));
        if !x.digits.is_empty() {
            x.weight * DEC_DIGITS + (f64::from(x.digits[0])).log10() as i32
        } else {
            0
        }
    } else {
        let mut digits = f64::from(var.digits[0]);
        let mut dweight = var.weight * DEC_DIGITS;
        if var.digits.len() > 1 {
            digits = digits * 10000.0 + f64::from(var.digits[1]);
            dweight -= DEC_DIGITS;
        }
        let ln = digits.ln() + f64::from(dweight) * PG_LN_10;
        ln.abs().log10() as i32
    }
}

/// ln(x) rounded at `rscale`.
pub(crate) fn ln_var(arg: &Var, rscale: i32) -> Result<Var, SqlError> {
    match arg.sign() {
        0 => return Err(log_error("cannot take logarithm of zero")),
        s if s < 0 => return Err(log_error("cannot take logarithm of a negative number")),
        _ => {}
    }
    let mut x = arg.clone();
    x.strip();
    let mut fact = int(2);
    let mut nsqrt = 0;
    let point_nine = scaled(9, 1);
    let one_point_one = scaled(11, 1);
    while x.cmp(&point_nine) != std::cmp::Ordering::Greater {
        let local = rscale - x.weight * DEC_DIGITS / 2 + 8;
        x = sqrt_var(&x, local)?;
        fact = Var::mul(&fact, &int(2), 0);
        nsqrt += 1;
    }
    while x.cmp(&one_point_one) != std::cmp::Ordering::Less {
        let local = rscale - x.weight * DEC_DIGITS / 2 + 8;
        x = sqrt_var(&x, local)?;
        fact = Var::mul(&fact, &int(2), 0);
        nsqrt += 1;
    }
    let local = rscale + (f64::from(nsqrt + 1) * PG_LOG10_2) as i32 + 8;
    let num = Var::sub(&x, &int(1));
    let den = Var::add(&x, &int(1));
    let mut result = Var::div(&num, &den, local, true)?;
    let mut xx = result.clone();
    let x2 = Var::mul(&result, &result, local);
    let mut ni = 1;
    loop {
        ni += 2;
        xx = Var::mul(&xx, &x2, local);
        let elem = Var::div(&xx, &int(ni), local, true)?;
        if elem.is_zero() {
            break;
        }
        result = Var::add(&result, &elem);
        if elem.weight < result.weight - local * 2 / DEC_DIGITS {
            break;
        }
    }
    let mut r = Var::mul(&result, &fact, rscale);
    r.strip();
    Ok(r)
}

/// log(base, num), choosing the result scale as PostgreSQL does.
fn log_var(base: &Var, num: &Var) -> Result<Var, SqlError> {
    let ln_base_dweight = estimate_ln_dweight(base);
    let ln_num_dweight = estimate_ln_dweight(num);
    let result_dweight = ln_num_dweight - ln_base_dweight;
    let rscale =
        (MIN_SIG_DIGITS - result_dweight).max(base.dscale).max(num.dscale).clamp(0, MAX_DISPLAY_SCALE);
    let ln_base_rscale = (rscale + result_dweight - ln_base_dweight + 8).max(0);
    let ln_num_rscale = (rscale + result_dweight - ln_num_dweight + 8).max(0);
    let ln_base = ln_var(base, ln_base_rscale)?;
    let ln_num = ln_var(num, ln_num_rscale)?;
    Var::div(&ln_num, &ln_base, rscale, true)
}

/// base^exp for an integer exponent, rounded at `rscale`.
fn power_var_int(base: &Var, exp: i32, rscale: i32) -> Result<Var, SqlError> {
    match exp {
        0 => return Ok(Var { dscale: rscale, ..int(1) }),
        1 => {
            let mut r = base.clone();
            r.round(rscale);
            r.strip();
            return Ok(r);
        }
        -1 => return Var::div(&int(1), base, rscale, true),
        2 => return Ok(Var::mul(base, base, rscale)),
        _ => {}
    }
    if base.is_zero() {
        if exp < 0 {
            return Err(SqlError::division_by_zero());
        }
        return Ok(Var::zero(rscale));
    }
    let mut b = base.clone();
    b.strip();
    let mut f = f64::from(b.digits[0]);
    let mut p = b.weight * DEC_DIGITS;
    let mut i = 1;
    while i < b.digits.len() && (i as i32) * DEC_DIGITS < 16 {
        f = f * 10000.0 + f64::from(b.digits[i]);
        p -= DEC_DIGITS;
        i += 1;
    }
    let f = f64::from(exp) * (f.log10() + f64::from(p));
    if f > f64::from(3 * WEIGHT_MAX * DEC_DIGITS) {
        return Err(overflow());
    }
    if f + 1.0 < f64::from(-rscale) || f + 1.0 < f64::from(-MAX_DISPLAY_SCALE) {
        return Ok(Var::zero(rscale));
    }
    let mut sig_digits = 1 + rscale + f as i32;
    sig_digits += (f64::from(exp).abs()).ln() as i32 + 8;
    let mut neg = exp < 0;
    let mut mask = exp.unsigned_abs();
    let mut base_prod = b.clone();
    let mut result = if mask & 1 == 1 { b.clone() } else { int(1) };
    loop {
        mask >>= 1;
        if mask == 0 {
            break;
        }
        let local = (sig_digits - 2 * base_prod.weight * DEC_DIGITS).min(2 * base_prod.dscale).max(0);
        base_prod = Var::mul(&base_prod, &base_prod, local);
        if mask & 1 == 1 {
            let local = (sig_digits - (base_prod.weight + result.weight) * DEC_DIGITS)
                .min(base_prod.dscale + result.dscale)
                .max(0);
            result = Var::mul(&base_prod, &result, local);
        }
        if base_prod.weight > WEIGHT_MAX || result.weight > WEIGHT_MAX {
            if !neg {
                return Err(overflow());
            }
            result = Var::zero(0);
            neg = false;
            break;
        }
    }
    if neg {
        Var::div(&int(1), &result, rscale, true)
    } else {
        result.round(rscale);
        result.strip();
        Ok(result)
    }
}

/// base^exp for finite operands (zero^negative already rejected).
fn power_var(base: &Var, exp: &Var) -> Result<Var, SqlError> {
    if exp.is_integral() {
        if let Some(e) = exp.to_i64_rounded().and_then(|e| i32::try_from(e).ok()) {
            let rscale = MIN_SIG_DIGITS.max(base.dscale).clamp(0, MAX_DISPLAY_SCALE);
            return power_var_int(base, e, rscale);
        }
    }
    if base.is_zero() {
        return Ok(Var::zero(MIN_SIG_DIGITS));
    }
    let mut b = base.clone();
    let mut res_neg = false;
    if b.neg {
        if !exp.is_integral() {
            return Err(power_error(
                "a negative number raised to a non-integer power yields a complex result",
            ));
        }
        res_neg = is_odd_integer(exp);
        b.neg = false;
    }
    let ln_dweight = estimate_ln_dweight(&b);
    let local = (8 - ln_dweight).max(0);
    let ln_base = ln_var(&b, local)?;
    let ln_num = Var::mul(&ln_base, exp, local);
    let mut val = ln_num.to_f64();
    if val.abs() > f64::from(MAX_RESULT_SCALE) * 3.01 {
        if val > 0.0 {
            return Err(overflow());
        }
        return Ok(Var::zero(MAX_DISPLAY_SCALE));
    }
    val *= PG_LOG10_E;
    let rscale = (MIN_SIG_DIGITS - val as i32).max(b.dscale).max(exp.dscale).clamp(0, MAX_DISPLAY_SCALE);
    let sig_digits = (rscale + val as i32).max(0);
    let local = (sig_digits - ln_dweight + 8).max(0);
    let ln_base = ln_var(&b, local)?;
    let ln_num = Var::mul(&ln_base, exp, local);
    let mut r = exp_var(&ln_num, rscale)?;
    if res_neg && !r.is_zero() {
        r.neg = true;
    }
    Ok(r)
}

/// Whether an integral var is odd.
fn is_odd_integer(v: &Var) -> bool {
    !v.digits.is_empty() && v.digits.len() as i32 == v.weight + 1 && v.digits[v.digits.len() - 1] & 1 == 1
}

impl Numeric {
    /// `sqrt()`: at least 16 significant digits and the input's scale.
    /// Errors with 2201F for negative inputs (including -Infinity).
    pub fn sqrt(&self) -> Result<Numeric, SqlError> {
        if self.is_nan() {
            return Ok(Numeric::NAN);
        }
        if self.signum_opt() == Some(-1) {
            return Err(power_error("cannot take square root of a negative number"));
        }
        if self.is_infinite() {
            return Ok(self.clone());
        }
        let mut arg = self.finite_var();
        arg.strip();
        let sweight = (arg.weight + 1) * DEC_DIGITS / 2 - 1;
        let rscale = (MIN_SIG_DIGITS - sweight).max(arg.dscale).clamp(0, MAX_DISPLAY_SCALE);
        Numeric::from_var(sqrt_var(&arg, rscale)?)
    }

    /// `exp()`: e raised to the value; exp(-Infinity) is 0.
    pub fn exp(&self) -> Result<Numeric, SqlError> {
        match self.signum_opt() {
            None => return Ok(Numeric::NAN),
            Some(-1) if self.is_infinite() => return Ok(Numeric::ZERO),
            _ if self.is_infinite() => return Ok(self.clone()),
            _ => {}
        }
        let arg = self.finite_var();
        let val =
            (arg.to_f64() * PG_LOG10_E).clamp(-f64::from(MAX_RESULT_SCALE), f64::from(MAX_RESULT_SCALE));
        let rscale = (MIN_SIG_DIGITS - val as i32).max(arg.dscale).clamp(0, MAX_DISPLAY_SCALE);
        Numeric::from_var(exp_var(&arg, rscale)?)
    }

    /// `ln()`: natural logarithm; 2201E for zero and negative inputs.
    pub fn ln(&self) -> Result<Numeric, SqlError> {
        if self.is_nan() {
            return Ok(Numeric::NAN);
        }
        if self.is_infinite() {
            if self.signum_opt() == Some(-1) {
                return Err(log_error("cannot take logarithm of a negative number"));
            }
            return Ok(self.clone());
        }
        let arg = self.finite_var();
        let dw = estimate_ln_dweight(&arg);
        let rscale = (MIN_SIG_DIGITS - dw).max(arg.dscale).clamp(0, MAX_DISPLAY_SCALE);
        Numeric::from_var(ln_var(&arg, rscale)?)
    }

    /// `log(x)`: base-10 logarithm, i.e. `log(10, x)`.
    pub fn log10(&self) -> Result<Numeric, SqlError> {
        Numeric::log(&Numeric::from(10i64), self)
    }

    /// `log(base, x)`; 2201E for zero and negative inputs.
    pub fn log(base: &Numeric, x: &Numeric) -> Result<Numeric, SqlError> {
        if !base.is_finite() || !x.is_finite() {
            if base.is_nan() || x.is_nan() {
                return Ok(Numeric::NAN);
            }
            let (s1, s2) = (base.signum_opt().unwrap_or(0), x.signum_opt().unwrap_or(0));
            if s1 < 0 || s2 < 0 {
                return Err(log_error("cannot take logarithm of a negative number"));
            }
            if s1 == 0 || s2 == 0 {
                return Err(log_error("cannot take logarithm of zero"));
            }
            if base.is_infinite() {
                return Ok(if x.is_infinite() { Numeric::NAN } else { Numeric::ZERO });
            }
            return Ok(Numeric::INFINITY);
        }
        Numeric::from_var(log_var(&base.finite_var(), &x.finite_var())?)
    }

    /// `power(x, y)` / `x ^ y`, with POSIX pow's special cases; 2201F for
    /// zero to a negative power and negative to a non-integer power.
    pub fn pow(&self, exp: &Numeric) -> Result<Numeric, SqlError> {
        let one = Numeric::from(1i64);
        if !self.is_finite() || !exp.is_finite() {
            if self.is_nan() {
                if exp.is_finite() && exp.signum_opt() == Some(0) {
                    return Ok(one);
                }
                return Ok(Numeric::NAN);
            }
            if exp.is_nan() {
                if self.is_finite() && *self == one {
                    return Ok(one);
                }
                return Ok(Numeric::NAN);
            }
            let s1 = self.signum_opt().unwrap_or(0);
            let s2 = exp.signum_opt().unwrap_or(0);
            if s1 == 0 && s2 < 0 {
                return Err(power_error("zero raised to a negative power is undefined"));
            }
            // PostgreSQL counts infinities as integral here.
            let exp_integral = exp.var().is_none_or(|v| v.is_integral());
            if s1 < 0 && !exp_integral {
                return Err(power_error(
                    "a negative number raised to a non-integer power yields a complex result",
                ));
            }
            if self.is_finite() && *self == one {
                return Ok(one);
            }
            if s2 == 0 {
                return Ok(one);
            }
            if s1 == 0 && s2 > 0 {
                return Ok(Numeric::ZERO);
            }
            if exp.is_infinite() {
                let abs_gt_one = if self.is_infinite() {
                    true
                } else {
                    if *self == one.neg() {
                        return Ok(one);
                    }
                    self.abs() > one
                };
                return Ok(if abs_gt_one == (s2 > 0) { Numeric::INFINITY } else { Numeric::ZERO });
            }
            if self.signum_opt() == Some(1) {
                return Ok(if s2 > 0 { Numeric::INFINITY } else { Numeric::ZERO });
            }
            if s2 < 0 {
                return Ok(Numeric::ZERO);
            }
            let odd = exp.var().is_some_and(|v| {
                let mut v = v.into_owned();
                v.strip();
                is_odd_integer(&v)
            });
            return Ok(if odd { Numeric::NEG_INFINITY } else { Numeric::INFINITY });
        }
        if self.signum_opt() == Some(0) && exp.signum_opt() == Some(-1) {
            return Err(power_error("zero raised to a negative power is undefined"));
        }
        let mut e = exp.finite_var();
        e.strip();
        Numeric::from_var(power_var(&self.finite_var(), &e)?)
    }
}
