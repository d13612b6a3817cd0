//! Which subplans give the same rows for the same arguments within a
//! statement: those whose expressions call nothing volatile (no
//! `random()`, `nextval()`, advisory locks, PL/pgSQL calls per row, no
//! volatile SQL function) and whose operators are the plain ones below.
//! The executor may then answer a correlated subplan's repeated arguments
//! from its earlier runs (exec/subplan.rs) instead of running it again, as
//! PostgreSQL's Memoize node caches a parameterised inner side; a
//! volatile one runs for every row that asks, as PostgreSQL's does.

use super::physical::{Access, IndexArm, Node, Query, ScanNode};
use crate::expr::{Expr, SubKind};
use crate::stack::StackDepth;

impl Query {
    /// True if the rows this subplan gives depend on its arguments alone
    /// (`plans`: the statement's subplans, which its subqueries name).
    pub fn is_stable(&self, plans: &[Query], stack: &StackDepth) -> bool {
        node_stable(&self.root, plans, stack)
    }
}

fn node_stable(node: &Node, plans: &[Query], stack: &StackDepth) -> bool {
    if stack.check().is_err() {
        return false;
    }
    let exprs = |es: &[Expr]| es.iter().all(|e| expr_stable(e, plans, stack));
    let opt = |e: &Option<Expr>| e.as_ref().is_none_or(|e| expr_stable(e, plans, stack));
    let here = match node {
        Node::Result => true,
        Node::Scan(scan) => scan_stable(scan, plans, stack),
        Node::Filter { cond, .. } => expr_stable(cond, plans, stack),
        Node::Project { exprs: es, .. } => exprs(es),
        Node::Limit { offset, limit, .. } => opt(offset) && opt(limit),
        Node::Sort { keys, .. } => keys.iter().all(|k| expr_stable(&k.expr, plans, stack)),
        Node::Unique { keys, .. } => exprs(keys),
        Node::Values(rows) => rows.iter().all(|r| exprs(r)),
        Node::SetOp { .. } => true,
        // The catalog as the statement sees it (read once per statement).
        Node::Computed { filter, .. } => opt(filter),
        // The set-returning functions of FROM answer by their arguments.
        Node::Function { args, .. } => exprs(args),
        Node::Aggregate { keys, aggs, having, .. } => {
            exprs(keys)
                && opt(having)
                && aggs.iter().all(|a| {
                    a.user.is_none()
                        && opt(&a.arg)
                        && opt(&a.delimiter)
                        && opt(&a.filter)
                        && a.order.iter().all(|k| expr_stable(&k.expr, plans, stack))
                })
        }
        Node::NestLoop { join } => opt(&join.cond),
        Node::HashJoin { join, left_keys, right_keys } => {
            opt(&join.cond) && exprs(left_keys) && exprs(right_keys)
        }
        Node::IndexJoin { right, probes, cond, .. } => {
            scan_stable(right, plans, stack) && exprs(probes) && opt(cond)
        }
        // Set-returning calls in a select list, windows, row locks and
        // recursion: left to run every time.
        _ => false,
    };
    here && node.inputs().into_iter().all(|n| node_stable(n, plans, stack))
}

fn scan_stable(scan: &ScanNode, plans: &[Query], stack: &StackDepth) -> bool {
    let e = |e: &Expr| expr_stable(e, plans, stack);
    let bound = |b: &std::ops::Bound<Expr>| match b {
        std::ops::Bound::Included(x) | std::ops::Bound::Excluded(x) => e(x),
        std::ops::Bound::Unbounded => true,
    };
    let access = match &scan.access {
        Access::Seq => true,
        Access::IndexEq { probes, .. } => probes.iter().all(e),
        Access::IndexRange { lower, upper, .. } => bound(lower) && bound(upper),
        Access::IndexAny { arms, .. } => arms.iter().all(|a| match a {
            IndexArm::Eq(x) | IndexArm::EachOf(x) => e(x),
            IndexArm::Range { lower, upper } => bound(lower) && bound(upper),
        }),
        Access::CurrentOf(_) => false,
    };
    access && scan.filter.as_ref().is_none_or(e)
}

fn expr_stable(e: &Expr, plans: &[Query], stack: &StackDepth) -> bool {
    let mut stable = true;
    let walked = e.visit(stack, &mut |x| match x {
        Expr::Func(f, _) if f.is_volatile() => stable = false,
        Expr::SubLink(link) => match &link.kind {
            SubKind::Call(call) if call.volatile => stable = false,
            _ => {
                if stable {
                    stable = plans.get(link.plan).is_some_and(|q| q.is_stable(plans, stack));
                }
            }
        },
        // What a PL/pgSQL function returned before the statement is fixed;
        // a user type's operations read only their arguments.
        _ => {}
    });
    walked.is_ok() && stable
}
