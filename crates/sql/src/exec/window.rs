//! Window functions: each call's values over its partitions, appended to
//! the rows in their input order.
//!
//! The rows are sorted by (partition keys, order keys) per call; a
//! partition is a run of equal partition keys, and rows with equal order
//! keys are peers. row_number counts rows, rank gives a peer group its
//! first row's number, dense_rank counts peer groups; percent_rank,
//! cume_dist and ntile follow from those. An aggregate, first_value,
//! last_value and nth_value read the row's frame: by default the partition
//! up to the current row's last peer with ORDER BY (RANGE UNBOUNDED
//! PRECEDING), the whole partition without; else the ROWS, RANGE or GROUPS
//! frame the call names, as positions [lo, hi) in the sorted partition
//! (`frames`). An aggregate whose frames only grow (an unbounded start)
//! accumulates once over the partition; any other is computed afresh for
//! each row.

use std::cmp::Ordering;

use snapscale_engine::catalog::Row;
use snapscale_engine::index::Key;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use super::agg::Acc;
use super::query::{sort_by_keys, Run};
use crate::expr::{compare, AggFunc, WinFunc};
use crate::plan::{FrameBound, FrameUnits, SortKey, WindowCall};

/// A row's place in a window: its partition key, its order values, the
/// call's argument, its index, and lag/lead's offset and default.
type Entry = (Key, Vec<Value>, Option<Value>, usize, Vec<Value>);

impl Run<'_, '_> {
    pub(super) fn windows(&self, rows: Vec<Row>, calls: &[WindowCall]) -> Result<Vec<Row>, SqlError> {
        let mut extra: Vec<Vec<Value>> = vec![Vec::with_capacity(calls.len()); rows.len()];
        // The rows leave in the last window's order (its partitions, then
        // its ORDER BY), as PostgreSQL's WindowAgg hands them on: what a
        // query without ORDER BY shows.
        let mut order: Vec<usize> = (0..rows.len()).collect();
        for call in calls {
            let (values, sorted) = self.window(&rows, call)?;
            for (e, v) in extra.iter_mut().zip(values) {
                e.push(v);
            }
            order = sorted;
        }
        let mut rows: Vec<Option<Row>> = rows.into_iter().map(Some).collect();
        Ok(order
            .into_iter()
            .map(|i| {
                let mut values = rows[i].take().expect("each row once").to_vec();
                values.append(&mut extra[i]);
                Row::from(values)
            })
            .collect())
    }

    /// One call's value for each row, in the rows' order, and the rows'
    /// indexes in the window's order.
    fn window(&self, rows: &[Row], call: &WindowCall) -> Result<(Vec<Value>, Vec<usize>), SqlError> {
        // (partition key, order values, argument, row index)
        let mut keyed = Vec::with_capacity(rows.len());
        // A frame's per-row values: each bound's offset and RANGE value,
        // and the RANGE key, by row index.
        let mut framed: Vec<FrameRow> = Vec::new();
        for (i, row) in rows.iter().enumerate() {
            let cx = self.ctx(row);
            let part = Key(call.partition.iter().map(|e| e.eval(&cx)).collect::<Result<_, _>>()?);
            let order: Vec<Value> = call.order.iter().map(|k| k.expr.eval(&cx)).collect::<Result<_, _>>()?;
            let arg = call.arg.as_ref().map(|e| e.eval(&cx)).transpose()?;
            let more: Vec<Value> = call.more.iter().map(|e| e.eval(&cx)).collect::<Result<_, _>>()?;
            keyed.push((part, order, arg, i, more));
            if let Some(frame) = &call.frame {
                // A RANGE bound whose value overflows its type lies beyond
                // every row in its direction, as PostgreSQL's in_range
                // has it: kept as NULL (a NULL key's bounds are not read).
                let moved = |v: &crate::expr::Expr| match v.eval(&cx) {
                    Err(e)
                        if matches!(
                            e.code,
                            SqlState::NUMERIC_VALUE_OUT_OF_RANGE | SqlState::DATETIME_FIELD_OVERFLOW
                        ) =>
                    {
                        Ok(Value::Null)
                    }
                    other => other,
                };
                let bound = |b: &FrameBound| -> Result<(Value, Value), SqlError> {
                    Ok(match b {
                        FrameBound::Preceding(o, v) | FrameBound::Following(o, v) => {
                            (o.eval(&cx)?, v.as_ref().map(moved).transpose()?.unwrap_or(Value::Null))
                        }
                        _ => (Value::Null, Value::Null),
                    })
                };
                let key = frame.range_key.as_ref().map(|k| k.eval(&cx)).transpose()?.unwrap_or(Value::Null);
                framed.push(FrameRow { start: bound(&frame.start)?, end: bound(&frame.end)?, key });
            }
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
            self.partition(part, call, &framed, &mut out)?;
            start = end;
        }
        Ok((out, by_partition.iter().map(|e| e.3).collect()))
    }

