//! Binding json[b]_populate_record[set] and json[b]_to_record[set]: the
//! attributes the JSON is read into come from the base argument's
//! composite type, or from the column definition list of a call in FROM
//! (`AS x(a int, b text)`), resolved here into a [`Target`] tree with
//! each domain's checks bound.

use std::sync::Arc;

use snapscale_engine::catalog::ColumnDef;
use snapscale_sqlstate::SqlState;
use snapscale_values::{Elem, SqlError, SqlType, Value};
use sqlparser::ast;

use super::{ident, not_supported, Binder, Coercion, Resolver, Typed};
use crate::expr::populate::{Populate, Target};
use crate::expr::user_types::TypeOp;
use crate::expr::Expr;

/// How deep composite attributes may nest (a composite cannot contain
/// itself, so this bounds only long chains of distinct types).
const MAX_NESTING: usize = 32;

/// Whether `name` is one of these functions.
pub(super) fn is_populate(name: &str) -> bool {
    populate_kind(name).is_some()
}

/// The function `name` names, if it is one of these.
fn populate_kind(name: &str) -> Option<Populate> {
    let (jsonb, rest) = match name.strip_prefix("jsonb_") {
        Some(rest) => (true, rest),
        None => (false, name.strip_prefix("json_")?),
    };
    let (to, set) = match rest {
        "populate_record" => (false, false),
        "populate_recordset" => (false, true),
        "to_record" => (true, false),
        "to_recordset" => (true, true),
        _ => return None,
    };
    Some(Populate { jsonb, set, to })
}

/// A bound call: its expression (a record, or for a set an array of
/// records), the attributes, and the composite type for a populate call.
pub(super) struct PopulateCall {
    pub e: Expr,
    pub set: bool,
    pub columns: Vec<(String, SqlType)>,
    pub ty: Option<SqlType>,
}

impl<R: Resolver> Binder<'_, R> {
    /// `name(args)` if it is one of these functions; `defs` is the column
    /// definition list of a call in FROM.
    pub(super) fn populate_call(
        &mut self,
        name: &str,
        args: Vec<Typed>,
        defs: Option<&[ast::TableAliasColumnDef]>,
    ) -> Result<Option<PopulateCall>, SqlError> {
        let Some(p) = populate_kind(name) else { return Ok(None) };
        let wanted = if p.to { 1 } else { 2 };
        if args.len() != wanted {
            return Err(super::function::no_such_function(name, &args));
        }
        let mut args = args.into_iter();
        let (base, fields, ty) = if p.to {
            (Expr::Const(Value::Null), None, None)
        } else {
            let base = args.next().expect("two arguments");
            match base.ty {
                Some(SqlType::Composite(u)) => {
                    let entry = self.resolver.user_type_by_oid(u.oid())?.ok_or_else(|| {
                        SqlError::new(
                            SqlState::UNDEFINED_OBJECT,
                            format!("type with OID {} does not exist", u.oid()),
                        )
                    })?;
                    (base.e, Some(entry.columns.clone()), Some(SqlType::Composite(u)))
                }
                Some(other) if !matches!(other, SqlType::Record(_)) => {
                    return Err(SqlError::new(
                        SqlState::DATATYPE_MISMATCH,
                        format!("first argument of {name} must be a row type"),
                    ))
                }
                _ => (base.e, None, None),
            }
        };
        let json = args.next().expect("the JSON argument");
        let json_ty = if p.jsonb { SqlType::Jsonb } else { SqlType::Json };
        let json = self.coerce(json, json_ty, Coercion::Implicit, name)?;
        let mut columns = Vec::new();
        let mut targets = Vec::new();
        match (fields, defs) {
            (Some(_), Some(defs)) if !defs.is_empty() => {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    "a column definition list is redundant for a function returning a named composite type",
                ))
            }
            (Some(fields), _) => {
                for c in &fields {
                    columns.push((c.name.clone(), c.ty));
                    targets.push((c.name.clone(), self.attribute_target(c, 0)?));
                }
            }
            (None, Some(defs)) if !defs.is_empty() => {
                for d in defs {
                    let Some(dt) = &d.data_type else {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            "a column definition list is required for functions returning \"record\"",
                        ));
                    };
                    let (base_ty, domain) = self.resolve_type_with_domain(dt)?;
                    let col_name = ident(&d.name);
                    let typmod = super::ddl::typmod_of(dt);
                    let mut t = self.type_target(base_ty, typmod, 0)?;
                    if let Some(entry) = domain {
                        t = self.with_domain(t, &entry)?;
                    }
                    columns.push((col_name.clone(), base_ty));
                    targets.push((col_name, t));
                }
            }
            (None, _) if defs.is_some() => {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    "a column definition list is required for functions returning \"record\"",
                ))
            }
            (None, _) => {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    format!("could not determine row type for result of {name}"),
                )
                .with_hint(
                    "Provide a non-null record argument, or call the function in the FROM clause using a column definition list.",
                ))
            }
        }
        let op = TypeOp::Populate(p, Target::Record(targets));
        let e = Expr::UserType(Arc::new(op), vec![base, json]);
        Ok(Some(PopulateCall { e, set: p.set, columns, ty }))
    }

    /// A composite attribute's target: its type, held to its modifier and
    /// checked against its domain.
    fn attribute_target(&mut self, c: &ColumnDef, depth: usize) -> Result<Target, SqlError> {
        let t = self.type_target(c.ty, c.typmod, depth)?;
        match c.domain {
            Some(oid) => {
                let entry = self.domain_of(oid)?;
                self.with_domain(t, &entry)
            }
            None => Ok(t),
        }
    }

    fn with_domain(
        &mut self,
        t: Target,
        entry: &snapscale_engine::catalog::RelEntry,
    ) -> Result<Target, SqlError> {
        match self.domain_checked(Expr::Column(0), entry)? {
            Expr::UserType(op, _) => Ok(Target::Domain(Box::new(t), op)),
            _ => Ok(t),
        }
    }

    fn type_target(&mut self, ty: SqlType, typmod: Option<i32>, depth: usize) -> Result<Target, SqlError> {
        if depth > MAX_NESTING {
            return Err(not_supported("composite types nested this deep"));
        }
        Ok(match ty {
            SqlType::Composite(u) => {
                let entry = self.resolver.user_type_by_oid(u.oid())?.ok_or_else(|| {
                    SqlError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("type with OID {} does not exist", u.oid()),
                    )
                })?;
                let mut fields = Vec::with_capacity(entry.columns.len());
                for c in &entry.columns {
                    fields.push((c.name.clone(), self.attribute_target(c, depth + 1)?));
                }
                Target::Record(fields)
            }
            // An array's modifier is its elements' (char(n)[]).
            SqlType::Array(e) => {
                let elem = match (e, typmod) {
                    (Elem::Bpchar, Some(m)) if m >= 5 => SqlType::Char((m - 4) as u32),
                    (Elem::Varchar, Some(m)) if m >= 5 => SqlType::Varchar(Some((m - 4) as u32)),
                    _ => e.ty(),
                };
                Target::Array(Box::new(self.type_target(elem, None, depth + 1)?))
            }
            ty => Target::Scalar(ty),
        })
    }
}
