//! Queries as trees of operators (see [`crate::plan::physical`]). Each
//! operator materialises its rows.
//!
//! Every operator but LockRows is synchronous and runs in [`Run`], which
//! also runs subqueries (with their enclosing row's values as `outer`).
//! LockRows waits for other transactions' row locks, so a query with one
//! runs here: its input synchronously, then the locking loop, then the
//! Project and Limit above it. `want`, passed down from the Limit, lets
//! LockRows stop locking once its parent has enough (PostgreSQL's LockRows
//! sits under Limit in the same way). No future per operator: a boxed
//! recursive future cost two large allocations per pgbench SELECT.

use snapscale_engine::catalog::Row;
use snapscale_engine::Tid;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use super::modify::Change;
use super::setop::Enough;
pub(crate) use super::sort::sort_by_keys;
use super::Executor;
use crate::expr::{passes, Ctx, Expr};
use crate::plan::physical::{LockTarget, Node, Query};
use crate::stack::StackDepth;

/// What flows between operators: row versions as a Scan found them, with
/// their tids (what LockRows locks), or rows computed from them. Each
/// operator keeps the form it was given where it can, so a row is copied
/// into a new vector only where it changes.
pub(super) enum Rows {
    Versions(Vec<(Tid, Row)>),
    Computed(Vec<Row>),
}

impl Rows {
    pub(super) fn into_rows(self) -> Vec<Row> {
        match self {
            Rows::Versions(v) => v.into_iter().map(|(_, row)| row).collect(),
            Rows::Computed(v) => v,
        }
    }

    fn len(&self) -> usize {
        match self {
            Rows::Versions(v) => v.len(),
            Rows::Computed(v) => v.len(),
        }
    }
}

/// A synchronous evaluation of operators within one statement: the
/// statement's executor, the values of the enclosing row a subquery reads
/// (`outer`), and the recursion's root.
pub(super) struct Run<'r, 'x> {
    pub(super) ex: &'r Executor<'x>,
    pub(super) outer: &'r [snapscale_values::Value],
    pub(super) stack: StackDepth,
}

impl<'x> Executor<'x> {
    /// A cursor's rows (no lock taken), with the tids of the versions they
    /// come from left in `slot` when the query is a simply updatable scan
    /// of one table (WHERE CURRENT OF).
    async fn cursor_rows(&mut self, q: &Query, slot: &super::TidSlot) -> Result<Vec<Row>, SqlError> {
        let (input, exprs) = match &q.root {
            Node::Project { input, exprs } => (&**input, Some(exprs)),
            other => (other, None),
        };
        let Some(scan) = simple_scan(input) else {
            return Ok(self.evaluate(|ex| ex.run(&[]).rows(&q.root)).await?.into_rows());
        };
        let rows = self.evaluate(|ex| ex.run(&[]).rows(input)).await?;
        if let Rows::Versions(v) = &rows {
            let tids = v.iter().map(|(t, _)| *t).collect();
            *slot.lock().expect("cursor tids poisoned") = Some((scan.rel.entry.oid, tids));
        }
        match exprs {
            Some(exprs) => {
                let input = &rows;
                self.evaluate(|ex| ex.run(&[]).project(input, exprs)).await
            }
            None => Ok(rows.into_rows()),
        }
    }

