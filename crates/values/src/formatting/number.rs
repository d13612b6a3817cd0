//! Number templates: `to_char` for numeric, bigint, integer, real and
//! double precision, and `to_number`.
//!
//! PostgreSQL formats in two steps, and so does this module: each type
//! first turns its value into a digit string rounded to the template's
//! fractional digits (or `#` fill when the integer part does not fit, a
//! Roman numeral, or scientific notation), then one processor walks the
//! template placing digits, signs, separators and literal text. The
//! processor is a close model of PostgreSQL's, including its quirks (a
//! sign written in the first digit position that is not padding, `FM`
//! trimming trailing fractional zeros, a NUL from `SG` with `RN` cutting
//! the text short), because callers compare output byte for byte.

use snapscale_sqlstate::SqlState;

use super::names::{ordinal_suffix, roman};
use super::template::{parse_number, Node, NumKey};
use crate::numeric::Numeric;
use crate::SqlError;

const F_DECIMAL: u32 = 1 << 1;
const F_LDECIMAL: u32 = 1 << 2;
const F_ZERO: u32 = 1 << 3;
const F_BLANK: u32 = 1 << 4;
const F_FILLMODE: u32 = 1 << 5;
const F_LSIGN: u32 = 1 << 6;
const F_BRACKET: u32 = 1 << 7;
const F_MINUS: u32 = 1 << 8;
const F_PLUS: u32 = 1 << 9;
const F_ROMAN: u32 = 1 << 10;
const F_MULTI: u32 = 1 << 11;
const F_PLUS_POST: u32 = 1 << 12;
const F_MINUS_POST: u32 = 1 << 13;
const F_EEEE: u32 = 1 << 14;

const LSIGN_PRE: i32 = -1;
const LSIGN_POST: i32 = 1;
const LSIGN_NONE: i32 = 0;

/// What a number template asks for, gathered while it is parsed.
#[derive(Clone, Debug, Default)]
struct Desc {
    /// Digit positions before and after the decimal point.
    pre: i32,
    post: i32,
    lsign: i32,
    flag: u32,
    pre_lsign_num: i32,
    /// Digits after `V` (the power of ten to scale by).
    multi: i32,
    zero_start: i32,
    zero_end: i32,
}

impl Desc {
    fn has(&self, f: u32) -> bool {
        self.flag & f != 0
    }
}

fn syntax(msg: &str) -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, msg)
}

