//! Index use for a condition that allows several values or ranges of an
//! index's first key part: `k IN (v1, v2, …)`, `k = ANY (array)` and an OR
//! of equalities, ranges (`BETWEEN`, `<` / `>` pairs) and such lists on the
//! same key part. Each value or range becomes one lookup of the index
//! ([`IndexArm`]); the executor unions their rows, each version once
//! (PostgreSQL's index scan with a ScalarArrayOpExpr qual, and its BitmapOr
//! of bitmap index scans).
//!
//! The lookups only have to find every row the condition can accept: the
//! scan's whole filter is checked again on each row found, so a range that
//! overlaps another, a duplicate value or a NULL in the list (which the
//! executor skips: equality with NULL holds for no row) changes nothing.

use std::ops::Bound;

use super::physical::IndexArm;
use crate::expr::{Cmp, Expr, Func};

/// The lookups of key part `first` that find every row `conjunct` can
/// accept, if each of its alternatives names `first` with values that do
/// not read the row; `None` otherwise (one alternative the index cannot
/// answer means a sequential scan).
pub(super) fn arms(first: &Expr, conjunct: &Expr) -> Option<Vec<IndexArm>> {
    let mut out = Vec::new();
    match conjunct {
        Expr::Or(alternatives) => {
            for a in alternatives {
                alternative(first, a, &mut out)?;
            }
        }
        // A lone equality or range is the planner's plain IndexEq or
        // IndexRange; here only what those cannot answer.
        Expr::InList(..) | Expr::Func(Func::Any { .. }, _) => list(first, conjunct, &mut out)?,
        _ => return None,
    }
    Some(out)
}

/// Adds the lookups of one alternative of an OR.
fn alternative(first: &Expr, e: &Expr, out: &mut Vec<IndexArm>) -> Option<()> {
    match e {
        Expr::Or(more) => {
            for a in more {
                alternative(first, a, out)?;
            }
            Some(())
        }
        Expr::InList(..) | Expr::Func(Func::Any { .. }, _) => list(first, e, out),
        Expr::Compare(..) => {
            out.push(range(first, std::slice::from_ref(e))?);
            Some(())
        }
        // `k BETWEEN a AND b`, `k >= a AND k < b AND …`: a range from its
        // comparisons of `first` (the rest is the filter's to check).
        Expr::And(conjuncts) => {
            out.push(range(first, conjuncts)?);
            Some(())
        }
        _ => None,
    }
}

/// `first IN (values)` or `first = ANY (array)`.
fn list(first: &Expr, e: &Expr, out: &mut Vec<IndexArm>) -> Option<()> {
    match e {
        Expr::InList(x, values, false) if **x == *first && values.iter().all(Expr::is_row_free) => {
            out.extend(values.iter().cloned().map(IndexArm::Eq));
            Some(())
        }
        Expr::Func(Func::Any { op: Cmp::Eq, all: false, bpchar: false }, args) => match args.as_slice() {
            [x, array] if *x == *first && array.is_row_free() => {
                out.push(IndexArm::EachOf(array.clone()));
                Some(())
            }
            _ => None,
        },
        _ => None,
    }
}

/// The lookup the comparisons of `first` among `conjuncts` allow: an
/// equality, else a range bounded on at least one side.
fn range(first: &Expr, conjuncts: &[Expr]) -> Option<IndexArm> {
    let mut lower = Bound::Unbounded;
    let mut upper = Bound::Unbounded;
    for c in conjuncts {
        let Expr::Compare(a, op, b, false) = c else { continue };
        let (op, probe) = match (a.as_ref(), b.as_ref()) {
            (x, p) if x == first && p.is_row_free() => (*op, p),
            (p, x) if x == first && p.is_row_free() => (op.flipped(), p),
            _ => continue,
        };
        match op {
            Cmp::Eq => return Some(IndexArm::Eq(probe.clone())),
            Cmp::Gt => lower = Bound::Excluded(probe.clone()),
            Cmp::Ge => lower = Bound::Included(probe.clone()),
            Cmp::Lt => upper = Bound::Excluded(probe.clone()),
            Cmp::Le => upper = Bound::Included(probe.clone()),
            Cmp::Ne => {}
        }
    }
    match (&lower, &upper) {
        (Bound::Unbounded, Bound::Unbounded) => None,
        _ => Some(IndexArm::Range { lower, upper }),
    }
}
