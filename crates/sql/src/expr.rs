//! Bound expressions and their evaluation.
//!
//! The binder resolves names and types once; evaluation then works on
//! column positions and parameter slots only. Arithmetic follows
//! PostgreSQL's result types and errors (22003 out of range, 22012
//! division by zero); comparisons with NULL are NULL; AND/OR use
//! three-valued logic.

use std::cmp::Ordering;

use crate::error::SqlError;
use crate::types::{int_arith, IntOp, SqlType, Value};

/// Arithmetic operators.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// Comparison operators.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Cmp {
    fn holds(self, o: Ordering) -> bool {
        match self {
            Cmp::Eq => o.is_eq(),
            Cmp::Ne => o.is_ne(),
            Cmp::Lt => o.is_lt(),
            Cmp::Le => o.is_le(),
            Cmp::Gt => o.is_gt(),
            Cmp::Ge => o.is_ge(),
        }
    }

    /// The operator with its operands swapped (`1 < a` is `a > 1`).
    pub fn flipped(self) -> Cmp {
        match self {
            Cmp::Lt => Cmp::Gt,
            Cmp::Le => Cmp::Ge,
            Cmp::Gt => Cmp::Lt,
            Cmp::Ge => Cmp::Le,
            other => other,
        }
    }
}

/// Scalar functions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Func {
    Now,
    Abs,
    Coalesce,
    Lower,
    Upper,
    Length,
}

/// Aggregate functions.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum AggFunc {
    CountStar,
    Count,
    Sum,
    Min,
    Max,
    Avg,
}

/// A bound expression.
#[derive(Clone, PartialEq, Debug)]
pub enum Expr {
    Const(Value),
    /// A column of the input row.
    Column(usize),
    /// A statement parameter ($1 is 0).
    Param(usize),
    Arith(Box<Expr>, Arith, Box<Expr>, SqlType),
    Concat(Box<Expr>, Box<Expr>),
    Neg(Box<Expr>, SqlType),
    /// `bpchar`: compare without trailing blanks (char(n) semantics).
    Compare(Box<Expr>, Cmp, Box<Expr>, bool),
    And(Box<Expr>, Box<Expr>),
    Or(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    IsNull(Box<Expr>, bool),
    InList(Box<Expr>, Vec<Expr>, bool),
    Like(Box<Expr>, Box<Expr>, bool),
    /// Conversion to a type; `explicit` casts truncate char/varchar.
    Cast(Box<Expr>, SqlType, bool),
    Func(Func, Vec<Expr>),
    /// Result slot of an aggregate (grouped queries).
    Agg(usize),
    /// Value of a group key (grouped queries).
    GroupKey(usize),
}

/// What an expression is evaluated against.
pub struct Ctx<'a> {
    pub row: &'a [Value],
    pub params: &'a [Value],
    /// Aggregate results and group keys of the current group.
    pub aggs: &'a [Value],
    pub keys: &'a [Value],
    /// The transaction's timestamp (now() is stable within a transaction).
    pub now: i64,
}

fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        _ => None,
    }
}

fn from_truth(t: Option<bool>) -> Value {
    t.map_or(Value::Null, Value::Bool)
}

/// Compares two non-NULL values; char(n) ignores trailing blanks.
pub fn compare(a: &Value, b: &Value, bpchar: bool) -> Result<Ordering, SqlError> {
    if bpchar {
        if let (Value::Text(x), Value::Text(y)) = (a, b) {
            return Ok(x.trim_end_matches(' ').cmp(y.trim_end_matches(' ')));
        }
    }
    a.compare(b).ok_or_else(|| SqlError::new("42883", "operator does not exist for these operand types"))
}

