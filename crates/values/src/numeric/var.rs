//! The working form of a finite numeric: base-10000 digits with a weight.
//!
//! PostgreSQL chooses result scales (division, square root, logarithms)
//! from the base-10000 digits of the operands and rounds intermediate
//! results at base-10000 boundaries, so computing in the same digit layout
//! is what makes our results match its results digit for digit.

use std::cmp::Ordering;

use super::nat;
use crate::SqlError;

/// The digit base.
pub(crate) const NBASE: i32 = 10000;
/// Decimal digits per base digit.
pub(crate) const DEC_DIGITS: i32 = 4;
/// Extra base digits kept by a truncated multiplication.
const MUL_GUARD_DIGITS: i32 = 2;

/// A finite value: `digits[i] * NBASE^(weight - i)`, summed, with a sign.
///
/// `dscale` is the display scale (decimal digits after the point). After
/// [`Var::strip`], there are no leading or trailing zero digits and a zero
/// has weight 0 and a positive sign.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Var {
    pub neg: bool,
    pub weight: i32,
    pub dscale: i32,
    pub digits: Vec<u16>,
}

impl Var {
    /// Zero with the given display scale.
    pub fn zero(dscale: i32) -> Var {
        Var { neg: false, weight: 0, dscale, digits: Vec::new() }
    }

    /// An integer.
    pub fn from_i128(v: i128) -> Var {
        let mut u = v.unsigned_abs();
        let mut digits = Vec::new();
        while u > 0 {
            digits.push((u % 10000) as u16);
            u /= 10000;
        }
        digits.reverse();
        let weight = digits.len() as i32 - 1;
        let mut var = Var { neg: v < 0, weight, dscale: 0, digits };
        var.strip();
        var
    }

    /// `coef * 10^-dscale`.
    pub fn from_scaled(coef: i128, dscale: i32) -> Var {
        // Pad the coefficient so that the point falls on a digit boundary.
        let pad = (DEC_DIGITS - dscale.rem_euclid(DEC_DIGITS)) % DEC_DIGITS;
        let mut u = coef.unsigned_abs();
        let mut low = Vec::new();
        // Multiplying by 10^pad might overflow u128; do it per digit instead.
        let mut carry_scale = 10u128.pow(pad as u32);
        if u.checked_mul(carry_scale).is_some() {
            u *= carry_scale;
            carry_scale = 1;
        }
        while u > 0 {
            low.push(u % 10000);
            u /= 10000;
        }
        if carry_scale != 1 {
            let mut carry = 0u128;
            for d in low.iter_mut() {
                let p = *d * carry_scale + carry;
                *d = p % 10000;
                carry = p / 10000;
            }
            while carry > 0 {
                low.push(carry % 10000);
                carry /= 10000;
            }
        }
        let digits: Vec<u16> = low.iter().rev().map(|&d| d as u16).collect();
        let frac_digits = (dscale + pad) / DEC_DIGITS;
        let weight = digits.len() as i32 - 1 - frac_digits;
        let mut var = Var { neg: coef < 0, weight, dscale, digits };
        var.strip();
        var
    }

    /// Whether the value is zero.
    pub fn is_zero(&self) -> bool {
        self.digits.iter().all(|&d| d == 0)
    }

    /// Removes leading and trailing zero digits; normalises zero.
    pub fn strip(&mut self) {
        let lead = self.digits.iter().take_while(|&&d| d == 0).count();
        if lead == self.digits.len() {
            self.digits.clear();
            self.weight = 0;
            self.neg = false;
            return;
        }
        if lead > 0 {
            self.digits.drain(..lead);
            self.weight -= lead as i32;
        }
        while self.digits.last() == Some(&0) {
            self.digits.pop();
        }
    }

    /// Digit at base-10000 position `pos` (the exponent of NBASE).
    fn digit_at(&self, pos: i32) -> u16 {
        let idx = self.weight - pos;
        if idx < 0 || idx as usize >= self.digits.len() {
            0
        } else {
            self.digits[idx as usize]
        }
    }

    /// Lowest base-10000 position holding a digit.
    fn low_pos(&self) -> i32 {
        self.weight - self.digits.len() as i32 + 1
    }

    /// Compares absolute values.
    pub fn cmp_abs(&self, other: &Var) -> Ordering {
        let (a, b) = (self.is_zero(), other.is_zero());
        match (a, b) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        let mut x = self.clone();
        let mut y = other.clone();
        x.strip();
        y.strip();
        if x.weight != y.weight {
            return x.weight.cmp(&y.weight);
        }
        for (dx, dy) in x.digits.iter().zip(y.digits.iter()) {
            if dx != dy {
                return dx.cmp(dy);
            }
        }
        x.digits.len().cmp(&y.digits.len())
    }

