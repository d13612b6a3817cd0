//! Binding set operations (UNION, INTERSECT, EXCEPT [ALL]), VALUES lists
//! used as queries, and parenthesised queries followed by ORDER BY or
//! LIMIT: each becomes a FROM item that a plain query reads, so ORDER BY
//! and LIMIT apply to its rows as to any query's.

use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType};
use sqlparser::ast::{self, SetExpr, SetOperator, SetQuantifier};

use super::coerce::common_type;
use super::query::Tail;
use super::scope::{Col, Named, Scope};
use super::{not_supported, Binder, Coercion, Resolver, Typed};
use crate::expr::Expr;
use crate::plan::{Column, From, Select, SetOp, SetOpKind};

impl<R: Resolver> Binder<'_, R> {
    /// A query whose body is a set operation, a VALUES list or a
    /// parenthesised query, with `tail` applied to its rows.
    pub(super) fn compound(
        &mut self,
        body: &SetExpr,
        tail: Tail<'_>,
        base: &Scope<'_>,
    ) -> Result<Select, SqlError> {
        let (from, columns, untyped) = self.row_source(body, base)?;
        if !tail.locks.is_empty() {
            return Err(match body {
                SetExpr::Values(_) => {
                    SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, "FOR UPDATE cannot be applied to VALUES")
                }
                _ => SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "FOR UPDATE is not allowed with UNION/INTERSECT/EXCEPT",
                ),
            });
        }
        let cols: Vec<Col> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| Col { name: c.name.clone(), expr: Expr::Column(i), ty: c.ty })
            .collect();
        let named = Named { alias: String::new(), columns: cols.clone(), table: None, nullable: false };
        let scope = base.derived().with_items(vec![named], cols);
        let outputs: Vec<Expr> = (0..columns.len()).map(Expr::Column).collect();
        let saved = self.query.aggs.take();
        let order = self.order_by(tail.order_by, &outputs, &columns, &scope);
        self.query.aggs = saved;
        let order = order?;
        let (limit, offset) = self.limit(tail.limit)?;
        self.query.untyped = untyped;
        Ok(Select {
            from: Some(from),
            filter: None,
            grouping: None,
            windows: Vec::new(),
            srfs: Vec::new(),
            outputs,
            columns: columns.into(),
            order,
            limit,
            offset,
            lock: None,
            distinct_on: Vec::new(),
        })
    }

    /// A query body as a FROM item: its columns, and which of its outputs
    /// had no type of their own.
    fn row_source(
        &mut self,
        body: &SetExpr,
        base: &Scope<'_>,
    ) -> Result<(From, Vec<Column>, Vec<usize>), SqlError> {
        // A chain of set operations nests left-deep: its leftmost SELECT
        // (whose expressions check the stack) is reached only at the
        // bottom, so the chain itself is bounded here (54001).
        self.stack.check()?;
        match body {
            SetExpr::SetOperation { op, set_quantifier, left, right } => {
                let kind = match op {
                    SetOperator::Union => SetOpKind::Union,
                    SetOperator::Intersect => SetOpKind::Intersect,
                    SetOperator::Except => SetOpKind::Except,
                    other => return Err(not_supported(other.to_string())),
                };
                let all = match set_quantifier {
                    SetQuantifier::All => true,
                    SetQuantifier::None | SetQuantifier::Distinct => false,
                    other => return Err(not_supported(format!("{op} {other}"))),
                };
                let what = op.to_string().to_uppercase();
                let (mut l, lu) = self.operand(left, base)?;
                let (mut r, ru) = self.operand(right, base)?;
                if l.outputs.len() != r.outputs.len() {
                    return Err(SqlError::new(
                        SqlState::SYNTAX_ERROR,
                        format!("each {what} query must have the same number of columns"),
                    ));
                }
                let mut columns = Vec::with_capacity(l.outputs.len());
                let mut untyped = Vec::new();
                for i in 0..l.outputs.len() {
                    let lt = (!lu.contains(&i)).then(|| l.columns[i].ty);
                    let rt = (!ru.contains(&i)).then(|| r.columns[i].ty);
                    if lt.is_none() && rt.is_none() {
                        untyped.push(i);
                    }
                    let ty = common_type([lt, rt].into_iter(), &what)?;
                    for (side, t) in [(&mut l, lt), (&mut r, rt)] {
                        let e = std::mem::replace(
                            &mut side.outputs[i],
                            Expr::Const(snapscale_values::Value::Null),
                        );
                        side.outputs[i] = self.coerce(Typed { e, ty: t }, ty, Coercion::Implicit, &what)?;
                    }
                    columns.push(Column { name: l.columns[i].name.clone(), ty });
                }
                l.columns = columns.clone().into();
                r.columns = columns.clone().into();
                let setop = SetOp { op: kind, all, left: l, right: r, columns: columns.clone() };
                Ok((From::SetOp(Box::new(setop)), columns, untyped))
            }
            SetExpr::Values(v) => self.values(v, base),
            SetExpr::Query(q) => {
                let select = self.query_scoped(q, base)?;
                let untyped = std::mem::take(&mut self.query.untyped);
                let columns = select.columns.to_vec();
                Ok((From::Derived(Box::new(select)), columns, untyped))
            }
            SetExpr::Select(s) => {
                let select = self.select(s, Tail::NONE, base)?;
                let untyped = std::mem::take(&mut self.query.untyped);
                let columns = select.columns.to_vec();
                Ok((From::Derived(Box::new(select)), columns, untyped))
            }
            _ => Err(not_supported("this kind of query")),
        }
    }

    /// One side of a set operation, as a query, with its untyped outputs.
    pub(super) fn operand(
        &mut self,
        e: &SetExpr,
        base: &Scope<'_>,
    ) -> Result<(Select, Vec<usize>), SqlError> {
        match e {
            SetExpr::Select(s) => {
                let select = self.select(s, Tail::NONE, base)?;
                Ok((select, std::mem::take(&mut self.query.untyped)))
            }
            SetExpr::Query(q) => {
                let select = self.query_scoped(q, base)?;
                Ok((select, std::mem::take(&mut self.query.untyped)))
            }
            other => {
                let select = self.compound(other, Tail::NONE, base)?;
                Ok((select, std::mem::take(&mut self.query.untyped)))
            }
        }
    }

    /// `VALUES (…), (…)`: columns `column1`, `column2`, …, each of its
    /// rows' common type.
    fn values(
        &mut self,
        v: &ast::Values,
        base: &Scope<'_>,
    ) -> Result<(From, Vec<Column>, Vec<usize>), SqlError> {
        let scope = base.derived();
        let width = v.rows.first().map_or(0, |r| r.content.len());
        crate::limits::check_target_list(width)?;
        let mut typed: Vec<Vec<Typed>> = Vec::with_capacity(v.rows.len());
        for row in &v.rows {
            if row.content.len() != width {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    "VALUES lists must all be the same length",
                ));
            }
            let mut out = Vec::with_capacity(width);
            for e in &row.content {
                out.push(self.expr(e, &scope)?);
            }
            typed.push(out);
        }
        let mut columns = Vec::with_capacity(width);
        let mut untyped = Vec::new();
        for i in 0..width {
            let types: Vec<Option<SqlType>> = typed.iter().map(|r| r[i].ty).collect();
            if types.iter().all(Option::is_none) {
                untyped.push(i);
            }
            let ty = common_type(types.into_iter(), "VALUES")?;
            columns.push(Column { name: format!("column{}", i + 1), ty });
        }
        let mut rows = Vec::with_capacity(typed.len());
        for row in typed {
            let mut out = Vec::with_capacity(width);
            for (t, c) in row.into_iter().zip(&columns) {
                out.push(self.coerce(t, c.ty, Coercion::Implicit, "VALUES")?);
            }
            rows.push(out);
        }
        Ok((From::Values { rows, columns: columns.clone() }, columns, untyped))
    }
}
