//! Binding arrays (`ARRAY[…]`, `ARRAY(SELECT …)`, subscripts, `op ANY/ALL
//! (array)`), regular expression matches and COLLATE.

use snapscale_sqlstate::SqlState;
use snapscale_values::{Elem, SqlError, SqlType};
use sqlparser::ast::{self, AccessExpr, BinaryOperator, Subscript};

use super::coerce::{common_type, comparable, family, Family};
use super::scope::Scope;
use super::{not_supported, Binder, Coercion, Resolver, Typed};
use crate::expr::{Cmp, Expr, Func, SubKind, SubLink};

/// The array type of elements of `ty`, or 0A000.
fn array_of(ty: SqlType) -> Result<SqlType, SqlError> {
    Elem::of(ty).map(SqlType::Array).ok_or_else(|| not_supported(format!("arrays of {}", ty.name())))
}

impl<R: Resolver> Binder<'_, R> {
    /// `ARRAY[a, b, …]`: the elements take one common type.
    #[inline(never)]
    pub(super) fn array(&mut self, a: &ast::Array, scope: &Scope<'_>) -> Result<Typed, SqlError> {
        let mut items = Vec::with_capacity(a.elem.len());
        for e in &a.elem {
            items.push(self.expr(e, scope)?);
        }
        if items.is_empty() {
            return Err(SqlError::new(
                SqlState::INDETERMINATE_DATATYPE,
                "cannot determine type of empty array",
            )
            .with_hint("Explicitly cast to the desired type, for example ARRAY[]::integer[]."));
        }
        let ty = common_type(items.iter().map(|t| t.ty), "ARRAY")?;
        if family(ty) == Family::Array {
            return Err(not_supported("multidimensional arrays"));
        }
        let args = items
            .into_iter()
            .map(|t| self.coerce(t, ty, Coercion::Implicit, "ARRAY"))
            .collect::<Result<_, _>>()?;
        Ok(Typed { e: Expr::Func(Func::ArrayCons, args), ty: Some(array_of(ty)?) })
    }

    /// `ARRAY(SELECT x …)`: the subquery's rows as an array.
    #[inline(never)]
    pub(super) fn array_subquery(&mut self, q: &ast::Query, scope: &Scope<'_>) -> Result<Typed, SqlError> {
        let (plan, args, types) = self.subquery(q, scope)?;
        let [ty] = types[..] else {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "subquery must return only one column"));
        };
        Ok(Typed {
            e: Expr::SubLink(Box::new(SubLink { kind: SubKind::Array, plan, args })),
            ty: Some(array_of(ty)?),
        })
    }

    /// `a[i]` (slices are not supported).
    #[inline(never)]
    pub(super) fn subscript(
        &mut self,
        root: &ast::Expr,
        chain: &[AccessExpr],
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let mut acc = self.expr(root, scope)?;
        for access in chain {
            if let AccessExpr::Dot(ast::Expr::Identifier(field)) = access {
                acc = self.field_of(acc, field)?;
                continue;
            }
            let AccessExpr::Subscript(Subscript::Index { index }) = access else {
                return Err(not_supported(format!("{access}")));
            };
            let Some(ty) = acc.ty else {
                return Err(SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    "cannot subscript type unknown because it is not an array",
                ));
            };
            let Some(elem) = ty.elem() else {
                return Err(SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!("cannot subscript type {} because it does not support subscripting", ty.name()),
                ));
            };
            let i = self.expr(index, scope)?;
            let i = self.coerce(i, SqlType::Int4, Coercion::Implicit, "array subscript")?;
            let from = if matches!(ty, SqlType::Array(_)) { 1 } else { 0 };
            acc = Typed { e: Expr::Func(Func::Subscript { from }, vec![acc.e, i]), ty: Some(elem) };
        }
        Ok(acc)
    }

    /// `lhs op ANY (array)` / `lhs op ALL (array)`.
    pub(super) fn quantified_array(
        &mut self,
        lhs: &ast::Expr,
        op: Cmp,
        all: bool,
        rhs: &ast::Expr,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let left = self.expr(lhs, scope)?;
        let right = self.expr(rhs, scope)?;
        // An unknown array takes the array type of the left side, and an
        // unknown left side the element type of the array.
        let (left, right) = match (left.ty, right.ty) {
            (_, Some(t)) if t.elem().is_none() => {
                return Err(SqlError::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    format!("op ANY/ALL (array) requires array on right side, not {}", t.name()),
                ))
            }
            (None, None) => {
                let ty = array_of(SqlType::Text)?;
                (
                    self.coerce(left, SqlType::Text, Coercion::Implicit, "ANY")?,
                    self.coerce(right, ty, Coercion::Implicit, "ANY")?,
                )
            }
            (Some(l), None) => {
                let ty = array_of(l)?;
                (left.e, self.coerce(right, ty, Coercion::Implicit, "ANY")?)
            }
            (None, Some(t)) => {
                let elem = t.elem().expect("checked");
                (self.coerce(left, elem, Coercion::Implicit, "ANY")?, right.e)
            }
            (Some(l), Some(t)) => {
                let elem = t.elem().expect("checked");
                if !comparable(l, elem) {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!(
                            "operator does not exist: {} {} {}",
                            l.name(),
                            super::coerce::cmp_symbol(op),
                            elem.name()
                        ),
                    ));
                }
                (left.e, right.e)
            }
        };
        let bpchar = false;
        Ok(Typed { e: Expr::Func(Func::Any { op, all, bpchar }, vec![left, right]), ty: Some(SqlType::Bool) })
    }

    /// `a ~ b`, `a ~* b`, `a !~ b`, `a !~* b` (also as OPERATOR(pg_catalog.~)).
    #[inline(never)]
    pub(super) fn regex(
        &mut self,
        l: &ast::Expr,
        op: &BinaryOperator,
        r: &ast::Expr,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let (negated, icase) = match regex_operator(op) {
            Some(x) => x,
            None => return Err(super::expr::unsupported_operator(op)),
        };
        let a = self.expr(l, scope)?;
        let a = self.coerce_any_text(a)?;
        let b = self.expr(r, scope)?;
        let b = self.coerce_any_text(b)?;
        Ok(Typed { e: Expr::Func(Func::Regex { negated, icase }, vec![a, b]), ty: Some(SqlType::Bool) })
    }

    /// `x COLLATE name`: only the collations that sort as bytes, which all
    /// text here does.
    #[inline(never)]
    pub(super) fn collate(
        &mut self,
        e: &ast::Expr,
        collation: &ast::ObjectName,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let name = collation.0.last().and_then(|p| p.as_ident()).map(|i| i.value.clone()).unwrap_or_default();
        if !["default", "C", "POSIX", "ucs_basic"].contains(&name.as_str()) {
            return Err(SqlError::new(
                SqlState::UNDEFINED_OBJECT,
                format!("collation \"{name}\" for encoding \"UTF8\" does not exist"),
            ));
        }
        self.expr(e, scope)
    }
}