impl Desc {
    /// Records one keyword, rejecting the combinations PostgreSQL rejects.
    fn add(&mut self, key: NumKey) -> Result<(), SqlError> {
        if self.has(F_EEEE) && key != NumKey::E {
            return Err(syntax("\"EEEE\" must be the last pattern used"));
        }
        match key {
            NumKey::Nine => {
                if self.has(F_BRACKET) {
                    return Err(syntax("\"9\" must be ahead of \"PR\""));
                }
                if self.has(F_MULTI) {
                    self.multi += 1;
                } else if self.has(F_DECIMAL) {
                    self.post += 1;
                } else {
                    self.pre += 1;
                }
            }
            NumKey::Zero => {
                if self.has(F_BRACKET) {
                    return Err(syntax("\"0\" must be ahead of \"PR\""));
                }
                if !self.has(F_ZERO) && !self.has(F_DECIMAL) {
                    self.flag |= F_ZERO;
                    self.zero_start = self.pre + 1;
                }
                if !self.has(F_DECIMAL) {
                    self.pre += 1;
                } else {
                    self.post += 1;
                }
                self.zero_end = self.pre + self.post;
            }
            NumKey::B if self.pre == 0 && self.post == 0 && !self.has(F_ZERO) => self.flag |= F_BLANK,
            NumKey::D | NumKey::Dec => {
                if key == NumKey::D {
                    self.flag |= F_LDECIMAL;
                }
                if self.has(F_DECIMAL) {
                    return Err(syntax("multiple decimal points"));
                }
                if self.has(F_MULTI) {
                    return Err(syntax("cannot use \"V\" and decimal point together"));
                }
                self.flag |= F_DECIMAL;
            }
            NumKey::Fm => self.flag |= F_FILLMODE,
            NumKey::S => {
                if self.has(F_LSIGN) {
                    return Err(syntax("cannot use \"S\" twice"));
                }
                if self.has(F_PLUS) || self.has(F_MINUS) || self.has(F_BRACKET) {
                    return Err(syntax("cannot use \"S\" and \"PL\"/\"MI\"/\"SG\"/\"PR\" together"));
                }
                if !self.has(F_DECIMAL) {
                    self.lsign = LSIGN_PRE;
                    self.pre_lsign_num = self.pre;
                    self.flag |= F_LSIGN;
                } else if self.lsign == LSIGN_NONE {
                    self.lsign = LSIGN_POST;
                    self.flag |= F_LSIGN;
                }
            }
            NumKey::Mi => {
                if self.has(F_LSIGN) {
                    return Err(syntax("cannot use \"S\" and \"MI\" together"));
                }
                self.flag |= F_MINUS;
                if self.has(F_DECIMAL) {
                    self.flag |= F_MINUS_POST;
                }
            }
            NumKey::Pl => {
                if self.has(F_LSIGN) {
                    return Err(syntax("cannot use \"S\" and \"PL\" together"));
                }
                self.flag |= F_PLUS;
                if self.has(F_DECIMAL) {
                    self.flag |= F_PLUS_POST;
                }
            }
            NumKey::Sg => {
                if self.has(F_LSIGN) {
                    return Err(syntax("cannot use \"S\" and \"SG\" together"));
                }
                self.flag |= F_MINUS | F_PLUS;
            }
            NumKey::Pr => {
                if self.has(F_LSIGN) || self.has(F_PLUS) || self.has(F_MINUS) {
                    return Err(syntax("cannot use \"PR\" and \"S\"/\"PL\"/\"MI\"/\"SG\" together"));
                }
                self.flag |= F_BRACKET;
            }
            NumKey::RnUpper | NumKey::RnLower => self.flag |= F_ROMAN,
            NumKey::V => {
                if self.has(F_DECIMAL) {
                    return Err(syntax("cannot use \"V\" and decimal point together"));
                }
                self.flag |= F_MULTI;
            }
            NumKey::E => {
                if self.has(F_EEEE) {
                    return Err(syntax("cannot use \"EEEE\" twice"));
                }
                if self.flag
                    & (F_BLANK | F_FILLMODE | F_LSIGN | F_BRACKET | F_MINUS | F_PLUS | F_ROMAN | F_MULTI)
                    != 0
                {
                    return Err(syntax("\"EEEE\" is incompatible with other formats").with_detail(
                        "\"EEEE\" may only be used together with digit and decimal point patterns.",
                    ));
                }
                self.flag |= F_EEEE;
            }
            _ => {}
        }
        Ok(())
    }
}

/// A parsed number template.
struct Template {
    nodes: Vec<Node<NumKey>>,
    desc: Desc,
}

fn compile(fmt: &str) -> Result<Template, SqlError> {
    let mut desc = Desc::default();
    let nodes = parse_number(fmt, |k| desc.add(k))?;
    Ok(Template { nodes, desc })
}

/// The digit string a value contributes, with its sign and padding.
struct Prepared {
    /// Digits (and point), `#` fill, a Roman numeral or EEEE text.
    number: Vec<u8>,
    /// Blank digit positions before the first digit.
    out_pre_spaces: i32,
    /// b'+', b'-' or 0 (Roman numerals).
    sign: u8,
}

/// `pre` `#`s, a point, `post` `#`s: the integer part did not fit.
fn overflow_fill(pre: i32, post: i32) -> Vec<u8> {
    let mut v = vec![b'#'; (pre + post + 1).max(0) as usize];
    if let Some(p) = v.get_mut(pre.max(0) as usize) {
        *p = b'.';
    }
    v
}

/// Fill for EEEE when the value has no finite digits (NaN, infinity).
fn eeee_fill(pre: i32, post: i32) -> Vec<u8> {
    let mut v = vec![b'#'; (pre + post + 6).max(0) as usize];
    if let Some(p) = v.first_mut() {
        *p = b' ';
    }
    if let Some(p) = v.get_mut((pre + 1).max(0) as usize) {
        *p = b'.';
    }
    v
}

