//! Subquery expressions: EXISTS, scalar subqueries, and the quantified
//! comparisons `op ANY` / `op ALL` (which IN and NOT IN are), with SQL's
//! three-valued logic over the subquery's rows.

use std::collections::BTreeSet;

use snapscale_engine::index::Key;
use snapscale_values::array::ops;

use super::*;

pub(super) fn eval(link: &SubLink, cx: &Ctx<'_>) -> Result<Value, SqlError> {
    let Some(subqueries) = cx.subqueries else {
        return Err(SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, "a subquery is not allowed here"));
    };
    let mut args = Vec::with_capacity(link.args.len());
    for a in &link.args {
        args.push(a.eval(cx)?);
    }
    match &link.kind {
        SubKind::Exists => Ok(Value::Bool(subqueries.exists(link.plan, &args, cx.stack)?)),
        SubKind::Scalar => {
            let rows = subqueries.rows(link.plan, &args, cx.stack, false)?;
            match &rows[..] {
                [] => Ok(Value::Null),
                [v] => Ok(v.clone()),
                _ => Err(SqlError::new(
                    SqlState::CARDINALITY_VIOLATION,
                    "more than one row returned by a subquery used as an expression",
                )),
            }
        }
        SubKind::Array => Ok(Value::array(subqueries.rows(link.plan, &args, cx.stack, false)?.to_vec())),
        SubKind::ArrayOfArrays => {
            let rows = subqueries.rows(link.plan, &args, cx.stack, false)?;
            for v in rows.iter() {
                ops::check_stackable(rows.first(), v)?;
            }
            Ok(Value::Array(std::sync::Arc::new(ops::construct(&rows)?)))
        }
        SubKind::Call(call) => {
            if call.strict && args.iter().any(|a| matches!(a, Value::Null)) {
                return Ok(match call.result {
                    CallResult::Set => Value::array(Vec::new()),
                    CallResult::Value | CallResult::Void => Value::Null,
                });
            }
            let rows = subqueries.rows(link.plan, &args, cx.stack, call.volatile)?;
            Ok(match call.result {
                CallResult::Value => rows.first().cloned().unwrap_or(Value::Null),
                // A SQL function returning void answers NULL (PostgreSQL's).
                CallResult::Void => Value::Null,
                CallResult::Set => Value::array(rows.to_vec()),
            })
        }
        SubKind::Any { lhs, op, bpchar } => quantified(lhs, *op, *bpchar, true, link, &args, cx),
        SubKind::All { lhs, op, bpchar } => quantified(lhs, *op, *bpchar, false, link, &args, cx),
    }
}

/// `lhs op ANY (rows)` (`any`) or `lhs op ALL (rows)`: ANY is true if some
/// comparison is true, ALL false if some is false; otherwise NULL if some
/// comparison was NULL, else the empty case (false for ANY, true for ALL).
fn quantified(
    lhs: &Expr,
    op: Cmp,
    bpchar: bool,
    any: bool,
    link: &SubLink,
    args: &[Value],
    cx: &Ctx<'_>,
) -> Result<Value, SqlError> {
    let subqueries = cx.subqueries.expect("checked by eval");
    let rows = subqueries.rows(link.plan, args, cx.stack, false)?;
    if rows.is_empty() {
        return Ok(Value::Bool(!any));
    }
    let left = lhs.eval(cx)?;
    if matches!(left, Value::Null) {
        return Ok(Value::Null);
    }
    // IN (`= ANY`) and NOT IN (`<> ALL`) over more than a few rows: a
    // lookup in their set, built once per run of the subplan, rather than
    // a comparison with each row for each left value.
    let membership = (any && op == Cmp::Eq) || (!any && op == Cmp::Ne);
    if membership && !bpchar && rows.len() >= SET_FROM {
        let set = subqueries.row_set(link.plan, args, cx.stack)?;
        if let Some((found, has_null)) = set.and_then(|s| Some((s.contains(&left)?, s.has_null))) {
            return Ok(if found {
                Value::Bool(any)
            } else if has_null {
                Value::Null
            } else {
                Value::Bool(!any)
            });
        }
    }
    let mut unknown = false;
    for right in rows.iter() {
        if matches!(right, Value::Null) {
            unknown = true;
            continue;
        }
        if op.holds(compare(&left, right, bpchar)?) == any {
            return Ok(Value::Bool(any));
        }
    }
    Ok(if unknown { Value::Null } else { Value::Bool(!any) })
}

/// How many rows make IN and NOT IN look their left value up in a set.
const SET_FROM: usize = 16;

/// A subplan's values (its first column) as a set, for IN and NOT IN:
/// those that are not NULL, all of one kind, ordered as an index orders
/// them (under which equal values are those `=` finds equal), and whether
/// one was NULL (an IN that finds nothing is then NULL, not false).
#[derive(Debug)]
pub struct RowSet {
    values: BTreeSet<Key>,
    kind: Option<std::mem::Discriminant<Value>>,
    pub has_null: bool,
}

impl RowSet {
    /// The set of `rows`, if their values are plain scalars of one kind
    /// (records and arrays compare with NULLs inside them, and values of
    /// two kinds, an integer and a float, compare by conversion: a set's
    /// order cannot answer for those as `=` does).
    pub fn of(rows: &[Value]) -> Option<RowSet> {
        let mut set = RowSet { values: BTreeSet::new(), kind: None, has_null: false };
        for v in rows {
            if matches!(v, Value::Null) {
                set.has_null = true;
                continue;
            }
            let kind = std::mem::discriminant(v);
            if !plain(v) || set.kind.is_some_and(|k| k != kind) {
                return None;
            }
            set.kind = Some(kind);
            set.values.insert(Key(vec![v.clone()]));
        }
        Some(set)
    }

    /// Whether `v` (not NULL) is in the set; `None` if the set cannot
    /// answer for it (a value of another kind).
    pub fn contains(&self, v: &Value) -> Option<bool> {
        match self.kind {
            None => Some(false),
            Some(k) if k == std::mem::discriminant(v) && plain(v) => {
                Some(self.values.contains(&Key(vec![v.clone()])))
            }
            Some(_) => None,
        }
    }
}

/// A value whose equality a set's order answers.
fn plain(v: &Value) -> bool {
    !matches!(v, Value::Record(_) | Value::Array(_) | Value::Json(_) | Value::Jsonb(_))
}
