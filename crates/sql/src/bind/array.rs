//! Binding arrays (`ARRAY[…]`, `ARRAY(SELECT …)`, subscripts, `op ANY/ALL
//! (array)`), regular expression matches and COLLATE.

use snapscale_sqlstate::SqlState;
use snapscale_values::{Elem, SqlError, SqlType, MAX_DIMS};
use sqlparser::ast::{self, AccessExpr, BinaryOperator, Subscript};

use super::expr::is_array;

use super::coerce::{common_type, comparable, family, Family};
use super::scope::Scope;
use super::{not_supported, Binder, Coercion, Resolver, Typed};
use crate::expr::{Cmp, Expr, Func, SubKind, SubLink, Subscripts};

/// The array type of elements of `ty`, or 0A000.
fn array_of(ty: SqlType) -> Result<SqlType, SqlError> {
    Elem::of(ty).map(SqlType::Array).ok_or_else(|| not_supported(format!("arrays of {}", ty.name())))
}

impl<R: Resolver> Binder<'_, R> {
    /// `ARRAY[a, b, …]`: the elements take one common type. Elements
    /// that are arrays make an array of one more dimension.
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
        let nested = items.iter().any(|t| t.ty.is_some_and(|ty| family(ty) == Family::Array));
        if nested {
            let elem = common_type(items.iter().map(|t| t.ty.and_then(|ty| ty.elem())), "ARRAY")?;
            let ty = array_of(elem)?;
            let args = items
                .into_iter()
                .map(|t| self.coerce(t, ty, Coercion::Implicit, "ARRAY"))
                .collect::<Result<_, _>>()?;
            return Ok(Typed { e: Expr::Func(Func::ArrayConsNested, args), ty: Some(ty) });
        }
        let ty = common_type(items.iter().map(|t| t.ty), "ARRAY")?;
        let args = items
            .into_iter()
            .map(|t| self.coerce(t, ty, Coercion::Implicit, "ARRAY"))
            .collect::<Result<_, _>>()?;
        Ok(Typed { e: Expr::Func(Func::ArrayCons, args), ty: Some(array_of(ty)?) })
    }

    /// `a || b` with an array on either side: array || array
    /// (array_cat), array || element (array_append), element || array
    /// (array_prepend); the elements take one common type, and an unknown
    /// literal is an array.
    pub(super) fn array_concat(&mut self, a: Typed, b: Typed) -> Result<Typed, SqlError> {
        let side_elem = |t: &Typed| match t.ty {
            Some(ty) if is_array(ty) => ty.elem(),
            other => other,
        };
        let elem = common_type([side_elem(&a), side_elem(&b)].into_iter(), "||")?;
        let array = Elem::of(elem)
            .map(SqlType::Array)
            .ok_or_else(|| super::not_supported(format!("arrays of {}", elem.name())))?;
        let func = match (
            a.ty.is_some_and(is_array) || a.ty.is_none(),
            b.ty.is_some_and(is_array) || b.ty.is_none(),
        ) {
            (true, true) => Func::ArrayCat,
            (true, false) => Func::ArrayAppend,
            _ => Func::ArrayPrepend,
        };
        let (ta, tb) = match func {
            Func::ArrayCat => (array, array),
            Func::ArrayAppend => (array, elem),
            _ => (elem, array),
        };
        let ea = self.coerce(a, ta, Coercion::Implicit, "operand")?;
        let eb = self.coerce(b, tb, Coercion::Implicit, "operand")?;
        Ok(Typed { e: Expr::Func(func, vec![ea, eb]), ty: Some(array) })
    }

    /// `@>`, `<@` and `&&`: of arrays when either side is one (the other
    /// side, if unknown, of the same type), else jsonb's operators.
    #[inline(never)]
    pub(super) fn containment(
        &mut self,
        l: &ast::Expr,
        op: &BinaryOperator,
        r: &ast::Expr,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let a = self.expr(l, scope)?;
        let b = self.expr(r, scope)?;
        let symbol = op.to_string();
        if !a.ty.is_some_and(is_array) && !b.ty.is_some_and(is_array) {
            let mut bound = vec![a, b];
            if *op == BinaryOperator::PGOverlap {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!(
                        "operator does not exist: {} && {}",
                        bound[0].ty.map_or("unknown", SqlType::name),
                        bound[1].ty.map_or("unknown", SqlType::name)
                    ),
                ));
            }
            return match self.builtin(&symbol, &mut bound)? {
                Some(t) => Ok(t),
                None => Err(super::function::no_such_function(&symbol, &bound)),
            };
        }
        let side_elem = |t: &Typed| t.ty.and_then(|ty| ty.elem());
        let elem = common_type([side_elem(&a), side_elem(&b)].into_iter(), &symbol)?;
        let array = Elem::of(elem)
            .map(SqlType::Array)
            .ok_or_else(|| super::not_supported(format!("arrays of {}", elem.name())))?;
        for t in [&a, &b] {
            if t.ty.is_some_and(|ty| !is_array(ty)) {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!(
                        "operator does not exist: {} {symbol} {}",
                        a.ty.map_or("unknown", SqlType::name),
                        b.ty.map_or("unknown", SqlType::name)
                    ),
                ));
            }
        }
        let ea = self.coerce(a, array, Coercion::Implicit, "operand")?;
        let eb = self.coerce(b, array, Coercion::Implicit, "operand")?;
        let e = match op {
            BinaryOperator::AtArrow => Expr::Func(Func::ArrayContains, vec![ea, eb]),
            BinaryOperator::ArrowAt => Expr::Func(Func::ArrayContains, vec![eb, ea]),
            _ => Expr::Func(Func::ArrayOverlap, vec![ea, eb]),
        };
        Ok(Typed { e, ty: Some(SqlType::Bool) })
    }

    /// `ARRAY(SELECT x …)`: the subquery's rows as an array.
    #[inline(never)]
    pub(super) fn array_subquery(&mut self, q: &ast::Query, scope: &Scope<'_>) -> Result<Typed, SqlError> {
        let (plan, args, types) = self.subquery(q, scope)?;
        let [ty] = types[..] else {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "subquery must return only one column"));
        };
        let (kind, ty) = match ty {
            SqlType::Array(_) => (SubKind::ArrayOfArrays, ty),
            _ => (SubKind::Array, array_of(ty)?),
        };
        Ok(Typed { e: Expr::SubLink(Box::new(SubLink { kind, plan, args })), ty: Some(ty) })
    }

    /// `a[i][j]…` and `a[l:u]…`: consecutive subscripts make one
    /// reference, of an element, or of a slice when any subscript is one.
    #[inline(never)]
    pub(super) fn subscript(
        &mut self,
        root: &ast::Expr,
        chain: &[AccessExpr],
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        // `t.a[1]` and `s.t.a[1]`: the names before the subscripts are a
        // column reference when they name one, else a record's fields.
        let mut rest = chain;
        let mut acc = None;
        if let ast::Expr::Identifier(first) = root {
            let names: Vec<&ast::Ident> = chain
                .iter()
                .map_while(|a| match a {
                    AccessExpr::Dot(ast::Expr::Identifier(i)) => Some(i),
                    _ => None,
                })
                .take(2)
                .collect();
            for n in (1..=names.len()).rev() {
                let mut parts = vec![first.clone()];
                parts.extend(names[..n].iter().map(|i| (*i).clone()));
                match self.expr(&ast::Expr::CompoundIdentifier(parts), scope) {
                    Ok(t) => {
                        acc = Some(t);
                        rest = &chain[n..];
                        break;
                    }
                    Err(e) if matches!(e.code, SqlState::UNDEFINED_COLUMN | SqlState::UNDEFINED_TABLE) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        let mut acc = match acc {
            Some(t) => t,
            None => self.expr(root, scope)?,
        };
        while let Some((access, tail)) = rest.split_first() {
            if let AccessExpr::Dot(ast::Expr::Identifier(field)) = access {
                acc = self.field_of(acc, field)?;
                rest = tail;
                continue;
            }
            let run = rest.iter().take_while(|a| matches!(a, AccessExpr::Subscript(_))).count();
            if run == 0 {
                return Err(not_supported(format!("{access}")));
            }
            let subs: Vec<&Subscript> = rest[..run]
                .iter()
                .map(|a| match a {
                    AccessExpr::Subscript(s) => s,
                    AccessExpr::Dot(_) => unreachable!("counted subscripts"),
                })
                .collect();
            acc = self.subscripted(acc, &subs, scope)?;
            rest = &rest[run..];
        }
        Ok(acc)
    }

    /// One run of subscripts applied to `base`.
    fn subscripted(
        &mut self,
        base: Typed,
        subs: &[&Subscript],
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let Some(ty) = base.ty else {
            return Err(SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                "cannot subscript type unknown because it is not an array",
            ));
        };
        if ty == SqlType::Jsonb {
            let (mut args, _) = self.jsonb_subscripts(subs, scope)?;
            args.insert(0, base.e);
            return Ok(Typed { e: Expr::Func(Func::JsonbSubscript, args), ty: Some(ty) });
        }
        let Some(elem) = ty.elem() else {
            return Err(SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                format!("cannot subscript type {} because it does not support subscripting", ty.name()),
            ));
        };
        let (shape, mut args) = self.subscript_list(subs, scope)?;
        args.insert(0, base.e);
        let result = if shape.is_slice() { ty } else { elem };
        Ok(Typed { e: Expr::Func(Func::Subscript(shape), args), ty: Some(result) })
    }

    /// jsonb's subscripts, each as text (an integer one as its digits),
    /// and whether the first was an integer. Slices, and subscripts of a
    /// type that is neither an integer nor text, are 42804 at the
    /// subscript.
    pub(super) fn jsonb_subscripts(
        &mut self,
        subs: &[&Subscript],
        scope: &Scope<'_>,
    ) -> Result<(Vec<Expr>, bool), SqlError> {
        let origin = self.origin.clone();
        let at = |err: SqlError, e: Option<&ast::Expr>| match e {
            Some(e) => super::expr::locate(origin.as_deref(), err, e),
            None => err,
        };
        let mut out = Vec::with_capacity(subs.len());
        let mut first_is_int = false;
        for (k, s) in subs.iter().enumerate() {
            let index = match s {
                Subscript::Index { index } => index,
                Subscript::Slice { lower_bound, upper_bound, .. } => {
                    let err =
                        SqlError::new(SqlState::DATATYPE_MISMATCH, "jsonb subscript does not support slices");
                    return Err(at(err, upper_bound.as_ref().or(lower_bound.as_ref())));
                }
            };
            let t = self.expr(index, scope)?;
            let e = match t.ty {
                Some(SqlType::Int2 | SqlType::Int4) => {
                    first_is_int |= k == 0;
                    Expr::Cast(Box::new(t.e), SqlType::Text, true)
                }
                None | Some(SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_) | SqlType::Name) => {
                    self.coerce(t, SqlType::Text, Coercion::Implicit, "jsonb subscript")?
                }
                Some(other) => {
                    let err = SqlError::new(
                        SqlState::DATATYPE_MISMATCH,
                        format!("subscript type {} is not supported", other.name()),
                    )
                    .with_hint("jsonb subscript must be coercible to either integer or text.");
                    return Err(at(err, Some(index)));
                }
            };
            out.push(e);
        }
        Ok((out, first_is_int))
    }

    /// The shape and the integer expressions of a subscript list; more
    /// than six subscripts is 54000.
    pub(super) fn subscript_list(
        &mut self,
        subs: &[&Subscript],
        scope: &Scope<'_>,
    ) -> Result<(Subscripts, Vec<Expr>), SqlError> {
        if subs.len() > MAX_DIMS {
            return Err(snapscale_values::too_many_dims(subs.len()));
        }
        let mut shape = Subscripts { count: subs.len() as u8, slices: 0, lowers: 0, uppers: 0 };
        let mut args = Vec::new();
        for (k, s) in subs.iter().enumerate() {
            let bit = 1u8 << k;
            let mut int = |me: &mut Self, e: &ast::Expr| -> Result<(), SqlError> {
                let i = me.expr(e, scope)?;
                args.push(me.coerce(i, SqlType::Int4, Coercion::Implicit, "array subscript")?);
                Ok(())
            };
            match s {
                Subscript::Index { index } => int(self, index)?,
                Subscript::Slice { lower_bound, upper_bound, stride: None } => {
                    shape.slices |= bit;
                    if let Some(l) = lower_bound {
                        shape.lowers |= bit;
                        int(self, l)?;
                    }
                    if let Some(u) = upper_bound {
                        shape.uppers |= bit;
                        int(self, u)?;
                    }
                }
                Subscript::Slice { .. } => return Err(not_supported("array slices with a stride")),
            }
        }
        Ok((shape, args))
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
        // A call of a function whose OUT parameters name its result's
        // fields.
        if let (Some(SqlType::Record(_)), Expr::Called(k) | Expr::Func(Func::PlRow(k), _)) = (t.ty, &t.e) {
            let columns = self
                .statement
                .pl_calls
                .get(*k)
                .and_then(|c| c.routine.routine.as_ref())
                .map(|d| d.result_columns());
            if let Some(columns) = columns.filter(|c| !c.is_empty()) {
                let name = super::ident(field);
                let Some(i) = columns.iter().position(|(n, _)| *n == name) else {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("could not identify column \"{name}\" in record data type"),
                    ));
                };
                return Ok(Typed { e: Expr::Func(Func::Field(i), vec![t.e]), ty: Some(columns[i].1) });
            }
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
