//! Scalar functions with fixed signatures: the array functions, and the
//! functions over the catalog that psql, drivers and tools call
//! (`format_type`, `pg_get_indexdef`, `pg_table_is_visible`, …). Each entry
//! is one signature. A call binds to the entry with its name and number of
//! arguments whose types its arguments match best: every argument must
//! convert implicitly (an unknown literal converts to anything), and among
//! those the entry with the most exact matches wins, the first listed on a
//! tie, as PostgreSQL's function resolution narrows its candidates.

use snapscale_sqlstate::SqlState;
use snapscale_values::{Elem, Reg, SqlError, SqlType};

use super::coerce::castable;
use super::{Binder, Coercion, Resolver, Typed};
use crate::expr::scalar::{self, Scalar};
use crate::expr::{Advisory, AdvisoryOp, CatalogFunc as C, Expr, Func};

/// An argument's type in a signature.
#[derive(Clone, Copy)]
pub(super) enum Arg {
    Is(SqlType),
    /// Any array (PostgreSQL's anyarray).
    AnyArray,
    /// Any type, taken as it is (an unknown literal as text).
    Any,
}

pub(super) use Arg::{Any, AnyArray, Is};

pub(super) const OID: Arg = Is(SqlType::Oid);
pub(super) const INT4: Arg = Is(SqlType::Int4);
pub(super) const INT8: Arg = Is(SqlType::Int8);
pub(super) const TEXT: Arg = Is(SqlType::Text);
pub(super) const BOOL: Arg = Is(SqlType::Bool);
pub(super) const NAME: Arg = Is(SqlType::Name);
pub(super) const REGCLASS: Arg = Is(SqlType::Reg(Reg::Class));
pub(super) const BYTEA: Arg = Is(SqlType::Bytea);
const TIMESTAMP: Arg = Is(SqlType::Timestamp);
const TIMESTAMPTZ: Arg = Is(SqlType::TimestampTz);
const INTERVAL: Arg = Is(SqlType::Interval);

pub(super) struct Builtin {
    name: &'static str,
    args: &'static [Arg],
    ret: SqlType,
    func: Func,
    /// The last argument repeats (PostgreSQL's VARIADIC "any"): any
    /// number of them, none included.
    variadic: bool,
}

impl Builtin {
    /// Whether a call with `n` arguments fits the signature's count.
    fn takes(&self, n: usize) -> bool {
        n == self.args.len() || self.variadic && n + 1 >= self.args.len()
    }

    /// The type argument `i` must have.
    fn arg(&self, i: usize) -> Arg {
        self.args[i.min(self.args.len() - 1)]
    }
}

const fn f(name: &'static str, args: &'static [Arg], ret: SqlType, func: Func) -> Builtin {
    Builtin { name, args, ret, func, variadic: false }
}

/// A function of its arguments alone.
pub(super) const fn s(name: &'static str, args: &'static [Arg], ret: SqlType, func: Scalar) -> Builtin {
    Builtin { name, args, ret, func: Func::Scalar(func), variadic: false }
}

/// A function of its arguments alone whose last argument repeats.
pub(super) const fn sv(name: &'static str, args: &'static [Arg], ret: SqlType, func: Scalar) -> Builtin {
    Builtin { name, args, ret, func: Func::Scalar(func), variadic: true }
}

/// An advisory lock function with a bigint key or a pair of integers.
const fn lock_fn(name: &'static str, two: bool, op: AdvisoryOp, shared: bool, xact: bool) -> Builtin {
    let args: &'static [Arg] = if two { &[INT4, INT4] } else { &[INT8] };
    let ret = match op {
        AdvisoryOp::TryLock | AdvisoryOp::Unlock => SqlType::Bool,
        AdvisoryOp::Lock | AdvisoryOp::UnlockAll => SqlType::Void,
    };
    f(name, args, ret, Func::Advisory(Advisory { op, shared, xact }))
}

use AdvisoryOp::{Lock, TryLock, Unlock};

