//! Calls of user-defined SQL functions (ROUTINE-CALL in the crate's
//! README): which function a call means, by PostgreSQL's rules for
//! overloads, named arguments, defaults and VARIADIC; and the call bound
//! as its body's subplan — a [`SubKind::Call`] in an expression, a LATERAL
//! subquery in FROM.
//!
//! A call is tried against the user's functions before the built-in ones
//! when a function of its name exists; one that matches none of them is
//! left to the built-ins. (PostgreSQL weighs both together: a user
//! function that takes exactly what a built-in takes only after a cast is
//! chosen here, as there; one that ties a built-in is chosen here, where
//! PostgreSQL would find the call ambiguous.)

use std::sync::Arc;

use snapscale_engine::catalog::RelEntry;
use snapscale_engine::routines::{ArgMode, RoutineDef, RoutineKind, Volatility};
use snapscale_sqlstate::SqlState;
use snapscale_values::{Elem, Poly, Rec, SqlError, SqlType, Value};
use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, FunctionArguments};

use super::from::{rename, Item};
use super::scope::{Col, Named, Scope};
use super::{not_supported, relation_name, Binder, Coercion, Resolver, Typed};
use crate::expr::{CallResult, Expr, Func, RoutineCall, SubKind, SubLink};
use crate::parse::variadic_syntax::VARIADIC_ARG;
use crate::plan::{Column, From, Join, JoinKind, Select};

/// The function a call means, with its parameters' values in order.
type Chosen = (Arc<RelEntry>, Vec<Expr>);

/// Where a parameter's value comes from in a call.
enum Source {
    /// The call's positional argument i, or its named argument i.
    Positional(usize),
    Named(usize),
    /// The parameter's DEFAULT.
    Default,
    /// VARIADIC: the positional arguments from i on, as an array.
    Variadic(usize),
}

/// A function that takes the call's arguments: how well (how many of them
/// it takes without a conversion), and where each parameter's value is.
struct Candidate {
    entry: Arc<RelEntry>,
    exact: usize,
    sources: Vec<Source>,
    /// What its polymorphic parameters stand for in this call.
    resolved: Option<super::polymorphic::Resolved>,
}

