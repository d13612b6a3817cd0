//! CREATE [OR REPLACE] AGGREGATE, DROP AGGREGATE and ALTER AGGREGATE
//! (AGGREGATE-ROWS in the crate's README).
//!
//! An aggregate is a routine row of kind Aggregate: its name, arguments
//! and result as a function's, and its state and support functions
//! ([`AggregateDef`]) beside them, so it is made, replaced, renamed,
//! dropped, logged and replayed as functions are. Its definition is
//! checked as PostgreSQL's DefineAggregate and AggregateCreate check it:
//! each support function is looked up by the types it will be called
//! with (the state's type, then the arguments') as lookup_agg_function
//! looks it up — polymorphic types standing for themselves, no run-time
//! conversion allowed — and its result checked against the state's type.
//!
//! A support function is one of the user's (kept by oid) or one of the
//! built-in functions of [`BUILTINS`], PostgreSQL's names for the
//! operators and functions aggregates are made of (`int4pl`, `float8mi`,
//! `array_append`, …), each an expression over its arguments here.

use std::sync::Arc;

use snapscale_engine::catalog::RelEntry;
use snapscale_engine::routines::{
    AggSupport, AggregateDef, ArgMode, RoutineArg, RoutineDef, RoutineKind, Volatility,
};
use snapscale_sqlstate::SqlState;
use snapscale_values::{Elem, Poly, SqlError, SqlType};
use sqlparser::ast::{DataType, ObjectName};

use super::{not_supported, relation_name, Binder, Resolver};
use crate::parse::aggregate_syntax::{
    data_type, AggregateArgs, AlterAggregate, AlterAggregateAction, CommentAggregate, CreateAggregate,
    DefValue, DropAggregate,
};
use crate::plan::{Plan, Utility};

/// 42P13 with `message`.
fn invalid(message: impl Into<String>) -> SqlError {
    SqlError::new(SqlState::INVALID_FUNCTION_DEFINITION, message)
}

/// A built-in function an aggregate may name: its signature, strictness,
/// and what a call is, an expression over `$1`, `$2`, ….
pub(super) struct Builtin {
    pub name: &'static str,
    pub params: &'static [SqlType],
    pub returns: SqlType,
    pub strict: bool,
    pub body: &'static str,
}

const I2: SqlType = SqlType::Int2;
const I4: SqlType = SqlType::Int4;
const I8: SqlType = SqlType::Int8;
const F4: SqlType = SqlType::Float4;
const F8: SqlType = SqlType::Float8;
const NUM: SqlType = SqlType::Numeric(-1);
const TEXT: SqlType = SqlType::Text;
const BOOL: SqlType = SqlType::Bool;
const I8_ARRAY: SqlType = SqlType::Array(Elem::Int8);
const ANY_ARRAY: SqlType = SqlType::Poly(Poly::AnyArray);
const COMPATIBLE: SqlType = SqlType::Poly(Poly::AnyCompatible);
const COMPATIBLE_ARRAY: SqlType = SqlType::Poly(Poly::AnyCompatibleArray);

const fn b(
    name: &'static str,
    params: &'static [SqlType],
    returns: SqlType,
    strict: bool,
    body: &'static str,
) -> Builtin {
    Builtin { name, params, returns, strict, body }
}

