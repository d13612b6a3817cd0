//! Planning FROM clauses: where each condition is applied, and how each
//! join is done.
//!
//! A condition (a conjunct of WHERE or of a join's ON) is applied as low in
//! the tree as its meaning allows. Over an inner join it goes to the side
//! whose columns it reads, or becomes the join's condition if it reads
//! both; an outer join passes down only what cannot change which rows it
//! null-extends: WHERE conditions on its preserved side, and ON conditions
//! on its nullable side. What stays above an outer join is a Filter on its
//! output. A condition that reads a table's columns only becomes that
//! table's scan filter, where the planner may pick an index for it.
//!
//! Each join is then done by one of three methods, chosen from its
//! conditions: an index join when the right side is a stored table with an
//! index whose leading columns the condition equates with values of the
//! left row (one index lookup per left row), else a hash join on the
//! equated columns, else a nested loop over both sides' rows. The written
//! order of the tables is kept. Semi and anti joins (subqueries of WHERE
//! pulled up, plan/semijoin.rs) are done the same three ways.

use std::sync::Arc;

use snapscale_engine::index::Index;
use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use super::physical::{JoinNode, Node, ScanNode};
use super::planner::Planner;
use super::{From, Join, JoinKind, Rel, Scan, SetOp};
use crate::expr::{Cmp, Expr};

/// The layout of a FROM row whose locked tables carry their tids (for a
/// join under FOR UPDATE): a column after each such table's row, so that
/// column `i` of the bound query moves right by one for each locked table
/// before it.
pub(super) struct TidLayout {
    /// (offset, width) of each locked table, as bound.
    pub tables: Vec<(usize, usize)>,
}

impl TidLayout {
    pub fn map(&self, i: usize) -> usize {
        i + self.tables.iter().filter(|(o, w)| o + w <= i).count()
    }
}

/// A stored table's row width: its columns and its row id.
pub(super) fn width(rel: &Rel) -> usize {
    rel.entry.columns.len() + 1
}

/// The stored tables of `from` (at `offset`) whose offsets are `offsets`.
pub(super) fn locked_tables(from: &From, offsets: &[usize], offset: usize) -> Vec<(usize, Rel)> {
    match from {
        From::Table(rel) if offsets.contains(&offset) => vec![(offset, rel.clone())],
        From::Join(j) => {
            let mut out = locked_tables(&j.left, offsets, offset);
            out.extend(locked_tables(&j.right, offsets, offset + j.left.width()));
            out
        }
        _ => Vec::new(),
    }
}

/// Appends the ON conditions of `from`'s inner joins (what a row with a
/// newer locked version must still satisfy).
pub(super) fn inner_join_conditions(from: &From, out: &mut Vec<Expr>) {
    if let From::Join(j) = from {
        if j.kind == JoinKind::Inner {
            if let Some(on) = &j.on {
                out.extend(on.clone().into_conjuncts());
            }
        }
        inner_join_conditions(&j.left, out);
        inner_join_conditions(&j.right, out);
    }
}

/// `node` with a Filter of `cond` on it, if there is one.
fn filtered(node: Node, cond: Option<Expr>) -> Node {
    match cond {
        None => node,
        Some(cond) => Node::Filter { input: Box::new(node), cond },
    }
}

/// Which side of a join a condition reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    /// No column: a constant, a parameter, an enclosing row's value.
    Neither,
    Left,
    Right,
    Both,
}

impl Planner {
    /// `from` with its join conditions in the layout `layout` makes.
    pub(super) fn remap_from(&self, from: From, layout: &TidLayout) -> Result<From, SqlError> {
        self.stack.check()?;
        Ok(match from {
            From::Join(j) => {
                let Join { left, right, kind, on } = *j;
                From::Join(Box::new(Join {
                    left: self.remap_from(left, layout)?,
                    right: self.remap_from(right, layout)?,
                    kind,
                    on: on.map(|e| e.remap_columns(&self.stack, &|i| layout.map(i))).transpose()?,
                }))
            }
            From::Lateral { item, args } => From::Lateral {
                item,
                args: args
                    .into_iter()
                    .map(|e| e.remap_columns(&self.stack, &|i| layout.map(i)))
                    .collect::<Result<_, _>>()?,
            },
            other => other,
        })
    }