/// Splits off the sign of a plain decimal text and pads or overflows it
/// against the template's digit positions.
fn place(text: &str, pre: i32, post: i32) -> Prepared {
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => (b'-', rest),
        None => (b'+', text),
    };
    let pre_len = digits.find('.').unwrap_or(digits.len()) as i32;
    if pre_len < pre {
        Prepared { number: digits.as_bytes().to_vec(), out_pre_spaces: pre - pre_len, sign }
    } else if pre_len > pre {
        Prepared { number: overflow_fill(pre, post), out_pre_spaces: 0, sign }
    } else {
        Prepared { number: digits.as_bytes().to_vec(), out_pre_spaces: 0, sign }
    }
}

/// An integer's text with `post` zeros after a point, placed.
fn place_integer(text: String, pre: i32, post: i32) -> Prepared {
    let (neg, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest.to_owned()),
        None => (false, text),
    };
    let pre_len = digits.len() as i32;
    let mut number = digits;
    if post > 0 {
        number.push('.');
        number.push_str(&"0".repeat(post as usize));
    }
    let sign = if neg { b'-' } else { b'+' };
    if pre_len < pre {
        Prepared { number: number.into_bytes(), out_pre_spaces: pre - pre_len, sign }
    } else if pre_len > pre {
        Prepared { number: overflow_fill(pre, post), out_pre_spaces: 0, sign }
    } else {
        Prepared { number: number.into_bytes(), out_pre_spaces: 0, sign }
    }
}

/// Scientific notation of a numeric with `scale` fractional digits in the
/// significand (`1.23e+04`), as PostgreSQL's `numeric_out_sci`: the
/// significand is rounded half away from zero and may reach 10.
pub(super) fn numeric_sci(v: &Numeric, scale: i32) -> Result<String, SqlError> {
    if v.is_nan() {
        return Ok("NaN".into());
    }
    if v.is_infinite() {
        return Ok(if v.to_string().starts_with('-') { "-Infinity" } else { "Infinity" }.into());
    }
    let scale = scale.max(0);
    let text = v.to_string();
    let (neg, abs) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.as_str()),
    };
    let (int, frac) = abs.split_once('.').unwrap_or((abs, ""));
    let digits: String = format!("{int}{frac}");
    let exponent = match digits.bytes().position(|b| b != b'0') {
        Some(first) => int.len() as i64 - 1 - first as i64,
        None => 0,
    };
    // Move the point `exponent` places left: value = digits * 10^-(frac.len()).
    let mut shifted = String::new();
    if neg {
        shifted.push('-');
    }
    let point = int.len() as i64 - exponent; // position of the point in `digits`
    if point <= 0 {
        shifted.push_str("0.");
        shifted.push_str(&"0".repeat((-point) as usize));
        shifted.push_str(&digits);
    } else if point as usize >= digits.len() {
        shifted.push_str(&digits);
        shifted.push_str(&"0".repeat(point as usize - digits.len()));
    } else {
        shifted.push_str(&digits[..point as usize]);
        shifted.push('.');
        shifted.push_str(&digits[point as usize..]);
    }
    let sig = Numeric::parse(&shifted)?.round(scale)?;
    Ok(format!("{sig}e{}{:02}", if exponent < 0 { '-' } else { '+' }, exponent.abs()))
}

/// PostgreSQL's `%+.*e` (its own snprintf): a sign always, at least two
/// exponent digits. Only finite values reach it.
fn c_exp(v: f64, prec: usize) -> String {
    let s = format!("{v:+.prec$e}");
    let (mant, exp) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = exp.parse().unwrap_or(0);
    format!("{mant}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

/// PostgreSQL's `%.*f` (its own snprintf, which spells the special
/// values `NaN`, `Infinity` and `-Infinity`).
fn c_fixed(v: f64, prec: usize) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-Infinity".into() } else { "Infinity".into() };
    }
    format!("{v:.prec$}")
}

/// `(int) rint(v)` as x86-64 computes it: out-of-range values and NaN
/// become INT_MIN.
fn rint_to_i32(v: f64) -> i32 {
    let r = v.round_ties_even();
    if r.is_nan() || r < f64::from(i32::MIN) || r > f64::from(i32::MAX) {
        i32::MIN
    } else {
        r as i32
    }
}

/// Float formatting shared by real and double precision: `digits` is
/// FLT_DIG or DBL_DIG, `val` the (already scaled) value.
fn prepare_float(val: f64, desc: &mut Desc, digits: i32) -> Prepared {
    let int_len = c_fixed(val.abs(), 0).len() as i32;
    if int_len >= digits {
        desc.post = 0;
    } else if int_len + desc.post > digits {
        desc.post = digits - int_len;
    }
    place(&c_fixed(val, desc.post as usize), desc.pre, desc.post)
}

