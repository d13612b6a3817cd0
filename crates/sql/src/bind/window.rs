//! Binding window function calls: `f(…) OVER (PARTITION BY … ORDER BY …
//! [frame])`, with the default frame (the partition up to the current
//! row's last peer with ORDER BY, all of it without) or a ROWS, RANGE or
//! GROUPS frame checked as PostgreSQL's parser checks it. The calls join
//! the SELECT's window list; expressions refer to their results as
//! `Expr::Window(i)`.

use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType};
use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, FunctionArguments, OrderBySort, WindowType};

use super::function::aggregate_type;
use super::scope::Scope;
use super::{ident, not_supported, Binder, Coercion, Resolver, Typed};
use crate::expr::{AggFunc, Expr, WinFunc};
use crate::plan::{Frame, FrameBound, FrameUnits, SortKey, WindowCall};

impl<R: Resolver> Binder<'_, R> {
    #[inline(never)]
    pub(super) fn window_call(
        &mut self,
        name: &str,
        f: &ast::Function,
        over: &WindowType,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        if self.query.windows.is_none() {
            return Err(SqlError::new(SqlState::WINDOWING_ERROR, "window functions are not allowed here"));
        }
        let spec = self.resolve_window(over)?;
        let spec = &spec;
        let (star, args) = match &f.args {
            FunctionArguments::None => (false, Vec::new()),
            FunctionArguments::List(list) => {
                if list.duplicate_treatment.is_some_and(|d| d == ast::DuplicateTreatment::Distinct) {
                    return Err(SqlError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        "DISTINCT is not implemented for window functions",
                    ));
                }
                let mut star = false;
                let mut args = Vec::new();
                for a in &list.args {
                    match a {
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => args.push(e),
                        FunctionArg::Unnamed(FunctionArgExpr::Wildcard) => star = true,
                        _ => return Err(not_supported(format!("argument {a}"))),
                    }
                }
                (star, args)
            }
            FunctionArguments::Subquery(_) => return Err(not_supported("subqueries as function arguments")),
        };
        // Window calls do not nest; aggregates may appear inside them.
        let saved = self.query.windows.take();
        let bound = self.window_parts(name, star, &args, spec, scope);
        self.query.windows = saved;
        let call = bound?;
        let ty = call.ty;
        let slot = self.window_slot(call);
        Ok(Typed { e: Expr::Window(slot), ty: Some(ty) })
    }

    /// The window an OVER clause means: its own specification, a named
    /// window of the query's WINDOW clause, or a named window refined with
    /// an ORDER BY.
    pub(super) fn resolve_window(&self, over: &WindowType) -> Result<ast::WindowSpec, SqlError> {
        let named = |name: &ast::Ident| -> Result<ast::WindowSpec, SqlError> {
            let wanted = ident(name);
            let def = self.query.named_windows.iter().find(|d| ident(&d.0) == wanted).ok_or_else(|| {
                SqlError::new(SqlState::UNDEFINED_OBJECT, format!("window \"{wanted}\" does not exist"))
            })?;
            match &def.1 {
                ast::NamedWindowExpr::WindowSpec(spec) if spec.window_name.is_none() => Ok(spec.clone()),
                _ => Err(not_supported("a named window defined from another")),
            }
        };
        match over {
            WindowType::NamedWindow(name) => named(name),
            WindowType::WindowSpec(spec) => match &spec.window_name {
                None => Ok(spec.clone()),
                Some(name) => {
                    let mut base = named(name)?;
                    if !spec.partition_by.is_empty() {
                        return Err(SqlError::new(
                            SqlState::WINDOWING_ERROR,
                            format!("cannot override PARTITION BY clause of window \"{}\"", ident(name)),
                        ));
                    }
                    if !spec.order_by.is_empty() {
                        if !base.order_by.is_empty() {
                            return Err(SqlError::new(
                                SqlState::WINDOWING_ERROR,
                                format!("cannot override ORDER BY clause of window \"{}\"", ident(name)),
                            ));
                        }
                        base.order_by = spec.order_by.clone();
                    }
                    base.window_frame = spec.window_frame.clone().or(base.window_frame);
                    Ok(base)
                }
            },
        }
    }

    fn window_parts(
        &mut self,
        name: &str,
        star: bool,
        args: &[&ast::Expr],
        spec: &ast::WindowSpec,
        scope: &Scope<'_>,
    ) -> Result<WindowCall, SqlError> {
        let ranking = match name {
            "row_number" => Some(WinFunc::RowNumber),
            "rank" => Some(WinFunc::Rank),
            "dense_rank" => Some(WinFunc::DenseRank),
            _ => None,
        };
        let relative = match name {
            "percent_rank" => Some(WinFunc::PercentRank),
            "cume_dist" => Some(WinFunc::CumeDist),
            _ => None,
        };
        if let Some(func) = relative {
            if !args.is_empty() || star {
                return Err(no_such(name, args.len()));
            }
            return self.window_over(func, None, Vec::new(), SqlType::Float8, spec, scope);
        }
        if name == "ntile" {
            let [n] = args else { return Err(no_such(name, args.len())) };
            let t = self.expr(n, scope)?;
            let n = self.coerce(t, SqlType::Int4, Coercion::Implicit, "argument of ntile")?;
            return self.window_over(WinFunc::Ntile, None, vec![n], SqlType::Int4, spec, scope);
        }
        if name == "nth_value" {
            let [x, n] = args else { return Err(no_such(name, args.len())) };
            let t = self.expr(x, scope)?;
            let ty = t.ty.unwrap_or(SqlType::Text);
            let arg = self.settle(t)?;
            let t = self.expr(n, scope)?;
            let n = self.coerce(t, SqlType::Int4, Coercion::Implicit, "argument of nth_value")?;
            return self.window_over(WinFunc::NthValue, Some(arg), vec![n], ty, spec, scope);
        }
        let value = match name {
            "lag" => Some(WinFunc::Lag),
            "lead" => Some(WinFunc::Lead),
            "first_value" => Some(WinFunc::FirstValue),
            "last_value" => Some(WinFunc::LastValue),
            _ => None,
        };
        let mut more = Vec::new();
        if let Some(func) = value {
            let shifts = matches!(func, WinFunc::Lag | WinFunc::Lead);
            let ok = if shifts { (1..=3).contains(&args.len()) } else { args.len() == 1 };
            if !ok || star {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function {name} with {} arguments does not exist", args.len()),
                ));
            }
            let t = self.expr(args[0], scope)?;
            let ty = t.ty.unwrap_or(SqlType::Text);
            let arg = self.settle(t)?;
            if let Some(offset) = args.get(1) {
                let t = self.expr(offset, scope)?;
                more.push(self.coerce(t, SqlType::Int4, Coercion::Implicit, "argument of lag/lead")?);
            }
            if let Some(default) = args.get(2) {
                let t = self.expr(default, scope)?;
                more.push(self.coerce(t, ty, Coercion::Implicit, "argument of lag/lead")?);
            }
            return self.window_over(func, Some(arg), more, ty, spec, scope);
        }
        let (func, arg, ty) = match ranking {
            Some(func) if args.is_empty() && !star => (func, None, SqlType::Int8),
            Some(_) => {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function {name} with {} arguments does not exist", args.len()),
                ))
            }
            None => {
                let agg = match AggFunc::named(name, star) {
                    Some(agg) => agg,
                    _ => {
                        return Err(SqlError::new(
                            SqlState::WRONG_OBJECT_TYPE,
                            format!(
                            "OVER specified, but {name} is not a window function nor an aggregate function"
                        ),
                        ))
                    }
                };
                let arg = match (agg, args) {
                    (AggFunc::CountStar, []) => None,
                    (AggFunc::StringAgg, [a, delimiter]) => {
                        // The delimiter, read for each row as it is added.
                        let t = self.expr(delimiter, scope)?;
                        more.push(self.coerce(
                            t,
                            SqlType::Text,
                            Coercion::Implicit,
                            "argument of string_agg",
                        )?);
                        let t = self.expr(a, scope)?;
                        let e =
                            self.coerce(t, SqlType::Text, Coercion::Implicit, "argument of string_agg")?;
                        Some(Typed { e, ty: Some(SqlType::Text) })
                    }
                    (AggFunc::StringAgg, _) => return Err(no_such(name, args.len())),
                    (_, [a]) => Some(self.expr(a, scope)?),
                    _ => {
                        return Err(SqlError::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!("function {name} with {} arguments does not exist", args.len()),
                        ))
                    }
                };
                let ty = aggregate_type(agg, arg.as_ref().map(|t| t.ty.unwrap_or(SqlType::Text)), name)?;
                let arg = arg.map(|t| self.settle(t)).transpose()?;
                (WinFunc::Agg(agg), arg, ty)
            }
        };
        self.window_over(func, arg, more, ty, spec, scope)
    }

    /// The call with its window's PARTITION BY and ORDER BY bound.
    pub(super) fn window_over(
        &mut self,
        func: WinFunc,
        arg: Option<Expr>,
        more: Vec<Expr>,
        ty: SqlType,
        spec: &ast::WindowSpec,
        scope: &Scope<'_>,
    ) -> Result<WindowCall, SqlError> {
        let mut partition = Vec::with_capacity(spec.partition_by.len());
        for p in &spec.partition_by {
            let t = self.expr(p, scope)?;
            partition.push(self.settle(t)?);
        }
        let mut order = Vec::with_capacity(spec.order_by.len());
        for o in &spec.order_by {
            let t = self.expr(&o.expr, scope)?;
            let expr = self.settle(t)?;
            let desc = matches!(o.options.sort, Some(OrderBySort::Desc));
            if matches!(o.options.sort, Some(OrderBySort::Using(_))) {
                return Err(not_supported("ORDER BY USING"));
            }
            order.push(SortKey { expr, desc, nulls_first: o.options.nulls_first.unwrap_or(desc) });
        }
        let frame = match &spec.window_frame {
            None => None,
            Some(f) => Some(self.frame(f, spec, &order, scope)?),
        };
        Ok(WindowCall { func, arg, more, partition, order, ty, frame, user: None })
    }

    /// A frame clause, with PostgreSQL's checks of its bounds.
    fn frame(
        &mut self,
        f: &ast::WindowFrame,
        spec: &ast::WindowSpec,
        order: &[SortKey],
        scope: &Scope<'_>,
    ) -> Result<Frame, SqlError> {
        use ast::WindowFrameBound as B;
        let units = match f.units {
            ast::WindowFrameUnits::Rows => FrameUnits::Rows,
            ast::WindowFrameUnits::Range => FrameUnits::Range,
            ast::WindowFrameUnits::Groups => FrameUnits::Groups,
        };
        let windowing = |m: &str| SqlError::new(SqlState::WINDOWING_ERROR, m.to_owned());
        let end = f.end_bound.clone().unwrap_or(B::CurrentRow);
        match (&f.start_bound, &end) {
            (B::Following(None), _) => return Err(windowing("frame start cannot be UNBOUNDED FOLLOWING")),
            (_, B::Preceding(None)) => return Err(windowing("frame end cannot be UNBOUNDED PRECEDING")),
            (B::CurrentRow, B::Preceding(Some(_))) => {
                return Err(windowing("frame starting from current row cannot have preceding rows"))
            }
            // The shorthand `n FOLLOWING` ends at the current row.
            (B::Following(Some(_)), B::CurrentRow) if f.end_bound.is_none() => {
                return Err(windowing("frame starting from following row cannot end with current row"))
            }
            (B::Following(Some(_)), B::Preceding(Some(_)) | B::CurrentRow) => {
                return Err(windowing("frame starting from following row cannot have preceding rows"))
            }
            _ => {}
        }
        if units == FrameUnits::Groups && order.is_empty() {
            return Err(windowing("GROUPS mode requires an ORDER BY clause"));
        }
        let offsets =
            [&f.start_bound, &end].iter().any(|b| matches!(b, B::Preceding(Some(_)) | B::Following(Some(_))));
        let mut range_key = None;
        if units == FrameUnits::Range && offsets {
            let [key] = spec.order_by.as_slice() else {
                return Err(windowing(
                    "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column",
                ));
            };
            range_key = Some(&key.expr);
        }
        let desc = order.first().is_some_and(|k| k.desc);
        let mut bound_type = None;
        let mut bound = |b: &mut Self, bound: &B| -> Result<FrameBound, SqlError> {
            let (offset, preceding) = match bound {
                B::CurrentRow => return Ok(FrameBound::CurrentRow),
                B::Preceding(None) => return Ok(FrameBound::UnboundedPreceding),
                B::Following(None) => return Ok(FrameBound::UnboundedFollowing),
                B::Preceding(Some(o)) => (o, true),
                B::Following(Some(o)) => (o, false),
            };
            let Some(key) = range_key else {
                // ROWS and GROUPS count rows or peer groups: a bigint.
                let t = b.expr(offset, scope)?;
                let what = if units == FrameUnits::Rows { "argument of ROWS" } else { "argument of GROUPS" };
                let e = b.coerce(t, SqlType::Int8, Coercion::Implicit, what)?;
                return Ok(if preceding {
                    FrameBound::Preceding(e, None)
                } else {
                    FrameBound::Following(e, None)
                });
            };
            // RANGE: the offset's type must be one PostgreSQL's in_range
            // functions take for the ORDER BY's type; the row's value is
            // moved back (PRECEDING) or on (FOLLOWING) in its direction.
            let key_ty = b.expr(key, scope)?.ty;
            let off_ty = b.expr(offset, scope)?.ty;
            let Some(target) = range_offset_type(key_ty, off_ty) else {
                return Err(range_unsupported(key_ty, off_ty));
            };
            let back = preceding != desc;
            let moved = ast::Expr::BinaryOp {
                left: Box::new(ast::Expr::Nested(Box::new(key.clone()))),
                op: if back { ast::BinaryOperator::Minus } else { ast::BinaryOperator::Plus },
                right: Box::new(ast::Expr::Cast {
                    kind: ast::CastKind::DoubleColon,
                    expr: Box::new(ast::Expr::Nested(offset.clone())),
                    data_type: target,
                    format: None,
                }),
            };
            let t = b.expr(&moved, scope).map_err(|_| range_unsupported(key_ty, off_ty))?;
            bound_type = t.ty.or(bound_type);
            let value = b.settle(t)?;
            let t = b.expr(offset, scope)?;
            let offset = b.settle(t)?;
            Ok(if preceding {
                FrameBound::Preceding(offset, Some(value))
            } else {
                FrameBound::Following(offset, Some(value))
            })
        };
        let start = bound(self, &f.start_bound)?;
        let end = bound(self, &end)?;
        let range_key = match (range_key, bound_type) {
            (Some(key), Some(ty)) => {
                let t = self.expr(key, scope)?;
                Some(self.coerce(t, ty, Coercion::Explicit, "RANGE")?)
            }
            _ => None,
        };
        Ok(Frame { units, start, end, range_key })
    }
}

