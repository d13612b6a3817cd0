//! The operators over values: arithmetic with PostgreSQL's result types
//! and errors (22003 out of range, 22012 division by zero), date and
//! interval arithmetic, `||`, and LIKE.

use snapscale_sqlstate::SqlState;
use snapscale_values::numeric::Numeric;
use snapscale_values::{int_arith, IntOp, Interval, SqlError, SqlType, Value, Zone};

use super::Arith;

/// `a || b` over any two values' text forms; NULL if either is.
pub(super) fn concat(a: Value, b: Value, zone: snapscale_values::Style) -> Result<Value, SqlError> {
    Ok(match (a, b) {
        (Value::Null, _) | (_, Value::Null) => Value::Null,
        (a, b) => Value::Text(format!(
            "{}{}",
            a.try_text_in(zone)?.unwrap_or_default(),
            b.try_text_in(zone)?.unwrap_or_default()
        )),
    })
}

/// An arithmetic operator on integers.
pub(super) fn int_op(op: Arith) -> IntOp {
    match op {
        Arith::Add => IntOp::Add,
        Arith::Sub => IntOp::Sub,
        Arith::Mul => IntOp::Mul,
        Arith::Div => IntOp::Div,
        Arith::Rem => IntOp::Rem,
    }
}

pub(super) fn arith(a: &Value, op: Arith, b: &Value, ty: SqlType, zone: Zone) -> Result<Value, SqlError> {
    Ok(match (a, b) {
        (Value::Null, _) | (_, Value::Null) => Value::Null,
        (Value::Int(x), Value::Int(y)) => Value::Int(int_arith(ty, int_op(op), *x, *y)?),
        // In double precision, then rounded: for + - * / that is the
        // correctly rounded real result (53 bits hold twice 24 and more),
        // and % is exact either way.
        (Value::Float4(x), Value::Float4(y)) => {
            let r = float_arith(f64::from(*x), op, f64::from(*y))? as f32;
            if r.is_infinite() && x.is_finite() && y.is_finite() {
                return Err(overflow());
            }
            Value::Float4(r)
        }
        (Value::Numeric(_), Value::Numeric(_) | Value::Int(_)) | (Value::Int(_), Value::Numeric(_)) => {
            let (x, y) = (as_numeric(a), as_numeric(b));
            Value::Numeric(match op {
                Arith::Add => x.add(&y)?,
                Arith::Sub => x.sub(&y)?,
                Arith::Mul => x.mul(&y)?,
                Arith::Div => x.div(&y)?,
                Arith::Rem => x.rem(&y)?,
            })
        }
        (a, b) if a.is_number() && b.is_number() => Value::Float(float_arith(as_f64(a), op, as_f64(b))?),
        (Value::Timestamp(t), Value::Int(_)) | (Value::Int(_), Value::Timestamp(t)) if op == Arith::Add => {
            let _ = t;
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                "operator does not exist: timestamp + integer",
            ));
        }
        (Value::Date(d), Value::Int(n)) if matches!(op, Arith::Add | Arith::Sub) => {
            let n = if op == Arith::Add { *n } else { -*n };
            let days = i64::from(*d) + n;
            Value::Date(
                i32::try_from(days)
                    .map_err(|_| SqlError::new(SqlState::DATETIME_FIELD_OVERFLOW, "date out of range"))?,
            )
        }
        (Value::Date(x), Value::Date(y)) if op == Arith::Sub => Value::Int(i64::from(*x) - i64::from(*y)),
        (Value::Timestamp(x), Value::Timestamp(y)) | (Value::TimestampTz(x), Value::TimestampTz(y))
            if op == Arith::Sub =>
        {
            Value::Interval(Interval::between(*x, *y)?)
        }
        (Value::Timestamp(t), Value::Interval(i)) if matches!(op, Arith::Add | Arith::Sub) => {
            Value::Timestamp(i.shift(*t, op == Arith::Sub)?)
        }
        (Value::TimestampTz(t), Value::Interval(i)) if matches!(op, Arith::Add | Arith::Sub) => {
            Value::TimestampTz(i.shift_in(*t, op == Arith::Sub, zone)?)
        }
        (Value::Interval(i), Value::Timestamp(t)) if op == Arith::Add => {
            Value::Timestamp(i.shift(*t, false)?)
        }
        (Value::Interval(i), Value::TimestampTz(t)) if op == Arith::Add => {
            Value::TimestampTz(i.shift_in(*t, false, zone)?)
        }
        // interval * number, number * interval, interval / number: PostgreSQL
        // multiplies by a double precision factor and cascades fractions.
        (Value::Interval(i), n) | (n, Value::Interval(i)) if n.is_number() && op == Arith::Mul => {
            Value::Interval(i.mul_f64(as_f64(n))?)
        }
        (Value::Interval(i), n) if n.is_number() && op == Arith::Div => {
            if as_f64(n) == 0.0 {
                return Err(SqlError::division_by_zero());
            }
            Value::Interval(i.div_f64(as_f64(n))?)
        }
        (Value::Time(x), Value::Time(y)) if op == Arith::Sub => {
            Value::Interval(Interval { months: 0, days: 0, micros: x - y })
        }
        // time ± interval wraps around midnight; the interval's days and
        // months do not move a time of day.
        (Value::Time(t), Value::Interval(i)) | (Value::Interval(i), Value::Time(t))
            if matches!(op, Arith::Add | Arith::Sub) =>
        {
            let span = if op == Arith::Sub { -i.micros } else { i.micros };
            Value::Time((t + span.rem_euclid(86_400_000_000)).rem_euclid(86_400_000_000))
        }
        (Value::Date(d), Value::Time(t)) | (Value::Time(t), Value::Date(d)) if op == Arith::Add => {
            Value::Timestamp(i64::from(*d) * 86_400_000_000 + t)
        }
        (Value::Interval(x), Value::Interval(y)) if matches!(op, Arith::Add | Arith::Sub) => {
            Value::Interval(x.add(*y, op == Arith::Sub)?)
        }
        _ => {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                "operator does not exist for these operand types",
            ))
        }
    })
}