/// The float EEEE text (`#` fill for NaN and infinities).
fn float_eeee(v: f64, desc: &Desc) -> Prepared {
    let number = if v.is_nan() || v.is_infinite() {
        eeee_fill(desc.pre, desc.post)
    } else {
        let mut s = c_exp(v, desc.post as usize).into_bytes();
        if s[0] == b'+' {
            s[0] = b' ';
        }
        s
    };
    Prepared { number, out_pre_spaces: 0, sign: 0 }
}

fn formats(
    fmt: &str,
    prepare: impl FnOnce(&mut Desc) -> Result<Prepared, SqlError>,
) -> Result<String, SqlError> {
    if fmt.is_empty() {
        return Ok(String::new());
    }
    let mut t = compile(fmt)?;
    let p = prepare(&mut t.desc)?;
    to_char_process(&t.nodes, &mut t.desc, p)
}

/// `to_char(numeric, text)`.
pub fn to_char_numeric(value: &Numeric, fmt: &str) -> Result<String, SqlError> {
    formats(fmt, |desc| {
        if desc.has(F_ROMAN) {
            let n = value.round(0)?.to_i32()?;
            return Ok(Prepared { number: roman(i64::from(n)).into_bytes(), out_pre_spaces: 0, sign: 0 });
        }
        if desc.has(F_EEEE) {
            let s = numeric_sci(value, desc.post)?;
            let number = if !value.is_finite() {
                eeee_fill(desc.pre, desc.post)
            } else if let Some(rest) = s.strip_prefix('-') {
                format!("-{rest}").into_bytes()
            } else {
                format!(" {s}").into_bytes()
            };
            return Ok(Prepared { number, out_pre_spaces: 0, sign: 0 });
        }
        let mut val = value.clone();
        if desc.has(F_MULTI) {
            let scale = Numeric::from(10i64).pow(&Numeric::from(desc.multi))?;
            val = val.mul(&scale)?;
            desc.pre += desc.multi;
        }
        let rounded = val.round(desc.post)?;
        Ok(place(&rounded.to_string(), desc.pre, desc.post))
    })
}

/// `to_char(bigint, text)`.
pub fn to_char_i64(value: i64, fmt: &str) -> Result<String, SqlError> {
    formats(fmt, |desc| {
        if desc.has(F_ROMAN) {
            let n = i32::try_from(value).map_err(|_| SqlError::out_of_range("integer"))?;
            return Ok(Prepared { number: roman(i64::from(n)).into_bytes(), out_pre_spaces: 0, sign: 0 });
        }
        if desc.has(F_EEEE) {
            let s = numeric_sci(&Numeric::from(value), desc.post)?;
            let number = if s.starts_with('-') { s } else { format!(" {s}") }.into_bytes();
            return Ok(Prepared { number, out_pre_spaces: 0, sign: 0 });
        }
        let mut v = value;
        if desc.has(F_MULTI) {
            let multi = 10f64.powf(f64::from(desc.multi));
            if multi.is_nan() || multi >= 9_223_372_036_854_775_808.0 {
                return Err(SqlError::out_of_range("bigint"));
            }
            v = v
                .checked_mul(multi.round_ties_even() as i64)
                .ok_or_else(|| SqlError::out_of_range("bigint"))?;
            desc.pre += desc.multi;
        }
        Ok(place_integer(v.to_string(), desc.pre, desc.post))
    })
}

/// `to_char(integer, text)` (differs from bigint in EEEE rounding, which
/// goes through double precision, and in `V` overflow, which wraps).
pub fn to_char_i32(value: i32, fmt: &str) -> Result<String, SqlError> {
    formats(fmt, |desc| {
        if desc.has(F_ROMAN) {
            return Ok(Prepared { number: roman(i64::from(value)).into_bytes(), out_pre_spaces: 0, sign: 0 });
        }
        if desc.has(F_EEEE) {
            return Ok(float_eeee(f64::from(value), desc));
        }
        let mut v = value;
        if desc.has(F_MULTI) {
            let m = 10f64.powf(f64::from(desc.multi));
            let m = if m >= 2_147_483_648.0 || m.is_nan() { i32::MIN } else { m as i32 };
            v = v.wrapping_mul(m);
            desc.pre += desc.multi;
        }
        Ok(place_integer(v.to_string(), desc.pre, desc.post))
    })
}