/// PostgreSQL's support functions of its own aggregates and operators,
/// as aggregates name them (pg_proc's names, strictness and signatures).
pub(super) static BUILTINS: &[Builtin] = &[
    b("int2pl", &[I2, I2], I2, true, "$1 + $2"),
    b("int4pl", &[I4, I4], I4, true, "$1 + $2"),
    b("int8pl", &[I8, I8], I8, true, "$1 + $2"),
    b("float4pl", &[F4, F4], F4, true, "$1 + $2"),
    b("float8pl", &[F8, F8], F8, true, "$1 + $2"),
    b("numeric_add", &[NUM, NUM], NUM, true, "$1 + $2"),
    b("int2mi", &[I2, I2], I2, true, "$1 - $2"),
    b("int4mi", &[I4, I4], I4, true, "$1 - $2"),
    b("int8mi", &[I8, I8], I8, true, "$1 - $2"),
    b("float4mi", &[F4, F4], F4, true, "$1 - $2"),
    b("float8mi", &[F8, F8], F8, true, "$1 - $2"),
    b("numeric_sub", &[NUM, NUM], NUM, true, "$1 - $2"),
    b("int2mul", &[I2, I2], I2, true, "$1 * $2"),
    b("int4mul", &[I4, I4], I4, true, "$1 * $2"),
    b("int8mul", &[I8, I8], I8, true, "$1 * $2"),
    b("float4mul", &[F4, F4], F4, true, "$1 * $2"),
    b("float8mul", &[F8, F8], F8, true, "$1 * $2"),
    b("numeric_mul", &[NUM, NUM], NUM, true, "$1 * $2"),
    b("int2larger", &[I2, I2], I2, true, "greatest($1, $2)"),
    b("int4larger", &[I4, I4], I4, true, "greatest($1, $2)"),
    b("int8larger", &[I8, I8], I8, true, "greatest($1, $2)"),
    b("float4larger", &[F4, F4], F4, true, "greatest($1, $2)"),
    b("float8larger", &[F8, F8], F8, true, "greatest($1, $2)"),
    b("numeric_larger", &[NUM, NUM], NUM, true, "greatest($1, $2)"),
    b("text_larger", &[TEXT, TEXT], TEXT, true, "greatest($1, $2)"),
    b("int2smaller", &[I2, I2], I2, true, "least($1, $2)"),
    b("int4smaller", &[I4, I4], I4, true, "least($1, $2)"),
    b("int8smaller", &[I8, I8], I8, true, "least($1, $2)"),
    b("float4smaller", &[F4, F4], F4, true, "least($1, $2)"),
    b("float8smaller", &[F8, F8], F8, true, "least($1, $2)"),
    b("numeric_smaller", &[NUM, NUM], NUM, true, "least($1, $2)"),
    b("text_smaller", &[TEXT, TEXT], TEXT, true, "least($1, $2)"),
    b("textcat", &[TEXT, TEXT], TEXT, true, "$1 || $2"),
    b("booland_statefunc", &[BOOL, BOOL], BOOL, true, "$1 AND $2"),
    b("boolor_statefunc", &[BOOL, BOOL], BOOL, true, "$1 OR $2"),
    b("int8inc", &[I8], I8, true, "$1 + 1"),
    b("int2_sum", &[I8, I2], I8, false, "CASE WHEN $2 IS NULL THEN $1 ELSE coalesce($1, 0) + $2 END"),
    b("int4_sum", &[I8, I4], I8, false, "CASE WHEN $2 IS NULL THEN $1 ELSE coalesce($1, 0) + $2 END"),
    b("int2_avg_accum", &[I8_ARRAY, I2], I8_ARRAY, true, "ARRAY[$1[1] + 1, $1[2] + $2]"),
    b("int4_avg_accum", &[I8_ARRAY, I4], I8_ARRAY, true, "ARRAY[$1[1] + 1, $1[2] + $2]"),
    b(
        "int8_avg",
        &[I8_ARRAY],
        NUM,
        true,
        "CASE WHEN $1[1] = 0 THEN NULL ELSE $1[2]::numeric / $1[1]::numeric END",
    ),
    b("array_larger", &[ANY_ARRAY, ANY_ARRAY], ANY_ARRAY, true, "CASE WHEN $1 > $2 THEN $1 ELSE $2 END"),
    b("array_smaller", &[ANY_ARRAY, ANY_ARRAY], ANY_ARRAY, true, "CASE WHEN $1 < $2 THEN $1 ELSE $2 END"),
    b("array_append", &[COMPATIBLE_ARRAY, COMPATIBLE], COMPATIBLE_ARRAY, false, "array_append($1, $2)"),
    b("array_prepend", &[COMPATIBLE, COMPATIBLE_ARRAY], COMPATIBLE_ARRAY, false, "array_prepend($1, $2)"),
    b("array_cat", &[COMPATIBLE_ARRAY, COMPATIBLE_ARRAY], COMPATIBLE_ARRAY, false, "array_cat($1, $2)"),
    // An output function: its cstring as text.
    b("numeric_out", &[NUM], TEXT, true, "$1::text"),
];

/// A function a support function's name may mean.
pub(super) struct Candidate {
    pub support: AggSupport,
    pub params: Vec<SqlType>,
    pub returns: SqlType,
    pub strict: bool,
    pub returns_set: bool,
}

/// A support function found for an aggregate: which it is, its result
/// for the types it is called with, and its strictness.
pub(super) struct Found {
    pub support: AggSupport,
    pub returns: SqlType,
    pub strict: bool,
}

/// `types` as PostgreSQL's func_signature_string lists them.
fn signature(name: &str, types: &[SqlType]) -> String {
    let names: Vec<&str> = types.iter().map(|t| t.name()).collect();
    format!("{name}({})", names.join(", "))
}

/// The same type, whatever the length modifier.
fn same(a: SqlType, b: SqlType) -> bool {
    use SqlType::*;
    a == b || matches!((a, b), (Varchar(_), Varchar(_)) | (Char(_), Char(_)) | (Numeric(_), Numeric(_)))
}

/// PostgreSQL's IsBinaryCoercible: `from` is `to`, or needs no conversion
/// to be one (a polymorphic `to` takes what it stands for).
fn binary_coercible(from: SqlType, to: SqlType) -> bool {
    use SqlType::{Array, Enum, Int4, Oid, Reg, Text, Varchar};
    if same(from, to) {
        return true;
    }
    let array = matches!(from, Array(_) | SqlType::Poly(Poly::AnyArray | Poly::AnyCompatibleArray));
    match to {
        SqlType::Poly(Poly::AnyElement | Poly::AnyCompatible) => true,
        SqlType::Poly(Poly::AnyArray | Poly::AnyCompatibleArray) => array,
        SqlType::Poly(Poly::AnyNonArray | Poly::AnyCompatibleNonArray) => !array,
        SqlType::Poly(Poly::AnyEnum) => matches!(from, Enum(_) | SqlType::Poly(Poly::AnyEnum)),
        _ => matches!(
            (from, to),
            (Varchar(_), Text)
                | (Text, Varchar(_))
                | (Int4, Oid)
                | (Oid, Int4)
                | (Oid, Reg(_))
                | (Reg(_), Oid)
        ),
    }
}

