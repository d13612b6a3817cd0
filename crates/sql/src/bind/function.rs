//! Binding function calls: aggregates (into the SELECT's aggregate
//! slots), the sequence functions, and scalar functions with PostgreSQL's
//! argument coercions.

use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType, Value};
use sqlparser::ast::{self, FunctionArg, FunctionArgExpr, FunctionArguments};

use super::coerce::{castable, common_type};
use super::scope::Scope;
use super::{ident, not_supported, Binder, Coercion, Resolver, Typed};
use crate::expr::scalar;
use crate::expr::{AggFunc, Cmp, Expr, Func};
use crate::plan::Aggregate;

impl<R: Resolver> Binder<'_, R> {
    #[inline(never)]
    pub(super) fn function(&mut self, f: &ast::Function, scope: &Scope<'_>) -> Result<Typed, SqlError> {
        super::clauses::function(f)?;
        let name = f.name.0.last().and_then(|p| p.as_ident()).map(ident).unwrap_or_default();
        // The SQL/JSON path functions' named arguments, placed.
        let placed;
        let f = match &f.args {
            FunctionArguments::List(list) => match jsonpath_positional(&name, &list.args)? {
                Some(args) => {
                    placed = ast::Function {
                        args: FunctionArguments::List(ast::FunctionArgumentList { args, ..list.clone() }),
                        ..f.clone()
                    };
                    &placed
                }
                None => f,
            },
            _ => f,
        };
        if let Some(t) = self.routine_call(f, scope)? {
            return Ok(t);
        }
        if name == "row_to_json" {
            if let Some(t) = self.row_to_json(f, scope)? {
                return Ok(t);
            }
        }
        if let Some(t) = self.user_aggregate(f, scope)? {
            return Ok(t);
        }
        if let Some(over) = &f.over {
            return self.window_call(&name, f, over, scope);
        }
        // An aggregate's ORDER BY (`clauses::function` lets only that
        // clause through).
        let order_by: &[ast::OrderByExpr] = match &f.args {
            FunctionArguments::List(list) => list
                .clauses
                .iter()
                .find_map(|c| match c {
                    ast::FunctionArgumentClause::OrderBy(o) => Some(o.as_slice()),
                    _ => None,
                })
                .unwrap_or_default(),
            _ => &[],
        };
        let mut named: Vec<(String, &ast::Expr)> = Vec::new();
        let (star, args, distinct) = match &f.args {
            FunctionArguments::None => (false, Vec::new(), false),
            FunctionArguments::List(list) => {
                let mut star = false;
                let mut args = Vec::new();
                for a in &list.args {
                    match a {
                        // Only make_interval has parameter names so far.
                        _ if name == "make_interval" && named_arg(a).is_some() => {
                            let (n, e) = named_arg(a).expect("checked");
                            if named.iter().any(|(m, _)| *m == n) {
                                return Err(SqlError::new(
                                    SqlState::SYNTAX_ERROR,
                                    format!("argument name \"{n}\" used more than once"),
                                ));
                            }
                            named.push((n, e));
                        }
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(_))
                            if !named.is_empty() && named_arg(a).is_none() =>
                        {
                            return Err(SqlError::new(
                                SqlState::SYNTAX_ERROR,
                                "positional argument cannot follow named argument",
                            ))
                        }
                        FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => args.push(e),
                        FunctionArg::Unnamed(FunctionArgExpr::Wildcard) => star = true,
                        _ if named_arg(a)
                            .is_some_and(|(n, _)| n == crate::parse::variadic_syntax::VARIADIC_ARG) =>
                        {
                            return Err(not_supported("VARIADIC arguments of built-in functions"))
                        }
                        _ => return Err(not_supported(format!("argument {a}"))),
                    }
                }
                (star, args, list.duplicate_treatment.is_some_and(|d| d == ast::DuplicateTreatment::Distinct))
            }
            FunctionArguments::Subquery(q) if name == "array" => return self.array_subquery(q, scope),
            FunctionArguments::Subquery(_) => return Err(not_supported("subqueries as function arguments")),
        };
        let agg = AggFunc::named(&name, star);
        if let Some(func) = agg {
            if distinct && star {
                // `count(DISTINCT *)` is not in PostgreSQL's grammar.
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"*\""));
            }
            // Whose aggregate it is, and so whether one is allowed here,
            // is known once its expressions are bound (outer_agg.rs).
            let marks = scope.arg_marks();
            let (args, delimiter) = match (func, args.as_slice()) {
                (AggFunc::StringAgg | AggFunc::JsonObjectAgg | AggFunc::JsonbObjectAgg, [a, d]) => {
                    (vec![*a], Some(*d))
                }
                (AggFunc::StringAgg | AggFunc::JsonObjectAgg | AggFunc::JsonbObjectAgg, _) => {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("function {name} with {} arguments does not exist", args.len()),
                    ))
                }
                _ => (args, None),
            };
            let delimiter = match delimiter {
                Some(d) => {
                    let saved = self.query.aggs.take();
                    let t = self.expr(d, scope);
                    self.query.aggs = saved;
                    Some(if func == AggFunc::StringAgg {
                        self.coerce(t?, SqlType::Text, Coercion::Implicit, "argument of string_agg")?
                    } else {
                        self.settle(t?)?
                    })
                }
                None => None,
            };
            let arg = match (func, args.as_slice()) {
                (AggFunc::CountStar, []) => None,
                (_, [a]) => {
                    // Aggregates do not nest.
                    let saved = self.query.aggs.take();
                    let t = self.expr(a, scope);
                    self.query.aggs = saved;
                    Some(t.map_err(nested)?)
                }
                _ => {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("function {name} with {} arguments does not exist", args.len()),
                    ))
                }
            };
            let arg_ty = arg.as_ref().map(|t| t.ty.unwrap_or(SqlType::Text));
            let func = match (func, arg_ty) {
                (AggFunc::ArrayAgg, Some(SqlType::Array(_))) => AggFunc::ArrayAggArray,
                _ => func,
            };
            let ty = aggregate_type(func, arg_ty, &name)?;
            let mut order = self.aggregate_order(order_by, scope)?;
            let filter = self.aggregate_filter(f.filter.as_deref(), scope)?;
            let arg = match arg {
                Some(t) if func == AggFunc::StringAgg => {
                    Some(self.coerce(t, SqlType::Text, Coercion::Implicit, "argument of string_agg")?)
                }
                Some(t) => Some(self.settle(t)?),
                None => None,
            };
            if distinct {
                let args: Vec<Expr> = arg.iter().chain(delimiter.iter()).cloned().collect();
                self.distinct_order(&mut order, order_by, &args)?;
            }
            let aggregate = Aggregate { func, arg, delimiter, order, distinct, filter, ty, user: None };
            let at = f.name.0.first().and_then(|p| p.as_ident()).and_then(|i| {
                let origin = self.origin.as_deref()?;
                origin.position(i.span.start.line, i.span.start.column)
            });
            let e = self.place_aggregate(aggregate, scope, &marks, at)?;
            return Ok(Typed { e, ty: Some(ty) });
        }
        // PostgreSQL's check, once the name is known not to be an aggregate.
        if f.over.is_none() {
            let clause = if !order_by.is_empty() {
                Some("ORDER BY")
            } else if f.filter.is_some() {
                Some("FILTER")
            } else {
                None
            };
            if let Some(clause) = clause {
                return Err(SqlError::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    format!("{clause} specified, but {name} is not an aggregate function"),
                ));
            }
        }
        if let Some(t) = self.sequence_function(&name, &args, scope)? {
            return Ok(t);
        }
        if name == "make_interval" {
            return self.make_interval(&args, &named, scope);
        }
        let mut bound = Vec::new();
        for a in args {
            bound.push(self.expr(a, scope)?);
        }
        if let Some(t) = self.enum_function(&name, &mut bound)? {
            return Ok(t);
        }
        if let Some(t) = self.array_function(&name, &mut bound)? {
            return Ok(t);
        }
        if super::populate::is_populate(&name) {
            let call = self.populate_call(&name, bound, None)?.expect("checked");
            return match (call.set, call.ty) {
                (false, Some(ty)) => Ok(Typed { e: call.e, ty: Some(ty) }),
                (true, _) => Err(not_supported(format!("{name} in the select list (call it in FROM)"))),
                (false, None) => Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "function returning record called in context that cannot accept type record",
                )),
            };
        }
        let json_srf = matches!(
            name.as_str(),
            "jsonb_each"
                | "jsonb_each_text"
                | "json_each"
                | "json_each_text"
                | "jsonb_array_elements"
                | "jsonb_array_elements_text"
                | "json_array_elements"
                | "json_array_elements_text"
                | "jsonb_object_keys"
                | "json_object_keys"
                | "jsonb_path_query"
        );
        let string_srf =
            matches!(name.as_str(), "regexp_matches" | "regexp_split_to_table" | "string_to_table");
        let srf_names = ["generate_series", "unnest", "_pg_expandarray", "pg_partition_ancestors"];
        if json_srf || string_srf || srf_names.contains(&name.as_str()) {
            if self.query.srfs.is_none() {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "set-returning functions are not allowed here",
                ));
            }
            if let Some((func, args, ty)) = self.set_function(&name, std::mem::take(&mut bound))? {
                let call = crate::plan::SrfCall { func, args, ty };
                let srfs = self.query.srfs.as_mut().expect("checked above");
                srfs.push(call);
                return Ok(Typed { e: Expr::SetFunc(srfs.len() - 1), ty: Some(ty) });
            }
        }
        let one_arg = |bound: &Vec<Typed>| -> Result<(), SqlError> {
            if bound.len() == 1 {
                Ok(())
            } else {
                Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("function {name} with {} arguments does not exist", bound.len()),
                ))
            }
        };
        Ok(match name.as_str() {
            "now" | "current_timestamp" | "transaction_timestamp" if bound.is_empty() => {
                Typed { e: Expr::Func(Func::Now, Vec::new()), ty: Some(SqlType::TimestampTz) }
            }
            // The transaction's start on the session's wall clock.
            "localtimestamp" | "current_date" if bound.is_empty() => {
                let ty = if name == "current_date" { SqlType::Date } else { SqlType::Timestamp };
                let now = Expr::Func(Func::Now, Vec::new());
                Typed { e: Expr::Cast(Box::new(now), ty, true), ty: Some(ty) }
            }
            "clock_timestamp" if bound.is_empty() => {
                Typed { e: Expr::Func(Func::ClockTimestamp, Vec::new()), ty: Some(SqlType::TimestampTz) }
            }
            // The time now as text, in PostgreSQL's timeofday() form.
            "timeofday" if bound.is_empty() => {
                let e = crate::parse::parse_expr(
                    "to_char(clock_timestamp(), 'Dy Mon DD HH24:MI:SS.US YYYY TZ')",
                    self.stack.limit(),
                )?;
                self.expr(&e, scope)?
            }
            "timezone" if bound.len() == 2 => {
                let value = bound.pop().expect("two arguments");
                let zone = bound.pop().expect("two arguments");
                self.at_time_zone(zone, value)?
            }
            "date_part" if bound.len() == 2 => {
                let value = bound.pop().expect("two arguments");
                let unit = bound.pop().expect("two arguments");
                self.date_part(unit, value)?
            }
            // age(value): from midnight today, as PostgreSQL's SQL
            // function `age(current_date, value)` has it.
            "age" if bound.len() == 1 && !matches!(bound[0].ty, Some(t) if !is_datetime(t)) => {
                let value = bound.pop().expect("one argument");
                let ty = match value.ty {
                    Some(SqlType::Timestamp) => SqlType::Timestamp,
                    Some(_) => SqlType::TimestampTz,
                    None => return Err(not_unique(&name, &[value])),
                };
                let now = Expr::Func(Func::Now, Vec::new());
                let today = Expr::Cast(Box::new(Expr::Cast(Box::new(now), SqlType::Date, true)), ty, true);
                let value = self.coerce(value, ty, Coercion::Implicit, "age")?;
                Typed {
                    e: Expr::Func(Func::Scalar(scalar::AGE), vec![today, value]),
                    ty: Some(SqlType::Interval),
                }
            }
            "date_trunc" if (2..=3).contains(&bound.len()) => {
                let named_zone = bound.len() == 3;
                let mut bound = bound.into_iter();
                let unit = self.coerce(
                    bound.next().expect("checked"),
                    SqlType::Text,
                    Coercion::Implicit,
                    "date_trunc",
                )?;
                let value = bound.next().expect("checked");
                // A timestamp stays one; anything else is read as an
                // instant (PostgreSQL's preferred type), as is the value
                // when a zone is named.
                let ty = match value.ty {
                    Some(t @ (SqlType::Timestamp | SqlType::Interval)) if !named_zone => t,
                    _ => SqlType::TimestampTz,
                };
                let mut args = vec![unit, self.coerce(value, ty, Coercion::Implicit, "date_trunc")?];
                if let Some(zone) = bound.next() {
                    args.push(self.coerce(zone, SqlType::Text, Coercion::Implicit, "date_trunc")?);
                }
                Typed { e: Expr::Func(Func::DateTrunc, args), ty: Some(ty) }
            }
            "pg_is_in_recovery" if bound.is_empty() => {
                Typed { e: Expr::Func(Func::InRecovery, Vec::new()), ty: Some(SqlType::Bool) }
            }
            // pg_lsn is shown as text (its output format).
            "pg_last_wal_receive_lsn" if bound.is_empty() => {
                Typed { e: Expr::Func(Func::LastReceiveLsn, Vec::new()), ty: Some(SqlType::Text) }
            }
            "pg_last_wal_replay_lsn" if bound.is_empty() => {
                Typed { e: Expr::Func(Func::LastReplayLsn, Vec::new()), ty: Some(SqlType::Text) }
            }
            "pg_current_wal_lsn" | "pg_current_wal_insert_lsn" if bound.is_empty() => {
                Typed { e: Expr::Func(Func::CurrentWalLsn, Vec::new()), ty: Some(SqlType::Text) }
            }
            "pg_current_snapshot" | "txid_current_snapshot" if bound.is_empty() => {
                Typed { e: Expr::Func(Func::CurrentSnapshot, Vec::new()), ty: Some(SqlType::Text) }
            }
            "pg_last_xact_replay_timestamp" if bound.is_empty() => {
                Typed { e: Expr::Func(Func::LastReplayTimestamp, Vec::new()), ty: Some(SqlType::TimestampTz) }
            }
            "version" if bound.is_empty() => {
                Typed { e: Expr::Func(Func::Version, Vec::new()), ty: Some(SqlType::Text) }
            }
            "current_user" | "session_user" | "user" | "current_role" if bound.is_empty() => {
                Typed { e: Expr::Func(Func::CurrentUser, Vec::new()), ty: Some(SqlType::Text) }
            }
            "current_database" | "current_catalog" if bound.is_empty() => {
                Typed { e: Expr::Func(Func::CurrentDatabase, Vec::new()), ty: Some(SqlType::Text) }
            }
            "current_schema" if bound.is_empty() => {
                Typed { e: Expr::Func(Func::CurrentSchema, Vec::new()), ty: Some(SqlType::Text) }
            }
            "pg_trigger_depth" if bound.is_empty() => {
                Typed { e: Expr::Func(Func::TriggerDepth, Vec::new()), ty: Some(SqlType::Int4) }
            }
            "pg_reload_conf" if bound.is_empty() => {
                Typed { e: Expr::Func(Func::ReloadConf, Vec::new()), ty: Some(SqlType::Bool) }
            }
            "pg_backend_pid" if bound.is_empty() => {
                Typed { e: Expr::Func(Func::BackendPid, Vec::new()), ty: Some(SqlType::Int4) }
            }
            "current_setting" if (1..=2).contains(&bound.len()) => {
                let mut args = Vec::new();
                let missing_ok = (bound.len() == 2).then(|| bound.pop().expect("two arguments"));
                let name = bound.pop().expect("one argument");
                args.push(self.coerce(name, SqlType::Text, Coercion::Implicit, "current_setting")?);
                if let Some(m) = missing_ok {
                    args.push(self.coerce(m, SqlType::Bool, Coercion::Implicit, "current_setting")?);
                }
                Typed { e: Expr::Func(Func::CurrentSetting, args), ty: Some(SqlType::Text) }
            }
            // The argument's type, known now; the argument is still
            // evaluated, as PostgreSQL evaluates it (it may do something:
            // `pg_typeof(pg_advisory_unlock_all())`), unless it is a constant.
            "pg_typeof" if bound.len() == 1 => {
                let arg = bound.pop().expect("one argument");
                let name = Expr::Const(Value::Text(arg.ty.map_or("unknown", SqlType::name).to_owned()));
                let e = if arg.ty.is_some() && !matches!(arg.e, Expr::Const(_)) {
                    Expr::Func(Func::TypeOf, vec![arg.e, name])
                } else {
                    name
                };
                Typed { e, ty: Some(SqlType::Text) }
            }
            "set_config" if bound.len() == 3 => {
                let local = bound.pop().expect("three arguments");
                let value = bound.pop().expect("three arguments");
                let name = bound.pop().expect("three arguments");
                let args = vec![
                    self.coerce(name, SqlType::Text, Coercion::Implicit, "set_config")?,
                    self.coerce(value, SqlType::Text, Coercion::Implicit, "set_config")?,
                    self.coerce(local, SqlType::Bool, Coercion::Implicit, "set_config")?,
                ];
                Typed { e: Expr::Func(Func::SetConfig, args), ty: Some(SqlType::Text) }
            }
            "quote_literal" => {
                one_arg(&bound)?;
                let t = bound.pop().expect("one argument");
                let e = self.coerce(t, SqlType::Text, Coercion::Explicit, "quote_literal")?;
                Typed { e: Expr::Func(Func::QuoteLiteral, vec![e]), ty: Some(SqlType::Text) }
            }
            "abs" => {
                one_arg(&bound)?;
                let t = bound.pop().expect("one argument");
                let ty = t.ty.unwrap_or(SqlType::Float8);
                let e = self.coerce(t, ty, Coercion::Implicit, "abs")?;
                Typed { e: Expr::Func(Func::Abs, vec![e]), ty: Some(ty) }
            }
            "length" | "substr" if bound.first().is_some_and(|t| t.ty == Some(SqlType::Bytea)) => {
                return match self.builtin(&name, &mut bound)? {
                    Some(t) => Ok(t),
                    None => Err(no_such_function(&name, &bound)),
                };
            }
            "lower" | "upper" | "length" => {
                one_arg(&bound)?;
                let t = bound.pop().expect("one argument");
                let e = self.coerce_any_text(t)?;
                let (func, ty) = match name.as_str() {
                    "lower" => (Func::Lower, SqlType::Text),
                    "upper" => (Func::Upper, SqlType::Text),
                    _ => (Func::Length, SqlType::Int4),
                };
                Typed { e: Expr::Func(func, vec![e]), ty: Some(ty) }
            }
            "coalesce" | "greatest" | "least" if !bound.is_empty() => {
                let (func, what) = match name.as_str() {
                    "coalesce" => (Func::Coalesce, "COALESCE"),
                    "greatest" => (Func::Greatest, "GREATEST"),
                    _ => (Func::Least, "LEAST"),
                };
                let ty = common_type(bound.iter().map(|t| t.ty), what)?;
                let args = bound
                    .into_iter()
                    .map(|t| self.coerce(t, ty, Coercion::Implicit, what))
                    .collect::<Result<_, _>>()?;
                Typed { e: Expr::Func(func, args), ty: Some(ty) }
            }
            "nullif" if bound.len() == 2 => {
                // The result has the first argument's type; the two are
                // compared as `=` compares them.
                let b = bound.pop().expect("two arguments");
                let a = bound.pop().expect("two arguments");
                let ty = a.ty.or(b.ty).unwrap_or(SqlType::Text);
                let Expr::Compare(ea, _, eb, _) = self.compare_typed(a, Cmp::Eq, b)? else {
                    unreachable!("compare_typed makes a comparison")
                };
                Typed { e: Expr::Func(Func::NullIf, vec![*ea, *eb]), ty: Some(ty) }
            }
            "substr" if (2..=3).contains(&bound.len()) => {
                let mut bound = bound.into_iter();
                let s = bound.next().expect("checked");
                let mut args = vec![self.coerce_any_text(s)?];
                for t in bound {
                    args.push(self.coerce(t, SqlType::Int8, Coercion::Implicit, "argument of substr")?);
                }
                Typed { e: Expr::Func(Func::Substring, args), ty: Some(SqlType::Text) }
            }
            _ => {
                if let Some(t) = self.builtin(&name, &mut bound)? {
                    return Ok(t);
                }
                // Named as written, its schema too (func_signature_string).
                let written: Vec<String> =
                    f.name.0.iter().filter_map(|p| p.as_ident()).map(super::ident).collect();
                return Err(no_such_function(&written.join("."), &bound));
            }
        })
    }

    /// `EXTRACT(field FROM value)`: numeric, of a date, time, timetz,
    /// timestamp, timestamptz or interval, each with its own fields.
    #[inline(never)]
    pub(super) fn extract(
        &mut self,
        field: &ast::DateTimeField,
        value: &ast::Expr,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let value = self.expr(value, scope)?;
        let field = match field {
            ast::DateTimeField::Custom(name) => name.value.clone(),
            other => other.to_string(),
        };
        let unit = Typed { e: Expr::Const(Value::Text(field)), ty: None };
        let name = "pg_catalog.extract";
        match value.ty {
            Some(t) if is_datetime(t) => {}
            None => return Err(not_unique(name, &[unit, value])),
            Some(_) => return Err(no_such_function(name, &[unit, value])),
        }
        let unit = self.coerce(unit, SqlType::Text, Coercion::Implicit, "extract")?;
        let args = vec![unit, self.settle(value)?];
        Ok(Typed { e: Expr::Func(Func::Scalar(scalar::EXTRACT), args), ty: Some(SqlType::Numeric(-1)) })
    }

    /// date_part(unit, value), double precision; a date is read as a
    /// timestamp, as PostgreSQL's SQL function for dates casts it.
    fn date_part(&mut self, unit: Typed, value: Typed) -> Result<Typed, SqlError> {
        let ty = match value.ty {
            Some(SqlType::Date) => SqlType::Timestamp,
            Some(t) if is_datetime(t) => t,
            None => return Err(not_unique("date_part", &[unit, value])),
            Some(_) => return Err(no_such_function("date_part", &[unit, value])),
        };
        let unit = self.coerce(unit, SqlType::Text, Coercion::Implicit, "date_part")?;
        let value = self.coerce(value, ty, Coercion::Implicit, "date_part")?;
        Ok(Typed { e: Expr::Func(Func::DatePart, vec![unit, value]), ty: Some(SqlType::Float8) })
    }

    /// `make_interval(years, months, weeks, days, hours, mins, secs)`,
    /// each argument by position or by name, the missing ones 0.
    fn make_interval(
        &mut self,
        positional: &[&ast::Expr],
        named: &[(String, &ast::Expr)],
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        const PARAMS: [&str; 7] = ["years", "months", "weeks", "days", "hours", "mins", "secs"];
        let mut given: Vec<(Option<&str>, Typed)> = Vec::with_capacity(positional.len() + named.len());
        for e in positional {
            given.push((None, self.expr(e, scope)?));
        }
        for (n, e) in named {
            given.push((Some(n.as_str()), self.expr(e, scope)?));
        }
        let mut slots: [Option<Typed>; 7] = Default::default();
        let mut fits = given.len() <= PARAMS.len();
        for (i, (n, t)) in given.iter().enumerate() {
            let slot = match n {
                Some(n) => PARAMS.iter().position(|p| p == n),
                None => Some(i),
            };
            match slot {
                Some(k) if k < PARAMS.len() && slots[k].is_none() => {
                    let ty = if k == 6 { SqlType::Float8 } else { SqlType::Int4 };
                    // bigint narrows to integer by assignment only.
                    let narrowing = ty == SqlType::Int4 && t.ty == Some(SqlType::Int8);
                    fits &= !narrowing && t.ty.is_none_or(|from| castable(from, ty, Coercion::Implicit));
                    slots[k] = Some(t.clone());
                }
                _ => fits = false,
            }
        }
        if !fits {
            let types: Vec<String> = given
                .iter()
                .map(|(n, t)| {
                    let ty = t.ty.map_or("unknown", SqlType::name);
                    n.map_or_else(|| ty.to_owned(), |n| format!("{n} => {ty}"))
                })
                .collect();
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function make_interval({}) does not exist", types.join(", ")),
            )
            .with_hint(NO_MATCH_HINT));
        }
        let mut args = Vec::with_capacity(PARAMS.len());
        for (k, slot) in slots.into_iter().enumerate() {
            let (ty, zero) =
                if k == 6 { (SqlType::Float8, Value::Float(0.0)) } else { (SqlType::Int4, Value::Int(0)) };
            args.push(match slot {
                Some(t) => self.coerce(t, ty, Coercion::Implicit, "make_interval")?,
                None => Expr::Const(zero),
            });
        }
        Ok(Typed { e: Expr::Func(Func::Scalar(scalar::MAKE_INTERVAL), args), ty: Some(SqlType::Interval) })
    }

    /// `value AT TIME ZONE zone` as written (out of line: the recursive
    /// expression binder's frame stays small).
    #[inline(never)]
    pub(super) fn at_time_zone_expr(
        &mut self,
        value: &ast::Expr,
        zone: &ast::Expr,
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let zone = self.expr(zone, scope)?;
        let value = self.expr(value, scope)?;
        self.at_time_zone(zone, value)
    }

    /// `value AT TIME ZONE zone`: a timestamp becomes an instant, a time
    /// with time zone moves to the zone, anything else is read as an
    /// instant and becomes a timestamp; the zone is text or an interval.
    pub(super) fn at_time_zone(&mut self, zone: Typed, value: Typed) -> Result<Typed, SqlError> {
        let zone = match zone.ty {
            Some(SqlType::Interval) => zone.e,
            _ => self.coerce(zone, SqlType::Text, Coercion::Implicit, "the time zone")?,
        };
        let (value, ty) = match value.ty {
            Some(SqlType::Timestamp) => (value.e, SqlType::TimestampTz),
            // A time of day moves to the zone's clock as it is now.
            Some(SqlType::TimeTz | SqlType::Time) => {
                (self.coerce(value, SqlType::TimeTz, Coercion::Implicit, "AT TIME ZONE")?, SqlType::TimeTz)
            }
            _ => (
                self.coerce(value, SqlType::TimestampTz, Coercion::Implicit, "AT TIME ZONE")?,
                SqlType::Timestamp,
            ),
        };
        Ok(Typed { e: Expr::Func(Func::AtTimeZone, vec![zone, value]), ty: Some(ty) })
    }
}