    /// The width of `from`'s rows at `offset`, with a tid column after each
    /// table at an offset in `tids`.
    fn item_width(&self, from: &From, offset: usize, tids: &[usize]) -> usize {
        match from {
            From::Table(rel) => width(rel) + usize::from(tids.contains(&offset)),
            From::Join(j) if j.kind.left_only() => self.item_width(&j.left, offset, tids),
            From::Join(j) => {
                let left = self.item_width(&j.left, offset, tids);
                left + self.item_width(&j.right, offset + left, tids)
            }
            other => other.width(),
        }
    }

    /// Plans the FROM item `item`, whose columns start at `offset` of the
    /// FROM row, applying `conds` (numbered as the FROM row, reading only
    /// this item's columns) within it. Its rows start at column 0.
    pub(super) fn plan_from(
        &self,
        item: From,
        offset: usize,
        conds: Vec<Expr>,
        tids: &[usize],
    ) -> Result<Node, SqlError> {
        self.stack.check()?;
        let local = |conds: Vec<Expr>| -> Result<Option<Expr>, SqlError> {
            let shifted = conds
                .into_iter()
                .map(|c| c.remap_columns(&self.stack, &|i| i - offset))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(Expr::conjunction(shifted))
        };
        Ok(match item {
            From::Table(rel) => {
                let mut scan = self.scan_node(Scan { rel, filter: local(conds)? });
                scan.with_tid = tids.contains(&offset);
                Node::Scan(scan)
            }
            From::Computed(view) => Node::Computed { view, filter: local(conds)? },
            From::Derived(select) => filtered(self.query(*select)?.root, local(conds)?),
            From::Join(j) => self.join(*j, offset, conds, tids)?,
            From::SetOp(s) => {
                let SetOp { op, all, left, right, .. } = *s;
                let node = Node::SetOp {
                    op,
                    all,
                    left: Box::new(self.query(left)?.root),
                    right: Box::new(self.query(right)?.root),
                };
                filtered(node, local(conds)?)
            }
            From::Values { rows, .. } => filtered(Node::Values(rows), local(conds)?),
            From::Function { func, args, ordinality } => {
                filtered(Node::Function { func, args, ordinality }, local(conds)?)
            }
            From::Recursive(r) => {
                let super::Recursive { id, all, base, step, .. } = *r;
                let node = Node::RecursiveUnion {
                    id,
                    all,
                    base: Box::new(self.query(base)?.root),
                    step: Box::new(self.query(step)?.root),
                };
                filtered(node, local(conds)?)
            }
            From::WorkTable { id, .. } => filtered(Node::WorkTable(id), local(conds)?),
            // The numbers are given before any condition is applied.
            From::Numbered(item) => {
                let input = self.plan_from(*item, offset, Vec::new(), tids)?;
                filtered(Node::Numbered(Box::new(input)), local(conds)?)
            }
            From::Zip { items, ordinality } => {
                let mut nodes = Vec::with_capacity(items.len());
                let mut at = offset;
                for item in items {
                    let super::ZipItem { from, width, args } = item;
                    nodes.push((self.plan_from(from, at, Vec::new(), tids)?, width, args));
                    at += width;
                }
                filtered(Node::Zip { items: nodes, ordinality }, local(conds)?)
            }
            From::Lateral { .. } => {
                return Err(SqlError::new(
                    SqlState::INTERNAL_ERROR,
                    "a LATERAL item is planned only as the right side of a join",
                ))
            }
        })
    }

