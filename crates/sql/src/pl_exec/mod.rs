//! PL/pgSQL's executor: the interpreter (`run.rs`), how it runs SQL
//! (`spi.rs`), and calls of PL/pgSQL functions made for a statement before
//! it runs (PL-CALLS, PL-DEPTH in the crate's README). The language
//! itself (its grammar and compiler checks) is `plpgsql`'s.

mod run;
pub(crate) mod spi;

pub(crate) use run::Interp;

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

/// Calls PL/pgSQL function `routine` with `args`.
pub(crate) fn call<'a>(
    spi: &'a mut spi::Spi<'_>,
    routine: &'a snapscale_engine::catalog::RelEntry,
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
        let types: Vec<String> = def.input_types().iter().map(|t| t.name().to_owned()).collect();
        let name = format!("{}({})", routine.name, types.join(","));
        let inputs: Vec<_> = def.args.iter().filter(|a| a.mode.is_input()).collect();
        let mut names: Vec<String> = vec!["found".into()];
        for (i, a) in inputs.iter().enumerate() {
            if !a.name.is_empty() {
                names.push(a.name.clone());
            }
            names.push(format!("${}", i + 1));
        }
        names.extend(def.output_columns().into_iter().map(|(n, _)| n));
        if def.language == "sql" {
            // Its statements, in order; the last one's rows are the result.
            let statements: Vec<crate::plpgsql::ast::Sql> = crate::parse::split(&def.body)
                .into_iter()
                .map(|text| crate::plpgsql::ast::Sql { text: text.trim().to_owned(), line: 1 })
                .collect();
            let params = inputs.iter().zip(args).map(|(a, v)| (a.name.clone(), a.ty, v)).collect();
            spi.depth += 1;
            let mut interp = Interp::new(spi, format!("SQL function \"{}\"", routine.name), def.returns);
            interp.parameters(params);
            let result = interp.run_sql(&statements, def).await;
            spi.depth -= 1;
            return result;
        }
        let block = parse(&def.body, spi.limits.max_stack_depth / 1024)
            .and_then(|b| check(&b, &names, def.returns == snapscale_values::SqlType::Void).map(|_| b))
            .map_err(|e| compile_context(e, &routine.name, &def.body))?;
        let params = inputs.iter().zip(args).map(|(a, v)| (a.name.clone(), a.ty, v)).collect();
        spi.depth += 1;
        let mut interp = Interp::new(spi, name, def.returns);
        interp.parameters(params);
        let outs = def.output_columns();
        if !outs.is_empty() || def.returns_set {
            interp.outputs(outs, def.returns_set);
        }
        let result = interp.run(&block).await;
        spi.depth -= 1;
        result
    })
}
