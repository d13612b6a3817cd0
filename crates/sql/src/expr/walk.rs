//! Walking bound expressions: one rewriter and one visitor, so that the
//! passes that move expressions between row layouts (the planner's join
//! layouts, grouping) do not each repeat the shape of [`Expr`].
//!
//! Both descend into a subquery's arguments and its quantified comparison's
//! left side, which belong to the enclosing row, but never into the
//! subquery's own plan, whose columns are its own.

use super::*;

/// What a rewrite callback decides for one node.
pub enum Rewrite {
    /// Use this expression in its place, and do not descend into it.
    Replace(Expr),
    /// Keep the node and rewrite its children.
    Descend(Expr),
}

impl Expr {
    /// Rewrites the expression top-down: `f` sees each node before its
    /// children and either replaces it or lets the walk descend. Bounded by
    /// `stack` (the depth is the binder's, which checked the same limit).
    pub fn rewrite(
        self,
        stack: &StackDepth,
        f: &mut dyn FnMut(Expr) -> Result<Rewrite, SqlError>,
    ) -> Result<Expr, SqlError> {
        stack.check()?;
        let e = match f(self)? {
            Rewrite::Replace(e) => return Ok(e),
            Rewrite::Descend(e) => e,
        };
        let mut one = |x: Box<Expr>| x.rewrite(stack, f).map(Box::new);
        Ok(match e {
            leaf @ (Expr::Const(_)
            | Expr::Column(_)
            | Expr::Param(_)
            | Expr::Called(_)
            | Expr::Outer(_)
            | Expr::Agg(_)
            | Expr::GroupKey(_)
            | Expr::Window(_)
            | Expr::SetFunc(_)) => leaf,
            Expr::Chain(first, steps) => {
                let first = one(first)?;
                let mut out = Vec::with_capacity(steps.len());
                for s in steps {
                    out.push(match s {
                        Step::Arith(op, x, ty) => Step::Arith(op, x.rewrite(stack, f)?, ty),
                        Step::Concat(x) => Step::Concat(x.rewrite(stack, f)?),
                        cast @ Step::Cast(..) => cast,
                    });
                }
                Expr::Chain(first, out)
            }
            Expr::Neg(a, ty) => Expr::Neg(one(a)?, ty),
            Expr::Compare(a, op, b, bp) => {
                let a = one(a)?;
                Expr::Compare(a, op, b.rewrite(stack, f).map(Box::new)?, bp)
            }
            Expr::And(args) => Expr::And(rewrite_all(args, stack, f)?),
            Expr::Or(args) => Expr::Or(rewrite_all(args, stack, f)?),
            Expr::Not(a) => Expr::Not(one(a)?),
            Expr::IsNull(a, n) => Expr::IsNull(one(a)?, n),
            Expr::InList(a, l, n) => {
                let a = one(a)?;
                Expr::InList(a, rewrite_all(l, stack, f)?, n)
            }
            Expr::Like(a, b, n) => {
                let a = one(a)?;
                Expr::Like(a, b.rewrite(stack, f).map(Box::new)?, n)
            }
            Expr::Cast(a, ty, ex) => Expr::Cast(one(a)?, ty, ex),
            Expr::Func(func, args) => Expr::Func(func, rewrite_all(args, stack, f)?),
            Expr::UserType(op, args) => Expr::UserType(op, rewrite_all(args, stack, f)?),
            Expr::SubLink(link) => {
                let SubLink { kind, plan, args } = *link;
                let kind = match kind {
                    SubKind::Any { lhs, op, bpchar } => {
                        SubKind::Any { lhs: lhs.rewrite(stack, f)?, op, bpchar }
                    }
                    SubKind::All { lhs, op, bpchar } => {
                        SubKind::All { lhs: lhs.rewrite(stack, f)?, op, bpchar }
                    }
                    other => other,
                };
                Expr::SubLink(Box::new(SubLink { kind, plan, args: rewrite_all(args, stack, f)? }))
            }
        })
    }

    /// Calls `f` on every node, parents before children (not inside a
    /// subquery's plan).
    pub fn visit(&self, stack: &StackDepth, f: &mut dyn FnMut(&Expr)) -> Result<(), SqlError> {
        stack.check()?;
        f(self);
        match self {
            Expr::Const(_)
            | Expr::Column(_)
            | Expr::Param(_)
            | Expr::Called(_)
            | Expr::Outer(_)
            | Expr::Agg(_)
            | Expr::GroupKey(_)
            | Expr::Window(_)
            | Expr::SetFunc(_) => {}
            Expr::Chain(first, steps) => {
                first.visit(stack, f)?;
                for s in steps {
                    if let Some(x) = s.operand() {
                        x.visit(stack, f)?;
                    }
                }
            }
            Expr::Neg(a, _) | Expr::Not(a) | Expr::IsNull(a, _) | Expr::Cast(a, _, _) => a.visit(stack, f)?,
            Expr::Compare(a, _, b, _) | Expr::Like(a, b, _) => {
                a.visit(stack, f)?;
                b.visit(stack, f)?;
            }
            Expr::And(args) | Expr::Or(args) | Expr::Func(_, args) | Expr::UserType(_, args) => {
                for a in args {
                    a.visit(stack, f)?;
                }
            }
            Expr::InList(a, l, _) => {
                a.visit(stack, f)?;
                for x in l {
                    x.visit(stack, f)?;
                }
            }
            Expr::SubLink(link) => {
                if let SubKind::Any { lhs, .. } | SubKind::All { lhs, .. } = &link.kind {
                    lhs.visit(stack, f)?;
                }
                for a in &link.args {
                    a.visit(stack, f)?;
                }
            }
        }
        Ok(())
    }

    /// The row columns the expression reads, sorted, without repeats.
    pub fn columns(&self, stack: &StackDepth) -> Result<Vec<usize>, SqlError> {
        let mut out = Vec::new();
        self.visit(stack, &mut |e| {
            if let Expr::Column(i) = e {
                out.push(*i);
            }
        })?;
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// The expression with every column `i` read as column `map(i)`.
    pub fn remap_columns(self, stack: &StackDepth, map: &dyn Fn(usize) -> usize) -> Result<Expr, SqlError> {
        self.rewrite(stack, &mut |e| {
            Ok(match e {
                Expr::Column(i) => Rewrite::Replace(Expr::Column(map(i))),
                other => Rewrite::Descend(other),
            })
        })
    }

    /// The conjuncts of a WHERE or ON clause: the arguments of a top-level
    /// AND, or the expression itself.
    pub fn into_conjuncts(self) -> Vec<Expr> {
        match self {
            Expr::And(args) => args,
            other => vec![other],
        }
    }

    /// The AND of `conjuncts`, or `None` for none.
    pub fn conjunction(mut conjuncts: Vec<Expr>) -> Option<Expr> {
        match conjuncts.len() {
            0 => None,
            1 => conjuncts.pop(),
            _ => Some(Expr::And(conjuncts)),
        }
    }
}

fn rewrite_all(
    args: Vec<Expr>,
    stack: &StackDepth,
    f: &mut dyn FnMut(Expr) -> Result<Rewrite, SqlError>,
) -> Result<Vec<Expr>, SqlError> {
    args.into_iter().map(|a| a.rewrite(stack, f)).collect()
}