/// `to_char(double precision, text)`.
pub fn to_char_f64(value: f64, fmt: &str) -> Result<String, SqlError> {
    formats(fmt, |desc| {
        if desc.has(F_ROMAN) {
            return Ok(Prepared {
                number: roman(i64::from(rint_to_i32(value))).into_bytes(),
                out_pre_spaces: 0,
                sign: 0,
            });
        }
        if desc.has(F_EEEE) {
            return Ok(float_eeee(value, desc));
        }
        let mut val = value;
        if desc.has(F_MULTI) {
            val = value * 10f64.powf(f64::from(desc.multi));
            desc.pre += desc.multi;
        }
        Ok(prepare_float(val, desc, 15))
    })
}

/// `to_char(real, text)`.
pub fn to_char_f32(value: f32, fmt: &str) -> Result<String, SqlError> {
    formats(fmt, |desc| {
        if desc.has(F_ROMAN) {
            return Ok(Prepared {
                number: roman(i64::from(rint_to_i32(f64::from(value)))).into_bytes(),
                out_pre_spaces: 0,
                sign: 0,
            });
        }
        if desc.has(F_EEEE) {
            return Ok(float_eeee(f64::from(value), desc));
        }
        let mut val = value;
        if desc.has(F_MULTI) {
            let multi = 10f64.powf(f64::from(desc.multi)) as f32;
            val = value * multi;
            desc.pre += desc.multi;
        }
        Ok(prepare_float(f64::from(val), desc, 6))
    })
}

/// The processor's state while writing.
struct Writer<'a> {
    desc: &'a mut Desc,
    number: Vec<u8>,
    /// Index of the next character of `number` to place.
    np: usize,
    out: Vec<u8>,
    sign: u8,
    sign_wrote: bool,
    num_count: i32,
    num_in: bool,
    num_curr: i32,
    out_pre_spaces: i32,
    last_relevant: Option<usize>,
}

impl Writer<'_> {
    /// `number[i]`, or NUL past its end (it is a C string there).
    fn num_at(&self, i: usize) -> u8 {
        self.number.get(i).copied().unwrap_or(0)
    }

    fn last_relevant_is_point(&self) -> bool {
        self.last_relevant.is_some_and(|i| self.num_at(i) == b'.')
    }

    /// PostgreSQL's IS_PREDEC_SPACE: a lone leading zero printed as blank.
    fn predec_space(&self) -> bool {
        !self.desc.has(F_ZERO) && self.np == 0 && self.num_at(0) == b'0' && self.desc.post != 0
    }

    /// One digit position (9, 0, D or the point).
    fn digit(&mut self, key: NumKey) {
        if self.desc.has(F_ROMAN) {
            return;
        }
        self.num_in = false;
        if !self.sign_wrote
            && (self.num_curr >= self.out_pre_spaces
                || (self.desc.has(F_ZERO) && self.desc.zero_start == self.num_curr))
            && (!self.predec_space() || self.last_relevant_is_point())
        {
            if self.desc.has(F_LSIGN) {
                if self.desc.lsign == LSIGN_PRE {
                    self.out.push(if self.sign == b'-' { b'-' } else { b'+' });
                    self.sign_wrote = true;
                }
            } else if self.desc.has(F_BRACKET) {
                self.out.push(if self.sign == b'+' { b' ' } else { b'<' });
                self.sign_wrote = true;
            } else if self.sign == b'+' {
                if !self.desc.has(F_FILLMODE) {
                    self.out.push(b' ');
                }
                self.sign_wrote = true;
            } else if self.sign == b'-' {
                self.out.push(b'-');
                self.sign_wrote = true;
            }
        }

        if self.num_curr < self.out_pre_spaces
            && (self.desc.zero_start > self.num_curr || !self.desc.has(F_ZERO))
        {
            if !self.desc.has(F_FILLMODE) {
                self.out.push(b' ');
            }
        } else if self.desc.has(F_ZERO)
            && self.num_curr < self.out_pre_spaces
            && self.desc.zero_start <= self.num_curr
        {
            self.out.push(b'0');
            self.num_in = true;
        } else {
            if self.num_at(self.np) == b'.' {
                if !self.last_relevant_is_point() || self.desc.has(F_FILLMODE) {
                    self.out.push(b'.');
                }
            } else if self.last_relevant.is_some_and(|lr| self.np > lr) && key != NumKey::Zero {
                // trailing fractional zero dropped by FM
            } else if self.predec_space() {
                if !self.desc.has(F_FILLMODE) {
                    self.out.push(b' ');
                } else if self.last_relevant_is_point() {
                    self.out.push(b'0');
                }
            } else {
                let c = self.num_at(self.np);
                self.out.push(c);
                self.num_in = true;
            }
            if self.np < self.number.len() {
                self.np += 1;
            }
        }

        let mut end =
            self.num_count + i32::from(self.out_pre_spaces != 0) + i32::from(self.desc.has(F_DECIMAL));
        if self.last_relevant == Some(self.np) {
            end = self.num_curr;
        }
        if self.num_curr + 1 == end {
            if self.sign_wrote && self.desc.has(F_BRACKET) {
                self.out.push(if self.sign == b'+' { b' ' } else { b'>' });
            } else if self.desc.has(F_LSIGN) && self.desc.lsign == LSIGN_POST {
                self.out.push(if self.sign == b'-' { b'-' } else { b'+' });
            }
        }
        self.num_curr += 1;
    }
}

