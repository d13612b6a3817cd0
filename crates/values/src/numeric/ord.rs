//! Equality, ordering and hashing by value, as PostgreSQL's btree and hash
//! opclasses see numerics.
//!
//! Display scale does not take part (1.0 = 1.00, and they hash alike); NaN
//! equals NaN and sorts above +Infinity; -Infinity sorts below every
//! finite value. Hashing feeds the same digit stream for inline and boxed
//! forms so that equal values hash equally whatever their representation.

use std::cmp::Ordering;
use std::hash::{Hash, Hasher};

use super::repr::{Numeric, Repr};
use super::var::DEC_DIGITS;

/// Rank of the kinds of value, for comparisons involving specials.
fn rank(n: &Numeric) -> i8 {
    match n.0 {
        Repr::NegInf => 0,
        Repr::Small { .. } | Repr::Big(_) => 1,
        Repr::PosInf => 2,
        Repr::NaN => 3,
    }
}

impl Ord for Numeric {
    fn cmp(&self, other: &Numeric) -> Ordering {
        let (ra, rb) = (rank(self), rank(other));
        if ra != 1 || rb != 1 {
            return ra.cmp(&rb);
        }
        if let (Repr::Small { coef: a, dscale: da }, Repr::Small { coef: b, dscale: db }) =
            (&self.0, &other.0)
        {
            if da == db {
                return a.cmp(b);
            }
            let diff = u32::from(da.abs_diff(*db));
            if diff <= 18 {
                let p = 10i128.pow(diff);
                let (a, b) = (i128::from(*a), i128::from(*b));
                return if da < db { (a * p).cmp(&b) } else { a.cmp(&(b * p)) };
            }
        }
        self.finite_var().cmp(&other.finite_var())
    }
}

impl PartialOrd for Numeric {
    fn partial_cmp(&self, other: &Numeric) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Numeric {
    fn eq(&self, other: &Numeric) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Numeric {}

impl Hash for Numeric {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match &self.0 {
            Repr::NaN => state.write_u8(3),
            Repr::PosInf => state.write_u8(2),
            Repr::NegInf => state.write_u8(4),
            Repr::Small { coef, dscale } => {
                if *coef == 0 {
                    state.write_u8(0);
                    return;
                }
                let mut m = coef.unsigned_abs();
                let mut zeros: i64 = 0;
                while m % 10 == 0 {
                    m /= 10;
                    zeros += 1;
                }
                let mut buf = [0u8; 20];
                let mut n = 0;
                while m > 0 {
                    buf[n] = (m % 10) as u8;
                    m /= 10;
                    n += 1;
                }
                state.write_u8(if *coef < 0 { 5 } else { 1 });
                state.write_i64(n as i64 - 1 + zeros - i64::from(*dscale));
                for &d in buf[..n].iter().rev() {
                    state.write_u8(d);
                }
            }
            Repr::Big(v) => {
                if v.digits.is_empty() {
                    state.write_u8(0);
                    return;
                }
                let mut dec: Vec<u8> = Vec::with_capacity(v.digits.len() * 4);
                for d in &v.digits {
                    let d = *d;
                    dec.extend_from_slice(&[
                        (d / 1000) as u8,
                        (d / 100 % 10) as u8,
                        (d / 10 % 10) as u8,
                        (d % 10) as u8,
                    ]);
                }
                let lead = dec.iter().take_while(|&&d| d == 0).count();
                while dec.last() == Some(&0) {
                    dec.pop();
                }
                let top = i64::from(v.weight) * i64::from(DEC_DIGITS) + 3 - lead as i64;
                state.write_u8(if v.neg { 5 } else { 1 });
                state.write_i64(top);
                for &d in &dec[lead..] {
                    state.write_u8(d);
                }
            }
        }
    }
}
