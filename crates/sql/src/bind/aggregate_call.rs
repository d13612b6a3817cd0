//! Calls of user-defined aggregates (AGGREGATE-CALL in the crate's
//! README): which aggregate a call means (PostgreSQL's rules for
//! overloads and polymorphic arguments, as for functions), and the call
//! bound as a [`UserAgg`] in the SELECT's aggregate slots or window list.
//!
//! The aggregate's polymorphic types are resolved from the call's
//! arguments, its state's with them; its support functions are then bound
//! once for the call's types, each as a call over a row of its own (the
//! state, then the arguments), which the executor builds for each step: a
//! user's function as any call of it (its body a subplan, a PL/pgSQL one
//! called per row), a built-in one as its expression ([`BUILTINS`]).
//!
//! [`BUILTINS`]: super::aggregates::BUILTINS

use std::sync::Arc;

use snapscale_engine::catalog::RelEntry;
use snapscale_engine::routines::{AggSupport, RoutineKind};
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType, Value};
use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, FunctionArguments};

use super::scope::{Col, Scope};
use super::{relation_name, Binder, Coercion, Resolver, Typed};
use crate::expr::{AggFunc, Expr, WinFunc};
use crate::plan::{Aggregate, UserAgg};

/// The name a built-in support function's `$n` argument is bound under.
fn column_name(n: usize) -> String {
    format!("__snapscale_aggregate_argument_{n}")
}

/// 42803 "aggregate function calls cannot be nested" for an aggregate
/// found in an aggregate's arguments.
fn nested(e: SqlError) -> SqlError {
    super::function::nested(e)
}

