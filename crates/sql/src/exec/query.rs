//! Queries as trees of operators (see [`crate::plan::physical`]). Each
//! operator materialises its rows; `want`, passed down from a Limit through
//! the operators that keep the row count, lets LockRows stop locking once
//! its parent has enough.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;

use super::agg::Acc;
use super::modify::Change;
use super::{Executor, Tuple};
use crate::catalog::Row;
use crate::error::SqlError;
use crate::expr::{compare, passes, Expr};
use crate::index::Key;
use crate::plan::physical::{Node, Query};
use crate::plan::{Aggregate, SortKey};
use crate::sqlstate::SqlState;
use crate::types::Value;

type Rows<'a> = Pin<Box<dyn Future<Output = Result<Vec<Tuple>, SqlError>> + Send + 'a>>;

impl Executor<'_> {
    /// The rows of a query.
    pub(crate) async fn query(&mut self, q: &Query) -> Result<Vec<Row>, SqlError> {
        Ok(self.node(&q.root, usize::MAX).await?.into_iter().map(|(_, row)| row).collect())
    }

    /// The rows of `node`, of which the parent will take at most `want`.
    fn node<'a>(&'a mut self, node: &'a Node, want: usize) -> Rows<'a> {
        Box::pin(async move {
            match node {
                Node::Result => Ok(vec![(None, Row::from(Vec::new()))]),
                Node::Scan(scan) => {
                    let rows = self.scan(scan)?;
                    self.xact.check_cancel()?;
                    Ok(rows.into_iter().map(|(tid, row)| (Some(tid), row)).collect())
                }
                Node::LockRows { input, rel, filter, how } => {
                    let rows = self.node(input, usize::MAX).await?;
                    let mut locked = Vec::new();
                    for (tid, row) in rows {
                        if locked.len() >= want {
                            break;
                        }
                        self.xact.check_cancel()?;
                        let tid = tid.ok_or_else(|| {
                            SqlError::new(SqlState::INTERNAL_ERROR, "a row to lock has no version")
                        })?;
                        // Locked, possibly as a newer version (EPQ); a row
                        // gone or no longer matching does not count.
                        if let Some((tid, row)) =
                            self.change_row(rel, filter.as_ref(), tid, row, Change::Lock(*how)).await?
                        {
                            locked.push((Some(tid), row));
                        }
                    }
                    Ok(locked)
                }
                Node::Aggregate { input, keys, aggs, having } => {
                    let rows = self.node(input, usize::MAX).await?;
                    self.aggregate(&rows, keys, aggs, having.as_ref())
                }
                Node::Sort { input, keys } => {
                    let rows = self.node(input, usize::MAX).await?;
                    let mut keyed = Vec::with_capacity(rows.len());
                    for tuple in rows {
                        let cx = self.ctx(&tuple.1);
                        let values = keys.iter().map(|k| k.expr.eval(&cx)).collect::<Result<Vec<_>, _>>()?;
                        keyed.push((values, tuple));
                    }
                    sort_by_keys(&mut keyed, keys, |(values, _)| values)?;
                    Ok(keyed.into_iter().map(|(_, tuple)| tuple).collect())
                }
                Node::Project { input, exprs } => {
                    let rows = self.node(input, want).await?;
                    let mut out = Vec::with_capacity(rows.len());
                    for (_, row) in rows {
                        let cx = self.ctx(&row);
                        let values = exprs.iter().map(|e| e.eval(&cx)).collect::<Result<Vec<_>, _>>()?;
                        out.push((None, Row::from(values)));
                    }
                    Ok(out)
                }
                Node::Limit { input, offset, limit } => {
                    let offset = self.count(
                        offset.as_ref(),
                        SqlState::INVALID_ROW_COUNT_IN_RESULT_OFFSET_CLAUSE,
                        "OFFSET",
                    )?;
                    let limit =
                        self.count(limit.as_ref(), SqlState::INVALID_ROW_COUNT_IN_LIMIT_CLAUSE, "LIMIT")?;
                    let (offset, limit) = (offset.unwrap_or(0), limit.unwrap_or(usize::MAX));
                    let rows = self.node(input, offset.saturating_add(limit)).await?;
                    Ok(rows.into_iter().skip(offset).take(limit).collect())
                }
            }
        })
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
    fn aggregate(
        &self,
        rows: &[Tuple],
        keys: &[Expr],
        aggs: &[Aggregate],
        having: Option<&Expr>,
    ) -> Result<Vec<Tuple>, SqlError> {
        let mut groups: BTreeMap<Key, Vec<Acc>> = BTreeMap::new();
        if keys.is_empty() {
            groups.insert(Key(Vec::new()), aggs.iter().map(|_| Acc::default()).collect());
        }
        for (_, row) in rows {
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
            out.push((None, row));
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