/// An aggregate's result type for an argument of type `arg` (`None`:
/// unknown, or no argument).
pub(super) fn aggregate_type(func: AggFunc, arg: Option<SqlType>, name: &str) -> Result<SqlType, SqlError> {
    Ok(match (func, arg) {
        (AggFunc::CountStar | AggFunc::Count, _) => SqlType::Int8,
        (AggFunc::Sum, Some(SqlType::Int2 | SqlType::Int4)) => SqlType::Int8,
        // sum(real) adds in real, as PostgreSQL's float4pl; the rest of
        // real's statistics are double precision.
        (AggFunc::Sum, Some(SqlType::Float4)) => SqlType::Float4,
        // PostgreSQL's exact results: a bigint sum, any integer average,
        // and every statistic of integers or numerics is numeric.
        (
            AggFunc::Sum
            | AggFunc::Avg
            | AggFunc::VarSamp
            | AggFunc::VarPop
            | AggFunc::StddevSamp
            | AggFunc::StddevPop,
            Some(SqlType::Int2 | SqlType::Int4 | SqlType::Int8 | SqlType::Numeric(_)),
        ) => SqlType::Numeric(-1),
        (
            AggFunc::Sum
            | AggFunc::Avg
            | AggFunc::VarSamp
            | AggFunc::VarPop
            | AggFunc::StddevSamp
            | AggFunc::StddevPop,
            Some(SqlType::Float8 | SqlType::Float4),
        ) => SqlType::Float8,
        (AggFunc::Sum | AggFunc::Avg, Some(SqlType::Interval)) => SqlType::Interval,
        (AggFunc::Min | AggFunc::Max, Some(t)) => t,
        (AggFunc::StringAgg, Some(_)) => SqlType::Text,
        (AggFunc::ArrayAggArray, Some(t)) => t,
        (AggFunc::ArrayAgg, Some(t)) => SqlType::Array(
            snapscale_values::Elem::of(t).ok_or_else(|| not_supported(format!("arrays of {}", t.name())))?,
        ),
        (AggFunc::BoolAnd | AggFunc::BoolOr, Some(SqlType::Bool)) => SqlType::Bool,
        (AggFunc::JsonAgg | AggFunc::JsonObjectAgg, Some(_)) => SqlType::Json,
        (AggFunc::JsonbAgg | AggFunc::JsonbObjectAgg, Some(_)) => SqlType::Jsonb,
        (_, t) => {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function {name}({}) does not exist", t.map_or("unknown", SqlType::name)),
            ))
        }
    })
}

