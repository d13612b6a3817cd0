//! PostgreSQL's coercion rules: unknown literals and untyped parameters
//! take the type their context needs, implicit, assignment and explicit
//! casts are allowed between the type categories as PostgreSQL allows
//! them, and the branches of CASE, COALESCE, UNION … resolve to one type.

use snapscale_engine::catalog::ColumnDef;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType, Value};

use super::{Binder, Coercion, Resolver, Typed};
use crate::expr::{cast, Arith, Cmp, Expr};

impl<R: Resolver> Binder<'_, R> {
    pub(super) fn coerce_any_text(&mut self, t: Typed) -> Result<Expr, SqlError> {
        match t.ty {
            None | Some(SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_)) => {
                self.coerce(t, SqlType::Text, Coercion::Implicit, "operand")
            }
            Some(_) => Ok(Expr::Cast(Box::new(t.e), SqlType::Text, true)),
        }
    }

    pub(super) fn coerce_to_column(&mut self, t: Typed, col: &ColumnDef) -> Result<Expr, SqlError> {
        let t = self.qualified_interval_literal(t, col.ty, col.typmod)?;
        let e = self.coerce_to_column_type(t, col)?;
        let e = match (col.ty, col.typmod) {
            (SqlType::Array(_), Some(t)) => Expr::Func(
                crate::expr::Func::Scalar(crate::expr::scalar::ADJUST_ARRAY_TYPMOD),
                vec![e, Expr::Const(Value::Int(t.into())), Expr::Const(Value::Int(col.ty.oid().into()))],
            ),
            _ => with_typmod(e, col.typmod),
        };
        match col.domain {
            Some(oid) => {
                let d = self.domain_of(oid)?;
                self.domain_checked(e, &d)
            }
            None => Ok(e),
        }
    }

    fn coerce_to_column_type(&mut self, t: Typed, col: &ColumnDef) -> Result<Expr, SqlError> {
        let ty = t.ty;
        self.coerce(t, col.ty, Coercion::Assignment, "").map_err(|e| {
            if e.code == SqlState::DATATYPE_MISMATCH {
                SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!(
                        "column \"{}\" is of type {} but expression is of type {}",
                        col.name,
                        col.ty.name(),
                        ty.map_or("unknown", SqlType::name)
                    ),
                )
            } else {
                e
            }
        })
    }

    /// Converts `t` to `target` in `context`: unknown literals are parsed
    /// as `target` now (bad input fails at bind time, as in PostgreSQL),
    /// untyped parameters take `target` as their type.
    pub(super) fn coerce(
        &mut self,
        t: Typed,
        target: SqlType,
        how: Coercion,
        what: &str,
    ) -> Result<Expr, SqlError> {
        if let SqlType::Enum(u) = target {
            return self.coerce_to_enum(t, u, how, what);
        }
        if let SqlType::Composite(u) = target {
            return self.coerce_to_composite(t, u, how, what);
        }
        if let (SqlType::Array(snapscale_values::Elem::Composite(u)), None, Expr::Const(Value::Text(s))) =
            (target, t.ty, &t.e)
        {
            return self.composite_array_literal(s, u);
        }
        if let (SqlType::Array(snapscale_values::Elem::Enum(u)), None | Some(SqlType::Text)) = (target, t.ty)
        {
            if let Expr::Const(Value::Text(_)) = &t.e {
                return self.enum_array_literal(t, u);
            }
        }
        let Some(from) = t.ty else {
            return Ok(match t.e {
                // A name of a catalog object is looked up when the
                // statement runs, with its snapshot.
                e @ Expr::Const(Value::Text(_)) if matches!(target, SqlType::Reg(_)) => {
                    Expr::Cast(Box::new(e), target, true)
                }
                Expr::Const(Value::Text(s)) => Expr::Const(Value::parse_in(target, &s, self.zone)?),
                Expr::Param(i) => {
                    self.statement.params[i] = Some(target);
                    Expr::Param(i)
                }
                other => other,
            });
        };
        if from == target {
            return Ok(t.e);
        }
        if !castable(from, target, how) {
            let message = match how {
                Coercion::Implicit => {
                    format!("{what} must be type {}, not type {}", target.name(), from.name())
                }
                _ => format!("cannot cast type {} to {}", from.name(), target.name()),
            };
            return Err(SqlError::new(
                if how == Coercion::Implicit { SqlState::DATATYPE_MISMATCH } else { SqlState::CANNOT_COERCE },
                message,
            ));
        }
        // Objects are named as the statement's snapshot sees them.
        if matches!(target, SqlType::Reg(_)) || matches!(from, SqlType::Reg(_)) {
            return Ok(Expr::Cast(Box::new(t.e), target, how == Coercion::Explicit));
        }
        // Fold constants now. A cast that fails is left to run: its error
        // is the cast's, which PostgreSQL reports without a position (only
        // a literal's input has one).
        // char(n) read as text or varchar loses its trailing blanks, as
        // PostgreSQL's rtrim1 cast drops them.
        let t = if matches!(from, SqlType::Char(_)) && matches!(target, SqlType::Text | SqlType::Varchar(_)) {
            let e = match t.e {
                Expr::Const(Value::Text(s)) => Expr::Const(Value::Text(s.trim_end_matches(' ').to_owned())),
                e => Expr::Func(crate::expr::Func::Scalar(crate::expr::scalar::BPCHAR_TO_TEXT), vec![e]),
            };
            Typed { e, ty: Some(SqlType::Text) }
        } else {
            t
        };
        if let Expr::Const(v) = &t.e {
            if let Ok(folded) = cast(v.clone(), target, how == Coercion::Explicit, self.zone) {
                return Ok(Expr::Const(folded));
            }
        }
        // Widening an integer, or reading varchar/char as text, needs no
        // run-time conversion.
        let widening = family(from) == Family::Integer
            && family(target) == Family::Integer
            && rank(from) <= rank(target);
        let as_text =
            matches!(from, SqlType::Varchar(_) | SqlType::Char(_) | SqlType::Name) && target == SqlType::Text;
        let needs_cast = !widening && !as_text;
        Ok(if needs_cast { Expr::Cast(Box::new(t.e), target, how == Coercion::Explicit) } else { t.e })
    }
}