    /// A synchronous evaluation with `outer` as the enclosing row's values.
    pub(super) fn run<'r>(&'r self, outer: &'r [Value]) -> Run<'r, 'x> {
        Run { ex: self, outer, stack: StackDepth::here(self.limits.max_stack_depth) }
    }

    /// The rows of a query.
    pub(crate) async fn query(&mut self, q: &Query) -> Result<Vec<Row>, SqlError> {
        self.ensure_snapshot()?;
        // PL-ROW-CALLS: a select list calling a PL/pgSQL function per row
        // is evaluated row by row, so a call's stop replays one row's
        // calls, not every row's so far.
        if let Node::Project { input, exprs } = &q.root {
            if self.replay.is_some() && !q.root.locks_rows() && calls_per_row(exprs) {
                let rows = self.evaluate(|ex| ex.run(&[]).rows(input)).await?.into_rows();
                let mut out = Vec::with_capacity(rows.len());
                for row in rows {
                    self.xact.check_cancel()?;
                    out.push(self.evaluate(|ex| ex.project_row(exprs, &row)).await?);
                }
                return Ok(out);
            }
        }
        if !q.root.locks_rows() {
            if let Some(slot) = self.tid_slot.clone() {
                return self.cursor_rows(q, &slot).await;
            }
            return Ok(self.evaluate(|ex| ex.run(&[]).rows(&q.root)).await?.into_rows());
        }
        // Above LockRows only Project and Limit; Limit tells it how many
        // rows its parent takes.
        let mut above = Vec::new();
        let mut want = usize::MAX;
        let mut node = &q.root;
        let (input, targets, recheck) = loop {
            match node {
                Node::Limit { input, offset, limit } => {
                    let bounds = self.evaluate(|ex| ex.limit_bounds(offset.as_ref(), limit.as_ref())).await?;
                    want = want.min(bounds.wanted());
                    above.push((node, bounds));
                    node = input;
                }
                Node::Project { input, .. } => {
                    above.push((node, LimitBounds::ALL));
                    node = input;
                }
                Node::LockRows { input, targets, recheck } => break (input, targets, recheck),
                other => {
                    return Err(SqlError::new(
                        SqlState::INTERNAL_ERROR,
                        format!("unexpected operator above LockRows: {other:?}"),
                    ))
                }
            }
        };
        let rows = self.evaluate(|ex| ex.run(&[]).rows(input)).await?;
        let start = std::time::Instant::now();
        let mut rows = self.lock_rows(rows, targets, recheck.as_ref(), want).await?;
        if let (Some(c), Some((node, _))) = (&self.stats, above.last()) {
            let lock_rows = match node {
                Node::Limit { input, .. } | Node::Project { input, .. } => &**input as *const Node as usize,
                _ => 0,
            };
            super::instrument::record(c, lock_rows, rows.len() as u64, 1, start.elapsed());
        }
        for (node, bounds) in above.into_iter().rev() {
            rows = match node {
                Node::Project { exprs, .. } => {
                    // A cursor's rows: the versions' tids first, while the
                    // rows are still versions (one table locked).
                    if let (Some(slot), Rows::Versions(v), [target]) = (&self.tid_slot, &rows, &targets[..]) {
                        let tids = v.iter().map(|(t, _)| *t).collect();
                        *slot.lock().expect("cursor tids poisoned") = Some((target.rel.entry.oid, tids));
                    }
                    let input = &rows;
                    Rows::Computed(self.evaluate(|ex| ex.run(&[]).project(input, exprs)).await?)
                }
                _ => bounds.apply(rows),
            };
            if let Some(c) = &self.stats {
                super::instrument::record(
                    c,
                    node as *const Node as usize,
                    rows.len() as u64,
                    1,
                    start.elapsed(),
                );
            }
        }
        Ok(rows.into_rows())
    }

    /// FOR UPDATE / FOR SHARE: locks each row's versions in order until
    /// `want` rows are locked. A row whose version is gone, skipped (SKIP
    /// LOCKED) or no longer matches after a concurrent update is left out.
    async fn lock_rows(
        &mut self,
        rows: Rows,
        targets: &[LockTarget],
        recheck: Option<&Expr>,
        want: usize,
    ) -> Result<Rows, SqlError> {
        match rows {
            Rows::Versions(versions) => {
                let [target] = targets else {
                    return Err(SqlError::new(SqlState::INTERNAL_ERROR, "row versions of several tables"));
                };
                let mut locked = Vec::new();
                for (tid, row) in versions {
                    if locked.len() >= want {
                        break;
                    }
                    self.xact.check_cancel()?;
                    // Locked, possibly as a newer version (EPQ).
                    if let Some(version) = self
                        .change_row(
                            &target.rel,
                            target.filter.as_ref(),
                            tid,
                            row,
                            Change::Lock(target.how, target.strength),
                        )
                        .await?
                    {
                        locked.push(version);
                    }
                }
                Ok(Rows::Versions(locked))
            }
            Rows::Computed(joined) => {
                let mut locked = Vec::new();
                'rows: for row in joined {
                    if locked.len() >= want {
                        break;
                    }
                    self.xact.check_cancel()?;
                    let mut values = row.to_vec();
                    let mut changed = false;
                    for target in targets {
                        let offset = target.offset.unwrap_or(0);
                        let width = target.rel.entry.columns.len() + 1;
                        let Value::Int(tid) = values[offset + width] else {
                            return Err(SqlError::new(
                                SqlState::INTERNAL_ERROR,
                                "a locked row without its tid",
                            ));
                        };
                        let version = Row::from(&values[offset..offset + width]);
                        let Some((new_tid, newest)) = self
                            .change_row(
                                &target.rel,
                                None,
                                tid as Tid,
                                version.clone(),
                                Change::Lock(target.how, target.strength),
                            )
                            .await?
                        else {
                            continue 'rows;
                        };
                        if new_tid != tid as Tid {
                            values[offset..offset + width].clone_from_slice(&newest);
                            values[offset + width] = Value::Int(new_tid as i64);
                            changed = true;
                        }
                    }
                    // EPQ for a join: the row with the newer versions must
                    // still satisfy the join's conditions.
                    if changed {
                        if let Some(cond) = recheck {
                            if !self.evaluate(|ex| passes(cond, &ex.ctx(&values))).await? {
                                continue;
                            }
                        }
                    }
                    locked.push(Row::from(values));
                }
                Ok(Rows::Computed(locked))
            }
        }
    }

    /// A Limit's OFFSET and LIMIT, evaluated.
    pub(super) fn limit_bounds(
        &self,
        offset: Option<&Expr>,
        limit: Option<&Expr>,
    ) -> Result<LimitBounds, SqlError> {
        self.run(&[]).limit_bounds(offset, limit)
    }
}

