//! Binding window function calls: `f(…) OVER (PARTITION BY … ORDER BY …)`
//! with the default frame (the partition up to the current row's last
//! peer with ORDER BY, all of it without). The calls join the SELECT's
//! window list; expressions refer to their results as `Expr::Window(i)`.

use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType};
use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, FunctionArguments, OrderBySort, WindowType};

use super::function::aggregate_type;
use super::scope::Scope;
use super::{ident, not_supported, Binder, Coercion, Resolver, Typed};
use crate::expr::{AggFunc, Expr, WinFunc};
use crate::plan::{SortKey, WindowCall};

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
        if spec.window_frame.is_some() {
            return Err(not_supported("window frame clauses"));
        }
        let (star, args) = match &f.args {
            FunctionArguments::None => (false, Vec::new()),
            FunctionArguments::List(list) => {
                if list.duplicate_treatment.is_some_and(|d| d == ast::DuplicateTreatment::Distinct) {
                    return Err(not_supported("DISTINCT in window functions"));
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
        let windows = self.query.windows.as_mut().expect("checked above");
        let slot = match windows.iter().position(|w| *w == call) {
            Some(i) => i,
            None => {
                windows.push(call);
                windows.len() - 1
            }
        };
        Ok(Typed { e: Expr::Window(slot), ty: Some(ty) })
    }

    /// The window an OVER clause means: its own specification, a named
    /// window of the query's WINDOW clause, or a named window refined with
    /// an ORDER BY.
    fn resolve_window(&self, over: &WindowType) -> Result<ast::WindowSpec, SqlError> {
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
                    Some(agg) if !matches!(agg, AggFunc::StringAgg | AggFunc::ArrayAgg) => agg,
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
    fn window_over(
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
        Ok(WindowCall { func, arg, more, partition, order, ty })
    }
}
