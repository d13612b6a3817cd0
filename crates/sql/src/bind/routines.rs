//! CREATE [OR REPLACE] FUNCTION and DROP FUNCTION for SQL-language
//! functions, and the binding of a function's body (ROUTINE-ROWS,
//! ROUTINE-CALL in the crate's README).
//!
//! A definition is read and checked as PostgreSQL checks it: parameter
//! modes, names and defaults, the result type (declared, or implied by
//! OUT parameters), and the body, bound once now as
//! `check_function_bodies` does so that a body that names a missing table
//! or returns the wrong type is refused at CREATE.
//!
//! A body is bound as a query of its own, isolated from the statement that
//! calls it (as a view's query is), under a scope of its parameters: a
//! name that is not a column of the body's FROM items, or `$n`, reads
//! parameter n, which the body receives as its outer value n
//! (`Expr::Outer`). Every call passes all its parameters in order, so one
//! bound body serves every call of the statement, and a function that calls
//! itself is a subplan that runs itself.

use crate::parse::return_expr;
use snapscale_engine::routines::{ArgMode, RoutineArg, RoutineDef, RoutineKind, Volatility};
use snapscale_sqlstate::SqlState;
use snapscale_values::{Rec, SqlError, SqlType};
use sqlparser::ast::{self, DataType};

use super::scope::{Col, Scope};
use super::{ident, not_supported, relation_name, Binder, Coercion, Resolver, Typed};
use crate::expr::Expr;
use crate::parse::Parsed;
use crate::plan::{Column, Plan, Select, Utility};

/// 42P13 with `message`.
fn invalid(message: impl Into<String>) -> SqlError {
    SqlError::new(SqlState::INVALID_FUNCTION_DEFINITION, message)
}

