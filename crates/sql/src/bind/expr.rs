//! Binding expressions: names, literals, operators and the expression
//! forms (CASE, IN, LIKE, …); the coercion rules they apply are in
//! `coerce.rs`, the functions in `function.rs`.

use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType, Value};
use sqlparser::ast::{self, BinaryOperator, DataType, Ident, UnaryOperator};

use super::coerce::{arith_type, cmp_symbol, common_type, comparable, datetime, wider};
use super::ddl::data_type;
use super::function::niladic;
use super::scope::Scope;
use super::{ident, not_supported, Binder, Coercion, Resolver, Typed};
use crate::expr::{Arith, Cmp, Expr, Func, Step};

impl<R: Resolver> Binder<'_, R> {
    pub(super) fn column(&self, parts: &[&Ident], scope: &Scope<'_>) -> Result<Typed, SqlError> {
        let (qualifier, name) = match parts {
            [c] => (None, ident(c)),
            [q, c] => (Some(ident(q)), ident(c)),
            // schema.table.column: the range-table entry is found by the
            // table's name (its schema is not kept with it).
            [_, q, c] => (Some(ident(q)), ident(c)),
            _ => return Err(not_supported("qualified column names with a schema")),
        };
        let at = parts.first().map(|p| p.span.start).filter(|l| l.line > 0);
        let (e, ty) = scope.column_at(qualifier.as_deref(), &name, at)?;
        Ok(Typed { e, ty: Some(ty) })
    }

    /// Binds an expression. This is the one recursion over sqlparser's
    /// expressions, so it checks `max_stack_depth` and stays a small frame:
    /// each kind of expression is bound in a function of its own, kept out
    /// of line, so that a nest costs only the frames of the kinds it nests.
    pub(super) fn expr(&mut self, e: &ast::Expr, scope: &Scope<'_>) -> Result<Typed, SqlError> {
        use ast::Expr as E;
        self.stack.check()?;
        // Parentheses change nothing once parsed: no recursion for them.
        let mut e = e;
        while let E::Nested(inner) = e {
            e = inner;
        }
        let bound = match e {
            // SQL's niladic functions: keywords, never column names unquoted.
            E::Identifier(i) if i.quote_style.is_none() && niladic(&i.value).is_some() => {
                let func = niladic(&i.value).expect("checked");
                Ok(Typed { e: Expr::Func(func, Vec::new()), ty: Some(SqlType::Text) })
            }
            E::Identifier(i) => self.column(&[i], scope),
            E::CompoundIdentifier(parts) => self.compound_column(parts, scope),
            E::Value(v) => match &v.value {
                ast::Value::Placeholder(p) if self.in_routine => self.routine_param(p, scope),
                other => self.literal(other),
            },
            E::TypedString(ts) => typed_string(ts, self.zone),
            // An error of the text is placed at the text.
            E::Interval(i) => self.interval_literal(i),
            E::Cast { expr, data_type: dt, .. } => self.cast(expr, dt, scope),
            E::AtTimeZone { timestamp, time_zone } => self.at_time_zone_expr(timestamp, time_zone, scope),
            E::Extract { field, expr, .. } => self.extract(field, expr, scope),
            E::UnaryOp { op, expr } => self.unary(op, expr, scope),
            E::BinaryOp { left, op, right } => self.binary(left, op, right, scope),
            E::IsNull(x) => self.is_null(x, false, scope),
            E::IsTrue(x) => self.is_bool(x, Some(true), false, scope),
            E::IsNotTrue(x) => self.is_bool(x, Some(true), true, scope),
            E::IsFalse(x) => self.is_bool(x, Some(false), false, scope),
            E::IsNotFalse(x) => self.is_bool(x, Some(false), true, scope),
            E::IsUnknown(x) => self.is_bool(x, None, false, scope),
            E::IsNotUnknown(x) => self.is_bool(x, None, true, scope),
            E::IsDistinctFrom(a, b) => self.is_distinct(a, b, false, scope),
            E::IsNotDistinctFrom(a, b) => self.is_distinct(a, b, true, scope),
            E::IsNotNull(x) => self.is_null(x, true, scope),
            E::Between { expr, negated, low, high } => self.between(expr, *negated, low, high, scope),
            E::InList { expr, list, negated } => self.in_list(expr, list, *negated, scope),
            E::Like { .. } | E::ILike { .. } | E::SimilarTo { .. } | E::Trim { .. } | E::Overlay { .. } => {
                self.string_syntax(e, scope)
            }
            E::Case { operand, conditions, else_result, .. } => {
                self.case(operand.as_deref(), conditions, else_result.as_deref(), scope)
            }
            E::Substring { expr, substring_from, substring_for, .. } => {
                self.substring(expr, substring_from.as_deref(), substring_for.as_deref(), scope)
            }
            E::Function(f) if is_row(f) => self.row_expr(e, scope),
            E::Function(f) => self.function(f, scope),
            E::Tuple(_) => self.row_expr(e, scope),
            E::Position { expr, r#in } => self.position(expr, r#in, scope),
            E::Ceil { expr, field: ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime) } => {
                self.call_builtin("ceil", &[expr], scope)
            }
            E::Floor { expr, field: ast::CeilFloorKind::DateTimeField(ast::DateTimeField::NoDateTime) } => {
                self.call_builtin("floor", &[expr], scope)
            }
            E::Exists { subquery, negated } => self.exists(subquery, *negated, scope),
            E::Subquery(q) => self.scalar_subquery(q, scope),
            E::InSubquery { expr, subquery, negated } => {
                let op = if *negated { Cmp::Ne } else { Cmp::Eq };
                self.quantified_subquery(expr, op, *negated, subquery, scope)
            }
            E::AnyOp { left, compare_op, right, .. } => {
                self.quantified(left, compare_op, right, false, scope)
            }
            E::AllOp { left, compare_op, right } => self.quantified(left, compare_op, right, true, scope),
            E::Array(a) => self.array(a, scope),
            E::CompoundFieldAccess { root, access_chain } => self.subscript(root, access_chain, scope),
            E::Collate { expr, collation } => self.collate(expr, collation, scope),
            other => Err(unsupported_expression(other)),
        };
        // The innermost expression that failed says where (an error found
        // deeper already has its position).
        match bound {
            Err(err) if err.position.is_none() => Err(locate(self.origin.as_deref(), err, e)),
            other => other,
        }
    }

    #[inline(never)]
    pub(super) fn compound_column(&mut self, parts: &[Ident], scope: &Scope<'_>) -> Result<Typed, SqlError> {
        self.column(&parts.iter().collect::<Vec<_>>(), scope)
    }

    /// `INTERVAL '…' [qualifier]`, an error of the text placed at the text
    /// (out of line: `expr` recurses, and its frame is what bounds nesting).
    #[inline(never)]
    fn interval_literal(&self, i: &ast::Interval) -> Result<Typed, SqlError> {
        interval_literal(i, self.zone).map_err(|err| locate(self.origin.as_deref(), err, &i.value))
    }

    /// `ROW(…)` or `(a, b, …)` (out of line, as `interval_literal`).
    #[inline(never)]
    fn row_expr(&mut self, e: &ast::Expr, scope: &Scope<'_>) -> Result<Typed, SqlError> {
        match super::user_types::row_items(e) {
            Some(items) => self.row_constructor(&items, scope),
            None => Err(unsupported_expression(e)),
        }
    }

    #[inline(never)]
    pub(super) fn cast(
        &mut self,
        e: &ast::Expr,
        dt: &DataType,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let (ty, domain) = self.resolve_type_with_domain(dt)?;
        if let (SqlType::Composite(u), Some(items)) = (ty, super::user_types::row_items(e)) {
            let e = self.row_as_composite(&items, u, scope)?;
            return Ok(Typed { e, ty: Some(ty) });
        }
        // `ARRAY[]::t[]`: the empty array takes its type from the cast.
        if let (ast::Expr::Array(a), SqlType::Array(_)) = (e, ty) {
            if a.elem.is_empty() {
                let empty = Value::Array(std::sync::Arc::new(snapscale_values::Array::empty()));
                return Ok(Typed { e: Expr::Const(empty), ty: Some(ty) });
            }
        }
        // `ARRAY[(1, 2), …]::composite[]`: each row made a value of the
        // type (PostgreSQL's record[] cast to it).
        if let (ast::Expr::Array(a), SqlType::Array(snapscale_values::Elem::Composite(u))) = (e, ty) {
            let e = self.composite_array(a, u, scope)?;
            return Ok(Typed { e, ty: Some(ty) });
        }
        let typmod = super::ddl::typmod_of(dt);
        let t = self.expr(e, scope)?;
        let t = self.qualified_interval_literal(t, ty, typmod)?;
        let e = self.coerce(t, ty, Coercion::Explicit, "cast")?;
        let e = super::coerce::with_typmod(e, typmod);
        let e = match domain {
            Some(d) => self.domain_checked(e, &d)?,
            None => e,
        };
        Ok(Typed { e, ty: Some(ty) })
    }

    /// The elements of `ARRAY[…]` (nested ones for more dimensions), each
    /// a value of composite type `u`.
    fn composite_array(
        &mut self,
        a: &ast::Array,
        u: snapscale_values::UserType,
        scope: &Scope<'_>,
    ) -> Result<Expr, SqlError> {
        let nested = a.elem.iter().any(|x| matches!(x, ast::Expr::Array(_)));
        let mut items = Vec::with_capacity(a.elem.len());
        for x in &a.elem {
            items.push(match x {
                ast::Expr::Array(inner) => self.composite_array(inner, u, scope)?,
                other => match super::user_types::row_items(other) {
                    Some(fields) => self.row_as_composite(&fields, u, scope)?,
                    None => {
                        let t = self.expr(other, scope)?;
                        self.coerce(t, SqlType::Composite(u), Coercion::Explicit, "cast")?
                    }
                },
            });
        }
        Ok(Expr::Func(if nested { Func::ArrayConsNested } else { Func::ArrayCons }, items))
    }

    #[inline(never)]
    pub(super) fn unary(
        &mut self,
        op: &UnaryOperator,
        e: &ast::Expr,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        match op {
            UnaryOperator::Minus => {
                // A negative literal is one constant (so -2147483648 fits int4).
                if let ast::Expr::Value(v) = e {
                    if let ast::Value::Number(n, _) = &v.value {
                        return self.literal(&ast::Value::Number(format!("-{n}"), false));
                    }
                }
                let t = self.expr(e, scope)?;
                let ty = match t.ty {
                    Some(ty @ (SqlType::Int2 | SqlType::Int4 | SqlType::Int8 | SqlType::Float8)) => ty,
                    Some(SqlType::Numeric(_)) => SqlType::Numeric(-1),
                    Some(SqlType::Float4) => SqlType::Float4,
                    Some(SqlType::Interval) => SqlType::Interval,
                    None => SqlType::Int4,
                    Some(other) => {
                        return Err(SqlError::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!("operator does not exist: - {}", other.name()),
                        ))
                    }
                };
                let inner = self.coerce(t, ty, Coercion::Implicit, "operand")?;
                Ok(Typed { e: Expr::Neg(Box::new(inner), ty), ty: Some(ty) })
            }
            UnaryOperator::Plus => self.expr(e, scope),
            // `@ x`, `|/ x`, `||/ x`: abs, sqrt and cbrt.
            UnaryOperator::PGAbs => {
                let t = self.expr(e, scope)?;
                let ty = t.ty.unwrap_or(SqlType::Float8);
                let inner = self.coerce(t, ty, Coercion::Implicit, "operand")?;
                Ok(Typed { e: Expr::Func(Func::Abs, vec![inner]), ty: Some(ty) })
            }
            UnaryOperator::PGSquareRoot => self.call_builtin("sqrt", &[e], scope),
            UnaryOperator::PGCubeRoot => self.call_builtin("cbrt", &[e], scope),
            UnaryOperator::Not => {
                let t = self.expr(e, scope)?;
                let inner = self.coerce(t, SqlType::Bool, Coercion::Implicit, "argument of NOT")?;
                Ok(Typed { e: Expr::Not(Box::new(inner)), ty: Some(SqlType::Bool) })
            }
            other => Err(not_supported(format!("operator {other}"))),
        }
    }

    #[inline(never)]
    pub(super) fn is_null(
        &mut self,
        e: &ast::Expr,
        negated: bool,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let t = self.expr(e, scope)?;
        let inner = self.settle(t)?;
        Ok(Typed { e: Expr::IsNull(Box::new(inner), negated), ty: Some(SqlType::Bool) })
    }

    /// `x IS [NOT] TRUE / FALSE / UNKNOWN`.
    #[inline(never)]
    pub(super) fn is_bool(
        &mut self,
        e: &ast::Expr,
        want: Option<bool>,
        negated: bool,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let t = self.expr(e, scope)?;
        let what = match want {
            Some(true) => "IS TRUE",
            Some(false) => "IS FALSE",
            None => "IS UNKNOWN",
        };
        let inner = self.coerce(t, SqlType::Bool, Coercion::Implicit, &format!("argument of {what}"))?;
        Ok(Typed { e: Expr::Func(Func::IsBool { want, negated }, vec![inner]), ty: Some(SqlType::Bool) })
    }

    /// `a IS [NOT] DISTINCT FROM b`.
    #[inline(never)]
    pub(super) fn is_distinct(
        &mut self,
        a: &ast::Expr,
        b: &ast::Expr,
        negated: bool,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        // Two row constructors: distinct when a pair of their fields is
        // (NULLs alike), as PostgreSQL expands it.
        if let (Some(li), Some(ri)) = (super::user_types::row_items(a), super::user_types::row_items(b)) {
            if li.len() != ri.len() {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    "unequal number of entries in row expressions",
                ));
            }
            let parts = li
                .iter()
                .zip(&ri)
                .map(|(x, y)| self.is_distinct(x, y, negated, scope).map(|t| t.e))
                .collect::<Result<Vec<_>, _>>()?;
            let e = match parts.len() {
                1 => parts.into_iter().next().expect("one pair"),
                _ if negated => Expr::And(parts),
                _ => Expr::Or(parts),
            };
            return Ok(Typed { e, ty: Some(SqlType::Bool) });
        }
        let Expr::Compare(ea, _, eb, bpchar) = self.compare(a, Cmp::Eq, b, scope)? else {
            return Err(unsupported_expression(&ast::Expr::IsDistinctFrom(
                Box::new(a.clone()),
                Box::new(b.clone()),
            )));
        };
        Ok(Typed {
            e: Expr::Func(Func::IsDistinct { negated, bpchar }, vec![*ea, *eb]),
            ty: Some(SqlType::Bool),
        })
    }

    #[inline(never)]
    pub(super) fn between(
        &mut self,
        e: &ast::Expr,
        negated: bool,
        low: &ast::Expr,
        high: &ast::Expr,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let ge = self.compare(e, Cmp::Ge, low, scope)?;
        let le = self.compare(e, Cmp::Le, high, scope)?;
        let both = Expr::And(vec![ge, le]);
        let e = if negated { Expr::Not(Box::new(both)) } else { both };
        Ok(Typed { e, ty: Some(SqlType::Bool) })
    }

    #[inline(never)]
    pub(super) fn in_list(
        &mut self,
        e: &ast::Expr,
        list: &[ast::Expr],
        negated: bool,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let t = self.expr(e, scope)?;
        let mut ty = t.ty;
        let mut bound = Vec::with_capacity(list.len());
        for item in list {
            let it = self.expr(item, scope)?;
            if ty.is_none() {
                ty = it.ty;
            }
            bound.push(it);
        }
        let ty = ty.unwrap_or(SqlType::Text);
        let lhs = self.coerce(t, ty, Coercion::Implicit, "IN")?;
        let mut items = Vec::with_capacity(bound.len());
        for it in bound {
            items.push(self.coerce(it, ty, Coercion::Implicit, "IN")?);
        }
        Ok(Typed { e: Expr::InList(Box::new(lhs), items, negated), ty: Some(SqlType::Bool) })
    }

    /// CASE, searched or simple (`CASE x WHEN v …` is `CASE WHEN x = v …`);
    /// the results take one common type, as PostgreSQL resolves it.
    #[inline(never)]
    pub(super) fn case(
        &mut self,
        operand: Option<&ast::Expr>,
        conditions: &[ast::CaseWhen],
        otherwise: Option<&ast::Expr>,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let operand = operand.map(|o| self.expr(o, scope)).transpose()?;
        let mut whens = Vec::with_capacity(conditions.len());
        let mut results = Vec::with_capacity(conditions.len() + 1);
        for c in conditions {
            let when = match &operand {
                Some(x) => {
                    let v = self.expr(&c.condition, scope)?;
                    self.compare_typed(x.clone(), Cmp::Eq, v)?
                }
                None => {
                    let t = self.expr(&c.condition, scope)?;
                    self.coerce(t, SqlType::Bool, Coercion::Implicit, "argument of CASE/WHEN")?
                }
            };
            whens.push(when);
            results.push(self.expr(&c.result, scope)?);
        }
        results.push(match otherwise {
            Some(e) => self.expr(e, scope)?,
            None => Typed { e: Expr::Const(Value::Null), ty: None },
        });
        // PostgreSQL looks at the ELSE first (it decides for unknowns and
        // comes first in a mismatch's message).
        let (otherwise, branches) = results.split_last().expect("the ELSE is there");
        let ty = common_type(std::iter::once(otherwise).chain(branches).map(|t| t.ty), "CASE")?;
        let mut args = Vec::with_capacity(whens.len() * 2 + 1);
        let mut results = results.into_iter();
        for when in whens {
            args.push(when);
            args.push(self.coerce(results.next().expect("one per WHEN"), ty, Coercion::Implicit, "CASE")?);
        }
        args.push(self.coerce(results.next().expect("the ELSE"), ty, Coercion::Implicit, "CASE")?);
        Ok(Typed { e: Expr::Func(Func::Case, args), ty: Some(ty) })
    }

    /// `position(needle IN haystack)`, of text or of bytea. Out of line:
    /// `expr` recurses, and its frame is what bounds nesting.
    #[inline(never)]
    fn position(
        &mut self,
        needle: &ast::Expr,
        haystack: &ast::Expr,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let mut args = vec![self.expr(needle, scope)?, self.expr(haystack, scope)?];
        match self.builtin("position", &mut args)? {
            Some(t) => Ok(t),
            None => Err(super::function::no_such_function("position", &args)),
        }
    }

    /// jsonb's `||` and `-`.
    #[inline(never)]
    fn jsonb_operator(&mut self, name: &str, a: Typed, b: Typed) -> Result<Typed, SqlError> {
        let mut args = vec![a, b];
        match self.builtin(name, &mut args)? {
            Some(t) => Ok(t),
            None => Err(super::function::no_such_function(name, &args)),
        }
    }

    /// `bytea || bytea`.
    #[inline(never)]
    fn byteacat(&mut self, a: Typed, b: Typed) -> Result<Typed, SqlError> {
        let mut args = vec![a, b];
        Ok(self.builtin("byteacat", &mut args)?.expect("byteacat(bytea, bytea) is a builtin"))
    }

    /// `substring(s FROM start FOR count)` and `substring(s, start, count)`.
    #[inline(never)]
    pub(super) fn substring(
        &mut self,
        e: &ast::Expr,
        from: Option<&ast::Expr>,
        count: Option<&ast::Expr>,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let s = self.expr(e, scope)?;
        let Some(from) = from else {
            return Err(not_supported("substring without FROM"));
        };
        let from = self.expr(from, scope)?;
        let count = count.map(|c| self.expr(c, scope)).transpose()?;
        self.bind_substring(s, from, count)
    }

    pub(super) fn literal(&mut self, v: &ast::Value) -> Result<Typed, SqlError> {
        Ok(match v {
            ast::Value::Number(n, _) => {
                if let Ok(i) = n.parse::<i64>() {
                    let ty = if i32::try_from(i).is_ok() { SqlType::Int4 } else { SqlType::Int8 };
                    Typed { e: Expr::Const(Value::Int(i)), ty: Some(ty) }
                } else {
                    // A fraction, an exponent or an integer beyond bigint:
                    // numeric, as PostgreSQL types it.
                    let ty = SqlType::Numeric(-1);
                    Typed { e: Expr::Const(Value::parse(ty, n)?), ty: Some(ty) }
                }
            }
            ast::Value::SingleQuotedString(s) | ast::Value::EscapedStringLiteral(s) => {
                Typed { e: Expr::Const(Value::Text(s.clone())), ty: None }
            }
            ast::Value::DollarQuotedString(d) => {
                Typed { e: Expr::Const(Value::Text(d.value.clone())), ty: None }
            }
            ast::Value::Boolean(b) => Typed { e: Expr::Const(Value::Bool(*b)), ty: Some(SqlType::Bool) },
            ast::Value::Null => Typed { e: Expr::Const(Value::Null), ty: None },
            ast::Value::Placeholder(p) => {
                let n: usize =
                    p.strip_prefix('$').and_then(|d| d.parse().ok()).filter(|&n| n >= 1).ok_or_else(
                        || SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{p}\"")),
                    )?;
                if n > 65535 {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_PARAMETER,
                        format!("there is no parameter ${n}"),
                    ));
                }
                if self.statement.params.len() < n {
                    self.statement.params.resize(n, None);
                }
                if let Some(SqlType::Enum(u)) = self.statement.params[n - 1] {
                    return self.declared_enum_param(n - 1, u);
                }
                Typed { e: Expr::Param(n - 1), ty: self.statement.params[n - 1] }
            }
            other => return Err(not_supported(format!("literal {other}"))),
        })
    }

    pub(super) fn compare(
        &mut self,
        l: &ast::Expr,
        op: Cmp,
        r: &ast::Expr,
        scope: &Scope<'_>,
    ) -> Result<Expr, SqlError> {
        if let (Some(li), Some(ri)) = (super::user_types::row_items(l), super::user_types::row_items(r)) {
            return self.row_compare(&li, op, &ri, scope);
        }
        let a = self.expr(l, scope)?;
        let b = self.expr(r, scope)?;
        self.compare_typed(a, op, b)
    }

    pub(super) fn compare_typed(&mut self, a: Typed, op: Cmp, b: Typed) -> Result<Expr, SqlError> {
        let ty = match (a.ty, b.ty) {
            (Some(x), Some(y)) => {
                if !comparable(x, y) {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("operator does not exist: {} {} {}", x.name(), cmp_symbol(op), y.name()),
                    ));
                }
                // Dates and timestamps compare as the wider of the two (the
                // values differ in kind; numbers compare across kinds).
                if x != y && datetime(x) && datetime(y) {
                    wider(x, y)
                } else {
                    None
                }
            }
            (Some(x), None) | (None, Some(x)) => Some(x),
            (None, None) => Some(SqlType::Text),
        };
        let bpchar = matches!(a.ty, Some(SqlType::Char(_))) || matches!(b.ty, Some(SqlType::Char(_)));
        let (ea, eb) = match ty {
            Some(t) => {
                let t = if let SqlType::Char(_) | SqlType::Varchar(_) = t { SqlType::Text } else { t };
                (
                    self.coerce(a, t, Coercion::Implicit, "operand")?,
                    self.coerce(b, t, Coercion::Implicit, "operand")?,
                )
            }
            None => (a.e, b.e),
        };
        Ok(Expr::Compare(Box::new(ea), op, Box::new(eb), bpchar))
    }

    /// Two row constructors compared (PostgreSQL's RowCompareExpr): `=`
    /// and `<>` field by field, the orderings left to right up to the
    /// first pair that differs, NULL if a pair it reaches has a NULL.
    #[inline(never)]
    fn row_compare(
        &mut self,
        l: &[&ast::Expr],
        op: Cmp,
        r: &[&ast::Expr],
        scope: &Scope<'_>,
    ) -> Result<Expr, SqlError> {
        if l.len() != r.len() {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "unequal number of entries in row expressions",
            ));
        }
        let l = l.iter().map(|e| self.expr(e, scope)).collect::<Result<Vec<_>, _>>()?;
        let r = r.iter().map(|e| self.expr(e, scope)).collect::<Result<Vec<_>, _>>()?;
        let pair = |b: &mut Self, x: &Typed, c: Cmp, y: &Typed| b.compare_typed(x.clone(), c, y.clone());
        let junction = |mut parts: Vec<Expr>, or: bool| match parts.len() {
            1 => parts.pop().expect("one part"),
            _ if or => Expr::Or(parts),
            _ => Expr::And(parts),
        };
        match op {
            Cmp::Eq | Cmp::Ne => {
                let parts =
                    l.iter().zip(&r).map(|(x, y)| pair(self, x, op, y)).collect::<Result<Vec<_>, _>>()?;
                Ok(junction(parts, op == Cmp::Ne))
            }
            _ => {
                // a1 < b1 OR (a1 = b1 AND (a2 < b2 OR …)), the last pair
                // compared with the operator itself (<= stays <=).
                let strict = match op {
                    Cmp::Le => Cmp::Lt,
                    Cmp::Ge => Cmp::Gt,
                    other => other,
                };
                let n = l.len();
                let mut acc = pair(self, &l[n - 1], op, &r[n - 1])?;
                for k in (0..n - 1).rev() {
                    let first = pair(self, &l[k], strict, &r[k])?;
                    let same = pair(self, &l[k], Cmp::Eq, &r[k])?;
                    acc = Expr::Or(vec![first, Expr::And(vec![same, acc])]);
                }
                Ok(acc)
            }
        }
    }

    #[inline(never)]
    pub(super) fn binary(
        &mut self,
        l: &ast::Expr,
        op: &BinaryOperator,
        r: &ast::Expr,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let cmp = match op {
            BinaryOperator::Eq => Some(Cmp::Eq),
            BinaryOperator::NotEq => Some(Cmp::Ne),
            BinaryOperator::Lt => Some(Cmp::Lt),
            BinaryOperator::LtEq => Some(Cmp::Le),
            BinaryOperator::Gt => Some(Cmp::Gt),
            BinaryOperator::GtEq => Some(Cmp::Ge),
            _ => None,
        };
        match cmp {
            Some(c) => self.comparison(l, c, r, scope),
            None if is_chain_operator(op) => self.chain(l, op, r, scope),
            None if super::array::regex_operator(op).is_some() => self.regex(l, op, r, scope),
            None if *op == BinaryOperator::PGExp => self.exponent(l, r, scope),
            None if matches!(
                op,
                BinaryOperator::AtArrow | BinaryOperator::ArrowAt | BinaryOperator::PGOverlap
            ) =>
            {
                self.containment(l, op, r, scope)
            }
            None if json_operator(op).is_some() => {
                self.call_builtin(json_operator(op).expect("checked"), &[l, r], scope)
            }
            None => Err(unsupported_operator(op)),
        }
    }

    /// `a ^ b`: power(a, b), numeric or double precision as the operands
    /// resolve.
    fn exponent(&mut self, l: &ast::Expr, r: &ast::Expr, scope: &Scope<'_>) -> Result<Typed, SqlError> {
        self.call_builtin("power", &[l, r], scope)
    }

    /// A builtin function written as SQL syntax (`CEIL(x)`, `a ^ b`).
    /// Out of line: `expr` recurses, and its frame is what bounds nesting.
    #[inline(never)]
    fn call_builtin(
        &mut self,
        name: &str,
        args: &[&ast::Expr],
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let mut bound = Vec::with_capacity(args.len());
        for a in args {
            bound.push(self.expr(a, scope)?);
        }
        match self.builtin(name, &mut bound)? {
            Some(t) => Ok(t),
            None => Err(super::function::no_such_function(name, &bound)),
        }
    }

    #[inline(never)]
    pub(super) fn comparison(
        &mut self,
        l: &ast::Expr,
        c: Cmp,
        r: &ast::Expr,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        Ok(Typed { e: self.compare(l, c, r, scope)?, ty: Some(SqlType::Bool) })
    }

    #[inline(never)]
    pub(super) fn chain(
        &mut self,
        l: &ast::Expr,
        op: &BinaryOperator,
        r: &ast::Expr,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        // sqlparser builds `a + b + c` left-deep, ((a + b) + c), however
        // long: walk down the left spine without recursing, then fold the
        // operands left to right. Parentheses on the spine change nothing:
        // `(a + b) * c` folds as a + b, then * c.
        let mut rights = vec![(op, r)];
        let mut leftmost = l;
        loop {
            while let ast::Expr::Nested(inner) = leftmost {
                leftmost = inner;
            }
            match leftmost {
                ast::Expr::BinaryOp { left, op, right } if is_chain_operator(op) => {
                    rights.push((op, right));
                    leftmost = left;
                }
                _ => break,
            }
        }
        let mut acc = self.expr(leftmost, scope)?;
        for (op, right) in rights.into_iter().rev() {
            let b = self.expr(right, scope)?;
            acc = self.chain_step(acc, op, b)?;
        }
        Ok(acc)
    }

    /// `a op b` for one link of a chain: AND/OR join one flat list, and
    /// arithmetic and `||` grow one [`Expr::Chain`].
    #[inline(never)]
    pub(super) fn chain_step(&mut self, a: Typed, op: &BinaryOperator, b: Typed) -> Result<Typed, SqlError> {
        match op {
            BinaryOperator::And | BinaryOperator::Or => {
                let ea = self.coerce(a, SqlType::Bool, Coercion::Implicit, "argument of AND/OR")?;
                let eb = self.coerce(b, SqlType::Bool, Coercion::Implicit, "argument of AND/OR")?;
                Ok(Typed { e: ea.junction(eb, *op == BinaryOperator::Or), ty: Some(SqlType::Bool) })
            }
            BinaryOperator::StringConcat if a.ty.is_some_and(is_array) || b.ty.is_some_and(is_array) => {
                self.array_concat(a, b)
            }
            BinaryOperator::StringConcat
                if a.ty == Some(SqlType::Bytea) && matches!(b.ty, None | Some(SqlType::Bytea))
                    || b.ty == Some(SqlType::Bytea) && a.ty.is_none() =>
            {
                self.byteacat(a, b)
            }
            // jsonb's || and - (delete), bound as its builtins.
            BinaryOperator::StringConcat | BinaryOperator::Minus
                if a.ty == Some(SqlType::Jsonb)
                    || b.ty == Some(SqlType::Jsonb) && *op == BinaryOperator::StringConcat =>
            {
                self.jsonb_operator(if *op == BinaryOperator::Minus { "-" } else { "||" }, a, b)
            }
            BinaryOperator::StringConcat => {
                let ea = self.coerce_any_text(a)?;
                let eb = self.coerce_any_text(b)?;
                Ok(Typed { e: flat(ea).then(Step::Concat(eb)), ty: Some(SqlType::Text) })
            }
            _ => {
                let arith = match op {
                    BinaryOperator::Plus => Arith::Add,
                    BinaryOperator::Minus => Arith::Sub,
                    BinaryOperator::Multiply => Arith::Mul,
                    BinaryOperator::Divide => Arith::Div,
                    _ => Arith::Rem,
                };
                let (ta, tb) = match (a.ty, b.ty) {
                    (Some(x), Some(y)) => (x, y),
                    (Some(x), None) => (x, if x == SqlType::Date { SqlType::Int4 } else { x }),
                    (None, Some(y)) => (y, y),
                    (None, None) => {
                        return Err(SqlError::new(
                            SqlState::AMBIGUOUS_FUNCTION,
                            format!("operator is not unique: unknown {op} unknown"),
                        ))
                    }
                };
                // date ± interval is timestamp ± interval (PostgreSQL's
                // date_pl_interval casts the date).
                let date_interval = matches!(arith, Arith::Add | Arith::Sub)
                    && matches!(
                        (ta, tb),
                        (SqlType::Date, SqlType::Interval) | (SqlType::Interval, SqlType::Date)
                    );
                let (ta, tb) = if date_interval {
                    let ts = |t| if t == SqlType::Date { SqlType::Timestamp } else { t };
                    (ts(ta), ts(tb))
                } else {
                    (ta, tb)
                };
                let result = arith_type(ta, arith, tb).ok_or_else(|| {
                    SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("operator does not exist: {} {op} {}", ta.name(), tb.name()),
                    )
                })?;
                let ea = self.coerce(a, ta, Coercion::Implicit, "operand")?;
                let eb = self.coerce(b, tb, Coercion::Implicit, "operand")?;
                Ok(Typed { e: flat(ea).then(Step::Arith(arith, eb, result)), ty: Some(result) })
            }
        }
    }
}