    fn partition(
        &self,
        part: &[Entry],
        call: &WindowCall,
        framed: &[FrameRow],
        out: &mut [Value],
    ) -> Result<(), SqlError> {
        let groups = peer_groups(part, call)?;
        let rows = part.len();
        match call.func {
            WinFunc::RowNumber
            | WinFunc::Rank
            | WinFunc::DenseRank
            | WinFunc::PercentRank
            | WinFunc::CumeDist => {
                let mut dense = 0i64;
                for (n, (_, _, _, i, _)) in part.iter().enumerate() {
                    let (first, last) = (groups.start[n], groups.end[n]);
                    if first == n {
                        dense += 1;
                    }
                    out[*i] = match call.func {
                        WinFunc::RowNumber => Value::Int(n as i64 + 1),
                        WinFunc::Rank => Value::Int(first as i64 + 1),
                        WinFunc::DenseRank => Value::Int(dense),
                        WinFunc::PercentRank if rows > 1 => Value::Float(first as f64 / (rows - 1) as f64),
                        WinFunc::PercentRank => Value::Float(0.0),
                        _ => Value::Float(last as f64 / rows as f64),
                    };
                }
            }
            WinFunc::Ntile => {
                for (n, (_, _, _, i, more)) in part.iter().enumerate() {
                    out[*i] = match more.first() {
                        Some(Value::Int(b)) if *b > 0 => {
                            // The first rows % b buckets get one row more.
                            let (b, total) = (*b as usize, rows);
                            let (size, extra) = (total / b, total % b);
                            let big = (size + 1) * extra;
                            let bucket =
                                if n < big { n / (size + 1) } else { extra + (n - big) / size.max(1) };
                            Value::Int(bucket as i64 + 1)
                        }
                        Some(Value::Int(_)) => {
                            return Err(SqlError::new(
                                SqlState::INVALID_ARGUMENT_FOR_NTILE_FUNCTION,
                                "argument of ntile must be greater than zero",
                            ))
                        }
                        _ => Value::Null,
                    };
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
            WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue => {
                let frames = frames(part, call, framed, &groups)?;
                for (n, (_, _, _, i, more)) in part.iter().enumerate() {
                    let (lo, hi) = frames[n];
                    let at = match call.func {
                        WinFunc::FirstValue => Some(lo),
                        WinFunc::LastValue => hi.checked_sub(1),
                        _ => match more.first() {
                            Some(Value::Int(k)) if *k > 0 => lo.checked_add(*k as usize - 1),
                            Some(Value::Int(_)) => {
                                return Err(SqlError::new(
                                    SqlState::INVALID_ARGUMENT_FOR_NTH_VALUE_FUNCTION,
                                    "argument of nth_value must be greater than zero",
                                ))
                            }
                            _ => None,
                        },
                    };
                    out[*i] = match at.filter(|&a| a >= lo && a < hi) {
                        Some(a) => part[a].2.clone().unwrap_or(Value::Null),
                        None => Value::Null,
                    };
                }
            }
            WinFunc::Agg(AggFunc::User) => {
                let Some(u) = call.user.as_deref() else {
                    return Err(SqlError::new(
                        SqlState::INTERNAL_ERROR,
                        "a window aggregate without its definition",
                    ));
                };
                let frames = frames(part, call, framed, &groups)?;
                // As for the built-in aggregates: frames that only grow
                // accumulate once; any other frame is computed afresh.
                let growing = frames.iter().all(|f| f.0 == 0) && frames.windows(2).all(|w| w[0].1 <= w[1].1);
                let mut state = self.user_start(u)?;
                let mut added = 0;
                for (n, (_, _, _, i, _)) in part.iter().enumerate() {
                    let (lo, hi) = frames[n];
                    if !growing {
                        state = self.user_start(u)?;
                        added = lo;
                    }
                    while added < hi {
                        self.user_step(u, &mut state, part[added].4.clone())?;
                        added += 1;
                    }
                    out[*i] = self.user_finish(u, &state)?;
                }
            }
            WinFunc::Agg(func) => {
                let frames = frames(part, call, framed, &groups)?;
                let arg = |k: usize| part[k].2.clone().unwrap_or(Value::Bool(true));
                // Frames that start at the partition's start and never
                // shrink: one accumulation over the partition.
                let growing = frames.iter().all(|f| f.0 == 0) && frames.windows(2).all(|w| w[0].1 <= w[1].1);
                let mut acc = Acc::default();
                let mut added = 0;
                for (n, (_, _, _, i, _)) in part.iter().enumerate() {
                    let (lo, hi) = frames[n];
                    if !growing {
                        acc = Acc::default();
                        added = lo;
                    }
                    while added < hi {
                        acc.add(func, arg(added), part[added].4.first().cloned())?;
                        added += 1;
                    }
                    out[*i] = acc.snapshot(func, call.ty)?;
                }
            }
        }
        Ok(())
    }
}

/// A row's frame values (see `window`).
struct FrameRow {
    start: (Value, Value),
    end: (Value, Value),
    key: Value,
}

/// Each row's peer group in a sorted partition: its first row and the row
/// after its last (the whole partition is one group without ORDER BY).
struct Groups {
    start: Vec<usize>,
    end: Vec<usize>,
    /// Each row's group number, and each group's first row.
    number: Vec<usize>,
    firsts: Vec<usize>,
}

fn peer_groups(part: &[Entry], call: &WindowCall) -> Result<Groups, SqlError> {
    let n = part.len();
    let (mut start, mut end, mut number, mut firsts) = (vec![0; n], vec![0; n], vec![0; n], Vec::new());
    let mut k = 0;
    while k < n {
        let mut e = k + 1;
        while e < n && (call.order.is_empty() || order_cmp(&part[k].1, &part[e].1, &call.order)?.is_eq()) {
            e += 1;
        }
        for r in k..e {
            start[r] = k;
            end[r] = e;
            number[r] = firsts.len();
        }
        firsts.push(k);
        k = e;
    }
    Ok(Groups { start, end, number, firsts })
}

/// Each row's frame as [lo, hi) positions in the sorted partition.
fn frames(
    part: &[Entry],
    call: &WindowCall,
    framed: &[FrameRow],
    groups: &Groups,
) -> Result<Vec<(usize, usize)>, SqlError> {
    let n = part.len();
    let Some(frame) = &call.frame else {
        // The default: up to the current row's last peer.
        return Ok((0..n).map(|r| (0, groups.end[r])).collect());
    };
    let desc = call.order.first().is_some_and(|k| k.desc);
    let group_end = |g: usize| groups.firsts.get(g + 1).copied().unwrap_or(n);
    // A ROWS or GROUPS offset: a non-negative count.
    let count = |v: &Value, start: bool| -> Result<usize, SqlError> {
        let which = if start { "starting" } else { "ending" };
        match v {
            Value::Int(k) if *k >= 0 => Ok(usize::try_from(*k).unwrap_or(usize::MAX)),
            Value::Int(_) => Err(SqlError::new(
                SqlState::INVALID_PRECEDING_OR_FOLLOWING_SIZE,
                format!("frame {which} offset must not be negative"),
            )),
            _ => Err(SqlError::new(
                SqlState::NULL_VALUE_NOT_ALLOWED,
                format!("frame {which} offset must not be null"),
            )),
        }
    };
    // A RANGE offset: not NULL, not negative.
    let range_offset = |v: &Value| -> Result<(), SqlError> {
        let negative = match v {
            Value::Null => {
                return Err(SqlError::new(SqlState::NULL_VALUE_NOT_ALLOWED, "frame offset must not be null"))
            }
            other => compare(other, &zero_like(other), true).is_ok_and(|o| o.is_lt()),
        };
        if negative {
            return Err(SqlError::new(
                SqlState::INVALID_PRECEDING_OR_FOLLOWING_SIZE,
                "invalid preceding or following size in window function",
            ));
        }
        Ok(())
    };
    // The non-NULL keys' span of the sorted partition (NULLs sort to one
    // end and are peers of each other only).
    let key = |r: usize| &framed[part[r].3].key;
    let (nn_lo, nn_hi) = if frame.range_key.is_some() {
        let lo = (0..n).find(|&r| !matches!(key(r), Value::Null)).unwrap_or(n);
        let hi = (lo..n).find(|&r| matches!(key(r), Value::Null)).unwrap_or(n);
        (lo, hi)
    } else {
        (0, n)
    };
    // The first position in the non-NULL span at or past `bound` (the
    // frame's start), or past it (`after`: the frame's end).
    let seek = |bound: &Value, after: bool| -> Result<usize, SqlError> {
        let (mut lo, mut hi) = (nn_lo, nn_hi);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let o = compare(key(mid), bound, true)?;
            let o = if desc { o.reverse() } else { o };
            let before = if after { o.is_le() } else { o.is_lt() };
            if before {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(lo)
    };
    let mut out = Vec::with_capacity(n);
    for r in 0..n {
        let row = &framed[part[r].3];
        let null_key = frame.range_key.is_some() && matches!(row.key, Value::Null);
        let g = groups.number[r];
        let lo = match &frame.start {
            FrameBound::UnboundedPreceding => 0,
            FrameBound::CurrentRow if frame.units == FrameUnits::Rows => r,
            FrameBound::CurrentRow => groups.start[r],
            FrameBound::Preceding(..) | FrameBound::Following(..) => {
                let following = matches!(frame.start, FrameBound::Following(..));
                match frame.units {
                    FrameUnits::Rows => {
                        let k = count(&row.start.0, true)?;
                        if following {
                            r.saturating_add(k).min(n)
                        } else {
                            r.saturating_sub(k)
                        }
                    }
                    FrameUnits::Groups => {
                        let k = count(&row.start.0, true)?;
                        if following {
                            groups.firsts.get(g.saturating_add(k)).copied().unwrap_or(n)
                        } else {
                            groups.firsts[g.saturating_sub(k)]
                        }
                    }
                    FrameUnits::Range => {
                        range_offset(&row.start.0)?;
                        match (&row.start.1, following) {
                            _ if null_key => groups.start[r],
                            (Value::Null, false) => nn_lo,
                            (Value::Null, true) => nn_hi,
                            (bound, _) => seek(bound, false)?,
                        }
                    }
                }
            }
            FrameBound::UnboundedFollowing => n,
        };
        let hi = match &frame.end {
            FrameBound::UnboundedFollowing => n,
            FrameBound::CurrentRow if frame.units == FrameUnits::Rows => r + 1,
            FrameBound::CurrentRow => groups.end[r],
            FrameBound::Preceding(..) | FrameBound::Following(..) => {
                let following = matches!(frame.end, FrameBound::Following(..));
                match frame.units {
                    FrameUnits::Rows => {
                        let k = count(&row.end.0, false)?;
                        if following {
                            r.saturating_add(k).saturating_add(1).min(n)
                        } else {
                            (r + 1).saturating_sub(k)
                        }
                    }
                    FrameUnits::Groups => {
                        let k = count(&row.end.0, false)?;
                        if following {
                            group_end(g.saturating_add(k).min(groups.firsts.len() - 1))
                        } else if k > g {
                            0
                        } else {
                            group_end(g - k)
                        }
                    }
                    FrameUnits::Range => {
                        range_offset(&row.end.0)?;
                        match (&row.end.1, following) {
                            _ if null_key => groups.end[r],
                            (Value::Null, false) => nn_lo,
                            (Value::Null, true) => nn_hi,
                            (bound, _) => seek(bound, true)?,
                        }
                    }
                }
            }
            FrameBound::UnboundedPreceding => 0,
        };
        out.push((lo, hi.max(lo)));
    }
    Ok(out)
}

/// The zero of an offset's type, to tell a negative offset.
fn zero_like(v: &Value) -> Value {
    match v {
        Value::Int(_) => Value::Int(0),
        Value::Float(_) => Value::Float(0.0),
        Value::Numeric(_) => Value::Numeric(snapscale_values::numeric::Numeric::from(0i64)),
        Value::Interval(_) => Value::Interval(snapscale_values::Interval::default()),
        other => other.clone(),
    }
}

/// Compares two rows' order values as ORDER BY does.
fn order_cmp(a: &[Value], b: &[Value], keys: &[SortKey]) -> Result<Ordering, SqlError> {
    for ((x, y), k) in a.iter().zip(b).zip(keys) {
        let o = match (matches!(x, Value::Null), matches!(y, Value::Null)) {
            (true, true) => Ordering::Equal,
            (true, false) | (false, true) => Ordering::Less,
            (false, false) => compare(x, y, false)?,
        };
        let o = if k.desc { o.reverse() } else { o };
        if o != Ordering::Equal {
            return Ok(o);
        }
    }
    Ok(Ordering::Equal)
}
