//! PL/pgSQL's executor: the interpreter (`run.rs`), how it runs SQL
//! (`spi.rs`), and calls of PL/pgSQL functions made for a statement before
//! it runs (PL-CALLS, PL-DEPTH in the crate's README). The language
//! itself (its grammar and compiler checks) is `plpgsql`'s.

mod record_stars;
mod run;
pub(crate) mod spi;
pub(crate) mod trigger;

pub(crate) use run::{CallName, Interp};

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use crate::plpgsql::{check, compile_context, parse};

/// Runs a statement's PL/pgSQL calls in order (PL-CALLS): each one's
/// arguments evaluated with the statement's parameters and the results of
/// the calls before it.
pub(crate) async fn call_all(
    spi: &mut spi::Spi<'_>,
    calls: &[crate::plan::PlCall],
    params: &[snapscale_values::Value],
) -> Result<Vec<snapscale_values::Value>, SqlError> {
    let mut called = Vec::with_capacity(calls.len());
    for c in calls {
        if c.per_row {
            called.push(snapscale_values::Value::Null);
            continue;
        }
        let mut args = Vec::with_capacity(c.args.len());
        for a in &c.args {
            args.push(crate::exec::evaluate_alone(spi.xact, spi.limits, a, params, &called)?);
        }
        called.push(call(spi, &c.routine, args).await?);
    }
    Ok(called)
}

/// How many PL/pgSQL calls may nest whatever the stack says (a task that
/// moved between threads cannot measure it).
const MAX_DEPTH: usize = 1000;

/// PL-DEPTH: a nested call's futures are polled through every level above
/// it, on the thread's stack; past max_stack_depth below where the session
/// started it (or MAX_DEPTH levels), 54001.
fn too_deep(spi: &spi::Spi<'_>) -> bool {
    spi.depth >= MAX_DEPTH
        || crate::stack::used_since(spi.stack).is_some_and(|used| used > spi.limits.max_stack_depth)
}

/// A function's body as compiled for a session (PL-CACHE): parsed and
/// checked once, its statements' plans kept between calls (each made
/// current before it runs, PLAN-FRESH), for as long as the catalog row it
/// was compiled from is the function's.
pub(crate) struct Compiled {
    entry: std::sync::Arc<snapscale_engine::catalog::RelEntry>,
    body: std::sync::Arc<Body>,
    name: CallName,
    statements: run::Statements,
}

enum Body {
    Pl(crate::plpgsql::ast::Block),
    /// A SQL function's statements, run in order.
    Sql(Vec<crate::plpgsql::ast::Sql>),
}

/// A session's compiled functions, by oid and (a trigger function's, as
/// PostgreSQL compiles one per table: NEW's fields are the table's) the
/// table it fires for, 0 for any other call.
#[derive(Default)]
pub(crate) struct Functions(std::collections::HashMap<(u32, u32), Compiled, run::BuildAddr>);

/// Calls PL/pgSQL function `routine` with `args`.
pub(crate) fn call<'a>(
    spi: &'a mut spi::Spi<'_>,
    routine: &'a std::sync::Arc<snapscale_engine::catalog::RelEntry>,
    args: Vec<snapscale_values::Value>,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<snapscale_values::Value, SqlError>> + Send + 'a>>
{
    Box::pin(async move {
        let def = routine.routine.as_ref().expect("a routine row");
        if def.strict && args.iter().any(|a| matches!(a, snapscale_values::Value::Null)) {
            return Ok(if def.returns_set {
                snapscale_values::Value::array(Vec::new())
            } else {
                snapscale_values::Value::Null
            });
        }
        if too_deep(spi) {
            return Err(crate::stack::too_deep(spi.limits.max_stack_depth));
        }
        if def.returns == snapscale_values::SqlType::Trigger {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "trigger functions can only be called as triggers",
            ));
        }
        let inputs: Vec<_> = def.args.iter().filter(|a| a.mode.is_input()).collect();
        let (body, name, statements) = take_compiled(spi, routine, 0)?;
        let params = inputs.iter().zip(args).map(|(a, v)| (a.name.clone(), a.ty, v)).collect();
        spi.depth += 1;
        // GET DIAGNOSTICS … PG_CONTEXT: the caller, at the statement it
        // is at.
        let caller = spi.context.current.clone();
        let here = spi.context.here;
        if let Some(c) = &caller {
            spi.context.callers.push((std::sync::Arc::clone(c), here.0, here.1));
        }
        // A function runs inside its caller's statement; a procedure
        // CALLed may end the transaction if its caller may (PL-TXN).
        let nonatomic = spi.nonatomic;
        spi.nonatomic &= def.kind == snapscale_engine::routines::RoutineKind::Procedure;
        let (result, statements) = match &*body {
            Body::Sql(statements_text) => {
                let mut interp = Interp::new(spi, &name, def.returns).with_statements(statements);
                interp.parameters(params);
                interp.run_sql(statements_text, def).await
            }
            Body::Pl(block) => {
                let mut interp = Interp::new(spi, &name, def.returns).with_statements(statements);
                interp.parameters(params);
                let outs = def.output_columns();
                if !outs.is_empty() || def.returns_set {
                    interp.outputs(outs, def.returns_set);
                    let positions: Vec<usize> = def
                        .args
                        .iter()
                        .enumerate()
                        .filter(|(_, a)| a.mode.is_output())
                        .map(|(i, _)| i + 1)
                        .collect();
                    interp.output_positions(&positions);
                }
                if let Some(t) = &def.row_type {
                    interp.row_types(t.columns.iter().map(|(_, ty)| *ty).collect());
                }
                interp.run(block).await
            }
        };
        spi.depth -= 1;
        spi.nonatomic = nonatomic;
        if caller.is_some() {
            spi.context.callers.pop();
        }
        spi.context.current = caller;
        spi.context.here = here;
        keep_compiled(spi, routine, 0, body, name, statements);
        result
    })
}