/// `err` with the position of `e` in the query string: the expression's
/// start, but an operator's own symbol for an operator that does not
/// exist, as PostgreSQL places them. 54001 has none (and its expression
/// may be too deep to walk).
#[cold]
#[inline(never)]
pub(super) fn locate(origin: Option<&crate::statement::Origin>, err: SqlError, e: &ast::Expr) -> SqlError {
    let mut err = err;
    let missing_operator = err.message.starts_with("operator does not exist: ");
    if missing_operator && err.hint.is_none() {
        err.hint = Some(
            "No operator matches the given name and argument types. You might need to add explicit type casts."
                .into(),
        );
    }
    let Some(origin) = origin.filter(|_| err.code != SqlState::STATEMENT_TOO_COMPLEX) else { return err };
    let position = match e {
        // The operator's symbol: the last one before the right operand.
        ast::Expr::BinaryOp { op, right, .. } if missing_operator => {
            start_of(right).and_then(|at| origin.position_before(&op.to_string(), at.line, at.column))
        }
        _ => start_of(e).and_then(|at| origin.position(at.line, at.column)),
    };
    match position {
        Some(p) => err.at_position(p),
        None => err,
    }
}

/// Where an expression starts, found down its left edge without
/// recursion (sqlparser's `Spanned` walks the whole subtree, which a deep
/// expression cannot afford on the error path); `None` where the start is
/// a keyword or a parenthesis sqlparser keeps no location for.
fn start_of(mut e: &ast::Expr) -> Option<sqlparser::tokenizer::Location> {
    use ast::Expr as E;
    loop {
        let at = match e {
            E::Identifier(i) => i.span.start,
            E::CompoundIdentifier(parts) => parts.first()?.span.start,
            E::Value(v) => v.span.start,
            E::Function(f) => f.name.0.first()?.as_ident()?.span.start,
            E::Cast { kind: ast::CastKind::DoubleColon, expr, .. } => {
                e = expr;
                continue;
            }
            E::Cast { expr, .. } => {
                // CAST(x AS t): PostgreSQL places errors of the cast at x.
                e = expr;
                continue;
            }
            E::BinaryOp { left, .. } => {
                e = left;
                continue;
            }
            E::IsNull(x) | E::IsNotNull(x) | E::IsTrue(x) | E::IsFalse(x) => {
                e = x;
                continue;
            }
            _ => return None,
        };
        return (at.line > 0).then_some(at);
    }
}

