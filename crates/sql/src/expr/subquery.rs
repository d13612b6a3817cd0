//! Subquery expressions: EXISTS, scalar subqueries, and the quantified
//! comparisons `op ANY` / `op ALL` (which IN and NOT IN are), with SQL's
//! three-valued logic over the subquery's rows.

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
        SubKind::Exists => Ok(Value::Bool(!subqueries.rows(link.plan, &args, cx.stack, false)?.is_empty())),
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
