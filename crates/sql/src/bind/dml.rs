//! Binding INSERT, UPDATE and DELETE, with RETURNING.

use snapscale_engine::catalog::{ColumnDef, Identity};

use crate::parse::Overriding;
use snapscale_engine::LockMode;
use snapscale_sqlstate::SqlState;
use snapscale_values::{quote_ident, SqlError, Value};
use sqlparser::ast::{
    self, AssignmentTarget, FromTable, ObjectName, SelectItem, SetExpr, TableFactor, TableObject,
};

use super::foreign_keys::Writes;
use super::scope::{Named, Scope};
use super::{bare_name, ident, not_supported, relation_name, Binder, Resolver, Typed};
use crate::expr::Expr;
use crate::parse::subscript_targets::split as split_target;
use crate::plan::{ConflictAction, Delete, Insert, InsertSource, OnConflict, Plan, Projection, Rel, Update};

impl<R: Resolver> Binder<'_, R> {
    pub(super) fn insert(&mut self, i: &ast::Insert) -> Result<Plan, SqlError> {
        super::clauses::insert(i)?;
        let TableObject::TableName(name) = &i.table else {
            return Err(not_supported("INSERT into a function"));
        };
        let rel = self.relation_or_view(name, LockMode::RowExclusive)?;
        // A view with INSTEAD OF INSERT triggers takes rows as a table of
        // its columns would; the executor hands them to the triggers.
        if rel.entry.is_view() && !super::instead_of::instead_of(&rel, super::instead_of::INSERT) {
            return self.insert_into_view(&rel, i);
        }
        // Each target column, with its subscripts if it is written with
        // them (`a[1:2]`) and where it was written.
        let mut subscripted: Vec<Option<(String, ast::Ident)>> = Vec::new();
        let targets: Vec<usize> = if i.columns.is_empty() {
            (0..rel.entry.columns.len()).collect()
        } else {
            i.columns
                .iter()
                .map(|c| {
                    let last = c.0.last().and_then(|p| p.as_ident());
                    let (n, subs) = match last.and_then(split_target) {
                        Some((n, subs)) => (n.to_owned(), Some(subs.to_owned())),
                        None => (last.map(ident).unwrap_or_default(), None),
                    };
                    subscripted.push(subs.zip(last.cloned()));
                    rel.entry.column(&n).ok_or_else(|| {
                        SqlError::new(
                            SqlState::UNDEFINED_COLUMN,
                            format!("column \"{n}\" of relation \"{}\" does not exist", rel.entry.name),
                        )
                    })
                })
                .collect::<Result<_, _>>()?
        };
        let Some(source) = &i.source else {
            // DEFAULT VALUES: one row of defaults.
            let defaults = self.defaults(&rel, &[])?;
            let returning = self.returning(i.returning.as_deref(), &rel, name, i.table_alias.as_ref())?;
            let source = InsertSource::Values(vec![Vec::new()]);
            let mut checks = self.table_checks(&rel)?;
            checks.extend(self.take_view_checks(&rel)?);
            let on_conflict = self.on_conflict(&rel, name, i)?;
            let targets = Vec::new();
            let foreign_keys = self.foreign_keys_for(&rel, writes_of(on_conflict.as_ref()))?;
            let insert =
                Insert { rel, targets, defaults, source, returning, checks, on_conflict, foreign_keys };
            return Ok(Plan::Insert(insert));
        };
        // Without a column list, a shorter VALUES row fills the leading
        // columns (the rest take their defaults).
        let mut targets = targets;
        if i.columns.is_empty() {
            if let SetExpr::Values(values) = source.body.as_ref() {
                let widest = values.rows.iter().map(|r| r.content.len()).max().unwrap_or(0);
                if widest < targets.len() {
                    targets.truncate(widest);
                }
            }
        }
        let source = match source.body.as_ref() {
            SetExpr::Values(values) if source.order_by.is_none() && source.limit_clause.is_none() => {
                super::clauses::query(source)?;
                if source.fetch.is_some() {
                    return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"FETCH\""));
                }
                let mut rows = Vec::new();
                for row in &values.rows {
                    let row = &row.content;
                    if row.len() > targets.len() {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            "INSERT has more expressions than target columns",
                        ));
                    }
                    if row.len() < targets.len() {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            "INSERT has more target columns than expressions",
                        ));
                    }
                    let scope = Scope::empty();
                    let mut bound = Vec::new();
                    for (k, (e, &t)) in row.iter().zip(&targets).enumerate() {
                        let col = &rel.entry.columns[t];
                        if is_default_keyword(e) {
                            bound.push(self.column_default(col)?);
                            continue;
                        }
                        if col.generated.is_some() {
                            return Err(super::generated::not_writable(col, false));
                        }
                        if col.identity.is_some() {
                            match self.statement.pre.overriding {
                                // The sequence's value, whatever was given.
                                Some(Overriding::User) => {
                                    bound.push(self.column_default(col)?);
                                    continue;
                                }
                                None if col.identity == Some(Identity::Always) => {
                                    return Err(super::generated::identity_not_writable(col, false));
                                }
                                _ => {}
                            }
                        }
                        let typed = self.expr(e, &scope)?;
                        match subscripted.get(k).and_then(Option::as_ref) {
                            Some((subs, at)) => {
                                bound.push(self.insert_subscripted(col, subs, at, typed, &scope)?);
                            }
                            None => bound.push(self.assign_literal(typed, col, e, &scope)?),
                        }
                    }
                    rows.push(bound);
                }
                InsertSource::Values(rows)
            }
            _ => {
                if let Some(&t) = targets.iter().find(|&&t| rel.entry.columns[t].generated.is_some()) {
                    return Err(super::generated::not_writable(&rel.entry.columns[t], false));
                }
                if self.statement.pre.overriding.is_none() {
                    if let Some(&t) =
                        targets.iter().find(|&&t| rel.entry.columns[t].identity == Some(Identity::Always))
                    {
                        return Err(super::generated::identity_not_writable(&rel.entry.columns[t], false));
                    }
                }
                let mut q = self.query(source)?;
                let untyped = std::mem::take(&mut self.query.untyped);
                if q.outputs.len() != targets.len() {
                    return Err(SqlError::new(
                        SqlState::SYNTAX_ERROR,
                        if q.outputs.len() > targets.len() {
                            "INSERT has more expressions than target columns"
                        } else {
                            "INSERT has more target columns than expressions"
                        },
                    ));
                }
                let outputs = std::mem::take(&mut q.outputs);
                q.outputs = outputs
                    .into_iter()
                    .zip(q.columns.iter())
                    .zip(&targets)
                    .enumerate()
                    .map(|(i, ((e, c), &t))| {
                        let col = &rel.entry.columns[t];
                        // A literal with no type of its own takes the
                        // column's, as PostgreSQL resolves "unknown".
                        let ty = if untyped.contains(&i) { None } else { Some(c.ty) };
                        match subscripted.get(i).and_then(Option::as_ref) {
                            Some((subs, at)) => {
                                self.insert_subscripted(col, subs, at, Typed { e, ty }, &Scope::empty())
                            }
                            None => self.coerce_to_column(Typed { e, ty }, col),
                        }
                    })
                    .collect::<Result<_, _>>()?;
                // OVERRIDING USER VALUE: identity columns take their
                // sequence's values, whatever the query gives.
                if self.statement.pre.overriding == Some(Overriding::User) {
                    for (k, &t) in targets.iter().enumerate() {
                        if rel.entry.columns[t].identity.is_some() {
                            q.outputs[k] = self.column_default(&rel.entry.columns[t])?;
                        }
                    }
                }
                InsertSource::Query(Box::new(q))
            }
        };
        let defaults = self.defaults(&rel, &targets)?;
        let returning = self.returning(i.returning.as_deref(), &rel, name, i.table_alias.as_ref())?;
        let mut checks = self.table_checks(&rel)?;
        checks.extend(self.take_view_checks(&rel)?);
        let on_conflict = self.on_conflict(&rel, name, i)?;
        let foreign_keys = self.foreign_keys_for(&rel, writes_of(on_conflict.as_ref()))?;
        Ok(Plan::Insert(Insert {
            rel,
            targets,
            defaults,
            source,
            returning,
            checks,
            on_conflict,
            foreign_keys,
        }))
    }

    /// ON CONFLICT: the arbiter indexes PostgreSQL would infer (a unique
    /// index on exactly the columns named, the constraint named, or every
    /// unique index for a DO NOTHING without a target), and DO UPDATE's
    /// SET and WHERE over the existing row and `excluded`.
    fn on_conflict(
        &mut self,
        rel: &Rel,
        name: &ObjectName,
        i: &ast::Insert,
    ) -> Result<Option<OnConflict>, SqlError> {
        let Some(on) = &i.on else { return Ok(None) };
        let ast::OnInsert::OnConflict(on) = on else {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"ON\""));
        };
        let entry = &rel.entry;
        let unique = |k: &usize| entry.indexes[*k].unique;
        let written = self.statement.pre.conflict_target.take();
        let arbiters: Vec<usize> = match (&written, &on.conflict_target) {
            (Some(target), _) => {
                let elements: &[String] = if target.other_decoration { &[] } else { &target.elements };
                self.infer_arbiters(rel, elements, target.predicate.as_deref())?
            }
            (None, Some(ast::ConflictTarget::Columns(cols))) => {
                let names: Vec<String> = cols.iter().map(|c| quote_ident(&ident(c))).collect();
                self.infer_arbiters(rel, &names, None)?
            }
            (None, Some(ast::ConflictTarget::OnConstraint(c))) => {
                let n = relation_name(c)?;
                match entry.indexes.iter().position(|x| x.constraint && x.name == n) {
                    Some(k) => vec![k],
                    None if entry.checks.iter().any(|x| x.name == n) => {
                        return Err(SqlError::new(
                            SqlState::WRONG_OBJECT_TYPE,
                            "constraint in ON CONFLICT clause has no associated index",
                        ))
                    }
                    None => {
                        return Err(SqlError::new(
                            SqlState::UNDEFINED_OBJECT,
                            format!("constraint \"{n}\" for table \"{}\" does not exist", entry.name),
                        ))
                    }
                }
            }
            (None, None) => (0..entry.indexes.len()).filter(unique).collect(),
        };
        let action = match &on.action {
            ast::OnConflictAction::DoNothing => ConflictAction::Nothing,
            ast::OnConflictAction::DoUpdate(u) => {
                if on.conflict_target.is_none() && written.is_none() {
                    let err = SqlError::new(
                        SqlState::SYNTAX_ERROR,
                        "ON CONFLICT DO UPDATE requires inference specification or constraint name",
                    )
                    .with_hint("For example, ON CONFLICT (column_name).");
                    // At the clause, which sqlparser keeps no place of.
                    let at = self.origin.as_deref().and_then(|o| {
                        let byte = o.text.to_lowercase().find("on conflict")?;
                        Some(o.chars_before + o.text[..byte].chars().count() + 1)
                    });
                    return Err(match at {
                        Some(p) => err.at_position(p),
                        None => err,
                    });
                }
                let alias = match &i.table_alias {
                    Some(a) => ident(&a.alias),
                    None => bare_name(name)?,
                };
                let target = Named::table(&alias, rel, 0);
                let mut excluded = Named::table("excluded", rel, entry.columns.len() + 1);
                excluded.table = None;
                let visible = target.columns.iter().chain(&excluded.columns).cloned().collect();
                let scope = Scope::empty().with_items(vec![target, excluded], visible);
                let sets = self.assignments(rel, &u.assignments, &scope)?;
                let filter = match &u.selection {
                    Some(w) => Some(self.filter(w, &scope, "WHERE")?),
                    None => None,
                };
                ConflictAction::Update { sets, filter }
            }
        };
        Ok(Some(OnConflict { arbiters, action }))
    }

    /// The columns not in `targets` that have a DEFAULT, with it bound
    /// (the others are NULL).
    pub(super) fn defaults(&mut self, rel: &Rel, targets: &[usize]) -> Result<Vec<(usize, Expr)>, SqlError> {
        let mut out = Vec::new();
        for (i, col) in rel.entry.columns.iter().enumerate() {
            if (col.default.is_some() || col.domain.is_some()) && !targets.contains(&i) {
                out.push((i, self.column_default(col)?));
            }
        }
        Ok(out)
    }

    /// A column's DEFAULT bound for this statement, or NULL without one.
    pub(super) fn column_default(&mut self, col: &ColumnDef) -> Result<Expr, SqlError> {
        let text = match &col.default {
            Some(t) => Some(t.clone()),
            None => self.domain_default(col.domain)?,
        };
        let Some(text) = &text else {
            // NULL, which the column's domain may refuse (NOT NULL).
            return match col.domain {
                Some(_) => {
                    self.coerce_to_column(Typed { e: Expr::Const(Value::Null), ty: Some(col.ty) }, col)
                }
                None => Ok(Expr::Const(Value::Null)),
            };
        };
        let e = crate::parse::parse_expr(text, self.stack.limit())?;
        let scope = Scope::empty();
        let typed = self.expr(&e, &scope)?;
        self.coerce_to_column(typed, col)
    }

    /// The default of domain `oid`, or of the nearest domain under it
    /// that has one.
    fn domain_default(&mut self, mut oid: Option<u32>) -> Result<Option<String>, SqlError> {
        // A chain is no longer than the domains there are; bound it anyway.
        for _ in 0..1024 {
            let Some(o) = oid else { return Ok(None) };
            let entry = self.domain_of(o)?;
            let Some(snapscale_engine::user_types::TypeDef::Domain(d)) = &entry.user_type else {
                return Ok(None);
            };
            if d.default.is_some() {
                return Ok(d.default.clone());
            }
            oid = d.parent;
        }
        Ok(None)
    }

    /// `typed` (written as `e`) assigned to column `col`: a quoted literal
    /// the column's type cannot read is refused at the literal, as
    /// PostgreSQL's input functions report it (a value too long for the
    /// column is the length check's, which has no position).
    fn assign_literal(
        &mut self,
        typed: Typed,
        col: &ColumnDef,
        e: &ast::Expr,
        scope: &Scope<'_>,
    ) -> Result<Expr, SqlError> {
        // A row constructor into a composite column: its fields converted.
        if let (snapscale_values::SqlType::Composite(u), Some(items)) =
            (col.ty, super::user_types::row_items(e))
        {
            let e = self.row_as_composite(&items, u, scope)?;
            return self.coerce_to_column(Typed { e, ty: Some(col.ty) }, col);
        }
        let literal = typed.ty.is_none() && matches!(typed.e, Expr::Const(Value::Text(_)));
        self.coerce_to_column(typed, col).map_err(|err| {
            if literal && err.position.is_none() && err.code != SqlState::STRING_DATA_RIGHT_TRUNCATION_22001 {
                super::expr::locate(self.origin.as_deref(), err, e)
            } else {
                err
            }
        })
    }

    /// An INSERT's value for a subscripted target: assigned into NULL.
    fn insert_subscripted(
        &mut self,
        col: &ColumnDef,
        subs: &str,
        at: &ast::Ident,
        typed: Typed,
        scope: &Scope<'_>,
    ) -> Result<Expr, SqlError> {
        self.subscript_assignment(col, subs, Expr::Const(Value::Null), typed, scope).map_err(|err| {
            super::expr::locate(self.origin.as_deref(), err, &ast::Expr::Identifier(at.clone()))
        })
    }

    pub(super) fn update(&mut self, u: &ast::Update) -> Result<Plan, SqlError> {
        super::clauses::update(u)?;
        if !u.table.joins.is_empty() {
            return Err(not_supported("UPDATE of a join"));
        }
        match &u.from {
            Some(_) if self.statement.pre.current_of.is_some() => {
                return Err(not_supported("UPDATE … FROM … WHERE CURRENT OF"))
            }
            Some(ast::UpdateTableFromKind::AfterSet(items)) => return self.update_from(u, items),
            Some(ast::UpdateTableFromKind::BeforeSet(_)) => {
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"FROM\""))
            }
            None => {}
        }
        if let Some((view, alias)) = self.target_view(&u.table.relation)? {
            if self.statement.pre.current_of.is_some() {
                return Err(current_of_view());
            }
            if super::instead_of::instead_of(&view, snapscale_engine::triggers::events::UPDATE) {
                let returning = u.returning.as_deref();
                let (t, selection) = (&u.table.relation, u.selection.as_ref());
                return self.instead_of_change(&view, t, alias, &u.assignments, selection, returning);
            }
            return self.update_view(&view, u, alias);
        }
        let (rel, alias) = self.table_factor(&u.table.relation, LockMode::RowExclusive)?;
        let scope = Scope::table(&alias, &rel);
        let sets = self.assignments(&rel, &u.assignments, &scope)?;
        let scan = self.scan(rel.clone(), u.selection.as_ref(), &scope)?;
        let returning = self.returning_scoped(u.returning.as_deref(), &scope)?;
        let mut checks = self.table_checks(&scan.rel)?;
        checks.extend(self.take_view_checks(&scan.rel)?);
        let foreign_keys = self.foreign_keys_for(&scan.rel, Writes::Change)?;
        let current_of = self.statement.pre.current_of.take();
        Ok(Plan::Update(Update { scan, current_of, sets, returning, checks, foreign_keys }))
    }

    /// An UPDATE's (or ON CONFLICT DO UPDATE's) SET list: each target
    /// column's position and its new value over `scope`'s row.
    pub(super) fn assignments(
        &mut self,
        rel: &Rel,
        assignments: &[ast::Assignment],
        scope: &Scope<'_>,
    ) -> Result<Vec<(usize, Expr)>, SqlError> {
        let assignments = single_assignments(self, assignments)?;
        let mut sets = Vec::new();
        for a in assignments.iter() {
            let AssignmentTarget::ColumnName(c) = &a.target else {
                return Err(not_supported("multiple-column UPDATE SET"));
            };
            let last = c.0.last().and_then(|p| p.as_ident());
            let (n, subs) = match last.and_then(split_target) {
                Some((n, subs)) => (n.to_owned(), Some(subs)),
                None => (last.map(ident).unwrap_or_default(), None),
            };
            let pos = rel.entry.column(&n).ok_or_else(|| {
                SqlError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{n}\" of relation \"{}\" does not exist", rel.entry.name),
                )
            })?;
            if let (Some(subs), Some(at)) = (subs, last) {
                // An earlier target of the same column is the base.
                let base = match sets.iter().position(|(p, _)| *p == pos) {
                    Some(k) => sets.remove(k).1,
                    // The target row's column (offset 0 in every scope
                    // this binds in).
                    None => Expr::Column(pos),
                };
                let typed = self.expr(&a.value, scope)?;
                let col = &rel.entry.columns[pos];
                let e = self.subscript_assignment(col, subs, base, typed, scope).map_err(|err| {
                    super::expr::locate(self.origin.as_deref(), err, &ast::Expr::Identifier(at.clone()))
                })?;
                sets.push((pos, e));
                continue;
            }
            if is_default_keyword(&a.value) {
                let e = self.column_default(&rel.entry.columns[pos])?;
                sets.push((pos, e));
                continue;
            }
            super::generated::check_writable(&rel.entry.columns[pos], true, false)?;
            let typed = self.expr(&a.value, scope)?;
            sets.push((pos, self.assign_literal(typed, &rel.entry.columns[pos], &a.value, scope)?));
        }
        Ok(sets)
    }

    pub(super) fn delete(&mut self, d: &ast::Delete) -> Result<Plan, SqlError> {
        super::clauses::delete(d)?;
        let from = match &d.from {
            FromTable::WithFromKeyword(t) | FromTable::WithoutKeyword(t) => t,
        };
        if d.using.is_some() && self.statement.pre.current_of.is_some() {
            return Err(not_supported("DELETE … USING … WHERE CURRENT OF"));
        }
        if let (Some(using), [target]) = (&d.using, from.as_slice()) {
            return self.delete_using(d, target, using);
        }
        if from.len() != 1 || !from[0].joins.is_empty() {
            return Err(not_supported("DELETE from several tables"));
        }
        if let Some((view, alias)) = self.target_view(&from[0].relation)? {
            if self.statement.pre.current_of.is_some() {
                return Err(current_of_view());
            }
            if super::instead_of::instead_of(&view, snapscale_engine::triggers::events::DELETE) {
                let returning = d.returning.as_deref();
                let (t, selection) = (&from[0].relation, d.selection.as_ref());
                return self.instead_of_change(&view, t, alias, &[], selection, returning);
            }
            return self.delete_from_view(&view, d, alias);
        }
        let (rel, alias) = self.table_factor(&from[0].relation, LockMode::RowExclusive)?;
        let scope = Scope::table(&alias, &rel);
        let scan = self.scan(rel.clone(), d.selection.as_ref(), &scope)?;
        let returning = self.returning_scoped(d.returning.as_deref(), &scope)?;
        let foreign_keys = self.foreign_keys_for(&scan.rel, Writes::Change)?;
        let current_of = self.statement.pre.current_of.take();
        Ok(Plan::Delete(Delete { scan, current_of, returning, foreign_keys }))
    }

    /// INSERT's RETURNING: over the new row, named by the table's alias
    /// (`INSERT INTO t AS x`) or else its name.
    pub(super) fn returning(
        &mut self,
        items: Option<&[SelectItem]>,
        rel: &Rel,
        name: &ObjectName,
        alias: Option<&ast::TableAliasWithoutColumns>,
    ) -> Result<Option<Projection>, SqlError> {
        let alias = match alias {
            Some(a) => ident(&a.alias),
            None => bare_name(name)?,
        };
        let scope = Scope::table(&alias, rel);
        self.returning_scoped(items, &scope)
    }

    pub(super) fn returning_scoped(
        &mut self,
        items: Option<&[SelectItem]>,
        scope: &Scope<'_>,
    ) -> Result<Option<Projection>, SqlError> {
        let Some(items) = items else { return Ok(None) };
        let (exprs, columns) = self.projection(items, scope)?;
        Ok(Some(Projection { exprs, columns: columns.into() }))
    }

    pub(super) fn table_factor(
        &mut self,
        t: &TableFactor,
        mode: LockMode,
    ) -> Result<(Rel, String), SqlError> {
        let only = super::clauses::without_only(t);
        let t = only.as_ref().unwrap_or(t);
        super::clauses::table(t)?;
        let TableFactor::Table { name, alias, args: None, .. } = t else {
            return Err(not_supported("this kind of FROM item"));
        };
        if mode == LockMode::RowExclusive {
            self.not_transition_table(name)?;
        }
        let rel = self.rel(name, mode)?;
        let alias = match alias {
            Some(a) => ident(&a.name),
            None => bare_name(name)?,
        };
        Ok((rel, alias))
    }

    // ------------------------------------------------------------- SELECT
}