/// `current_role`, `current_schema`, … written without parentheses.
pub(super) fn niladic(name: &str) -> Option<Func> {
    match name.to_ascii_lowercase().as_str() {
        "current_user" | "current_role" | "session_user" | "user" => Some(Func::CurrentUser),
        "current_catalog" => Some(Func::CurrentDatabase),
        "current_schema" => Some(Func::CurrentSchema),
        _ => None,
    }
}

impl<R: Resolver> Binder<'_, R> {
    /// `agg(x ORDER BY …)`: the keys, bound in the aggregate's input row
    /// (aggregates do not nest there).
    /// An aggregate's FILTER condition, bound with the query's aggregate
    /// list set aside: an aggregate inside FILTER is a grouping error.
    pub(super) fn aggregate_filter(
        &mut self,
        filter: Option<&ast::Expr>,
        scope: &Scope<'_>,
    ) -> Result<Option<Expr>, SqlError> {
        let Some(cond) = filter else { return Ok(None) };
        let saved = self.query.aggs.take();
        let t = self.expr(cond, scope);
        self.query.aggs = saved;
        let t = t.map_err(|mut e| {
            // An aggregate of this query; one of an enclosing query was
            // judged at its own level.
            if e.code == SqlState::GROUPING_ERROR && e.message.ends_with("here") {
                e.message = "aggregate functions are not allowed in FILTER".into();
            }
            e
        })?;
        Ok(Some(self.coerce(t, SqlType::Bool, Coercion::Implicit, "argument of FILTER")?))
    }

    /// `agg(DISTINCT args ORDER BY order_by)`: each ORDER BY key must be
    /// one of the arguments (42P10, placed at the key); the arguments not
    /// among the keys follow them, ascending, so that rows with equal
    /// arguments are adjacent once sorted.
    pub(super) fn distinct_order(
        &mut self,
        order: &mut Vec<crate::plan::SortKey>,
        order_by: &[ast::OrderByExpr],
        args: &[Expr],
    ) -> Result<(), SqlError> {
        for (k, o) in order.iter().zip(order_by) {
            if !args.contains(&k.expr) {
                let err = SqlError::new(
                    SqlState::INVALID_COLUMN_REFERENCE,
                    "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list",
                );
                return Err(super::expr::locate(self.origin.as_deref(), err, &o.expr));
            }
        }
        for a in args {
            if !order.iter().any(|k| k.expr == *a) {
                order.push(crate::plan::SortKey { expr: a.clone(), desc: false, nulls_first: false });
            }
        }
        Ok(())
    }

    /// A window call's slot in the query's window list: an equal call
    /// already there is shared.
    pub(super) fn window_slot(&mut self, call: crate::plan::WindowCall) -> usize {
        let windows = self.query.windows.as_mut().expect("window calls allowed here");
        match windows.iter().position(|w| *w == call) {
            Some(i) => i,
            None => {
                windows.push(call);
                windows.len() - 1
            }
        }
    }

    pub(super) fn aggregate_order(
        &mut self,
        order_by: &[ast::OrderByExpr],
        scope: &Scope<'_>,
    ) -> Result<Vec<crate::plan::SortKey>, SqlError> {
        let mut order = Vec::with_capacity(order_by.len());
        for o in order_by {
            let saved = self.query.aggs.take();
            let t = self.expr(&o.expr, scope);
            self.query.aggs = saved;
            let t = t.map_err(nested)?;
            let expr = self.settle(t)?;
            let desc = match &o.options.sort {
                None | Some(ast::OrderBySort::Asc) => false,
                Some(ast::OrderBySort::Desc) => true,
                Some(ast::OrderBySort::Using(_)) => return Err(not_supported("ORDER BY USING")),
            };
            if o.with_fill.is_some() {
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"WITH\""));
            }
            order.push(crate::plan::SortKey {
                expr,
                desc,
                nulls_first: o.options.nulls_first.unwrap_or(desc),
            });
        }
        Ok(order)
    }
}

