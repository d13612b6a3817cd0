//! The planner: a logical plan in, a physical plan out.
//!
//! It chooses how each relation's rows are found (an index for equality on
//! an index's leading columns, else a range on an index's first column,
//! else a sequential scan), and lays a query out as a tree of operators
//! (see [`super::physical`]). Joins, when they come, are chosen here.

use std::ops::Bound;

use super::physical::{Access, Node, Query, ScanNode, Source, Statement};
use super::{Grouping, InsertSource, Plan, Rel, Scan, Select, SortKey};
use crate::error::SqlError;
use crate::expr::{Cmp, Expr, Step};
use crate::stack::StackDepth;

/// Plans a bound statement. `stack` bounds the rewriting of expressions
/// (their depth is the binder's, which checked the same limit).
pub fn plan(logical: Plan, stack: StackDepth) -> Result<Statement, SqlError> {
    let planner = Planner { stack };
    Ok(match logical {
        Plan::Select(s) => Statement::Query(planner.query(s)?),
        Plan::Insert(i) => Statement::Insert {
            rel: i.rel,
            targets: i.targets,
            defaults: i.defaults,
            source: match i.source {
                InsertSource::Values(rows) => Source::Values(rows),
                InsertSource::Query(q) => Source::Query(planner.query(*q)?),
            },
            returning: i.returning,
        },
        Plan::Update(u) => {
            Statement::Update { scan: scan_node(u.scan), sets: u.sets, returning: u.returning }
        }
        Plan::Delete(d) => Statement::Delete { scan: scan_node(d.scan), returning: d.returning },
        Plan::Utility(u) => Statement::Utility(u),
    })
}

struct Planner {
    stack: StackDepth,
}

impl Planner {
    fn query(&self, s: Select) -> Result<Query, SqlError> {
        let Select { from, grouping, mut outputs, columns, mut order, limit, offset, lock } = s;
        // FOR UPDATE locks the scanned relation's rows (the binder allows it
        // only with a FROM and without grouping).
        let (mut input, locking) = match from {
            Some(scan) => {
                let locking = lock.map(|how| (scan.rel.clone(), scan.filter.clone(), how));
                (Node::Scan(scan_node(scan)), locking)
            }
            None => (Node::Result, None),
        };
        if let Some(Grouping { keys, aggs, having }) = grouping {
            // Above the Aggregate, a row is the keys then the aggregates.
            let width = keys.len();
            let having = having.map(|h| self.ungroup(h, width)).transpose()?;
            for e in &mut outputs {
                *e = self.ungroup(take(e), width)?;
            }
            for k in &mut order {
                k.expr = self.ungroup(take(&mut k.expr), width)?;
            }
            input = Node::Aggregate { input: Box::new(input), keys, aggs, having };
        }
        let mut root = sorted(input, order);
        if let Some((rel, filter, how)) = locking {
            root = Node::LockRows { input: Box::new(root), rel, filter, how };
        }
        root = Node::Project { input: Box::new(root), exprs: outputs };
        if limit.is_some() || offset.is_some() {
            root = Node::Limit { input: Box::new(root), offset, limit };
        }
        Ok(Query { root, columns })
    }