/// PostgreSQL's check_generic_type_consistency: whether arguments of
/// (possibly polymorphic) types `actual` fit polymorphic parameters
/// `declared` consistently.
fn generic_consistent(actual: &[SqlType], declared: &[SqlType]) -> bool {
    let mut elem: Option<SqlType> = None;
    let mut array: Option<SqlType> = None;
    let mut compatible: Vec<SqlType> = Vec::new();
    let (mut nonarray, mut anyenum) = (false, false);
    for (&d, &a) in declared.iter().zip(actual) {
        let SqlType::Poly(p) = d else { continue };
        match p {
            Poly::AnyElement | Poly::AnyNonArray | Poly::AnyEnum => {
                nonarray |= p == Poly::AnyNonArray;
                anyenum |= p == Poly::AnyEnum;
                if elem.is_some_and(|e| e != a) {
                    return false;
                }
                elem = Some(a);
            }
            Poly::AnyArray => {
                if array.is_some_and(|e| e != a) {
                    return false;
                }
                array = Some(a);
            }
            Poly::AnyCompatible | Poly::AnyCompatibleNonArray => {
                if !matches!(a, SqlType::Poly(_)) {
                    compatible.push(a);
                }
            }
            Poly::AnyCompatibleArray => match a {
                SqlType::Array(e) => compatible.push(e.ty()),
                SqlType::Poly(_) => {}
                _ => return false,
            },
        }
    }
    match array {
        // anyarray for anyarray: allowed here (PostgreSQL's special case).
        Some(SqlType::Poly(Poly::AnyArray)) | None => {}
        Some(SqlType::Array(e)) => match elem {
            None => elem = Some(e.ty()),
            Some(t) if t != e.ty() => return false,
            Some(_) => {}
        },
        Some(_) => return false,
    }
    if let Some(e) = elem {
        if nonarray && matches!(e, SqlType::Array(_)) {
            return false;
        }
        if anyenum && !matches!(e, SqlType::Enum(_) | SqlType::Poly(Poly::AnyEnum)) {
            return false;
        }
    }
    compatible.is_empty()
        || super::coerce::common_type(compatible.into_iter().map(Some), "anycompatible").is_ok()
}

/// PostgreSQL's enforce_generic_type_consistency with polymorphic
/// arguments allowed: `declared` with what its polymorphic types stand for
/// given `actual` in their place, and the result `returns` likewise (left
/// polymorphic where the arguments say nothing).
fn enforce(actual: &[SqlType], declared: &mut [SqlType], returns: SqlType) -> SqlType {
    let mut elem: Option<SqlType> = None;
    let mut array: Option<SqlType> = None;
    let mut compatible: Vec<SqlType> = Vec::new();
    for (&d, &a) in declared.iter().zip(actual) {
        let SqlType::Poly(p) = d else { continue };
        if d == a {
            continue;
        }
        match p {
            Poly::AnyArray => array = Some(a),
            Poly::AnyCompatibleArray => compatible.extend(a.elem()),
            p if p.compatible() => compatible.push(a),
            _ => elem = Some(a),
        }
    }
    if elem.is_none() {
        elem = match array {
            Some(SqlType::Array(e)) => Some(e.ty()),
            Some(SqlType::Poly(Poly::AnyArray)) => Some(SqlType::Poly(Poly::AnyElement)),
            _ => None,
        };
    }
    let compatible = match compatible.is_empty() {
        true => None,
        false => super::coerce::common_type(compatible.into_iter().map(Some), "anycompatible").ok(),
    };
    let stand_for = |t: SqlType| -> SqlType {
        let SqlType::Poly(p) = t else { return t };
        let base = if p.compatible() { compatible } else { elem };
        match (base, p.is_array()) {
            (None, _) => t,
            (Some(b), false) => b,
            (Some(SqlType::Poly(Poly::AnyElement)), true) => SqlType::Poly(Poly::AnyArray),
            (Some(b), true) => Elem::of(b).map_or(t, SqlType::Array),
        }
    };
    for d in declared.iter_mut() {
        *d = stand_for(*d);
    }
    stand_for(returns)
}

/// PostgreSQL's check_valid_polymorphic_signature: the detail of why a
/// polymorphic `result` cannot be resolved from arguments `args`.
pub(super) fn polymorphic_detail(result: SqlType, args: &[SqlType]) -> Option<String> {
    let SqlType::Poly(k) = result else { return None };
    let found = args.iter().any(|a| matches!(a, SqlType::Poly(p) if p.compatible() == k.compatible()));
    if found {
        return None;
    }
    Some(if k.compatible() {
        format!("A result of type {} requires at least one input of type anycompatible, anycompatiblearray, anycompatiblenonarray, anycompatiblerange, or anycompatiblemultirange.", k.name())
    } else {
        format!("A result of type {} requires at least one input of type anyelement, anyarray, anynonarray, anyenum, anyrange, or anymultirange.", k.name())
    })
}

/// A definition element's value as a type's text: PostgreSQL's `_name`
/// for an array of name.
fn type_text(text: &str) -> String {
    match text.strip_prefix('_') {
        Some(elem) if !elem.is_empty() && !elem.contains(['[', '(', ' ']) => format!("{elem}[]"),
        _ => text.to_owned(),
    }
}

/// A definition element's value as a function's name (argument types
/// after it, PostgreSQL's `func(type, …)` spelling, are left out).
fn function_name(text: &str) -> Result<ObjectName, SqlError> {
    let name = text.split('(').next().unwrap_or_default().trim();
    let parsed = sqlparser::parser::Parser::new(&sqlparser::dialect::PostgreSqlDialect {})
        .try_with_sql(name)
        .and_then(|mut p| {
            let n = p.parse_object_name(false)?;
            match p.peek_token().token {
                sqlparser::tokenizer::Token::EOF => Ok(n),
                _ => Err(sqlparser::parser::ParserError::ParserError(String::new())),
            }
        });
    parsed.map_err(|_| SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{text}\"")))
}

/// A name as PostgreSQL's NameListToString writes it: its parts, unquoted.
fn name_text(name: &ObjectName) -> String {
    name.0.iter().filter_map(|p| p.as_ident()).map(super::ident).collect::<Vec<_>>().join(".")
}

