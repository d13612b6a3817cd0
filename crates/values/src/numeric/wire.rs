//! Binary forms: PostgreSQL's numeric_send / numeric_recv format, and a
//! compact self-delimiting encoding for rows and WAL records.
//!
//! The protocol format must match PostgreSQL byte for byte because drivers
//! decode it themselves. The storage encoding only has to round-trip, so it
//! spends a few bytes on inline values and falls back to the protocol
//! format for long ones.

use snapscale_sqlstate::SqlState;

use super::repr::{Numeric, Repr, DSCALE_MAX};
use super::var::Var;
use crate::SqlError;

const SIGN_POS: u16 = 0x0000;
const SIGN_NEG: u16 = 0x4000;
const SIGN_NAN: u16 = 0xC000;
const SIGN_PINF: u16 = 0xD000;
const SIGN_NINF: u16 = 0xF000;

fn bad(msg: &str) -> SqlError {
    SqlError::new(SqlState::INVALID_BINARY_REPRESENTATION, msg)
}

fn short_message() -> SqlError {
    SqlError::new(SqlState::PROTOCOL_VIOLATION, "insufficient data left in message")
}

fn push16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}

impl Numeric {
    /// numeric_send: i16 ndigits, i16 weight, u16 sign, i16 dscale, then
    /// the base-10000 digits (leading and trailing zero digits stripped).
    pub fn to_wire(&self, out: &mut Vec<u8>) {
        let (sign, dscale) = match &self.0 {
            Repr::NaN => (SIGN_NAN, 0),
            // PostgreSQL reads the dscale of an infinity out of its short
            // header, where the sign bits leave 32.
            Repr::PosInf => (SIGN_PINF, 32),
            Repr::NegInf => (SIGN_NINF, 32),
            _ => {
                let v = self.finite_var();
                push16(out, v.digits.len() as u16);
                push16(out, v.weight as i16 as u16);
                push16(out, if v.neg { SIGN_NEG } else { SIGN_POS });
                push16(out, v.dscale as u16);
                for d in &v.digits {
                    push16(out, *d);
                }
                return;
            }
        };
        push16(out, 0);
        push16(out, 0);
        push16(out, sign);
        push16(out, dscale);
    }

    /// numeric_recv: validates like PostgreSQL (22P03 `invalid sign in
    /// external "numeric" value`, `invalid scale ...`, `invalid digit
    /// ...`), truncates digits hidden by the scale, and requires the buffer
    /// to hold exactly one value.
    pub fn from_wire(buf: &[u8]) -> Result<Numeric, SqlError> {
        let (n, used) = read_wire(buf)?;
        if used != buf.len() {
            return Err(bad("incorrect binary data format"));
        }
        Ok(n)
    }

    /// Appends the storage encoding: one tag byte, then for inline values
    /// the scale and a zig-zag varint coefficient, otherwise the protocol
    /// format.
    pub fn encode(&self, out: &mut Vec<u8>) {
        match &self.0 {
            Repr::NaN => out.push(0),
            Repr::PosInf => out.push(1),
            Repr::NegInf => out.push(2),
            Repr::Small { coef, dscale } => {
                out.push(3);
                put_varint(out, u64::from(*dscale));
                put_varint(out, ((coef << 1) ^ (coef >> 63)) as u64);
            }
            Repr::Big(_) => {
                out.push(4);
                self.to_wire(out);
            }
        }
    }

    /// Reads one value written by [`Numeric::encode`], returning it and the
    /// number of bytes it took.
    pub fn decode(buf: &[u8]) -> Result<(Numeric, usize), SqlError> {
        let corrupt = || bad("invalid numeric storage encoding");
        let tag = *buf.first().ok_or_else(corrupt)?;
        match tag {
            0 => Ok((Numeric::NAN, 1)),
            1 => Ok((Numeric::INFINITY, 1)),
            2 => Ok((Numeric::NEG_INFINITY, 1)),
            3 => {
                let (dscale, a) = get_varint(&buf[1..]).ok_or_else(corrupt)?;
                let (z, b) = get_varint(&buf[1 + a..]).ok_or_else(corrupt)?;
                if dscale > DSCALE_MAX as u64 {
                    return Err(corrupt());
                }
                let coef = ((z >> 1) as i64) ^ -((z & 1) as i64);
                Ok((Numeric(Repr::Small { coef, dscale: dscale as u16 }), 1 + a + b))
            }
            4 => {
                let (n, used) = read_wire(&buf[1..])?;
                Ok((n, 1 + used))
            }
            _ => Err(corrupt()),
        }
    }
}

/// Parses one protocol-format value from the front of `buf`.
fn read_wire(buf: &[u8]) -> Result<(Numeric, usize), SqlError> {
    let get = |i: usize| -> Result<u16, SqlError> {
        buf.get(2 * i..2 * i + 2).map(|b| u16::from_be_bytes([b[0], b[1]])).ok_or_else(short_message)
    };
    let ndigits = get(0)? as usize;
    let weight = get(1)? as i16;
    let sign = get(2)?;
    if ![SIGN_POS, SIGN_NEG, SIGN_NAN, SIGN_PINF, SIGN_NINF].contains(&sign) {
        return Err(bad("invalid sign in external \"numeric\" value"));
    }
    let dscale = get(3)?;
    if i32::from(dscale) & DSCALE_MAX != i32::from(dscale) {
        return Err(bad("invalid scale in external \"numeric\" value"));
    }
    let mut digits = Vec::with_capacity(ndigits);
    for i in 0..ndigits {
        let d = get(4 + i)? as i16;
        if !(0..10000).contains(&d) {
            return Err(bad("invalid digit in external \"numeric\" value"));
        }
        digits.push(d as u16);
    }
    let used = 8 + 2 * ndigits;
    let n = match sign {
        SIGN_NAN => Numeric::NAN,
        SIGN_PINF => Numeric::INFINITY,
        SIGN_NINF => Numeric::NEG_INFINITY,
        _ => {
            let mut v = Var { neg: sign == SIGN_NEG, weight: i32::from(weight), dscale: 0, digits };
            v.trunc(i32::from(dscale));
            Numeric::from_var(v)?
        }
    };
    Ok((n, used))
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(buf: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &b) in buf.iter().enumerate().take(10) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}