/// `DEFAULT` in a VALUES row or an UPDATE's SET (sqlparser reads the
/// keyword as a name; a quoted "DEFAULT" is a column).
/// What an INSERT does to its table, for its foreign keys: an upsert that
/// may update changes rows.
fn writes_of(on: Option<&OnConflict>) -> Writes {
    match on {
        Some(OnConflict { action: ConflictAction::Update { .. }, .. }) => Writes::Change,
        _ => Writes::Insert,
    }
}

pub(super) fn is_default_keyword(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Identifier(i) if i.quote_style.is_none() && i.value.eq_ignore_ascii_case("default"))
}

/// A SET list with each multiple-column item `(a, b) = source` written as
/// one item per column (most lists have none: borrowed as they are). The
/// source is a row, `ROW(…)` or a parenthesised list, whose items go to
/// the columns in order; or a sub-SELECT, of which each column reads its
/// own output column: `(SELECT x, y …)` gives `a = (SELECT x …)` and
/// `b = (SELECT y …)`, the same values and errors (none, or more than one
/// row) as PostgreSQL's one evaluation, the query running once per
/// column (a volatile function in it is called once per column too).
pub(super) fn single_assignments<'a, R: Resolver>(
    b: &Binder<'_, R>,
    assignments: &'a [ast::Assignment],
) -> Result<std::borrow::Cow<'a, [ast::Assignment]>, SqlError> {
    // An error's position: the source's opening parenthesis (PostgreSQL's
    // row or sub-SELECT), or the expression inside a lone one.
    let place = |err: SqlError, e: &ast::Expr| {
        let (inner, paren) = match e {
            ast::Expr::Nested(inner) => (inner.as_ref(), false),
            ast::Expr::Tuple(_) | ast::Expr::Subquery(_) => (e, true),
            _ => (e, false),
        };
        let at = sqlparser::ast::Spanned::span(inner).start;
        let origin = b.origin.as_deref();
        let p = match paren {
            true => origin.and_then(|o| o.position_before("(", at.line, at.column)),
            false => origin.and_then(|o| o.position(at.line, at.column)),
        };
        match p {
            Some(p) => err.at_position(p),
            None => err,
        }
    };
    if assignments.iter().all(|a| matches!(a.target, AssignmentTarget::ColumnName(_))) {
        return Ok(std::borrow::Cow::Borrowed(assignments));
    }
    let mismatch =
        || SqlError::new(SqlState::SYNTAX_ERROR, "number of columns does not match number of values");
    let mut out = Vec::new();
    for a in assignments {
        let AssignmentTarget::Tuple(columns) = &a.target else {
            out.push(a.clone());
            continue;
        };
        let values: Vec<ast::Expr> = match &a.value {
            ast::Expr::Tuple(items) => items.clone(),
            ast::Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("row") => {
                let ast::FunctionArguments::List(list) = &f.args else { return Err(mismatch()) };
                let mut items = Vec::new();
                for arg in &list.args {
                    match arg {
                        ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => items.push(e.clone()),
                        _ => return Err(not_supported("ROW(… .*) as a multiple-column UPDATE source")),
                    }
                }
                items
            }
            ast::Expr::Subquery(q) => {
                let ast::SetExpr::Select(s) = q.body.as_ref() else {
                    return Err(not_supported("a set operation as a multiple-column UPDATE source"));
                };
                if s.projection
                    .iter()
                    .any(|i| !matches!(i, SelectItem::UnnamedExpr(_) | SelectItem::ExprWithAlias { .. }))
                {
                    return Err(not_supported("* in a multiple-column UPDATE sub-SELECT"));
                }
                if s.projection.len() != columns.len() {
                    return Err(place(mismatch(), &a.value));
                }
                (0..columns.len())
                    .map(|i| {
                        let mut one = q.clone();
                        if let ast::SetExpr::Select(s) = one.body.as_mut() {
                            s.projection = vec![s.projection[i].clone()];
                        }
                        ast::Expr::Subquery(one)
                    })
                    .collect()
            }
            _ => {
                let err = SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "source for a multiple-column UPDATE item must be a sub-SELECT or ROW() expression",
                );
                return Err(place(err, &a.value));
            }
        };
        if values.len() != columns.len() {
            return Err(place(mismatch(), &a.value));
        }
        for (c, v) in columns.iter().zip(values) {
            out.push(ast::Assignment { target: AssignmentTarget::ColumnName(c.clone()), value: v });
        }
    }
    Ok(std::borrow::Cow::Owned(out))
}

/// WHERE CURRENT OF names a row of a table; a view's is not one.
fn current_of_view() -> SqlError {
    SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, "WHERE CURRENT OF on a view is not implemented")
}
