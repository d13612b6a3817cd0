//! Binding SELECT: the select list, WHERE, GROUP BY and HAVING (rewritten over groups), ORDER BY,
//! LIMIT/OFFSET, and FOR UPDATE/SHARE.

use snapscale_lock::LockMode;
use sqlparser::ast::{self, GroupByExpr, LimitClause, OrderByKind, OrderBySort, SelectItem, SetExpr};

use super::*;
use crate::error::SqlError;
use crate::expr::{Expr, Step};
use crate::plan::{Column, Grouping, Rel, RowLock, Scan, Select, SortKey};
use crate::sqlstate::SqlState;
use crate::stack::StackDepth;
use crate::types::{SqlType, Value};

impl<R: Resolver> Binder<'_, R> {
    pub(super) fn query(&mut self, q: &ast::Query) -> Result<Select, SqlError> {
        if q.with.is_some() {
            return Err(not_supported("WITH"));
        }
        if q.fetch.is_some() {
            return Err(not_supported("FETCH FIRST"));
        }
        let select = match q.body.as_ref() {
            SetExpr::Select(s) => s,
            SetExpr::Query(inner)
                if q.order_by.is_none() && q.limit_clause.is_none() && q.locks.is_empty() =>
            {
                return self.query(inner);
            }
            SetExpr::Values(_) => return Err(not_supported("VALUES as a query")),
            SetExpr::SetOperation { op, .. } => return Err(not_supported(op.to_string().to_uppercase())),
            _ => return Err(not_supported("this kind of query")),
        };
        let distinct = match &select.distinct {
            None | Some(ast::Distinct::All) => false,
            Some(ast::Distinct::Distinct) => true,
            Some(_) => return Err(not_supported("SELECT DISTINCT ON")),
        };
        if select.into.is_some() {
            return Err(not_supported("SELECT INTO"));
        }
        let lock = !q.locks.is_empty();
        let mode = if lock { LockMode::RowShare } else { LockMode::AccessShare };
        let from = match select.from.as_slice() {
            [] => None,
            [t] if t.joins.is_empty() => Some(self.table_factor(&t.relation, mode)?),
            _ => return Err(not_supported("joins")),
        };
        if lock && from.is_none() {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "FOR UPDATE must specify unqualified relation names",
            ));
        }
        let row_lock = match &from {
            Some((_, alias)) if lock => Some(row_lock(&q.locks, alias)?),
            _ => None,
        };
        let scope = Scope { rel: from.as_ref().map(|(r, a)| (a.as_str(), r)) };
        // Aggregates are allowed in the select list, HAVING and ORDER BY.
        let outer_aggs = self.aggs.replace(Vec::new());
        let (mut outputs, columns) = self.projection(&select.projection, &scope)?;
        let group_exprs = match &select.group_by {
            GroupByExpr::Expressions(exprs, mods) if mods.is_empty() => exprs,
            _ => return Err(not_supported("GROUP BY ALL")),
        };
        let mut keys = Vec::new();
        for g in group_exprs {
            // GROUP BY 1 refers to the first output column.
            if let Some(n) = position_literal(g) {
                let e = outputs.get(n.wrapping_sub(1)).cloned().ok_or_else(|| {
                    SqlError::new(
                        SqlState::INVALID_COLUMN_REFERENCE,
                        format!("GROUP BY position {n} is not in select list"),
                    )
                })?;
                keys.push(e);
            } else {
                let saved = self.aggs.take();
                let k = self.expr(g, &scope)?;
                self.aggs = saved;
                keys.push(k.e);
            }
        }
        let having = match &select.having {
            Some(h) => {
                let t = self.expr(h, &scope)?;
                Some(self.coerce(t, SqlType::Bool, Coercion::Implicit, "argument of HAVING")?)
            }
            None => None,
        };
        let mut order = Vec::new();
        if let Some(ob) = &q.order_by {
            let OrderByKind::Expressions(items) = &ob.kind else { return Err(not_supported("ORDER BY ALL")) };
            for item in items {
                let expr = if let Some(n) = position_literal(&item.expr) {
                    outputs.get(n.wrapping_sub(1)).cloned().ok_or_else(|| {
                        SqlError::new(
                            SqlState::INVALID_COLUMN_REFERENCE,
                            format!("ORDER BY position {n} is not in select list"),
                        )
                    })?
                } else if let Some(i) = output_named(&item.expr, &columns) {
                    outputs[i].clone()
                } else {
                    self.expr(&item.expr, &scope)?.e
                };
                let desc = matches!(item.options.sort, Some(OrderBySort::Desc));
                if matches!(item.options.sort, Some(OrderBySort::Using(_))) {
                    return Err(not_supported("ORDER BY USING"));
                }
                order.push(SortKey { expr, desc, nulls_first: item.options.nulls_first.unwrap_or(desc) });
            }
        }
        let aggs = std::mem::replace(&mut self.aggs, outer_aggs).unwrap_or_default();
        let grouped = !(keys.is_empty() && aggs.is_empty() && having.is_none());
        if distinct {
            if grouped {
                return Err(not_supported("SELECT DISTINCT with GROUP BY or aggregates"));
            }
            if lock {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "FOR UPDATE is not allowed with DISTINCT clause",
                ));
            }
            // DISTINCT groups by the whole select list: the sort keys must
            // be among its columns.
            if order.iter().any(|k| !outputs.contains(&k.expr)) {
                return Err(SqlError::new(
                    SqlState::INVALID_COLUMN_REFERENCE,
                    "for SELECT DISTINCT, ORDER BY expressions must appear in select list",
                ));
            }
            keys = outputs.clone();
        }
        let grouping = if !grouped && !distinct {
            None
        } else {
            let grouper = Grouper { keys: &keys, scope: &scope, stack: self.stack };
            for e in outputs.iter_mut() {
                *e = grouper.rewrite(std::mem::replace(e, Expr::Const(Value::Null)))?;
            }
            for k in &mut order {
                k.expr = grouper.rewrite(std::mem::replace(&mut k.expr, Expr::Const(Value::Null)))?;
            }
            let having = having.map(|h| grouper.rewrite(h)).transpose()?;
            Some(Grouping { keys, aggs, having })
        };
        if lock && grouping.is_some() {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "FOR UPDATE is not allowed with GROUP BY clause",
            ));
        }
        let (limit, offset) = match &q.limit_clause {
            None => (None, None),
            Some(LimitClause::LimitOffset { limit, offset, limit_by }) if limit_by.is_empty() => {
                let limit = limit.as_ref().map(|l| self.count_expr(l, "LIMIT")).transpose()?.flatten();
                let offset =
                    offset.as_ref().map(|o| self.count_expr(&o.value, "OFFSET")).transpose()?.flatten();
                (limit, offset)
            }
            Some(_) => return Err(not_supported("this LIMIT syntax")),
        };
        let scan = match &from {
            Some((rel, _)) => Some(self.scan(rel.clone(), select.selection.as_ref(), &scope)?),
            None if select.selection.is_some() => return Err(not_supported("WHERE without FROM")),
            None => None,
        };
        Ok(Select {
            from: scan,
            grouping,
            outputs,
            columns: columns.into(),
            order,
            limit,
            offset,
            lock: row_lock,
        })
    }

    /// LIMIT / OFFSET: a bigint expression; `LIMIT ALL` / `NULL` is none.
    pub(super) fn count_expr(&mut self, e: &ast::Expr, what: &str) -> Result<Option<Expr>, SqlError> {
        let scope = Scope { rel: None };
        let t = self.expr(e, &scope)?;
        if matches!(t.e, Expr::Const(Value::Null)) {
            return Ok(None);
        }
        Ok(Some(self.coerce(t, SqlType::Int8, Coercion::Implicit, &format!("argument of {what}"))?))
    }

    pub(super) fn projection(
        &mut self,
        items: &[SelectItem],
        scope: &Scope<'_>,
    ) -> Result<(Vec<Expr>, Vec<Column>), SqlError> {
        let mut outputs = Vec::new();
        let mut columns = Vec::new();
        for item in items {
            match item {
                SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => {
                    let Some((_, rel)) = scope.rel else {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            "SELECT * with no tables specified is not valid",
                        ));
                    };
                    for (i, c) in rel.entry.columns.iter().enumerate() {
                        outputs.push(Expr::Column(i));
                        columns.push(Column { name: c.name.clone(), ty: c.ty });
                    }
                }
                SelectItem::UnnamedExpr(e) => {
                    let t = self.expr(e, scope)?;
                    let ty = t.ty.unwrap_or(SqlType::Text);
                    let e2 = self.settle(t)?;
                    outputs.push(e2);
                    columns.push(Column { name: column_name(e), ty });
                }
                SelectItem::ExprWithAlias { expr, alias } => {
                    let t = self.expr(expr, scope)?;
                    let ty = t.ty.unwrap_or(SqlType::Text);
                    outputs.push(self.settle(t)?);
                    columns.push(Column { name: ident(alias), ty });
                }
                SelectItem::ExprWithAliases { .. } => return Err(not_supported("multiple aliases")),
            }
        }
        Ok((outputs, columns))
    }

    /// An output of unknown type becomes text (PostgreSQL resolves
    /// "unknown" outputs to text).
    pub(super) fn settle(&mut self, t: Typed) -> Result<Expr, SqlError> {
        match t.ty {
            Some(_) => Ok(t.e),
            None => self.coerce(t, SqlType::Text, Coercion::Implicit, "output"),
        }
    }

    /// The rows of `rel` passing `selection`, and how to find them.
    pub(super) fn scan(
        &mut self,
        rel: Rel,
        selection: Option<&ast::Expr>,
        scope: &Scope<'_>,
    ) -> Result<Scan, SqlError> {
        let saved = self.aggs.take();
        let filter = match selection {
            Some(w) => {
                let t = self.expr(w, scope);
                let t = match t {
                    Err(e) if e.code == SqlState::GROUPING_ERROR => {
                        return Err(SqlError::new(
                            SqlState::GROUPING_ERROR,
                            "aggregate functions are not allowed in WHERE",
                        ))
                    }
                    other => other?,
                };
                Some(self.coerce(t, SqlType::Bool, Coercion::Implicit, "argument of WHERE")?)
            }
            None => None,
        };
        self.aggs = saved;
        Ok(Scan { rel, filter })
    }
}