/// `e` held to a date/time type modifier, if there is one
/// (`timestamp(2)`, `interval day to minute`).
pub(super) fn with_typmod(e: Expr, typmod: Option<i32>) -> Expr {
    match typmod {
        Some(t) => Expr::Func(
            crate::expr::Func::Scalar(crate::expr::scalar::ADJUST_TYPMOD),
            vec![e, Expr::Const(Value::Int(t.into()))],
        ),
        None => e,
    }
}

impl<R: super::Resolver> Binder<'_, R> {
    /// A quoted literal read as an interval of a qualified type
    /// (`interval minute`): a number without a unit is in the qualifier's
    /// last field, as PostgreSQL's interval input reads it for the type.
    pub(super) fn qualified_interval_literal(
        &mut self,
        t: Typed,
        ty: SqlType,
        typmod: Option<i32>,
    ) -> Result<Typed, SqlError> {
        let range =
            typmod.map_or(snapscale_values::interval_range::FULL, snapscale_values::interval_range::of);
        match (&t.e, t.ty) {
            (Expr::Const(Value::Text(s)), None)
                if ty == SqlType::Interval && range != snapscale_values::interval_range::FULL =>
            {
                let iv = snapscale_values::parse_interval_qualified(s, &self.zone, range)?;
                Ok(Typed { e: Expr::Const(Value::Interval(iv)), ty: Some(SqlType::Interval) })
            }
            _ => Ok(t),
        }
    }
}

/// Whether a value of `from` converts to `target` in context `how`: within
/// a category always (arrays as their elements convert), integers to floats
/// and oids implicitly, floats to integers by assignment, anything to a
/// string by assignment, and anything else only explicitly.
pub(super) fn castable(from: SqlType, target: SqlType, how: Coercion) -> bool {
    match (family(from), family(target), how) {
        // double precision narrows to real by assignment only.
        _ if from == SqlType::Float8 && target == SqlType::Float4 => how != Coercion::Implicit,
        (a, b, _) if a == b && a != Family::Array => true,
        (Family::Array, Family::Array, _) => {
            let (a, b) = (from.elem().expect("an array"), target.elem().expect("an array"));
            castable(a, b, how)
        }
        (Family::Integer, Family::Float | Family::Oid | Family::Numeric, _) => true,
        (Family::Numeric, Family::Float, _) => true,
        (Family::Numeric, Family::Integer, Coercion::Assignment | Coercion::Explicit) => true,
        (Family::Float, Family::Numeric, Coercion::Assignment | Coercion::Explicit) => true,
        (Family::Oid, Family::Integer, _) => true,
        (Family::Float, Family::Integer, Coercion::Assignment | Coercion::Explicit) => true,
        (_, Family::String, Coercion::Assignment | Coercion::Explicit) => true,
        // void converts only to text (through its empty output).
        (Family::Void, _, _) | (_, Family::Void, _) => false,
        (_, _, Coercion::Explicit) => true,
        _ => false,
    }
}

