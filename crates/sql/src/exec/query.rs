//! Queries as trees of operators (see [`crate::plan::physical`]). Each
//! operator materialises its rows; `want`, passed down from a Limit through
//! the operators that keep the row count, lets LockRows stop locking once
//! its parent has enough.
//!
//! A plan is a chain (every operator has at most one input), so a query
//! runs without recursion: one walk down notes what each operator's parent
//! wants (evaluating each OFFSET and LIMIT once), then the rows are
//! computed upwards from the leaf. Only LockRows awaits (other
//! transactions' row locks), inside that one loop: no future per operator
//! (a boxed recursive future cost two large allocations per pgbench SELECT).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use snapscale_storage::Tid;

use super::agg::Acc;
use super::modify::Change;
use super::Executor;
use crate::catalog::Row;
use crate::error::SqlError;
use crate::expr::{compare, passes, Expr};
use crate::index::Key;
use crate::plan::physical::{Node, Query};
use crate::plan::{Aggregate, SortKey};
use crate::sqlstate::SqlState;
use crate::types::Value;

/// What flows between operators: row versions as a Scan or LockRows found
/// them, with their tids (what LockRows locks), or rows computed from them.
/// Each operator keeps the form it was given where it can, so a row is
/// copied into a new vector only where it changes.
enum Rows {
    Versions(Vec<(Tid, Row)>),
    Computed(Vec<Row>),
}

/// An operator on the way down: how many rows its parent takes at most,
/// and for a Limit its evaluated bounds.
struct Step<'n> {
    node: &'n Node,
    want: usize,
    bounds: LimitBounds,
}

impl Executor<'_> {
    /// The rows of a query.
    pub(crate) async fn query(&mut self, q: &Query) -> Result<Vec<Row>, SqlError> {
        let mut steps = Vec::new();
        let (mut node, mut want) = (&q.root, usize::MAX);
        loop {
            let mut bounds = LimitBounds::ALL;
            let (input, input_want) = match node {
                Node::Result | Node::Scan(_) => (None, 0),
                Node::Project { input, .. } => (Some(input), want),
                Node::Aggregate { input, .. } | Node::Sort { input, .. } | Node::LockRows { input, .. } => {
                    (Some(input), usize::MAX)
                }
                Node::Limit { input, offset, limit } => {
                    bounds = self.limit_bounds(offset.as_ref(), limit.as_ref())?;
                    (Some(input), bounds.wanted())
                }
            };
            steps.push(Step { node, want, bounds });
            match input {
                Some(input) => (node, want) = (input, input_want),
                None => break,
            }
        }
        let mut rows = Rows::Computed(Vec::new());
        for step in steps.iter().rev() {
            rows = match (step.node, rows) {
                (Node::Result, _) => Rows::Computed(vec![Row::from(Vec::new())]),
                (Node::Scan(scan), _) => {
                    let found = self.scan(scan)?;
                    self.xact.check_cancel()?;
                    Rows::Versions(found)
                }
                (Node::LockRows { rel, filter, how, .. }, Rows::Versions(versions)) => {
                    let mut locked = Vec::new();
                    for (tid, row) in versions {
                        if locked.len() >= step.want {
                            break;
                        }
                        self.xact.check_cancel()?;
                        // Locked, possibly as a newer version (EPQ); a row
                        // gone or no longer matching does not count.
                        if let Some(version) =
                            self.change_row(rel, filter.as_ref(), tid, row, Change::Lock(*how)).await?
                        {
                            locked.push(version);
                        }
                    }
                    Rows::Versions(locked)
                }
                (Node::LockRows { .. }, Rows::Computed(_)) => {
                    return Err(SqlError::new(SqlState::INTERNAL_ERROR, "rows to lock are not row versions"));
                }
                (Node::Aggregate { keys, aggs, having, .. }, rows) => {
                    let groups = match &rows {
                        Rows::Versions(v) => {
                            self.aggregate(v.iter().map(|(_, row)| row), keys, aggs, having.as_ref())
                        }
                        Rows::Computed(v) => self.aggregate(v.iter(), keys, aggs, having.as_ref()),
                    };
                    Rows::Computed(groups?)
                }
                (Node::Sort { keys, .. }, Rows::Versions(v)) => {
                    Rows::Versions(self.sort(v, keys, |(_, row)| row)?)
                }
                (Node::Sort { keys, .. }, Rows::Computed(v)) => {
                    Rows::Computed(self.sort(v, keys, |row| row)?)
                }
                (Node::Project { exprs, .. }, rows) => {
                    let project = |row: &Row| -> Result<Row, SqlError> {
                        let cx = self.ctx(row);
                        Ok(Row::from(exprs.iter().map(|e| e.eval(&cx)).collect::<Result<Vec<_>, _>>()?))
                    };
                    Rows::Computed(match &rows {
                        Rows::Versions(v) => {
                            v.iter().map(|(_, row)| project(row)).collect::<Result<_, _>>()?
                        }
                        Rows::Computed(v) => v.iter().map(project).collect::<Result<_, _>>()?,
                    })
                }
                (Node::Limit { .. }, Rows::Versions(mut v)) => {
                    step.bounds.apply(&mut v);
                    Rows::Versions(v)
                }
                (Node::Limit { .. }, Rows::Computed(mut v)) => {
                    step.bounds.apply(&mut v);
                    Rows::Computed(v)
                }
            };
        }
        Ok(match rows {
            Rows::Versions(v) => v.into_iter().map(|(_, row)| row).collect(),
            Rows::Computed(v) => v,
        })
    }

    /// `items` ordered by ORDER BY `keys`, evaluated over each item's row.
    fn sort<T>(
        &self,
        items: Vec<T>,
        keys: &[SortKey],
        row_of: impl Fn(&T) -> &Row,
    ) -> Result<Vec<T>, SqlError> {
        if keys.is_empty() {
            return Ok(items);
        }
        let mut keyed = Vec::with_capacity(items.len());
        for item in items {
            let cx = self.ctx(row_of(&item));
            let values = keys.iter().map(|k| k.expr.eval(&cx)).collect::<Result<Vec<_>, _>>()?;
            keyed.push((values, item));
        }
        sort_by_keys(&mut keyed, keys, |(values, _)| values)?;
        Ok(keyed.into_iter().map(|(_, item)| item).collect())
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

    /// Groups `rows` by `keys` and computes each group's aggregates: one row
    /// per group, its key values then its aggregates, if it passes `having`.
    fn aggregate<'r>(
        &self,
        rows: impl Iterator<Item = &'r Row>,
        keys: &[Expr],
        aggs: &[Aggregate],
        having: Option<&Expr>,
    ) -> Result<Vec<Row>, SqlError> {
        let mut groups: BTreeMap<Key, Vec<Acc>> = BTreeMap::new();
        if keys.is_empty() {
            groups.insert(Key(Vec::new()), aggs.iter().map(|_| Acc::default()).collect());
        }
        for row in rows {
            let cx = self.ctx(row);
            let key = Key(keys.iter().map(|k| k.eval(&cx)).collect::<Result<_, _>>()?);
            let accs = groups.entry(key).or_insert_with(|| aggs.iter().map(|_| Acc::default()).collect());
            for (acc, agg) in accs.iter_mut().zip(aggs) {
                let v = match &agg.arg {
                    Some(e) => e.eval(&cx)?,
                    None => Value::Bool(true),
                };
                acc.add(agg.func, v)?;
            }
        }
        let mut out = Vec::with_capacity(groups.len());
        for (key, accs) in groups {
            let mut values = key.0;
            for (acc, agg) in accs.into_iter().zip(aggs) {
                values.push(acc.finish(agg.func, agg.ty)?);
            }
            let row = Row::from(values);
            if let Some(h) = having {
                if !passes(h, &self.ctx(&row))? {
                    continue;
                }
            }
            out.push(row);
        }
        Ok(out)
    }
}