impl<R: Resolver> Binder<'_, R> {
    pub(super) fn create_function(&mut self, c: &ast::CreateFunction) -> Result<Plan, SqlError> {
        if c.or_alter || c.temporary || c.if_not_exists {
            return Err(not_supported("this form of CREATE FUNCTION"));
        }
        if c.using.is_some() || c.options.is_some() || c.remote_connection.is_some() {
            return Err(not_supported("this form of CREATE FUNCTION"));
        }
        if c.determinism_specifier.is_some() {
            return Err(not_supported("DETERMINISTIC"));
        }
        if !c.set_params.is_empty() {
            return Err(not_supported("SET clauses of CREATE FUNCTION"));
        }
        let key = relation_name(&c.name)?;
        let name = snapscale_engine::names::bare(&key);
        let language = match (&c.language, &c.function_body) {
            (Some(l), _) => l.value.to_lowercase(),
            (None, Some(ast::CreateFunctionBody::Return(_))) => "sql".to_owned(),
            (None, None) if self.statement.pre.atomic_body.is_some() => "sql".to_owned(),
            (None, _) => return Err(invalid("no language specified")),
        };
        match language.as_str() {
            "sql" | "plpgsql" => {}
            "internal" | "c" => return Err(not_supported(format!("LANGUAGE {language}"))),
            other => {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_OBJECT,
                    format!("language \"{other}\" does not exist"),
                ))
            }
        }
        if language != "sql"
            && matches!(&c.return_type, Some(ast::FunctionReturnType::DataType(DataType::Custom(n, _)))
                if n.to_string().eq_ignore_ascii_case("event_trigger"))
        {
            return Err(not_supported("event triggers"));
        }
        let procedure = self.statement.pre.procedure;
        if procedure && c.return_type.is_some() {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"RETURNS\""));
        }
        let attributes = self.statement.pre.routine_attributes.clone().unwrap_or_default();
        if procedure {
            // A procedure has no volatility, strictness, cost or the like.
            if let Some(at) = attributes.function_only {
                let err = invalid("invalid attribute in procedure definition");
                return Err(match self.origin.as_deref().and_then(|o| o.position(at.line, at.column)) {
                    Some(p) => err.at_position(p),
                    None => err,
                });
            }
        }
        let atomic = self.statement.pre.atomic_body.clone();
        if atomic.is_some() && c.function_body.is_some() {
            return Err(SqlError::new(
                SqlState::INVALID_FUNCTION_DEFINITION,
                "duplicate function body specified",
            ));
        }
        let args = self.routine_args(c.args.as_deref().unwrap_or_default())?;
        if attributes.window {
            // A window function in SQL: only as a replacement, refused.
            let existing = self.resolver.routines(&key)?.into_iter().find(|e| {
                e.routine.as_ref().is_some_and(|r| {
                    r.input_types()
                        == args.iter().filter(|a| a.mode.is_input()).map(|a| a.ty).collect::<Vec<_>>()
                })
            });
            return Err(match existing.filter(|_| c.or_replace) {
                Some(e) => routine_kind_changed(&e),
                None => not_supported("window functions written in SQL"),
            });
        }
        let outputs: Vec<&RoutineArg> = args.iter().filter(|a| a.mode.is_output()).collect();
        let implied = match outputs.as_slice() {
            [] => None,
            [one] => Some(one.ty),
            _ => Some(SqlType::Record(Rec::Anonymous)),
        };
        let (returns, returns_set, table_columns) = match &c.return_type {
            Some(ast::FunctionReturnType::DataType(DataType::Table(Some(columns)))) => {
                if !outputs.is_empty() {
                    return Err(SqlError::new(
                        SqlState::SYNTAX_ERROR,
                        "OUT and INOUT arguments aren't allowed in TABLE functions",
                    ));
                }
                let mut cols = Vec::with_capacity(columns.len());
                for col in columns {
                    cols.push((ident(&col.name), self.result_type(&col.data_type)?));
                }
                let ty = match cols.as_slice() {
                    [(_, one)] => *one,
                    _ => SqlType::Record(Rec::Anonymous),
                };
                (ty, true, cols)
            }
            Some(ast::FunctionReturnType::DataType(dt)) => (self.declared_result(dt)?, false, Vec::new()),
            Some(ast::FunctionReturnType::SetOf(dt)) => (self.declared_result(dt)?, true, Vec::new()),
            None => match implied {
                Some(ty) => (ty, false, Vec::new()),
                None if procedure => (SqlType::Void, false, Vec::new()),
                None => return Err(invalid("function result type must be specified")),
            },
        };
        if returns == SqlType::Trigger {
            if language == "sql" {
                return Err(invalid("SQL functions cannot return type trigger"));
            }
            if returns_set {
                return Err(invalid("trigger functions cannot return a set"));
            }
            if !args.is_empty() {
                return Err(invalid("trigger functions cannot have declared arguments").with_hint(
                    "The arguments of the trigger can be accessed through TG_NARGS and TG_ARGV instead.",
                ));
            }
        }
        if let Some(implied) = implied {
            if implied != returns {
                return Err(invalid(format!(
                    "function result type must be {} because of OUT parameters",
                    implied.name()
                )));
            }
        }
        let sql_standard =
            atomic.is_some() || matches!(c.function_body, Some(ast::CreateFunctionBody::Return(_)));
        if sql_standard && args.iter().any(|a| matches!(a.ty, SqlType::Poly(_))) {
            return Err(invalid(
                "SQL function with unquoted function body cannot have polymorphic arguments",
            ));
        }
        let body = match (&c.function_body, &atomic) {
            (None, Some(text)) => {
                let statements = crate::parse::atomic_statements(text);
                for st in &statements {
                    check_atomic_statement(st)?;
                }
                statements.iter().map(|st| format!("{st};")).collect::<Vec<_>>().join("\n")
            }
            (body, _) => match body {
                Some(ast::CreateFunctionBody::Return(e)) => format!("RETURN {e}"),
                Some(
                    ast::CreateFunctionBody::AsBeforeOptions { body, link_symbol: None }
                    | ast::CreateFunctionBody::AsAfterOptions(body),
                ) => match string_of(body) {
                    Some(s) => s,
                    None => {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            format!("syntax error at or near \"{body}\""),
                        ))
                    }
                },
                Some(_) => return Err(invalid("only one AS item needed for language \"sql\"")),
                None => return Err(invalid("no function body specified")),
            },
        };
        let def = RoutineDef {
            kind: if procedure { RoutineKind::Procedure } else { RoutineKind::Function },
            language,
            args,
            returns,
            returns_set,
            table_columns,
            body,
            volatility: match c.behavior {
                Some(ast::FunctionBehavior::Immutable) => Volatility::Immutable,
                Some(ast::FunctionBehavior::Stable) => Volatility::Stable,
                Some(ast::FunctionBehavior::Volatile) | None => Volatility::Volatile,
            },
            strict: matches!(
                c.called_on_null,
                Some(ast::FunctionCalledOnNull::Strict | ast::FunctionCalledOnNull::ReturnsNullOnNullInput)
            ),
            security_definer: matches!(c.security, Some(ast::FunctionSecurity::Definer)),
            leakproof: attributes.leakproof.unwrap_or(false),
            atomic: atomic.is_some(),
            parallel: match c.parallel {
                Some(ast::FunctionParallel::Safe) => b's',
                Some(ast::FunctionParallel::Restricted) => b'r',
                Some(ast::FunctionParallel::Unsafe) | None => b'u',
            },
            cost: 100.0,
            rows: if returns_set { 1000.0 } else { 0.0 },
            row_type: self.row_type.take(),
            aggregate: None,
        };
        super::polymorphic::check_result(&def)?;
        if def.language == "plpgsql" {
            // check_function_bodies: PL/pgSQL's compiler checks the body
            // (its SQL is checked as it first runs, as PostgreSQL's is).
            let names = crate::plpgsql::declared_names(&def);
            let extra = crate::plpgsql::Extra::from_settings(|n| self.resolver.setting(n));
            let warnings = crate::plpgsql::parse(&def.body, self.stack.limit() / 1024)
                .and_then(|b| {
                    crate::plpgsql::check(&b, &names, crate::plpgsql::Returns::of(&def), &def.body, extra)
                })
                .map_err(|e| crate::plpgsql::compile_context(e, &name, &def.body, self.origin.as_deref()))?;
            for w in warnings {
                let n = crate::plpgsql::compile_warning(w, &def.body, self.origin.as_deref());
                self.resolver.notice(n);
            }
            return Ok(Plan::Utility(Utility::CreateRoutine {
                key,
                def: Box::new(def),
                replace: c.or_replace,
            }));
        }
        // A body that changes data runs as its statements, before the
        // statement that calls it (PL-CALLS): its statements are checked as
        // they first run. A polymorphic one is checked at each call, for
        // the types it is called with (as PostgreSQL does).
        if def.language == "sql" {
            self.check_body_calls(&name, &def)?;
        }
        if super::polymorphic::is_polymorphic(&def) || !body_is_query(&def, self.stack.limit())? {
            return Ok(Plan::Utility(Utility::CreateRoutine {
                key,
                def: Box::new(def),
                replace: c.or_replace,
            }));
        }
        // check_function_bodies: the body must bind, and give the result;
        // it may call the function itself.
        let entry = snapscale_engine::catalog::RelEntry {
            routine: Some(def.clone()),
            ..snapscale_engine::catalog::RelEntry::empty(0, &name, 0, 0)
        };
        let saved = self.creating.replace(std::sync::Arc::new(entry));
        let checked = self.routine_body(&name, &def);
        self.creating = saved;
        checked.map_err(|e| match e.context {
            None if e.code == SqlState::INVALID_FUNCTION_DEFINITION => {
                SqlError::from(snapscale_values::ErrorData {
                    context: Some(format!("SQL function \"{name}\"")),
                    ..e.into_data()
                })
            }
            _ => e,
        })?;
        Ok(Plan::Utility(Utility::CreateRoutine { key, def: Box::new(def), replace: c.or_replace }))
    }

    /// A SQL body's CALLs: a procedure with output parameters cannot be
    /// called from one (PostgreSQL refuses it when the body is checked).
    fn check_body_calls(&mut self, name: &str, def: &RoutineDef) -> Result<(), SqlError> {
        let Ok(parsed) = crate::parse::parse(&runnable_body(def), self.stack.limit()) else {
            // Its errors are the body's own, reported where it runs.
            return Ok(());
        };
        for p in &parsed {
            let Parsed::Sql(ast) = p else { continue };
            let ast::Statement::Call(f) = &**ast else { continue };
            let count = match &f.args {
                ast::FunctionArguments::List(l) => l.args.len(),
                _ => 0,
            };
            let Ok(key) = relation_name(&f.name) else { continue };
            let with_outputs = self.resolver.routines(&key)?.iter().any(|e| {
                e.routine.as_ref().is_some_and(|r| {
                    r.kind == RoutineKind::Procedure
                        && r.args.len() == count
                        && r.args.iter().any(|a| a.mode.is_output())
                })
            });
            if with_outputs {
                let err = SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "calling procedures with output arguments is not supported in SQL functions",
                );
                return Err(SqlError::from(snapscale_values::ErrorData {
                    context: Some(format!("SQL function \"{name}\"")),
                    ..err.into_data()
                }));
            }
        }
        Ok(())
    }

    /// A declared result type: a type, or a table's or view's row type,
    /// whose columns (as they are now) become the result's
    /// (`Binder::row_type`).
    fn declared_result(&mut self, dt: &DataType) -> Result<SqlType, SqlError> {
        let e = match self.result_type(dt) {
            Ok(SqlType::Composite(u)) => {
                // A composite type's attributes are the result's columns,
                // as a table's are.
                let columns = self.composite_fields(u)?;
                let name = SqlType::Composite(u).name().to_owned();
                self.row_type = Some(snapscale_engine::routines::RowType { name, columns });
                return Ok(SqlType::Composite(u));
            }
            Ok(ty) => return Ok(ty),
            Err(e) if e.code == SqlState::UNDEFINED_OBJECT => e,
            Err(e) => return Err(e),
        };
        let DataType::Custom(name, _) = dt else { return Err(e) };
        let Ok(key) = relation_name(name) else { return Err(e) };
        match self.resolver.resolve(&key)? {
            Some(rel) if rel.entry.sequence.is_none() => {
                let columns = rel.entry.columns.iter().map(|c| (c.name.clone(), c.ty)).collect();
                self.row_type =
                    Some(snapscale_engine::routines::RowType { name: rel.entry.name.clone(), columns });
                Ok(SqlType::Record(Rec::Anonymous))
            }
            _ => Err(e),
        }
    }

    /// The declared parameters, checked as PostgreSQL checks them.
    fn routine_args(&mut self, declared: &[ast::OperateFunctionArg]) -> Result<Vec<RoutineArg>, SqlError> {
        let mut args: Vec<RoutineArg> = Vec::with_capacity(declared.len());
        let mut seen_default = false;
        let mut seen_variadic = false;
        let procedure = self.statement.pre.procedure;
        for a in declared {
            let mode = match a.mode {
                None | Some(ast::ArgMode::In) => ArgMode::In,
                Some(ast::ArgMode::Out) => ArgMode::Out,
                Some(ast::ArgMode::InOut) => ArgMode::InOut,
                Some(ast::ArgMode::Variadic) => ArgMode::Variadic,
            };
            let name = a.name.as_ref().map(ident).unwrap_or_default();
            let ty = self.result_type(&a.data_type)?;
            if ty == SqlType::Void {
                return Err(invalid("SQL functions cannot have arguments of type void"));
            }
            if ty == SqlType::Trigger {
                return Err(not_supported("functions with arguments of type trigger"));
            }
            if seen_variadic && procedure {
                return Err(invalid("VARIADIC parameter must be the last parameter"));
            }
            if seen_variadic && mode != ArgMode::Out {
                return Err(invalid("VARIADIC parameter must be the last input parameter"));
            }
            if procedure && seen_default && mode == ArgMode::Out {
                return Err(invalid("procedure OUT parameters cannot appear after one with a default value"));
            }
            if mode == ArgMode::Variadic {
                // anyarray and anycompatiblearray stand for an array too.
                let poly_array = matches!(ty, SqlType::Poly(p) if p.is_array());
                if !matches!(ty, SqlType::Array(_)) && !poly_array {
                    return Err(invalid("VARIADIC parameter must be an array"));
                }
                seen_variadic = true;
            }
            // An input and an output parameter may share a name.
            if !name.is_empty()
                && args.iter().any(|b| {
                    b.name == name
                        && (b.mode.is_input() && mode.is_input() || b.mode.is_output() && mode.is_output())
                })
            {
                return Err(invalid(format!("parameter name \"{name}\" used more than once")));
            }
            let default = match &a.default_expr {
                Some(_) if !mode.is_input() => {
                    return Err(invalid("only input parameters can have default values"))
                }
                Some(d) => {
                    let t = self.expr(d, &Scope::empty())?;
                    self.coerce(t, ty, Coercion::Assignment, "DEFAULT")?;
                    seen_default = true;
                    Some(d.to_string())
                }
                None if seen_default && mode.is_input() => {
                    return Err(invalid(
                        "input parameters after one with a default value must also have defaults",
                    ))
                }
                None => None,
            };
            args.push(RoutineArg { name, ty, mode, default });
        }
        Ok(args)
    }

    /// A parameter's or result's type: any type, `void`, or `record`.
    pub(super) fn result_type(&mut self, dt: &DataType) -> Result<SqlType, SqlError> {
        if let DataType::Trigger = dt {
            return Ok(SqlType::Trigger);
        }
        if let DataType::Custom(name, _) = dt {
            if let Ok(n) = relation_name(name) {
                if let Some(p) = snapscale_values::Poly::named(&snapscale_engine::names::bare(&n)) {
                    return Ok(SqlType::Poly(p));
                }
                match snapscale_engine::names::bare(&n).as_str() {
                    "void" => return Ok(SqlType::Void),
                    "trigger" => return Ok(SqlType::Trigger),
                    "event_trigger" => return Err(invalid("SQL functions cannot return type event_trigger")),
                    _ => {}
                }
            }
        }
        Ok(self.resolve_type_with_domain(dt)?.0)
    }

    /// The columns a call of `def` gives: its OUT parameters or TABLE
    /// columns, or else one named after the function.
    pub(super) fn routine_columns(name: &str, def: &RoutineDef) -> Vec<(String, SqlType)> {
        let out = def.result_columns();
        if out.len() > 1 {
            // An unnamed output parameter's column is named for its place.
            return out
                .into_iter()
                .enumerate()
                .map(|(i, (n, ty))| if n.is_empty() { (format!("column{}", i + 1), ty) } else { (n, ty) })
                .collect();
        }
        match out.into_iter().next() {
            Some((n, ty)) if !n.is_empty() => vec![(n, ty)],
            Some((_, ty)) => vec![(name.to_owned(), ty)],
            None => vec![(name.to_owned(), def.returns)],
        }
    }

    /// `def`'s body bound as a query over its parameters (outer values
    /// 0..n, one per input parameter), its columns converted to the
    /// result's. `name` is the function's, for its messages.
    pub(super) fn routine_body(&mut self, name: &str, def: &RoutineDef) -> Result<Select, SqlError> {
        let text = runnable_body(def).into_owned();
        let void = def.returns == SqlType::Void;
        let mut parsed = crate::parse::parse(&text, self.stack.limit())?;
        if parsed.is_empty() && void {
            // No statements: a void function that does nothing.
            parsed = crate::parse::parse("SELECT NULL WHERE false", self.stack.limit())?;
        }
        let last = parsed.pop();
        for p in &parsed {
            body_query(p)?;
        }
        let Some(last) = last else {
            return Err(invalid(format!(
                "return type mismatch in function declared to return {}",
                def.returns.name()
            ))
            .with_detail("Function's final statement must be SELECT or INSERT/UPDATE/DELETE RETURNING."));
        };
        let q = body_query(&last)?;
        // The statements before the last are checked, not run: a query
        // has no effect of its own (its volatile calls' aside).
        for p in &parsed {
            self.bind_body_query(def, body_query(p)?)?;
        }
        let mut select = self.bind_body_query(def, q)?;
        if void {
            return Ok(select);
        }
        let columns = if def.result_columns().len() > 1 || def.returns == SqlType::Record(Rec::Anonymous) {
            def.result_columns()
        } else {
            vec![(name.to_owned(), def.returns)]
        };
        let anonymous = columns.is_empty();
        let declared = def.returns.name();
        let one_row_value = select.outputs.len() == 1
            && columns.len() > 1
            && matches!(select.columns[0].ty, SqlType::Record(_) | SqlType::Composite(_));
        if one_row_value {
            return self.row_value_result(def, select, columns);
        }
        if !anonymous && select.outputs.len() != columns.len() {
            let detail = if columns.len() == 1 {
                "Final statement must return exactly one column.".to_owned()
            } else if select.outputs.len() > columns.len() {
                "Final statement returns too many columns.".to_owned()
            } else {
                "Final statement returns too few columns.".to_owned()
            };
            return Err(invalid(format!("return type mismatch in function declared to return {declared}"))
                .with_detail(detail));
        }
        if anonymous {
            return Ok(select);
        }
        let outputs = std::mem::take(&mut select.outputs);
        let mut converted = Vec::with_capacity(outputs.len());
        for (i, (e, (_, ty))) in outputs.into_iter().zip(&columns).enumerate() {
            let from = select.columns[i].ty;
            if from == *ty {
                converted.push(e);
                continue;
            }
            if !super::coerce::castable(from, *ty, Coercion::Assignment) {
                let detail = if columns.len() == 1 {
                    format!("Actual return type is {}.", from.name())
                } else {
                    format!(
                        "Final statement returns {} instead of {} at column {}.",
                        from.name(),
                        ty.name(),
                        i + 1
                    )
                };
                return Err(invalid(format!(
                    "return type mismatch in function declared to return {declared}"
                ))
                .with_detail(detail));
            }
            converted.push(self.coerce(Typed { e, ty: Some(from) }, *ty, Coercion::Assignment, "result")?);
        }
        select.outputs = converted;
        select.columns = columns.iter().map(|(n, ty)| Column { name: n.clone(), ty: *ty }).collect();
        Ok(select)
    }

    /// A final statement whose one column is a row value (`SELECT (1,
    /// 2.1)`) for a result of several columns: the row's fields are the
    /// columns. A row constructor's fields are counted against them where
    /// the function is called (PostgreSQL checks the row as it is
    /// returned; the definition is accepted).
    fn row_value_result(
        &mut self,
        def: &RoutineDef,
        select: Select,
        columns: Vec<(String, SqlType)>,
    ) -> Result<Select, SqlError> {
        let creating = self.creating.as_ref().is_some_and(|e| e.routine.as_ref() == Some(def));
        if let Expr::Func(crate::expr::Func::MakeRecord, fields) = &select.outputs[0] {
            if fields.len() != columns.len() && !creating {
                let n = fields.len();
                return Err(SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    "function return row and query-specified return row do not match",
                )
                .with_detail(format!(
                    "Returned row contains {n} attribute{}, but query expects {}.",
                    if n == 1 { "" } else { "s" },
                    columns.len()
                )));
            }
        }
        let outputs = (0..columns.len())
            .map(|i| Expr::Func(crate::expr::Func::Field(i), vec![Expr::Column(0)]))
            .collect();
        Ok(Select {
            from: Some(crate::plan::From::Derived(Box::new(select))),
            filter: None,
            grouping: None,
            windows: Vec::new(),
            srfs: Vec::new(),
            outputs,
            columns: columns.iter().map(|(n, ty)| Column { name: n.clone(), ty: *ty }).collect(),
            order: Vec::new(),
            limit: None,
            offset: None,
            lock: None,
            distinct_on: Vec::new(),
        })
    }

    /// One query of a body, bound under the parameters' scope and isolated
    /// from the statement binding it.
    fn bind_body_query(&mut self, def: &RoutineDef, q: &ast::Query) -> Result<Select, SqlError> {
        let inputs: Vec<&RoutineArg> = def.args.iter().filter(|a| a.mode.is_input()).collect();
        let mut visible = Vec::with_capacity(inputs.len() * 2);
        for (i, a) in inputs.iter().enumerate() {
            if !a.name.is_empty() {
                visible.push(Col { name: a.name.clone(), expr: Expr::Param(i), ty: a.ty });
            }
        }
        let numbered: Vec<Col> = inputs
            .iter()
            .enumerate()
            .map(|(i, a)| Col { name: format!("${}", i + 1), expr: Expr::Param(i), ty: a.ty })
            .collect();
        let params = Scope::empty().with_items(Vec::new(), visible.into_iter().chain(numbered).collect());
        let body = params.child();
        body.seed_args((0..inputs.len()).map(Expr::Param).collect());
        self.isolated(|b| b.query_scoped(q, &body))
    }

    /// Runs `f` as a stored query is bound: without the statement's WITH
    /// items, error positions, locking clauses or subquery depth, and with
    /// `$n` read as the routine's parameter.
    fn isolated<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T, SqlError>) -> Result<T, SqlError> {
        let ctes = std::mem::take(&mut self.ctes);
        let origin = self.origin.take();
        let strengths = self.statement.lock_strengths.take();
        let wildcards = self.statement.wildcards.take();
        let sublinks = std::mem::replace(&mut self.sublink_depth, 0);
        let in_routine = std::mem::replace(&mut self.in_routine, true);
        let bound = f(self);
        self.ctes = ctes;
        self.origin = origin;
        self.statement.lock_strengths = strengths;
        self.statement.wildcards = wildcards;
        self.sublink_depth = sublinks;
        self.in_routine = in_routine;
        bound
    }

    /// `$n` in a routine's body: its parameter n.
    pub(super) fn routine_param(&mut self, p: &str, scope: &Scope<'_>) -> Result<Typed, SqlError> {
        match scope.column(None, p) {
            Ok((e, ty)) => Ok(Typed { e, ty: Some(ty) }),
            Err(_) => Err(SqlError::new(SqlState::UNDEFINED_PARAMETER, format!("there is no parameter {p}"))),
        }
    }

    /// The routine an ALTER or DROP names (`name` alone, or with its
    /// argument types), found as PostgreSQL's LookupFuncWithArgs finds it:
    /// among the routines the word admits when the name stands alone; else
    /// by its input types (or, for a procedure named without modes, all
    /// its parameters' types), then checked to be of the word's kind.
    /// `Ok(Err(text))`: missing, with `missing_ok`, as the "does not exist,
    /// skipping" notice names it.
    pub(super) fn lookup_routine(
        &mut self,
        f: &ast::FunctionDesc,
        word: Word,
        missing_ok: bool,
    ) -> Result<Result<std::sync::Arc<snapscale_engine::catalog::RelEntry>, String>, SqlError> {
        let key = relation_name(&f.name)?;
        let name = snapscale_engine::names::bare(&key);
        let all = self.resolver.routines(&key)?;
        let Some(args) = &f.args else {
            let candidates: Vec<_> =
                all.iter().filter(|e| e.routine.as_ref().is_some_and(|r| word.admits(r.kind))).collect();
            return match candidates.as_slice() {
                [one] => Ok(Ok(std::sync::Arc::clone(one))),
                [] if missing_ok => Ok(Err(format!("{} {name}()", word.noun()))),
                [] => Err(no_routine_named(word.missing(), &name)),
                _ => Err(routine_not_unique(word.noun(), &name).with_hint(format!(
                    "Specify the argument list to select the {} unambiguously.",
                    word.noun()
                ))),
            };
        };
        let explicit_modes = args.iter().any(|a| a.mode.is_some());
        let mut inputs = Vec::new();
        let mut every = Vec::new();
        for a in args {
            let ty = self.result_type(&a.data_type)?;
            if !matches!(a.mode, Some(ast::ArgMode::Out)) {
                inputs.push(ty);
            }
            every.push(ty);
        }
        let found: Vec<_> = all
            .iter()
            .filter(|e| {
                e.routine.as_ref().is_some_and(|r| {
                    r.input_types() == inputs
                        || (word != Word::Function
                            && !explicit_modes
                            && r.kind == RoutineKind::Procedure
                            && r.args.iter().map(|a| a.ty).collect::<Vec<_>>() == every)
                })
            })
            .collect();
        let listed: Vec<&str> = inputs.iter().map(|t| t.name()).collect();
        let entry = match found.as_slice() {
            [one] => std::sync::Arc::clone(one),
            [] if missing_ok => {
                let qualified: Vec<String> = inputs.iter().map(qualified_type_name).collect();
                return Ok(Err(format!("{} {name}({})", word.noun(), qualified.join(","))));
            }
            [] => {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_FUNCTION,
                    format!("{} {name}({}) does not exist", word.missing(), listed.join(", ")),
                ))
            }
            _ => return Err(routine_not_unique(word.noun(), &name)),
        };
        let kind = entry.routine.as_ref().expect("a routine row").kind;
        if kind == RoutineKind::Aggregate && word != Word::Procedure {
            return Err(SqlError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("\"{}\" is an aggregate function", f.name),
            ));
        }
        let wrong = match (word, kind) {
            (Word::Function, RoutineKind::Procedure) => Some("function"),
            (Word::Procedure, RoutineKind::Function | RoutineKind::Aggregate) => Some("procedure"),
            _ => None,
        };
        if let Some(what) = wrong {
            return Err(SqlError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("{name}({}) is not a {what}", listed.join(", ")),
            ));
        }
        Ok(Ok(entry))
    }

    /// ALTER {FUNCTION | PROCEDURE | ROUTINE} … actions (attributes) or
    /// RENAME TO; SET SCHEMA and OWNER TO are refused.
    pub(super) fn alter_function(&mut self, a: &ast::AlterFunction) -> Result<Plan, SqlError> {
        if a.kind != ast::AlterFunctionKind::Function {
            return Err(not_supported("ALTER AGGREGATE"));
        }
        let word = Word::of(self.statement.pre.routine_word);
        let tag = word.alter_tag();
        let (actions, rename) = match &a.operation {
            ast::AlterFunctionOperation::Actions { actions, .. } => (actions.as_slice(), None),
            ast::AlterFunctionOperation::RenameTo { new_name } => (&[][..], Some(ident(new_name))),
            other => {
                return Err(not_supported(format!(
                    "{tag} … {}",
                    match other {
                        ast::AlterFunctionOperation::OwnerTo(_) => "OWNER TO",
                        ast::AlterFunctionOperation::SetSchema { .. } => "SET SCHEMA",
                        _ => "DEPENDS ON EXTENSION",
                    }
                )))
            }
        };
        let entry = self.lookup_routine(&a.function, word, false)?.expect("not missing_ok");
        let mut def = entry.routine.clone().expect("a routine row");
        if def.kind == RoutineKind::Procedure {
            // A procedure has no volatility, strictness, cost or the like.
            let function_only = self.statement.pre.routine_attributes.as_ref().and_then(|r| r.function_only);
            if let Some(at) = function_only {
                let err = invalid("invalid attribute in procedure definition");
                return Err(match self.origin.as_deref().and_then(|o| o.position(at.line, at.column)) {
                    Some(p) => err.at_position(p),
                    None => err,
                });
            }
        }
        for action in actions {
            match action {
                ast::AlterFunctionAction::CalledOnNull(c) => {
                    def.strict = !matches!(c, ast::FunctionCalledOnNull::CalledOnNullInput);
                }
                ast::AlterFunctionAction::Behavior(b) => {
                    def.volatility = match b {
                        ast::FunctionBehavior::Immutable => Volatility::Immutable,
                        ast::FunctionBehavior::Stable => Volatility::Stable,
                        ast::FunctionBehavior::Volatile => Volatility::Volatile,
                    };
                }
                ast::AlterFunctionAction::Leakproof(on) => def.leakproof = *on,
                ast::AlterFunctionAction::Security { security, .. } => {
                    def.security_definer = matches!(security, ast::FunctionSecurity::Definer);
                }
                ast::AlterFunctionAction::Parallel(p) => {
                    def.parallel = match p {
                        ast::FunctionParallel::Safe => b's',
                        ast::FunctionParallel::Restricted => b'r',
                        ast::FunctionParallel::Unsafe => b'u',
                    };
                }
                ast::AlterFunctionAction::Cost(e) | ast::AlterFunctionAction::Rows(e) => {
                    let n: f32 = e.to_string().parse().map_err(|_| {
                        SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{e}\""))
                    })?;
                    if n <= 0.0 {
                        let which =
                            if matches!(action, ast::AlterFunctionAction::Cost(_)) { "COST" } else { "ROWS" };
                        return Err(SqlError::new(
                            SqlState::INVALID_PARAMETER_VALUE,
                            format!("{which} must be positive"),
                        ));
                    }
                    match action {
                        ast::AlterFunctionAction::Cost(_) => def.cost = n,
                        _ if !def.returns_set => {
                            return Err(SqlError::new(
                                SqlState::INVALID_PARAMETER_VALUE,
                                "ROWS is not applicable when function does not return a set",
                            ))
                        }
                        _ => def.rows = n,
                    }
                }
                other => return Err(not_supported(format!("{tag} … {other}"))),
            }
        }
        Ok(Plan::Utility(Utility::AlterRoutine { oid: entry.oid, def: Box::new(def), tag, rename }))
    }

    /// DROP {FUNCTION | PROCEDURE | ROUTINE}: each name with its argument
    /// types, or alone if only one routine has it.
    pub(super) fn drop_function(
        &mut self,
        func_desc: &[ast::FunctionDesc],
        if_exists: bool,
        word: Word,
        cascade: bool,
    ) -> Result<Plan, SqlError> {
        let mut targets = Vec::new();
        for f in func_desc {
            let found = self.lookup_routine(f, word, if_exists).map_err(|e| {
                if e.code == SqlState::WRONG_OBJECT_TYPE && e.message.ends_with("is an aggregate function") {
                    e.with_hint("Use DROP AGGREGATE to drop aggregate functions.")
                } else {
                    e
                }
            })?;
            match found {
                Ok(entry) => targets.push((entry.name.clone(), Some(entry.oid))),
                Err(skipped) => targets.push((skipped, None)),
            }
        }
        Ok(Plan::Utility(Utility::DropRoutines { targets, tag: word.drop_tag(), cascade }))
    }
}