static BUILTINS: &[Builtin] = &[
    // bytea and uuid.
    s("encode", &[BYTEA, TEXT], SqlType::Text, scalar::ENCODE),
    s("decode", &[TEXT, TEXT], SqlType::Bytea, scalar::DECODE),
    s("md5", &[TEXT], SqlType::Text, scalar::MD5),
    s("md5", &[BYTEA], SqlType::Text, scalar::MD5),
    s("sha224", &[BYTEA], SqlType::Bytea, scalar::SHA224),
    s("sha256", &[BYTEA], SqlType::Bytea, scalar::SHA256),
    s("sha384", &[BYTEA], SqlType::Bytea, scalar::SHA384),
    s("sha512", &[BYTEA], SqlType::Bytea, scalar::SHA512),
    s("get_byte", &[BYTEA, INT4], SqlType::Int4, scalar::GET_BYTE),
    s("set_byte", &[BYTEA, INT4, INT4], SqlType::Bytea, scalar::SET_BYTE),
    s("octet_length", &[BYTEA], SqlType::Int4, scalar::OCTET_LENGTH),
    s("length", &[BYTEA], SqlType::Int4, scalar::OCTET_LENGTH),
    s("substr", &[BYTEA, INT4], SqlType::Bytea, scalar::BYTEA_SUBSTR),
    s("substr", &[BYTEA, INT4, INT4], SqlType::Bytea, scalar::BYTEA_SUBSTR),
    s("substring", &[BYTEA, INT4], SqlType::Bytea, scalar::BYTEA_SUBSTR),
    s("substring", &[BYTEA, INT4, INT4], SqlType::Bytea, scalar::BYTEA_SUBSTR),
    s("position", &[TEXT, TEXT], SqlType::Int4, scalar::TEXT_POSITION),
    s("strpos", &[TEXT, TEXT], SqlType::Int4, scalar::STRPOS),
    s("position", &[BYTEA, BYTEA], SqlType::Int4, scalar::BYTEA_POSITION),
    s("byteacat", &[BYTEA, BYTEA], SqlType::Bytea, scalar::BYTEA_CONCAT),
    s("gen_random_uuid", &[], SqlType::Uuid, scalar::GEN_RANDOM_UUID),
    s("random", &[], SqlType::Float8, scalar::RANDOM),
    f("array_to_string", &[AnyArray, TEXT], SqlType::Text, Func::ArrayToString),
    f("array_to_string", &[AnyArray, TEXT, TEXT], SqlType::Text, Func::ArrayToString),
    f("array_upper", &[AnyArray, INT4], SqlType::Int4, Func::ArrayUpper),
    f("array_lower", &[AnyArray, INT4], SqlType::Int4, Func::ArrayLower),
    f("array_length", &[AnyArray, INT4], SqlType::Int4, Func::ArrayLength),
    f("cardinality", &[AnyArray], SqlType::Int4, Func::Cardinality),
    f("array_ndims", &[AnyArray], SqlType::Int4, Func::ArrayNdims),
    f("array_dims", &[AnyArray], SqlType::Text, Func::ArrayDims),
    f("quote_ident", &[TEXT], SqlType::Text, Func::QuoteIdent),
    f("format_type", &[OID, INT4], SqlType::Text, Func::Catalog(C::FormatType)),
    f("pg_get_expr", &[TEXT, OID], SqlType::Text, Func::Catalog(C::GetExpr)),
    f("pg_get_expr", &[TEXT, OID, BOOL], SqlType::Text, Func::Catalog(C::GetExpr)),
    f("pg_get_indexdef", &[OID], SqlType::Text, Func::Catalog(C::GetIndexDef)),
    f("pg_get_indexdef", &[OID, INT4, BOOL], SqlType::Text, Func::Catalog(C::GetIndexDef)),
    f("pg_get_constraintdef", &[OID], SqlType::Text, Func::Catalog(C::GetConstraintDef)),
    f("pg_get_constraintdef", &[OID, BOOL], SqlType::Text, Func::Catalog(C::GetConstraintDef)),
    f("pg_get_userbyid", &[OID], SqlType::Name, Func::Catalog(C::GetUserById)),
    f("pg_table_is_visible", &[OID], SqlType::Bool, Func::Catalog(C::TableIsVisible)),
    f("pg_type_is_visible", &[OID], SqlType::Bool, Func::Catalog(C::TypeIsVisible)),
    f("pg_function_is_visible", &[OID], SqlType::Bool, Func::Catalog(C::FunctionIsVisible)),
    f("pg_operator_is_visible", &[OID], SqlType::Bool, Func::Catalog(C::FunctionIsVisible)),
    f("pg_opclass_is_visible", &[OID], SqlType::Bool, Func::Catalog(C::FunctionIsVisible)),
    f("pg_conversion_is_visible", &[OID], SqlType::Bool, Func::Catalog(C::FunctionIsVisible)),
    f("pg_ts_config_is_visible", &[OID], SqlType::Bool, Func::Catalog(C::FunctionIsVisible)),
    f("pg_collation_is_visible", &[OID], SqlType::Bool, Func::Catalog(C::CollationIsVisible)),
    f("pg_encoding_to_char", &[INT4], SqlType::Name, Func::Catalog(C::EncodingToChar)),
    f("pg_get_function_result", &[OID], SqlType::Text, Func::Catalog(C::GetFunctionResult)),
    f("pg_get_function_arguments", &[OID], SqlType::Text, Func::Catalog(C::GetFunctionArguments)),
    f("pg_get_functiondef", &[OID], SqlType::Text, Func::Catalog(C::GetFunctionDef)),
    f("pg_get_function_sqlbody", &[OID], SqlType::Text, Func::Catalog(C::GetFunctionSqlBody)),
    f("pg_get_function_identity_arguments", &[OID], SqlType::Text, Func::Catalog(C::GetFunctionArguments)),
    f("pg_relation_is_publishable", &[REGCLASS], SqlType::Bool, Func::Catalog(C::RelationIsPublishable)),
    f("pg_get_triggerdef", &[OID], SqlType::Text, Func::Catalog(C::GetTriggerDef)),
    f("pg_get_triggerdef", &[OID, BOOL], SqlType::Text, Func::Catalog(C::GetTriggerDef)),
    f(
        "pg_isolation_test_session_is_blocked",
        &[INT4, Is(SqlType::Array(snapscale_values::Elem::Int4))],
        SqlType::Bool,
        Func::Catalog(C::IsolationTestSessionIsBlocked),
    ),
    f("pg_get_statisticsobjdef_columns", &[OID], SqlType::Text, Func::Catalog(C::StatisticsObjDefColumns)),
    f("obj_description", &[OID], SqlType::Text, Func::Catalog(C::ObjDescription)),
    f("obj_description", &[OID, NAME], SqlType::Text, Func::Catalog(C::ObjDescription)),
    f("col_description", &[OID, INT4], SqlType::Text, Func::Catalog(C::ColDescription)),
    f("shobj_description", &[OID, NAME], SqlType::Text, Func::Catalog(C::ShobjDescription)),
    f("pg_get_serial_sequence", &[TEXT, TEXT], SqlType::Text, Func::Catalog(C::GetSerialSequence)),
    f("age", &[INT8], SqlType::Int4, Func::Catalog(C::XidAge)),
    // The instant versions first: two unknown literals are instants, as
    // PostgreSQL prefers timestamptz.
    s("age", &[TIMESTAMPTZ, TIMESTAMPTZ], SqlType::Interval, scalar::AGE),
    s("age", &[TIMESTAMP, TIMESTAMP], SqlType::Interval, scalar::AGE),
    s("date_bin", &[INTERVAL, TIMESTAMPTZ, TIMESTAMPTZ], SqlType::TimestampTz, scalar::DATE_BIN),
    s("date_bin", &[INTERVAL, TIMESTAMP, TIMESTAMP], SqlType::Timestamp, scalar::DATE_BIN),
    f("has_table_privilege", &[Any, TEXT], SqlType::Bool, Func::Catalog(C::HasPrivilege)),
    f("has_table_privilege", &[Any, Any, TEXT], SqlType::Bool, Func::Catalog(C::HasPrivilege)),
    f("has_schema_privilege", &[Any, TEXT], SqlType::Bool, Func::Catalog(C::HasPrivilege)),
    f("has_schema_privilege", &[Any, Any, TEXT], SqlType::Bool, Func::Catalog(C::HasPrivilege)),
    f("has_database_privilege", &[Any, TEXT], SqlType::Bool, Func::Catalog(C::HasPrivilege)),
    f("has_database_privilege", &[Any, Any, TEXT], SqlType::Bool, Func::Catalog(C::HasPrivilege)),
    f("has_sequence_privilege", &[Any, TEXT], SqlType::Bool, Func::Catalog(C::HasPrivilege)),
    f("has_sequence_privilege", &[Any, Any, TEXT], SqlType::Bool, Func::Catalog(C::HasPrivilege)),
    f("has_column_privilege", &[Any, Any, TEXT], SqlType::Bool, Func::Catalog(C::HasPrivilege)),
    f("has_column_privilege", &[Any, Any, Any, TEXT], SqlType::Bool, Func::Catalog(C::HasPrivilege)),
    f("has_function_privilege", &[Any, TEXT], SqlType::Bool, Func::Catalog(C::HasPrivilege)),
    f("pg_relation_size", &[REGCLASS], SqlType::Int8, Func::Catalog(C::RelationSize)),
    f("pg_total_relation_size", &[REGCLASS], SqlType::Int8, Func::Catalog(C::RelationSize)),
    f("pg_table_size", &[REGCLASS], SqlType::Int8, Func::Catalog(C::RelationSize)),
    f("pg_indexes_size", &[REGCLASS], SqlType::Int8, Func::Catalog(C::RelationSize)),
    f("pg_size_pretty", &[INT8], SqlType::Text, Func::Catalog(C::SizePretty)),
    f("to_regclass", &[TEXT], SqlType::Reg(Reg::Class), Func::Catalog(C::ToReg(Reg::Class))),
    f("to_regtype", &[TEXT], SqlType::Reg(Reg::Type), Func::Catalog(C::ToReg(Reg::Type))),
    f("to_regnamespace", &[TEXT], SqlType::Reg(Reg::Namespace), Func::Catalog(C::ToReg(Reg::Namespace))),
    f("to_regproc", &[TEXT], SqlType::Reg(Reg::Proc), Func::Catalog(C::ToReg(Reg::Proc))),
    f("to_regrole", &[TEXT], SqlType::Reg(Reg::Role), Func::Catalog(C::ToReg(Reg::Role))),
    f("current_schemas", &[BOOL], SqlType::Array(Elem::Name), Func::Catalog(C::CurrentSchemas)),
    f("pg_my_temp_schema", &[], SqlType::Oid, Func::Catalog(C::MyTempSchema)),
    f("pg_is_other_temp_schema", &[OID], SqlType::Bool, Func::Catalog(C::IsOtherTempSchema)),
    f("pg_get_ruledef", &[OID], SqlType::Text, Func::Catalog(C::GetRuleDef)),
    f("pg_get_ruledef", &[OID, BOOL], SqlType::Text, Func::Catalog(C::GetRuleDef)),
    f("pg_get_viewdef", &[OID], SqlType::Text, Func::Catalog(C::GetViewDef)),
    f("pg_get_viewdef", &[OID, BOOL], SqlType::Text, Func::Catalog(C::GetViewDef)),
    // The older forms, by the view's name.
    f("pg_get_viewdef", &[TEXT], SqlType::Text, Func::Catalog(C::GetViewDef)),
    f("pg_get_viewdef", &[TEXT, BOOL], SqlType::Text, Func::Catalog(C::GetViewDef)),
    f("pg_tablespace_location", &[OID], SqlType::Text, Func::Catalog(C::TablespaceLocation)),
    f("pg_postmaster_start_time", &[], SqlType::TimestampTz, Func::Catalog(C::PostmasterStartTime)),
    // Advisory locks (explicit locking in the manual): session-level unless
    // _xact_, exclusive unless _shared.
    lock_fn("pg_advisory_lock", false, Lock, false, false),
    lock_fn("pg_advisory_lock", true, Lock, false, false),
    lock_fn("pg_advisory_lock_shared", false, Lock, true, false),
    lock_fn("pg_advisory_lock_shared", true, Lock, true, false),
    lock_fn("pg_advisory_xact_lock", false, Lock, false, true),
    lock_fn("pg_advisory_xact_lock", true, Lock, false, true),
    lock_fn("pg_advisory_xact_lock_shared", false, Lock, true, true),
    lock_fn("pg_advisory_xact_lock_shared", true, Lock, true, true),
    lock_fn("pg_try_advisory_lock", false, TryLock, false, false),
    lock_fn("pg_try_advisory_lock", true, TryLock, false, false),
    lock_fn("pg_try_advisory_lock_shared", false, TryLock, true, false),
    lock_fn("pg_try_advisory_lock_shared", true, TryLock, true, false),
    lock_fn("pg_try_advisory_xact_lock", false, TryLock, false, true),
    lock_fn("pg_try_advisory_xact_lock", true, TryLock, false, true),
    lock_fn("pg_try_advisory_xact_lock_shared", false, TryLock, true, true),
    lock_fn("pg_try_advisory_xact_lock_shared", true, TryLock, true, true),
    lock_fn("pg_advisory_unlock", false, Unlock, false, false),
    lock_fn("pg_advisory_unlock", true, Unlock, false, false),
    lock_fn("pg_advisory_unlock_shared", false, Unlock, true, false),
    lock_fn("pg_advisory_unlock_shared", true, Unlock, true, false),
    // Poolers call it when they reset a session (so does DISCARD ALL).
    f(
        "pg_advisory_unlock_all",
        &[],
        SqlType::Void,
        Func::Advisory(Advisory { op: AdvisoryOp::UnlockAll, shared: false, xact: false }),
    ),
];