/// `ROW(…)` (out of line: `expr`'s frame holds no temporary for it).
#[inline(never)]
fn is_row(f: &ast::Function) -> bool {
    matches!(f.name.0.as_slice(), [p] if p.as_ident().is_some_and(|i| i.value.eq_ignore_ascii_case("row")))
}

#[inline(never)]
pub(super) fn unsupported_operator(op: &BinaryOperator) -> SqlError {
    not_supported(format!("operator {op}"))
}

#[inline(never)]
pub(super) fn unsupported_expression(e: &ast::Expr) -> SqlError {
    not_supported(format!("expression {e}"))
}

/// `type 'literal'`: parsed as the type now.
pub(super) fn typed_string(ts: &ast::TypedString, zone: snapscale_values::Style) -> Result<Typed, SqlError> {
    let ty = data_type(&ts.data_type)?;
    let text = match &ts.value.value {
        ast::Value::SingleQuotedString(s) => s.clone(),
        other => other.to_string(),
    };
    // `interval(0) '…'`, `timestamp(2) '…'`: held to the type modifier.
    let v = match (ty, super::ddl::typmod_of(&ts.data_type)) {
        (SqlType::Interval, Some(t)) => snapscale_values::adjust_typmod(
            Value::Interval(snapscale_values::parse_interval_qualified(
                &text,
                &zone,
                snapscale_values::interval_range::of(t),
            )?),
            t,
        )?,
        (_, Some(t)) => snapscale_values::adjust_typmod(Value::parse_in(ty, &text, zone)?, t)?,
        (_, None) => Value::parse_in(ty, &text, zone)?,
    };
    Ok(Typed { e: Expr::Const(v), ty: Some(ty) })
}