/// The word an ALTER or DROP named its routines with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Word {
    Function,
    Procedure,
    Routine,
}

impl Word {
    pub(super) fn of(written: Option<crate::parse::RoutineWord>) -> Word {
        match written {
            None => Word::Function,
            Some(crate::parse::RoutineWord::Procedure) => Word::Procedure,
            Some(crate::parse::RoutineWord::Routine) => Word::Routine,
        }
    }

    /// Whether a routine named alone may be of `kind`.
    fn admits(self, kind: RoutineKind) -> bool {
        match self {
            Word::Function => kind == RoutineKind::Function,
            Word::Procedure => kind == RoutineKind::Procedure,
            Word::Routine => true,
        }
    }

    /// How "is not unique" and "does not exist, skipping" name it.
    fn noun(self) -> &'static str {
        match self {
            Word::Function => "function",
            Word::Procedure => "procedure",
            Word::Routine => "routine",
        }
    }

    /// How "does not exist" names it (PostgreSQL says function for a
    /// routine).
    fn missing(self) -> &'static str {
        match self {
            Word::Procedure => "procedure",
            _ => "function",
        }
    }

    fn alter_tag(self) -> &'static str {
        match self {
            Word::Function => "ALTER FUNCTION",
            Word::Procedure => "ALTER PROCEDURE",
            Word::Routine => "ALTER ROUTINE",
        }
    }

    fn drop_tag(self) -> &'static str {
        match self {
            Word::Function => "DROP FUNCTION",
            Word::Procedure => "DROP PROCEDURE",
            Word::Routine => "DROP ROUTINE",
        }
    }
}

