//! Pulling subqueries of WHERE up into semi and anti joins.
//!
//! A conjunct of WHERE that is `EXISTS (SELECT … FROM f WHERE c)` or `NOT
//! EXISTS (…)` with `c` reading the enclosing row, or `x IN (SELECT y FROM
//! f WHERE c)` with a subquery that does not (PostgreSQL 15's rules), is
//! true for a row of the FROM clause exactly when some row of `f`
//! satisfies `c` (and `x = y`) with the enclosing row's values in place of
//! the subquery's outer references. Run as a subplan it is run again for each distinct
//! correlation value; joined instead, `f` is read once, hashed on the
//! columns `c` equates with the enclosing row (or probed through an index),
//! as PostgreSQL's pull-up of sublinks into Semi / Anti Joins does.
//!
//! The FROM clause becomes the left side of a semi join (EXISTS, IN) or an
//! anti join (NOT EXISTS) whose right side is `f` and whose condition is
//! `c`, its columns numbered after the FROM row's and its outer references
//! replaced by what the enclosing row passed in. A semi or anti join gives
//! its left rows alone, so the FROM row and every expression over it keep
//! their layout.
//!
//! NULLs: an equality with NULL never holds, so a semi join drops the row
//! as a top-level `x IN (…)` whose value is NULL drops it, and an anti join
//! keeps it as NOT EXISTS does. `x NOT IN (…)` is not an anti join (one
//! NULL among the subquery's values makes it NULL for every row), and
//! stays a subplan.
//!
//! Only what the join can answer exactly is pulled up: a subquery with a
//! FROM of stored tables (joined or not), without grouping, aggregates,
//! windows, set-returning calls, LIMIT (but EXISTS's constant one that
//! allows a row) / OFFSET, DISTINCT ON or row locks,
//! whose condition calls nothing volatile (a subquery in it moves with
//! it, and one that reads only the enclosing row becomes a conjunct of
//! WHERE in turn). The rest stay subplans.

use snapscale_values::{SqlError, SqlType, Value};

use super::planner::Planner;
use super::{From, Join, JoinKind, Select};
use crate::expr::{Cmp, Expr, Rewrite, SubKind, SubLink};

impl Planner {
    /// `from` with the conjuncts of `filter` that can be joined pulled up
    /// into semi and anti joins over it, and the conjuncts left.
    pub(super) fn pull_up_sublinks(
        &self,
        mut from: From,
        filter: Expr,
    ) -> Result<(From, Option<Expr>), SqlError> {
        let mut rest = Vec::new();
        // A semi join's conditions that read only the FROM row come back
        // here as conjuncts of WHERE (an EXISTS nested in an EXISTS that
        // reads only the outer query is joined to it in turn).
        let mut todo: std::collections::VecDeque<Expr> = filter.into_conjuncts().into();
        while let Some(c) = todo.pop_front() {
            let (link, kind) = match &c {
                Expr::SubLink(link) => (&**link, JoinKind::Semi),
                Expr::Not(inner) => match &**inner {
                    Expr::SubLink(link) if link.kind == SubKind::Exists => (&**link, JoinKind::Anti),
                    _ => {
                        rest.push(c);
                        continue;
                    }
                },
                _ => {
                    rest.push(c);
                    continue;
                }
            };
            let width = from.width();
            match self.joined_sublink(link, kind, width)? {
                Some((right, conds)) => {
                    let mut on = Vec::with_capacity(conds.len());
                    for cond in conds {
                        let outer_only = cond.columns(&self.stack)?.iter().all(|&i| i < width);
                        if kind == JoinKind::Semi && outer_only {
                            todo.push_back(cond);
                        } else {
                            on.push(cond);
                        }
                    }
                    let mut outer = Vec::new();
                    for c in &on {
                        outer.extend(c.columns(&self.stack)?.into_iter().filter(|&i| i < width));
                    }
                    from = self.attach(from, 0, width, right, kind, on, &outer)?;
                }
                None => rest.push(c),
            }
        }
        Ok((from, Expr::conjunction(rest)))
    }

