//! UPDATE … FROM and DELETE … USING: the target table joined with the
//! other FROM items, its rows locked as the join finds them (so that a row
//! changed by a concurrent transaction is re-checked in its newest
//! version against the other items' rows, EPQ), then changed.
//!
//! The join is bound as the query `SELECT <SET values>, <RETURNING items>
//! FROM target AS alias, items… WHERE … FOR NO KEY UPDATE OF alias` (FOR
//! UPDATE for a DELETE), so the SET values and RETURNING items are bound
//! over the same FROM row as the condition; the planner turns it into a
//! LockRows node whose rows carry the target's tid after its row.

use snapscale_engine::{LockMode, RowLockMode};
use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::ast::{self, AssignmentTarget, SelectItem, TableWithJoins};

use super::dml::is_default_keyword;
use super::{ident, not_supported, Binder, Resolver, Typed};
use crate::expr::Expr;
use crate::parse::subscript_targets::split as split_target;
use crate::plan::{Column, ModifyJoin, Plan, Projection, Rel};

impl<R: Resolver> Binder<'_, R> {
    pub(super) fn update_from(&mut self, u: &ast::Update, from: &[TableWithJoins]) -> Result<Plan, SqlError> {
        let (rel, alias) = self.table_factor(&u.table.relation, LockMode::RowExclusive)?;
        let mut targets = Vec::new();
        let mut values = Vec::new();
        let assignments = super::dml::single_assignments(self, &u.assignments)?;
        for a in assignments.iter() {
            let AssignmentTarget::ColumnName(c) = &a.target else {
                return Err(not_supported("multiple-column UPDATE SET"));
            };
            let last = c.0.last().and_then(|p| p.as_ident());
            if last.and_then(split_target).is_some() {
                return Err(not_supported("UPDATE ... FROM of a subscripted column"));
            }
            let n = last.map(ident).unwrap_or_default();
            let pos = rel.entry.column(&n).ok_or_else(|| {
                SqlError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{n}\" of relation \"{}\" does not exist", rel.entry.name),
                )
            })?;
            super::generated::check_writable(&rel.entry.columns[pos], true, is_default_keyword(&a.value))?;
            targets.push((pos, is_default_keyword(&a.value)));
            values.push(if is_default_keyword(&a.value) { "NULL".to_owned() } else { a.value.to_string() });
        }
        let mut join = self.join_query(
            &u.table.relation,
            &alias,
            from,
            u.selection.as_ref(),
            &values,
            u.returning.as_deref(),
            RowLockMode::NoKeyUpdate,
        )?;
        let mut sets = Vec::new();
        for (k, (pos, default)) in targets.into_iter().enumerate() {
            let col = &rel.entry.columns[pos];
            let e = if default {
                self.column_default(col)?
            } else {
                let e = std::mem::replace(&mut join.outputs[k], Expr::Const(snapscale_values::Value::Null));
                let ty = if join.untyped.contains(&k) { None } else { Some(join.columns[k].ty) };
                self.coerce_to_column(Typed { e, ty }, col)?
            };
            sets.push((pos, e));
        }
        let checks = self.table_checks(&rel)?;
        self.modify_join(rel, join, sets, u.returning.is_some(), checks, false)
    }

    pub(super) fn delete_using(
        &mut self,
        d: &ast::Delete,
        target: &TableWithJoins,
        using: &[TableWithJoins],
    ) -> Result<Plan, SqlError> {
        if !target.joins.is_empty() {
            return Err(not_supported("DELETE from a join"));
        }
        let (rel, alias) = self.table_factor(&target.relation, LockMode::RowExclusive)?;
        let join = self.join_query(
            &target.relation,
            &alias,
            using,
            d.selection.as_ref(),
            &[],
            d.returning.as_deref(),
            RowLockMode::Update,
        )?;
        self.modify_join(rel, join, Vec::new(), d.returning.is_some(), Vec::new(), true)
    }

    /// The join as a locking query whose outputs are `values` and then
    /// the RETURNING items.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn join_query(
        &mut self,
        target: &ast::TableFactor,
        alias: &str,
        from: &[TableWithJoins],
        selection: Option<&ast::Expr>,
        values: &[String],
        returning: Option<&[SelectItem]>,
        strength: RowLockMode,
    ) -> Result<JoinQuery, SqlError> {
        let mut items: Vec<String> = values.iter().map(|v| format!("({v})")).collect();
        items.extend(returning.unwrap_or_default().iter().map(ToString::to_string));
        if items.is_empty() {
            items.push("NULL".into());
        }
        let mut sql = format!("SELECT {} FROM {target}", items.join(", "));
        for f in from {
            sql.push_str(&format!(", {f}"));
        }
        if let Some(w) = selection {
            sql.push_str(&format!(" WHERE {w}"));
        }
        sql.push_str(&format!(" FOR UPDATE OF {}", snapscale_values::quote_ident(alias)));
        let mut parsed = crate::parse::parse(&sql, self.stack.limit())?;
        let Some(crate::parse::Parsed::Sql(ast)) = parsed.pop() else {
            return Err(SqlError::new(SqlState::INTERNAL_ERROR, "the join of an UPDATE did not parse"));
        };
        let ast::Statement::Query(q) = &*ast else {
            return Err(SqlError::new(SqlState::INTERNAL_ERROR, "the join of an UPDATE is not a query"));
        };
        self.statement.lock_strengths = Some(vec![strength]);
        // The text bound here is not the user's: its positions are not
        // theirs to report.
        let origin = self.origin.take();
        let select = self.query(q);
        self.origin = origin;
        let select = select?;
        let untyped = std::mem::take(&mut self.query.untyped);
        let columns = select.columns.to_vec();
        let outputs = select.outputs.clone();
        Ok(JoinQuery { select, outputs, columns, untyped, values: values.len() })
    }

    fn modify_join(
        &mut self,
        rel: Rel,
        join: JoinQuery,
        sets: Vec<(usize, Expr)>,
        returning: bool,
        checks: Vec<crate::plan::TableCheck>,
        delete: bool,
    ) -> Result<Plan, SqlError> {
        let JoinQuery { mut select, outputs, columns, values, .. } = join;
        let returning = returning.then(|| Projection {
            exprs: outputs[values..].to_vec(),
            columns: columns[values..].to_vec().into(),
        });
        // The planner remaps the outputs to the locked layout: the SET
        // values, then RETURNING's items.
        select.outputs = sets
            .iter()
            .map(|(_, e)| e.clone())
            .chain(returning.iter().flat_map(|r| r.exprs.clone()))
            .collect();
        let set_columns: Vec<usize> = sets.iter().map(|(c, _)| *c).collect();
        let returning_columns = returning.map(|r| r.columns);
        let foreign_keys = self.foreign_keys_for(&rel, super::foreign_keys::Writes::Change)?;
        Ok(Plan::ModifyJoin(Box::new(ModifyJoin {
            foreign_keys,
            rel,
            query: select,
            set_columns,
            sets: Vec::new(),
            returning: returning_columns.map(|columns| Projection { exprs: Vec::new(), columns }),
            checks,
            delete,
        })))
    }
}

/// The bound join, before its outputs are split.
pub(super) struct JoinQuery {
    pub(super) select: crate::plan::Select,
    pub(super) outputs: Vec<Expr>,
    pub(super) columns: Vec<Column>,
    pub(super) untyped: Vec<usize>,
    values: usize,
}
