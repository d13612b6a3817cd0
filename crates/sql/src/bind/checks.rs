//! Tables' CHECK constraints: bound when they are declared (to refuse what
//! PostgreSQL refuses), and again over the row by each statement that
//! writes the table.

use snapscale_engine::catalog::ColumnDef;
use snapscale_engine::user_types::CheckDef;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType};
use sqlparser::ast;

use super::scope::{Col, Scope};
use super::{Binder, Coercion, Resolver};
use crate::expr::Expr;
use crate::plan::{Rel, TableCheck};

impl<R: Resolver> Binder<'_, R> {
    /// `rel`'s CHECK constraints bound over its row, in name order (the
    /// order PostgreSQL checks them in, so the first failing one is named).
    pub(super) fn table_checks(&mut self, rel: &Rel) -> Result<Vec<TableCheck>, SqlError> {
        let scope = Scope::columns(&rel.entry.columns);
        let mut out = Vec::with_capacity(rel.entry.checks.len());
        for c in &rel.entry.checks {
            let e = crate::parse::parse_expr(&c.expr, self.stack.limit())?;
            out.push(TableCheck {
                name: c.name.clone(),
                expr: self.check_expr(&e, &scope)?,
                view: false,
                generated: None,
            });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        // Generated columns, computed before the checks (see generated.rs).
        for (i, c) in rel.entry.columns.iter().enumerate() {
            if c.generated.is_some() {
                let expr = self.generation_expr(&rel.entry.columns, i)?;
                out.push(TableCheck { name: c.name.clone(), expr, view: false, generated: Some(i) });
            }
        }
        Ok(out)
    }

    /// A CHECK constraint's expression over the columns `scope` shows, as
    /// a boolean, refusing what a constraint may not hold.
    pub(super) fn check_expr(&mut self, e: &ast::Expr, scope: &Scope<'_>) -> Result<Expr, SqlError> {
        let subqueries = self.statement.subqueries.len();
        let params = self.statement.params.len();
        let typed = self.expr(e, scope).map_err(|err| match err.code {
            SqlState::GROUPING_ERROR if err.message.starts_with("aggregate") => {
                SqlError::from(snapscale_values::ErrorData {
                    message: "aggregate functions are not allowed in check constraints".into(),
                    ..err.into_data()
                })
            }
            _ => err,
        })?;
        if self.statement.subqueries.len() != subqueries {
            return Err(super::expr::locate(
                self.origin.as_deref(),
                SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, "cannot use subquery in check constraint"),
                e,
            ));
        }
        if self.statement.params.len() != params {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "cannot use parameters in check constraints",
            ));
        }
        if typed.ty.is_some_and(|t| t != SqlType::Bool) {
            let ty = typed.ty.map_or("unknown", SqlType::name);
            return Err(super::expr::locate(
                self.origin.as_deref(),
                SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!("argument of CHECK must be type boolean, not type {ty}"),
                ),
                e,
            ));
        }
        self.coerce(typed, SqlType::Bool, Coercion::Implicit, "argument of CHECK")
    }

    /// A new CHECK constraint of table `table` (whose columns are
    /// `columns`): bound to refuse what a constraint may not hold, and
    /// named (PostgreSQL's default name if `given` is `None`) apart from
    /// the constraints in `checks` and the indexes named in `others`.
    pub(super) fn new_check(
        &mut self,
        table: &str,
        columns: &[ColumnDef],
        given: Option<String>,
        check: &ast::CheckConstraint,
        checks: &[CheckDef],
        others: &[String],
    ) -> Result<CheckDef, SqlError> {
        let ast::CheckConstraint { name: _, expr, no_inherit, enforced } = check;
        if *no_inherit {
            return Err(super::not_supported("CHECK ... NO INHERIT"));
        }
        if enforced.is_some() {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"ENFORCED\""));
        }
        let bound = self.check_expr(expr, &Scope::columns(columns))?;
        let taken = |n: &str| checks.iter().any(|c| c.name == n) || others.iter().any(|o| o == n);
        let name = match given {
            // Two of one CREATE TABLE.
            Some(n) if checks.iter().any(|c| c.name == n) => {
                return Err(SqlError::new(
                    SqlState::DUPLICATE_OBJECT,
                    format!("check constraint \"{n}\" already exists"),
                ))
            }
            Some(n) if taken(&n) => {
                return Err(SqlError::new(
                    SqlState::DUPLICATE_OBJECT,
                    format!("constraint \"{n}\" for relation \"{table}\" already exists"),
                ))
            }
            Some(n) => n,
            None => {
                let mut read = bound.columns(&self.stack)?;
                read.sort_unstable();
                read.dedup();
                let column = match read.as_slice() {
                    [c] => Some(columns[*c].name.as_str()),
                    _ => None,
                };
                check_name(table, column, &taken)
            }
        };
        Ok(CheckDef { name, expr: expr.to_string(), validated: true })
    }
}

/// PostgreSQL's name for an unnamed CHECK constraint: `table_col_check`
/// when it reads one column, `table_check` otherwise, with the first
/// number appended to the label (`check1`, `check2`, …) that makes it a
/// name `taken` says is free.
pub(super) fn check_name(table: &str, column: Option<&str>, taken: &dyn Fn(&str) -> bool) -> String {
    (0..)
        .map(|k| {
            let label = if k == 0 { "check".to_owned() } else { format!("check{k}") };
            super::ddl::object_name(table, column, &label)
        })
        .find(|n| !taken(n))
        .expect("some number is free")
}

impl Scope<'static> {
    /// The columns of a table being defined or altered, by name.
    pub fn columns(columns: &[ColumnDef]) -> Scope<'static> {
        let visible = columns
            .iter()
            .enumerate()
            .map(|(i, c)| Col { name: c.name.clone(), expr: Expr::Column(i), ty: c.ty })
            .collect();
        Scope::empty().with_items(Vec::new(), visible)
    }
}