impl Expr {
    /// Evaluates the expression.
    pub fn eval(&self, cx: &Ctx<'_>) -> Result<Value, SqlError> {
        Ok(match self {
            Expr::Const(v) => v.clone(),
            Expr::Column(i) => cx.row[*i].clone(),
            Expr::Param(i) => cx.params[*i].clone(),
            Expr::Agg(i) => cx.aggs[*i].clone(),
            Expr::GroupKey(i) => cx.keys[*i].clone(),
            Expr::Arith(a, op, b, ty) => {
                let (a, b) = (a.eval(cx)?, b.eval(cx)?);
                arith(&a, *op, &b, *ty)?
            }
            Expr::Concat(a, b) => match (a.eval(cx)?, b.eval(cx)?) {
                (Value::Null, _) | (_, Value::Null) => Value::Null,
                (a, b) => Value::Text(format!(
                    "{}{}",
                    a.to_text().unwrap_or_default(),
                    b.to_text().unwrap_or_default()
                )),
            },
            Expr::Neg(a, ty) => match a.eval(cx)? {
                Value::Null => Value::Null,
                Value::Int(i) => Value::Int(int_arith(*ty, IntOp::Sub, 0, i)?),
                Value::Float(f) => Value::Float(-f),
                _ => return Err(SqlError::new("42883", "operator does not exist: - for this type")),
            },
            Expr::Compare(a, op, b, bpchar) => {
                let (a, b) = (a.eval(cx)?, b.eval(cx)?);
                if matches!(a, Value::Null) || matches!(b, Value::Null) {
                    Value::Null
                } else {
                    Value::Bool(op.holds(compare(&a, &b, *bpchar)?))
                }
            }
            Expr::And(a, b) => {
                let a = truth(&a.eval(cx)?);
                if a == Some(false) {
                    return Ok(Value::Bool(false));
                }
                let b = truth(&b.eval(cx)?);
                from_truth(match (a, b) {
                    (_, Some(false)) => Some(false),
                    (Some(true), Some(true)) => Some(true),
                    _ => None,
                })
            }
            Expr::Or(a, b) => {
                let a = truth(&a.eval(cx)?);
                if a == Some(true) {
                    return Ok(Value::Bool(true));
                }
                let b = truth(&b.eval(cx)?);
                from_truth(match (a, b) {
                    (_, Some(true)) => Some(true),
                    (Some(false), Some(false)) => Some(false),
                    _ => None,
                })
            }
            Expr::Not(a) => from_truth(truth(&a.eval(cx)?).map(|t| !t)),
            Expr::IsNull(a, negated) => Value::Bool(matches!(a.eval(cx)?, Value::Null) != *negated),
            Expr::InList(a, list, negated) => {
                let a = a.eval(cx)?;
                if matches!(a, Value::Null) {
                    return Ok(Value::Null);
                }
                let mut saw_null = false;
                for e in list {
                    let v = e.eval(cx)?;
                    if matches!(v, Value::Null) {
                        saw_null = true;
                    } else if compare(&a, &v, false)?.is_eq() {
                        return Ok(Value::Bool(!negated));
                    }
                }
                if saw_null {
                    Value::Null
                } else {
                    Value::Bool(*negated)
                }
            }
            Expr::Like(a, p, negated) => match (a.eval(cx)?, p.eval(cx)?) {
                (Value::Text(s), Value::Text(p)) => Value::Bool(like(&s, &p) != *negated),
                _ => Value::Null,
            },
            Expr::Cast(a, ty, explicit) => cast(a.eval(cx)?, *ty, *explicit)?,
            Expr::Func(f, args) => {
                let vals = args.iter().map(|a| a.eval(cx)).collect::<Result<Vec<_>, _>>()?;
                func(*f, vals, cx.now)?
            }
        })
    }

