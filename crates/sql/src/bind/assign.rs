//! Subscripted assignment targets (`SET a[1:2] = v`, `INSERT INTO t
//! (a[3])`): the column's new value is its old one (an UPDATE's row, NULL
//! for an INSERT, or an earlier target's result for the same column) with
//! the element or slice replaced. The parser folds such a target into one
//! identifier (parse/subscript_targets.rs).

use snapscale_engine::catalog::ColumnDef;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType};
use sqlparser::ast::{self, AccessExpr, Subscript};

use super::coerce::castable;
use super::scope::Scope;
use super::{not_supported, Binder, Coercion, Resolver, Typed};
use crate::expr::{Expr, Func};

impl<R: Resolver> Binder<'_, R> {
    /// `base` with `value` assigned at the subscripts written `subs` (as
    /// `[1:2][3]`) of column `col`.
    pub(super) fn subscript_assignment(
        &mut self,
        col: &ColumnDef,
        subs: &str,
        base: Expr,
        value: Typed,
        scope: &Scope<'_>,
    ) -> Result<Expr, SqlError> {
        let parsed = crate::parse::parse_expr(&format!("x{subs}"), self.stack.limit())?;
        let ast::Expr::CompoundFieldAccess { access_chain, .. } = &parsed else {
            return Err(not_supported(format!("assignment target {}{subs}", col.name)));
        };
        let mut list = Vec::with_capacity(access_chain.len());
        for a in access_chain {
            match a {
                AccessExpr::Subscript(s) => list.push(s),
                AccessExpr::Dot(_) => {
                    return Err(not_supported("assignment to a field of an array element"));
                }
            }
        }
        let list: Vec<&Subscript> = list;
        if col.ty == SqlType::Jsonb {
            let (subs, first_is_int) = self.jsonb_subscripts(&list, scope)?;
            let value = self.coerce(value, SqlType::Jsonb, Coercion::Assignment, "")?;
            let mut args = Vec::with_capacity(subs.len() + 2);
            args.push(base);
            args.extend(subs);
            args.push(value);
            return Ok(Expr::Func(Func::JsonbSubscriptAssign { first_is_int }, args));
        }
        let Some(elem) = col.ty.elem().filter(|_| matches!(col.ty, SqlType::Array(_))) else {
            return Err(SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                format!("cannot subscript type {} because it does not support subscripting", col.ty.name()),
            ));
        };
        let (shape, sub_exprs) = self.subscript_list(&list, scope)?;
        let target = if shape.is_slice() { col.ty } else { elem };
        if let Some(from) = value.ty {
            if from != target && !castable(from, target, Coercion::Assignment) {
                return Err(SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!(
                        "subscripted assignment to \"{}\" requires type {} but expression is of type {}",
                        col.name,
                        target.name(),
                        from.name()
                    ),
                )
                .with_hint("You will need to rewrite or cast the expression."));
            }
        }
        let value = self.coerce(value, target, Coercion::Assignment, "")?;
        let mut args = Vec::with_capacity(sub_exprs.len() + 2);
        args.push(base);
        args.extend(sub_exprs);
        args.push(value);
        Ok(Expr::Func(Func::SubscriptAssign(shape), args))
    }
}
