//! The planner: a logical plan in, a physical plan out.
//!
//! It chooses how each relation's rows are found (an index for equality on
//! an index's leading columns, else a range on an index's first column,
//! else a sequential scan), and lays a query out as a tree of operators
//! (see [`super::physical`]). Joins, when they come, are chosen here.

use std::cell::RefCell;
use std::ops::Bound;

use snapscale_engine::catalog::IndexDef;
use snapscale_engine::index::Index;
use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use super::join::{inner_join_conditions, locked_tables, width, TidLayout};
use super::physical::{Access, LockTarget, Node, Query, ScanNode, Source, Statement};
use super::{From, Grouping, InsertSource, Plan, Rel, Scan, Select, SortKey};
use crate::expr::{Cmp, Expr, Rewrite};
use crate::plan::switches::PlannerSettings;
use crate::stack::StackDepth;

/// Plans a bound statement and the subqueries its expressions use (the
/// executor's subplans, by their `SubLink::plan` numbers). `stack` bounds
/// the rewriting of expressions (their depth is the binder's, which
/// checked the same limit).
pub fn plan(
    logical: Plan,
    subqueries: Vec<Select>,
    stack: StackDepth,
    settings: PlannerSettings,
) -> Result<(Statement, Vec<Query>), SqlError> {
    let n = subqueries.len();
    let planner =
        Planner { stack, settings, pending: RefCell::new(subqueries.into_iter().map(Some).collect()) };
    // The statement first, then the subqueries from the last bound: a
    // subquery's own subqueries were bound before it, so each is still
    // there to be pulled up into a join (plan/semijoin.rs) when the
    // query that uses it is planned. One pulled up is planned all the
    // same (it is then not run).
    let statement = planner.statement(logical)?;
    let mut subplans = Vec::with_capacity(n);
    for i in (0..n).rev() {
        let select = planner.pending.borrow_mut()[i].take();
        let select =
            select.ok_or_else(|| SqlError::new(SqlState::INTERNAL_ERROR, "a subquery was planned twice"))?;
        subplans.push(planner.query(select)?);
    }
    subplans.reverse();
    if subplans.iter().any(|q| q.root.locks_rows()) {
        return Err(SqlError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            "FOR UPDATE in a subquery is not supported",
        ));
    }
    Ok((statement, subplans))
}

