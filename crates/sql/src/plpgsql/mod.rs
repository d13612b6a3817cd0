//! PL/pgSQL, the language: its tokens (`lex.rs`), its grammar
//! (`parse.rs` into `ast.rs`) and what its compiler refuses before a body
//! runs (`check.rs`). Running a body is `pl_exec`'s.

pub(crate) mod ast;
mod check;
mod lex;
mod parse;

pub(crate) use check::{check, Extra, Returns};
pub(crate) use parse::parse;

use snapscale_values::SqlError;

/// A syntax error in a body, with PostgreSQL's CONTEXT line for it.
pub(crate) fn compile_context(
    e: snapscale_values::SqlError,
    name: &str,
    code: &str,
    source: Option<&crate::statement::Origin>,
) -> SqlError {
    // A syntax error placed in the body is placed in the statement that
    // holds it (the CREATE FUNCTION or DO), else shown in the body as the
    // query it is in; either way without a CONTEXT line (PostgreSQL's
    // function_parse_error_transpose).
    if let Some(p) = e.position {
        let start =
            source.and_then(|o| o.text.find(code).map(|at| o.chars_before + o.text[..at].chars().count()));
        let mut d = e.into_data();
        d.context = None;
        match start {
            Some(start) => d.position = Some(u32::try_from(start).unwrap_or(u32::MAX).saturating_add(p)),
            None => {
                d.position = None;
                d.internal =
                    Some(Box::new(snapscale_values::InternalQuery { query: code.to_owned(), position: p }));
            }
        }
        return SqlError::from(d);
    }
    let line =
        e.context.as_deref().and_then(|c| c.strip_prefix("line ")).and_then(|l| l.parse::<usize>().ok());
    // A name no block declares or declares CONSTANT, or a body cut short,
    // is reported without a CONTEXT line.
    if e.message.ends_with("is not a known variable")
        || e.message.ends_with("is declared CONSTANT")
        || e.message.ends_with("at end of input")
    {
        return SqlError::from(snapscale_values::ErrorData { context: None, ..e.into_data() });
    }
    match line {
        Some(l) => SqlError::from(snapscale_values::ErrorData {
            context: Some(format!("compilation of PL/pgSQL function \"{name}\" near line {l}")),
            ..e.into_data()
        }),
        None => SqlError::from(snapscale_values::ErrorData { context: None, ..e.into_data() }),
    }
}

/// A compiler warning (plpgsql.extra_warnings) as the notice the client
/// is sent: placed in the statement that holds the body where it can be.
pub(crate) fn compile_warning(
    e: SqlError,
    code: &str,
    source: Option<&crate::statement::Origin>,
) -> snapscale_engine::xact::Notice {
    let position = e.position.and_then(|p| {
        let start =
            source.and_then(|o| o.text.find(code).map(|at| o.chars_before + o.text[..at].chars().count()))?;
        Some(u32::try_from(start).unwrap_or(u32::MAX).saturating_add(p))
    });
    let d = e.into_data();
    let mut n = snapscale_engine::xact::Notice::new("WARNING", d.code, d.message, d.detail);
    n.hint = d.hint;
    n.position = position;
    n
}

/// A DO block's code compiled: refused unless its language runs inline
/// code (only PL/pgSQL does), parsed and checked as a function of no
/// arguments returning void; with the compiler's warnings.
pub(crate) fn compile_do(
    language: &str,
    code: &str,
    view: Option<&snapscale_engine::session_view::SessionView>,
    max_depth: usize,
    source: Option<&crate::statement::Origin>,
) -> Result<(ast::Block, Vec<SqlError>), SqlError> {
    use snapscale_sqlstate::SqlState;
    match language {
        "plpgsql" => {}
        "sql" | "internal" | "c" => {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("language \"{language}\" does not support inline code execution"),
            ))
        }
        other => {
            return Err(SqlError::new(
                SqlState::UNDEFINED_OBJECT,
                format!("language \"{other}\" does not exist"),
            ))
        }
    }
    let extra = extra_checks(view);
    parse(code, max_depth)
        .and_then(|b| check(&b, &["found".into()], Returns::Void, code, extra).map(|w| (b, w)))
        .map_err(|e| compile_context(e, DO_NAME, code, source))
}

/// The name a DO block runs under (its CONTEXT lines say it).
pub(crate) const DO_NAME: &str = "inline_code_block";

/// The checks plpgsql.extra_warnings and plpgsql.extra_errors ask for, as
/// the session's settings (`view`) have them.
pub(crate) fn extra_checks(view: Option<&snapscale_engine::session_view::SessionView>) -> Extra {
    match view {
        Some(v) => Extra::from_settings(|name| (v.show)(name).ok()),
        None => Extra::default(),
    }
}

/// The names a function's body finds declared before its own blocks: FOUND,
/// each input parameter by name and as `$n`, the output parameters.
pub(crate) fn declared_names(def: &snapscale_engine::routines::RoutineDef) -> Vec<String> {
    let mut names: Vec<String> = vec!["found".into()];
    for (i, a) in def.args.iter().filter(|a| a.mode.is_input()).enumerate() {
        if !a.name.is_empty() {
            names.push(a.name.clone());
        }
        names.push(format!("${}", i + 1));
    }
    names.extend(def.output_columns().into_iter().map(|(n, _)| n));
    // An output parameter is `$n` too, by its place among all of them.
    for (i, a) in def.args.iter().enumerate() {
        if !a.mode.is_input() {
            names.push(format!("${}", i + 1));
        }
    }
    if def.returns == snapscale_values::SqlType::Trigger {
        names.extend(TRIGGER_NAMES.iter().map(|n| (*n).to_owned()));
    }
    names
}

/// The variables a trigger function has besides its own.
pub(crate) const TRIGGER_NAMES: [&str; 12] = [
    "new",
    "old",
    "tg_name",
    "tg_when",
    "tg_level",
    "tg_op",
    "tg_relid",
    "tg_relname",
    "tg_table_name",
    "tg_table_schema",
    "tg_nargs",
    "tg_argv",
];