const NO_MATCH_HINT: &str =
    "No function matches the given name and argument types. You might need to add explicit type casts.";

/// 42883 for a call no function takes, naming its argument types.
pub(super) fn no_such_function(name: &str, args: &[Typed]) -> SqlError {
    let types: Vec<&str> = args.iter().map(|t| t.ty.map_or("unknown", SqlType::name)).collect();
    SqlError::new(
        SqlState::UNDEFINED_FUNCTION,
        format!("function {name}({}) does not exist", types.join(", ")),
    )
    .with_hint(NO_MATCH_HINT)
}

/// 42725 for a call several functions take equally well (unknown
/// literals where they differ: `extract(year from '2020-01-01')`).
pub(super) fn not_unique(name: &str, args: &[Typed]) -> SqlError {
    let types: Vec<&str> = args.iter().map(|t| t.ty.map_or("unknown", SqlType::name)).collect();
    SqlError::new(
        SqlState::AMBIGUOUS_FUNCTION,
        format!("function {name}({}) is not unique", types.join(", ")),
    )
    .with_hint("Could not choose a best candidate function. You might need to add explicit type casts.")
}

/// `name => value` (or `name := value`, which the parser reads as an
/// assignment expression): the argument's name and value.
pub(super) fn named_arg(a: &FunctionArg) -> Option<(String, &ast::Expr)> {
    use ast::FunctionArgOperator as Op;
    let (name, value) = match a {
        FunctionArg::Named {
            name,
            arg: FunctionArgExpr::Expr(e),
            operator: Op::RightArrow | Op::Assignment,
        } => (name, e),
        FunctionArg::ExprNamed {
            name: ast::Expr::Identifier(name),
            arg: FunctionArgExpr::Expr(e),
            operator: Op::RightArrow | Op::Assignment,
        } => (name, e),
        FunctionArg::Unnamed(FunctionArgExpr::Expr(ast::Expr::BinaryOp {
            left,
            op: ast::BinaryOperator::Assignment,
            right,
        })) => match left.as_ref() {
            ast::Expr::Identifier(name) => (name, right.as_ref()),
            _ => return None,
        },
        _ => return None,
    };
    Some((ident(name), value))
}