/// The row-lock behaviour of a single-table query's locking clauses. Each
/// `OF` must name the table; when several clauses apply, NOWAIT wins over
/// SKIP LOCKED, which wins over waiting, as in PostgreSQL.
pub(super) fn row_lock(clauses: &[ast::LockClause], table: &str) -> Result<RowLock, SqlError> {
    let mut how = RowLock::Wait;
    for clause in clauses {
        if let Some(of) = &clause.of {
            let name = relation_name(of)?;
            if name != table {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_TABLE,
                    format!(
                        "relation \"{name}\" in FOR {} clause not found in FROM clause",
                        clause.lock_type
                    ),
                ));
            }
        }
        how = match (how, clause.nonblock) {
            (_, Some(ast::NonBlock::Nowait)) | (RowLock::NoWait, _) => RowLock::NoWait,
            (_, Some(ast::NonBlock::SkipLocked)) | (RowLock::SkipLocked, _) => RowLock::SkipLocked,
            _ => RowLock::Wait,
        };
    }
    Ok(how)
}

/// Rewrites expressions bound over input rows into ones over groups:
/// subtrees equal to a group key become `GroupKey`, and any column left
/// outside an aggregate is 42803.
pub(super) struct Grouper<'a> {
    keys: &'a [Expr],
    scope: &'a Scope<'a>,
    stack: StackDepth,
}

