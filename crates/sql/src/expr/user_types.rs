//! Evaluating values of user-defined types: reading an enum's labels, the
//! enum support functions (`enum_first`, `enum_last`, `enum_range`), and
//! a domain's constraints.
//!
//! The labels are those the binding statement saw (its snapshot of the
//! type's catalog row), each marked unsafe when this transaction added it
//! to a type it did not create: PostgreSQL refuses such a label until its
//! transaction commits, since an index could otherwise hold a value whose
//! label a rollback removes.

use std::sync::Arc;

use snapscale_sqlstate::SqlState;
use snapscale_values::{EnumLabel, SqlError, UserType, Value};

use super::{Ctx, EnumOp, Expr};

/// What an [`Expr::UserType`] does.
#[derive(Debug, PartialEq)]
pub enum TypeOp {
    Enum(Arc<EnumLabels>, EnumOp),
    /// Checks its one argument against a domain's constraints.
    Domain(CheckDefs),
    /// json[b]_populate_record[set], json[b]_to_record[set]: arguments
    /// the base record (NULL for none) and the JSON.
    Populate(super::populate::Populate, super::populate::Target),
}

/// A domain's constraints (its own and those of the domains under it), as
/// a statement bound them.
#[derive(Debug)]
pub struct CheckDefs {
    /// The domain, as the NOT NULL error names it.
    pub name: String,
    pub not_null: bool,
    /// Each CHECK: the domain that has it, its name, and its expression
    /// over the value (column 0).
    pub checks: Vec<(String, String, Expr)>,
}

impl PartialEq for CheckDefs {
    fn eq(&self, other: &CheckDefs) -> bool {
        std::ptr::eq(self, other)
    }
}

#[inline(never)]
pub(super) fn eval(op: &TypeOp, args: &[Expr], cx: &Ctx<'_>) -> Result<Value, SqlError> {
    let args = args.iter().map(|a| a.eval(cx)).collect::<Result<Vec<_>, _>>()?;
    match op {
        TypeOp::Enum(labels, op) => match op {
            EnumOp::Input => match &args[0] {
                Value::Null => Ok(Value::Null),
                v => labels.read(&v.try_text_in(cx.style())?.unwrap_or_default()),
            },
            EnumOp::First => labels.end(false),
            EnumOp::Last => labels.end(true),
            EnumOp::Range => labels.range(&args[0], &args[1]),
        },
        TypeOp::Domain(d) => {
            let v = args.into_iter().next().unwrap_or(Value::Null);
            d.check(&v, cx)?;
            Ok(v)
        }
        TypeOp::Populate(p, target) => super::populate::eval(*p, target, &args, cx),
    }
}

impl CheckDefs {
    /// PostgreSQL's domain_check: NOT NULL, then each CHECK that is false
    /// (NULL passes).
    pub fn check(&self, v: &Value, cx: &Ctx<'_>) -> Result<(), SqlError> {
        if matches!(v, Value::Null) && self.not_null {
            return Err(SqlError::new(
                SqlState::NOT_NULL_VIOLATION,
                format!("domain {} does not allow null values", self.name),
            )
            .on_datatype("public", &self.name));
        }
        let row = std::slice::from_ref(v);
        let inner = Ctx {
            row,
            params: cx.params,
            called: cx.called,
            now: cx.now,
            stack: cx.stack,
            db: cx.db,
            snapshot: cx.snapshot,
            session: cx.session,
            outer: &[],
            subqueries: cx.subqueries,
            catalog: cx.catalog,
            replay: cx.replay,
        };
        // The domain named is the one checked, whichever domain under it
        // declared the constraint, as PostgreSQL reports it.
        for (_, name, e) in &self.checks {
            if matches!(e.eval(&inner)?, Value::Bool(false)) {
                return Err(SqlError::new(
                    SqlState::CHECK_VIOLATION,
                    format!("value for domain {} violates check constraint \"{name}\"", self.name),
                )
                .on_datatype("public", &self.name)
                .on_constraint(name));
            }
        }
        Ok(())
    }
}

/// An enum type's labels, in order, as a statement bound them.
#[derive(Debug)]
pub struct EnumLabels {
    pub ty: UserType,
    pub labels: Vec<BoundLabel>,
}

#[derive(Debug)]
pub struct BoundLabel {
    pub name: Arc<str>,
    pub cell: Arc<EnumLabel>,
    /// Added by this transaction to a type it did not create.
    pub unsafe_now: bool,
}

impl PartialEq for EnumLabels {
    fn eq(&self, other: &EnumLabels) -> bool {
        std::ptr::eq(self, other)
    }
}

impl EnumLabels {
    /// The label `text` names (enum_in).
    pub fn read(&self, text: &str) -> Result<Value, SqlError> {
        match self.labels.iter().find(|l| &*l.name == text) {
            Some(l) => self.usable(l),
            None => Err(SqlError::new(
                SqlState::INVALID_TEXT_REPRESENTATION,
                format!("invalid input value for enum {}: \"{text}\"", self.ty.name()),
            )),
        }
    }

    fn usable(&self, l: &BoundLabel) -> Result<Value, SqlError> {
        if l.unsafe_now {
            return Err(SqlError::new(
                SqlState::UNSAFE_NEW_ENUM_VALUE_USAGE,
                format!("unsafe use of new value \"{}\" of enum type {}", l.name, self.ty.name()),
            )
            .with_hint("New enum values must be committed before they can be used."));
        }
        Ok(Value::Enum(Arc::clone(&l.cell)))
    }

    /// `enum_first`, `enum_last`: NULL for a type with no labels.
    pub fn end(&self, last: bool) -> Result<Value, SqlError> {
        let l = if last { self.labels.last() } else { self.labels.first() };
        l.map_or(Ok(Value::Null), |l| self.usable(l))
    }

    /// `enum_range(lo, hi)`: the labels from `lo` to `hi` (NULL: from the
    /// first, to the last), as an array.
    pub fn range(&self, lo: &Value, hi: &Value) -> Result<Value, SqlError> {
        let at = |v: &Value| match v {
            Value::Enum(c) => self.labels.iter().position(|l| l.cell.oid == c.oid),
            _ => None,
        };
        let from = at(lo).unwrap_or(0);
        let to = match hi {
            Value::Null => self.labels.len(),
            v => at(v).map_or(0, |i| i + 1),
        };
        let mut out = Vec::new();
        for l in self.labels.get(from..to.max(from)).unwrap_or_default() {
            out.push(self.usable(l)?);
        }
        Ok(Value::array(out))
    }
}
