//! The shapes of expression a PL/pgSQL loop evaluates most (`i + 1`,
//! `s + i`, `n > 0`, a variable alone), evaluated over values borrowed
//! where they are: no parameter vector filled, no context built, no tree
//! walked. Each shape computes with the very functions [`Expr::eval`]
//! does (`arith`, `compare`), so its result and its errors are the same.

use snapscale_values::{int_arith, SqlError, SqlType, Value, Zone};

use super::operators::{arith, int_op};
use super::{compare, Arith, Cmp, Expr, Step};

/// An operand: a parameter, or a constant.
#[derive(Clone, Debug)]
pub enum Operand {
    Param(usize),
    Const(Value),
}

/// An expression of one of the quick shapes.
#[derive(Clone, Debug)]
pub enum Quick {
    /// An operand alone.
    Operand(Operand),
    /// `a op b` computed in the type (an [`Expr::Chain`] of one step).
    Arith(Operand, Arith, Operand, SqlType),
    /// `a op b` ([`Expr::Compare`]).
    Compare(Operand, Cmp, Operand, bool),
}

impl Operand {
    fn of(e: &Expr) -> Option<Operand> {
        match e {
            Expr::Param(i) => Some(Operand::Param(*i)),
            Expr::Const(v) => Some(Operand::Const(v.clone())),
            _ => None,
        }
    }

    fn get<'v>(&'v self, param: &impl Fn(usize) -> Option<&'v Value>) -> Option<&'v Value> {
        match self {
            Operand::Param(i) => param(*i),
            Operand::Const(v) => Some(v),
        }
    }
}

impl Quick {
    /// `e` as a quick shape, if it is one.
    pub fn of(e: &Expr) -> Option<Quick> {
        match e {
            Expr::Chain(first, steps) => match &steps[..] {
                [Step::Arith(op, b, ty)] => {
                    Some(Quick::Arith(Operand::of(first)?, *op, Operand::of(b)?, *ty))
                }
                _ => None,
            },
            Expr::Compare(a, op, b, bpchar) => {
                Some(Quick::Compare(Operand::of(a)?, *op, Operand::of(b)?, *bpchar))
            }
            other => Operand::of(other).map(Quick::Operand),
        }
    }

    /// Integer arithmetic on two integers, as [`Quick::eval`] computes it,
    /// without making a value: `None` for any other shape or operand.
    pub fn int<'v>(&'v self, param: impl Fn(usize) -> Option<&'v Value>) -> Option<Result<i64, SqlError>> {
        let Quick::Arith(a, op, b, ty) = self else { return None };
        match (a.get(&param)?, b.get(&param)?) {
            (Value::Int(x), Value::Int(y)) => Some(int_arith(*ty, int_op(*op), *x, *y)),
            _ => None,
        }
    }

    /// The value, with parameter `i` read by `param`; `None` when a
    /// parameter cannot be borrowed (the caller evaluates the expression
    /// the ordinary way).
    pub fn eval<'v>(
        &'v self,
        param: impl Fn(usize) -> Option<&'v Value>,
        zone: Zone,
    ) -> Option<Result<Value, SqlError>> {
        Some(match self {
            Quick::Operand(a) => Ok(a.get(&param)?.clone()),
            Quick::Arith(a, op, b, ty) => arith(a.get(&param)?, *op, b.get(&param)?, *ty, zone),
            Quick::Compare(a, op, b, bpchar) => {
                let (a, b) = (a.get(&param)?, b.get(&param)?);
                if matches!(a, Value::Null) || matches!(b, Value::Null) {
                    Ok(Value::Null)
                } else {
                    compare(a, b, *bpchar).map(|o| Value::Bool(op.holds(o)))
                }
            }
        })
    }
}
