//! Set operations over two inputs' rows, and set-returning functions.
//!
//! Rows are compared as wholes, NULLs equal to NULLs (as PostgreSQL's set
//! operations and DISTINCT compare them). Duplicates are counted: UNION ALL
//! keeps all; INTERSECT ALL keeps min(m, n) of a row seen m times on the
//! left and n on the right, EXCEPT ALL max(m - n, 0); without ALL each
//! kept row appears once.

use std::collections::BTreeMap;

use snapscale_engine::catalog::Row;
use snapscale_engine::index::Key;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use crate::plan::{SetOpKind, Srf};

pub(super) fn combine(op: SetOpKind, all: bool, left: Vec<Row>, right: Vec<Row>) -> Vec<Row> {
    if op == SetOpKind::Union && all {
        let mut out = left;
        out.extend(right);
        return out;
    }
    // Per distinct row: the row, and its count on each side, in first-seen
    // order.
    let mut counts: BTreeMap<Key, usize> = BTreeMap::new();
    let mut seen: Vec<(Row, usize, usize)> = Vec::new();
    for (side, rows) in [(0, left), (1, right)] {
        for row in rows {
            let key = Key(row.to_vec());
            let i = *counts.entry(key).or_insert_with(|| {
                seen.push((row.clone(), 0, 0));
                seen.len() - 1
            });
            if side == 0 {
                seen[i].1 += 1;
            } else {
                seen[i].2 += 1;
            }
        }
    }
    let mut out = Vec::new();
    for (row, m, n) in seen {
        let copies = match (op, all) {
            (SetOpKind::Union, _) => 1,
            (SetOpKind::Intersect, false) => usize::from(m > 0 && n > 0),
            (SetOpKind::Intersect, true) => m.min(n),
            (SetOpKind::Except, false) => usize::from(m > 0 && n == 0),
            (SetOpKind::Except, true) => m.saturating_sub(n),
        };
        out.extend(std::iter::repeat_n(row, copies));
    }
    out
}

/// When a recursive union may stop before its recursion ends: a Limit
/// above it takes `want` rows, of those `accept` passes if a Filter sits
/// between them. PostgreSQL's executor pulls rows from the recursion one
/// at a time, so `WITH RECURSIVE t AS (… UNION ALL SELECT n + 1 FROM t)
/// SELECT * FROM t LIMIT 10` ends although the recursion alone would not;
/// here a round's rows are produced together, and the recursion stops
/// after the round that completes the Limit (the same rows, in the same
/// order, reach it).
pub(super) struct Enough<'a> {
    pub(super) want: usize,
    pub(super) accept: Option<&'a Accept<'a>>,
}

/// Whether the Limit above takes a row (it passes the Filter between).
pub(super) type Accept<'a> = dyn Fn(&Row) -> Result<bool, SqlError> + 'a;

/// About how much memory `row` holds.
fn approx_bytes(row: &[Value]) -> usize {
    row.iter()
        .map(|v| {
            std::mem::size_of::<Value>()
                + match v {
                    Value::Text(t) => t.len(),
                    Value::Array(items) => approx_bytes(items),
                    Value::Record(items) => approx_bytes(items),
                    Value::Reg(_, name) => name.len(),
                    _ => 0,
                }
        })
        .sum::<usize>()
        + 16
}

impl super::query::Run<'_, '_> {
    /// A recursive WITH item's rows: the base's, then each round of the
    /// step over the rows the round before added, until a round adds none
    /// or a Limit above has `enough`. Without ALL a row already produced
    /// is not added again (which is what ends a walk round a cycle). Each
    /// round checks for a cancel: a recursion that never ends runs until
    /// statement_timeout or a cancel request, as in PostgreSQL, or until
    /// its rows pass temp_file_limit: PostgreSQL spills them to temporary
    /// files, snapscale holds them in memory every session shares, and
    /// counts them against the same limit (53400 past it).
    pub(super) fn recursive_union(
        &self,
        id: usize,
        all: bool,
        base: &crate::plan::physical::Node,
        step: &crate::plan::physical::Node,
        enough: Option<Enough<'_>>,
    ) -> Result<Vec<Row>, SqlError> {
        let mut seen: std::collections::BTreeSet<Key> = std::collections::BTreeSet::new();
        let mut fresh = |rows: Vec<Row>| -> Vec<Row> {
            if all {
                rows
            } else {
                rows.into_iter().filter(|r| seen.insert(Key(r.to_vec()))).collect()
            }
        };
        let limit = self.ex.limits.temp_file_limit;
        let (mut bytes, mut accepted) = (0u64, 0usize);
        // Whether the rows so far are all anyone will read.
        let mut done = |rows: &[Row]| -> Result<bool, SqlError> {
            bytes += rows.iter().map(|r| approx_bytes(r) as u64).sum::<u64>();
            if let Some(limit) = limit.filter(|limit| bytes > *limit) {
                return Err(SqlError::new(
                    SqlState::CONFIGURATION_LIMIT_EXCEEDED,
                    format!("temporary file size exceeds temp_file_limit ({}kB)", limit >> 10),
                ));
            }
            let Some(enough) = &enough else { return Ok(false) };
            for row in rows {
                if enough.accept.map_or(Ok(true), |accept| accept(row))? {
                    accepted += 1;
                }
            }
            Ok(accepted >= enough.want)
        };
        let mut out = fresh(self.rows(base)?.into_rows());
        let mut round = out.clone();
        let mut stop = done(&out)?;
        while !round.is_empty() && !stop {
            self.ex.xact.check_cancel()?;
            self.ex.work_tables.borrow_mut().insert(id, round);
            let produced = self.rows(step);
            self.ex.work_tables.borrow_mut().remove(&id);
            round = fresh(produced?.into_rows());
            stop = done(&round)?;
            out.extend(round.iter().cloned());
        }
        Ok(out)
    }
}

