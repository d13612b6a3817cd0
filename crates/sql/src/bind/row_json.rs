//! `row_to_json(row [, pretty])`: a row's fields as a json object keyed
//! by their names. The names are known only here, where the row is
//! bound: a FROM item's whole row (`t`, `t.*`) names its columns, a value
//! of a composite type its attributes.

use snapscale_values::{SqlError, SqlType, Value};
use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, FunctionArguments};

use super::scope::Scope;
use super::{ident, Binder, Coercion, Resolver, Typed};
use crate::expr::{scalar, Expr, Func};

impl<R: Resolver> Binder<'_, R> {
    /// A call of row_to_json whose row's field names are known; `None`
    /// for one left to the usual lookup (and its error).
    pub(super) fn row_to_json(
        &mut self,
        f: &ast::Function,
        scope: &Scope<'_>,
    ) -> Result<Option<Typed>, SqlError> {
        let FunctionArguments::List(list) = &f.args else { return Ok(None) };
        if !list.clauses.is_empty() || list.duplicate_treatment.is_some() || f.over.is_some() {
            return Ok(None);
        }
        let (row, pretty) = match list.args.as_slice() {
            [FunctionArg::Unnamed(row)] => (row, None),
            [FunctionArg::Unnamed(row), FunctionArg::Unnamed(FunctionArgExpr::Expr(p))] => (row, Some(p)),
            _ => return Ok(None),
        };
        let pretty = match pretty {
            None => Expr::Const(Value::Bool(false)),
            Some(p) => {
                let t = self.expr(p, scope)?;
                self.coerce(t, SqlType::Bool, Coercion::Implicit, "argument of row_to_json")?
            }
        };
        let fields: Vec<(String, Expr)> = match row {
            // `t.*`: the FROM item's columns.
            FunctionArgExpr::QualifiedWildcard(name) => {
                let Some(q) = name.0.last().and_then(|p| p.as_ident()).map(ident) else { return Ok(None) };
                scope.wildcard(Some(&q))?.into_iter().map(|c| (c.name, c.expr)).collect()
            }
            FunctionArgExpr::Expr(e) => {
                let t = self.expr(e, scope)?;
                match (t.ty, e) {
                    // A FROM item's name alone: its whole row.
                    (Some(SqlType::Record(_)), ast::Expr::Identifier(id)) => {
                        match scope.wildcard(Some(&ident(id))) {
                            Ok(cols) => cols.into_iter().map(|c| (c.name, c.expr)).collect(),
                            Err(_) => return Ok(None),
                        }
                    }
                    (Some(SqlType::Composite(u)), _) => self
                        .composite_fields(u)?
                        .into_iter()
                        .enumerate()
                        .map(|(i, (n, _))| (n, Expr::Func(Func::Field(i), vec![t.e.clone()])))
                        .collect(),
                    _ => return Ok(None),
                }
            }
            _ => return Ok(None),
        };
        let mut args = Vec::with_capacity(1 + 2 * fields.len());
        args.push(pretty);
        for (name, e) in fields {
            args.push(Expr::Const(Value::Text(name)));
            args.push(e);
        }
        Ok(Some(Typed { e: Expr::Func(Func::Scalar(scalar::ROW_TO_JSON), args), ty: Some(SqlType::Json) }))
    }
}
