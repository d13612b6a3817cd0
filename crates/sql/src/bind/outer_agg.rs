//! Which query an aggregate belongs to (PostgreSQL's rule for outer-level
//! aggregates).
//!
//! An aggregate belongs to the innermost query whose columns its
//! arguments, FILTER and ORDER BY read; one that reads no column belongs
//! to the query it is written in. So in `SELECT (SELECT max(t.x) FROM u)
//! FROM t` max(t.x) is t's aggregate: t becomes an aggregate query, and
//! the subquery reads the aggregate's value as it would read one of t's
//! columns, as an outer value (`Expr::Outer`) the enclosing query passes
//! in.
//!
//! The call is bound where it is written (so its names resolve as
//! written); its level is then read off the bound expressions, following
//! each outer value up the scopes. An aggregate of an outer query is moved
//! there: its expressions are rewritten into that query's terms (each
//! outer value replaced by what the enclosing query passes), the outer
//! values gathered only for it are forgotten, and it joins that query's
//! aggregate list, which [`Binder::enclosing_aggs`] keeps reachable while
//! a subquery is bound. Whether aggregates are allowed, and whether one is
//! nested in another, is then judged at the aggregate's own level.

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use super::scope::Scope;
use super::{Binder, Resolver};
use crate::expr::{Expr, Rewrite};
use crate::plan::Aggregate;
use crate::stack::StackDepth;

/// The address that names a scope in [`QueryState::enclosing`].
///
/// [`QueryState::enclosing`]: super::state::QueryState
fn key(scope: &Scope<'_>) -> usize {
    scope as *const Scope<'_> as *const u8 as usize
}

/// What an aggregate's expressions read, in query levels out from where
/// it is written: the nearest level with a column read, and the nearest
/// level with an aggregate (with its slot there).
#[derive(Default)]
struct Levels {
    column: Option<usize>,
    aggregate: Option<(usize, usize)>,
}

impl Levels {
    fn column_at(&mut self, level: usize) {
        self.column = Some(self.column.map_or(level, |c| c.min(level)));
    }

    fn aggregate_at(&mut self, level: usize, slot: usize) {
        if self.aggregate.is_none_or(|(l, _)| level < l) {
            self.aggregate = Some((level, slot));
        }
    }

    /// Records what `e`, an expression in `scope`'s terms `level` levels
    /// out, reads.
    fn read(
        &mut self,
        e: &Expr,
        scope: &Scope<'_>,
        level: usize,
        stack: &StackDepth,
    ) -> Result<(), SqlError> {
        let mut outer = Vec::new();
        e.visit(stack, &mut |x| match x {
            // A window or set-returning call's result is the row's own.
            Expr::Column(_) | Expr::GroupKey(_) | Expr::Window(_) | Expr::SetFunc(_) => self.column_at(level),
            Expr::Agg(slot) => self.aggregate_at(level, *slot),
            Expr::Outer(k) => outer.push(*k),
            _ => {}
        })?;
        for k in outer {
            // (A routine's parameter has no enclosing query: a value of
            // its own.)
            if let (Some(parent), Some(a)) = (scope.parent(), scope.arg(k)) {
                self.read(&a, parent, level + 1, stack)?;
            }
        }
        Ok(())
    }
}

/// Every expression of an aggregate call over the query's row (a
/// user-defined aggregate's support calls are over rows of their own).
fn expressions(agg: &mut Aggregate) -> impl Iterator<Item = &mut Expr> {
    let user = agg.user.as_deref_mut().map(|u| u.args.as_mut_slice()).unwrap_or_default();
    agg.arg
        .iter_mut()
        .chain(agg.delimiter.iter_mut())
        .chain(agg.filter.iter_mut())
        .chain(agg.order.iter_mut().map(|k| &mut k.expr))
        .chain(user.iter_mut())
}