/// `INTERVAL '…' [qualifier]`: the text read under the qualifier (a bare
/// number is in its last field) and held to it, as a cast to
/// `interval qualifier` would (`INTERVAL '1' YEAR`, `… DAY TO MINUTE`,
/// `… SECOND(2)`, `… MINUTE TO SECOND(2)`).
fn interval_literal(i: &ast::Interval, zone: snapscale_values::Style) -> Result<Typed, SqlError> {
    use snapscale_values::interval_range::{self as range, DAY, HOUR, MINUTE, MONTH, SECOND, YEAR};
    let text = match &*i.value {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => s.clone(),
            _ => return Err(not_supported(format!("interval literal {i}"))),
        },
        _ => return Err(not_supported(format!("interval literal {i}"))),
    };
    let field = |f: &ast::DateTimeField| -> Result<u32, SqlError> {
        use ast::DateTimeField as F;
        Ok(match f {
            F::Year | F::Years => YEAR,
            F::Month | F::Months => MONTH,
            F::Day | F::Days => DAY,
            F::Hour | F::Hours => HOUR,
            F::Minute | F::Minutes => MINUTE,
            F::Second | F::Seconds => SECOND,
            _ => return Err(not_supported(format!("interval literal {i}"))),
        })
    };
    let range = match (&i.leading_field, &i.last_field) {
        (None, None) => range::FULL,
        (Some(f), None) => field(f)?,
        (Some(a), Some(b)) => {
            let (a, b) = (field(a)?, field(b)?);
            // Every field from the first to the last (YEAR TO MONTH skips
            // nothing; DAY TO SECOND covers hours and minutes).
            let all = [YEAR, MONTH, DAY, HOUR, MINUTE, SECOND];
            let (lo, hi) = match (all.iter().position(|&x| x == a), all.iter().position(|&x| x == b)) {
                (Some(lo), Some(hi)) if lo < hi && !(a == MONTH || (a == YEAR && b != MONTH)) => (lo, hi),
                _ => {
                    return Err(SqlError::new(
                        SqlState::SYNTAX_ERROR,
                        format!("syntax error at or near \"{i}\""),
                    ))
                }
            };
            all[lo..=hi].iter().fold(0, |m, x| m | x)
        }
        (None, Some(_)) => return Err(not_supported(format!("interval literal {i}"))),
    };
    // SECOND(p) as the only field, or … TO SECOND(p).
    let precision = match (&i.leading_field, i.leading_precision, i.fractional_seconds_precision) {
        (Some(ast::DateTimeField::Second), Some(p), None) if i.last_field.is_none() => Some(p),
        (_, _, Some(p)) => Some(p),
        _ => None,
    };
    let iv = snapscale_values::parse_interval_qualified(&text, &zone, range)?;
    let typmod = range::typmod(range, precision.map(|p| p.min(6) as u8));
    let iv = if range == range::FULL && precision.is_none() { iv } else { iv.adjust(typmod) };
    Ok(Typed { e: Expr::Const(Value::Interval(iv)), ty: Some(SqlType::Interval) })
}