/// PostgreSQL's resolution of one type for the branches of CASE, COALESCE,
/// GREATEST and LEAST: unknown inputs take the others' type (text if all
/// are unknown); known ones must share a category, and the one the others
/// convert to implicitly wins (integers widen, numbers become double
/// precision, strings text, a date a timestamp).
pub(super) fn common_type(
    types: impl Iterator<Item = Option<SqlType>>,
    what: &str,
) -> Result<SqlType, SqlError> {
    let mut common: Option<SqlType> = None;
    for ty in types.flatten() {
        let Some(c) = common else {
            common = Some(ty);
            continue;
        };
        common = Some(wider(c, ty).ok_or_else(|| {
            SqlError::new(
                SqlState::DATATYPE_MISMATCH,
                format!("{what} types {} and {} cannot be matched", c.name(), ty.name()),
            )
        })?);
    }
    Ok(common.unwrap_or(SqlType::Text))
}

pub(super) fn wider(a: SqlType, b: SqlType) -> Option<SqlType> {
    use SqlType::*;
    let int = |t| matches!(t, Int2 | Int4 | Int8);
    let string = |t| matches!(t, Text | Varchar(_) | Char(_) | Name | Char1);
    let oid = |t| matches!(t, Oid | Reg(_));
    Some(match (a, b) {
        _ if a == b => a,
        _ if oid(a) && (oid(b) || int(b)) || oid(b) && int(a) => Oid,
        _ if int(a) && int(b) => {
            if rank(a) >= rank(b) {
                a
            } else {
                b
            }
        }
        (Numeric(_), Numeric(_)) => Numeric(-1),
        (Float4, Float8) | (Float8, Float4) => Float8,
        (Float4, _) if int(b) || matches!(b, Numeric(_)) => Float4,
        (_, Float4) if int(a) || matches!(a, Numeric(_)) => Float4,
        (Numeric(_), _) if int(b) => a,
        (_, Numeric(_)) if int(a) => b,
        _ if (int(a) || matches!(a, Float8 | Numeric(_))) && (int(b) || matches!(b, Float8 | Numeric(_))) => {
            Float8
        }
        _ if string(a) && string(b) => Text,
        (Date | Timestamp, Date | Timestamp) => Timestamp,
        (Date | Timestamp | TimestampTz, Date | Timestamp | TimestampTz) => TimestampTz,
        _ => return None,
    })
}

pub(super) fn rank(t: SqlType) -> u8 {
    match t {
        SqlType::Int2 => 0,
        SqlType::Int4 => 1,
        _ => 2,
    }
}

pub(super) fn comparable(a: SqlType, b: SqlType) -> bool {
    let num =
        |t: SqlType| matches!(family(t), Family::Integer | Family::Numeric | Family::Float | Family::Oid);
    match (family(a), family(b)) {
        // PostgreSQL has no comparison operators on void, json or
        // jsonpath.
        (Family::Void | Family::Json | Family::JsonPath | Family::Refcursor, _)
        | (_, Family::Void | Family::Json | Family::JsonPath | Family::Refcursor) => false,
        (Family::Array, Family::Array) => comparable(a.elem().expect("array"), b.elem().expect("array")),
        (Family::Enum, Family::Enum) => a == b,
        (x, y) if x == y => true,
        _ => num(a) && num(b),
    }
}

/// Type categories: casts within one are implicit (mostly), and values of
/// one compare with each other.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Family {
    Integer,
    Numeric,
    Float,
    Bool,
    String,
    DateTime,
    Interval,
    /// oid and the oid alias types.
    Oid,
    Array,
    Record,
    Void,
    Uuid,
    Bytea,
    Json,
    Jsonb,
    JsonPath,
    /// time and timetz.
    Time,
    /// A user-defined enum type (each its own: see `comparable`).
    Enum,
    /// refcursor: a name, converted to and from text only through its
    /// text, with no operators of its own.
    Refcursor,
}

