//! `WITH [RECURSIVE] name [(columns)] AS (query), …`: common table
//! expressions.
//!
//! A WITH item is a name for a query, visible to the items after it and
//! to the query the WITH belongs to (and that query's subqueries), hiding
//! a table of the same name. Each reference binds the item's query afresh,
//! as a subquery in FROM: every statement reads through one snapshot, so
//! two references see the same rows, and a query with no side effects
//! means the same whether it is computed once or twice (PostgreSQL
//! inlines such items too, unless told MATERIALIZED, which changes only
//! the plan).
//!
//! The item's query is bound where it was written, seeing only the items
//! before it, never the query that refers to it: bound again at a
//! reference, it gets the same scope (the empty one, since a WITH item
//! that read an enclosing query's columns would need that query's row;
//! such a reference is 42703 here, where PostgreSQL allows it).
//!
//! Under RECURSIVE, an item written `base UNION [ALL] step` whose step
//! refers to the item itself is computed in rounds (`From::Recursive`):
//! the base gives the columns (names, and types the step is coerced to);
//! inside the step the item's name means the work table, the rows the
//! round before added. The step may name it once, and not from inside a
//! subquery expression, as in PostgreSQL (42P19). An item of a RECURSIVE
//! WITH that does not refer to itself is an ordinary one.

use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType};
use sqlparser::ast::{self, SetExpr};

use super::scope::{Col, Named, Scope};
use super::{from, ident, not_supported, Binder, Coercion, Resolver, Typed};
use crate::expr::Expr;
use crate::plan::{Column, From, Recursive, Select};

/// One WITH item in scope.
#[derive(Clone)]
pub(super) struct Cte {
    name: String,
    kind: Kind,
}

#[derive(Clone)]
enum Kind {
    /// An item as written.
    Query {
        query: Box<ast::Query>,
        /// The column names written after the item's name.
        columns: Vec<String>,
        /// Written under WITH RECURSIVE.
        recursive: bool,
    },
    /// A data-modifying item (INSERT, UPDATE or DELETE), run once before
    /// the statement: references read its RETURNING rows from work table
    /// `id` (`None`: it has no RETURNING).
    Modifying { id: usize, columns: Option<Vec<Column>> },
    /// Inside a recursive item's step: the item's work table.
    Work {
        id: usize,
        columns: Vec<Column>,
        /// The binder's subquery depth where the step began.
        depth: usize,
        /// References to it so far.
        refs: usize,
    },
}

/// The INSERT, UPDATE or DELETE a `WITH … ` query stands before, if it
/// is one (with nothing after it: sqlparser reads no tail there).
pub(super) fn dml_body(q: &ast::Query) -> Option<&ast::Statement> {
    match q.body.as_ref() {
        SetExpr::Insert(s) | SetExpr::Update(s) | SetExpr::Delete(s) => Some(s),
        _ => None,
    }
}

