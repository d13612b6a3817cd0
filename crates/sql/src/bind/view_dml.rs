//! INSERT, UPDATE and DELETE through a view: PostgreSQL's automatically
//! updatable views.
//!
//! A view is updatable when its query reads one relation (a table, or a
//! view that is updatable in turn) with no DISTINCT, GROUP BY, HAVING,
//! set operation, WITH, LIMIT or OFFSET, and returns no aggregate, window
//! or set-returning call. The statement is rewritten into one on that
//! relation, as PostgreSQL's rewriter does, and bound again:
//!
//! * a view column the statement reads becomes the view's expression for
//!   it (over the relation, under the view's name for it);
//! * a view column the statement writes must be a plain column of the
//!   relation (0A000 otherwise), and is written there;
//! * UPDATE and DELETE see only the rows the view shows: its WHERE is
//!   ANDed to theirs;
//! * WITH CHECK OPTION: the new row must satisfy the view's WHERE (44000),
//!   and with CASCADED (or a LOCAL view under one) the WHEREs of the views
//!   under it too. The conditions travel down the chain of views with the
//!   statement (`StatementState::view_checks`) and are bound over the
//!   table at the bottom.

use std::ops::ControlFlow;

use snapscale_engine::catalog::CheckOption;
use snapscale_engine::LockMode;
use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::ast::{self, Expr as AstExpr, Ident, ObjectName, SelectItem};

use super::scope::Scope;
use super::view::quoted;
use super::{bare_name, ident, not_supported, relation_name, Binder, Resolver};
use crate::parse::Parsed;
use crate::plan::{Plan, Rel, TableCheck};

/// What the statement does, for the messages.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    Insert,
    Update,
    Delete,
}

impl Op {
    fn refusal(self, view: &str, detail: &str) -> SqlError {
        let (message, hint) = match self {
            Op::Insert => (
                format!("cannot insert into view \"{view}\""),
                "To enable inserting into the view, provide an INSTEAD OF INSERT trigger or an unconditional ON INSERT DO INSTEAD rule.",
            ),
            Op::Update => (
                format!("cannot update view \"{view}\""),
                "To enable updating the view, provide an INSTEAD OF UPDATE trigger or an unconditional ON UPDATE DO INSTEAD rule.",
            ),
            Op::Delete => (
                format!("cannot delete from view \"{view}\""),
                "To enable deleting from the view, provide an INSTEAD OF DELETE trigger or an unconditional ON DELETE DO INSTEAD rule.",
            ),
        };
        SqlError::new(SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE, message).with_detail(detail).with_hint(hint)
    }
}

/// An updatable view's query, taken apart.
struct Updatable {
    /// The relation it reads, as its query names it, and the name its
    /// columns are qualified with there (its alias, or its name).
    base: ObjectName,
    base_alias: Option<ast::TableAlias>,
    /// Per view column: its name, its expression over the relation, and
    /// the relation's column when it is a plain one.
    columns: Vec<(String, AstExpr, Option<String>)>,
    filter: Option<AstExpr>,
}

/// The conditions WITH CHECK OPTION puts on the new row, on their way
/// down a chain of views (see the module documentation).
#[derive(Default)]
pub(super) struct ViewChecks {
    /// Each view's name and its WHERE, over the relation below the last
    /// view rewritten.
    pub(super) conditions: Vec<(String, AstExpr)>,
    /// A CASCADED option above: every view below checks its WHERE.
    pub(super) cascading: bool,
    /// The name the conditions qualify the relation's columns with.
    pub(super) qualifier: Option<String>,
}