impl<R: Resolver> Binder<'_, R> {
    /// Runs `f` (binding a subquery of the query `scope` belongs to) with
    /// that query's aggregate list set aside where the subquery's
    /// outer-level aggregates find it.
    pub(super) fn enclosing_aggs<T>(&mut self, scope: &Scope<'_>, f: impl FnOnce(&mut Self) -> T) -> T {
        let aggs = self.query.aggs.take();
        self.query.enclosing.push((key(scope), aggs));
        let out = f(self);
        let (_, aggs) = self.query.enclosing.pop().expect("pushed above");
        self.query.aggs = aggs;
        out
    }

    /// Puts a bound aggregate call in the aggregate list of the query it
    /// belongs to, and gives the expression that reads its result here.
    /// `marks`: the outer values gathered before the call was bound
    /// ([`Scope::arg_marks`]); `at`: where the call is in the query string.
    pub(super) fn place_aggregate(
        &mut self,
        mut agg: Aggregate,
        scope: &Scope<'_>,
        marks: &[usize],
        at: Option<usize>,
    ) -> Result<Expr, SqlError> {
        let mut levels = Levels::default();
        for e in expressions(&mut agg) {
            levels.read(e, scope, 0, &self.stack)?;
        }
        // An aggregate in its arguments counts as what it reads (it is
        // that level's), and must belong to a level out from this one.
        let inner = levels.aggregate.map(|(l, _)| l);
        let level = levels.column.into_iter().chain(inner).min().unwrap_or(0);
        // Only a subquery's enclosing queries (not a routine's parameters,
        // nor a LATERAL item's neighbours) keep their lists reachable.
        let target = scope
            .ancestor(level)
            .map(key)
            .filter(|_| level > 0)
            .and_then(|k| self.query.enclosing.iter().rposition(|(e, _)| *e == k).map(|i| (k, i)));
        let level = if target.is_some() { level } else { 0 };
        if let Some((inner, slot)) = levels.aggregate.filter(|(l, _)| *l == level && target.is_some()) {
            let holder = scope.ancestor(inner).map(key);
            let position = self
                .query
                .placed
                .iter()
                .find(|(k, s, _)| Some(*k) == holder && *s == slot)
                .and_then(|(_, _, p)| *p);
            let err = SqlError::new(SqlState::GROUPING_ERROR, "aggregate function calls cannot be nested");
            return Err(match position {
                Some(p) => err.at_position(p),
                None => err,
            });
        }
        let Some((target_key, index)) = target else {
            let Some(aggs) = self.query.aggs.as_mut() else { return Err(not_allowed()) };
            return Ok(Expr::Agg(slot_of(aggs, agg)));
        };
        // Into the terms of each enclosing query in turn.
        for l in 0..level {
            let here = scope.ancestor(l).expect("level checked above");
            for e in expressions(&mut agg) {
                let inner = std::mem::replace(e, Expr::Const(snapscale_values::Value::Null));
                *e = inner.rewrite(&self.stack, &mut |x| {
                    Ok(match x {
                        Expr::Outer(k) => Rewrite::Replace(here.arg(k).unwrap_or(Expr::Outer(k))),
                        other => Rewrite::Descend(other),
                    })
                })?;
            }
        }
        scope.forget_args(marks, level);
        let Some(aggs) = self.query.enclosing[index].1.as_mut() else { return Err(not_allowed()) };
        let slot = slot_of(aggs, agg);
        if !self.query.placed.iter().any(|(k, s, _)| *k == target_key && *s == slot) {
            self.query.placed.push((target_key, slot, at));
        }
        Ok(scope.pass_down(level, Expr::Agg(slot)))
    }
}

/// The aggregate's slot in `aggs`: an equal call already there is shared.
fn slot_of(aggs: &mut Vec<Aggregate>, agg: Aggregate) -> usize {
    match aggs.iter().position(|a| *a == agg) {
        Some(i) => i,
        None => {
            aggs.push(agg);
            aggs.len() - 1
        }
    }
}

/// An aggregate where its query allows none; the clause that binds the
/// expression words it for itself (`query::no_aggregates`).
fn not_allowed() -> SqlError {
    SqlError::new(SqlState::GROUPING_ERROR, "aggregate functions are not allowed here")
}