impl Grouper<'_> {
    fn rewrite(&self, e: Expr) -> Result<Expr, SqlError> {
        self.stack.check()?;
        if let Some(i) = self.keys.iter().position(|k| *k == e) {
            return Ok(Expr::GroupKey(i));
        }
        let g = |x: Box<Expr>| self.rewrite(*x).map(Box::new);
        let all = |xs: Vec<Expr>| xs.into_iter().map(|x| self.rewrite(x)).collect::<Result<Vec<_>, _>>();
        Ok(match e {
            Expr::Column(i) => {
                let (alias, rel) = self.scope.rel.expect("a column implies a relation");
                return Err(SqlError::new(
                    SqlState::GROUPING_ERROR,
                    format!(
                        "column \"{alias}.{}\" must appear in the GROUP BY clause or be used in an aggregate function",
                        rel.entry.columns[i].name
                    ),
                ));
            }
            Expr::Const(_) | Expr::Param(_) | Expr::Agg(_) | Expr::GroupKey(_) => e,
            Expr::Chain(first, steps) => Expr::Chain(
                g(first)?,
                steps
                    .into_iter()
                    .map(|s| {
                        Ok(match s {
                            Step::Arith(op, x, ty) => Step::Arith(op, self.rewrite(x)?, ty),
                            Step::Concat(x) => Step::Concat(self.rewrite(x)?),
                            cast @ Step::Cast(..) => cast,
                        })
                    })
                    .collect::<Result<_, SqlError>>()?,
            ),
            Expr::Neg(a, ty) => Expr::Neg(g(a)?, ty),
            Expr::Compare(a, op, b, bp) => Expr::Compare(g(a)?, op, g(b)?, bp),
            Expr::And(args) => Expr::And(all(args)?),
            Expr::Or(args) => Expr::Or(all(args)?),
            Expr::Not(a) => Expr::Not(g(a)?),
            Expr::IsNull(a, n) => Expr::IsNull(g(a)?, n),
            Expr::InList(a, l, n) => Expr::InList(g(a)?, all(l)?, n),
            Expr::Like(a, b, n) => Expr::Like(g(a)?, g(b)?, n),
            Expr::Cast(a, ty, ex) => Expr::Cast(g(a)?, ty, ex),
            Expr::Func(f, args) => Expr::Func(f, all(args)?),
        })
    }
}