/// The definition list's elements, read as DefineAggregate reads them.
#[derive(Default)]
struct Definition {
    sfunc: Option<String>,
    finalfunc: Option<String>,
    combinefunc: Option<String>,
    serialfunc: Option<String>,
    deserialfunc: Option<String>,
    msfunc: Option<String>,
    minvfunc: Option<String>,
    mfinalfunc: Option<String>,
    final_extra: bool,
    mfinal_extra: bool,
    final_modify: Option<u8>,
    mfinal_modify: Option<u8>,
    sortop: Option<String>,
    basetype: Option<DefValue>,
    hypothetical: bool,
    stype: Option<String>,
    sspace: i32,
    mstype: Option<String>,
    msspace: i32,
    initcond: Option<String>,
    minitcond: Option<String>,
    parallel: Option<String>,
}

/// PostgreSQL's defGetBoolean.
fn boolean(name: &str, value: &Option<DefValue>) -> Result<bool, SqlError> {
    let Some(v) = value else { return Ok(true) };
    let text = v.string();
    match text.as_str() {
        "true" | "on" | "1" => Ok(true),
        "false" | "off" | "0" => Ok(false),
        _ => Err(SqlError::new(SqlState::SYNTAX_ERROR, format!("{name} requires a Boolean value"))),
    }
}

/// PostgreSQL's defGetString for an element that must have a value.
fn required(name: &str, value: &Option<DefValue>) -> Result<String, SqlError> {
    match value {
        Some(DefValue::String(s)) => Ok(s.clone()),
        Some(DefValue::Text(t)) => Ok(t.clone()),
        None => Err(SqlError::new(SqlState::SYNTAX_ERROR, format!("{name} requires a parameter"))),
    }
}

/// FINALFUNC_MODIFY's value (PostgreSQL's extractModify).
fn modify(name: &str, value: &Option<DefValue>) -> Result<u8, SqlError> {
    let v = value.as_ref().map(DefValue::string).unwrap_or_default();
    match v.as_str() {
        "read_only" => Ok(b'r'),
        "shareable" => Ok(b's'),
        "read_write" => Ok(b'w'),
        _ => Err(SqlError::new(
            SqlState::SYNTAX_ERROR,
            format!("parameter \"{name}\" must be READ_ONLY, SHAREABLE, or READ_WRITE"),
        )),
    }
}

/// The oid of a type PostgreSQL has no counterpart of here, as a
/// definition names it: `internal` and `"any"` are refused.
fn pseudo_refused(text: &str) -> Option<SqlError> {
    let t = text.trim().trim_matches('"').to_ascii_lowercase();
    matches!(t.as_str(), "internal" | "any")
        .then(|| not_supported(format!("aggregates over the pseudo-type \"{t}\"")))
}