impl<R: Resolver> Binder<'_, R> {
    /// `rel`'s query taken apart, or PostgreSQL's refusal for `op`.
    fn updatable(&mut self, rel: &Rel, op: Op) -> Result<Updatable, SqlError> {
        let view = rel.entry.view.as_ref().expect("a view");
        let names: Vec<&str> = rel.entry.columns.iter().map(|c| c.name.as_str()).collect();
        self.updatable_query(&rel.entry.name, rel.entry.oid, &view.query, &names, op)
    }

    /// WITH CHECK OPTION on view `name` (its query `query`, its columns
    /// `names`; `oid` 0 while it is being made): PostgreSQL's refusal if
    /// the view is not automatically updatable or has no column that is.
    pub(super) fn check_option_allowed(
        &mut self,
        name: &str,
        oid: u32,
        query: &str,
        names: &[&str],
    ) -> Result<(), SqlError> {
        let refused = |reason: &str| {
            SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "WITH CHECK OPTION is supported only on automatically updatable views",
            )
            .with_hint(reason)
        };
        match self.updatable_query(name, oid, query, names, Op::Update) {
            Ok(u) if u.columns.iter().all(|(_, _, plain)| plain.is_none()) => {
                Err(refused("Views that have no updatable columns are not automatically updatable."))
            }
            Ok(_) => Ok(()),
            Err(e) if e.code == SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE => {
                Err(refused(e.detail.as_deref().unwrap_or_default()))
            }
            Err(e) => Err(e),
        }
    }

    /// The query of view `name` taken apart, or PostgreSQL's refusal.
    fn updatable_query(
        &mut self,
        name: &str,
        oid: u32,
        query: &str,
        names: &[&str],
        op: Op,
    ) -> Result<Updatable, SqlError> {
        let name = &name.to_owned();
        if self.statement.expanding.contains(&oid) || self.statement.expanding.len() > 100 {
            return Err(SqlError::new(
                SqlState::INVALID_OBJECT_DEFINITION,
                format!("infinite recursion detected in rules for relation \"{name}\""),
            ));
        }
        let mut parsed = crate::parse::parse(query, self.stack.limit())?;
        let Some(Parsed::Sql(ast)) = parsed.pop() else {
            return Err(SqlError::new(
                SqlState::INTERNAL_ERROR,
                format!("the query of view \"{name}\" does not parse"),
            ));
        };
        let ast::Statement::Query(q) = &*ast else {
            return Err(SqlError::new(
                SqlState::INTERNAL_ERROR,
                format!("the query of view \"{name}\" is not a query"),
            ));
        };
        let refuse = |what: &str| {
            Err(op.refusal(name, &format!("Views containing {what} are not automatically updatable.")))
        };
        let ast::SetExpr::Select(s) = q.body.as_ref() else {
            return refuse("UNION, INTERSECT, or EXCEPT");
        };
        if s.distinct.is_some() {
            return refuse("DISTINCT");
        }
        if !matches!(&s.group_by, ast::GroupByExpr::Expressions(g, _) if g.is_empty()) {
            return refuse("GROUP BY");
        }
        if s.having.is_some() {
            return refuse("HAVING");
        }
        if q.with.is_some() {
            return refuse("WITH");
        }
        if q.limit_clause.is_some() || q.fetch.is_some() {
            return refuse("LIMIT or OFFSET");
        }
        // Aggregates, window and set-returning calls: as the binder finds
        // them.
        let bound = {
            let ctes = std::mem::take(&mut self.ctes);
            let origin = self.origin.take();
            self.statement.expanding.push(oid);
            let bound = self.query(q);
            self.statement.expanding.pop();
            self.ctes = ctes;
            self.origin = origin;
            bound?
        };
        if bound.grouping.is_some() {
            return Err(
                op.refusal(name, "Views that return aggregate functions are not automatically updatable.")
            );
        }
        if !bound.windows.is_empty() {
            return Err(
                op.refusal(name, "Views that return window functions are not automatically updatable.")
            );
        }
        if !bound.srfs.is_empty() {
            return Err(op.refusal(
                name,
                "Views that return set-returning functions are not automatically updatable.",
            ));
        }
        let single = match s.from.as_slice() {
            [t] if t.joins.is_empty() => match &t.relation {
                ast::TableFactor::Table { name, alias, args: None, .. } => {
                    Some((name.clone(), alias.clone()))
                }
                _ => None,
            },
            _ => None,
        };
        let Some((base, base_alias)) = single else {
            return Err(op.refusal(
                name,
                "Views that do not select from a single table or view are not automatically updatable.",
            ));
        };
        let qualifier = match &base_alias {
            Some(a) => ident(&a.name),
            None => bare_name(&base)?,
        };
        let columns = names
            .iter()
            .zip(&s.projection)
            .map(|(c, item)| {
                let e = match item {
                    SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => e.clone(),
                    _ => AstExpr::Value(ast::Value::Null.into()),
                };
                let plain = match &e {
                    AstExpr::Identifier(i) => Some(ident(i)),
                    AstExpr::CompoundIdentifier(p) if p.len() == 2 && ident(&p[0]) == qualifier => {
                        Some(ident(&p[1]))
                    }
                    _ => None,
                };
                (c.to_string(), e, plain)
            })
            .collect();
        Ok(Updatable { base, base_alias, columns, filter: s.selection.clone() })
    }

    /// The relation's column a view column written by the statement is.
    fn written(u: &Updatable, view: &str, column: &str, op: Op) -> Result<String, SqlError> {
        match u.columns.iter().find(|(n, ..)| n == column) {
            Some((_, _, Some(base))) => Ok(base.clone()),
            Some(_) => Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!(
                    "cannot {} column \"{column}\" of view \"{view}\"",
                    if op == Op::Insert { "insert into" } else { "update" }
                ),
            )
            .with_detail("View columns that are not columns of their base relation are not updatable.")),
            None => Err(SqlError::new(
                SqlState::UNDEFINED_COLUMN,
                format!("column \"{column}\" of relation \"{view}\" does not exist"),
            )),
        }
    }

    /// Passes the statement's CHECK OPTION conditions down through `rel`
    /// (now over the relation under it), and adds its own.
    fn push_view_checks(&mut self, rel: &Rel, u: &Updatable, readers: &[String]) {
        let mut checks = std::mem::take(&mut self.statement.view_checks);
        for (_, c) in &mut checks.conditions {
            substitute(c, u, readers);
        }
        let option = rel.entry.view.as_ref().and_then(|v| v.check_option);
        if let Some(f) = &u.filter {
            if option.is_some() || checks.cascading {
                checks.conditions.push((rel.entry.name.clone(), f.clone()));
            }
        }
        checks.cascading |= option == Some(CheckOption::Cascaded);
        checks.qualifier = Some(match &u.base_alias {
            Some(a) => ident(&a.name),
            None => bare_name(&u.base).unwrap_or_default(),
        });
        self.statement.view_checks = checks;
    }

    /// The CHECK OPTION conditions of the views the statement went
    /// through, bound over `rel` (the table at the bottom).
    pub(super) fn take_view_checks(&mut self, rel: &Rel) -> Result<Vec<TableCheck>, SqlError> {
        let checks = std::mem::take(&mut self.statement.view_checks);
        let Some(qualifier) = checks.qualifier else { return Ok(Vec::new()) };
        let scope = Scope::table(&qualifier, rel);
        let mut out = Vec::new();
        for (view, c) in checks.conditions.into_iter().rev() {
            let typed = self.expr(&c, &scope)?;
            let expr =
                self.coerce(typed, snapscale_values::SqlType::Bool, super::Coercion::Implicit, "WHERE")?;
            out.push(TableCheck { name: view, expr, view: true, generated: None });
        }
        Ok(out)
    }

    pub(super) fn insert_into_view(&mut self, rel: &Rel, i: &ast::Insert) -> Result<Plan, SqlError> {
        let view = rel.entry.name.clone();
        let u = self.updatable(rel, Op::Insert)?;
        if i.on.is_some() {
            return Err(not_supported("INSERT … ON CONFLICT into a view"));
        }
        let mut names: Vec<String> = if i.source.is_none() {
            Vec::new()
        } else if i.columns.is_empty() {
            u.columns.iter().map(|(n, ..)| n.clone()).collect()
        } else {
            i.columns
                .iter()
                .map(|c| c.0.last().and_then(|p| p.as_ident()).map(ident).unwrap_or_default())
                .collect()
        };
        if i.columns.is_empty() {
            if let Some(ast::SetExpr::Values(values)) = i.source.as_ref().map(|s| s.body.as_ref()) {
                let widest = values.rows.iter().map(|r| r.content.len()).max().unwrap_or(0);
                names.truncate(widest.max(1).min(names.len()));
            }
        }
        let mut columns = Vec::new();
        for n in &names {
            let base = Self::written(&u, &view, n, Op::Insert)?;
            if columns.iter().any(|c: &ObjectName| bare_name(c).is_ok_and(|c| c == base)) {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    format!("multiple assignments to same column \"{base}\""),
                ));
            }
            columns.push(ObjectName::from(vec![quoted(&base)]));
        }
        let readers = readers(&view, i.table_alias.as_ref().map(|a| ident(&a.alias)));
        let mut new = i.clone();
        self.apply_view_defaults(rel, &u, &names, &mut columns, &mut new)?;
        new.table = ast::TableObject::TableName(u.base.clone());
        new.table_alias = u
            .base_alias
            .as_ref()
            .map(|a| ast::TableAliasWithoutColumns { explicit: true, alias: a.name.clone() });
        new.columns = columns;
        new.returning = i.returning.as_ref().map(|r| returning(r, &u, &readers));
        self.push_view_checks(rel, &u, &readers);
        self.statement.expanding.push(rel.entry.oid);
        let plan = self.insert(&new);
        self.statement.expanding.pop();
        plan
    }

    /// The view's own column defaults (ALTER VIEW … SET DEFAULT), as
    /// PostgreSQL's rewriter applies them to an INSERT through it: for a
    /// `DEFAULT` in VALUES at such a column, and for such a column the
    /// statement leaves out (each VALUES row gets the expression; a query
    /// source is read through a subquery that adds them).
    fn apply_view_defaults(
        &mut self,
        rel: &Rel,
        u: &Updatable,
        names: &[String],
        columns: &mut Vec<ObjectName>,
        new: &mut ast::Insert,
    ) -> Result<(), SqlError> {
        let mut defaults = Vec::new();
        for c in rel.entry.columns.iter() {
            let Some(text) = &c.default else { continue };
            let Some((_, _, Some(base))) = u.columns.iter().find(|(n, ..)| *n == c.name) else { continue };
            defaults.push((
                c.name.clone(),
                base.clone(),
                crate::parse::parse_expr(text, self.stack.limit())?,
            ));
        }
        if defaults.is_empty() {
            return Ok(());
        }
        let missing: Vec<&(String, String, AstExpr)> =
            defaults.iter().filter(|(n, ..)| !names.contains(n)).collect();
        for (_, base, _) in &missing {
            columns.push(ObjectName::from(vec![quoted(base)]));
        }
        match new.source.as_mut() {
            None => {
                // DEFAULT VALUES: a row of the defaults (the others' are
                // the table's).
                let row: Vec<String> = missing.iter().map(|(_, _, e)| e.to_string()).collect();
                let text = format!("VALUES ({})", row.join(", "));
                new.source = Some(crate::parse::parse_query(&text, self.stack.limit())?);
            }
            Some(source) => match source.body.as_mut() {
                ast::SetExpr::Values(values) => {
                    for row in &mut values.rows {
                        for (k, cell) in row.content.iter_mut().enumerate() {
                            let named = names.get(k);
                            if let Some((_, _, e)) = defaults.iter().find(|(n, ..)| Some(n) == named) {
                                if super::dml::is_default_keyword(cell) {
                                    *cell = e.clone();
                                }
                            }
                        }
                        row.content.extend(missing.iter().map(|(_, _, e)| e.clone()));
                    }
                }
                _ if missing.is_empty() => {}
                _ => {
                    let added: Vec<String> = missing.iter().map(|(_, _, e)| e.to_string()).collect();
                    let text = format!("SELECT *, {} FROM ({source}) AS view_defaults", added.join(", "));
                    *source = crate::parse::parse_query(&text, self.stack.limit())?;
                }
            },
        }
        Ok(())
    }

    pub(super) fn update_view(
        &mut self,
        rel: &Rel,
        up: &ast::Update,
        alias: Option<String>,
    ) -> Result<Plan, SqlError> {
        let view = rel.entry.name.clone();
        let u = self.updatable(rel, Op::Update)?;
        let readers = readers(&view, alias);
        let mut new = up.clone();
        new.table = ast::TableWithJoins { relation: base_factor(&u), joins: Vec::new() };
        let mut seen: Vec<String> = Vec::new();
        for a in &mut new.assignments {
            let ast::AssignmentTarget::ColumnName(target) = &a.target else {
                return Err(not_supported("assigning to a tuple of view columns"));
            };
            let column = target.0.last().and_then(|p| p.as_ident()).map(ident).unwrap_or_default();
            let base = Self::written(&u, &view, &column, Op::Update)?;
            if seen.contains(&base) {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    format!("multiple assignments to same column \"{base}\""),
                ));
            }
            seen.push(base.clone());
            a.target = ast::AssignmentTarget::ColumnName(ObjectName::from(vec![quoted(&base)]));
            substitute(&mut a.value, &u, &readers);
        }
        new.selection = filtered(up.selection.as_ref(), &u, &readers);
        new.returning = up.returning.as_ref().map(|r| returning(r, &u, &readers));
        self.push_view_checks(rel, &u, &readers);
        self.statement.expanding.push(rel.entry.oid);
        let plan = self.update(&new);
        self.statement.expanding.pop();
        plan
    }

    pub(super) fn delete_from_view(
        &mut self,
        rel: &Rel,
        d: &ast::Delete,
        alias: Option<String>,
    ) -> Result<Plan, SqlError> {
        let view = rel.entry.name.clone();
        let u = self.updatable(rel, Op::Delete)?;
        let readers = readers(&view, alias);
        let mut new = d.clone();
        let table = ast::TableWithJoins { relation: base_factor(&u), joins: Vec::new() };
        new.from = match &d.from {
            ast::FromTable::WithFromKeyword(_) => ast::FromTable::WithFromKeyword(vec![table]),
            ast::FromTable::WithoutKeyword(_) => ast::FromTable::WithoutKeyword(vec![table]),
        };
        new.selection = filtered(d.selection.as_ref(), &u, &readers);
        new.returning = d.returning.as_ref().map(|r| returning(r, &u, &readers));
        self.statement.expanding.push(rel.entry.oid);
        let plan = self.delete(&new);
        self.statement.expanding.pop();
        plan
    }

    /// The target of an UPDATE or DELETE when it is a view: the view and
    /// the statement's name for it.
    pub(super) fn target_view(
        &mut self,
        t: &ast::TableFactor,
    ) -> Result<Option<(Rel, Option<String>)>, SqlError> {
        let ast::TableFactor::Table { name, alias, .. } = t else { return Ok(None) };
        let n = relation_name(name)?;
        match self.resolver.resolve(&n)? {
            Some(rel) if rel.entry.is_view() => {
                let rel = self.relation_or_view(name, LockMode::RowExclusive)?;
                Ok(Some((rel, alias.as_ref().map(|a| ident(&a.name)))))
            }
            _ => Ok(None),
        }
    }
}