impl<R: Resolver> Binder<'_, R> {
    /// `WITH items INSERT | UPDATE | DELETE …`: the statement bound with
    /// the items in scope (in its source query, FROM / USING list and
    /// subqueries; never as its target, which names a table).
    pub(super) fn dml_with_ctes(&mut self, q: &ast::Query) -> Result<crate::plan::Plan, SqlError> {
        super::clauses::query(q)?;
        // The whole statement's WITH (`finish` said so), not an item's.
        let top = std::mem::take(&mut self.statement.top_with);
        let (Some(with), Some(statement)) = (&q.with, dml_body(q)) else {
            unreachable!("the caller checked for a WITH before a data-modifying statement")
        };
        let outer = self.ctes.len();
        let bound = match self.define_ctes(with, top) {
            Ok(()) => self.statement(statement),
            Err(e) => Err(e),
        };
        self.ctes.truncate(outer);
        bound
    }

    /// Puts `with`'s items in scope (the caller truncates them away when
    /// its query is bound), binding each once so that an error in one that
    /// is never referenced is still reported, as PostgreSQL reports it.
    /// Data-modifying items may stand only in the `top` level's WITH.
    pub(super) fn define_ctes(&mut self, with: &ast::With, top: bool) -> Result<(), SqlError> {
        let first = self.ctes.len();
        for cte in &with.cte_tables {
            let name = ident(&cte.alias.name);
            if self.ctes[first..].iter().any(|c| c.name == name) {
                return Err(SqlError::new(
                    SqlState::DUPLICATE_ALIAS,
                    format!("WITH query name \"{name}\" specified more than once"),
                ));
            }
            if cte.from.is_some() {
                return Err(not_supported("WITH … FROM"));
            }
            // Errors of a data-modifying item are placed at its name.
            let at_name = |b: &Self, e: SqlError| match e.position {
                None => super::expr::locate(
                    b.origin.as_deref(),
                    e,
                    &ast::Expr::Identifier(cte.alias.name.clone()),
                ),
                Some(_) => e,
            };
            if matches!(cte.query.body.as_ref(), SetExpr::Merge(_)) {
                let e = SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, "MERGE not supported in WITH query");
                return Err(at_name(self, e));
            }
            if let Some(statement) = dml_body(&cte.query) {
                if !top {
                    let e = SqlError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        "WITH clause containing a data-modifying statement must be at the top level",
                    );
                    return Err(at_name(self, e));
                }
                let kind = self.modifying_cte(&name, &cte.alias.columns, &cte.query, statement).map_err(
                    |e| match e.code {
                        SqlState::INVALID_COLUMN_REFERENCE => at_name(self, e),
                        _ => e,
                    },
                )?;
                self.ctes.push(Cte { name, kind });
                continue;
            }
            let item = Cte {
                name,
                kind: Kind::Query {
                    query: cte.query.clone(),
                    columns: cte.alias.columns.iter().map(|c| ident(&c.name)).collect(),
                    recursive: with.recursive,
                },
            };
            self.bind_cte(&item, self.ctes.len())?;
            self.ctes.push(item);
        }
        Ok(())
    }

    /// A data-modifying item, bound once where it is written (with the
    /// items before it in scope) and kept for the executor to run before
    /// the statement.
    fn modifying_cte(
        &mut self,
        name: &str,
        aliases: &[ast::TableAliasColumnDef],
        query: &ast::Query,
        statement: &ast::Statement,
    ) -> Result<Kind, SqlError> {
        if query.with.is_some() {
            return Err(not_supported("WITH inside a data-modifying WITH item"));
        }
        let plan = self.statement(statement)?;
        let returning = match &plan {
            crate::plan::Plan::Insert(i) => i.returning.as_ref(),
            crate::plan::Plan::Update(u) => u.returning.as_ref(),
            crate::plan::Plan::Delete(d) => d.returning.as_ref(),
            crate::plan::Plan::ModifyJoin(m) => m.returning.as_ref(),
            _ => None,
        };
        let columns = returning.map(|r| r.columns.to_vec());
        let aliases: Vec<String> = aliases.iter().map(|c| ident(&c.name)).collect();
        if let Some(columns) = &columns {
            check_column_count(name, &aliases, columns.len())?;
        }
        let columns = columns.map(|cols| {
            cols.into_iter()
                .enumerate()
                .map(|(i, c)| Column { name: aliases.get(i).cloned().unwrap_or(c.name), ty: c.ty })
                .collect()
        });
        let id = self.statement.work_tables;
        self.statement.work_tables += 1;
        self.statement.modifying.push((id, plan));
        Ok(Kind::Modifying { id, columns })
    }

    /// The WITH item `name` refers to, if one is in scope (the innermost,
    /// latest of that name): its position among the items in scope.
    pub(super) fn cte_named(&self, name: &ast::ObjectName) -> Option<usize> {
        let [part] = name.0.as_slice() else { return None };
        let wanted = ident(part.as_ident()?);
        self.ctes.iter().rposition(|c| c.name == wanted)
    }

    /// Binds item `k`'s query as it was written: with only the items
    /// before it in scope.
    fn bind_cte(&mut self, item: &Cte, k: usize) -> Result<Select, SqlError> {
        let Kind::Query { query, columns, recursive } = &item.kind else {
            unreachable!("work tables are not bound as queries")
        };
        let hidden = self.ctes.split_off(k);
        let select = match (recursive, query.body.as_ref()) {
            (true, SetExpr::SetOperation { op: ast::SetOperator::Union, set_quantifier, left, right })
                if query.with.is_none() =>
            {
                let all = matches!(set_quantifier, ast::SetQuantifier::All);
                match self.recursive_cte(&item.name, columns, all, left, right) {
                    // Self-referencing: PostgreSQL runs the rounds only for
                    // `base UNION [ALL] step` alone.
                    Ok(Some(select)) => match recursive_query_tail(query) {
                        Some(clause) => Err(SqlError::new(
                            SqlState::FEATURE_NOT_SUPPORTED,
                            format!("{clause} in a recursive query is not implemented"),
                        )),
                        None => Ok(select),
                    },
                    Ok(None) => self.query_scoped(query, &Scope::empty()),
                    Err(e) => Err(e),
                }
            }
            _ => self.query_scoped(query, &Scope::empty()),
        };
        self.ctes.extend(hidden);
        let select = select?;
        check_column_count(&item.name, columns, select.columns.len())?;
        Ok(select)
    }

    /// A recursive item's rounds; `None` if its step does not refer to it
    /// (then it is an ordinary item).
    fn recursive_cte(
        &mut self,
        name: &str,
        aliases: &[String],
        all: bool,
        base: &SetExpr,
        step: &SetExpr,
    ) -> Result<Option<Select>, SqlError> {
        let (mut base, untyped) = self.operand(base, &Scope::empty())?;
        check_column_count(name, aliases, base.columns.len())?;
        // The base decides the columns; a bare literal there is text.
        let mut columns = Vec::with_capacity(base.outputs.len());
        for (i, c) in base.columns.iter().enumerate() {
            let ty = if untyped.contains(&i) { SqlType::Text } else { c.ty };
            let e = std::mem::replace(&mut base.outputs[i], Expr::Const(snapscale_values::Value::Null));
            let t = Typed { e, ty: (!untyped.contains(&i)).then_some(c.ty) };
            base.outputs[i] = self.coerce(t, ty, Coercion::Implicit, "UNION")?;
            columns.push(Column { name: aliases.get(i).cloned().unwrap_or_else(|| c.name.clone()), ty });
        }
        let id = self.statement.work_tables;
        self.statement.work_tables += 1;
        let work = Kind::Work { id, columns: columns.clone(), depth: self.sublink_depth, refs: 0 };
        self.ctes.push(Cte { name: name.to_owned(), kind: work });
        let bound = self.operand(step, &Scope::empty());
        let marker = self.ctes.pop().expect("the work table pushed above");
        let (mut step, step_untyped) = bound?;
        if matches!(marker.kind, Kind::Work { refs: 0, .. }) {
            return Ok(None);
        }
        // Each round reads the rows the round before added, one at a time
        // in PostgreSQL: a step that combines them (an aggregate, a window)
        // has no meaning there.
        if step.grouping.is_some() || !step.windows.is_empty() {
            let what = if step.grouping.is_some() { "aggregate functions" } else { "window functions" };
            return Err(SqlError::new(
                SqlState::INVALID_RECURSION,
                format!("{what} are not allowed in a recursive query's recursive term"),
            ));
        }
        if step.outputs.len() != columns.len() {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "each UNION query must have the same number of columns",
            ));
        }
        for (i, c) in columns.iter().enumerate() {
            let e = std::mem::replace(&mut step.outputs[i], Expr::Const(snapscale_values::Value::Null));
            let t = Typed { e, ty: (!step_untyped.contains(&i)).then(|| step.columns[i].ty) };
            step.outputs[i] = self.coerce(t, c.ty, Coercion::Implicit, "UNION")?;
        }
        base.columns = columns.clone().into();
        step.columns = columns.clone().into();
        let from = From::Recursive(Box::new(Recursive { id, all, base, step, columns: columns.clone() }));
        Ok(Some(Select {
            from: Some(from),
            filter: None,
            grouping: None,
            windows: Vec::new(),
            srfs: Vec::new(),
            outputs: (0..columns.len()).map(Expr::Column).collect(),
            columns: columns.into(),
            order: Vec::new(),
            limit: None,
            offset: None,
            lock: None,
            distinct_on: Vec::new(),
        }))
    }

    /// A reference to WITH item `k` in FROM, at `offset` in the FROM row:
    /// its query, bound again, as a subquery named after the item (or the
    /// reference's alias).
    pub(super) fn cte_reference(
        &mut self,
        k: usize,
        alias: Option<&ast::TableAlias>,
        offset: usize,
    ) -> Result<from::Item, SqlError> {
        let item = self.ctes[k].clone();
        let (from, names, types): (From, Vec<String>, Vec<SqlType>) = match &item.kind {
            Kind::Work { id, columns, depth, refs } => {
                if self.sublink_depth > *depth {
                    return Err(SqlError::new(
                        SqlState::INVALID_RECURSION,
                        format!(
                            "recursive reference to query \"{}\" must not appear within a subquery",
                            item.name
                        ),
                    ));
                }
                if *refs > 0 {
                    return Err(SqlError::new(
                        SqlState::INVALID_RECURSION,
                        format!(
                            "recursive reference to query \"{}\" must not appear more than once",
                            item.name
                        ),
                    ));
                }
                if let Kind::Work { refs, .. } = &mut self.ctes[k].kind {
                    *refs += 1;
                }
                let names = columns.iter().map(|c| c.name.clone()).collect();
                let types = columns.iter().map(|c| c.ty).collect();
                (From::WorkTable { id: *id, columns: columns.clone() }, names, types)
            }
            Kind::Modifying { columns: None, .. } => {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    format!("WITH query \"{}\" does not have a RETURNING clause", item.name),
                ));
            }
            Kind::Modifying { id, columns: Some(columns) } => {
                let names = columns.iter().map(|c| c.name.clone()).collect();
                let types = columns.iter().map(|c| c.ty).collect();
                (From::WorkTable { id: *id, columns: columns.clone() }, names, types)
            }
            Kind::Query { columns: aliases, .. } => {
                let select = self.bind_cte(&item, k)?;
                let names = select
                    .columns
                    .iter()
                    .enumerate()
                    .map(|(i, c)| aliases.get(i).cloned().unwrap_or_else(|| c.name.clone()))
                    .collect();
                let types = select.columns.iter().map(|c| c.ty).collect();
                (From::Derived(Box::new(select)), names, types)
            }
        };
        let columns = names
            .into_iter()
            .zip(types)
            .enumerate()
            .map(|(i, (name, ty))| Col { name, expr: Expr::Column(offset + i), ty })
            .collect();
        let name = alias.map_or(item.name, |a| ident(&a.name));
        let named = from::rename(Named { alias: name, columns, table: None, nullable: false }, alias)?;
        Ok(from::Item { visible: named.columns.clone(), named: vec![named], from })
    }
}

/// 42P10 if more column names were written than the query has.
fn check_column_count(name: &str, aliases: &[String], available: usize) -> Result<(), SqlError> {
    if aliases.len() > available {
        return Err(SqlError::new(
            SqlState::INVALID_COLUMN_REFERENCE,
            format!(
                "WITH query \"{name}\" has {available} columns available but {} columns specified",
                aliases.len()
            ),
        ));
    }
    Ok(())
}

/// The clause around `base UNION [ALL] step` that PostgreSQL does not
/// implement for a recursive item (0A000), if any.
fn recursive_query_tail(query: &ast::Query) -> Option<&'static str> {
    if query.order_by.is_some() {
        return Some("ORDER BY");
    }
    match &query.limit_clause {
        Some(ast::LimitClause::LimitOffset { offset: Some(_), .. }) => return Some("OFFSET"),
        Some(_) => return Some("LIMIT"),
        None => {}
    }
    (!query.locks.is_empty()).then_some("FOR UPDATE/SHARE")
}