pub(super) fn family(ty: SqlType) -> Family {
    match ty {
        SqlType::Int2 | SqlType::Int4 | SqlType::Int8 => Family::Integer,
        SqlType::Float8 | SqlType::Float4 => Family::Float,
        SqlType::Bool => Family::Bool,
        SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_) | SqlType::Name | SqlType::Char1 => {
            Family::String
        }
        SqlType::Date | SqlType::Timestamp | SqlType::TimestampTz => Family::DateTime,
        SqlType::Interval => Family::Interval,
        SqlType::Oid | SqlType::Reg(_) => Family::Oid,
        SqlType::Array(_) | SqlType::Int2Vector | SqlType::OidVector => Family::Array,
        SqlType::Record(_) => Family::Record,
        SqlType::Void | SqlType::Trigger | SqlType::Poly(_) => Family::Void,
        SqlType::Uuid => Family::Uuid,
        SqlType::Refcursor => Family::Refcursor,
        SqlType::Bytea => Family::Bytea,
        SqlType::Numeric(_) => Family::Numeric,
        SqlType::Json => Family::Json,
        SqlType::Jsonb => Family::Jsonb,
        SqlType::JsonPath => Family::JsonPath,
        SqlType::Time | SqlType::TimeTz => Family::Time,
        SqlType::Enum(_) => Family::Enum,
        SqlType::Composite(_) => Family::Record,
    }
}

pub(super) fn datetime(t: SqlType) -> bool {
    matches!(t, SqlType::Date | SqlType::Timestamp | SqlType::TimestampTz)
}

pub(super) fn cmp_symbol(op: Cmp) -> &'static str {
    match op {
        Cmp::Eq => "=",
        Cmp::Ne => "<>",
        Cmp::Lt => "<",
        Cmp::Le => "<=",
        Cmp::Gt => ">",
        Cmp::Ge => ">=",
    }
}

pub(super) fn arith_type(a: SqlType, op: Arith, b: SqlType) -> Option<SqlType> {
    use SqlType::*;
    Some(match (a, b) {
        (Int2 | Int4 | Int8, Int2 | Int4 | Int8) => {
            if a == Int8 || b == Int8 {
                Int8
            } else if a == Int4 || b == Int4 {
                Int4
            } else {
                Int2
            }
        }
        (Int2 | Int4 | Int8 | Numeric(_), Int2 | Int4 | Int8 | Numeric(_)) => Numeric(-1),
        // PostgreSQL has no % for real or double precision.
        (Float4, Float4) if op != Arith::Rem => Float4,
        (
            Int2 | Int4 | Int8 | Float4 | Float8 | Numeric(_),
            Int2 | Int4 | Int8 | Float4 | Float8 | Numeric(_),
        ) if op != Arith::Rem => Float8,
        (Date, Int2 | Int4) if matches!(op, Arith::Add | Arith::Sub) => Date,
        (Int2 | Int4, Date) if op == Arith::Add => Date,
        (Date, Date) if op == Arith::Sub => Int4,
        (Timestamp, Timestamp) | (TimestampTz, TimestampTz) if op == Arith::Sub => Interval,
        (Timestamp, Interval) if matches!(op, Arith::Add | Arith::Sub) => Timestamp,
        (Interval, Timestamp) if op == Arith::Add => Timestamp,
        (TimestampTz, Interval) if matches!(op, Arith::Add | Arith::Sub) => TimestampTz,
        (Interval, TimestampTz) if op == Arith::Add => TimestampTz,
        (Interval, Interval) if matches!(op, Arith::Add | Arith::Sub) => Interval,
        (Interval, Int2 | Int4 | Int8 | Float4 | Float8 | Numeric(_))
            if matches!(op, Arith::Mul | Arith::Div) =>
        {
            Interval
        }
        (Int2 | Int4 | Int8 | Float4 | Float8 | Numeric(_), Interval) if op == Arith::Mul => Interval,
        (Time, Time) if op == Arith::Sub => Interval,
        (Time, Interval) if matches!(op, Arith::Add | Arith::Sub) => Time,
        (Interval, Time) if op == Arith::Add => Time,
        (Date, Time) | (Time, Date) if op == Arith::Add => Timestamp,
        _ => return None,
    })
}