impl<R: Resolver> Binder<'_, R> {
    /// A call of a user-defined function in an expression; `None` when no
    /// function of the user's takes these arguments.
    pub(super) fn routine_call(
        &mut self,
        f: &ast::Function,
        scope: &Scope<'_>,
    ) -> Result<Option<Typed>, SqlError> {
        if f.over.is_some() || f.filter.is_some() || !f.within_group.is_empty() {
            return Ok(None);
        }
        let FunctionArguments::List(list) = &f.args else {
            return Ok(None);
        };
        if !list.clauses.is_empty() || list.duplicate_treatment.is_some() {
            return Ok(None);
        }
        let Ok(key) = relation_name(&f.name) else { return Ok(None) };
        let candidates = self.functions_named(&key)?;
        if candidates.is_empty() {
            // A procedure's name: PostgreSQL's 42809.
            let procedures: Vec<_> = self
                .resolver
                .routines(&key)?
                .into_iter()
                .filter(|e| e.routine.as_ref().is_some_and(|r| r.kind == RoutineKind::Procedure))
                .collect();
            if !procedures.is_empty() {
                let (positional, named) = self.call_arguments(&list.args, scope)?;
                let shown: Vec<String> = positional
                    .iter()
                    .map(|t| t.ty.map_or("unknown", SqlType::name).to_owned())
                    .chain(
                        named
                            .iter()
                            .map(|(n, t)| format!("{n} => {}", t.ty.map_or("unknown", SqlType::name))),
                    )
                    .collect();
                return Err(SqlError::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    format!("{}({}) is a procedure", snapscale_engine::names::bare(&key), shown.join(", ")),
                )
                .with_hint("To call a procedure, use CALL."));
            }
            return Ok(None);
        }
        let (positional, named) = self.call_arguments(&list.args, scope)?;
        let with_names = !named.is_empty();
        let shown = shown_arguments(&positional, &named);
        let Some((entry, args)) = self.choose_routine(&key, &candidates, positional, named, false)? else {
            // The built-in functions take no named arguments: the call is
            // the user's, and matches none of theirs.
            if with_names {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function {}({}) does not exist", snapscale_engine::names::bare(&key), shown.join(", ")),
                )
                .with_hint(
                    "No function matches the given name and argument types. You might need to add explicit type casts.",
                ));
            }
            return Ok(None);
        };
        self.routine_expr(entry, args).map(Some)
    }

    /// CALL procedure(args): the procedure, and its arguments, which may be
    /// constants and parameters (it runs as the session's own step).
    pub(super) fn call_procedure(&mut self, f: &ast::Function) -> Result<crate::plan::Plan, SqlError> {
        let key = relation_name(&f.name)?;
        let name = snapscale_engine::names::bare(&key);
        let all = self.resolver.routines(&key)?;
        let procedures: Vec<Arc<RelEntry>> = all
            .iter()
            .filter(|e| e.routine.as_ref().is_some_and(|r| r.kind == RoutineKind::Procedure))
            .cloned()
            .collect();
        let args: &[FunctionArg] = match &f.args {
            FunctionArguments::List(list) => &list.args,
            _ => &[],
        };
        let (positional, named) = self.call_arguments(args, &Scope::empty())?;
        let shown: Vec<String> = positional
            .iter()
            .map(|t| t.ty.map_or("unknown", SqlType::name).to_owned())
            .chain(named.iter().map(|(n, t)| format!("{n} => {}", t.ty.map_or("unknown", SqlType::name))))
            .collect();
        // A function by that name that takes these arguments, the user's
        // or a built-in one (an aggregate too): bound as an expression to
        // find out.
        let is_function = |b: &mut Self, f: &ast::Function| -> Result<bool, SqlError> {
            match b.expr(&ast::Expr::Function(f.clone()), &Scope::empty()) {
                Ok(_) => Ok(true),
                // 42809: the name is a procedure's (which CALL did not
                // match).
                Err(e) if matches!(e.code, SqlState::UNDEFINED_FUNCTION | SqlState::WRONG_OBJECT_TYPE) => {
                    Ok(false)
                }
                Err(e) if e.code == SqlState::STATEMENT_TOO_COMPLEX => Err(e),
                Err(_) => Ok(true),
            }
        };
        let missing = |b: &mut Self, f: &ast::Function| -> Result<SqlError, SqlError> {
            Ok(if is_function(b, f)? {
                SqlError::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    format!("{name}({}) is not a procedure", shown.join(", ")),
                )
                .with_hint("To call a function, use SELECT.")
            } else {
                SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("procedure {name}({}) does not exist", shown.join(", ")),
                )
                .with_hint(
                    "No procedure matches the given name and argument types. You might need to add explicit type casts.",
                )
            })
        };
        let Some((routine, args)) = self.choose_routine(&key, &procedures, positional, named, true)? else {
            let err = missing(self, f)?;
            return Err(self.at_name(err, &f.name));
        };
        for a in &args {
            let mut varies = false;
            a.visit(&self.stack, &mut |e| varies |= matches!(e, Expr::SubLink(_)))?;
            if varies {
                return Err(not_supported("subqueries in CALL's arguments"));
            }
        }
        Ok(crate::plan::Plan::Utility(crate::plan::Utility::Call { routine, args }))
    }

    /// The user's functions (not procedures) that `key` names (the one
    /// CREATE FUNCTION is making first, for its body's calls of itself).
    fn functions_named(&mut self, key: &str) -> Result<Vec<Arc<RelEntry>>, SqlError> {
        let making = self.creating.iter().filter(|e| e.name == snapscale_engine::names::bare(key)).cloned();
        let mut found: Vec<Arc<RelEntry>> = making.collect();
        found.extend(
            self.resolver
                .routines(key)?
                .into_iter()
                .filter(|e| e.routine.as_ref().is_some_and(|r| r.kind == RoutineKind::Function)),
        );
        Ok(found)
    }

    /// A call's arguments bound in `scope`: the positional ones, then the
    /// named ones (`name => value`), which must follow them.
    #[allow(clippy::type_complexity)]
    pub(super) fn call_arguments(
        &mut self,
        args: &[FunctionArg],
        scope: &Scope<'_>,
    ) -> Result<(Vec<Typed>, Vec<(String, Typed)>), SqlError> {
        let mut positional = Vec::new();
        let mut named: Vec<(String, Typed)> = Vec::new();
        for a in args {
            match super::function::named_arg(a) {
                Some((n, e)) => {
                    if named.iter().any(|(m, _)| *m == n) {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            format!("argument name \"{n}\" used more than once"),
                        ));
                    }
                    let t = self.expr(e, scope)?;
                    named.push((n, t));
                }
                None => {
                    let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = a else {
                        return Err(not_supported(format!("argument {a}")));
                    };
                    if !named.is_empty() {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            "positional argument cannot follow named argument",
                        ));
                    }
                    positional.push(self.expr(e, scope)?);
                }
            }
        }
        Ok((positional, named))
    }

    /// The function among `candidates` the call means, with its parameters'
    /// values in order; `None` if none takes the arguments; 42725 if
    /// several take them equally well. `with_outputs`: the call gives its
    /// output parameters an argument too (CALL), which is checked against
    /// the parameter's type and dropped.
    pub(super) fn choose_routine(
        &mut self,
        key: &str,
        candidates: &[Arc<RelEntry>],
        positional: Vec<Typed>,
        named: Vec<(String, Typed)>,
        with_outputs: bool,
    ) -> Result<Option<Chosen>, SqlError> {
        let mut fits: Vec<Candidate> = Vec::new();
        let mut signatures: Vec<Vec<SqlType>> = Vec::new();
        for entry in candidates {
            let def = entry.routine.as_ref().expect("a routine row");
            // One earlier on the search_path with the same inputs hides it.
            let inputs = def.input_types();
            if signatures.contains(&inputs) {
                continue;
            }
            signatures.push(inputs);
            if let Some(c) = fit(entry, def, &positional, &named, with_outputs) {
                fits.push(c);
            }
        }
        let Some(best) = fits.iter().map(|c| c.exact).max() else { return Ok(None) };
        let mut best_fits: Vec<Candidate> = fits.into_iter().filter(|c| c.exact == best).collect();
        if best_fits.len() > 1 {
            // An unknown literal prefers a parameter of the string category.
            let unknown: Vec<usize> =
                positional.iter().enumerate().filter(|(_, t)| t.ty.is_none()).map(|(i, _)| i).collect();
            let stringy = |c: &Candidate| {
                let def = c.entry.routine.as_ref().expect("a routine row");
                let inputs: Vec<SqlType> = def.input_types();
                !unknown.is_empty()
                    && unknown.iter().all(|&i| {
                        inputs.get(i).is_some_and(|t| {
                            matches!(
                                t,
                                SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_) | SqlType::Name
                            )
                        })
                    })
            };
            if best_fits.iter().filter(|c| stringy(c)).count() == 1 {
                best_fits.retain(stringy);
            }
        }
        // A call a function takes as written beats one that spreads its
        // arguments into a VARIADIC array (PostgreSQL's candidates).
        if best_fits.len() > 1 && best_fits.iter().any(|c| !spreads(c)) {
            best_fits.retain(|c| !spreads(c));
        }
        if best_fits.len() > 1 {
            let name = snapscale_engine::names::bare(key);
            let mut all: Vec<Typed> = positional;
            all.extend(named.into_iter().map(|(_, t)| t));
            return Err(super::function::not_unique(&name, &all));
        }
        let mut chosen = best_fits.pop().expect("one");
        if let Some(r) = chosen.resolved {
            chosen.entry = super::polymorphic::concrete(&chosen.entry, r)?;
        }
        let def = chosen.entry.routine.as_ref().expect("a routine row");
        let inputs: Vec<_> = def.args.iter().filter(|a| with_outputs || a.mode.is_input()).collect();
        let mut positional: Vec<Option<Typed>> = positional.into_iter().map(Some).collect();
        let mut named: Vec<Option<Typed>> = named.into_iter().map(|(_, t)| Some(t)).collect();
        let mut args = Vec::with_capacity(inputs.len());
        for (param, source) in inputs.iter().zip(&chosen.sources) {
            let e = match source {
                Source::Positional(i) => {
                    let t = positional[*i].take().expect("used once");
                    self.coerce(t, param.ty, Coercion::Implicit, "argument")?
                }
                Source::Named(i) => {
                    let t = named[*i].take().expect("used once");
                    self.coerce(t, param.ty, Coercion::Implicit, "argument")?
                }
                Source::Default => {
                    let text = param.default.as_deref().expect("a default");
                    let e = parse_expr(text, self.stack.limit())?;
                    let t = self.expr(&e, &Scope::empty())?;
                    self.coerce(t, param.ty, Coercion::Assignment, "DEFAULT")?
                }
                Source::Variadic(from) => {
                    let elem = param.ty.elem().expect("VARIADIC is an array");
                    let mut items = Vec::new();
                    for slot in &mut positional[*from..] {
                        let t = slot.take().expect("used once");
                        items.push(self.coerce(t, elem, Coercion::Implicit, "argument")?);
                    }
                    Expr::Func(Func::ArrayCons, items)
                }
            };
            // An output parameter's argument is not passed (nor run).
            if param.mode.is_input() {
                args.push(e);
            }
        }
        Ok(Some((chosen.entry, args)))
    }

    /// A call of `entry` with its parameters' values `args`, as an
    /// expression: its body as a subplan run with them.
    pub(super) fn routine_expr(&mut self, entry: Arc<RelEntry>, args: Vec<Expr>) -> Result<Typed, SqlError> {
        let def = entry.routine.as_ref().expect("a routine row");
        if runs_before(def, self.stack.limit())? {
            if def.returns_set {
                // Its rows (an array of records) read as a set-returning
                // function's in the select list.
                if self.query.srfs.is_none() {
                    return Err(SqlError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        "set-returning functions are not allowed here",
                    ));
                }
                let multi = def.result_columns().len() > 1;
                let ty = if multi && !matches!(def.returns, SqlType::Composite(_)) {
                    SqlType::Record(Rec::Anonymous)
                } else {
                    def.returns
                };
                let call = self.pl_call(entry, args, false)?;
                let srfs = self.query.srfs.as_mut().expect("checked above");
                srfs.push(crate::plan::SrfCall { func: crate::plan::Srf::Records, args: vec![call.e], ty });
                return Ok(Typed { e: Expr::SetFunc(srfs.len() - 1), ty: Some(ty) });
            }
            return self.pl_call(entry, args, false);
        }
        let multi = def.result_columns().len() > 1;
        let result = match (def.returns_set, def.returns) {
            (true, _) => CallResult::Set,
            (false, SqlType::Void) => CallResult::Void,
            (false, _) => CallResult::Value,
        };
        let call =
            RoutineCall { strict: def.strict, volatile: def.volatility == Volatility::Volatile, result };
        let plan = self.routine_plan(&entry)?;
        let link = Expr::SubLink(Box::new(SubLink { kind: SubKind::Call(call), plan, args }));
        let composite = matches!(def.returns, SqlType::Composite(_));
        if !def.returns_set {
            let ty = if multi && !composite { SqlType::Record(Rec::Anonymous) } else { def.returns };
            return Ok(Typed { e: link, ty: Some(ty) });
        }
        // A set in the select list: the rows as an array, unnested.
        if self.query.srfs.is_none() {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "set-returning functions are not allowed here",
            ));
        }
        // Rows of several columns (or a record's): the set's records, each
        // a record value.
        let records = multi || def.returns == SqlType::Record(Rec::Anonymous);
        if records {
            let ty = if composite { def.returns } else { SqlType::Record(Rec::Anonymous) };
            let srfs = self.query.srfs.as_mut().expect("checked above");
            srfs.push(crate::plan::SrfCall { func: crate::plan::Srf::Records, args: vec![link], ty });
            return Ok(Typed { e: Expr::SetFunc(srfs.len() - 1), ty: Some(ty) });
        }
        let elem = Elem::of(def.returns);
        let Some(elem) = elem else {
            return Err(not_supported(format!(
                "a function returning a set of {} in the select list (call it in FROM)",
                def.returns.name()
            )));
        };
        let array = Typed { e: link, ty: Some(SqlType::Array(elem)) };
        let Some((func, args, ty)) = self.set_function("unnest", vec![array])? else {
            return Err(SqlError::new(SqlState::INTERNAL_ERROR, "unnest is not a set-returning function"));
        };
        let srfs = self.query.srfs.as_mut().expect("checked above");
        srfs.push(crate::plan::SrfCall { func, args, ty });
        Ok(Typed { e: Expr::SetFunc(srfs.len() - 1), ty: Some(ty) })
    }

    /// A call of a PL/pgSQL function (PL-CALLS): run before the statement,
    /// so only where that is the same as running it where it stands — its
    /// arguments the same for every row, and, for a VOLATILE function,
    /// the select list of a top-level SELECT without FROM (evaluated once).
    fn pl_call(&mut self, entry: Arc<RelEntry>, args: Vec<Expr>, in_from: bool) -> Result<Typed, SqlError> {
        let def = entry.routine.as_ref().expect("a routine row");
        let name = entry.name.clone();
        let per_row = self.pl_per_row(def, &args)?;
        if per_row && in_from {
            // FROM reads the call's rows once, before the items beside it.
            return Err(not_supported(format!(
                "calling function {name}, which runs statements, in FROM with arguments that differ from row \
                 to row, or VOLATILE in a subquery (yet)"
            )));
        }
        if per_row && self.in_routine {
            return Err(not_supported(format!(
                "calling function {name}, which runs statements, from a SQL function with arguments that \
                 differ from row to row (yet)"
            )));
        }
        if per_row {
            return Ok(self.pl_row_call(entry, args));
        }
        // A set is an array of its rows (records): FROM reads it.
        let ty = if def.returns_set { SqlType::Array(Elem::Text) } else { def.returns };
        let k = self.statement.pl_calls.len();
        self.statement.pl_calls.push(crate::plan::PlCall { routine: entry, args, per_row });
        Ok(Typed { e: Expr::Called(k), ty: Some(ty) })
    }

    /// A call of a PL/pgSQL function made where its expression stands, for
    /// each row (PL-ROW-CALLS): the evaluation stops at the call, the
    /// executor makes it and runs the evaluation again (EVAL-REPLAY).
    fn pl_row_call(&mut self, entry: Arc<RelEntry>, args: Vec<Expr>) -> Typed {
        let def = entry.routine.as_ref().expect("a routine row");
        // A set is an array of its rows (records): FROM reads it.
        let ty = if def.returns_set { SqlType::Array(Elem::Text) } else { def.returns };
        self.statement.waits = true;
        // Calls of one function (with the same resolved types) are one
        // number, so equal expressions are equal (an aggregate's
        // transition written twice is computed once).
        let same = self
            .statement
            .pl_calls
            .iter()
            .position(|c| c.per_row && c.routine.oid == entry.oid && c.routine.routine == entry.routine);
        let k = match same {
            Some(k) => k,
            None => {
                self.statement.pl_calls.push(crate::plan::PlCall {
                    routine: entry,
                    args: Vec::new(),
                    per_row: true,
                });
                self.statement.pl_calls.len() - 1
            }
        };
        Typed { e: Expr::Func(Func::PlRow(k), args), ty: Some(ty) }
    }

    /// Whether `args` read columns of the FROM row.
    pub(super) fn reads_columns(&self, args: &[Expr]) -> Result<bool, SqlError> {
        let mut reads = false;
        for a in args {
            a.visit(&self.stack, &mut |e| reads |= matches!(e, Expr::Column(_)))?;
        }
        Ok(reads)
    }

    /// Whether a call of `def` with `args` is made per row: its arguments
    /// differ from row to row, or it is VOLATILE where the statement is
    /// not evaluated once.
    fn pl_per_row(&self, def: &RoutineDef, args: &[Expr]) -> Result<bool, SqlError> {
        let mut varies = false;
        for a in args {
            a.visit(&self.stack, &mut |e| {
                if matches!(
                    e,
                    Expr::Column(_)
                        | Expr::Outer(_)
                        | Expr::Agg(_)
                        | Expr::GroupKey(_)
                        | Expr::Window(_)
                        | Expr::SetFunc(_)
                        | Expr::SubLink(_)
                ) {
                    varies = true;
                }
            })?;
        }
        Ok(varies || def.volatility == Volatility::Volatile && !self.query.once)
    }

    /// The subplan that runs `entry`'s body for expressions: bound once per
    /// statement, before its body is (so a body that calls its function
    /// finds it), with a row value of its columns when it has several.
    fn routine_plan(&mut self, entry: &RelEntry) -> Result<usize, SqlError> {
        let def = entry.routine.as_ref().expect("a routine row");
        // One plan per function and (polymorphic) argument types.
        let key = (entry.oid, def.input_types());
        if let Some((_, plan)) = self.statement.routine_plans.iter().find(|(k, _)| *k == key) {
            return Ok(*plan);
        }
        let plan = self.statement.subqueries.len();
        self.statement.subqueries.push(placeholder());
        self.statement.routine_plans.push((key, plan));
        let mut select = self.routine_body(&entry.name, def).map_err(|e| in_function(e, &entry.name))?;
        let anonymous = def.returns == SqlType::Record(Rec::Anonymous) && def.result_columns().is_empty();
        if select.outputs.len() > 1 || anonymous {
            let fields = std::mem::take(&mut select.outputs);
            select.outputs = vec![Expr::Func(Func::MakeRecord, fields)];
            select.columns =
                Arc::from(vec![Column { name: entry.name.clone(), ty: SqlType::Record(Rec::Anonymous) }]);
        }
        self.statement.subqueries[plan] = select;
        Ok(plan)
    }

    /// A call of a user-defined function in FROM (`None` when no function
    /// of the user's takes these arguments): its body's rows as a LATERAL
    /// subquery whose outer values are the parameters, bound over the
    /// items to its `left`. A function that returns no set gives one row,
    /// its value (NULL without one).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn routine_from(
        &mut self,
        name: &ast::ObjectName,
        alias: Option<&ast::TableAlias>,
        args: &[FunctionArg],
        offset: usize,
        base: &Scope<'_>,
        left: Option<&Item>,
    ) -> Result<Option<Item>, SqlError> {
        let Ok(key) = relation_name(name) else { return Ok(None) };
        let candidates = self.functions_named(&key)?;
        if candidates.is_empty() {
            return Ok(None);
        }
        let outer = match left {
            Some(left) => base.derived().with_items(left.named.clone(), left.visible.clone()),
            None => base.derived(),
        };
        let (positional, named) = self.call_arguments(args, &outer)?;
        let with_names = !named.is_empty();
        let shown = shown_arguments(&positional, &named);
        let Some((entry, args)) = self.choose_routine(&key, &candidates, positional, named, false)? else {
            // No built-in function takes named arguments: none takes these.
            if with_names {
                return Err(self.no_such_routine(&key, &shown, name));
            }
            return Ok(None);
        };
        let def = entry.routine.as_ref().expect("a routine row");
        let fname = entry.name.clone();
        let defined = self.column_definitions(def, alias)?;
        // A column definition list types the body's result as RETURNS
        // TABLE would: it is checked and converted as one.
        let typed;
        let def = match &defined {
            Some(columns) => {
                typed = RoutineDef { table_columns: columns.clone(), ..def.clone() };
                &typed
            }
            None => def,
        };
        let columns = defined.clone().unwrap_or_else(|| Self::routine_columns(&fname, def));
        if defined.is_none()
            && def.returns == SqlType::Record(Rec::Anonymous)
            && def.result_columns().is_empty()
        {
            let err = SqlError::new(
                SqlState::SYNTAX_ERROR,
                "a column definition list is required for functions returning \"record\"",
            );
            return Err(self.at_name(err, name));
        }
        if runs_before(def, self.stack.limit())? {
            // Its arguments are constants: one row, its value.
            let saved = std::mem::replace(&mut self.query.once, self.sublink_depth == 0 && !self.in_routine);
            let per_row = self.pl_per_row(def, &args);
            let per_row = match per_row {
                Ok(true) if !self.in_routine => true,
                Ok(_) => false,
                Err(e) => {
                    self.query.once = saved;
                    return Err(e);
                }
            };
            // Made per row, LATERAL: its arguments are its outer values.
            let (call, lateral_args) = if per_row {
                let n = args.len();
                (Ok(self.pl_row_call(Arc::clone(&entry), (0..n).map(Expr::Outer).collect())), Some(args))
            } else {
                (self.pl_call(Arc::clone(&entry), args, true), None)
            };
            self.query.once = saved;
            let call = call?;
            // Its rows: the set's records, or the one value as a record.
            let rows = if def.returns_set {
                call.e
            } else if columns.len() > 1 {
                Expr::Func(Func::ArrayCons, vec![call.e])
            } else {
                Expr::Func(Func::ArrayCons, vec![Expr::Func(Func::MakeRecord, vec![call.e])])
            };
            let alias_name = alias.map_or_else(|| fname.clone(), |a| super::ident(&a.name));
            let mut cols: Vec<Col> = columns
                .iter()
                .enumerate()
                .map(|(i, (n, ty))| Col { name: n.clone(), expr: Expr::Column(offset + i), ty: *ty })
                .collect();
            // (A table's row type of one column keeps its name.)
            if cols.len() == 1 && def.output_columns().is_empty() && def.row_type.is_none() {
                cols[0].name = alias_name.clone();
            }
            let named =
                rename(Named { alias: alias_name, columns: cols, table: None, nullable: false }, alias)?;
            let from =
                From::Function { func: crate::plan::Srf::Records, args: vec![rows], ordinality: false };
            let from = match lateral_args {
                None => from,
                Some(args) => {
                    let reads_left = left.is_some() && self.reads_columns(&args)?;
                    beside(From::Lateral { item: Box::new(from), args }, reads_left)
                }
            };
            return Ok(Some(Item { visible: named.columns.clone(), named: vec![named], from }));
        }
        let body = if def.returns_set || columns.len() > 1 || defined.is_some() {
            if self.statement.expanding.contains(&entry.oid) {
                return Err(not_supported(format!("function \"{fname}\" calling itself in FROM")));
            }
            self.statement.expanding.push(entry.oid);
            let bound = self.routine_body(&fname, def).map_err(|e| in_function(e, &fname));
            self.statement.expanding.pop();
            let mut select = bound?;
            if !def.returns_set {
                // One row: the first (a row of NULLs without one is not
                // given: PostgreSQL's).
                select.limit = Some(Expr::Const(Value::Int(1)));
            }
            select
        } else {
            // `SELECT f($1, …)`: one row, the value or NULL.
            let n = args.len();
            let call = self.routine_expr(Arc::clone(&entry), (0..n).map(Expr::Outer).collect())?;
            let ty = def.returns;
            Select {
                outputs: vec![call.e],
                columns: Arc::from(vec![Column { name: fname.clone(), ty }]),
                ..placeholder()
            }
        };
        let cols: Vec<Col> = columns
            .iter()
            .enumerate()
            .map(|(i, (n, ty))| Col { name: n.clone(), expr: Expr::Column(offset + i), ty: *ty })
            .collect();
        let alias_name = alias.map_or_else(|| fname.clone(), |a| super::ident(&a.name));
        // A function of one column is named after its alias.
        let cols = match (cols.as_slice(), alias) {
            ([one], Some(_)) if def.output_columns().is_empty() && defined.is_none() => {
                vec![Col { name: alias_name.clone(), ..one.clone() }]
            }
            _ => cols,
        };
        let named = rename(Named { alias: alias_name, columns: cols, table: None, nullable: false }, alias)?;
        let derived = From::Derived(Box::new(body));
        let from = if args.is_empty() {
            derived
        } else {
            // Arguments that read no item to its left: run once (the join
            // beside it reads its rows again for each of its own rows).
            let reads_left = left.is_some() && self.reads_columns(&args)?;
            beside(From::Lateral { item: Box::new(derived), args }, reads_left)
        };
        Ok(Some(Item { visible: named.columns.clone(), named: vec![named], from }))
    }
}