    /// Compares signed values.
    pub fn cmp(&self, other: &Var) -> Ordering {
        let sa = self.sign();
        let sb = other.sign();
        if sa != sb {
            return sa.cmp(&sb);
        }
        let c = self.cmp_abs(other);
        if sa < 0 {
            c.reverse()
        } else {
            c
        }
    }

    /// -1, 0 or 1.
    pub fn sign(&self) -> i32 {
        if self.is_zero() {
            0
        } else if self.neg {
            -1
        } else {
            1
        }
    }

    /// `|a| + |b|` digit arrays, as a positive var.
    fn add_abs(a: &Var, b: &Var) -> Var {
        if a.is_zero() {
            return Var { neg: false, ..b.clone() };
        }
        if b.is_zero() {
            return Var { neg: false, ..a.clone() };
        }
        let hi = a.weight.max(b.weight);
        let lo = a.low_pos().min(b.low_pos());
        let n = (hi - lo + 1) as usize;
        let mut out = vec![0u16; n + 1];
        let mut carry = 0u16;
        for (k, pos) in (lo..=hi).enumerate() {
            let s = a.digit_at(pos) + b.digit_at(pos) + carry;
            carry = u16::from(s >= 10000);
            out[n - k] = if s >= 10000 { s - 10000 } else { s };
        }
        out[0] = carry;
        let mut v = Var { neg: false, weight: hi + 1, dscale: 0, digits: out };
        v.strip();
        v
    }

    /// `|a| - |b|` where `|a| >= |b|`, as a positive var.
    fn sub_abs(a: &Var, b: &Var) -> Var {
        if b.is_zero() {
            return Var { neg: false, ..a.clone() };
        }
        let hi = a.weight.max(b.weight);
        let lo = a.low_pos().min(b.low_pos());
        let n = (hi - lo + 1) as usize;
        let mut out = vec![0u16; n];
        let mut borrow = 0i32;
        for (k, pos) in (lo..=hi).enumerate() {
            let mut s = i32::from(a.digit_at(pos)) - i32::from(b.digit_at(pos)) - borrow;
            borrow = 0;
            if s < 0 {
                s += NBASE;
                borrow = 1;
            }
            out[n - 1 - k] = s as u16;
        }
        let mut v = Var { neg: false, weight: hi, dscale: 0, digits: out };
        v.strip();
        v
    }

    /// `a + b`, display scale the larger of the two.
    pub fn add(a: &Var, b: &Var) -> Var {
        let dscale = a.dscale.max(b.dscale);
        let mut r = if a.neg == b.neg {
            let mut r = Var::add_abs(a, b);
            r.neg = a.neg;
            r
        } else {
            match a.cmp_abs(b) {
                Ordering::Equal => Var::zero(0),
                Ordering::Greater => {
                    let mut r = Var::sub_abs(a, b);
                    r.neg = a.neg;
                    r
                }
                Ordering::Less => {
                    let mut r = Var::sub_abs(b, a);
                    r.neg = b.neg;
                    r
                }
            }
        };
        r.dscale = dscale;
        r.strip();
        r
    }

    /// `a - b`, display scale the larger of the two.
    pub fn sub(a: &Var, b: &Var) -> Var {
        let nb = Var { neg: !b.neg, ..b.clone() };
        Var::add(a, &nb)
    }

    /// `a * b` rounded to `rscale`, ignoring (as PostgreSQL does) partial
    /// products that only reach beyond a couple of guard digits.
    pub fn mul(a: &Var, b: &Var, rscale: i32) -> Var {
        let (a, b) = if a.digits.len() > b.digits.len() { (b, a) } else { (a, b) };
        if a.digits.is_empty() || b.digits.is_empty() {
            return Var::zero(rscale);
        }
        let res_weight = a.weight + b.weight + 2;
        let full = a.digits.len() as i32 + b.digits.len() as i32 + 1;
        let maxdigits = res_weight + 1 + (rscale + DEC_DIGITS - 1) / DEC_DIGITS + MUL_GUARD_DIGITS;
        let res_ndigits = full.min(maxdigits);
        if res_ndigits < 3 {
            return Var::zero(rscale);
        }
        let n = res_ndigits as usize;
        let mut acc = vec![0u64; n];
        let i1_max = (a.digits.len() as i32 - 1).min(res_ndigits - 3);
        let mut pending = 0u64;
        for i1 in (0..=i1_max).rev() {
            let d1 = u64::from(a.digits[i1 as usize]);
            if d1 == 0 {
                continue;
            }
            let limit = (b.digits.len() as i32).min(res_ndigits - i1 - 2) as usize;
            let base = i1 as usize + 2;
            for (i2, &d2) in b.digits[..limit].iter().enumerate() {
                acc[base + i2] += d1 * u64::from(d2);
            }
            pending += 1;
            if pending >= 100_000 {
                normalize(&mut acc);
                pending = 0;
            }
        }
        normalize(&mut acc);
        let digits = acc.iter().map(|&d| d as u16).collect();
        let mut r = Var { neg: a.neg != b.neg, weight: res_weight, dscale: rscale, digits };
        r.round(rscale);
        r.strip();
        r
    }

