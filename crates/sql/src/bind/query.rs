//! Binding SELECT: the select list, WHERE, GROUP BY and HAVING (rewritten over groups), ORDER BY,
//! LIMIT/OFFSET, and FOR UPDATE/SHARE.

use snapscale_engine::{LockMode, RowLockMode};
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType, Value};
use sqlparser::ast::{self, GroupByExpr, LimitClause, OrderByKind, OrderBySort, SelectItem, SetExpr};

use super::scope::{Named, Scope};
use super::{ident, not_supported, Binder, Coercion, Resolver, Typed};
use crate::expr::{Expr, Rewrite, SubKind, SubLink};
use crate::plan::{Column, Grouping, Locking, Rel, RowLock, Scan, Select, SortKey};
use crate::stack::StackDepth;

impl<R: Resolver> Binder<'_, R> {
    /// Binds a top-level query.
    pub(super) fn query(&mut self, q: &ast::Query) -> Result<Select, SqlError> {
        self.query_scoped(q, &Scope::empty())
    }

    /// Binds a query whose enclosing queries' names `base` shows (a
    /// subquery's scope is a child of its enclosing query's).
    pub(super) fn query_scoped(&mut self, q: &ast::Query, base: &Scope<'_>) -> Result<Select, SqlError> {
        // A WITH's items are in scope for this query only.
        let outer_ctes = self.ctes.len();
        let bound = self.query_with_ctes(q, base);
        self.ctes.truncate(outer_ctes);
        bound
    }

    fn query_with_ctes(&mut self, q: &ast::Query, base: &Scope<'_>) -> Result<Select, SqlError> {
        super::clauses::query(q)?;
        // Only the first query bound, the statement's own, is the top level.
        let top = std::mem::take(&mut self.statement.top_with);
        if let Some(with) = &q.with {
            if matches!(q.body.as_ref(), SetExpr::Insert(_) | SetExpr::Update(_) | SetExpr::Delete(_)) {
                return Err(not_supported("WITH before INSERT, UPDATE or DELETE"));
            }
            self.define_ctes(with, top)?;
        }
        let fetch = fetch_as_limit(q)?;
        let limit = fetch.as_ref().or(q.limit_clause.as_ref());
        let tail = Tail { order_by: q.order_by.as_ref(), limit, locks: &q.locks };
        match q.body.as_ref() {
            SetExpr::Select(s) => self.select(s, tail, base),
            SetExpr::Query(inner) if tail.is_empty() => self.query_scoped(inner, base),
            body => self.compound(body, tail, base),
        }
    }

    /// Binds one SELECT, with the ORDER BY, LIMIT and locking that follow it.
    pub(super) fn select(
        &mut self,
        select: &ast::Select,
        tail: Tail<'_>,
        base: &Scope<'_>,
    ) -> Result<Select, SqlError> {
        super::clauses::select(select)?;
        let (distinct, distinct_on) = match &select.distinct {
            None | Some(ast::Distinct::All) => (false, None),
            Some(ast::Distinct::Distinct) => (true, None),
            Some(ast::Distinct::On(exprs)) => (false, Some(exprs)),
        };
        if select.into.is_some() {
            return Err(not_supported("SELECT INTO"));
        }
        let lock = !tail.locks.is_empty();
        // Aggregates are allowed in the select list, HAVING and ORDER BY,
        // not in FROM (a subquery there has its own).
        let outer_aggs = self.query.aggs.take();
        let outer_windows = self.query.windows.take();
        let outer_srfs = self.query.srfs.take();
        let from = self.bind_from(&select.from, base, LockMode::AccessShare)?;
        self.query.aggs = Some(Vec::new());
        // Window calls are allowed in the select list and ORDER BY,
        // set-returning calls in the select list.
        self.query.windows = Some(Vec::new());
        self.query.srfs = Some(Vec::new());
        let outer_named = std::mem::replace(&mut self.query.named_windows, select.named_window.clone());
        let (from, scope) = match from {
            Some(item) => (Some(item.from), base.derived().with_items(item.named, item.visible)),
            None => (None, base.derived()),
        };
        let locking = if lock { Some(self.locking(tail.locks, &scope)?) } else { None };
        let once = from.is_none() && self.sublink_depth == 0 && !self.in_routine;
        let outer_once = std::mem::replace(&mut self.query.once, once);
        let projected = self.projection(&select.projection, &scope);
        self.query.once = outer_once;
        let (mut outputs, columns) = projected?;
        let mut srfs = self.query.srfs.take().unwrap_or_default();
        // Subqueries bound below have select lists of their own.
        let untyped = std::mem::take(&mut self.query.untyped);
        let group_exprs = match &select.group_by {
            GroupByExpr::Expressions(exprs, mods) if mods.is_empty() => exprs,
            _ => return Err(not_supported("GROUP BY ALL")),
        };
        let mut keys = Vec::new();
        for g in group_exprs {
            if matches!(g, ast::Expr::Rollup(_) | ast::Expr::Cube(_) | ast::Expr::GroupingSets(_)) {
                return Err(not_supported("GROUP BY ROLLUP, CUBE or GROUPING SETS"));
            }
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
                let saved = (self.query.aggs.take(), self.query.windows.take());
                let k = self.expr(g, &scope);
                (self.query.aggs, self.query.windows) = saved;
                keys.push(no_aggregates(k, "GROUP BY")?.e);
            }
        }
        let having = match &select.having {
            Some(h) => {
                let saved = self.query.windows.take();
                let t = self.expr(h, &scope);
                self.query.windows = saved;
                let t = t?;
                Some(self.coerce(t, SqlType::Bool, Coercion::Implicit, "argument of HAVING")?)
            }
            None => None,
        };
        let mut order = self.order_by(tail.order_by, &outputs, &columns, &scope)?;
        let distinct_on = match distinct_on {
            Some(exprs) => self.distinct_on(exprs, &outputs, &columns, &scope, &mut order)?,
            None => Vec::new(),
        };
        let aggs = std::mem::replace(&mut self.query.aggs, outer_aggs).unwrap_or_default();
        let mut windows = std::mem::replace(&mut self.query.windows, outer_windows).unwrap_or_default();
        self.query.named_windows = outer_named;
        if !srfs.is_empty() && lock {
            return Err(not_supported("FOR UPDATE with set-returning functions in the select list"));
        }
        if !windows.is_empty() && (distinct || lock) {
            return Err(not_supported(if lock {
                "FOR UPDATE with window functions"
            } else {
                "SELECT DISTINCT with window functions"
            }));
        }
        let grouped = !(keys.is_empty() && aggs.is_empty() && having.is_none());
        if !distinct_on.is_empty() {
            if grouped || !windows.is_empty() {
                return Err(not_supported(
                    "SELECT DISTINCT ON with GROUP BY, aggregates or window functions",
                ));
            }
            if lock {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "FOR UPDATE is not allowed with DISTINCT clause",
                ));
            }
        }
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
            let grouper = Grouper {
                keys: &keys,
                scope: &scope,
                stack: self.stack,
                in_subquery: false,
                origin: self.origin.as_deref(),
            };
            for e in outputs.iter_mut() {
                *e = grouper.rewrite(std::mem::replace(e, Expr::Const(Value::Null)))?;
            }
            for k in &mut order {
                k.expr = grouper.rewrite(std::mem::replace(&mut k.expr, Expr::Const(Value::Null)))?;
            }
            let having = having.map(|h| grouper.rewrite(h)).transpose()?;
            // Window calls run over the groups.
            for w in &mut windows {
                if let Some(a) = w.arg.take() {
                    w.arg = Some(grouper.rewrite(a)?);
                }
                for m in &mut w.more {
                    *m = grouper.rewrite(std::mem::replace(m, Expr::Const(Value::Null)))?;
                }
                for p in &mut w.partition {
                    *p = grouper.rewrite(std::mem::replace(p, Expr::Const(Value::Null)))?;
                }
                for k in &mut w.order {
                    k.expr = grouper.rewrite(std::mem::replace(&mut k.expr, Expr::Const(Value::Null)))?;
                }
            }
            for s in &mut srfs {
                for a in &mut s.args {
                    *a = grouper.rewrite(std::mem::replace(a, Expr::Const(Value::Null)))?;
                }
            }
            Some(Grouping { keys, aggs, having })
        };
        if lock && grouping.is_some() {
            // PostgreSQL names the first of them the query has.
            let what = if !group_exprs.is_empty() {
                "GROUP BY clause"
            } else if select.having.is_some() {
                "HAVING clause"
            } else {
                "aggregate functions"
            };
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("FOR UPDATE is not allowed with {what}"),
            ));
        }
        let (limit, offset) = self.limit(tail.limit)?;
        let filter = match &select.selection {
            Some(w) => Some(self.filter(w, &scope, "WHERE")?),
            None => None,
        };
        self.query.untyped = untyped;
        self.query.srfs = outer_srfs;
        Ok(Select {
            from,
            filter,
            grouping,
            windows,
            srfs,
            outputs,
            columns: columns.into(),
            order,
            limit,
            offset,
            lock: locking,
            distinct_on,
        })
    }

    /// DISTINCT ON (…): its expressions (a number is an output column, as
    /// in ORDER BY). ORDER BY must begin with them, in any order; what it
    /// lacks of them is sorted on after it, as PostgreSQL does.
    fn distinct_on(
        &mut self,
        exprs: &[ast::Expr],
        outputs: &[Expr],
        columns: &[Column],
        scope: &Scope<'_>,
        order: &mut Vec<SortKey>,
    ) -> Result<Vec<Expr>, SqlError> {
        let items: Vec<ast::OrderByExpr> = exprs
            .iter()
            .map(|e| ast::OrderByExpr {
                expr: e.clone(),
                options: ast::OrderByOptions { sort: None, nulls_first: None },
                with_fill: None,
            })
            .collect();
        let as_order = ast::OrderBy { kind: OrderByKind::Expressions(items), interpolate: None };
        let keys: Vec<Expr> =
            self.order_by(Some(&as_order), outputs, columns, scope)?.into_iter().map(|k| k.expr).collect();
        let leading = order.len().min(keys.len());
        if order[..leading].iter().any(|k| !keys.contains(&k.expr)) {
            return Err(SqlError::new(
                SqlState::INVALID_COLUMN_REFERENCE,
                "SELECT DISTINCT ON expressions must match initial ORDER BY expressions",
            ));
        }
        for k in &keys {
            if !order.iter().any(|o| &o.expr == k) {
                order.push(SortKey { expr: k.clone(), desc: false, nulls_first: false });
            }
        }
        Ok(keys)
    }

    /// FOR [KEY] SHARE / FOR [NO KEY] UPDATE [OF …] [NOWAIT | SKIP LOCKED]:
    /// the stored tables whose rows are locked, each in its clause's mode
    /// and with its clause's wait policy. A table named by several clauses
    /// gets the strongest mode, and NOWAIT wins over SKIP LOCKED, which
    /// wins over waiting, as in PostgreSQL.
    fn locking(&mut self, clauses: &[ast::LockClause], scope: &Scope<'_>) -> Result<Locking, SqlError> {
        let strengths: Vec<RowLockMode> = match self.statement.lock_strengths.take() {
            None => clauses
                .iter()
                .map(|c| match c.lock_type {
                    ast::LockType::Share => RowLockMode::Share,
                    ast::LockType::Update => RowLockMode::Update,
                })
                .collect(),
            // The pre-parser's list is this query's when it has as many
            // clauses; an emptied list tells a second query it was taken.
            Some(list) if list.len() == clauses.len() => {
                self.statement.lock_strengths = Some(Vec::new());
                list
            }
            Some(_) => {
                return Err(not_supported(
                    "FOR KEY SHARE or FOR NO KEY UPDATE with locking clauses in more than one query",
                ))
            }
        };
        let mut tables: Vec<(usize, (RowLockMode, RowLock))> = Vec::new();
        if scope.named.is_empty() {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "FOR UPDATE must specify unqualified relation names",
            ));
        }
        for (clause, &mode) in clauses.iter().zip(&strengths) {
            let strength = mode.name();
            let how = match clause.nonblock {
                Some(ast::NonBlock::Nowait) => RowLock::NoWait,
                Some(ast::NonBlock::SkipLocked) => RowLock::SkipLocked,
                None => RowLock::Wait,
            };
            let targets: Vec<&Named> = match &clause.of {
                None => scope.named.iter().collect(),
                Some(of) => {
                    let name = of.0.last().and_then(|p| p.as_ident()).map(ident).unwrap_or_default();
                    let found = scope.named.iter().find(|n| n.alias == name).ok_or_else(|| {
                        SqlError::new(
                            SqlState::UNDEFINED_TABLE,
                            format!("relation \"{name}\" in FOR {strength} clause not found in FROM clause"),
                        )
                    })?;
                    vec![found]
                }
            };
            for n in targets {
                let Some((rel, offset)) = &n.table else {
                    return Err(not_supported(format!("FOR {strength} of a subquery or a catalog relation")));
                };
                if n.nullable {
                    return Err(SqlError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        format!("FOR {strength} cannot be applied to the nullable side of an outer join"),
                    ));
                }
                match tables.iter_mut().find(|(o, _)| o == offset) {
                    // Named twice: the stronger mode, and NOWAIT over
                    // SKIP LOCKED over waiting.
                    Some((_, (held, held_how))) => {
                        *held = (*held).max(mode);
                        *held_how = stricter(*held_how, how);
                    }
                    None => {
                        tables.push((*offset, (mode, how)));
                        self.dep_reached(rel, LockMode::RowShare)?;
                    }
                }
            }
        }
        tables.sort_unstable_by_key(|(o, _)| *o);
        Ok(Locking {
            tables: tables.iter().map(|(o, _)| *o).collect(),
            modes: tables.iter().map(|(_, m)| *m).collect(),
        })
    }

    /// A WHERE (or similar) condition: boolean, without aggregates.
    pub(super) fn filter(&mut self, w: &ast::Expr, scope: &Scope<'_>, what: &str) -> Result<Expr, SqlError> {
        let saved = (self.query.aggs.take(), self.query.windows.take());
        let t = self.expr(w, scope);
        (self.query.aggs, self.query.windows) = saved;
        let t = no_aggregates(t, what)?;
        self.coerce(t, SqlType::Bool, Coercion::Implicit, &format!("argument of {what}"))
    }

    /// ORDER BY: a position or an output column's name refers to that
    /// output; anything else is an expression over the query's row.
    pub(super) fn order_by(
        &mut self,
        ob: Option<&ast::OrderBy>,
        outputs: &[Expr],
        columns: &[Column],
        scope: &Scope<'_>,
    ) -> Result<Vec<SortKey>, SqlError> {
        let mut order = Vec::new();
        let Some(ob) = ob else { return Ok(order) };
        let OrderByKind::Expressions(items) = &ob.kind else { return Err(not_supported("ORDER BY ALL")) };
        for item in items {
            let expr = if let Some(n) = position_literal(&item.expr) {
                outputs.get(n.wrapping_sub(1)).cloned().ok_or_else(|| {
                    SqlError::new(
                        SqlState::INVALID_COLUMN_REFERENCE,
                        format!("ORDER BY position {n} is not in select list"),
                    )
                })?
            } else if let Some(i) = output_named(&item.expr, columns) {
                outputs[i].clone()
            } else {
                self.expr(&item.expr, scope)?.e
            };
            let desc = matches!(item.options.sort, Some(OrderBySort::Desc));
            if matches!(item.options.sort, Some(OrderBySort::Using(_))) {
                return Err(not_supported("ORDER BY USING"));
            }
            order.push(SortKey { expr, desc, nulls_first: item.options.nulls_first.unwrap_or(desc) });
        }
        Ok(order)
    }

    /// LIMIT and OFFSET.
    pub(super) fn limit(
        &mut self,
        clause: Option<&LimitClause>,
    ) -> Result<(Option<Expr>, Option<Expr>), SqlError> {
        Ok(match clause {
            None => (None, None),
            Some(LimitClause::LimitOffset { limit, offset, limit_by }) if limit_by.is_empty() => {
                let limit = limit.as_ref().map(|l| self.count_expr(l, "LIMIT")).transpose()?.flatten();
                let offset =
                    offset.as_ref().map(|o| self.count_expr(&o.value, "OFFSET")).transpose()?.flatten();
                (limit, offset)
            }
            Some(_) => return Err(not_supported("this LIMIT syntax")),
        })
    }

    /// LIMIT / OFFSET: a bigint expression; `LIMIT ALL` / `NULL` is none.
    pub(super) fn count_expr(&mut self, e: &ast::Expr, what: &str) -> Result<Option<Expr>, SqlError> {
        let scope = Scope::empty();
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
        // Each item is at least one entry: a list too long is refused
        // before any of it is bound, and again after `*` has expanded.
        crate::limits::check_target_list(items.len())?;
        let mut outputs = Vec::new();
        let mut columns = Vec::new();
        self.query.untyped.clear();
        for item in items {
            match item {
                SelectItem::Wildcard(o) => {
                    let cols = scope.wildcard(None)?;
                    self.note_wildcard(&o.wildcard_token, scope, &cols, None);
                    for c in cols {
                        outputs.push(c.expr);
                        columns.push(Column { name: c.name, ty: c.ty });
                    }
                }
                SelectItem::QualifiedWildcard(kind, o) => {
                    let ast::SelectItemQualifiedWildcardKind::ObjectName(name) = kind else {
                        return Err(not_supported("this kind of wildcard"));
                    };
                    let q = name.0.last().and_then(|p| p.as_ident()).map(ident).unwrap_or_default();
                    let cols = scope.wildcard(Some(&q))?;
                    self.note_wildcard(&o.wildcard_token, scope, &cols, Some(&q));
                    for c in cols {
                        outputs.push(c.expr);
                        columns.push(Column { name: c.name, ty: c.ty });
                    }
                }
                SelectItem::UnnamedExpr(e) => {
                    let t = self.expr(e, scope)?;
                    let ty = t.ty.unwrap_or(SqlType::Text);
                    self.note_untyped(outputs.len(), &t);
                    let e2 = self.settle(t)?;
                    outputs.push(e2);
                    columns.push(Column { name: column_name(e), ty });
                }
                SelectItem::ExprWithAlias { expr, alias } => {
                    let t = self.expr(expr, scope)?;
                    let ty = t.ty.unwrap_or(SqlType::Text);
                    self.note_untyped(outputs.len(), &t);
                    outputs.push(self.settle(t)?);
                    columns.push(Column { name: ident(alias), ty });
                }
                SelectItem::ExprWithAliases { .. } => return Err(not_supported("multiple aliases")),
            }
        }
        crate::limits::check_target_list(outputs.len())?;
        Ok((outputs, columns))
    }

    /// Remembers that output `i` had no type of its own (a quoted literal
    /// or NULL): INSERT … SELECT reads it as the target column's type.
    fn note_untyped(&mut self, i: usize, t: &Typed) {
        if t.ty.is_none() && matches!(t.e, Expr::Const(_)) {
            self.query.untyped.push(i);
        }
    }

    /// An output of unknown type becomes text (PostgreSQL resolves
    /// "unknown" outputs to text).
    pub(super) fn settle(&mut self, t: Typed) -> Result<Expr, SqlError> {
        match t.ty {
            Some(_) => Ok(t.e),
            None => self.coerce(t, SqlType::Text, Coercion::Implicit, "output"),
        }
    }

    /// The rows of `rel` passing `selection` (UPDATE, DELETE).
    pub(super) fn scan(
        &mut self,
        rel: Rel,
        selection: Option<&ast::Expr>,
        scope: &Scope<'_>,
    ) -> Result<Scan, SqlError> {
        let filter = selection.map(|w| self.filter(w, scope, "WHERE")).transpose()?;
        Ok(Scan { rel, filter })
    }
}