impl Run<'_, '_> {
    /// ROWS FROM's functions' rows zipped: row n of each side by side,
    /// NULLs for one that has fewer, each row's number after them WITH
    /// ORDINALITY. A function that reads the items to the zip's left runs
    /// with its own share of the outer values.
    fn zip(
        &self,
        items: &[(Node, usize, Option<std::ops::Range<usize>>)],
        ordinality: bool,
    ) -> Result<Vec<Row>, SqlError> {
        let mut sets = Vec::with_capacity(items.len());
        for (node, _, args) in items {
            let rows = match args {
                None => self.rows(node)?.into_rows(),
                Some(range) => {
                    let outer = self.outer.get(range.clone()).unwrap_or_default();
                    Run { ex: self.ex, outer, stack: self.stack }.rows(node)?.into_rows()
                }
            };
            sets.push(rows);
        }
        let n = sets.iter().map(Vec::len).max().unwrap_or(0);
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let mut values = Vec::new();
            for (set, (_, width, _)) in sets.iter().zip(items) {
                let start = values.len();
                if let Some(row) = set.get(i) {
                    values.extend(row.iter().take(*width).cloned());
                }
                values.resize(start + width, Value::Null);
            }
            if ordinality {
                values.push(Value::Int(i as i64 + 1));
            }
            out.push(Row::from(values));
        }
        Ok(out)
    }

    /// The context to evaluate an expression over `row`.
    /// The context to evaluate an expression over `row`: the run's outer
    /// values, and its recursion root (a subplan run from an expression
    /// keeps the root of the evaluation that ran it).
    pub(super) fn ctx<'a>(&'a self, row: &'a [Value]) -> Ctx<'a> {
        Ctx { outer: self.outer, stack: self.stack, ..self.ex.ctx(row) }
    }

    /// The rows of `node`, which holds no LockRows; counted under EXPLAIN
    /// ANALYZE.
    pub(super) fn rows(&self, node: &Node) -> Result<Rows, SqlError> {
        match &self.ex.stats {
            None => self.rows_of(node),
            Some(c) => {
                super::instrument::measure(c, node as *const Node as usize, || self.rows_of(node), Rows::len)
            }
        }
    }

    fn rows_of(&self, node: &Node) -> Result<Rows, SqlError> {
        self.stack.check()?;
        Ok(match node {
            Node::Result => Rows::Computed(vec![Row::from(Vec::new())]),
            Node::Scan(scan) => {
                let found = self.scan(scan)?;
                self.ex.xact.check_cancel()?;
                if scan.with_tid {
                    Rows::Computed(found.into_iter().map(|(tid, row)| with_tid(&row, tid)).collect())
                } else {
                    Rows::Versions(found)
                }
            }
            Node::Computed { view, filter } => Rows::Computed(self.computed(*view, filter.as_ref())?),
            Node::SetOp { op, all, left, right } => {
                let left = self.rows(left)?.into_rows();
                let right = self.rows(right)?.into_rows();
                Rows::Computed(super::setop::combine(*op, *all, left, right))
            }
            Node::RecursiveUnion { id, all, base, step } => {
                Rows::Computed(self.recursive_union(*id, *all, base, step, None)?)
            }
            Node::WorkTable(id) => {
                Rows::Computed(self.ex.work_tables.borrow().get(id).cloned().unwrap_or_default())
            }
            Node::Values(rows) => {
                let cx = self.ctx(&[]);
                let mut out = Vec::with_capacity(rows.len());
                for r in rows {
                    out.push(Row::from(r.iter().map(|e| e.eval(&cx)).collect::<Result<Vec<_>, _>>()?));
                }
                Rows::Computed(out)
            }
            Node::Function { func, args, ordinality } => {
                let cx = self.ctx(&[]);
                let args = args.iter().map(|e| e.eval(&cx)).collect::<Result<Vec<_>, _>>()?;
                let rows = super::setop::function(*func, &args, cx.zone())?;
                if !*ordinality {
                    return Ok(Rows::Computed(rows));
                }
                Rows::Computed(
                    rows.into_iter()
                        .enumerate()
                        .map(|(i, r)| r.iter().cloned().chain([Value::Int(i as i64 + 1)]).collect())
                        .collect(),
                )
            }
            Node::Numbered(input) => {
                let rows = self.rows(input)?.into_rows();
                Rows::Computed(
                    rows.into_iter()
                        .enumerate()
                        .map(|(i, r)| r.iter().cloned().chain([Value::Int(i as i64 + 1)]).collect())
                        .collect(),
                )
            }
            Node::Zip { items, ordinality } => Rows::Computed(self.zip(items, *ordinality)?),
            Node::Filter { input, cond } => {
                let rows = self.rows(input)?;
                Rows::Computed(self.filter(rows.into_rows(), cond)?)
            }
            Node::NestLoop { join } => Rows::Computed(self.nest_loop(join)?),
            Node::Lateral { join, args } => Rows::Computed(self.lateral(join, args)?),
            Node::HashJoin { join, left_keys, right_keys } => {
                Rows::Computed(self.hash_join(join, left_keys, right_keys)?)
            }
            Node::IndexJoin { left, right, index, probes, kind, cond } => {
                let before = self
                    .ex
                    .stats
                    .as_ref()
                    .map(|c| super::instrument::rows_of(c, &**left as *const Node as usize));
                let rows = self.index_join(left, right, index, probes, *kind, cond.as_ref())?;
                // The inner index scan runs once per outer row.
                if let (Some(c), Some(before)) = (&self.ex.stats, before) {
                    let outer = super::instrument::rows_of(c, &**left as *const Node as usize) - before;
                    let key = right as *const crate::plan::physical::ScanNode as usize;
                    super::instrument::record(c, key, rows.len() as u64, outer, std::time::Duration::ZERO);
                }
                Rows::Computed(rows)
            }
            Node::LockRows { .. } => {
                return Err(SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, "FOR UPDATE is not allowed here"))
            }
            Node::Aggregate { input, keys, aggs, having } => {
                let rows = self.rows(input)?;
                let groups = match &rows {
                    Rows::Versions(v) => {
                        self.aggregate(v.iter().map(|(_, row)| row), keys, aggs, having.as_ref())
                    }
                    Rows::Computed(v) => self.aggregate(v.iter(), keys, aggs, having.as_ref()),
                };
                Rows::Computed(groups?)
            }
            Node::ProjectSet { input, calls } => {
                let rows = self.rows(input)?.into_rows();
                let mut out = Vec::new();
                for row in rows {
                    let cx = self.ctx(&row);
                    let mut sets = Vec::with_capacity(calls.len());
                    for call in calls {
                        let args = call.args.iter().map(|e| e.eval(&cx)).collect::<Result<Vec<_>, _>>()?;
                        let rows = super::setop::function(call.func, &args, cx.zone())?;
                        // A call whose rows have several columns gives records.
                        sets.push(
                            rows.into_iter()
                                .map(|r| {
                                    if r.len() == 1 {
                                        r[0].clone()
                                    } else {
                                        Value::Record(r.to_vec().into())
                                    }
                                })
                                .collect::<Vec<_>>(),
                        );
                    }
                    let n = sets.iter().map(Vec::len).max().unwrap_or(0);
                    for i in 0..n {
                        let mut values = row.to_vec();
                        values.extend(sets.iter().map(|s| s.get(i).cloned().unwrap_or(Value::Null)));
                        out.push(Row::from(values));
                    }
                }
                Rows::Computed(out)
            }
            Node::Window { input, calls } => {
                let rows = self.rows(input)?.into_rows();
                Rows::Computed(self.windows(rows, calls)?)
            }
            Node::Sort { input, keys } => match self.rows(input)? {
                Rows::Versions(v) => Rows::Versions(self.sort(v, keys, |(_, row)| row)?),
                Rows::Computed(v) => Rows::Computed(self.sort(v, keys, |row| row)?),
            },
            Node::Project { input, exprs } => {
                let rows = self.rows(input)?;
                Rows::Computed(self.project(&rows, exprs)?)
            }
            Node::Limit { input, offset, limit } => {
                let bounds = self.limit_bounds(offset.as_ref(), limit.as_ref())?;
                bounds.apply(self.rows_upto(input, bounds.wanted())?)
            }
            Node::Unique { input, keys } => Rows::Computed(self.unique(self.rows(input)?.into_rows(), keys)?),
        })
    }

    /// At least the first `want` rows of `node` (all of them where the
    /// operator cannot stop early). Project, Filter and Scan, PostgreSQL's
    /// operators that a Limit stops as soon as it has enough, stop here
    /// too: their expressions are not evaluated past the rows the Limit
    /// takes, which matters when they do something (a volatile function:
    /// `pg_try_advisory_lock`, `nextval`). Below a Sort or an Aggregate,
    /// as in PostgreSQL, every row is computed.
    pub(super) fn rows_upto(&self, node: &Node, want: usize) -> Result<Rows, SqlError> {
        if want == usize::MAX {
            return self.rows(node);
        }
        match &self.ex.stats {
            Some(c)
                if matches!(
                    node,
                    Node::Scan(_) | Node::RecursiveUnion { .. } | Node::Filter { .. } | Node::Project { .. }
                ) =>
            {
                super::instrument::measure(
                    c,
                    node as *const Node as usize,
                    || self.rows_upto_of(node, want),
                    Rows::len,
                )
            }
            _ => self.rows_upto_of(node, want),
        }
    }

    fn rows_upto_of(&self, node: &Node, want: usize) -> Result<Rows, SqlError> {
        self.stack.check()?;
        Ok(match node {
            Node::Scan(scan) if !scan.with_tid => {
                let found = self.scan_upto(scan, want)?;
                self.ex.xact.check_cancel()?;
                Rows::Versions(found)
            }
            Node::RecursiveUnion { id, all, base, step } => {
                let enough = Enough { want, accept: None };
                Rows::Computed(self.recursive_union(*id, *all, base, step, Some(enough))?)
            }
            Node::Filter { input, cond } => {
                let rows = match recursion_under(input) {
                    // The recursion's rows become the filter's input through
                    // the projections between them (a WITH item's columns).
                    Some((Node::RecursiveUnion { id, all, base, step }, projections)) => {
                        let shape = |row: &Row| self.project_through(row, &projections);
                        let accept = |row: &Row| passes(cond, &self.ctx(&shape(row)?));
                        let enough = Enough { want, accept: Some(&accept) };
                        let rows = self.recursive_union(*id, *all, base, step, Some(enough))?;
                        rows.iter().map(shape).collect::<Result<Vec<_>, _>>()?
                    }
                    _ => self.rows(input)?.into_rows(),
                };
                let mut out = Vec::new();
                for row in rows {
                    if out.len() >= want {
                        break;
                    }
                    if passes(cond, &self.ctx(&row))? {
                        out.push(row);
                    }
                }
                Rows::Computed(out)
            }
            Node::Project { input, exprs } => {
                let rows = LimitBounds { offset: 0, limit: want }.apply(self.rows_upto(input, want)?);
                Rows::Computed(self.project(&rows, exprs)?)
            }
            other => self.rows(other)?,
        })
    }

    /// `row` of a node below `projections` (outermost first), as the node
    /// above them sees it.
    fn project_through(&self, row: &Row, projections: &[&[Expr]]) -> Result<Row, SqlError> {
        let mut row = row.clone();
        for exprs in projections.iter().rev() {
            let cx = self.ctx(&row);
            let values = exprs.iter().map(|e| e.eval(&cx)).collect::<Result<Vec<_>, _>>()?;
            row = Row::from(values);
        }
        Ok(row)
    }

    /// The rows that pass `cond`.
    pub(super) fn filter(&self, mut rows: Vec<Row>, cond: &Expr) -> Result<Vec<Row>, SqlError> {
        let mut error = None;
        rows.retain(|row| {
            error.is_none()
                && passes(cond, &self.ctx(row)).unwrap_or_else(|e| {
                    error = Some(e);
                    false
                })
        });
        match error {
            Some(e) => Err(e),
            None => Ok(rows),
        }
    }

    fn project(&self, rows: &Rows, exprs: &[Expr]) -> Result<Vec<Row>, SqlError> {
        // A select list of columns alone (the usual one) copies them into
        // the new row directly: one allocation, where evaluating into a
        // vector and then into the row made two.
        let columns: Option<Vec<usize>> =
            exprs.iter().map(|e| if let Expr::Column(i) = e { Some(*i) } else { None }).collect();
        let project = |row: &Row| -> Result<Row, SqlError> {
            if let Some(cols) = &columns {
                return Ok(cols.iter().map(|&c| row[c].clone()).collect());
            }
            let cx = self.ctx(row);
            let mut out = Vec::with_capacity(exprs.len());
            for e in exprs {
                out.push(e.eval(&cx)?);
            }
            Ok(Row::from(out))
        };
        let mut out = Vec::with_capacity(rows.len());
        match rows {
            Rows::Versions(v) => {
                for (_, row) in v {
                    out.push(project(row)?);
                }
            }
            Rows::Computed(v) => {
                for row in v {
                    out.push(project(row)?);
                }
            }
        }
        Ok(out)
    }

    /// A Limit's OFFSET and LIMIT, evaluated.
    fn limit_bounds(&self, offset: Option<&Expr>, limit: Option<&Expr>) -> Result<LimitBounds, SqlError> {
        let offset = self.count(offset, SqlState::INVALID_ROW_COUNT_IN_RESULT_OFFSET_CLAUSE, "OFFSET")?;
        let limit = self.count(limit, SqlState::INVALID_ROW_COUNT_IN_LIMIT_CLAUSE, "LIMIT")?;
        Ok(LimitBounds { offset: offset.unwrap_or(0), limit: limit.unwrap_or(usize::MAX) })
    }

    /// OFFSET or LIMIT: a non-negative count, or none (absent or NULL).
    fn count(&self, e: Option<&Expr>, code: SqlState, what: &str) -> Result<Option<usize>, SqlError> {
        let cx = self.ctx(&[]);
        match e.map(|e| e.eval(&cx)).transpose()? {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Int(n)) if n < 0 => Err(SqlError::new(code, format!("{what} must not be negative"))),
            Some(Value::Int(n)) => Ok(Some(n as usize)),
            Some(_) => Ok(None),
        }
    }
}