/// Every table of builtins: this file's, and one per family of types.
static TABLES: &[&[Builtin]] = &[
    BUILTINS,
    super::builtins_text::STRINGS,
    super::builtins_math::MATH,
    super::builtins_json::JSON_FUNCTIONS,
];

impl<R: Resolver> Binder<'_, R> {
    /// `name(args)` bound to a builtin with that many arguments, if there
    /// is one.
    pub(super) fn builtin(&mut self, name: &str, args: &mut Vec<Typed>) -> Result<Option<Typed>, SqlError> {
        let Some((b, fits)) = best_match(name, args) else {
            return Ok(None);
        };
        // An operator (an entry named by its symbol) that takes no such
        // operands is PostgreSQL's "operator does not exist".
        if !fits && !name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            let ty = |t: &Typed| t.ty.map_or("unknown", SqlType::name);
            let operands = match args.as_slice() {
                [a, b] => format!("{} {name} {}", ty(a), ty(b)),
                _ => format!("{name} …"),
            };
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("operator does not exist: {operands}"),
            ));
        }
        let mut bound = Vec::with_capacity(args.len());
        for (i, t) in std::mem::take(args).into_iter().enumerate() {
            let arg = b.arg(i);
            bound.push(match arg {
                Is(ty) => self.coerce(t, ty, Coercion::Implicit, &format!("argument of {name}"))?,
                AnyArray => match t.ty {
                    Some(ty) if ty.elem().is_some() => t.e,
                    None => self.coerce(t, SqlType::Array(Elem::Text), Coercion::Implicit, name)?,
                    Some(ty) => {
                        return Err(SqlError::new(
                            SqlState::UNDEFINED_FUNCTION,
                            format!("function {name}({}, …) does not exist", ty.name()),
                        ))
                    }
                },
                Any => self.settle(t)?,
            });
        }
        if let Func::Advisory(a) = b.func {
            self.statement.waits |= a.waits();
        }
        Ok(Some(Typed { e: Expr::Func(b.func, bound), ty: Some(b.ret) }))
    }
}

