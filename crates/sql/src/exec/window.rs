//! Window functions: each call's values over its partitions, appended to
//! the rows in their input order.
//!
//! The rows are sorted by (partition keys, order keys) per call; a
//! partition is a run of equal partition keys, and rows with equal order
//! keys are peers. row_number counts rows, rank gives a peer group its
//! first row's number, dense_rank counts peer groups. An aggregate with
//! ORDER BY runs over the partition up to the current row's last peer
//! (PostgreSQL's default frame, RANGE UNBOUNDED PRECEDING), without ORDER BY
//! over the whole partition.

use std::cmp::Ordering;

use snapscale_engine::catalog::Row;
use snapscale_engine::index::Key;
use snapscale_values::{SqlError, Value};

use super::agg::Acc;
use super::query::{sort_by_keys, Run};
use crate::expr::{compare, WinFunc};
use crate::plan::{SortKey, WindowCall};

/// A row's place in a window: its partition key, its order values, the
/// call's argument, its index, and lag/lead's offset and default.
type Entry = (Key, Vec<Value>, Option<Value>, usize, Vec<Value>);

impl Run<'_, '_> {
    pub(super) fn windows(&self, rows: Vec<Row>, calls: &[WindowCall]) -> Result<Vec<Row>, SqlError> {
        let mut extra: Vec<Vec<Value>> = vec![Vec::with_capacity(calls.len()); rows.len()];
        for call in calls {
            let values = self.window(&rows, call)?;
            for (e, v) in extra.iter_mut().zip(values) {
                e.push(v);
            }
        }
        Ok(rows
            .into_iter()
            .zip(extra)
            .map(|(row, more)| {
                let mut values = row.to_vec();
                values.extend(more);
                Row::from(values)
            })
            .collect())
    }

    /// One call's value for each row, in the rows' order.
    fn window(&self, rows: &[Row], call: &WindowCall) -> Result<Vec<Value>, SqlError> {
        // (partition key, order values, argument, row index)
        let mut keyed = Vec::with_capacity(rows.len());
        for (i, row) in rows.iter().enumerate() {
            let cx = self.ctx(row);
            let part = Key(call.partition.iter().map(|e| e.eval(&cx)).collect::<Result<_, _>>()?);
            let order: Vec<Value> = call.order.iter().map(|k| k.expr.eval(&cx)).collect::<Result<_, _>>()?;
            let arg = call.arg.as_ref().map(|e| e.eval(&cx)).transpose()?;
            let more: Vec<Value> = call.more.iter().map(|e| e.eval(&cx)).collect::<Result<_, _>>()?;
            keyed.push((part, order, arg, i, more));
        }
        // Partitions together (in key order), then the window's order.
        let mut by_partition: Vec<Entry> = keyed;
        by_partition.sort_by(|a, b| a.0.cmp(&b.0));
        let mut out = vec![Value::Null; rows.len()];
        let mut start = 0;
        while start < by_partition.len() {
            let mut end = start + 1;
            while end < by_partition.len() && by_partition[end].0 == by_partition[start].0 {
                end += 1;
            }
            let part = &mut by_partition[start..end];
            sort_by_keys(part, &call.order, |(_, order, _, _, _)| order)?;
            self.partition(part, call, &mut out)?;
            start = end;
        }
        Ok(out)
    }

    fn partition(&self, part: &[Entry], call: &WindowCall, out: &mut [Value]) -> Result<(), SqlError> {
        let peers = |a: &[Value], b: &[Value]| -> Result<bool, SqlError> {
            Ok(order_cmp(a, b, &call.order)?.is_eq())
        };
        match call.func {
            WinFunc::RowNumber | WinFunc::Rank | WinFunc::DenseRank => {
                let (mut rank, mut dense) = (0i64, 0i64);
                for (n, (_, order, _, i, _)) in part.iter().enumerate() {
                    if n == 0 || !peers(&part[n - 1].1, order)? {
                        rank = n as i64 + 1;
                        dense += 1;
                    }
                    out[*i] = Value::Int(match call.func {
                        WinFunc::RowNumber => n as i64 + 1,
                        WinFunc::Rank => rank,
                        _ => dense,
                    });
                }
            }
            WinFunc::Agg(func) => {
                let mut acc = Acc::default();
                let mut n = 0;
                while n < part.len() {
                    // The peer group (all of the partition without ORDER BY).
                    let mut end = n + 1;
                    while end < part.len() && (call.order.is_empty() || peers(&part[n].1, &part[end].1)?) {
                        end += 1;
                    }
                    for (_, _, arg, _, _) in &part[n..end] {
                        acc.add(func, arg.clone().unwrap_or(Value::Bool(true)), None)?;
                    }
                    let value = acc.snapshot(func, call.ty)?;
                    for (_, _, _, i, _) in &part[n..end] {
                        out[*i] = value.clone();
                    }
                    n = end;
                }
            }
            WinFunc::Lag | WinFunc::Lead => {
                for (n, (_, _, _, i, more)) in part.iter().enumerate() {
                    let offset = match more.first() {
                        Some(Value::Int(o)) => *o,
                        Some(_) => {
                            out[*i] = Value::Null;
                            continue;
                        }
                        None => 1,
                    };
                    let at = if call.func == WinFunc::Lag { n as i64 - offset } else { n as i64 + offset };
                    out[*i] = match usize::try_from(at).ok().and_then(|a| part.get(a)) {
                        Some((_, _, arg, _, _)) => arg.clone().unwrap_or(Value::Null),
                        None => more.get(1).cloned().unwrap_or(Value::Null),
                    };
                }
            }
            WinFunc::FirstValue | WinFunc::LastValue => {
                let mut n = 0;
                while n < part.len() {
                    let mut end = n + 1;
                    while end < part.len() && (call.order.is_empty() || peers(&part[n].1, &part[end].1)?) {
                        end += 1;
                    }
                    let value = if call.func == WinFunc::FirstValue { &part[0].2 } else { &part[end - 1].2 };
                    for (_, _, _, i, _) in &part[n..end] {
                        out[*i] = value.clone().unwrap_or(Value::Null);
                    }
                    n = end;
                }
            }
        }
        Ok(())
    }
}

/// Compares two rows' order values as ORDER BY does.
fn order_cmp(a: &[Value], b: &[Value], keys: &[SortKey]) -> Result<Ordering, SqlError> {
    for ((x, y), k) in a.iter().zip(b).zip(keys) {
        let o = match (matches!(x, Value::Null), matches!(y, Value::Null)) {
            (true, true) => Ordering::Equal,
            (true, false) | (false, true) => Ordering::Less,
            (false, false) => compare(x, y, true)?,
        };
        let o = if k.desc { o.reverse() } else { o };
        if o != Ordering::Equal {
            return Ok(o);
        }
    }
    Ok(Ordering::Equal)
}