impl Planner {
    /// The physical statement for one logical plan.
    fn statement(&self, logical: Plan) -> Result<Statement, SqlError> {
        let planner = self;
        let statement = match logical {
            Plan::With(w) => {
                let crate::plan::WithModifying { items, main } = *w;
                let items = items
                    .into_iter()
                    .map(|(id, item)| Ok((id, planner.statement(item)?)))
                    .collect::<Result<Vec<_>, SqlError>>()?;
                let main = planner.statement(main)?;
                Statement::With(Box::new(crate::plan::WithModifying { items, main }))
            }
            Plan::Select(s) => Statement::Query(planner.query(*s)?),
            Plan::Insert(i) => Statement::Insert {
                rel: i.rel,
                targets: i.targets,
                defaults: i.defaults,
                source: match i.source {
                    InsertSource::Values(rows) => Source::Values(rows),
                    InsertSource::Query(q) => Source::Query(Box::new(planner.query(*q)?)),
                },
                returning: i.returning,
                checks: i.checks,
                on_conflict: i.on_conflict,
                foreign_keys: i.foreign_keys,
            },
            Plan::Update(u) => Statement::Update {
                scan: planner.current_of(planner.scan_node(u.scan), u.current_of),
                sets: u.sets,
                returning: u.returning,
                checks: u.checks,
                foreign_keys: u.foreign_keys,
            },
            Plan::Delete(d) => Statement::Delete {
                scan: planner.current_of(planner.scan_node(d.scan), d.current_of),
                returning: d.returning,
                foreign_keys: d.foreign_keys,
            },
            Plan::Utility(u) => Statement::Utility(u),
            Plan::CopyQuery(select, options) => {
                Statement::CopyQuery { query: planner.query(*select)?, options }
            }
            Plan::CreateTableAs(c) => {
                let crate::plan::CreateTableAs { create, query, data, select_into, refresh } = *c;
                let query = planner.query(query)?;
                Statement::CreateTableAs(Box::new(crate::plan::CreateTableAs {
                    create,
                    query,
                    data,
                    select_into,
                    refresh,
                }))
            }
            Plan::InsteadOf(m) => {
                let crate::plan::InsteadOf { view, delete, query, sets, returning } = *m;
                let query = planner.query(query)?;
                Statement::InsteadOf(Box::new(crate::plan::InsteadOf {
                    view,
                    delete,
                    query,
                    sets,
                    returning,
                }))
            }
            Plan::ModifyJoin(m) => {
                let crate::plan::ModifyJoin {
                    rel,
                    query,
                    set_columns,
                    returning,
                    checks,
                    delete,
                    foreign_keys,
                    ..
                } = *m;
                let planned = planner.query(query)?;
                // Project(LockRows): the outputs, remapped to the locked rows.
                let Node::Project { input, mut exprs } = planned.root else {
                    return Err(SqlError::new(
                        SqlState::INTERNAL_ERROR,
                        "the join of an UPDATE is not a projection",
                    ));
                };
                let returned = exprs.split_off(set_columns.len());
                let sets = set_columns.iter().copied().zip(exprs).collect();
                let returning =
                    returning.map(|r| crate::plan::Projection { exprs: returned, columns: r.columns });
                let query = Query { root: *input, columns: planned.columns };
                let m = crate::plan::ModifyJoin {
                    rel,
                    query,
                    set_columns,
                    sets,
                    returning,
                    checks,
                    delete,
                    foreign_keys,
                };
                Statement::ModifyJoin(Box::new(m))
            }
            Plan::Merge(m) => {
                let crate::plan::Merge {
                    rel,
                    join,
                    mut matched,
                    unmatched,
                    not_matched,
                    checks,
                    foreign_keys,
                } = *m;
                let planned = planner.query(join)?;
                // Project(LockRows): the clauses' outputs, remapped to the
                // locked rows, back into the clauses.
                let Node::Project { input, exprs } = planned.root else {
                    return Err(SqlError::new(
                        SqlState::INTERNAL_ERROR,
                        "the join of a MERGE is not a projection",
                    ));
                };
                let mut exprs = exprs.into_iter();
                let mut next = || {
                    exprs.next().ok_or_else(|| {
                        SqlError::new(SqlState::INTERNAL_ERROR, "a MERGE clause lost its output")
                    })
                };
                for c in &mut matched {
                    if let Some(cond) = &mut c.cond {
                        *cond = next()?;
                    }
                    if let crate::plan::MatchedAction::Update(sets) = &mut c.action {
                        for (_, e) in sets.iter_mut() {
                            *e = next()?;
                        }
                    }
                }
                let join = Query { root: *input, columns: planned.columns };
                let unmatched = planner.query(unmatched)?;
                Statement::Merge(Box::new(crate::plan::Merge {
                    rel,
                    join,
                    matched,
                    unmatched,
                    not_matched,
                    checks,
                    foreign_keys,
                }))
            }
        };
        Ok(statement)
    }
}

pub(super) struct Planner {
    pub(super) stack: StackDepth,
    /// The session's enable_* switches.
    pub(super) settings: PlannerSettings,
    /// The statement's subqueries not yet planned, by their plan numbers:
    /// what a semi join pulled up from WHERE is copied from.
    pub(super) pending: RefCell<Vec<Option<Select>>>,
}

impl Planner {
    /// A scan with its access path chosen (an index only where index
    /// scans are on).
    pub(super) fn scan_node(&self, scan: Scan) -> ScanNode {
        let access = match &scan.filter {
            Some(f) if self.settings.index_scans() => choose_access(&scan.rel, f),
            _ => Access::Seq,
        };
        ScanNode { rel: scan.rel, access, filter: scan.filter, with_tid: false }
    }

    /// `scan` restricted to a cursor's current row (WHERE CURRENT OF).
    fn current_of(&self, scan: ScanNode, cursor: Option<String>) -> ScanNode {
        match cursor {
            Some(c) => ScanNode { access: Access::CurrentOf(c.into()), ..scan },
            None => scan,
        }
    }