    fn join(&self, j: Join, offset: usize, conds: Vec<Expr>, tids: &[usize]) -> Result<Node, SqlError> {
        let Join { left, right, kind, on } = j;
        let left_width = self.item_width(&left, offset, tids);
        let right_width = self.item_width(&right, offset + left_width, tids);
        let split = offset + left_width;
        let side = |e: &Expr| -> Result<Side, SqlError> {
            let cols = e.columns(&self.stack)?;
            Ok(match (cols.first(), cols.last()) {
                (None, _) | (_, None) => Side::Neither,
                (Some(_), Some(&last)) if last < split => Side::Left,
                (Some(&first), Some(_)) if first >= split => Side::Right,
                _ => Side::Both,
            })
        };
        let (mut to_left, mut to_right, mut at_join, mut above) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        // Conditions from above (WHERE, or an enclosing inner join's); a
        // semi or anti join's row is its left row.
        for c in conds {
            match (kind, side(&c)?) {
                (
                    JoinKind::Inner | JoinKind::Left | JoinKind::Semi | JoinKind::Anti,
                    Side::Left | Side::Neither,
                ) => to_left.push(c),
                (JoinKind::Inner | JoinKind::Right, Side::Right) => to_right.push(c),
                (JoinKind::Right, Side::Neither) => to_right.push(c),
                (JoinKind::Inner, Side::Both) => at_join.push(c),
                _ => above.push(c),
            }
        }
        // The join's own ON conditions. A semi join's left-only condition
        // filters its left rows; an anti join keeps a row that fails it,
        // so it is checked at the join.
        for c in on.map(Expr::into_conjuncts).unwrap_or_default() {
            match (kind, side(&c)?) {
                (JoinKind::Inner | JoinKind::Semi, Side::Left | Side::Neither)
                | (JoinKind::Right, Side::Left) => to_left.push(c),
                (JoinKind::Inner | JoinKind::Left | JoinKind::Semi | JoinKind::Anti, Side::Right) => {
                    to_right.push(c)
                }
                _ => at_join.push(c),
            }
        }
        let left_node = self.plan_from(left, offset, to_left, tids)?;
        let (right, lateral_args) = match right {
            From::Lateral { item, args } => (*item, Some(args)),
            other => (other, None),
        };
        let right_node = self.plan_from(right, split, to_right, tids)?;
        let at_join = at_join
            .into_iter()
            .map(|c| c.remap_columns(&self.stack, &|i| i - offset))
            .collect::<Result<Vec<_>, _>>()?;
        let node = match lateral_args {
            // Run again for each left row, with that row's values as its
            // outer values: a nested loop whatever the conditions.
            Some(args) => Node::Lateral {
                join: JoinNode {
                    left: Box::new(left_node),
                    right: Box::new(right_node),
                    kind,
                    cond: Expr::conjunction(at_join),
                    left_width,
                    right_width,
                },
                args: args
                    .into_iter()
                    .map(|a| a.remap_columns(&self.stack, &|i| i - offset))
                    .collect::<Result<Vec<_>, _>>()?,
            },
            None => self.join_method(left_node, right_node, kind, at_join, left_width, right_width)?,
        };
        if above.is_empty() {
            return Ok(node);
        }
        let cond = Expr::conjunction(
            above
                .into_iter()
                .map(|c| c.remap_columns(&self.stack, &|i| i - offset))
                .collect::<Result<Vec<_>, _>>()?,
        )
        .expect("not empty");
        Ok(Node::Filter { input: Box::new(node), cond })
    }