    /// `from` (at `offset`, ending at `end`) with a semi or anti join to
    /// `right` on `on` (its right columns from `end`), placed as low as
    /// the FROM row columns it reads (`outer`) allow: into the side of an
    /// inner join (or the preserved side of a left join) that holds them
    /// all, so that it filters that side's rows before they are joined
    /// further, as PostgreSQL places a semi join among the others.
    #[allow(clippy::too_many_arguments)]
    fn attach(
        &self,
        from: From,
        offset: usize,
        end: usize,
        right: From,
        kind: JoinKind,
        on: Vec<Expr>,
        outer: &[usize],
    ) -> Result<From, SqlError> {
        self.stack.check()?;
        let within = |lo: usize, hi: usize| !outer.is_empty() && outer.iter().all(|&i| lo <= i && i < hi);
        let From::Join(mut j) = from else {
            return Ok(From::Join(Box::new(Join { left: from, right, kind, on: Expr::conjunction(on) })));
        };
        let split = offset + j.left.width();
        if matches!(j.kind, JoinKind::Inner | JoinKind::Left) && within(offset, split) {
            // Its right columns now start where the left side ends.
            let back = end - split;
            let shift = |e: Expr| e.remap_columns(&self.stack, &|i| if i >= end { i - back } else { i });
            let on = on.into_iter().map(shift).collect::<Result<Vec<_>, _>>()?;
            let right = self.copy_from(&right, &shift)?.ok_or_else(|| {
                SqlError::new(
                    snapscale_sqlstate::SqlState::INTERNAL_ERROR,
                    "a pulled-up subquery lost its tables",
                )
            })?;
            let left = std::mem::replace(&mut j.left, From::Values { rows: Vec::new(), columns: Vec::new() });
            j.left = self.attach(left, offset, split, right, kind, on, outer)?;
            return Ok(From::Join(j));
        }
        if j.kind == JoinKind::Inner && within(split, end) && !matches!(j.right, From::Lateral { .. }) {
            let inner =
                std::mem::replace(&mut j.right, From::Values { rows: Vec::new(), columns: Vec::new() });
            j.right = self.attach(inner, split, end, right, kind, on, outer)?;
            return Ok(From::Join(j));
        }
        Ok(From::Join(Box::new(Join { left: From::Join(j), right, kind, on: Expr::conjunction(on) })))
    }

    /// The right side and condition of the semi or anti join that answers
    /// `link` over a FROM row `width` wide, if it can be pulled up.
    fn joined_sublink(
        &self,
        link: &SubLink,
        kind: JoinKind,
        width: usize,
    ) -> Result<Option<(From, Vec<Expr>)>, SqlError> {
        let lhs = match &link.kind {
            SubKind::Exists => None,
            SubKind::Any { lhs, op: Cmp::Eq, bpchar } if kind == JoinKind::Semi => Some((lhs, *bpchar)),
            _ => return Ok(None),
        };
        let pending = self.pending.borrow();
        let Some(Some(sub)) = pending.get(link.plan) else { return Ok(None) };
        if !self.simple_subquery(sub, &link.args, lhs.is_none())? {
            return Ok(None);
        }
        // As PostgreSQL 15 does: an IN whose subquery reads the enclosing
        // row, and an EXISTS whose condition does not (it is then a
        // constant, computed once), stay subplans.
        let correlated = match &sub.filter {
            Some(f) => reads_outer(f, &self.stack)?,
            None => false,
        };
        if (lhs.is_some() && !link.args.is_empty()) || (lhs.is_none() && !correlated) {
            return Ok(None);
        }
        let Some(from) = sub.from.as_ref() else { return Ok(None) };
        let lift = |e: Expr| self.lift(e, width, &link.args);
        let Some(right) = self.copy_from(from, &lift)? else { return Ok(None) };
        let mut conds = Vec::new();
        if let Some(f) = &sub.filter {
            conds.extend(lift(f.clone())?.into_conjuncts());
        }
        if let Some((lhs, bpchar)) = lhs {
            // The compared values must be plain scalars: a row or an
            // array compares with NULLs inside it, which a hash key would
            // find equal.
            let ([output], [column]) = (&sub.outputs[..], &sub.columns[..]) else { return Ok(None) };
            if !plain_type(column.ty) || !self.pullable(output, link.args.len())? || !self.pullable(lhs, 0)? {
                return Ok(None);
            }
            conds.push(Expr::Compare(
                Box::new(lhs.clone()),
                Cmp::Eq,
                Box::new(lift(output.clone())?),
                bpchar,
            ));
        }
        Ok(Some((right, conds)))
    }