/// Most rows a set-returning function may produce in one call (a bound on
/// memory: its rows are materialised).
const MAX_SERIES: i64 = 100_000_000;

pub(super) fn function(
    func: Srf,
    args: &[Value],
    zone: snapscale_values::Zone,
) -> Result<Vec<Row>, SqlError> {
    let one = |v: Value| Row::from(vec![v]);
    Ok(match func {
        Srf::GenerateSeries => {
            let int = |v: &Value| match v {
                Value::Int(i) => Some(*i),
                _ => None,
            };
            let (Some(start), Some(stop)) = (int(&args[0]), int(&args[1])) else { return Ok(Vec::new()) };
            let step = match args.get(2) {
                None => 1,
                Some(v) => match int(v) {
                    None => return Ok(Vec::new()),
                    Some(0) => {
                        return Err(SqlError::new(
                            SqlState::INVALID_PARAMETER_VALUE,
                            "step size cannot equal zero",
                        ))
                    }
                    Some(s) => s,
                },
            };
            // In i128: the distance between two bigints overflows i64.
            let (start, stop, step) = (i128::from(start), i128::from(stop), i128::from(step));
            let count = if step > 0 {
                (stop - start).div_euclid(step) + 1
            } else {
                (start - stop).div_euclid(-step) + 1
            };
            if count > i128::from(MAX_SERIES) {
                return Err(SqlError::new(
                    SqlState::PROGRAM_LIMIT_EXCEEDED,
                    format!("generate_series would return {count} rows, more than {MAX_SERIES}"),
                ));
            }
            (0..count.max(0)).map(|k| one(Value::Int((start + k * step) as i64))).collect()
        }
        Srf::Records => match &args[0] {
            Value::Array(rows) => rows
                .iter()
                .filter_map(|r| match r {
                    Value::Record(fields) => Some(Row::from(fields.to_vec())),
                    _ => None,
                })
                .collect(),
            _ => Vec::new(),
        },
        // A value of a record type in FROM under a column definition
        // list: its one row, whose fields the list must count.
        Srf::RecordOf { width } => match &args[0] {
            Value::Record(fields) if fields.len() != width => {
                let n = fields.len();
                return Err(SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    "function return row and query-specified return row do not match",
                )
                .with_detail(format!(
                    "Returned row contains {n} attribute{}, but query expects {width}.",
                    if n == 1 { "" } else { "s" }
                )));
            }
            Value::Record(fields) => vec![Row::from(fields.to_vec())],
            _ => vec![Row::from(vec![Value::Null; width])],
        },
        Srf::NumericSeries => numeric_series(args)?.into_iter().map(|n| one(Value::Numeric(n))).collect(),
        Srf::TimestampSeries { tz } => match (&args[0], &args[1], &args[2]) {
            (
                Value::Timestamp(a) | Value::TimestampTz(a),
                Value::Timestamp(b) | Value::TimestampTz(b),
                Value::Interval(step),
            ) => {
                let value = if tz { Value::TimestampTz } else { Value::Timestamp };
                snapscale_values::timestamp_series(*a, *b, *step, tz.then_some(zone), MAX_SERIES as usize)?
                    .into_iter()
                    .map(|t| one(value(t)))
                    .collect()
            }
            _ => Vec::new(),
        },
        Srf::Elements(f) if f.strict && args.iter().any(|a| matches!(a, Value::Null)) => Vec::new(),
        Srf::Elements(f) => match (f.call)(args)? {
            Value::Array(items) => items.iter().cloned().map(one).collect(),
            _ => Vec::new(),
        },
        Srf::Unnest => match &args[0] {
            Value::Array(items) => items.iter().cloned().map(one).collect(),
            _ => Vec::new(),
        },
        Srf::JsonEach { .. } | Srf::JsonElements { .. } | Srf::JsonKeys { .. } => json_rows(func, &args[0])?,
        Srf::JsonPathQuery if args.iter().take(2).any(|a| matches!(a, Value::Null)) => Vec::new(),
        Srf::JsonPathQuery => {
            let (target, path, vars, silent) = crate::expr::scalar::path_args(args)?;
            snapscale_values::json::path::path_query(target, path, vars, silent)?
                .into_iter()
                .map(|j| Row::from(vec![Value::Jsonb(j)]))
                .collect()
        }
        Srf::ExpandArray => match &args[0] {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| Row::from(vec![v.clone(), Value::Int(i as i64 + 1)]))
                .collect(),
            _ => Vec::new(),
        },
    })
}