/// Index of the last non-zero fractional digit (or of the point when the
/// fraction is all zeros); `None` without a point.
fn last_relevant_decimal(num: &[u8]) -> Option<usize> {
    let p = num.iter().position(|&b| b == b'.')?;
    let mut result = p;
    for (i, &b) in num.iter().enumerate().skip(p + 1) {
        if b != b'0' {
            result = i;
        }
    }
    Some(result)
}

/// Walks the template writing `p` into text.
fn to_char_process(nodes: &[Node<NumKey>], desc: &mut Desc, p: Prepared) -> Result<String, SqlError> {
    if desc.zero_start != 0 {
        desc.zero_start -= 1;
    }
    if desc.has(F_EEEE) {
        return Ok(String::from_utf8_lossy(&p.number).into_owned());
    }
    let mut out_pre_spaces = p.out_pre_spaces;
    if desc.has(F_ROMAN) {
        desc.lsign = 0;
        desc.pre_lsign_num = 0;
        desc.post = 0;
        desc.pre = 0;
        out_pre_spaces = 0;
        desc.flag = (desc.flag & F_FILLMODE) | F_ROMAN;
    }
    let sign = p.sign;
    let sign_wrote;
    if desc.has(F_PLUS) || desc.has(F_MINUS) {
        sign_wrote = !desc.has(F_PLUS) || desc.has(F_MINUS);
    } else {
        if sign != b'-' {
            if desc.has(F_BRACKET) && desc.has(F_FILLMODE) {
                desc.flag &= !F_BRACKET;
            }
        } else if desc.has(F_PLUS) {
            desc.flag &= !F_PLUS;
        }
        sign_wrote = sign == b'+' && desc.has(F_FILLMODE) && !desc.has(F_LSIGN);
        if desc.lsign == LSIGN_PRE && desc.pre == desc.pre_lsign_num {
            desc.lsign = LSIGN_POST;
        }
    }
    let mut num_count = desc.post + desc.pre - 1;
    let mut last_relevant = None;
    if desc.has(F_FILLMODE) && desc.has(F_DECIMAL) {
        last_relevant = last_relevant_decimal(&p.number);
        if let Some(lr) = last_relevant {
            if desc.zero_end > out_pre_spaces {
                let last_zero = (p.number.len() as i32 - 1).min(desc.zero_end - out_pre_spaces);
                if (lr as i32) < last_zero {
                    last_relevant = Some(last_zero as usize);
                }
            }
        }
    }
    if !sign_wrote && out_pre_spaces == 0 {
        num_count += 1;
    }
    let number = p.number;
    let mut w = Writer {
        desc,
        number,
        np: 0,
        out: Vec::new(),
        sign,
        sign_wrote,
        num_count,
        num_in: false,
        num_curr: 0,
        out_pre_spaces,
        last_relevant,
    };
    for node in nodes {
        let key = match node {
            Node::Action(k, _) => *k,
            Node::Char(c) | Node::Separator(c) | Node::Space(c) => {
                w.out.extend_from_slice(c.as_bytes());
                continue;
            }
        };
        let fill = w.desc.has(F_FILLMODE);
        match key {
            NumKey::Nine | NumKey::Zero | NumKey::Dec | NumKey::D => w.digit(key),
            NumKey::Comma | NumKey::G => {
                if w.num_in {
                    w.out.push(b',');
                } else if !fill {
                    w.out.push(b' ');
                }
            }
            NumKey::L => w.out.push(b' '),
            NumKey::RnUpper | NumKey::RnLower => {
                let mut s = w.number[w.np.min(w.number.len())..].to_vec();
                if key == NumKey::RnLower {
                    s.make_ascii_lowercase();
                }
                if !fill && s.len() < 15 {
                    w.out.extend(std::iter::repeat_n(b' ', 15 - s.len()));
                }
                w.out.extend_from_slice(&s);
            }
            NumKey::ThUpper | NumKey::ThLower => {
                if w.desc.has(F_ROMAN) || w.num_at(0) == b'#' || w.sign == b'-' || w.desc.has(F_DECIMAL) {
                    continue;
                }
                let th = ordinal_suffix(&w.number, key == NumKey::ThUpper)?;
                w.out.extend_from_slice(th.as_bytes());
            }
            NumKey::Mi => {
                if w.sign == b'-' {
                    w.out.push(b'-');
                } else if !fill {
                    w.out.push(b' ');
                }
            }
            NumKey::Pl => {
                if w.sign == b'+' {
                    w.out.push(b'+');
                } else if !fill {
                    w.out.push(b' ');
                }
            }
            NumKey::Sg => w.out.push(w.sign),
            _ => {}
        }
    }
    // The C text ends at the first NUL (SG writes one for Roman numerals,
    // and digits past the end of the number string are NULs).
    let end = w.out.iter().position(|&b| b == 0).unwrap_or(w.out.len());
    w.out.truncate(end);
    Ok(String::from_utf8_lossy(&w.out).into_owned())
}