/// The names a statement may qualify the view's columns with: the view's
/// own, or the alias it gave it (which hides the name).
fn readers(view: &str, alias: Option<String>) -> Vec<String> {
    vec![alias.unwrap_or_else(|| view.to_owned())]
}

/// The relation under the view, as its query named it.
fn base_factor(u: &Updatable) -> ast::TableFactor {
    ast::TableFactor::Table {
        name: u.base.clone(),
        alias: u.base_alias.clone(),
        args: None,
        with_hints: Vec::new(),
        version: None,
        with_ordinality: false,
        partitions: Vec::new(),
        json_path: None,
        sample: None,
        index_hints: Vec::new(),
    }
}

/// The statement's WHERE over the relation, ANDed with the view's.
fn filtered(selection: Option<&AstExpr>, u: &Updatable, readers: &[String]) -> Option<AstExpr> {
    let user = selection.map(|s| {
        let mut s = s.clone();
        substitute(&mut s, u, readers);
        s
    });
    match (u.filter.clone(), user) {
        (Some(f), Some(s)) => Some(AstExpr::BinaryOp {
            left: Box::new(AstExpr::Nested(Box::new(f))),
            op: ast::BinaryOperator::And,
            right: Box::new(AstExpr::Nested(Box::new(s))),
        }),
        (f, s) => f.or(s),
    }
}