impl<R: Resolver> Binder<'_, R> {
    /// The columns a column definition list (`AS t(a int, b text)`)
    /// gives a call of `def` in FROM: `None` without one; 42601 for one
    /// after a function that does not return `record`, or one that names
    /// a column without its type.
    fn column_definitions(
        &mut self,
        def: &RoutineDef,
        alias: Option<&ast::TableAlias>,
    ) -> Result<Option<Vec<(String, SqlType)>>, SqlError> {
        let Some(alias) = alias else { return Ok(None) };
        if !alias.columns.iter().any(|c| c.data_type.is_some()) {
            return Ok(None);
        }
        if def.returns != SqlType::Record(Rec::Anonymous) || !def.result_columns().is_empty() {
            let message = if def.row_type.is_some() {
                "a column definition list is redundant for a function returning a named composite type"
            } else if def.returns == SqlType::Record(Rec::Anonymous) {
                "a column definition list is redundant for a function with OUT parameters"
            } else {
                "a column definition list is only allowed for functions returning \"record\""
            };
            let err = SqlError::new(SqlState::SYNTAX_ERROR, message);
            // Placed at the list's first column.
            let first = alias.columns.first().map(|c| ast::Expr::Identifier(c.name.clone()));
            return Err(match first {
                Some(at) => super::expr::locate(self.origin.as_deref(), err, &at),
                None => err,
            });
        }
        let mut columns = Vec::with_capacity(alias.columns.len());
        for c in &alias.columns {
            let Some(dt) = &c.data_type else {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    "a column definition list is required for functions returning \"record\"",
                ));
            };
            let (ty, _) = self.resolve_type_with_domain(dt)?;
            columns.push((super::ident(&c.name), ty));
        }
        Ok(Some(columns))
    }
}