/// Float arithmetic with PostgreSQL's errors: 22012 for a zero divisor
/// (NaN / 0 is NaN), 22003 when finite operands overflow.
fn float_arith(x: f64, op: Arith, y: f64) -> Result<f64, SqlError> {
    if matches!(op, Arith::Div | Arith::Rem) && y == 0.0 && !(op == Arith::Div && x.is_nan()) {
        return Err(SqlError::division_by_zero());
    }
    let r = match op {
        Arith::Add => x + y,
        Arith::Sub => x - y,
        Arith::Mul => x * y,
        Arith::Div => x / y,
        Arith::Rem => x % y,
    };
    if r.is_infinite() && x.is_finite() && y.is_finite() {
        return Err(overflow());
    }
    Ok(r)
}

fn overflow() -> SqlError {
    SqlError::new(SqlState::NUMERIC_VALUE_OUT_OF_RANGE, "value out of range: overflow")
}

fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Float4(f) => f64::from(*f),
        // Beyond float8's range it is ±Infinity, which the caller's
        // overflow check then refuses as PostgreSQL's cast would.
        Value::Numeric(n) => n.to_f64().unwrap_or(f64::NAN),
        _ => f64::NAN,
    }
}

/// An integer or numeric operand as numeric (PostgreSQL's implicit cast).
fn as_numeric(v: &Value) -> std::borrow::Cow<'_, Numeric> {
    match v {
        Value::Numeric(n) => std::borrow::Cow::Borrowed(n),
        Value::Int(i) => std::borrow::Cow::Owned(Numeric::from(*i)),
        _ => std::borrow::Cow::Owned(Numeric::NAN),
    }
}

/// One element of a LIKE pattern.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LikeToken {
    /// `%`: any run of characters.
    Any,
    /// `_`: one character.
    One,
    Char(char),
    /// An escape that ends the pattern: an error only where matching
    /// reaches it with characters left (PostgreSQL's matcher finds it
    /// there, and fails sooner otherwise).
    TrailingEscape,
}

/// SQL LIKE: `%` any run, `_` one character, `\` escapes the next one.
///
/// Greedy matching that backtracks only to the last `%` (O(len × pattern)
/// at worst): a pattern like `%a%a%a…b` cannot make it exponential.
pub(super) fn like(s: &str, pattern: &str) -> Result<bool, SqlError> {
    let mut p = Vec::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        p.push(match c {
            '%' => LikeToken::Any,
            '_' => LikeToken::One,
            '\\' => chars.next().map_or(LikeToken::TrailingEscape, LikeToken::Char),
            c => LikeToken::Char(c),
        });
    }
    let s: Vec<char> = s.chars().collect();
    let (mut si, mut pi) = (0, 0);
    // After a `%`: the pattern position after it, and the string position
    // it has absorbed up to.
    let mut resume: Option<(usize, usize)> = None;
    while si < s.len() {
        match p.get(pi) {
            Some(LikeToken::Any) => {
                resume = Some((pi + 1, si));
                pi += 1;
                continue;
            }
            Some(LikeToken::One) => {
                si += 1;
                pi += 1;
                continue;
            }
            Some(LikeToken::Char(c)) if *c == s[si] => {
                si += 1;
                pi += 1;
                continue;
            }
            Some(LikeToken::TrailingEscape) => {
                return Err(SqlError::new(
                    SqlState::INVALID_ESCAPE_SEQUENCE,
                    "LIKE pattern must not end with escape character",
                ))
            }
            _ => {}
        }
        // Mismatch: let the last `%` absorb one more character.
        let Some((after, absorbed)) = resume else { return Ok(false) };
        resume = Some((after, absorbed + 1));
        pi = after;
        si = absorbed + 1;
    }
    Ok(p[pi..].iter().all(|t| *t == LikeToken::Any))
}
