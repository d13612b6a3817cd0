//! Whether what a query's WHERE says implies a partial index's predicate:
//! the test PostgreSQL's predtest makes before it scans such an index or
//! infers it as an ON CONFLICT arbiter, in its simple forms. A predicate
//! is implied when each of its conjuncts is: by an equal conjunct of the
//! WHERE, or, for `x op c` with a constant, by `x = v` or `x op' v` for a
//! constant v that makes it hold. Anything else is not implied, which only
//! costs the index (the scan reads the table instead).

use std::cmp::Ordering;

use crate::expr::{Cmp, Expr};

/// The conjuncts of `e` (itself if it is not an AND).
pub(crate) fn conjuncts(e: &Expr) -> &[Expr] {
    match e {
        Expr::And(args) => args,
        other => std::slice::from_ref(other),
    }
}

/// Whether `given` (a WHERE's conjuncts) implies `predicate`.
pub(crate) fn implied(given: &[Expr], predicate: &Expr) -> bool {
    conjuncts(predicate).iter().all(|p| given.iter().any(|g| implies(g, p)))
}

/// `e` as `x op c` with `c` a constant, either way round.
fn against_constant(e: &Expr) -> Option<(&Expr, Cmp, &snapscale_values::Value)> {
    match e {
        Expr::Compare(a, op, b, _) => match (a.as_ref(), b.as_ref()) {
            (x, Expr::Const(c)) if !matches!(x, Expr::Const(_)) => Some((x, *op, c)),
            (Expr::Const(c), x) => Some((x, op.flipped(), c)),
            _ => None,
        },
        _ => None,
    }
}

/// Whether one conjunct `g` implies one conjunct `p`.
fn implies(g: &Expr, p: &Expr) -> bool {
    if g == p {
        return true;
    }
    // `x IS NOT NULL` follows from any comparison of x (they are strict).
    if let Expr::IsNull(x, true) = p {
        if let Some((gx, _, gv)) = against_constant(g) {
            return gx == x.as_ref() && !matches!(gv, snapscale_values::Value::Null);
        }
        return false;
    }
    let (Some((gx, gop, gv)), Some((px, pop, pv))) = (against_constant(g), against_constant(p)) else {
        return false;
    };
    if gx != px {
        return false;
    }
    let Some(o) = gv.compare(pv) else { return false };
    match gop {
        // Every x the given admits is v itself.
        Cmp::Eq => pop.holds(o),
        // x > v (or ≥) implies x > c (or ≥) when v is past c.
        Cmp::Gt | Cmp::Ge => match pop {
            Cmp::Gt => o == Ordering::Greater || (o == Ordering::Equal && gop == Cmp::Gt),
            Cmp::Ge => o != Ordering::Less,
            Cmp::Ne => o == Ordering::Greater || (o == Ordering::Equal && gop == Cmp::Gt),
            _ => false,
        },
        Cmp::Lt | Cmp::Le => match pop {
            Cmp::Lt => o == Ordering::Less || (o == Ordering::Equal && gop == Cmp::Lt),
            Cmp::Le => o != Ordering::Greater,
            Cmp::Ne => o == Ordering::Less || (o == Ordering::Equal && gop == Cmp::Lt),
            _ => false,
        },
        Cmp::Ne => false,
    }
}

#[cfg(test)]
mod tests {
    use snapscale_values::Value;

    use super::*;

    fn cmp(col: usize, op: Cmp, v: i64) -> Expr {
        Expr::Compare(Box::new(Expr::Column(col)), op, Box::new(Expr::Const(Value::Int(v))), false)
    }

    #[test]
    fn equal_and_range_conjuncts_imply() {
        let pred = cmp(0, Cmp::Gt, 5);
        assert!(implied(&[cmp(0, Cmp::Gt, 5)], &pred));
        assert!(implied(&[cmp(1, Cmp::Eq, 1), cmp(0, Cmp::Eq, 7)], &pred));
        assert!(!implied(&[cmp(0, Cmp::Eq, 5)], &pred));
        assert!(implied(&[cmp(0, Cmp::Ge, 6)], &pred));
        assert!(!implied(&[cmp(0, Cmp::Ge, 5)], &pred));
        assert!(implied(&[cmp(0, Cmp::Gt, 5)], &cmp(0, Cmp::Ge, 5)));
        assert!(!implied(&[cmp(0, Cmp::Lt, 9)], &pred));
        assert!(!implied(&[cmp(1, Cmp::Eq, 7)], &pred));
        assert!(!implied(&[], &pred));
        let both = Expr::And(vec![cmp(0, Cmp::Gt, 5), cmp(1, Cmp::Eq, 1)]);
        assert!(implied(&[cmp(1, Cmp::Eq, 1), cmp(0, Cmp::Eq, 6)], &both));
        assert!(!implied(&[cmp(0, Cmp::Eq, 6)], &both));
        let not_null = Expr::IsNull(Box::new(Expr::Column(0)), true);
        assert!(implied(&[cmp(0, Cmp::Lt, 1)], &not_null));
    }
}