/// A call's argument types as PostgreSQL's messages show them (`name =>
/// type` for a named one).
fn shown_arguments(positional: &[Typed], named: &[(String, Typed)]) -> Vec<String> {
    positional
        .iter()
        .map(|t| t.ty.map_or("unknown", SqlType::name).to_owned())
        .chain(named.iter().map(|(n, t)| match n.as_str() {
            // PostgreSQL shows a VARIADIC argument as its type alone.
            VARIADIC_ARG => t.ty.map_or("unknown", SqlType::name).to_owned(),
            n => format!("{n} => {}", t.ty.map_or("unknown", SqlType::name)),
        }))
        .collect()
}

impl<R: Resolver> Binder<'_, R> {
    /// Whether the user has functions named `name` (a call in FROM that
    /// none of them nor a built-in takes does not exist).
    pub(super) fn has_functions(&mut self, name: &ast::ObjectName) -> Result<bool, SqlError> {
        let Ok(key) = relation_name(name) else { return Ok(false) };
        Ok(!self.functions_named(&key)?.is_empty())
    }

    /// 42883 for a call in FROM of function `key` no function takes,
    /// placed at its name as PostgreSQL places it.
    pub(super) fn no_such_routine(&self, key: &str, shown: &[String], name: &ast::ObjectName) -> SqlError {
        let err = SqlError::new(
            SqlState::UNDEFINED_FUNCTION,
            format!("function {}({}) does not exist", snapscale_engine::names::bare(key), shown.join(", ")),
        )
        .with_hint(
            "No function matches the given name and argument types. You might need to add explicit type casts.",
        );
        match name.0.first().and_then(|p| p.as_ident()) {
            Some(at) => super::expr::locate(self.origin.as_deref(), err, &ast::Expr::Identifier(at.clone())),
            None => err,
        }
    }
}