    /// True if the expression reads no row column (a constant or a
    /// parameter function): usable as an index probe.
    pub fn is_row_free(&self) -> bool {
        match self {
            Expr::Column(_) | Expr::Agg(_) | Expr::GroupKey(_) => false,
            Expr::Const(_) | Expr::Param(_) => true,
            Expr::Arith(a, _, b, _) | Expr::Concat(a, b) | Expr::Compare(a, _, b, _) => {
                a.is_row_free() && b.is_row_free()
            }
            Expr::And(a, b) | Expr::Or(a, b) | Expr::Like(a, b, _) => a.is_row_free() && b.is_row_free(),
            Expr::Neg(a, _) | Expr::Not(a) | Expr::IsNull(a, _) | Expr::Cast(a, _, _) => a.is_row_free(),
            Expr::InList(a, l, _) => a.is_row_free() && l.iter().all(Expr::is_row_free),
            Expr::Func(_, args) => args.iter().all(Expr::is_row_free),
        }
    }
}

/// Evaluates a WHERE clause: only TRUE passes.
pub fn passes(e: &Expr, cx: &Ctx<'_>) -> Result<bool, SqlError> {
    Ok(matches!(e.eval(cx)?, Value::Bool(true)))
}

fn arith(a: &Value, op: Arith, b: &Value, ty: SqlType) -> Result<Value, SqlError> {
    Ok(match (a, b) {
        (Value::Null, _) | (_, Value::Null) => Value::Null,
        (Value::Int(x), Value::Int(y)) => {
            let op = match op {
                Arith::Add => IntOp::Add,
                Arith::Sub => IntOp::Sub,
                Arith::Mul => IntOp::Mul,
                Arith::Div => IntOp::Div,
                Arith::Rem => IntOp::Rem,
            };
            Value::Int(int_arith(ty, op, *x, *y)?)
        }
        (Value::Int(_) | Value::Float(_), Value::Int(_) | Value::Float(_)) => {
            let x = as_f64(a);
            let y = as_f64(b);
            if matches!(op, Arith::Div | Arith::Rem) && y == 0.0 {
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
                return Err(SqlError::new("22003", "value out of range: overflow"));
            }
            Value::Float(r)
        }
        (Value::Timestamp(t), Value::Int(_)) | (Value::Int(_), Value::Timestamp(t)) if op == Arith::Add => {
            let _ = t;
            return Err(SqlError::new("42883", "operator does not exist: timestamp + integer"));
        }
        (Value::Date(d), Value::Int(n)) if matches!(op, Arith::Add | Arith::Sub) => {
            let n = if op == Arith::Add { *n } else { -*n };
            let days = i64::from(*d) + n;
            Value::Date(i32::try_from(days).map_err(|_| SqlError::new("22008", "date out of range"))?)
        }
        (Value::Date(x), Value::Date(y)) if op == Arith::Sub => Value::Int(i64::from(*x) - i64::from(*y)),
        _ => return Err(SqlError::new("42883", "operator does not exist for these operand types")),
    })
}

fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        _ => f64::NAN,
    }
}

/// SQL LIKE: `%` any run, `_` one character, `\` escapes.
fn like(s: &str, p: &str) -> bool {
    fn go(s: &[char], p: &[char]) -> bool {
        match p.split_first() {
            None => s.is_empty(),
            Some(('%', rest)) => (0..=s.len()).any(|i| go(&s[i..], rest)),
            Some(('_', rest)) => !s.is_empty() && go(&s[1..], rest),
            Some(('\\', rest)) if !rest.is_empty() => s.first() == Some(&rest[0]) && go(&s[1..], &rest[1..]),
            Some((c, rest)) => s.first() == Some(c) && go(&s[1..], rest),
        }
    }
    let s: Vec<char> = s.chars().collect();
    let p: Vec<char> = p.chars().collect();
    go(&s, &p)
}