    /// Rewrites an expression over groups into one over the Aggregate's
    /// rows: `GroupKey(i)` is column i, `Agg(j)` is column `width + j`.
    fn ungroup(&self, e: Expr, width: usize) -> Result<Expr, SqlError> {
        self.stack.check()?;
        let g = |x: Box<Expr>| self.ungroup(*x, width).map(Box::new);
        let all =
            |xs: Vec<Expr>| xs.into_iter().map(|x| self.ungroup(x, width)).collect::<Result<Vec<_>, _>>();
        Ok(match e {
            Expr::GroupKey(i) => Expr::Column(i),
            Expr::Agg(j) => Expr::Column(width + j),
            Expr::Const(_) | Expr::Param(_) | Expr::Column(_) => e,
            Expr::Chain(first, steps) => Expr::Chain(
                g(first)?,
                steps
                    .into_iter()
                    .map(|s| {
                        Ok(match s {
                            Step::Arith(op, x, ty) => Step::Arith(op, self.ungroup(x, width)?, ty),
                            Step::Concat(x) => Step::Concat(self.ungroup(x, width)?),
                            cast @ Step::Cast(..) => cast,
                        })
                    })
                    .collect::<Result<_, SqlError>>()?,
            ),
            Expr::Neg(a, ty) => Expr::Neg(g(a)?, ty),
            Expr::Compare(a, op, b, bp) => Expr::Compare(g(a)?, op, g(b)?, bp),
            Expr::And(args) => Expr::And(all(args)?),
            Expr::Or(args) => Expr::Or(all(args)?),
            Expr::Not(a) => Expr::Not(g(a)?),
            Expr::IsNull(a, n) => Expr::IsNull(g(a)?, n),
            Expr::InList(a, l, n) => Expr::InList(g(a)?, all(l)?, n),
            Expr::Like(a, b, n) => Expr::Like(g(a)?, g(b)?, n),
            Expr::Cast(a, ty, ex) => Expr::Cast(g(a)?, ty, ex),
            Expr::Func(f, args) => Expr::Func(f, all(args)?),
        })
    }
}

/// Takes an expression out of its place, leaving a NULL constant.
fn take(e: &mut Expr) -> Expr {
    std::mem::replace(e, Expr::Const(crate::types::Value::Null))
}

fn sorted(input: Node, keys: Vec<SortKey>) -> Node {
    if keys.is_empty() {
        input
    } else {
        Node::Sort { input: Box::new(input), keys }
    }
}

/// A scan with its access path chosen.
pub fn scan_node(scan: Scan) -> ScanNode {
    let access = scan.filter.as_ref().map_or(Access::Seq, |f| choose_access(&scan.rel, f));
    ScanNode { rel: scan.rel, access, filter: scan.filter }
}

