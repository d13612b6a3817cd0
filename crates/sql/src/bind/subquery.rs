//! Binding subqueries used as expressions: `EXISTS (…)`, `(SELECT …)`,
//! `x [NOT] IN (SELECT …)` and `x op ANY|SOME|ALL (SELECT …)`.
//!
//! A subquery is bound in a child scope of the enclosing query's, so it can
//! read the enclosing row's columns (it is then correlated); each such
//! column becomes an argument the enclosing query evaluates and passes in
//! (see `scope.rs`). The bound query joins the statement's list of
//! subqueries, which the planner plans one by one.

use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType};
use sqlparser::ast::{self, BinaryOperator};

use super::coerce::{cmp_symbol, comparable};
use super::scope::Scope;
use super::{not_supported, Binder, Coercion, Resolver, Typed};
use crate::expr::{Cmp, Expr, SubKind, SubLink};

impl<R: Resolver> Binder<'_, R> {
    /// Binds `q` as a subquery of the query `scope` belongs to: its plan
    /// number, its arguments, and its columns' types.
    pub(super) fn subquery(
        &mut self,
        q: &ast::Query,
        scope: &Scope<'_>,
    ) -> Result<(usize, Vec<Expr>, Vec<SqlType>), SqlError> {
        let child = scope.child();
        self.sublink_depth += 1;
        let select = self.enclosing_aggs(scope, |b| b.query_scoped(q, &child));
        self.sublink_depth -= 1;
        let select = select?;
        let args = child.take_args();
        let types = select.columns.iter().map(|c| c.ty).collect();
        self.statement.subqueries.push(select);
        Ok((self.statement.subqueries.len() - 1, args, types))
    }

    #[inline(never)]
    pub(super) fn exists(
        &mut self,
        q: &ast::Query,
        negated: bool,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let (plan, args, _) = self.subquery(q, scope)?;
        let e = Expr::SubLink(Box::new(SubLink { kind: SubKind::Exists, plan, args }));
        let e = if negated { Expr::Not(Box::new(e)) } else { e };
        Ok(Typed { e, ty: Some(SqlType::Bool) })
    }

    #[inline(never)]
    pub(super) fn scalar_subquery(&mut self, q: &ast::Query, scope: &Scope<'_>) -> Result<Typed, SqlError> {
        let (plan, args, types) = self.subquery(q, scope)?;
        let [ty] = types[..] else {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "subquery must return only one column"));
        };
        Ok(Typed { e: Expr::SubLink(Box::new(SubLink { kind: SubKind::Scalar, plan, args })), ty: Some(ty) })
    }

    /// `lhs op ANY (q)` (`all`: ALL); `x IN (q)` is `= ANY`, `x NOT IN (q)`
    /// is `<> ALL`.
    #[inline(never)]
    pub(super) fn quantified_subquery(
        &mut self,
        lhs: &ast::Expr,
        op: Cmp,
        all: bool,
        q: &ast::Query,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let left = self.expr(lhs, scope)?;
        let (plan, args, types) = self.subquery(q, scope)?;
        let [right] = types[..] else {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                if types.len() > 1 {
                    "subquery has too many columns"
                } else {
                    "subquery has too few columns"
                },
            ));
        };
        let left_ty = left.ty;
        let lhs = match left_ty {
            None => self.coerce(left, right, Coercion::Implicit, "operand")?,
            Some(l) if comparable(l, right) => left.e,
            Some(l) => {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("operator does not exist: {} {} {}", l.name(), cmp_symbol(op), right.name()),
                ))
            }
        };
        let bpchar = matches!(left_ty, Some(SqlType::Char(_))) || matches!(right, SqlType::Char(_));
        let kind = if all { SubKind::All { lhs, op, bpchar } } else { SubKind::Any { lhs, op, bpchar } };
        Ok(Typed { e: Expr::SubLink(Box::new(SubLink { kind, plan, args })), ty: Some(SqlType::Bool) })
    }

    /// `x op ANY (…)` / `x op ALL (…)`: over a subquery or an array.
    #[inline(never)]
    pub(super) fn quantified(
        &mut self,
        lhs: &ast::Expr,
        op: &BinaryOperator,
        rhs: &ast::Expr,
        all: bool,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let cmp = match op {
            BinaryOperator::Eq => Cmp::Eq,
            BinaryOperator::NotEq => Cmp::Ne,
            BinaryOperator::Lt => Cmp::Lt,
            BinaryOperator::LtEq => Cmp::Le,
            BinaryOperator::Gt => Cmp::Gt,
            BinaryOperator::GtEq => Cmp::Ge,
            other => return Err(not_supported(format!("operator {other} with ANY or ALL"))),
        };
        let mut rhs = rhs;
        while let ast::Expr::Nested(inner) = rhs {
            rhs = inner;
        }
        match rhs {
            ast::Expr::Subquery(q) => self.quantified_subquery(lhs, cmp, all, q, scope),
            array => self.quantified_array(lhs, cmp, all, array, scope),
        }
    }
}