fn func(f: Func, args: Vec<Value>, now: i64) -> Result<Value, SqlError> {
    Ok(match f {
        Func::Now => Value::Timestamp(now),
        Func::Coalesce => args.into_iter().find(|v| !matches!(v, Value::Null)).unwrap_or(Value::Null),
        Func::Abs => match &args[0] {
            Value::Int(i) => Value::Int(i.checked_abs().ok_or_else(|| SqlError::out_of_range("bigint"))?),
            Value::Float(x) => Value::Float(x.abs()),
            _ => Value::Null,
        },
        Func::Lower | Func::Upper | Func::Length => match &args[0] {
            Value::Null => Value::Null,
            Value::Text(s) => match f {
                Func::Lower => Value::Text(s.to_lowercase()),
                Func::Upper => Value::Text(s.to_uppercase()),
                _ => Value::Int(s.chars().count() as i64),
            },
            other => return Err(SqlError::new("42883", format!("function does not exist for {other:?}"))),
        },
    })
}

/// Converts `v` to `ty`. Assignment (`explicit = false`) refuses a too
/// long string (22001); an explicit cast truncates it, as PostgreSQL does.
pub fn cast(v: Value, ty: SqlType, explicit: bool) -> Result<Value, SqlError> {
    let type_error =
        |v: &Value| SqlError::new("42804", format!("cannot convert {} to type {}", describe(v), ty.name()));
    Ok(match (v, ty) {
        (Value::Null, _) => Value::Null,
        (Value::Int(i), SqlType::Int2 | SqlType::Int4 | SqlType::Int8) => {
            Value::Int(int_arith(ty, IntOp::Add, i, 0)?)
        }
        (Value::Int(i), SqlType::Float8) => Value::Float(i as f64),
        (Value::Float(f), SqlType::Float8) => Value::Float(f),
        (Value::Float(f), SqlType::Int2 | SqlType::Int4 | SqlType::Int8) => {
            let r = f.round_ties_even();
            if !r.is_finite() || !(-9.223_372_036_854_776e18..9.223_372_036_854_776e18).contains(&r) {
                return Err(SqlError::out_of_range(ty.name()));
            }
            Value::Int(int_arith(ty, IntOp::Add, r as i64, 0)?)
        }
        (Value::Bool(b), SqlType::Bool) => Value::Bool(b),
        (Value::Text(s), SqlType::Varchar(Some(n)) | SqlType::Char(n)) if explicit => {
            let cut: String = s.chars().take(n as usize).collect();
            Value::parse(ty, &cut)?
        }
        (Value::Text(s), _) => Value::parse(ty, &s)?,
        (v @ (Value::Date(_) | Value::Timestamp(_)), SqlType::Date | SqlType::Timestamp) => match (v, ty) {
            (Value::Date(d), SqlType::Timestamp) => Value::Timestamp(i64::from(d) * 86_400_000_000),
            (Value::Timestamp(t), SqlType::Date) => Value::Date(t.div_euclid(86_400_000_000) as i32),
            (v, _) => v,
        },
        (v, SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_)) => {
            let text = v.to_text().unwrap_or_default();
            Value::parse(ty, &text)?
        }
        (v, _) => return Err(type_error(&v)),
    })
}

fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Int(_) => "integer",
        Value::Float(_) => "double precision",
        Value::Text(_) => "text",
        Value::Date(_) => "date",
        Value::Timestamp(_) => "timestamp",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_patterns() {
        assert!(like("abc", "a%"));
        assert!(like("abc", "_b_"));
        assert!(!like("abc", "a_"));
        assert!(like("a%c", "a\\%c"));
    }

    #[test]
    fn three_valued_logic() {
        let cx = Ctx { row: &[], params: &[], aggs: &[], keys: &[], now: 0 };
        let null = || Box::new(Expr::Const(Value::Null));
        let f = || Box::new(Expr::Const(Value::Bool(false)));
        let t = || Box::new(Expr::Const(Value::Bool(true)));
        assert_eq!(Expr::And(null(), f()).eval(&cx).unwrap(), Value::Bool(false));
        assert_eq!(Expr::And(null(), t()).eval(&cx).unwrap(), Value::Null);
        assert_eq!(Expr::Or(null(), t()).eval(&cx).unwrap(), Value::Bool(true));
        assert_eq!(Expr::Not(null()).eval(&cx).unwrap(), Value::Null);
    }
}