impl<R: super::Resolver> Binder<'_, R> {
    /// `(record).field`: of a record of a known shape, or of a value of a
    /// composite type, whose attributes the catalog names.
    fn field_of(&mut self, t: Typed, field: &ast::Ident) -> Result<Typed, SqlError> {
        if let Some(SqlType::Composite(u)) = t.ty {
            let name = super::ident(field);
            let fields = self.composite_fields(u)?;
            let Some(i) = fields.iter().position(|(n, _)| *n == name) else {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{name}\" not found in data type {}", u.name()),
                ));
            };
            return Ok(Typed { e: Expr::Func(Func::Field(i), vec![t.e]), ty: Some(fields[i].1) });
        }
        field_of(t, field)
    }
}

/// `(record).field`.
fn field_of(t: Typed, field: &ast::Ident) -> Result<Typed, SqlError> {
    let name = super::ident(field);
    let Some(SqlType::Record(r)) = t.ty else {
        return Err(SqlError::new(
            SqlState::WRONG_OBJECT_TYPE,
            format!(
                "column notation .{name} applied to type {}, which is not a composite type",
                t.ty.map_or("unknown", SqlType::name)
            ),
        ));
    };
    let fields = r.fields();
    let Some(i) = fields.iter().position(|(n, _)| *n == name) else {
        return Err(SqlError::new(
            SqlState::UNDEFINED_COLUMN,
            format!("could not identify column \"{name}\" in record data type"),
        ));
    };
    Ok(Typed { e: Expr::Func(Func::Field(i), vec![t.e]), ty: Some(fields[i].1) })
}

/// The regular expression operators: (negated, case-insensitive).
pub(super) fn regex_operator(op: &BinaryOperator) -> Option<(bool, bool)> {
    Some(match op {
        BinaryOperator::PGRegexMatch => (false, false),
        BinaryOperator::PGRegexIMatch => (false, true),
        BinaryOperator::PGRegexNotMatch => (true, false),
        BinaryOperator::PGRegexNotIMatch => (true, true),
        BinaryOperator::PGCustomBinaryOperator(parts) => {
            let op = match parts.as_slice() {
                [op] => op.as_str(),
                [schema, op] if schema == "pg_catalog" => op.as_str(),
                _ => return None,
            };
            match op {
                "~" => (false, false),
                "~*" => (false, true),
                "!~" => (true, false),
                "!~*" => (true, true),
                _ => return None,
            }
        }
        _ => return None,
    })
}