/// A type's name as PostgreSQL's "does not exist, skipping" notice for a
/// function writes it: a built-in one under pg_catalog by its internal
/// name.
pub(super) fn qualified_type_name(t: &SqlType) -> String {
    let name = t.name();
    let internal = match name {
        "integer" => "int4",
        "smallint" => "int2",
        "bigint" => "int8",
        "boolean" => "bool",
        "real" => "float4",
        "double precision" => "float8",
        "character varying" => "varchar",
        "character" => "bpchar",
        "timestamp without time zone" => "timestamp",
        "timestamp with time zone" => "timestamptz",
        "time without time zone" => "time",
        "time with time zone" => "timetz",
        other => other,
    };
    // Only a type with an SQL-standard name of its own is written by its
    // internal name, qualified (PostgreSQL's format_type_be_qualified).
    if internal == name {
        name.to_owned()
    } else {
        format!("pg_catalog.{internal}")
    }
}

/// The text of a body given as a string constant.
fn string_of(e: &ast::Expr) -> Option<String> {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) | ast::Value::EscapedStringLiteral(s) => Some(s.clone()),
            ast::Value::DollarQuotedString(d) => Some(d.value.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// Whether a SQL function's body is queries alone (bound into the calling
/// statement, ROUTINE-CALL) rather than statements that change data or
/// the catalog (run before it, PL-CALLS). A procedure's is always run.
pub(crate) fn body_is_query(def: &RoutineDef, limit: usize) -> Result<bool, SqlError> {
    if def.kind == RoutineKind::Procedure {
        return Ok(false);
    }
    if def.body.starts_with("RETURN ") && !def.atomic {
        return Ok(true);
    }
    let parsed = crate::parse::parse(&runnable_body(def), limit)?;
    Ok(parsed.iter().all(|p| matches!(p, Parsed::Sql(ast) if matches!(&**ast, ast::Statement::Query(_)))))
}

/// One statement of a SQL function's body, which must be a query here.
fn body_query(p: &Parsed) -> Result<&ast::Query, SqlError> {
    match p {
        Parsed::Sql(ast) => match &**ast {
            ast::Statement::Query(q) => Ok(q),
            ast::Statement::Insert(_) | ast::Statement::Update(_) | ast::Statement::Delete(_) => {
                Err(not_supported("INSERT, UPDATE or DELETE in a SQL function (yet)"))
            }
            other => Err(not_supported(format!(
                "{} in a SQL function",
                other.to_string().split_whitespace().take(2).collect::<Vec<_>>().join(" ").to_uppercase()
            ))),
        },
        _ => Err(not_supported("this statement in a SQL function")),
    }
}

/// 42883 for a routine named without arguments that does not exist.
fn no_routine_named(what: &str, name: &str) -> SqlError {
    SqlError::new(SqlState::UNDEFINED_FUNCTION, format!("could not find a {what} named \"{name}\""))
}

/// 42725 for a routine name that several routines answer to.
fn routine_not_unique(what: &str, name: &str) -> SqlError {
    SqlError::new(SqlState::AMBIGUOUS_FUNCTION, format!("{what} name \"{name}\" is not unique"))
}

/// 42809 for CREATE OR REPLACE of a routine of another kind than `old`.
pub(crate) fn routine_kind_changed(old: &snapscale_engine::catalog::RelEntry) -> SqlError {
    let kind = match old.routine.as_ref().map(|r| r.kind) {
        Some(RoutineKind::Procedure) => "a procedure",
        Some(RoutineKind::Aggregate) => "an aggregate function",
        _ => "a function",
    };
    SqlError::new(SqlState::WRONG_OBJECT_TYPE, "cannot change routine kind")
        .with_detail(format!("\"{}\" is {kind}.", old.name))
}

/// One statement of a `BEGIN ATOMIC` body: a query or a data-changing
/// statement (or RETURN); a utility statement is refused as PostgreSQL
/// refuses it, naming its command tag.
fn check_atomic_statement(text: &str) -> Result<(), SqlError> {
    let words: Vec<String> = text.split_whitespace().take(3).map(str::to_ascii_uppercase).collect();
    let first = words.first().map(String::as_str).unwrap_or_default();
    if matches!(
        first,
        "SELECT" | "INSERT" | "UPDATE" | "DELETE" | "MERGE" | "VALUES" | "WITH" | "TABLE" | "RETURN"
    ) || first.starts_with('(')
    {
        return Ok(());
    }
    let tag = match first {
        "CREATE" | "ALTER" | "DROP" => {
            let mut tag = words[..words.len().min(2)].join(" ");
            if words.get(1).is_some_and(|w| w == "OR") || words.get(1).is_some_and(|w| w == "UNIQUE") {
                tag = format!("{first} {}", words.last().map(String::as_str).unwrap_or_default());
            }
            tag
        }
        _ => first.to_owned(),
    };
    Err(SqlError::new(
        SqlState::FEATURE_NOT_SUPPORTED,
        format!("{tag} is not yet supported in unquoted SQL function body"),
    ))
}

/// The text a SQL function's body runs as: a RETURN body, and each RETURN
/// of a `BEGIN ATOMIC` body, as the SELECT it amounts to.
pub(crate) fn runnable_body(def: &RoutineDef) -> std::borrow::Cow<'_, str> {
    if def.atomic {
        let statements: Vec<String> = crate::parse::atomic_statements(&def.body)
            .into_iter()
            .map(|st| match return_expr(st) {
                Some(e) => format!("SELECT {e}"),
                None => st.to_owned(),
            })
            .collect();
        return std::borrow::Cow::Owned(statements.join(";\n"));
    }
    match def.body.strip_prefix("RETURN ") {
        Some(e) if def.language == "sql" => std::borrow::Cow::Owned(format!("SELECT {e}")),
        _ => std::borrow::Cow::Borrowed(&def.body),
    }
}