/// The body as this session compiled it, unless the function changed
/// since (or a call of it is running: that one has it).
fn take_compiled(
    spi: &mut spi::Spi<'_>,
    routine: &std::sync::Arc<snapscale_engine::catalog::RelEntry>,
    table: u32,
) -> Result<(std::sync::Arc<Body>, CallName, run::Statements), SqlError> {
    let cached =
        spi.functions.0.remove(&(routine.oid, table)).filter(|c| std::sync::Arc::ptr_eq(&c.entry, routine));
    Ok(match cached {
        Some(c) => (c.body, c.name, c.statements),
        None => {
            let body = compile(routine)?;
            // A polymorphic function is called as a copy with its types
            // resolved; CONTEXT lines name it as declared.
            let declared = match routine.routine.as_ref().is_some_and(|d| !d.args.is_empty()) {
                true => spi.xact.routine_by_oid(routine.oid)?.map(|(_, e)| e),
                false => None,
            };
            let name = call_name(declared.as_deref().unwrap_or(routine), &body);
            (std::sync::Arc::new(body), name, run::Statements::default())
        }
    })
}

/// What CONTEXT lines call a body: `SQL function "f"`, `f(integer)` (a
/// trigger function: `f()`).
fn call_name(routine: &snapscale_engine::catalog::RelEntry, body: &Body) -> CallName {
    let def = routine.routine.as_ref().expect("a routine row");
    let display = match body {
        Body::Sql(_) => format!("SQL function \"{}\"", routine.name),
        Body::Pl(_) => format!("{}({})", routine.name, def.input_type_list()),
    };
    CallName::new(display, &routine.name)
}

/// Keeps a body and its prepared statements for the next call (PL-CACHE).
fn keep_compiled(
    spi: &mut spi::Spi<'_>,
    routine: &std::sync::Arc<snapscale_engine::catalog::RelEntry>,
    table: u32,
    body: std::sync::Arc<Body>,
    name: CallName,
    statements: run::Statements,
) {
    spi.functions.0.insert(
        (routine.oid, table),
        Compiled { entry: std::sync::Arc::clone(routine), body, name, statements },
    );
}

/// Calls trigger function `routine` for `call` (TRIGGER-FIRE): its value
/// RETURN gave (a row, or NULL).
pub(crate) async fn call_trigger(
    spi: &mut spi::Spi<'_>,
    routine: &std::sync::Arc<snapscale_engine::catalog::RelEntry>,
    call: &crate::exec::triggers::TriggerCall<'_>,
    columns: (&std::sync::Arc<[(String, snapscale_values::SqlType)]>, &snapscale_engine::catalog::Row),
    tg: Vec<(snapscale_values::SqlType, snapscale_values::Value)>,
) -> Result<snapscale_values::Value, SqlError> {
    let def = routine.routine.as_ref().expect("a routine row");
    if def.returns != snapscale_values::SqlType::Trigger {
        return Err(SqlError::new(
            SqlState::INVALID_OBJECT_DEFINITION,
            format!("function {} must return type trigger", routine.name),
        ));
    }
    if too_deep(spi) {
        return Err(crate::stack::too_deep(spi.limits.max_stack_depth));
    }
    let table = call.rel.entry.oid;
    let (body, name, statements) = take_compiled(spi, routine, table)?;
    let Body::Pl(block) = &*body else {
        return Err(SqlError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            "SQL functions cannot return type trigger",
        ));
    };
    spi.depth += 1;
    let mut interp = Interp::new(spi, &name, snapscale_values::SqlType::Trigger).with_statements(statements);
    interp.parameters(Vec::new());
    interp.trigger_variables(columns, shared(call.new, call.queued.1), shared(call.old, call.queued.0), tg);
    let (result, statements) = interp.run(block).await;
    spi.depth -= 1;
    keep_compiled(spi, routine, table, std::sync::Arc::clone(&body), name, statements);
    result
}

/// A trigger's row as NEW or OLD: the queued row itself where it is just
/// the columns (`row`, cut from `queued`), else its values copied.
fn shared(
    row: Option<&[snapscale_values::Value]>,
    queued: Option<&snapscale_engine::catalog::Row>,
) -> Option<snapscale_engine::catalog::Row> {
    let row = row?;
    Some(match queued {
        Some(q) if q.len() == row.len() => std::sync::Arc::clone(q),
        _ => row.iter().cloned().collect(),
    })
}

/// A function's body parsed and checked.
fn compile(routine: &snapscale_engine::catalog::RelEntry) -> Result<Body, SqlError> {
    let def = routine.routine.as_ref().expect("a routine row");
    if def.language == "sql" {
        return Ok(Body::Sql(
            crate::parse::split(&def.body)
                .into_iter()
                .map(|text| crate::plpgsql::ast::Sql { text: text.trim().to_owned(), at: 0 })
                .collect(),
        ));
    }
    let names = crate::plpgsql::declared_names(def);
    let returns = crate::plpgsql::Returns::of(def);
    // Its warnings were the CREATE's to give.
    let extra = crate::plpgsql::Extra::default();
    parse(&def.body, crate::stack::DEFAULT_MAX_STACK_DEPTH / 1024)
        .and_then(|b| check(&b, &names, returns, &def.body, extra).map(|_| b))
        .map(Body::Pl)
        .map_err(|e| compile_context(e, &routine.name, &def.body, None))
}