/// `1` in ORDER BY 1 / GROUP BY 1.
pub(super) fn position_literal(e: &ast::Expr) -> Option<usize> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::Number(n, _) => n.parse().ok(),
            _ => None,
        },
        _ => None,
    }
}

/// ORDER BY name, where name is an output column's name.
pub(super) fn output_named(e: &ast::Expr, columns: &[Column]) -> Option<usize> {
    match e {
        ast::Expr::Identifier(i) => columns.iter().position(|c| c.name == ident(i)),
        _ => None,
    }
}

/// The name PostgreSQL gives an unaliased output column.
pub(super) fn column_name(e: &ast::Expr) -> String {
    // A cast or parentheses take the name of what is inside them; a cast
    // of something nameless (a constant) is named after its type.
    let mut e = e;
    let mut cast_to = None;
    loop {
        match e {
            ast::Expr::Nested(inner) => e = inner,
            ast::Expr::Cast { expr, data_type, .. } => {
                // The outermost cast names it.
                cast_to = cast_to.or(Some(data_type));
                e = expr;
            }
            _ => break,
        }
    }
    let type_name = |dt: &ast::DataType| {
        super::ddl::data_type(dt).map_or_else(|_| "?column?".to_owned(), |t| t.internal_name().to_owned())
    };
    if let ast::Expr::TypedString(ts) = e {
        return type_name(&ts.data_type);
    }
    let named = match e {
        ast::Expr::Identifier(i) => ident(i),
        ast::Expr::CompoundIdentifier(parts) => parts.last().map(ident).unwrap_or_default(),
        ast::Expr::Function(f) => f.name.0.last().and_then(|p| p.as_ident()).map(ident).unwrap_or_default(),
        ast::Expr::Case { .. } => "case".into(),
        ast::Expr::Substring { shorthand: true, .. } => "substr".into(),
        ast::Expr::Substring { .. } => "substring".into(),
        _ => "?column?".into(),
    };
    match cast_to {
        Some(dt) if named == "?column?" => type_name(dt),
        _ => named,
    }
}
