//! Unsigned big integers in base 10000, little-endian limbs.
//!
//! Exact division and square roots need whole-number arithmetic on
//! arbitrarily long digit strings; keeping the limbs in the same base as
//! [`super::var::Var`]'s digits makes moving between the two a copy.

use std::cmp::Ordering;

/// The limb base, equal to the base of `Var` digits.
pub(crate) const BASE: u32 = 10000;

/// Drops high zero limbs so that comparisons by length are valid.
pub(crate) fn trim(a: &mut Vec<u32>) {
    while a.last() == Some(&0) {
        a.pop();
    }
}

/// Compares two trimmed numbers.
pub(crate) fn cmp(a: &[u32], b: &[u32]) -> Ordering {
    if a.len() != b.len() {
        return a.len().cmp(&b.len());
    }
    for i in (0..a.len()).rev() {
        if a[i] != b[i] {
            return a[i].cmp(&b[i]);
        }
    }
    Ordering::Equal
}

/// `a + b`.
pub(crate) fn add(a: &[u32], b: &[u32]) -> Vec<u32> {
    let (long, short) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    let mut out = Vec::with_capacity(long.len() + 1);
    let mut carry = 0;
    for (i, &x) in long.iter().enumerate() {
        let s = x + short.get(i).copied().unwrap_or(0) + carry;
        carry = u32::from(s >= BASE);
        out.push(if s >= BASE { s - BASE } else { s });
    }
    if carry > 0 {
        out.push(carry);
    }
    out
}

/// `a * m` for a small multiplier.
fn mul_small(a: &[u32], m: u32) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + 1);
    let mut carry: u64 = 0;
    for &x in a {
        let p = u64::from(x) * u64::from(m) + carry;
        out.push((p % u64::from(BASE)) as u32);
        carry = p / u64::from(BASE);
    }
    while carry > 0 {
        out.push((carry % u64::from(BASE)) as u32);
        carry /= u64::from(BASE);
    }
    trim(&mut out);
    out
}

/// `a / d` and `a % d` for a small divisor.
pub(crate) fn divmod_small(a: &[u32], d: u32) -> (Vec<u32>, u32) {
    let mut q = vec![0; a.len()];
    let mut rem: u64 = 0;
    for i in (0..a.len()).rev() {
        let cur = rem * u64::from(BASE) + u64::from(a[i]);
        q[i] = (cur / u64::from(d)) as u32;
        rem = cur % u64::from(d);
    }
    trim(&mut q);
    (q, rem as u32)
}

/// Floor division `u / v` (Knuth's algorithm D); `v` must be non-zero.
pub(crate) fn div(u: &[u32], v: &[u32]) -> Vec<u32> {
    let mut v = v.to_vec();
    trim(&mut v);
    let mut u = u.to_vec();
    trim(&mut u);
    assert!(!v.is_empty(), "division by zero in nat::div");
    if cmp(&u, &v) == Ordering::Less {
        return Vec::new();
    }
    if v.len() == 1 {
        return divmod_small(&u, v[0]).0;
    }
    // Normalise so the divisor's top limb is at least BASE / 2.
    let d = BASE / (v[v.len() - 1] + 1);
    let v = mul_small(&v, d);
    let mut u = mul_small(&u, d);
    let n = v.len();
    u.push(0);
    let m = u.len() - n - 1;
    let base = i64::from(BASE);
    let vtop = i64::from(v[n - 1]);
    let vnext = i64::from(v[n - 2]);
    let mut q = vec![0u32; m + 1];
    for j in (0..=m).rev() {
        let num = i64::from(u[j + n]) * base + i64::from(u[j + n - 1]);
        let mut qhat = num / vtop;
        let mut rhat = num % vtop;
        while qhat >= base || qhat * vnext > rhat * base + i64::from(u[j + n - 2]) {
            qhat -= 1;
            rhat += vtop;
            if rhat >= base {
                break;
            }
        }
        // Multiply and subtract.
        let mut borrow: i64 = 0;
        let mut carry: i64 = 0;
        for i in 0..n {
            let p = qhat * i64::from(v[i]) + carry;
            carry = p / base;
            let t = i64::from(u[i + j]) - (p % base) - borrow;
            if t < 0 {
                u[i + j] = (t + base) as u32;
                borrow = 1;
            } else {
                u[i + j] = t as u32;
                borrow = 0;
            }
        }
        let t = i64::from(u[j + n]) - carry - borrow;
        if t < 0 {
            u[j + n] = (t + base) as u32;
            // Add back: qhat was one too large.
            qhat -= 1;
            let mut c = 0;
            for i in 0..n {
                let s = u[i + j] + v[i] + c;
                c = u32::from(s >= BASE);
                u[i + j] = if s >= BASE { s - BASE } else { s };
            }
            u[j + n] = (u[j + n] + c) % BASE;
        } else {
            u[j + n] = t as u32;
        }
        q[j] = qhat as u32;
    }
    trim(&mut q);
    q
}

/// Floor of the square root of `m`.
pub(crate) fn isqrt(m: &[u32]) -> Vec<u32> {
    let mut m = m.to_vec();
    trim(&mut m);
    if m.is_empty() {
        return m;
    }
    let x = sqrt_overestimate(&m);
    newton_sqrt(&m, x)
}

/// A value not below the square root of `m` and close to it: from floating
/// point for short inputs, else from the root of `m`'s upper half, so that
/// Newton's iteration needs only a step or two at full length.
fn sqrt_overestimate(m: &[u32]) -> Vec<u32> {
    let len = m.len();
    if len <= 4 {
        let mut top = 0f64;
        for &d in m.iter().rev() {
            top = top * f64::from(BASE) + f64::from(d);
        }
        let mut g = ((top.sqrt() * (1.0 + 1e-12)).ceil() + 1.0) as u64;
        let mut out = Vec::new();
        while g > 0 {
            out.push((g % u64::from(BASE)) as u32);
            g /= u64::from(BASE);
        }
        return out;
    }
    // sqrt(m) <= (isqrt(m / B^2k) + 1) * B^k.
    let k = len / 4;
    let high = newton_sqrt(&m[2 * k..], sqrt_overestimate(&m[2 * k..]));
    let mut out = vec![0u32; k];
    out.extend(add(&high, &[1]));
    out
}

/// Newton's iteration for the integer square root from an overestimate.
fn newton_sqrt(m: &[u32], mut x: Vec<u32>) -> Vec<u32> {
    loop {
        let y = divmod_small(&add(&x, &div(m, &x)), 2).0;
        if cmp(&y, &x) != Ordering::Less {
            return x;
        }
        x = y;
    }
}