/// `to_number(text, text)`: `None` (SQL NULL) for an empty template.
pub fn to_number(text: &str, fmt: &str) -> Result<Option<Numeric>, SqlError> {
    if fmt.is_empty() {
        return Ok(None);
    }
    let mut t = compile(fmt)?;
    let desc = &mut t.desc;
    if desc.zero_start != 0 {
        desc.zero_start -= 1;
    }
    if desc.has(F_EEEE) {
        return Err(SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, "\"EEEE\" not supported for input"));
    }
    if desc.has(F_ROMAN) {
        return Err(SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, "\"RN\" not supported for input"));
    }
    let mut r = Reader {
        desc,
        input: text.as_bytes(),
        ip: 0,
        number: vec![b' '],
        read_dec: false,
        read_post: 0,
        read_pre: 0,
    };
    for node in &t.nodes {
        if r.ip >= r.input.len() {
            break;
        }
        let key = match node {
            Node::Action(k, _) => *k,
            _ => {
                r.ip += super::template::char_len(r.at(r.ip)).min(r.input.len() - r.ip);
                continue;
            }
        };
        let fill = r.desc.has(F_FILLMODE);
        match key {
            NumKey::Nine | NumKey::Zero | NumKey::Dec | NumKey::D => r.numpart(key),
            NumKey::Comma | NumKey::G => {
                // num_in is never set while reading, so FM skips these.
                if fill || r.at(r.ip) != b',' {
                    continue;
                }
            }
            NumKey::L => {
                r.eat_non_data(1);
                continue;
            }
            NumKey::ThUpper | NumKey::ThLower => {
                if r.number[0] == b'#' || r.desc.has(F_DECIMAL) {
                    continue;
                }
                r.eat_non_data(2);
                continue;
            }
            NumKey::Mi => {
                if r.at(r.ip) == b'-' {
                    r.number[0] = b'-';
                } else {
                    r.eat_non_data(1);
                    continue;
                }
            }
            NumKey::Pl => {
                if r.at(r.ip) == b'+' {
                    r.number[0] = b'+';
                } else {
                    r.eat_non_data(1);
                    continue;
                }
            }
            NumKey::Sg => {
                let c = r.at(r.ip);
                if c == b'-' || c == b'+' {
                    r.number[0] = c;
                } else {
                    r.eat_non_data(1);
                    continue;
                }
            }
            _ => continue,
        }
        r.ip += 1;
    }
    let mut number = r.number;
    if number.len() > 1 && number.last() == Some(&b'.') {
        number.pop();
    }
    let scale = r.read_post;
    let precision = r.desc.pre + r.desc.multi + scale;
    let multi = r.desc.multi;
    let is_multi = r.desc.has(F_MULTI);
    let numstr = String::from_utf8_lossy(&number).into_owned();
    let parsed = Numeric::parse(&numstr)?;
    let mut result = if (0..=0xFFFF).contains(&precision) && (-1024..1024).contains(&scale) {
        parsed.apply_typmod(precision as u32, scale)?
    } else {
        parsed
    };
    if is_multi {
        let x = Numeric::from(10i64).pow(&Numeric::from(-multi))?;
        result = result.mul(&x)?;
    }
    Ok(Some(result))
}