    /// Whether subquery `sub` (with `args` passed in) is one a join
    /// answers: see the module documentation.
    fn simple_subquery(&self, sub: &Select, args: &[Expr], exists: bool) -> Result<bool, SqlError> {
        // EXISTS asks for one row: a constant LIMIT that allows one (or
        // LIMIT NULL, no limit) changes nothing, as PostgreSQL drops it.
        let limit = match &sub.limit {
            None => true,
            Some(l) => exists && allows_a_row(l),
        };
        let plain = sub.grouping.is_none()
            && sub.windows.is_empty()
            && sub.srfs.is_empty()
            && limit
            && sub.offset.is_none()
            && sub.lock.is_none()
            && sub.distinct_on.is_empty();
        if !plain {
            return Ok(false);
        }
        for a in args {
            if !self.pullable(a, 0)? {
                return Ok(false);
            }
        }
        match &sub.filter {
            Some(f) => self.liftable(f, args.len(), true),
            None => Ok(true),
        }
    }

    /// True if `e` calls nothing volatile, holds no subquery, and reads
    /// only outer references below `outer`.
    fn pullable(&self, e: &Expr, outer: usize) -> Result<bool, SqlError> {
        self.liftable(e, outer, false)
    }

    /// As [`Self::pullable`], but with `sublinks` subqueries (not SQL
    /// function calls) are allowed: a subquery in a condition moves with
    /// it, its arguments read from the joined row.
    fn liftable(&self, e: &Expr, outer: usize, sublinks: bool) -> Result<bool, SqlError> {
        let mut ok = true;
        e.visit(&self.stack, &mut |x| match x {
            Expr::SubLink(link) if sublinks && !matches!(link.kind, SubKind::Call(_)) => {}
            Expr::SubLink(_) | Expr::Agg(_) | Expr::GroupKey(_) | Expr::Window(_) | Expr::SetFunc(_) => {
                ok = false
            }
            Expr::Func(f, _) if f.is_volatile() => ok = false,
            Expr::Outer(i) if *i >= outer => ok = false,
            _ => {}
        })?;
        Ok(ok)
    }

    /// A subquery's expression over the joined row: its columns after
    /// the FROM row's `width`, its outer references the values the
    /// enclosing row passes in (`args`, over the FROM row).
    fn lift(&self, e: Expr, width: usize, args: &[Expr]) -> Result<Expr, SqlError> {
        e.rewrite(&self.stack, &mut |e| {
            Ok(match e {
                Expr::Column(i) => Rewrite::Replace(Expr::Column(width + i)),
                Expr::Outer(i) => Rewrite::Replace(args.get(i).cloned().unwrap_or(Expr::Outer(i))),
                other => Rewrite::Descend(other),
            })
        })
    }

    /// A copy of a subquery's FROM of stored tables and joins of them,
    /// their conditions lifted by `lift`; `None` for any other item.
    fn copy_from(
        &self,
        from: &From,
        lift: &dyn Fn(Expr) -> Result<Expr, SqlError>,
    ) -> Result<Option<From>, SqlError> {
        self.stack.check()?;
        Ok(match from {
            From::Table(rel) => Some(From::Table(rel.clone())),
            From::Join(j) if !j.kind.left_only() => {
                if let Some(on) = &j.on {
                    if !self.pullable(on, usize::MAX)? {
                        return Ok(None);
                    }
                }
                let (Some(left), Some(right)) =
                    (self.copy_from(&j.left, lift)?, self.copy_from(&j.right, lift)?)
                else {
                    return Ok(None);
                };
                let on = j.on.clone().map(lift).transpose()?;
                Some(From::Join(Box::new(Join { left, right, kind: j.kind, on })))
            }
            _ => None,
        })
    }
}

/// True if `e` reads an enclosing row's value.
fn reads_outer(e: &Expr, stack: &crate::stack::StackDepth) -> Result<bool, SqlError> {
    let mut outer = false;
    e.visit(stack, &mut |x| outer |= matches!(x, Expr::Outer(_)))?;
    Ok(outer)
}

/// True for a LIMIT that is a constant NULL or a positive count.
fn allows_a_row(limit: &Expr) -> bool {
    match limit {
        Expr::Cast(inner, ..) => allows_a_row(inner),
        Expr::Const(Value::Null) => true,
        Expr::Const(Value::Int(n)) => *n > 0,
        _ => false,
    }
}

/// A type whose values a hash key compares as `=` does.
fn plain_type(ty: SqlType) -> bool {
    !matches!(ty, SqlType::Array(_) | SqlType::Record(_) | SqlType::Json | SqlType::Jsonb | SqlType::JsonPath)
}