/// Rewrites expressions bound over input rows into ones over groups:
/// subtrees equal to a group key become `GroupKey`, and any column left
/// outside an aggregate is 42803.
pub(super) struct Grouper<'a> {
    keys: &'a [Expr],
    scope: &'a Scope<'a>,
    stack: StackDepth,
    /// Rewriting the values a subquery reads from the group (its outer
    /// values), which PostgreSQL words its error for.
    in_subquery: bool,
    origin: Option<&'a crate::statement::Origin>,
}

impl Grouper<'_> {
    fn rewrite(&self, e: Expr) -> Result<Expr, SqlError> {
        e.rewrite(&self.stack, &mut |e| {
            if let Some(i) = self.keys.iter().position(|k| *k == e) {
                return Ok(Rewrite::Replace(Expr::GroupKey(i)));
            }
            match e {
                Expr::Column(_) => {
                    let name = self.scope.describe(&e).unwrap_or_else(|| "?".into());
                    let at = self.scope.named_at(&e).zip(self.origin);
                    let at = at.and_then(|(at, origin)| origin.position(at.line, at.column));
                    let err = SqlError::new(
                        SqlState::GROUPING_ERROR,
                        if self.in_subquery {
                            format!("subquery uses ungrouped column \"{name}\" from outer query")
                        } else {
                            format!(
                                "column \"{name}\" must appear in the GROUP BY clause or be used in an aggregate function"
                            )
                        },
                    );
                    Err(match at {
                        Some(p) => err.at_position(p),
                        None => err,
                    })
                }
                // A quantified comparison's left side is this query's; the
                // arguments are what the subquery reads.
                Expr::SubLink(link) if !self.in_subquery => {
                    let SubLink { kind, plan, args } = *link;
                    let kind = match kind {
                        SubKind::Any { lhs, op, bpchar } => SubKind::Any { lhs: self.rewrite(lhs)?, op, bpchar },
                        SubKind::All { lhs, op, bpchar } => SubKind::All { lhs: self.rewrite(lhs)?, op, bpchar },
                        other => other,
                    };
                    let inner = Grouper { in_subquery: true, ..*self };
                    let args = args.into_iter().map(|a| inner.rewrite(a)).collect::<Result<_, _>>()?;
                    Ok(Rewrite::Replace(Expr::SubLink(Box::new(SubLink { kind, plan, args }))))
                }
                other => Ok(Rewrite::Descend(other)),
            }
        })
    }
}