    /// Chooses how to join `left` and `right` under `conds` (over the
    /// joined row: left columns first).
    fn join_method(
        &self,
        left: Node,
        right: Node,
        kind: JoinKind,
        conds: Vec<Expr>,
        left_width: usize,
        right_width: usize,
    ) -> Result<Node, SqlError> {
        // Equalities of a left-side expression with a right-side one.
        let mut keys: Vec<(Expr, Expr)> = Vec::new();
        let mut residual = Vec::new();
        for c in &conds {
            match self.equi_key(c, left_width)? {
                Some(pair) => keys.push(pair),
                None => residual.push(c.clone()),
            }
        }
        // enable_*: an index probe is a nested loop, and takes index
        // scans; with nested loops off, a hash join is preferred where the
        // keys allow one (and neither is forbidden where it is the only
        // way, as PostgreSQL costs a disabled method out, not away).
        let s = self.settings;
        let hash_instead = !keys.is_empty() && s.hash_joins() && !s.nested_loops();
        if !matches!(kind, JoinKind::Right | JoinKind::Full) && s.index_scans() && !hash_instead {
            if let Node::Scan(scan) = &right {
                if let Some((index, probes)) = index_for(scan, &keys) {
                    let Node::Scan(scan) = right else { unreachable!("matched above") };
                    let ScanNode { rel, filter, with_tid, .. } = scan;
                    let right = ScanNode { rel, access: super::physical::Access::Seq, filter, with_tid };
                    return Ok(Node::IndexJoin {
                        left: Box::new(left),
                        right,
                        index,
                        probes,
                        kind,
                        // Every condition, the probed ones too: an index
                        // points at versions, and a tid may have been
                        // reused (INDEX-VERSIONS).
                        cond: Expr::conjunction(conds),
                    });
                }
            }
        }
        let join = |cond| JoinNode {
            left: Box::new(left),
            right: Box::new(right),
            kind,
            cond,
            left_width,
            right_width,
        };
        if keys.is_empty() || (!s.hash_joins() && s.nested_loops()) {
            return Ok(Node::NestLoop { join: join(Expr::conjunction(conds)) });
        }
        // The hash table matches the keys exactly; the rest is checked on
        // each matching pair.
        let (left_keys, right_keys) = keys.into_iter().unzip();
        Ok(Node::HashJoin { join: join(Expr::conjunction(residual)), left_keys, right_keys })
    }

    /// `a = b` with `a` reading only left columns and `b` only right ones
    /// (or the reverse): (left key over the left row, right key over the
    /// right row). char(n) comparisons are left to the condition.
    fn equi_key(&self, c: &Expr, left_width: usize) -> Result<Option<(Expr, Expr)>, SqlError> {
        let Expr::Compare(a, Cmp::Eq, b, false) = c else { return Ok(None) };
        let (ca, cb) = (a.columns(&self.stack)?, b.columns(&self.stack)?);
        let left_only = |cols: &[usize]| !cols.is_empty() && cols.iter().all(|&i| i < left_width);
        let right_only = |cols: &[usize]| !cols.is_empty() && cols.iter().all(|&i| i >= left_width);
        let to_right = |e: &Expr| e.clone().remap_columns(&self.stack, &|i| i - left_width);
        Ok(if left_only(&ca) && right_only(&cb) {
            Some(((**a).clone(), to_right(b)?))
        } else if left_only(&cb) && right_only(&ca) {
            Some(((**b).clone(), to_right(a)?))
        } else {
            None
        })
    }
}

/// An index of the scanned table whose leading columns the keys equate
/// with left-row values (the more columns the better), with those values.
fn index_for(scan: &ScanNode, keys: &[(Expr, Expr)]) -> Option<(Arc<Index>, Vec<Expr>)> {
    let probe = |col: usize| keys.iter().find(|(_, r)| *r == Expr::Column(col)).map(|(l, _)| l.clone());
    let mut best: Option<(Arc<Index>, Vec<Expr>)> = None;
    // A partial index would need the probe's predicate; an expression's
    // key part takes no column's values.
    for def in scan.rel.entry.indexes.iter().filter(|d| !d.computed()) {
        let probes: Vec<Expr> = def.columns.iter().map_while(|&c| probe(c)).collect();
        if !probes.is_empty() && best.as_ref().is_none_or(|(_, p)| probes.len() > p.len()) {
            best = Some((Arc::clone(scan.rel.heap.index(&scan.rel.entry, def)), probes));
        }
    }
    best
}
