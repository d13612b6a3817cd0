//! Generated columns (GENERATED ALWAYS AS (expr) STORED): the expression
//! is kept as text in the column's definition and bound, like a CHECK
//! constraint, by each statement that writes the table; the writes
//! compute it over the new row (`TableCheck::generated`) after every
//! other column has its value, so a statement never supplies it.

use std::ops::ControlFlow;

use snapscale_engine::catalog::ColumnDef;
use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::ast;

use super::scope::Scope;
use super::{Binder, Resolver};
use crate::expr::Expr;

/// Functions whose result is not fixed by their arguments: PostgreSQL
/// refuses them in a generation expression ("not immutable").
const NOT_IMMUTABLE: &[&str] = &[
    "random",
    "now",
    "clock_timestamp",
    "statement_timestamp",
    "transaction_timestamp",
    "timeofday",
    "nextval",
    "currval",
    "lastval",
    "setval",
    "gen_random_uuid",
    "txid_current",
    "pg_backend_pid",
    "current_setting",
    "to_char",
    "age",
];

impl<R: Resolver> Binder<'_, R> {
    /// Column `pos`'s generation expression over `columns`, of its type,
    /// with PostgreSQL's refusals.
    pub(super) fn generation_expr(&mut self, columns: &[ColumnDef], pos: usize) -> Result<Expr, SqlError> {
        let col = &columns[pos];
        let text = col.generated.as_deref().unwrap_or("NULL");
        for r in crate::parse::column_refs::columns_read(text, columns.iter().map(|c| c.name.as_str())) {
            if columns[r].generated.is_some() {
                return Err(SqlError::new(
                    SqlState::INVALID_OBJECT_DEFINITION,
                    format!(
                        "cannot use generated column \"{}\" in column generation expression",
                        columns[r].name
                    ),
                )
                .with_detail("A generated column cannot reference another generated column."));
            }
        }
        let e = crate::parse::parse_expr(text, self.stack.limit())?;
        if !immutable(&e) {
            return Err(SqlError::new(
                SqlState::INVALID_OBJECT_DEFINITION,
                "generation expression is not immutable",
            ));
        }
        let subqueries = self.statement.subqueries.len();
        let scope = Scope::columns(columns);
        let what = "column generation expressions";
        // The expression is bound from its stored text: positions in it
        // are not the statement's.
        let origin = self.origin.take();
        let typed = self.expr(&e, &scope);
        self.origin = origin;
        let typed = typed.map_err(|err| not_allowed_in(err, what))?;
        if self.statement.subqueries.len() != subqueries {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "cannot use subquery in column generation expression",
            ));
        }
        let col = col.clone();
        self.coerce_to_column(typed, &col)
    }
}

/// An aggregate's or window function's refusal, named for the kind of
/// stored expression `what` (plural: "index expressions") it stood in.
pub(super) fn not_allowed_in(err: SqlError, what: &str) -> SqlError {
    match err.code {
        SqlState::GROUPING_ERROR if err.message.starts_with("aggregate") => {
            SqlError::from(snapscale_values::ErrorData {
                message: format!("aggregate functions are not allowed in {what}"),
                ..err.into_data()
            })
        }
        SqlState::WINDOWING_ERROR => SqlError::from(snapscale_values::ErrorData {
            message: format!("window functions are not allowed in {what}"),
            ..err.into_data()
        }),
        _ => err,
    }
}

/// False if `e` calls a function whose result its arguments do not fix.
pub(super) fn immutable(e: &ast::Expr) -> bool {
    let mut e = e.clone();
    let stop = ast::visit_expressions_mut(&mut e, |x: &mut ast::Expr| match x {
        ast::Expr::Function(f)
            if f.name
                .0
                .last()
                .and_then(|p| p.as_ident())
                .is_some_and(|i| NOT_IMMUTABLE.contains(&i.value.to_lowercase().as_str())) =>
        {
            ControlFlow::Break(())
        }
        _ => ControlFlow::Continue(()),
    });
    stop.is_continue()
}

/// 428C9 for a value written into generated column `col`.
pub(super) fn not_writable(col: &ColumnDef, update: bool) -> SqlError {
    let message = if update {
        format!("column \"{}\" can only be updated to DEFAULT", col.name)
    } else {
        format!("cannot insert a non-DEFAULT value into column \"{}\"", col.name)
    };
    SqlError::new(SqlState::GENERATED_ALWAYS, message)
        .with_detail(format!("Column \"{}\" is a generated column.", col.name))
}

/// 428C9 for a value written into identity column `col` defined GENERATED
/// ALWAYS (an INSERT may say OVERRIDING SYSTEM VALUE).
pub(super) fn identity_not_writable(col: &ColumnDef, update: bool) -> SqlError {
    let detail = format!("Column \"{}\" is an identity column defined as GENERATED ALWAYS.", col.name);
    if update {
        return SqlError::new(
            SqlState::GENERATED_ALWAYS,
            format!("column \"{}\" can only be updated to DEFAULT", col.name),
        )
        .with_detail(detail);
    }
    SqlError::new(
        SqlState::GENERATED_ALWAYS,
        format!("cannot insert a non-DEFAULT value into column \"{}\"", col.name),
    )
    .with_detail(detail)
    .with_hint("Use OVERRIDING SYSTEM VALUE to override.")
}

/// 428C9 if a statement writes a value (not DEFAULT) that column `col`
/// does not take: a generated column, or an identity column GENERATED
/// ALWAYS (an INSERT's OVERRIDING clause is weighed by its caller).
pub(super) fn check_writable(col: &ColumnDef, update: bool, is_default: bool) -> Result<(), SqlError> {
    if is_default {
        return Ok(());
    }
    if col.generated.is_some() {
        return Err(not_writable(col, update));
    }
    if col.identity == Some(snapscale_engine::catalog::Identity::Always) {
        return Err(identity_not_writable(col, update));
    }
    Ok(())
}