    /// `a / b` to `rscale` decimal places, rounded half away from zero when
    /// `round`, else truncated; exact (computed to one more digit first).
    pub fn div(a: &Var, b: &Var, rscale: i32, round: bool) -> Result<Var, SqlError> {
        if b.is_zero() {
            return Err(SqlError::division_by_zero());
        }
        if a.is_zero() {
            return Ok(Var::zero(rscale));
        }
        let want = if round { rscale + 1 } else { rscale };
        let qf = if want > 0 { (want + DEC_DIGITS - 1) / DEC_DIGITS } else { 0 };
        let mut av = a.clone();
        av.strip();
        let mut bv = b.clone();
        bv.strip();
        let ea = av.low_pos();
        let eb = bv.low_pos();
        let shift = ea - eb + qf;
        let mut num = to_nat(&av.digits);
        let mut den = to_nat(&bv.digits);
        if shift >= 0 {
            let mut v = vec![0u32; shift as usize];
            v.extend(num);
            num = v;
        } else {
            let mut v = vec![0u32; (-shift) as usize];
            v.extend(den);
            den = v;
        }
        let q = nat::div(&num, &den);
        let mut r = from_nat(&q, -qf);
        r.neg = a.neg != b.neg;
        if round {
            r.round(rscale);
        } else {
            r.trunc(rscale);
        }
        r.strip();
        Ok(r)
    }

    /// Rounds half away from zero at `rscale` decimal places (which may be
    /// negative) and sets the display scale to `rscale`.
    pub fn round(&mut self, rscale: i32) {
        self.dscale = rscale;
        let di = (self.weight + 1) * DEC_DIGITS + rscale;
        if di < 0 {
            self.digits.clear();
            self.weight = 0;
            self.neg = false;
            return;
        }
        let nd = ((di + DEC_DIGITS - 1) / DEC_DIGITS) as usize;
        let rem = di % DEC_DIGITS;
        let len = self.digits.len();
        if !(nd < len || (nd == len && rem > 0)) {
            return;
        }
        let mut carry: u32;
        let mut idx = nd;
        if rem == 0 {
            carry = u32::from(self.digits[nd] >= 5000);
        } else {
            let pow10 = 10u16.pow((DEC_DIGITS - rem) as u32);
            idx = nd - 1;
            let extra = self.digits[idx] % pow10;
            self.digits[idx] -= extra;
            carry = 0;
            if extra >= pow10 / 2 {
                let s = u32::from(self.digits[idx]) + u32::from(pow10);
                if s >= 10000 {
                    self.digits[idx] = (s - 10000) as u16;
                    carry = 1;
                } else {
                    self.digits[idx] = s as u16;
                }
            }
        }
        self.digits.truncate(nd);
        while carry > 0 && idx > 0 {
            idx -= 1;
            let s = u32::from(self.digits[idx]) + carry;
            if s >= 10000 {
                self.digits[idx] = (s - 10000) as u16;
                carry = 1;
            } else {
                self.digits[idx] = s as u16;
                carry = 0;
            }
        }
        if carry > 0 {
            self.digits.insert(0, 1);
            self.weight += 1;
        }
    }

    /// Truncates toward zero at `rscale` decimal places (which may be
    /// negative) and sets the display scale to `rscale`.
    pub fn trunc(&mut self, rscale: i32) {
        self.dscale = rscale;
        let di = (self.weight + 1) * DEC_DIGITS + rscale;
        if di <= 0 {
            self.digits.clear();
            self.weight = 0;
            self.neg = false;
            return;
        }
        let nd = ((di + DEC_DIGITS - 1) / DEC_DIGITS) as usize;
        if nd <= self.digits.len() {
            self.digits.truncate(nd);
            let rem = di % DEC_DIGITS;
            if rem > 0 {
                let pow10 = 10u16.pow((DEC_DIGITS - rem) as u32);
                let last = nd - 1;
                self.digits[last] -= self.digits[last] % pow10;
            }
        }
    }

    /// Smallest integer not below the value, display scale 0.
    pub fn ceil(&self) -> Var {
        let mut t = self.clone();
        t.trunc(0);
        t.strip();
        if !self.neg && t.cmp(self) != Ordering::Equal {
            t = Var::add(&t, &Var::from_i128(1));
        }
        t
    }