/// The entry `name(args)` binds to: with the arguments' count, each
/// argument converting implicitly, the most exact matches first (the
/// first listed on a tie), and `true`; else the first with the count,
/// and `false` (its coercions then report the mismatch); `None` if no
/// entry has the count.
fn best_match(name: &str, args: &[Typed]) -> Option<(&'static Builtin, bool)> {
    // (exact matches, conversions to a preferred type): PostgreSQL keeps
    // the candidates with the most exact matches, then those converting
    // to their category's preferred type most often (an integer goes to
    // double precision before numeric).
    let exact = |b: &Builtin| -> Option<(usize, usize)> {
        let (mut exact, mut preferred) = (0, 0);
        for (i, t) in args.iter().enumerate() {
            match (t.ty, b.arg(i)) {
                (Some(from), Is(to)) if from == to || same_type(from, to) => exact += 1,
                (Some(from), Is(to)) if !castable(from, to, Coercion::Implicit) => return None,
                (Some(_), Is(to)) if is_preferred(to) => preferred += 1,
                // An unknown literal goes to the string category first.
                (None, Is(SqlType::Text)) => preferred += 1,
                _ => {}
            }
        }
        Some((exact, preferred))
    };
    let all = || TABLES.iter().flat_map(|t| t.iter());
    let candidates = all().filter(|b| b.name == name && b.takes(args.len()));
    let mut best: Option<(&'static Builtin, (usize, usize))> = None;
    for b in candidates {
        if let Some(score) = exact(b) {
            if best.is_none_or(|(_, s)| score > s) {
                best = Some((b, score));
            }
        }
    }
    // No candidate fits: the first one reports the mismatch, as before.
    best.map(|(b, _)| (b, true))
        .or_else(|| all().find(|b| b.name == name && b.takes(args.len())).map(|b| (b, false)))
}

/// The same type but for a modifier (`numeric(10,2)` is a `numeric`).
fn same_type(a: SqlType, b: SqlType) -> bool {
    matches!((a, b), (SqlType::Numeric(_), SqlType::Numeric(_)) | (SqlType::Varchar(_), SqlType::Varchar(_)))
}

/// Each category's preferred type, which PostgreSQL's resolution favours.
fn is_preferred(t: SqlType) -> bool {
    matches!(
        t,
        SqlType::Float8
            | SqlType::Text
            | SqlType::Bool
            | SqlType::TimestampTz
            | SqlType::Interval
            | SqlType::Oid
    )
}