/// Whether a call of `def` runs before its statement (PL-CALLS): a
/// PL/pgSQL function, or a SQL function whose body changes data.
fn runs_before(def: &RoutineDef, limit: usize) -> Result<bool, SqlError> {
    Ok(def.language == "plpgsql" || !super::routines::body_is_query(def, limit)?)
}

/// Whether `c` takes the call's last arguments as its VARIADIC array's
/// elements.
fn spreads(c: &Candidate) -> bool {
    c.sources.iter().any(|s| matches!(s, Source::Variadic(_)))
}

/// How `def` takes the call's arguments, if it does.
fn fit(
    entry: &Arc<RelEntry>,
    def: &RoutineDef,
    positional: &[Typed],
    named: &[(String, Typed)],
    with_outputs: bool,
) -> Option<Candidate> {
    let inputs: Vec<_> = def.args.iter().filter(|a| with_outputs || a.mode.is_input()).collect();
    let variadic = inputs.last().is_some_and(|a| a.mode == ArgMode::Variadic);
    let mut sources: Vec<Option<Source>> = inputs.iter().map(|_| None).collect();
    let mut exact = 0;
    // The polymorphic parameters' arguments, resolved once all are known.
    let mut poly: Vec<(SqlType, Option<SqlType>)> = Vec::new();
    let mut takes = |from: Option<SqlType>, to: SqlType| -> bool {
        if matches!(to, SqlType::Poly(_)) {
            poly.push((to, from));
            return true;
        }
        match from {
            None => true,
            Some(f) if same_type(f, to) => {
                exact += 1;
                true
            }
            Some(f) => implicit(f, to),
        }
    };
    // `VARIADIC array` as the last argument: the array is the VARIADIC
    // parameter's value, whole.
    let spread = named.first().is_some_and(|(n, _)| n == VARIADIC_ARG);
    if spread {
        if !variadic || named.len() != 1 || positional.len() + 1 != inputs.len() {
            return None;
        }
        for (i, t) in positional.iter().enumerate() {
            if !takes(t.ty, inputs[i].ty) {
                return None;
            }
            sources[i] = Some(Source::Positional(i));
        }
        let last = inputs.len() - 1;
        if !takes(named[0].1.ty, inputs[last].ty) {
            return None;
        }
        sources[last] = Some(Source::Named(0));
    } else if variadic && named.is_empty() && positional.len() >= inputs.len() {
        let last = inputs.len() - 1;
        // A polymorphic array's elements are of its element family.
        let elem = match inputs[last].ty {
            SqlType::Poly(Poly::AnyArray) => SqlType::Poly(Poly::AnyElement),
            SqlType::Poly(Poly::AnyCompatibleArray) => SqlType::Poly(Poly::AnyCompatible),
            SqlType::Poly(_) => return None,
            ty => ty.elem()?,
        };
        for (i, t) in positional.iter().enumerate() {
            let to = if i < last { inputs[i].ty } else { elem };
            if !takes(t.ty, to) {
                return None;
            }
        }
        for (i, s) in sources.iter_mut().enumerate().take(last) {
            *s = Some(Source::Positional(i));
        }
        sources[last] = Some(Source::Variadic(last));
    } else {
        if positional.len() > inputs.len() {
            return None;
        }
        for (i, t) in positional.iter().enumerate() {
            if !takes(t.ty, inputs[i].ty) {
                return None;
            }
            sources[i] = Some(Source::Positional(i));
        }
        for (j, (n, t)) in named.iter().enumerate() {
            let i = inputs.iter().position(|a| a.name == *n)?;
            if sources[i].is_some() || !takes(t.ty, inputs[i].ty) {
                return None;
            }
            sources[i] = Some(Source::Named(j));
        }
        for (i, s) in sources.iter_mut().enumerate() {
            if s.is_none() {
                inputs[i].default.as_ref()?;
                *s = Some(Source::Default);
            }
        }
    }
    // A parameter left to its default resolves nothing.
    let resolved = match poly.is_empty() {
        true => None,
        false => {
            let (params, args): (Vec<SqlType>, Vec<Option<SqlType>>) = poly.into_iter().unzip();
            Some(super::polymorphic::resolve(&params, &args)?)
        }
    };
    Some(Candidate {
        entry: Arc::clone(entry),
        exact,
        sources: sources.into_iter().map(|s| s.expect("all set")).collect(),
        resolved,
    })
}