/// The json and jsonb operators, by the names their builtin entries have
/// (builtins_json.rs).
fn json_operator(op: &BinaryOperator) -> Option<&'static str> {
    Some(match op {
        BinaryOperator::Arrow => "->",
        BinaryOperator::LongArrow => "->>",
        BinaryOperator::HashArrow => "#>",
        BinaryOperator::HashLongArrow => "#>>",
        BinaryOperator::AtArrow => "@>",
        BinaryOperator::ArrowAt => "<@",
        BinaryOperator::Question => "?",
        BinaryOperator::QuestionPipe => "?|",
        BinaryOperator::QuestionAnd => "?&",
        BinaryOperator::HashMinus => "#-",
        BinaryOperator::AtQuestion => "@?",
        BinaryOperator::AtAt => "@@",
        _ => return None,
    })
}

pub(super) fn is_array(t: SqlType) -> bool {
    matches!(t, SqlType::Array(_))
}

/// Operators that fold left to right into one flat node (see `binary`).
pub(super) fn is_chain_operator(op: &BinaryOperator) -> bool {
    matches!(
        op,
        BinaryOperator::And
            | BinaryOperator::Or
            | BinaryOperator::StringConcat
            | BinaryOperator::Plus
            | BinaryOperator::Minus
            | BinaryOperator::Multiply
            | BinaryOperator::Divide
            | BinaryOperator::Modulo
    )
}

/// A chain's running value converted by a cast stays one chain: the cast
/// becomes a step instead of a node around it.
pub(super) fn flat(e: Expr) -> Expr {
    match e {
        Expr::Cast(inner, ty, explicit) if matches!(*inner, Expr::Chain(..)) => {
            inner.then(Step::Cast(ty, explicit))
        }
        other => other,
    }
}