/// RETURNING over the view's columns, over the relation: `*` is the
/// view's columns by their names.
fn returning(items: &[SelectItem], u: &Updatable, readers: &[String]) -> Vec<SelectItem> {
    let all =
        || u.columns.iter().map(|(n, e, _)| SelectItem::ExprWithAlias { expr: e.clone(), alias: quoted(n) });
    let mut out = Vec::new();
    for item in items {
        match item {
            SelectItem::Wildcard(_) => out.extend(all()),
            SelectItem::QualifiedWildcard(ast::SelectItemQualifiedWildcardKind::ObjectName(n), _)
                if bare_name(n).is_ok_and(|n| readers.contains(&n)) =>
            {
                out.extend(all())
            }
            SelectItem::UnnamedExpr(e) => {
                // The output keeps the name the view's column gives it.
                let name = match e {
                    AstExpr::Identifier(i) => Some(i.clone()),
                    AstExpr::CompoundIdentifier(p) => p.last().cloned(),
                    _ => None,
                };
                let mut e = e.clone();
                substitute(&mut e, u, readers);
                out.push(match name {
                    Some(alias) => SelectItem::ExprWithAlias { expr: e, alias },
                    None => SelectItem::UnnamedExpr(e),
                });
            }
            SelectItem::ExprWithAlias { expr, alias } => {
                let mut e = expr.clone();
                substitute(&mut e, u, readers);
                out.push(SelectItem::ExprWithAlias { expr: e, alias: alias.clone() });
            }
            other => out.push(other.clone()),
        }
    }
    out
}

/// Replaces, in `e`, each reference to a view column (`c`, or `v.c` with
/// `v` one of `readers`) by the view's expression for it, parenthesised.
/// A subquery's own column of the same name is replaced too: the
/// statement is rewritten as text would be.
fn substitute(e: &mut AstExpr, u: &Updatable, readers: &[String]) {
    let lookup = |name: &Ident| u.columns.iter().find(|(n, ..)| *n == ident(name)).map(|(_, e, _)| e.clone());
    let _ = ast::visit_expressions_mut(e, |x: &mut AstExpr| {
        let found = match x {
            AstExpr::Identifier(i) => lookup(i),
            AstExpr::CompoundIdentifier(p) if p.len() == 2 && readers.contains(&ident(&p[0])) => {
                lookup(&p[1])
            }
            _ => None,
        };
        if let Some(found) = found {
            *x = AstExpr::Nested(Box::new(found));
        }
        ControlFlow::<()>::Continue(())
    });
}