/// The same type, whatever the length modifier.
fn same_type(a: SqlType, b: SqlType) -> bool {
    use SqlType::*;
    a == b || matches!((a, b), (Varchar(_), Varchar(_)) | (Char(_), Char(_)) | (Numeric(_), Numeric(_)))
}

/// PostgreSQL's implicit casts, those a call's argument may take.
pub(super) fn implicit(from: SqlType, to: SqlType) -> bool {
    use SqlType::*;
    match (from, to) {
        (Int2, Int4 | Int8 | Float4 | Float8 | Numeric(_) | Oid) => true,
        (Int4, Int8 | Float4 | Float8 | Numeric(_) | Oid | Reg(_)) => true,
        (Int8, Float4 | Float8 | Numeric(_) | Oid | Reg(_)) => true,
        (Float4, Float8) => true,
        (Numeric(_), Float4 | Float8) => true,
        (Text | Varchar(_) | Char(_) | Name, Text | Varchar(_)) => true,
        (Text | Varchar(_), Char(_) | Name) => true,
        (Char(_), Char(_)) => true,
        (Date, Timestamp | TimestampTz) | (Timestamp, TimestampTz) => true,
        (Time, Interval | TimeTz) => true,
        (Oid, Reg(_)) | (Reg(_), Oid) => true,
        (Array(a), Array(b)) => a == b,
        _ => false,
    }
}