/// `generate_series` over numerics: start, start + step, … up to stop,
/// with PostgreSQL's errors for NaN, infinity and a zero step.
fn numeric_series(args: &[Value]) -> Result<Vec<snapscale_values::numeric::Numeric>, SqlError> {
    use snapscale_values::numeric::Numeric;
    let num = |v: &Value| match v {
        Value::Numeric(n) => Some(n.clone()),
        _ => None,
    };
    let (Some(start), Some(stop)) = (num(&args[0]), num(&args[1])) else { return Ok(Vec::new()) };
    let step = match args.get(2) {
        None => Numeric::from(1),
        Some(v) => match num(v) {
            Some(s) => s,
            None => return Ok(Vec::new()),
        },
    };
    let bad = |m: &str| SqlError::new(SqlState::INVALID_PARAMETER_VALUE, m.to_owned());
    for (n, what) in [(&start, "start value"), (&stop, "stop value"), (&step, "step size")] {
        if n.is_nan() {
            return Err(bad(&format!("{what} cannot be NaN")));
        }
        if n.is_infinite() {
            return Err(bad(&format!("{what} cannot be infinity")));
        }
    }
    let zero = Numeric::from(0);
    if step == zero {
        return Err(bad("step size cannot equal zero"));
    }
    let up = step > zero;
    let mut out = Vec::new();
    let mut at = start;
    while if up { at <= stop } else { at >= stop } {
        if out.len() as i64 >= MAX_SERIES {
            return Err(SqlError::new(
                SqlState::PROGRAM_LIMIT_EXCEEDED,
                format!("generate_series would return more than {MAX_SERIES} rows"),
            ));
        }
        let next = at.add(&step)?;
        out.push(at);
        at = next;
    }
    Ok(out)
}

/// The json set-returning functions' rows, with PostgreSQL's errors for
/// the wrong kind of value ("cannot call jsonb_each on a non-object").
fn json_rows(func: Srf, v: &Value) -> Result<Vec<Row>, SqlError> {
    use snapscale_values::json;
    let text = |t: Option<String>| t.map_or(Value::Null, Value::Text);
    Ok(match (func, v) {
        (_, Value::Null) => Vec::new(),
        (Srf::JsonEach { jsonb: true, text: false }, Value::Jsonb(j)) => {
            j.each()?.into_iter().map(|(k, v)| Row::from(vec![Value::Text(k), Value::Jsonb(v)])).collect()
        }
        (Srf::JsonEach { jsonb: true, text: true }, Value::Jsonb(j)) => {
            j.each_text()?.into_iter().map(|(k, v)| Row::from(vec![Value::Text(k), text(v)])).collect()
        }
        (Srf::JsonEach { text: false, .. }, Value::Json(t)) => json::json_each(t)?
            .into_iter()
            .map(|(k, v)| Row::from(vec![Value::Text(k), Value::Json(v.into())]))
            .collect(),
        (Srf::JsonEach { .. }, Value::Json(t)) => json::json_each_text(t)?
            .into_iter()
            .map(|(k, v)| Row::from(vec![Value::Text(k), text(v)]))
            .collect(),
        (Srf::JsonElements { text: false, .. }, Value::Jsonb(j)) => {
            j.array_elements()?.into_iter().map(|v| Row::from(vec![Value::Jsonb(v)])).collect()
        }
        (Srf::JsonElements { .. }, Value::Jsonb(j)) => {
            j.array_elements_text()?.into_iter().map(|v| Row::from(vec![text(v)])).collect()
        }
        (Srf::JsonElements { text: false, .. }, Value::Json(t)) => json::json_array_elements(t)?
            .into_iter()
            .map(|v| Row::from(vec![Value::Json(v.into())]))
            .collect(),
        (Srf::JsonElements { .. }, Value::Json(t)) => {
            json::json_array_elements_text(t)?.into_iter().map(|v| Row::from(vec![text(v)])).collect()
        }
        (Srf::JsonKeys { .. }, Value::Jsonb(j)) => {
            j.object_keys()?.into_iter().map(|k| Row::from(vec![Value::Text(k)])).collect()
        }
        (Srf::JsonKeys { .. }, Value::Json(t)) => {
            json::json_object_keys(t)?.into_iter().map(|k| Row::from(vec![Value::Text(k)])).collect()
        }
        _ => Vec::new(),
    })
}