/// A version's row with its tid as one more column.
pub(super) fn with_tid(row: &Row, tid: Tid) -> Row {
    let mut values = Vec::with_capacity(row.len() + 1);
    values.extend_from_slice(row);
    values.push(Value::Int(tid as i64));
    Row::from(values)
}

/// OFFSET and LIMIT as counts (no LIMIT: all rows).
pub(super) struct LimitBounds {
    offset: usize,
    limit: usize,
}

impl LimitBounds {
    const ALL: LimitBounds = LimitBounds { offset: 0, limit: usize::MAX };

    /// Keeps the rows from `offset` on, at most `limit` of them.
    fn apply(&self, rows: Rows) -> Rows {
        fn cut<T>(mut v: Vec<T>, b: &LimitBounds) -> Vec<T> {
            v.drain(..b.offset.min(v.len()));
            v.truncate(b.limit);
            v
        }
        match rows {
            Rows::Versions(v) => Rows::Versions(cut(v, self)),
            Rows::Computed(v) => Rows::Computed(cut(v, self)),
        }
    }

    /// How many input rows the Limit takes at most.
    fn wanted(&self) -> usize {
        self.offset.saturating_add(self.limit)
    }
}

/// A recursive union under `node` through projections only, and those
/// projections (outermost first): what a Filter above may stop early.
fn recursion_under(mut node: &Node) -> Option<(&Node, Vec<&[Expr]>)> {
    let mut projections = Vec::new();
    loop {
        match node {
            Node::Project { input, exprs } => {
                projections.push(exprs.as_slice());
                node = input;
            }
            Node::RecursiveUnion { .. } => return Some((node, projections)),
            _ => return None,
        }
    }
}