/// An expression parsed from its text (a parameter's DEFAULT).
fn parse_expr(text: &str, limit: usize) -> Result<ast::Expr, SqlError> {
    let mut parsed = crate::parse::parse(&format!("SELECT {text}"), limit)?;
    if let Some(crate::parse::Parsed::Sql(ast)) = parsed.pop() {
        if let Some(ast::Statement::Query(q)) = ast.statement.as_deref() {
            if let ast::SetExpr::Select(s) = q.body.as_ref() {
                if let [ast::SelectItem::UnnamedExpr(e)] = s.projection.as_slice() {
                    return Ok(e.clone());
                }
            }
        }
    }
    Err(SqlError::new(SqlState::INTERNAL_ERROR, format!("a parameter default does not parse: {text}")))
}

/// An error binding a function's body, placed in it as PostgreSQL's
/// CONTEXT line does.
fn in_function(e: SqlError, name: &str) -> SqlError {
    // The row a function returns checked against its result: checked as
    // it is returned (PostgreSQL's message has no CONTEXT).
    let returned_row = e.message == "function return row and query-specified return row do not match";
    if e.context.is_some() || e.code == SqlState::STATEMENT_TOO_COMPLEX || returned_row {
        return e;
    }
    SqlError::from(snapscale_values::ErrorData {
        context: Some(format!("SQL function \"{name}\" during inlining")),
        position: None,
        ..e.into_data()
    })
}

/// A LATERAL item where it stands: as is after other items, else as the
/// right side of a join with one empty row (it is planned only as a
/// join's right side).
pub(super) fn beside(lateral: From, after_items: bool) -> From {
    if after_items {
        return lateral;
    }
    From::Join(Box::new(Join {
        left: From::Values { rows: vec![Vec::new()], columns: Vec::new() },
        right: lateral,
        kind: JoinKind::Inner,
        on: None,
    }))
}

/// A subquery with nothing in it, to hold a body's place while it binds.
fn placeholder() -> Select {
    Select {
        from: None,
        filter: None,
        grouping: None,
        windows: Vec::new(),
        srfs: Vec::new(),
        outputs: Vec::new(),
        columns: Arc::from(Vec::new()),
        order: Vec::new(),
        limit: None,
        offset: None,
        lock: None,
        distinct_on: Vec::new(),
    }
}