    /// Largest integer not above the value, display scale 0.
    pub fn floor(&self) -> Var {
        let mut t = self.clone();
        t.trunc(0);
        t.strip();
        if self.neg && t.cmp(self) != Ordering::Equal {
            t = Var::sub(&t, &Var::from_i128(1));
        }
        t
    }

    /// Whether the value has no fractional part.
    pub fn is_integral(&self) -> bool {
        self.is_zero() || self.digits.len() as i32 <= self.weight + 1
    }

    /// Decimal digits of `|self|` without the point: the integer part (at
    /// least "0") and then exactly `dscale` fractional digits (a
    /// non-negative display scale is assumed).
    pub fn to_plain_string(&self) -> String {
        let mut s = String::new();
        if self.neg && !self.is_zero() {
            s.push('-');
        }
        if self.weight < 0 || self.digits.is_empty() {
            s.push('0');
        } else {
            for pos in (0..=self.weight).rev() {
                let d = self.digit_at(pos);
                if pos == self.weight {
                    s.push_str(&d.to_string());
                } else {
                    s.push_str(&format!("{d:04}"));
                }
            }
        }
        if self.dscale > 0 {
            s.push('.');
            let mut frac = String::new();
            let mut pos = -1;
            while (frac.len() as i32) < self.dscale {
                frac.push_str(&format!("{:04}", self.digit_at(pos)));
                pos -= 1;
            }
            frac.truncate(self.dscale as usize);
            s.push_str(&frac);
        }
        s
    }

    /// Nearest double, infinite on overflow (as PostgreSQL's
    /// `numericvar_to_double_no_overflow`).
    pub fn to_f64(&self) -> f64 {
        let mut v = self.clone();
        if v.dscale < 0 {
            v.dscale = 0;
        }
        // Print enough digits to be exact, then let Rust round correctly.
        let low = -v.low_pos() * DEC_DIGITS;
        v.dscale = v.dscale.max(low);
        v.to_plain_string().parse::<f64>().unwrap_or(0.0)
    }

    /// Converts to i64 after rounding to an integer; `None` on overflow.
    pub fn to_i64_rounded(&self) -> Option<i64> {
        let mut r = self.clone();
        r.round(0);
        r.strip();
        if r.weight > 4 {
            return None;
        }
        let mut acc: i128 = 0;
        for pos in (0..=r.weight).rev() {
            acc = acc * 10000 + i128::from(r.digit_at(pos));
        }
        if r.neg {
            acc = -acc;
        }
        i64::try_from(acc).ok()
    }

    /// Coefficient at `dscale` (value × 10^dscale) if it fits an i64.
    pub fn to_scaled_i64(&self) -> Option<i64> {
        if self.dscale < 0 || self.dscale > 40 {
            return None;
        }
        if self.is_zero() {
            return Some(0);
        }
        if self.weight > 5 {
            return None;
        }
        let mut acc: i128 = 0;
        let low = self.low_pos().min(0);
        for pos in (low..=self.weight.max(0)).rev() {
            acc = acc.checked_mul(10000)?.checked_add(i128::from(self.digit_at(pos)))?;
        }
        // acc is value × 10000^(-low); bring it to 10^dscale.
        let have = -low * DEC_DIGITS;
        if have >= self.dscale {
            acc /= 10i128.checked_pow((have - self.dscale) as u32)?;
        } else {
            acc = acc.checked_mul(10i128.checked_pow((self.dscale - have) as u32)?)?;
        }
        if self.neg {
            acc = -acc;
        }
        i64::try_from(acc).ok()
    }
}

/// Propagates carries through an accumulator of base-10000 positions.
fn normalize(acc: &mut [u64]) {
    let mut carry = 0u64;
    for d in acc.iter_mut().rev() {
        let s = *d + carry;
        *d = s % 10000;
        carry = s / 10000;
    }
    debug_assert_eq!(carry, 0);
}

/// Big-endian digits to a little-endian natural number.
pub(crate) fn to_nat(digits: &[u16]) -> Vec<u32> {
    let mut v: Vec<u32> = digits.iter().rev().map(|&d| u32::from(d)).collect();
    nat::trim(&mut v);
    v
}

/// A natural number times `NBASE^low_pos` as a positive var.
pub(crate) fn from_nat(n: &[u32], low_pos: i32) -> Var {
    let digits: Vec<u16> = n.iter().rev().map(|&d| d as u16).collect();
    let weight = low_pos + digits.len() as i32 - 1;
    let mut v = Var { neg: false, weight, dscale: 0, digits };
    v.strip();
    v
}