/// Sorts `items` by ORDER BY keys (`keys_of` finds an item's key values):
/// NULLs last ascending and first descending unless NULLS FIRST/LAST says
/// otherwise; a comparison error (incomparable values) is returned.
pub(crate) fn sort_by_keys<T>(
    items: &mut [T],
    order: &[SortKey],
    keys_of: impl Fn(&T) -> &Vec<Value>,
) -> Result<(), SqlError> {
    if order.is_empty() {
        return Ok(());
    }
    let mut err = None;
    items.sort_by(|a, b| {
        let (a, b) = (keys_of(a), keys_of(b));
        for (i, k) in order.iter().enumerate() {
            let (x, y) = (&a[i], &b[i]);
            let o = match (matches!(x, Value::Null), matches!(y, Value::Null)) {
                (true, true) => Ordering::Equal,
                (true, false) if k.nulls_first => Ordering::Less,
                (true, false) => Ordering::Greater,
                (false, true) if k.nulls_first => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => {
                    let o = compare(x, y, true).unwrap_or_else(|e| {
                        err = Some(e);
                        Ordering::Equal
                    });
                    if k.desc {
                        o.reverse()
                    } else {
                        o
                    }
                }
            };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    });
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// OFFSET and LIMIT as counts (no LIMIT: all rows).
struct LimitBounds {
    offset: usize,
    limit: usize,
}

impl LimitBounds {
    const ALL: LimitBounds = LimitBounds { offset: 0, limit: usize::MAX };

    /// Keeps the rows from `offset` on, at most `limit` of them, in place.
    fn apply<T>(&self, rows: &mut Vec<T>) {
        rows.drain(..self.offset.min(rows.len()));
        rows.truncate(self.limit);
    }

    /// How many input rows the Limit takes at most.
    fn wanted(&self) -> usize {
        self.offset.saturating_add(self.limit)
    }
}