/// Picks an index for `filter`'s conjuncts: equality on all of an index's
/// columns (or its leading ones, the more the better), else a range on a
/// first column.
fn choose_access(rel: &Rel, filter: &Expr) -> Access {
    let conjuncts: &[Expr] = match filter {
        Expr::And(args) => args,
        other => std::slice::from_ref(other),
    };
    // (column, operator, probe)
    let mut preds: Vec<(usize, Cmp, &Expr)> = Vec::new();
    for c in conjuncts {
        if let Expr::Compare(a, op, b, false) = c {
            match (a.as_ref(), b.as_ref()) {
                (Expr::Column(i), p) if p.is_row_free() => preds.push((*i, *op, p)),
                (p, Expr::Column(i)) if p.is_row_free() => preds.push((*i, op.flipped(), p)),
                _ => {}
            }
        }
    }
    let eq_probe = |col: usize| {
        preds.iter().find(|(c, op, _)| *c == col && *op == Cmp::Eq).map(|(_, _, p)| (*p).clone())
    };
    let mut best: Option<(usize, Access)> = None;
    for def in &rel.entry.indexes {
        let probes: Vec<Expr> = def.columns.iter().map_while(|&c| eq_probe(c)).collect();
        if !probes.is_empty() && best.as_ref().is_none_or(|(n, _)| probes.len() > *n) {
            let index = rel.heap.index(&rel.entry, def);
            best = Some((probes.len(), Access::IndexEq { index, probes }));
        }
    }
    if let Some((_, access)) = best {
        return access;
    }
    for def in &rel.entry.indexes {
        let first = def.columns[0];
        let mut lower = Bound::Unbounded;
        let mut upper = Bound::Unbounded;
        for (c, op, p) in &preds {
            if *c != first {
                continue;
            }
            match op {
                Cmp::Gt => lower = Bound::Excluded((*p).clone()),
                Cmp::Ge => lower = Bound::Included((*p).clone()),
                Cmp::Lt => upper = Bound::Excluded((*p).clone()),
                Cmp::Le => upper = Bound::Included((*p).clone()),
                _ => {}
            }
        }
        if !matches!((&lower, &upper), (Bound::Unbounded, Bound::Unbounded)) {
            return Access::IndexRange { index: rel.heap.index(&rel.entry, def), lower, upper };
        }
    }
    Access::Seq
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bind::tests::bound;
    use crate::plan::physical::Node;

    fn access(sql: &str) -> &'static str {
        let statement = plan(bound(sql).plan, StackDepth::here(1 << 20)).unwrap();
        let scan = match statement {
            Statement::Query(Query { root, .. }) => {
                let mut node = root;
                loop {
                    node = match node {
                        Node::Scan(scan) => break scan,
                        Node::Project { input, .. }
                        | Node::Sort { input, .. }
                        | Node::Limit { input, .. } => *input,
                        other => panic!("{other:?}"),
                    }
                }
            }
            Statement::Update { scan, .. } => scan,
            other => panic!("{other:?}"),
        };
        match scan.access {
            Access::Seq => "seq",
            Access::IndexEq { .. } => "eq",
            Access::IndexRange { .. } => "range",
        }
    }

    #[test]
    fn indexed_equality_and_ranges_use_the_index() {
        assert_eq!(access("SELECT b FROM t WHERE a = $1"), "eq");
        assert_eq!(access("SELECT b FROM t WHERE 3 = a AND b = 'x'"), "eq");
        assert_eq!(access("UPDATE t SET b = 'y' WHERE a = 4"), "eq");
        assert_eq!(access("SELECT b FROM t WHERE a > 5 AND a <= 9"), "range");
        assert_eq!(access("SELECT b FROM t WHERE a BETWEEN 1 AND 2"), "range");
        assert_eq!(access("SELECT b FROM t WHERE b = 'x'"), "seq");
        assert_eq!(access("SELECT b FROM t WHERE a + 0 = 1"), "seq");
        assert_eq!(access("SELECT b FROM t WHERE a = 1 OR a = 2"), "seq");
        assert_eq!(access("SELECT b FROM t WHERE a = 1 ORDER BY b LIMIT 3"), "eq");
    }

    #[test]
    fn queries_are_trees_of_operators() {
        let shape = |sql: &str| {
            let Statement::Query(q) = plan(bound(sql).plan, StackDepth::here(1 << 20)).unwrap() else {
                panic!()
            };
            let mut names = Vec::new();
            let mut node = &q.root;
            loop {
                let (name, next) = match node {
                    Node::Result => ("Result", None),
                    Node::Scan(_) => ("Scan", None),
                    Node::LockRows { input, .. } => ("LockRows", Some(input)),
                    Node::Aggregate { input, .. } => ("Aggregate", Some(input)),
                    Node::Sort { input, .. } => ("Sort", Some(input)),
                    Node::Project { input, .. } => ("Project", Some(input)),
                    Node::Limit { input, .. } => ("Limit", Some(input)),
                };
                names.push(name);
                match next {
                    Some(n) => node = n,
                    None => break,
                }
            }
            names.join(" > ")
        };
        assert_eq!(shape("SELECT 1"), "Project > Result");
        assert_eq!(shape("SELECT b FROM t ORDER BY a LIMIT 2"), "Limit > Project > Sort > Scan");
        assert_eq!(
            shape("SELECT b, count(*) FROM t GROUP BY b HAVING count(*) > 1 ORDER BY 2"),
            "Project > Sort > Aggregate > Scan"
        );
        assert_eq!(
            shape("SELECT a FROM t ORDER BY a LIMIT 1 FOR UPDATE SKIP LOCKED"),
            "Limit > Project > LockRows > Sort > Scan"
        );
    }
}