impl<R: Resolver> Binder<'_, R> {
    /// A call of one of the user's aggregates; `None` when the user has no
    /// aggregate of this name that takes these arguments.
    pub(super) fn user_aggregate(
        &mut self,
        f: &ast::Function,
        scope: &Scope<'_>,
    ) -> Result<Option<Typed>, SqlError> {
        if !f.within_group.is_empty() {
            return Ok(None);
        }
        let Ok(key) = relation_name(&f.name) else { return Ok(None) };
        let aggregates: Vec<Arc<RelEntry>> = self
            .resolver
            .routines(&key)?
            .into_iter()
            .filter(|e| e.routine.as_ref().is_some_and(|r| r.kind == RoutineKind::Aggregate))
            .collect();
        if aggregates.is_empty() {
            return Ok(None);
        }
        let (list, distinct, order_by): (&[FunctionArg], bool, &[ast::OrderByExpr]) = match &f.args {
            FunctionArguments::None => (&[], false, &[]),
            FunctionArguments::List(l) => (
                &l.args,
                l.duplicate_treatment == Some(ast::DuplicateTreatment::Distinct),
                l.clauses
                    .iter()
                    .find_map(|c| match c {
                        ast::FunctionArgumentClause::OrderBy(o) => Some(o.as_slice()),
                        _ => None,
                    })
                    .unwrap_or_default(),
            ),
            FunctionArguments::Subquery(_) => return Ok(None),
        };
        let star = matches!(list, [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)]);
        let list = if star { &[] } else { list };
        let over = f.over.is_some();
        // Aggregates do not nest (a window's arguments may hold them).
        let marks = scope.arg_marks();
        let saved_aggs = if over { None } else { Some(self.query.aggs.take()) };
        let saved_windows = self.query.windows.take();
        let bound = self.call_arguments(list, scope);
        if let Some(aggs) = saved_aggs {
            self.query.aggs = aggs;
        }
        self.query.windows = saved_windows;
        let (positional, named) = bound.map_err(nested)?;
        let Some((entry, args)) = self.choose_routine(&key, &aggregates, positional, named, false)? else {
            return Ok(None);
        };
        let def = entry.routine.as_ref().expect("a routine row");
        let agg = def.aggregate.as_ref().ok_or_else(|| {
            SqlError::new(SqlState::INTERNAL_ERROR, format!("aggregate {} has no definition", entry.name))
        })?;
        if agg.kind != b'n' {
            return Err(SqlError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("WITHIN GROUP is required for ordered-set aggregate {}", entry.name),
            ));
        }
        let inputs = def.input_types();
        if inputs.is_empty() && !star {
            return Err(SqlError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("{}(*) must be used to call a parameterless aggregate function", entry.name),
            ));
        }
        let state = agg.state;
        let trans_types: Vec<SqlType> = std::iter::once(state).chain(inputs.iter().copied()).collect();
        let (trans, trans_ty, trans_strict) = self.support_call(&agg.transfn, &trans_types)?;
        let trans = self.conform(trans, trans_ty, state)?;
        let init = match &agg.init {
            Some(text) => {
                let literal = Typed { e: Expr::Const(Value::Text(text.as_str().into())), ty: None };
                Some(self.coerce(literal, state, Coercion::Explicit, "INITCOND")?)
            }
            None => None,
        };
        let extra = if agg.final_extra { inputs.len() } else { 0 };
        let (finish, ty, finish_strict) = match &agg.finalfn {
            Some(ff) => {
                let types: Vec<SqlType> =
                    std::iter::once(state).chain(inputs[..extra].iter().copied()).collect();
                let (e, ty, strict) = self.support_call(ff, &types)?;
                (Some(e), ty, strict)
            }
            None => (None, state, false),
        };
        let user = UserAgg {
            name: entry.name.clone(),
            args,
            distinct,
            trans,
            trans_strict,
            init,
            finish,
            extra,
            finish_strict,
        };
        if let Some(window) = &f.over {
            if distinct {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "DISTINCT is not implemented for window functions",
                ));
            }
            return self.user_window(user, ty, window, scope).map(Some);
        }
        let mut order = self.aggregate_order(order_by, scope)?;
        if distinct {
            self.distinct_order(&mut order, order_by, &user.args)?;
        }
        let filter = self.aggregate_filter(f.filter.as_deref(), scope)?;
        let aggregate = Aggregate {
            distinct,
            func: AggFunc::User,
            arg: None,
            delimiter: None,
            order,
            filter,
            ty,
            user: Some(Box::new(user)),
        };
        // Whose aggregate it is, and whether one is allowed here
        // (outer_agg.rs).
        let at = f.name.0.first().and_then(|p| p.as_ident()).and_then(|i| {
            let origin = self.origin.as_deref()?;
            origin.position(i.span.start.line, i.span.start.column)
        });
        let e = self.place_aggregate(aggregate, scope, &marks, at)?;
        Ok(Some(Typed { e, ty: Some(ty) }))
    }

    /// The aggregate over a window: a window call whose arguments are its
    /// `more` values.
    fn user_window(
        &mut self,
        user: UserAgg,
        ty: SqlType,
        over: &ast::WindowType,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        if self.query.windows.is_none() {
            return Err(SqlError::new(SqlState::WINDOWING_ERROR, "window functions are not allowed here"));
        }
        let spec = self.resolve_window(over)?;
        let saved = self.query.windows.take();
        let args = user.args.clone();
        let call = self.window_over(WinFunc::Agg(AggFunc::User), None, args, ty, &spec, scope);
        self.query.windows = saved;
        let mut call = call?;
        call.user = Some(Box::new(user));
        let slot = self.window_slot(call);
        Ok(Typed { e: Expr::Window(slot), ty: Some(ty) })
    }

    /// `e` of type `from` as type `to` (a support function's result as the
    /// state's type).
    fn conform(&mut self, e: Expr, from: SqlType, to: SqlType) -> Result<Expr, SqlError> {
        if from == to {
            return Ok(e);
        }
        self.coerce(Typed { e, ty: Some(from) }, to, Coercion::Assignment, "aggregate state")
    }

    /// A call of support function `f` with arguments of types `types`, over
    /// a row of those arguments: its expression, its result's type, and
    /// whether it is strict.
    fn support_call(&mut self, f: &AggSupport, types: &[SqlType]) -> Result<(Expr, SqlType, bool), SqlError> {
        let saved = (self.query.aggs.take(), self.query.windows.take(), self.query.srfs.take());
        let origin = self.origin.take();
        let bound = if f.oid == 0 {
            self.builtin_support_call(&f.name, types)
        } else {
            self.user_support_call(f, types)
        };
        (self.query.aggs, self.query.windows, self.query.srfs) = saved;
        self.origin = origin;
        bound
    }

    fn builtin_support_call(
        &mut self,
        name: &str,
        types: &[SqlType],
    ) -> Result<(Expr, SqlType, bool), SqlError> {
        let Some(b) =
            super::aggregates::BUILTINS.iter().find(|b| b.name == name && b.params.len() == types.len())
        else {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function {name} does not exist"),
            ));
        };
        let mut text = b.body.to_owned();
        for n in (1..=types.len()).rev() {
            text = text.replace(&format!("${n}"), &column_name(n));
        }
        let e = crate::parse::parse_expr(&text, self.stack.limit())?;
        let columns: Vec<Col> = types
            .iter()
            .enumerate()
            .map(|(i, &ty)| Col { name: column_name(i + 1), expr: Expr::Column(i), ty })
            .collect();
        let scope = Scope::empty().with_items(Vec::new(), columns);
        let t = self.expr(&e, &scope)?;
        let ty = t.ty.unwrap_or(SqlType::Text);
        Ok((self.settle(t)?, ty, b.strict))
    }

    fn user_support_call(
        &mut self,
        f: &AggSupport,
        types: &[SqlType],
    ) -> Result<(Expr, SqlType, bool), SqlError> {
        let entry = self.resolver.routine_by_oid(f.oid)?.ok_or_else(|| {
            SqlError::new(SqlState::UNDEFINED_FUNCTION, format!("function {} does not exist", f.name))
        })?;
        let def = entry.routine.as_ref().expect("a routine row");
        let strict = def.strict;
        let entry = if super::polymorphic::is_polymorphic(def) {
            let params = def.input_types();
            let args: Vec<Option<SqlType>> = types.iter().copied().map(Some).collect();
            let resolved = super::polymorphic::resolve(&params, &args).ok_or_else(|| {
                let shown: Vec<&str> = types.iter().map(|t| t.name()).collect();
                SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function {}({}) does not exist", entry.name, shown.join(", ")),
                )
            })?;
            super::polymorphic::concrete(&entry, resolved)?
        } else {
            entry
        };
        let params = entry.routine.as_ref().expect("a routine row").input_types();
        let mut args = Vec::with_capacity(types.len());
        for (i, (&ty, &param)) in types.iter().zip(&params).enumerate() {
            args.push(self.coerce(
                Typed { e: Expr::Column(i), ty: Some(ty) },
                param,
                Coercion::Implicit,
                "argument",
            )?);
        }
        let t = self.routine_expr(entry, args)?;
        let ty = t.ty.unwrap_or(SqlType::Text);
        Ok((t.e, ty, strict))
    }
}