    pub(super) fn query(&self, s: Select) -> Result<Query, SqlError> {
        let Select {
            from,
            filter,
            grouping,
            mut windows,
            mut srfs,
            mut outputs,
            columns,
            mut order,
            limit,
            offset,
            lock,
            distinct_on,
        } = s;
        // EXISTS, NOT EXISTS and IN (subquery) conjuncts of WHERE as semi
        // and anti joins (not under row locks, whose targets are the FROM
        // clause's tables as written).
        let (from, filter) = match (from, filter) {
            (Some(from), Some(filter)) if lock.is_none() => {
                let (from, filter) = self.pull_up_sublinks(from, filter)?;
                (Some(from), filter)
            }
            other => other,
        };
        let from_width = from.as_ref().map_or(0, From::width);
        let mut input = match from {
            None => match filter {
                None => Node::Result,
                Some(cond) => Node::Filter { input: Box::new(Node::Result), cond },
            },
            // One table: its scan, and FOR UPDATE locks its versions.
            Some(From::Table(rel)) => {
                let lock_filter = lock.as_ref().and(filter.clone());
                let scan = Node::Scan(self.scan_node(Scan { rel: rel.clone(), filter }));
                match lock {
                    None => scan,
                    Some(locking) => {
                        let sorted = sorted(scan, std::mem::take(&mut order));
                        let (strength, how) = locking.of(0);
                        let target = LockTarget { rel, strength, how, offset: None, filter: lock_filter };
                        Node::LockRows { input: Box::new(sorted), targets: vec![target], recheck: None }
                    }
                }
            }
            Some(from) => match lock {
                None => self.plan_from(from, 0, filter.map(Expr::into_conjuncts).unwrap_or_default(), &[])?,
                Some(locking) => {
                    // Each locked table's rows carry their tids: one more
                    // column after each, so the columns after it move.
                    let tables = locked_tables(&from, &locking.tables, 0);
                    let layout =
                        TidLayout { tables: tables.iter().map(|(o, rel)| (*o, width(rel))).collect() };
                    let from = self.remap_from(from, &layout)?;
                    let filter =
                        filter.map(|f| f.remap_columns(&self.stack, &|i| layout.map(i))).transpose()?;
                    for e in &mut outputs {
                        *e = take(e).remap_columns(&self.stack, &|i| layout.map(i))?;
                    }
                    for k in &mut order {
                        k.expr = take(&mut k.expr).remap_columns(&self.stack, &|i| layout.map(i))?;
                    }
                    let targets: Vec<LockTarget> = tables
                        .into_iter()
                        .map(|(o, rel)| {
                            let (strength, how) = locking.of(o);
                            LockTarget { rel, strength, how, offset: Some(layout.map(o)), filter: None }
                        })
                        .collect();
                    let with_tids: Vec<usize> = targets.iter().filter_map(|t| t.offset).collect();
                    let mut recheck = filter.clone().map(Expr::into_conjuncts).unwrap_or_default();
                    inner_join_conditions(&from, &mut recheck);
                    let conds = filter.map(Expr::into_conjuncts).unwrap_or_default();
                    let node = self.plan_from(from, 0, conds, &with_tids)?;
                    let sorted = sorted(node, std::mem::take(&mut order));
                    Node::LockRows { input: Box::new(sorted), targets, recheck: Expr::conjunction(recheck) }
                }
            },
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
            for w in &mut windows {
                if let Some(a) = w.arg.take() {
                    w.arg = Some(self.ungroup(a, width)?);
                }
                for m in &mut w.more {
                    *m = self.ungroup(take(m), width)?;
                }
                for p in &mut w.partition {
                    *p = self.ungroup(take(p), width)?;
                }
                for k in &mut w.order {
                    k.expr = self.ungroup(take(&mut k.expr), width)?;
                }
            }
            for c in &mut srfs {
                for a in &mut c.args {
                    *a = self.ungroup(take(a), width)?;
                }
            }
            input = Node::Aggregate { input: Box::new(input), keys, aggs, having };
        }
        if !windows.is_empty() {
            // The Window operator adds a column per call to its input's row.
            let width = match &input {
                Node::Aggregate { keys, aggs, .. } => keys.len() + aggs.len(),
                _ => from_width,
            };
            let at = |e: Expr| {
                e.rewrite(&self.stack, &mut |e| {
                    Ok(match e {
                        Expr::Window(k) => Rewrite::Replace(Expr::Column(width + k)),
                        other => Rewrite::Descend(other),
                    })
                })
            };
            for e in &mut outputs {
                *e = at(take(e))?;
            }
            for k in &mut order {
                k.expr = at(take(&mut k.expr))?;
            }
            input = Node::Window { input: Box::new(input), calls: windows };
        }
        if !srfs.is_empty() {
            // ProjectSet adds a column per call after the input's.
            let width = match &input {
                Node::Aggregate { keys, aggs, .. } => keys.len() + aggs.len(),
                Node::Window { input: below, calls } => {
                    calls.len()
                        + match below.as_ref() {
                            Node::Aggregate { keys, aggs, .. } => keys.len() + aggs.len(),
                            _ => from_width,
                        }
                }
                _ => from_width,
            };
            let at = |e: Expr| {
                e.rewrite(&self.stack, &mut |e| {
                    Ok(match e {
                        Expr::SetFunc(k) => Rewrite::Replace(Expr::Column(width + k)),
                        other => Rewrite::Descend(other),
                    })
                })
            };
            for e in &mut outputs {
                *e = at(take(e))?;
            }
            for k in &mut order {
                k.expr = at(take(&mut k.expr))?;
            }
            input = Node::ProjectSet { input: Box::new(input), calls: srfs };
        }
        let mut root = sorted(input, order);
        if !distinct_on.is_empty() {
            root = Node::Unique { input: Box::new(root), keys: distinct_on };
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
        e.rewrite(&self.stack, &mut |e| {
            Ok(match e {
                Expr::GroupKey(i) => Rewrite::Replace(Expr::Column(i)),
                Expr::Agg(j) => Rewrite::Replace(Expr::Column(width + j)),
                other => Rewrite::Descend(other),
            })
        })
    }
}

/// Takes an expression out of its place, leaving a NULL constant.
fn take(e: &mut Expr) -> Expr {
    std::mem::replace(e, Expr::Const(snapscale_values::Value::Null))
}

fn sorted(input: Node, keys: Vec<SortKey>) -> Node {
    if keys.is_empty() {
        input
    } else {
        Node::Sort { input: Box::new(input), keys }
    }
}

/// The key parts of index `def` of `rel` as expressions over its row
/// (`None`: a partial index whose predicate `conjuncts` do not imply, or
/// one whose expressions could not be compiled), and its entries.
pub(crate) fn usable_index(
    rel: &Rel,
    def: &IndexDef,
    conjuncts: &[Expr],
) -> Option<(Vec<Expr>, std::sync::Arc<Index>)> {
    let index = rel.heap.index(&rel.entry, def);
    if !def.computed() {
        return Some((def.columns.iter().map(|&c| Expr::Column(c)).collect(), std::sync::Arc::clone(index)));
    }
    let compiled = super::index_key::compiled(index)?;
    if let Some(p) = &compiled.predicate {
        if !super::implied::implied(conjuncts, p) {
            return None;
        }
    }
    Some((compiled.parts.clone(), std::sync::Arc::clone(index)))
}

/// Picks an index for `filter`'s conjuncts: equality on all of an index's
/// key parts (or its leading ones, the more the better), else several
/// values or ranges of a first one (an IN list, `= ANY`, an OR), else a
/// range on a first one. A key part may be an expression (`lower(a) = $1`); a
/// partial index serves only a filter that implies its predicate.
pub(super) fn choose_access(rel: &Rel, filter: &Expr) -> Access {
    let conjuncts = super::implied::conjuncts(filter);
    // (key expression, operator, probe)
    let mut preds: Vec<(&Expr, Cmp, &Expr)> = Vec::new();
    for c in conjuncts {
        if let Expr::Compare(a, op, b, false) = c {
            match (a.as_ref(), b.as_ref()) {
                (x, p) if p.is_row_free() && !x.is_row_free() => preds.push((x, *op, p)),
                (p, x) if p.is_row_free() && !x.is_row_free() => preds.push((x, op.flipped(), p)),
                _ => {}
            }
        }
    }
    let eq_probe = |part: &Expr| {
        preds.iter().find(|(x, op, _)| *x == part && *op == Cmp::Eq).map(|(_, _, p)| (*p).clone())
    };
    let candidates: Vec<(Vec<Expr>, std::sync::Arc<Index>)> =
        rel.entry.indexes.iter().filter_map(|def| usable_index(rel, def, conjuncts)).collect();
    let mut best: Option<(usize, Access)> = None;
    for (parts, index) in &candidates {
        let probes: Vec<Expr> = parts.iter().map_while(eq_probe).collect();
        if !probes.is_empty() && best.as_ref().is_none_or(|(n, _)| probes.len() > *n) {
            best = Some((probes.len(), Access::IndexEq { index: std::sync::Arc::clone(index), probes }));
        }
    }
    if let Some((_, access)) = best {
        return access;
    }
    // A list of values or an OR of ranges on a first key part: a lookup
    // each (before a single range, which may be open on one side).
    for (parts, index) in &candidates {
        if let Some(arms) = conjuncts.iter().find_map(|c| super::index_any::arms(&parts[0], c)) {
            return Access::IndexAny { index: std::sync::Arc::clone(index), arms };
        }
    }
    for (parts, index) in &candidates {
        let first = &parts[0];
        let mut lower = Bound::Unbounded;
        let mut upper = Bound::Unbounded;
        for (x, op, p) in &preds {
            if *x != first {
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
            return Access::IndexRange { index: std::sync::Arc::clone(index), lower, upper };
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
        access_with(sql, PlannerSettings::default())
    }

    fn access_with(sql: &str, settings: PlannerSettings) -> &'static str {
        let statement = plan(bound(sql).plan, Vec::new(), StackDepth::here(1 << 20), settings).unwrap().0;
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
            Access::IndexAny { .. } => "any",
            Access::CurrentOf(_) => "current",
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
        assert_eq!(access("SELECT b FROM t WHERE a = 1 OR a = 2"), "any");
        assert_eq!(access("SELECT b FROM t WHERE a IN (1, 2, NULL)"), "any");
        assert_eq!(access("SELECT b FROM t WHERE a = ANY ($1)"), "any");
        assert_eq!(access("SELECT b FROM t WHERE a BETWEEN 1 AND 2 OR a > 7 OR a IN (4, 5)"), "any");
        assert_eq!(access("SELECT b FROM t WHERE a = 1 OR b = 'x'"), "seq");
        assert_eq!(access("SELECT b FROM t WHERE a NOT IN (1, 2)"), "seq");
        assert_eq!(access("SELECT b FROM t WHERE a = 1 AND a IN (1, 2)"), "eq");
        assert_eq!(access("SELECT b FROM t WHERE a = 1 ORDER BY b LIMIT 3"), "eq");
    }

    /// The enable_* switches steer the choices the planner has, and only
    /// those.
    #[test]
    fn enable_switches_steer_access_and_joins() {
        let with = |pairs: &[(&str, &str)]| {
            let mut s = crate::guc::SessionSettings::default();
            for (n, v) in pairs {
                s.set(n, v).unwrap();
            }
            s.planner
        };
        let no_index = with(&[("enable_indexscan", "off"), ("enable_bitmapscan", "off")]);
        assert_eq!(access_with("SELECT b FROM t WHERE a = 1", no_index), "seq");
        assert_eq!(access_with("SELECT b FROM t WHERE a = 1", with(&[("enable_indexscan", "off")])), "eq");
        assert_eq!(access_with("SELECT b FROM t WHERE a = 1", with(&[("enable_seqscan", "off")])), "eq");
        let method = |sql: &str, settings: PlannerSettings| {
            let Statement::Query(q) =
                plan(bound(sql).plan, Vec::new(), StackDepth::here(1 << 20), settings).unwrap().0
            else {
                panic!()
            };
            let mut node = &q.root;
            while !matches!(node.name(), "HashJoin" | "NestLoop" | "IndexJoin") {
                node = node.inputs()[0];
            }
            node.name()
        };
        let join = |settings| method("SELECT * FROM t x JOIN t y ON x.b = y.b", settings);
        assert_eq!(join(PlannerSettings::default()), "HashJoin");
        assert_eq!(join(with(&[("enable_hashjoin", "off")])), "NestLoop");
        assert_eq!(join(with(&[("enable_hashjoin", "off"), ("enable_nestloop", "off")])), "HashJoin");
        let probe = |settings| method("SELECT * FROM t x JOIN t y ON length(x.b) = y.a", settings);
        assert_eq!(probe(PlannerSettings::default()), "IndexJoin");
        assert_eq!(probe(with(&[("enable_nestloop", "off")])), "HashJoin");
        assert_eq!(probe(no_index), "HashJoin");
    }

    /// EXISTS, NOT EXISTS and IN conjuncts of WHERE become semi and anti
    /// joins; under OR, NOT IN, or with a LIMIT 0 they stay subplans.
    #[test]
    fn where_sublinks_become_semi_and_anti_joins() {
        let join = |sql: &str| {
            let b = bound(sql);
            let Statement::Query(q) =
                plan(b.plan, b.subqueries, StackDepth::here(1 << 20), PlannerSettings::default()).unwrap().0
            else {
                panic!()
            };
            let mut node = &q.root;
            loop {
                match node {
                    Node::HashJoin { join, .. } | Node::NestLoop { join } => {
                        break format!("{} {:?}", node.name(), join.kind)
                    }
                    Node::IndexJoin { kind, .. } => break format!("IndexJoin {kind:?}"),
                    _ => match node.inputs().first() {
                        Some(n) => node = n,
                        None => break "none".into(),
                    },
                }
            }
        };
        let exists = "SELECT a FROM t x WHERE EXISTS (SELECT 1 FROM t y WHERE y.b = x.b)";
        assert_eq!(join(exists), "HashJoin Semi");
        assert_eq!(
            join("SELECT a FROM t x WHERE NOT EXISTS (SELECT 1 FROM t y WHERE y.b < x.b)"),
            "NestLoop Anti"
        );
        // PostgreSQL 15 pulls up an IN whose subquery does not read the
        // enclosing row, and only that.
        assert_eq!(join("SELECT a FROM t x WHERE b IN (SELECT b FROM t y WHERE y.a > 1)"), "HashJoin Semi");
        assert_eq!(join("SELECT a FROM t x WHERE b IN (SELECT b FROM t y WHERE y.a > x.a)"), "none");
        assert_eq!(
            join("SELECT a FROM t x WHERE EXISTS (SELECT 1 FROM t y WHERE y.a = length(x.b))"),
            "IndexJoin Semi"
        );
        assert_eq!(
            join("SELECT a FROM t x WHERE a = 1 OR EXISTS (SELECT 1 FROM t y WHERE y.b = x.b)"),
            "none"
        );
        assert_eq!(join("SELECT a FROM t x WHERE b NOT IN (SELECT b FROM t y)"), "none");
        assert_eq!(
            join("SELECT a FROM t x WHERE EXISTS (SELECT 1 FROM t y WHERE y.b = x.b LIMIT 0)"),
            "none"
        );
        assert_eq!(join("SELECT a FROM t x WHERE EXISTS (SELECT count(*) FROM t y WHERE y.b = x.b)"), "none");
    }

    #[test]
    fn queries_are_trees_of_operators() {
        let shape = |sql: &str| {
            let Statement::Query(q) =
                plan(bound(sql).plan, Vec::new(), StackDepth::here(1 << 20), PlannerSettings::default())
                    .unwrap()
                    .0
            else {
                panic!()
            };
            let mut names = Vec::new();
            let mut node = &q.root;
            loop {
                names.push(node.name());
                match node.inputs().first() {
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