/// The reader's state for `to_number`.
struct Reader<'a> {
    desc: &'a mut Desc,
    input: &'a [u8],
    ip: usize,
    /// The sign (b' ' while unknown) followed by the digits read.
    number: Vec<u8>,
    read_dec: bool,
    read_post: i32,
    read_pre: i32,
}

impl Reader<'_> {
    fn at(&self, i: usize) -> u8 {
        self.input.get(i).copied().unwrap_or(0)
    }

    fn overload(&self) -> bool {
        self.ip >= self.input.len()
    }

    /// Whether `s` bytes remain from the current position.
    fn amount(&self, s: usize) -> bool {
        self.ip + s <= self.input.len()
    }

    /// Skips up to `n` characters that cannot be part of a number.
    fn eat_non_data(&mut self, n: usize) {
        for _ in 0..n {
            if self.overload() || b"0123456789.,+-".contains(&self.at(self.ip)) {
                break;
            }
            self.ip += super::template::char_len(self.at(self.ip)).min(self.input.len() - self.ip);
        }
    }

    /// One digit position: a sign before the first digit, a digit or the
    /// point, and a sign just after the last digit.
    fn numpart(&mut self, key: NumKey) {
        let mut isread = false;
        if self.overload() {
            return;
        }
        if self.at(self.ip) == b' ' {
            self.ip += 1;
        }
        if self.overload() {
            return;
        }
        if self.number[0] == b' '
            && matches!(key, NumKey::Zero | NumKey::Nine)
            && self.read_pre + self.read_post == 0
        {
            let c = self.at(self.ip);
            if self.desc.has(F_LSIGN) && self.desc.lsign == LSIGN_PRE {
                if self.amount(1) && c == b'-' {
                    self.ip += 1;
                    self.number[0] = b'-';
                } else if self.amount(1) && c == b'+' {
                    self.ip += 1;
                    self.number[0] = b'+';
                }
            } else if c == b'-' || (self.desc.has(F_BRACKET) && c == b'<') {
                self.number[0] = b'-';
                self.ip += 1;
            } else if c == b'+' {
                self.number[0] = b'+';
                self.ip += 1;
            }
        }
        if self.overload() {
            return;
        }
        let c = self.at(self.ip);
        if c.is_ascii_digit() {
            if self.read_dec && self.read_post == self.desc.post {
                return;
            }
            self.number.push(c);
            if self.read_dec {
                self.read_post += 1;
            } else {
                self.read_pre += 1;
            }
            isread = true;
        } else if self.desc.has(F_DECIMAL) && !self.read_dec && self.amount(1) && c == b'.' {
            self.number.push(b'.');
            self.read_dec = true;
            isread = true;
        }
        if self.overload() {
            return;
        }
        if self.number[0] == b' ' && self.read_pre + self.read_post > 0 {
            if self.desc.has(F_LSIGN)
                && isread
                && self.ip + 1 < self.input.len()
                && !self.at(self.ip + 1).is_ascii_digit()
            {
                let saved = self.ip;
                self.ip += 1;
                let c = self.at(self.ip);
                if self.amount(1) && c == b'-' {
                    self.number[0] = b'-';
                } else if self.amount(1) && c == b'+' {
                    self.number[0] = b'+';
                }
                if self.number[0] == b' ' {
                    self.ip = saved;
                }
            } else if !isread && !self.desc.has(F_LSIGN) && (self.desc.has(F_PLUS) || self.desc.has(F_MINUS))
            {
                let c = self.at(self.ip);
                if c == b'-' || c == b'+' {
                    self.number[0] = c;
                }
            }
        }
    }
}