impl<R: Resolver> Binder<'_, R> {
    /// A definition's type (STYPE, MSTYPE, BASETYPE).
    fn definition_type(&mut self, text: &str) -> Result<SqlType, SqlError> {
        if let Some(e) = pseudo_refused(text) {
            return Err(e);
        }
        let text = type_text(text.trim());
        let dt = data_type(&text).ok_or_else(|| {
            SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{text}\""))
        })?;
        self.aggregate_type_of(&dt)
    }

    /// A type as an aggregate's argument or state may be: any type or a
    /// polymorphic one.
    fn aggregate_type_of(&mut self, dt: &DataType) -> Result<SqlType, SqlError> {
        if let DataType::Custom(name, _) = dt {
            if let Some(e) = pseudo_refused(&name.to_string()) {
                return Err(e);
            }
        }
        let ty = self.result_type(dt)?;
        match ty {
            SqlType::Void | SqlType::Trigger => {
                Err(invalid(format!("aggregate transition data type cannot be {}", ty.name())))
            }
            ty => Ok(ty),
        }
    }

    /// The functions `name` may mean with `nargs` arguments: the user's,
    /// then (unqualified or in pg_catalog) the built-in ones.
    fn support_candidates(&mut self, name: &ObjectName, nargs: usize) -> Result<Vec<Candidate>, SqlError> {
        let key = relation_name(name)?;
        let (schema, bare) = snapscale_engine::names::split(&key);
        let mut out = Vec::new();
        for e in self.resolver.routines(&key)? {
            let Some(r) = e.routine.as_ref().filter(|r| r.kind == RoutineKind::Function) else { continue };
            let params = r.input_types();
            if params.len() != nargs {
                continue;
            }
            out.push(Candidate {
                support: AggSupport { name: e.name.clone(), oid: e.oid },
                params,
                returns: r.returns,
                strict: r.strict,
                returns_set: r.returns_set,
            });
        }
        if schema.as_deref().is_none_or(|s| s == "pg_catalog") {
            for f in BUILTINS.iter().filter(|f| f.name == bare && f.params.len() == nargs) {
                out.push(Candidate {
                    support: AggSupport { name: f.name.to_owned(), oid: 0 },
                    params: f.params.to_vec(),
                    returns: f.returns,
                    strict: f.strict,
                    returns_set: false,
                });
            }
        }
        Ok(out)
    }

    /// PostgreSQL's lookup_agg_function: the function `text` names that
    /// takes arguments of types `inputs` without a conversion, and its
    /// result for them.
    fn support_function(&mut self, text: &str, inputs: &[SqlType]) -> Result<Found, SqlError> {
        let name = function_name(text)?;
        let shown = name_text(&name);
        let candidates = self.support_candidates(&name, inputs.len())?;
        let missing = || {
            SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function {} does not exist", signature(&shown, inputs)),
            )
        };
        let exact = candidates.iter().position(|c| c.params.iter().zip(inputs).all(|(&p, &a)| same(a, p)));
        let chosen = match exact {
            Some(i) => &candidates[i],
            None => {
                // Those the arguments fit, implicitly converted; the one
                // with most exact matches.
                let fits: Vec<(usize, &Candidate)> = candidates
                    .iter()
                    .filter_map(|c| {
                        let mut generic = false;
                        let mut exact = 0;
                        for (&p, &a) in c.params.iter().zip(inputs) {
                            if same(a, p) {
                                exact += 1;
                            } else if matches!(p, SqlType::Poly(_)) {
                                generic = true;
                            } else if matches!(a, SqlType::Poly(_)) || !super::routine_call::implicit(a, p) {
                                return None;
                            }
                        }
                        (!generic || generic_consistent(inputs, &c.params)).then_some((exact, c))
                    })
                    .collect();
                let best = fits.iter().map(|(n, _)| *n).max().ok_or_else(missing)?;
                let mut top = fits.into_iter().filter(|(n, _)| *n == best);
                let (_, c) = top.next().ok_or_else(missing)?;
                if top.next().is_some() {
                    return Err(missing());
                }
                c
            }
        };
        if chosen.returns_set {
            return Err(SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                format!("function {} returns a set", signature(&shown, inputs)),
            ));
        }
        let mut declared = chosen.params.clone();
        let returns = enforce(inputs, &mut declared, chosen.returns);
        if inputs.iter().zip(&declared).any(|(&a, &d)| !binary_coercible(a, d)) {
            return Err(SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                format!("function {} requires run-time type coercion", signature(&shown, &declared)),
            ));
        }
        Ok(Found { support: chosen.support.clone(), returns, strict: chosen.strict })
    }

    pub(super) fn create_aggregate(&mut self, c: &CreateAggregate) -> Result<Plan, SqlError> {
        let key = relation_name(&c.name)?;
        let mut d = Definition::default();
        for e in &c.definition {
            let v = &e.value;
            let func = |v: &Option<DefValue>| required(&e.name, v).map(Some);
            match e.name.as_str() {
                "sfunc" | "sfunc1" => d.sfunc = func(v)?,
                "finalfunc" => d.finalfunc = func(v)?,
                "combinefunc" => d.combinefunc = func(v)?,
                "serialfunc" => d.serialfunc = func(v)?,
                "deserialfunc" => d.deserialfunc = func(v)?,
                "msfunc" => d.msfunc = func(v)?,
                "minvfunc" => d.minvfunc = func(v)?,
                "mfinalfunc" => d.mfinalfunc = func(v)?,
                "finalfunc_extra" => d.final_extra = boolean(&e.name, v)?,
                "mfinalfunc_extra" => d.mfinal_extra = boolean(&e.name, v)?,
                "finalfunc_modify" => d.final_modify = Some(modify(&e.name, v)?),
                "mfinalfunc_modify" => d.mfinal_modify = Some(modify(&e.name, v)?),
                "sortop" => d.sortop = func(v)?,
                "basetype" => {
                    required(&e.name, v)?;
                    d.basetype = v.clone();
                }
                "hypothetical" => {
                    if boolean(&e.name, v)? {
                        if c.args.as_ref().is_none_or(|a| a.ordered.is_none()) {
                            return Err(invalid("only ordered-set aggregates can be hypothetical"));
                        }
                        d.hypothetical = true;
                    }
                }
                "stype" | "stype1" => d.stype = func(v)?,
                "sspace" => d.sspace = integer(&e.name, v)?,
                "mstype" => d.mstype = func(v)?,
                "msspace" => d.msspace = integer(&e.name, v)?,
                "initcond" | "initcond1" => {
                    d.initcond = Some(v.as_ref().map(DefValue::string).unwrap_or_default())
                }
                "minitcond" => d.minitcond = Some(v.as_ref().map(DefValue::string).unwrap_or_default()),
                "parallel" => {
                    required(&e.name, v)?;
                    d.parallel = v.as_ref().map(DefValue::string);
                }
                other => self.resolver.warning(
                    SqlState::SYNTAX_ERROR,
                    format!("aggregate attribute \"{other}\" not recognized"),
                ),
            }
        }
        let Some(stype) = d.stype.clone() else { return Err(invalid("aggregate stype must be specified")) };
        let Some(sfunc) = d.sfunc.clone() else { return Err(invalid("aggregate sfunc must be specified")) };
        if d.mstype.is_some() {
            if d.msfunc.is_none() {
                return Err(invalid("aggregate msfunc must be specified when mstype is specified"));
            }
            if d.minvfunc.is_none() {
                return Err(invalid("aggregate minvfunc must be specified when mstype is specified"));
            }
        } else {
            let without =
                |what: &str| invalid(format!("aggregate {what} must not be specified without mstype"));
            if d.msfunc.is_some() {
                return Err(without("msfunc"));
            }
            if d.minvfunc.is_some() {
                return Err(without("minvfunc"));
            }
            if d.mfinalfunc.is_some() {
                return Err(without("mfinalfunc"));
            }
            if d.msspace != 0 {
                return Err(without("msspace"));
            }
            if d.minitcond.is_some() {
                return Err(without("minitcond"));
            }
        }
        let ordered = c.args.as_ref().is_some_and(|a| a.ordered.is_some());
        let kind = match (ordered, d.hypothetical) {
            (false, _) => b'n',
            (true, false) => b'o',
            (true, true) => b'h',
        };
        let default_modify = if kind == b'n' { b'r' } else { b'w' };
        // The arguments.
        let (args, direct_args) = match &c.args {
            None => {
                let Some(base) = &d.basetype else {
                    return Err(invalid("aggregate input type must be specified"));
                };
                let text = base.string();
                if text.eq_ignore_ascii_case("any") {
                    (Vec::new(), 0)
                } else {
                    let raw = match base {
                        DefValue::String(s) => s.clone(),
                        DefValue::Text(t) => t.clone(),
                    };
                    let ty = self.definition_type(&raw)?;
                    (vec![RoutineArg { name: String::new(), ty, mode: ArgMode::In, default: None }], 0)
                }
            }
            Some(a) => {
                if d.basetype.is_some() {
                    return Err(invalid("basetype is redundant with aggregate input type specification"));
                }
                self.aggregate_args(a)?
            }
        };
        let arg_types: Vec<SqlType> = args.iter().map(|a| a.ty).collect();
        let variadic = args.last().is_some_and(|a| a.mode == ArgMode::Variadic);
        let state = self.definition_type(&stype)?;
        if matches!(state, SqlType::Record(snapscale_values::Rec::Anonymous)) {
            return Err(invalid("aggregate transition data type cannot be record"));
        }
        match (&d.serialfunc, &d.deserialfunc) {
            (Some(_), Some(_)) => {
                return Err(invalid(
                    "serialization functions may be specified only when the aggregate transition data type is internal",
                ))
            }
            (None, None) => {}
            _ => return Err(invalid("must specify both or neither of serialization and deserialization functions")),
        }
        let mstate = match &d.mstype {
            Some(t) => Some(self.definition_type(t)?),
            None => None,
        };
        // INITCOND must read as the state's type (checked now, read at
        // each call).
        if let Some(init) = &d.initcond {
            check_initial_value(init, state)?;
        }
        if let (Some(init), Some(m)) = (&d.minitcond, mstate) {
            check_initial_value(init, m)?;
        }
        let parallel = match d.parallel.as_deref() {
            None | Some("unsafe") => b'u',
            Some("safe") => b's',
            Some("restricted") => b'r',
            Some(_) => {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    "parameter \"parallel\" must be SAFE, RESTRICTED, or UNSAFE",
                ))
            }
        };
        // AggregateCreate's checks.
        if arg_types.len() > 99 {
            return Err(SqlError::new(
                SqlState::TOO_MANY_ARGUMENTS,
                "aggregates cannot have more than 99 arguments",
            ));
        }
        let cannot_determine =
            |detail: String| invalid("cannot determine transition data type").with_detail(detail);
        if let Some(detail) = polymorphic_detail(state, &arg_types) {
            return Err(cannot_determine(detail));
        }
        if let Some(detail) = mstate.and_then(|m| polymorphic_detail(m, &arg_types)) {
            return Err(cannot_determine(detail));
        }
        if kind != b'n' && variadic {
            return Err(invalid("a variadic ordered-set aggregate must use VARIADIC type ANY"));
        }
        let aggregated = arg_types.len() - direct_args;
        if kind == b'h'
            && direct_args < arg_types.len()
            && (variadic
                || direct_args < aggregated
                || arg_types[direct_args - aggregated..direct_args] != arg_types[direct_args..])
        {
            return Err(invalid(
                "a hypothetical-set aggregate must have direct arguments matching its aggregated arguments",
            ));
        }
        // The transition function: the state, then the (aggregated)
        // arguments.
        let trans_args: Vec<SqlType> = std::iter::once(state)
            .chain(if kind == b'n' { arg_types.clone() } else { arg_types[direct_args..].to_vec() })
            .collect();
        let trans = self.support_function(&sfunc, &trans_args)?;
        if trans.returns != state {
            return Err(SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                format!(
                    "return type of transition function {} is not {}",
                    name_text(&function_name(&sfunc)?),
                    state.name()
                ),
            ));
        }
        if trans.strict
            && d.initcond.is_none()
            && (arg_types.is_empty() || !binary_coercible(arg_types[0], state))
        {
            return Err(invalid(
                "must not omit initial value when transition function is strict and transition type is not compatible with input type",
            ));
        }
        let mut moving = (None, None, None);
        if let (Some(msfunc), Some(m)) = (&d.msfunc, mstate) {
            let margs: Vec<SqlType> = std::iter::once(m).chain(trans_args[1..].iter().copied()).collect();
            let forward = self.support_function(msfunc, &margs)?;
            if forward.returns != m {
                return Err(SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!(
                        "return type of transition function {} is not {}",
                        name_text(&function_name(msfunc)?),
                        m.name()
                    ),
                ));
            }
            if forward.strict
                && d.minitcond.is_none()
                && (arg_types.is_empty() || !binary_coercible(arg_types[0], m))
            {
                return Err(invalid(
                    "must not omit initial value when transition function is strict and transition type is not compatible with input type",
                ));
            }
            let minvfunc = d.minvfunc.as_deref().expect("checked above");
            let inverse = self.support_function(minvfunc, &margs)?;
            if inverse.returns != m {
                return Err(SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!(
                        "return type of inverse transition function {} is not {}",
                        name_text(&function_name(minvfunc)?),
                        m.name()
                    ),
                ));
            }
            if inverse.strict != forward.strict {
                return Err(invalid(
                    "strictness of aggregate's forward and inverse transition functions must match",
                ));
            }
            moving = (Some(forward.support), Some(inverse.support), None);
        }
        // The final function: the state, then the direct arguments (or all
        // of them, FINALFUNC_EXTRA).
        let final_args = |s: SqlType, extra: bool| -> Vec<SqlType> {
            let n = if extra { arg_types.len() } else { direct_args };
            std::iter::once(s).chain(arg_types[..n].iter().copied()).collect()
        };
        let (finalfn, result) = match &d.finalfunc {
            Some(f) => {
                let found = self.support_function(f, &final_args(state, d.final_extra))?;
                if d.final_extra && found.strict {
                    return Err(invalid("final function with extra arguments must not be declared STRICT"));
                }
                (Some(found.support), found.returns)
            }
            None => (None, state),
        };
        let mut combinefn = None;
        if let Some(combine) = &d.combinefunc {
            let found = self.support_function(combine, &[state, state])?;
            if found.returns != state {
                return Err(SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!(
                        "return type of combine function {} is not {}",
                        name_text(&function_name(combine)?),
                        state.name()
                    ),
                ));
            }
            combinefn = Some(found.support);
        }
        if let Some(detail) = polymorphic_detail(result, &arg_types) {
            return Err(SqlError::new(SqlState::DATATYPE_MISMATCH, "cannot determine result data type")
                .with_detail(detail));
        }
        if let Some(m) = mstate {
            let mresult = match &d.mfinalfunc {
                Some(f) => {
                    let found = self.support_function(f, &final_args(m, d.mfinal_extra))?;
                    if d.mfinal_extra && found.strict {
                        return Err(invalid(
                            "final function with extra arguments must not be declared STRICT",
                        ));
                    }
                    moving.2 = Some(found.support);
                    found.returns
                }
                None => m,
            };
            if mresult != result {
                return Err(invalid(format!(
                    "moving-aggregate implementation returns type {}, but plain implementation returns type {}",
                    mresult.name(),
                    result.name()
                )));
            }
        }
        if d.sortop.is_some() && arg_types.len() != 1 {
            return Err(invalid("sort operator can only be specified for single-argument aggregates"));
        }
        let aggregate = AggregateDef {
            kind,
            direct_args: direct_args as u16,
            transfn: trans.support,
            finalfn,
            combinefn,
            serialfn: None,
            deserialfn: None,
            mtransfn: moving.0,
            minvtransfn: moving.1,
            mfinalfn: moving.2,
            final_extra: d.final_extra,
            mfinal_extra: d.mfinal_extra,
            final_modify: d.final_modify.unwrap_or(default_modify),
            mfinal_modify: d.mfinal_modify.unwrap_or(default_modify),
            state,
            state_space: d.sspace,
            mstate,
            mstate_space: d.msspace,
            init: d.initcond,
            minit: d.minitcond,
        };
        let def = RoutineDef {
            kind: RoutineKind::Aggregate,
            language: "internal".into(),
            args,
            returns: result,
            returns_set: false,
            table_columns: Vec::new(),
            body: "aggregate_dummy".into(),
            volatility: Volatility::Immutable,
            strict: false,
            security_definer: false,
            leakproof: false,
            atomic: false,
            parallel,
            cost: 1.0,
            rows: 0.0,
            row_type: None,
            aggregate: Some(Box::new(aggregate)),
        };
        Ok(Plan::Utility(Utility::CreateRoutine { key, def: Box::new(def), replace: c.replace }))
    }

    /// The argument list's arguments (the direct ones first) and how many
    /// are direct, checked as interpret_function_parameter_list checks an
    /// aggregate's.
    fn aggregate_args(&mut self, a: &AggregateArgs) -> Result<(Vec<RoutineArg>, usize), SqlError> {
        let mut args = Vec::new();
        for arg in a.all() {
            let mode = match arg.mode.as_deref() {
                None | Some("in") => ArgMode::In,
                Some("variadic") => ArgMode::Variadic,
                Some(_) => return Err(invalid("aggregates cannot have output arguments")),
            };
            if args.last().is_some_and(|l: &RoutineArg| l.mode == ArgMode::Variadic) {
                // An ordered-set aggregate's VARIADIC on both sides is one.
                if a.ordered.is_some() && mode == ArgMode::Variadic {
                    continue;
                }
                return Err(invalid("VARIADIC parameter must be the last input parameter"));
            }
            let ty = self.aggregate_type_of(&arg.ty)?;
            if mode == ArgMode::Variadic
                && !matches!(ty, SqlType::Array(_) | SqlType::Poly(Poly::AnyArray | Poly::AnyCompatibleArray))
            {
                return Err(invalid("VARIADIC parameter must be an array"));
            }
            args.push(RoutineArg { name: arg.name.clone().unwrap_or_default(), ty, mode, default: None });
        }
        let direct = if a.ordered.is_some() { a.args.len().min(args.len()) } else { 0 };
        Ok((args, direct))
    }

    /// The input types an argument list names (a DROP's or ALTER's).
    fn listed_types(&mut self, a: &AggregateArgs) -> Result<Vec<SqlType>, SqlError> {
        let mut out = Vec::new();
        for arg in a.all() {
            if arg.mode.as_deref().is_some_and(|m| m == "out") {
                continue;
            }
            out.push(self.aggregate_type_of(&arg.ty)?);
        }
        Ok(out)
    }

    /// The aggregate `name (args)` names: `Ok(Err(text))` when it does not
    /// exist and `missing_ok`, the text naming it for the notice.
    fn lookup_aggregate(
        &mut self,
        name: &ObjectName,
        args: &AggregateArgs,
        missing_ok: bool,
    ) -> Result<Result<Arc<RelEntry>, String>, SqlError> {
        let key = relation_name(name)?;
        let bare = snapscale_engine::names::bare(&key);
        if missing_ok {
            // IF EXISTS: a missing schema or type is skipped too.
            let (schema, _) = snapscale_engine::names::split(&key);
            if let Some(s) = schema.filter(|s| s != "pg_temp") {
                if self.resolver.namespace(&s)?.is_none() {
                    return Ok(Err(format!("schema \"{s}\"")));
                }
            }
            for arg in args.all() {
                if let DataType::Custom(n, _) = &arg.ty {
                    if let [schema, _] = n.0.as_slice() {
                        let s = schema.as_ident().map(super::ident).unwrap_or_default();
                        if self.resolver.namespace(&s)?.is_none() {
                            return Ok(Err(format!("schema \"{s}\"")));
                        }
                    }
                }
            }
        }
        let types = match self.listed_types(args) {
            Err(e)
                if missing_ok
                    && e.code == SqlState::UNDEFINED_OBJECT
                    && e.message.ends_with(" does not exist") =>
            {
                return Ok(Err(e.message.trim_end_matches(" does not exist").to_owned()));
            }
            other => other?,
        };
        let found = self
            .resolver
            .routines(&key)?
            .into_iter()
            .find(|e| e.routine.as_ref().is_some_and(|r| r.input_types() == types));
        let listed = if args.star {
            "*".to_owned()
        } else {
            types.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
        };
        match found {
            Some(e) if e.routine.as_ref().is_some_and(|r| r.kind == RoutineKind::Aggregate) => Ok(Ok(e)),
            Some(_) => Err(SqlError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("function {} is not an aggregate", signature(&name_text(name), &types)),
            )),
            None if missing_ok => {
                let listed = if args.star {
                    String::new()
                } else {
                    types.iter().map(super::routines::qualified_type_name).collect::<Vec<_>>().join(",")
                };
                Ok(Err(format!("aggregate {bare}({listed})")))
            }
            None => Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("aggregate {bare}({listed}) does not exist"),
            )),
        }
    }

    pub(super) fn drop_aggregate(&mut self, d: &DropAggregate) -> Result<Plan, SqlError> {
        let mut targets = Vec::new();
        for (name, args) in &d.targets {
            match self.lookup_aggregate(name, args, d.if_exists)? {
                Ok(entry) => targets.push((entry.name.clone(), Some(entry.oid))),
                Err(skipped) => targets.push((skipped, None)),
            }
        }
        Ok(Plan::Utility(Utility::DropRoutines { targets, tag: "DROP AGGREGATE", cascade: d.cascade }))
    }

    /// COMMENT ON AGGREGATE name (args) IS text.
    pub(super) fn comment_aggregate(&mut self, c: &CommentAggregate) -> Result<Plan, SqlError> {
        let entry = self.lookup_aggregate(&c.name, &c.args, false)?.expect("not missing_ok");
        Ok(Plan::Utility(Utility::CommentRoutine { oid: entry.oid, text: c.text.clone() }))
    }

    pub(super) fn alter_aggregate(&mut self, a: &AlterAggregate) -> Result<Plan, SqlError> {
        let entry = self.lookup_aggregate(&a.name, &a.args, false)?.expect("not missing_ok");
        let def = Box::new(entry.routine.clone().expect("a routine row"));
        let rename = match &a.action {
            AlterAggregateAction::Rename(new) => Some(new.clone()),
            // One role owns everything here: the session's.
            AlterAggregateAction::Owner(role) => {
                super::schema::check_role(role, &self.resolver.session_user())?;
                None
            }
            AlterAggregateAction::SetSchema(schema) => {
                if entry.temp_owner.is_some() || schema == "pg_temp" || schema.starts_with("pg_toast") {
                    return Err(not_supported("ALTER AGGREGATE … SET SCHEMA of or into a temporary schema"));
                }
                let Some(namespace) = self.resolver.namespace(schema)? else {
                    return Err(SqlError::new(
                        SqlState::INVALID_SCHEMA_NAME,
                        format!("schema \"{schema}\" does not exist"),
                    ));
                };
                return Ok(Plan::Utility(Utility::MoveRoutine {
                    oid: entry.oid,
                    namespace,
                    tag: "ALTER AGGREGATE",
                }));
            }
        };
        Ok(Plan::Utility(Utility::AlterRoutine { oid: entry.oid, def, tag: "ALTER AGGREGATE", rename }))
    }
}

/// SSPACE and MSSPACE: an integer.
fn integer(name: &str, value: &Option<DefValue>) -> Result<i32, SqlError> {
    let text = required(name, value)?;
    text.trim()
        .parse::<i32>()
        .map_err(|_| SqlError::new(SqlState::SYNTAX_ERROR, format!("{name} requires an integer value")))
}

/// INITCOND read as type `ty` (a built-in type's; a user type's is read at
/// each call), with the type's input errors.
fn check_initial_value(text: &str, ty: SqlType) -> Result<(), SqlError> {
    if matches!(ty, SqlType::Poly(_) | SqlType::Enum(_) | SqlType::Composite(_) | SqlType::Record(_)) {
        return Ok(());
    }
    if matches!(ty, SqlType::Array(Elem::Enum(_) | Elem::Composite(_))) {
        return Ok(());
    }
    crate::expr::cast(
        snapscale_values::Value::Text(text.into()),
        ty,
        true,
        snapscale_values::Style::default(),
    )
    .map(|_| ())
}