/// `FETCH FIRST [n] ROW[S] ONLY` is `LIMIT n` (1 without a count), with
/// the query's OFFSET. WITH TIES and PERCENT are refused by
/// `clauses::query`.
fn fetch_as_limit(q: &ast::Query) -> Result<Option<LimitClause>, SqlError> {
    let Some(fetch) = &q.fetch else { return Ok(None) };
    let offset = match &q.limit_clause {
        None => None,
        Some(LimitClause::LimitOffset { limit: None, offset, limit_by }) if limit_by.is_empty() => {
            offset.clone()
        }
        // sqlparser reads LIMIT before FETCH; PostgreSQL's grammar takes
        // no FETCH after a LIMIT.
        Some(_) => return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"FETCH\"")),
    };
    let one = || ast::Expr::value(ast::Value::Number("1".into(), false));
    Ok(Some(LimitClause::LimitOffset {
        limit: Some(fetch.quantity.clone().unwrap_or_else(one)),
        offset,
        limit_by: Vec::new(),
    }))
}

/// What follows a query's body: ORDER BY, LIMIT/OFFSET, FOR UPDATE.
#[derive(Clone, Copy)]
pub(super) struct Tail<'q> {
    pub order_by: Option<&'q ast::OrderBy>,
    pub limit: Option<&'q LimitClause>,
    pub locks: &'q [ast::LockClause],
}