/// The types EXTRACT and date_part take (a date, for date_part, as a
/// timestamp).
fn is_datetime(t: SqlType) -> bool {
    matches!(
        t,
        SqlType::Date
            | SqlType::Time
            | SqlType::TimeTz
            | SqlType::Timestamp
            | SqlType::TimestampTz
            | SqlType::Interval
    )
}

/// The SQL/JSON path functions' parameters: (target, path, vars DEFAULT
/// '{}', silent DEFAULT false).
const PATH_PARAMETERS: [&str; 4] = ["target", "path", "vars", "silent"];

/// `args` of a jsonb_path_* call with its named arguments (`silent =>
/// true`, `vars => …`) put in their places and the defaults of the ones
/// skipped filled in; `None` when there are none to place (or the function
/// is another).
pub(super) fn jsonpath_positional(
    name: &str,
    args: &[FunctionArg],
) -> Result<Option<Vec<FunctionArg>>, SqlError> {
    if !name.starts_with("jsonb_path_") || !args.iter().any(|a| named_arg(a).is_some()) {
        return Ok(None);
    }
    let mut slots: [Option<ast::Expr>; 4] = Default::default();
    let mut positional = 0;
    for a in args {
        match named_arg(a) {
            Some((n, e)) => {
                let at = PATH_PARAMETERS.iter().position(|p| *p == n).ok_or_else(|| {
                    SqlError::new(
                        SqlState::UNDEFINED_FUNCTION,
                        format!("function {name} has no parameter \"{n}\""),
                    )
                })?;
                if slots[at].replace(e.clone()).is_some() {
                    return Err(SqlError::new(
                        SqlState::SYNTAX_ERROR,
                        format!("argument name \"{n}\" used more than once"),
                    ));
                }
            }
            None if positional < 4 => {
                let FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) = a else { return Ok(None) };
                slots[positional] = Some(e.clone());
                positional += 1;
            }
            None => return Ok(None),
        }
    }
    let last = slots.iter().rposition(Option::is_some).unwrap_or(0);
    let default = |i: usize| -> Result<ast::Expr, SqlError> {
        crate::parse::parse_expr(if i == 2 { "'{}'::jsonb" } else { "false" }, 1 << 20)
    };
    let mut out = Vec::with_capacity(last + 1);
    for (i, slot) in slots.into_iter().take(last + 1).enumerate() {
        let e = match slot {
            Some(e) => e,
            None if i >= 2 => default(i)?,
            None => return Ok(None),
        };
        out.push(FunctionArg::Unnamed(FunctionArgExpr::Expr(e)));
    }
    Ok(Some(out))
}

/// 42803 "aggregate function calls cannot be nested" for an aggregate
/// found in an aggregate's arguments, placed where the inner call is.
pub(super) fn nested(mut e: SqlError) -> SqlError {
    if e.code == SqlState::GROUPING_ERROR && e.message.ends_with("not allowed here") {
        e.message = "aggregate function calls cannot be nested".into();
    }
    e
}