/// The type a RANGE offset is read as for an ORDER BY value of type
/// `key` (PostgreSQL's in_range support: integers by integers, floats by
/// float8, numeric by numeric, date and time types by interval); `None`
/// where there is no such support. An untyped literal takes that type.
fn range_offset_type(key: Option<SqlType>, offset: Option<SqlType>) -> Option<ast::DataType> {
    use SqlType as T;
    let ints = |t: Option<T>| matches!(t, None | Some(T::Int2 | T::Int4 | T::Int8));
    Some(match key? {
        T::Int2 | T::Int4 | T::Int8 if ints(offset) => ast::DataType::BigInt(None),
        T::Float4 | T::Float8 if ints(offset) || matches!(offset, Some(T::Float4 | T::Float8)) => {
            ast::DataType::DoublePrecision
        }
        T::Numeric(_) if ints(offset) || matches!(offset, Some(T::Numeric(_))) => {
            ast::DataType::Numeric(ast::ExactNumberInfo::None)
        }
        T::Date | T::Timestamp | T::TimestampTz | T::Time | T::TimeTz | T::Interval
            if matches!(offset, None | Some(T::Interval)) =>
        {
            ast::DataType::Interval { fields: None, precision: None }
        }
        _ => return None,
    })
}

/// PostgreSQL's 0A000 for a RANGE offset its ORDER BY type cannot move by.
fn range_unsupported(key: Option<SqlType>, offset: Option<SqlType>) -> SqlError {
    let name = |t: Option<SqlType>| t.map_or_else(|| "unknown".to_owned(), |t| t.name().to_string());
    SqlError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        format!(
            "RANGE with offset PRECEDING/FOLLOWING is not supported for column type {} and offset type {}",
            name(key),
            name(offset)
        ),
    )
    .with_hint("Cast the offset value to an appropriate type.")
}

/// 42883 for a window function called with the wrong number of arguments.
fn no_such(name: &str, n: usize) -> SqlError {
    SqlError::new(SqlState::UNDEFINED_FUNCTION, format!("function {name} with {n} arguments does not exist"))
}