impl Tail<'_> {
    pub const NONE: Tail<'static> = Tail { order_by: None, limit: None, locks: &[] };

    fn is_empty(&self) -> bool {
        self.order_by.is_none() && self.limit.is_none() && self.locks.is_empty()
    }
}

/// A GROUPING_ERROR from an aggregate where none is allowed, reworded for
/// the clause (`what`) as PostgreSQL words it.
pub(super) fn no_aggregates(t: Result<Typed, SqlError>, what: &str) -> Result<Typed, SqlError> {
    match t {
        Err(e)
            if e.code == SqlState::FEATURE_NOT_SUPPORTED
                && e.message.starts_with("set-returning functions") =>
        {
            Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("set-returning functions are not allowed in {what}"),
            ))
        }
        Err(e) if e.code == SqlState::WINDOWING_ERROR => Err(SqlError::new(
            SqlState::WINDOWING_ERROR,
            format!("window functions are not allowed in {what}"),
        )),
        // Placed where the aggregate is, as PostgreSQL places it.
        Err(mut e) if e.code == SqlState::GROUPING_ERROR && e.message.starts_with("aggregate") => {
            e.message = format!("aggregate functions are not allowed in {what}");
            Err(e)
        }
        other => other,
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
        // An array cast is named for its element type (`'{1}'::int[]` is
        // int4), as PostgreSQL names it.
        super::ddl::data_type(dt).map_or_else(
            // A user-defined type is named as written.
            |_| {
                let dt = match dt {
                    ast::DataType::Array(
                        ast::ArrayElemTypeDef::SquareBracket(inner, _)
                        | ast::ArrayElemTypeDef::AngleBracket(inner),
                    ) => inner,
                    dt => dt,
                };
                match dt {
                    ast::DataType::Custom(name, _) => name
                        .0
                        .last()
                        .and_then(|p| p.as_ident())
                        .map_or_else(|| "?column?".to_owned(), super::ident),
                    _ => "?column?".to_owned(),
                }
            },
            |t| t.elem().filter(|_| matches!(t, SqlType::Array(_))).unwrap_or(t).internal_name().to_owned(),
        )
    };
    if let ast::Expr::TypedString(ts) = e {
        return type_name(cast_to.unwrap_or(&ts.data_type));
    }
    let named = match e {
        ast::Expr::Subquery(q) => match q.body.as_ref() {
            ast::SetExpr::Select(s) => match s.projection.as_slice() {
                [SelectItem::UnnamedExpr(inner)] => column_name(inner),
                [SelectItem::ExprWithAlias { alias, .. }] => ident(alias),
                _ => "?column?".into(),
            },
            _ => "?column?".into(),
        },
        ast::Expr::Exists { .. } => "exists".into(),
        ast::Expr::Array(_) => "array".into(),
        // The last field named in the chain (`t.a[1]` is "a", `(r).f[2]`
        // "f"), else the root's name.
        ast::Expr::CompoundFieldAccess { root, access_chain } => {
            match access_chain.iter().rev().find_map(|a| match a {
                ast::AccessExpr::Dot(ast::Expr::Identifier(i)) => Some(i),
                _ => None,
            }) {
                Some(i) => ident(i),
                None => return column_name(root),
            }
        }
        ast::Expr::Function(f) if matches!(f.args, ast::FunctionArguments::Subquery(_)) => "array".into(),
        ast::Expr::Identifier(i) => ident(i),
        ast::Expr::CompoundIdentifier(parts) => parts.last().map(ident).unwrap_or_default(),
        ast::Expr::Function(f) => f.name.0.last().and_then(|p| p.as_ident()).map(ident).unwrap_or_default(),
        ast::Expr::Case { .. } => "case".into(),
        ast::Expr::AtTimeZone { .. } => "timezone".into(),
        ast::Expr::Extract { .. } => "extract".into(),
        ast::Expr::Substring { shorthand: true, .. } => "substr".into(),
        ast::Expr::Substring { .. } => "substring".into(),
        ast::Expr::Position { .. } => "position".into(),
        ast::Expr::Overlay { .. } => "overlay".into(),
        ast::Expr::Trim { trim_where: Some(ast::TrimWhereField::Leading), .. } => "ltrim".into(),
        ast::Expr::Trim { trim_where: Some(ast::TrimWhereField::Trailing), .. } => "rtrim".into(),
        ast::Expr::Trim { .. } => "btrim".into(),
        ast::Expr::Interval(_) => "interval".into(),
        ast::Expr::Ceil { .. } => "ceil".into(),
        ast::Expr::Floor { .. } => "floor".into(),
        _ => "?column?".into(),
    };
    match cast_to {
        Some(dt) if named == "?column?" => type_name(dt),
        _ => named,
    }
}

/// The stricter of two wait policies (PostgreSQL's: NOWAIT, then SKIP
/// LOCKED, then waiting).
fn stricter(a: RowLock, b: RowLock) -> RowLock {
    match (a, b) {
        (RowLock::NoWait, _) | (_, RowLock::NoWait) => RowLock::NoWait,
        (RowLock::SkipLocked, _) | (_, RowLock::SkipLocked) => RowLock::SkipLocked,
        _ => RowLock::Wait,
    }
}