/// Whether `exprs` call a PL/pgSQL function per row (PL-ROW-CALLS).
fn calls_per_row(exprs: &[Expr]) -> bool {
    let stack = crate::stack::StackDepth::here(crate::stack::DEFAULT_MAX_STACK_DEPTH);
    exprs.iter().any(|e| {
        let mut found = false;
        let _ = e.visit(&stack, &mut |e| {
            found |= matches!(e, Expr::Func(crate::expr::Func::PlRow(_), _));
        });
        found
    })
}

impl Executor<'_> {
    /// One row's select list.
    fn project_row(&self, exprs: &[Expr], row: &Row) -> Result<Row, SqlError> {
        let cx = self.ctx(row);
        Ok(Row::from(exprs.iter().map(|e| e.eval(&cx)).collect::<Result<Vec<_>, _>>()?))
    }
}

/// The one table a plan scans when its rows are that table's versions in
/// the scan's order, only filtered or limited (PostgreSQL's "simply
/// updatable scan": a sorted cursor is not one).
fn simple_scan(node: &Node) -> Option<&crate::plan::physical::ScanNode> {
    match node {
        Node::Scan(s) => Some(s),
        Node::Filter { input, .. } | Node::Limit { input, .. } => simple_scan(input),
        _ => None,
    }
}
