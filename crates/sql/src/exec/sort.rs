//! ORDER BY and DISTINCT's runs: rows sorted by their keys, and the first
//! of each run of equal keys.
//!
//! A key that is a column of the input row (the usual ORDER BY c, and
//! every key of a DISTINCT) is read where it is: evaluating it copied
//! each row's value, which for text was an allocation per row and key.
//! Other keys are evaluated once per row, before sorting.

use std::cmp::Ordering;

use snapscale_engine::catalog::Row;
use snapscale_engine::index::Key;
use snapscale_values::{SqlError, Value};

use super::query::Run;
use crate::expr::{compare, Expr};
use crate::plan::SortKey;

/// The column each expression reads, if every one is a column alone.
fn columns<'e>(exprs: impl Iterator<Item = &'e Expr>) -> Option<Vec<usize>> {
    exprs.map(|e| if let Expr::Column(i) = e { Some(*i) } else { None }).collect()
}

/// How `x` and `y` order under `k`: NULLs last ascending and first
/// descending unless NULLS FIRST/LAST says otherwise. A comparison error
/// (incomparable values) is left in `err`, and the two taken as equal.
fn key_order(k: &SortKey, x: &Value, y: &Value, err: &mut Option<SqlError>) -> Ordering {
    match (matches!(x, Value::Null), matches!(y, Value::Null)) {
        (true, true) => Ordering::Equal,
        (true, false) if k.nulls_first => Ordering::Less,
        (true, false) => Ordering::Greater,
        (false, true) if k.nulls_first => Ordering::Greater,
        (false, true) => Ordering::Less,
        (false, false) => {
            let o = compare(x, y, false).unwrap_or_else(|e| {
                *err = Some(e);
                Ordering::Equal
            });
            if k.desc {
                o.reverse()
            } else {
                o
            }
        }
    }
}

/// Sorts `items` by ORDER BY keys (`keys_of` finds an item's key values),
/// stably; a comparison error (incomparable values) is returned.
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
            let o = key_order(k, &a[i], &b[i], &mut err);
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

/// Whether two values are the same for DISTINCT: NULLs equal, otherwise
/// as an index key compares them (the order `Key` gives, which also
/// decides values `compare` cannot order).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Null, _) | (_, Value::Null) => false,
        _ => match a.compare(b) {
            Some(o) => o.is_eq(),
            None => Key(vec![a.clone()]) == Key(vec![b.clone()]),
        },
    }
}

impl Run<'_, '_> {
    /// `items` ordered by ORDER BY `keys`, evaluated over each item's row.
    pub(super) fn sort<T>(
        &self,
        mut items: Vec<T>,
        keys: &[SortKey],
        row_of: impl Fn(&T) -> &Row,
    ) -> Result<Vec<T>, SqlError> {
        if keys.is_empty() {
            return Ok(items);
        }
        if let Some(cols) = columns(keys.iter().map(|k| &k.expr)) {
            let mut err = None;
            items.sort_by(|a, b| {
                let (a, b) = (row_of(a), row_of(b));
                for (k, &c) in keys.iter().zip(&cols) {
                    let o = key_order(k, &a[c], &b[c], &mut err);
                    if o != Ordering::Equal {
                        return o;
                    }
                }
                Ordering::Equal
            });
            return match err {
                Some(e) => Err(e),
                None => Ok(items),
            };
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

    /// The first of each run of `rows` with equal `keys` (NULLs equal, as
    /// DISTINCT compares them).
    pub(super) fn unique(&self, rows: Vec<Row>, keys: &[Expr]) -> Result<Vec<Row>, SqlError> {
        if let Some(cols) = columns(keys.iter()) {
            let mut out: Vec<Row> = Vec::with_capacity(rows.len());
            for row in rows {
                let repeats = out.last().is_some_and(|last| cols.iter().all(|&c| same(&last[c], &row[c])));
                if !repeats {
                    out.push(row);
                }
            }
            return Ok(out);
        }
        let mut out = Vec::new();
        let mut last: Option<Key> = None;
        for row in rows {
            let cx = self.ctx(&row);
            let key = Key(keys.iter().map(|k| k.eval(&cx)).collect::<Result<Vec<_>, _>>()?);
            if last.as_ref() != Some(&key) {
                last = Some(key);
                out.push(row);
            }
        }
        Ok(out)
    }
}
