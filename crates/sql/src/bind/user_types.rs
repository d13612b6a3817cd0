//! Binding what names a user-defined type: type names in casts and
//! column definitions, reading an enum label from text, the enum support
//! functions, and CREATE / ALTER / DROP TYPE.

use std::sync::Arc;

use snapscale_engine::catalog::RelEntry;
use snapscale_engine::user_types::{CheckDef, DomainDef, TypeDef};
use snapscale_sqlstate::SqlState;
use snapscale_values::{Elem, SqlError, SqlType, UserType, Value};
use sqlparser::ast::{self, DataType};

use super::scope::{Col, Scope};
use super::{ident, not_supported, relation_name, Binder, Coercion, Resolver, Typed};
use crate::expr::user_types::{BoundLabel, CheckDefs, EnumLabels, TypeOp};
use crate::expr::{EnumOp, Expr, Func};
use crate::parse::domain_syntax::{AlterDomain, DomainAction};
use crate::plan::{AlterTypeOp, Plan, TypeSpec, Utility};

impl<R: Resolver> Binder<'_, R> {
    /// A type as written in a cast or a column definition (a builtin, or
    /// a user-defined type of the catalog), and the domain it names if it
    /// names one (the type is then the domain's base type).
    pub(super) fn resolve_type_with_domain(
        &mut self,
        dt: &DataType,
    ) -> Result<(SqlType, Option<Arc<RelEntry>>), SqlError> {
        let builtin = super::ddl::data_type(dt);
        let e = match builtin {
            Ok(ty) => return Ok((ty, None)),
            Err(e) => e,
        };
        if e.code != SqlState::UNDEFINED_OBJECT {
            return Err(e);
        }
        // `t[]`, `t[][]` and `t ARRAY` are one array type.
        let mut base = dt;
        let mut array = false;
        while let DataType::Array(
            ast::ArrayElemTypeDef::SquareBracket(inner, _)
            | ast::ArrayElemTypeDef::AngleBracket(inner)
            | ast::ArrayElemTypeDef::Qualified(inner, _),
        ) = base
        {
            base = inner;
            array = true;
        }
        let DataType::Custom(name, _) = base else { return Err(e) };
        let Ok(n) = relation_name(name) else { return Err(e) };
        let Some(entry) = self.resolver.user_type(&n)? else { return Err(e) };
        let u = UserType::new(entry.oid, &entry.name);
        let ty = match (&entry.user_type, array) {
            (Some(TypeDef::Enum(_)), false) => SqlType::Enum(u),
            (Some(TypeDef::Enum(_)), true) => SqlType::Array(Elem::Enum(u)),
            (Some(TypeDef::Composite), false) => SqlType::Composite(u),
            (Some(TypeDef::Composite), true) => SqlType::Array(Elem::Composite(u)),
            (Some(TypeDef::Domain(d)), false) => return Ok((d.base, Some(entry))),
            _ => return Err(not_supported(format!("arrays of domain {n}"))),
        };
        Ok((ty, None))
    }

    /// `e` (of the domain's base type) checked against domain `entry`'s
    /// constraints and those of the domains under it.
    pub(super) fn domain_checked(&mut self, e: Expr, entry: &RelEntry) -> Result<Expr, SqlError> {
        let mut not_null = false;
        let mut chain = Vec::new();
        let mut at = Some(Arc::new(entry.clone()));
        while let Some(d) = at {
            let Some(TypeDef::Domain(def)) = &d.user_type else { break };
            not_null |= def.not_null;
            at = match def.parent {
                Some(p) => self.resolver.user_type_by_oid(p)?,
                None => None,
            };
            chain.push(d);
        }
        let mut checks = Vec::new();
        // The innermost domain's constraints first, as PostgreSQL checks them.
        for d in chain.iter().rev() {
            let Some(TypeDef::Domain(def)) = &d.user_type else { continue };
            for c in &def.checks {
                checks.push((d.name.clone(), c.name.clone(), self.domain_check_expr(&c.expr, def.base)?));
            }
        }
        if !not_null && checks.is_empty() {
            return Ok(e);
        }
        let op = TypeOp::Domain(CheckDefs { name: entry.name.clone(), not_null, checks });
        Ok(Expr::UserType(Arc::new(op), vec![e]))
    }

    /// A domain's CHECK expression over VALUE (column 0 of type `base`),
    /// as a boolean.
    pub(super) fn domain_check_expr(&mut self, text: &str, base: SqlType) -> Result<Expr, SqlError> {
        let e = crate::parse::parse_expr(text, self.stack.limit())?;
        let scope = Scope::empty()
            .with_items(Vec::new(), vec![Col { name: "value".into(), expr: Expr::Column(0), ty: base }]);
        let subqueries = self.statement.subqueries.len();
        let t = self.expr(&e, &scope)?;
        if self.statement.subqueries.len() != subqueries {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "cannot use subquery in check constraint",
            ));
        }
        self.coerce(t, SqlType::Bool, Coercion::Implicit, "argument of CHECK")
    }

    /// The domain a column was declared with, by oid.
    pub(super) fn domain_of(&mut self, oid: u32) -> Result<Arc<RelEntry>, SqlError> {
        self.resolver.user_type_by_oid(oid)?.ok_or_else(|| {
            SqlError::new(SqlState::UNDEFINED_OBJECT, format!("type with OID {oid} does not exist"))
        })
    }

    /// CREATE DOMAIN name AS type [DEFAULT expr] [NOT NULL] [CHECK (…)]….
    pub(super) fn create_domain(&mut self, cd: &ast::CreateDomain) -> Result<Plan, SqlError> {
        let name = relation_name(&cd.name)?;
        let (base, parent) = self.resolve_type_with_domain(&cd.data_type)?;
        if let Some(c) = &cd.collation {
            return Err(not_supported(format!("COLLATE {c} on a domain")));
        }
        let default = match &cd.default {
            Some(e) => {
                // Bound now, so that a bad default fails CREATE DOMAIN.
                let scope = Scope::empty();
                let t = self.expr(e, &scope)?;
                self.coerce(t, base, Coercion::Assignment, "")?;
                Some(e.to_string())
            }
            None => parent.as_ref().and_then(|p| match &p.user_type {
                Some(TypeDef::Domain(d)) => d.default.clone(),
                _ => None,
            }),
        };
        let mut not_null = false;
        let mut checks: Vec<CheckDef> = Vec::new();
        for c in &cd.constraints {
            let ast::TableConstraint::Check(check) = c else {
                return Err(not_supported(format!("constraint {c} on a domain")));
            };
            let cname = check.name.as_ref().map(ident);
            if cname.as_deref() == Some(crate::parse::domain_syntax::NOT_NULL) {
                not_null = true;
                continue;
            }
            let text = check.expr.to_string();
            self.domain_check_expr(&text, base)?;
            let cname = match cname {
                Some(n) => n,
                None => {
                    let stem = format!("{}_check", snapscale_engine::names::bare(&name));
                    let taken = |n: &str| checks.iter().any(|c| c.name == n);
                    let mut n = stem.clone();
                    let mut k = 1;
                    while taken(&n) {
                        n = format!("{stem}{k}");
                        k += 1;
                    }
                    n
                }
            };
            checks.push(CheckDef { name: cname, expr: text, validated: true });
        }
        let def = DomainDef { base, parent: parent.map(|p| p.oid), not_null, default, checks };
        Ok(Plan::Utility(Utility::CreateType { name, spec: TypeSpec::Domain(def) }))
    }

    /// The labels of enum type `ty` as this statement sees them.
    pub(super) fn enum_labels(&mut self, ty: UserType) -> Result<Arc<EnumLabels>, SqlError> {
        let entry = self.resolver.user_type_by_oid(ty.oid())?.ok_or_else(|| {
            SqlError::new(SqlState::UNDEFINED_OBJECT, format!("type with OID {} does not exist", ty.oid()))
        })?;
        let Some(TypeDef::Enum(def)) = &entry.user_type else {
            return Err(SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("{} is not an enum", ty.name())));
        };
        let me = self.resolver.top_xid();
        let labels = def
            .labels
            .iter()
            .map(|l| BoundLabel {
                name: Arc::clone(&l.name),
                cell: Arc::clone(&l.cell),
                unsafe_now: me.is_some() && l.added_in == me,
            })
            .collect();
        Ok(Arc::new(EnumLabels { ty: UserType::new(entry.oid, &entry.name), labels }))
    }

    /// `t` as a value of enum type `target` (`coerce`'s case for enums):
    /// from unknown or, explicitly, from a string, through the labels.
    pub(super) fn coerce_to_enum(
        &mut self,
        t: Typed,
        target: UserType,
        how: Coercion,
        what: &str,
    ) -> Result<Expr, SqlError> {
        let ty = SqlType::Enum(target);
        match t.ty {
            Some(from) if from == ty => return Ok(t.e),
            None => {
                if let Expr::Param(i) = t.e {
                    // A parameter is sent as text and read through the labels.
                    self.statement.params[i] = Some(SqlType::Text);
                }
            }
            Some(from @ (SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_) | SqlType::Name))
                if how == Coercion::Explicit =>
            {
                let _ = from;
            }
            Some(from) => {
                let (code, message) = match how {
                    Coercion::Implicit => (
                        SqlState::DATATYPE_MISMATCH,
                        format!("{what} must be type {}, not type {}", ty.name(), from.name()),
                    ),
                    _ => (
                        SqlState::CANNOT_COERCE,
                        format!("cannot cast type {} to {}", from.name(), ty.name()),
                    ),
                };
                return Err(SqlError::new(code, message));
            }
        }
        let labels = self.enum_labels(target)?;
        Ok(match t.e {
            Expr::Const(Value::Text(s)) => Expr::Const(labels.read(&s)?),
            Expr::Const(Value::Null) => Expr::Const(Value::Null),
            e => Expr::UserType(Arc::new(TypeOp::Enum(labels, EnumOp::Input)), vec![e]),
        })
    }

    /// Parameter `i`, which the client declared of enum type `u` (Parse
    /// names the type's oid): received as its label's text, in either
    /// format (enum_recv reads text), and read through the labels, as an
    /// enum parameter inferred from its context is (`finish` makes the
    /// parameter's type text once every reference is bound).
    pub(super) fn declared_enum_param(&mut self, i: usize, u: UserType) -> Result<Typed, SqlError> {
        let labels = self.enum_labels(u)?;
        let e = Expr::UserType(Arc::new(TypeOp::Enum(labels, EnumOp::Input)), vec![Expr::Param(i)]);
        Ok(Typed { e, ty: Some(SqlType::Enum(u)) })
    }

    /// An array literal of enum type `u`: its elements read through the
    /// labels.
    pub(super) fn enum_array_literal(&mut self, t: Typed, u: UserType) -> Result<Expr, SqlError> {
        let Expr::Const(Value::Text(s)) = t.e else { unreachable!("a text literal") };
        let labels = self.enum_labels(u)?;
        let items = match Value::parse_in(SqlType::Array(Elem::Text), &s, self.zone)? {
            Value::Array(items) => items,
            _ => unreachable!("an array"),
        };
        let read = items
            .iter()
            .map(|v| match v {
                Value::Text(s) => labels.read(s),
                _ => Ok(Value::Null),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Expr::Const(Value::Array(Arc::new(items.reshaped(read)))))
    }

    /// An array literal of composite type `u`: each element read as a
    /// record of its attributes, the shape kept.
    pub(super) fn composite_array_literal(&mut self, text: &str, u: UserType) -> Result<Expr, SqlError> {
        let array = match Value::parse_in(SqlType::Array(Elem::Text), text, self.zone)? {
            Value::Array(a) => a,
            _ => unreachable!("an array"),
        };
        let mut records = Vec::with_capacity(array.len());
        for v in array.iter() {
            records.push(match v {
                Value::Text(s) => {
                    let lit = Typed { e: Expr::Const(Value::Text(s.clone())), ty: None };
                    match self.coerce_to_composite(lit, u, Coercion::Assignment, "")? {
                        Expr::Const(r) => r,
                        _ => unreachable!("a literal reads as a constant"),
                    }
                }
                _ => Value::Null,
            });
        }
        Ok(Expr::Const(Value::Array(Arc::new(array.reshaped(records)))))
    }

    /// The attributes of composite type `u`: names and types.
    pub(super) fn composite_fields(&mut self, u: UserType) -> Result<Vec<(String, SqlType)>, SqlError> {
        let entry = self.resolver.user_type_by_oid(u.oid())?.ok_or_else(|| {
            SqlError::new(SqlState::UNDEFINED_OBJECT, format!("type with OID {} does not exist", u.oid()))
        })?;
        Ok(entry.columns.iter().map(|c| (c.name.clone(), c.ty)).collect())
    }

    /// `t` as a value of composite type `target`: a quoted literal read as
    /// its attributes (PostgreSQL's record_in), a row constructor's
    /// fields each converted to its attribute's type, the same type as is.
    pub(super) fn coerce_to_composite(
        &mut self,
        t: Typed,
        target: UserType,
        how: Coercion,
        what: &str,
    ) -> Result<Expr, SqlError> {
        let ty = SqlType::Composite(target);
        match (t.ty, t.e) {
            (Some(from), e) if from == ty => Ok(e),
            (None, Expr::Const(Value::Null)) => Ok(Expr::Const(Value::Null)),
            (None, Expr::Const(Value::Text(s))) => {
                let fields = self.composite_fields(target)?;
                let raw = snapscale_values::parse_record(&s, fields.len())?;
                let mut values = Vec::with_capacity(raw.len());
                for ((_, fty), f) in fields.iter().zip(raw) {
                    let lit = Typed { e: Expr::Const(f.map_or(Value::Null, Value::Text)), ty: None };
                    match self.coerce(lit, *fty, Coercion::Assignment, what)? {
                        Expr::Const(v) => values.push(v),
                        _ => {
                            return Err(not_supported(format!("reading an attribute of type {}", fty.name())))
                        }
                    }
                }
                Ok(Expr::Const(Value::Record(values.into())))
            }
            (from, _) => Err(SqlError::new(
                if how == Coercion::Implicit { SqlState::DATATYPE_MISMATCH } else { SqlState::CANNOT_COERCE },
                format!("cannot cast type {} to {}", from.map_or("unknown", SqlType::name), target.name()),
            )),
        }
    }

    /// `ROW(a, b, …)` and `(a, b, …)`: a record of its fields.
    #[inline(never)]
    pub(super) fn row_constructor(
        &mut self,
        items: &[&ast::Expr],
        scope: &Scope<'_>,
    ) -> Result<Typed, SqlError> {
        let mut args = Vec::with_capacity(items.len());
        for i in items {
            args.push(self.expr(i, scope)?.e);
        }
        Ok(Typed {
            e: Expr::Func(Func::MakeRecord, args),
            ty: Some(SqlType::Record(snapscale_values::Rec::Anonymous)),
        })
    }

    /// A row constructor as a value of composite type `target`: each field
    /// converted to its attribute's type, as an assignment converts it.
    #[inline(never)]
    pub(super) fn row_as_composite(
        &mut self,
        items: &[&ast::Expr],
        target: UserType,
        scope: &Scope<'_>,
    ) -> Result<Expr, SqlError> {
        let fields = self.composite_fields(target)?;
        let cannot = |detail: String| {
            SqlError::new(SqlState::CANNOT_COERCE, format!("cannot cast type record to {}", target.name()))
                .with_detail(detail)
        };
        let mut out = Vec::with_capacity(items.len());
        for (n, (i, (_, fty))) in items.iter().zip(&fields).enumerate() {
            let t = self.expr(i, scope)?;
            let from = t.ty;
            out.push(self.coerce(t, *fty, Coercion::Assignment, "").map_err(|e| match (e.code, from) {
                (SqlState::DATATYPE_MISMATCH | SqlState::CANNOT_COERCE, Some(from)) => {
                    cannot(format!("Cannot cast type {} to {} in column {}.", from.name(), fty.name(), n + 1))
                }
                _ => e,
            })?);
        }
        if items.len() != fields.len() {
            let which = if items.len() < fields.len() { "few" } else { "many" };
            return Err(cannot(format!("Input has too {which} columns.")));
        }
        Ok(Expr::Func(Func::MakeRecord, out))
    }

    /// `enum_first`, `enum_last`, `enum_range`: `None` for any other name.
    pub(super) fn enum_function(
        &mut self,
        name: &str,
        args: &mut [Typed],
    ) -> Result<Option<Typed>, SqlError> {
        let op = match (name, args.len()) {
            ("enum_first", 1) => EnumOp::First,
            ("enum_last", 1) => EnumOp::Last,
            ("enum_range", 1 | 2) => EnumOp::Range,
            _ => return Ok(None),
        };
        let Some(ty) = args.iter().find_map(|a| match a.ty {
            Some(SqlType::Enum(u)) => Some(u),
            _ => None,
        }) else {
            return Ok(None);
        };
        let labels = self.enum_labels(ty)?;
        let enum_ty = SqlType::Enum(ty);
        let mut bound = Vec::new();
        if op == EnumOp::Range {
            if args.len() == 1 {
                bound = vec![Expr::Const(Value::Null), Expr::Const(Value::Null)];
            } else {
                for a in args.iter_mut() {
                    let a = std::mem::replace(a, Typed { e: Expr::Const(Value::Null), ty: None });
                    bound.push(self.coerce(a, enum_ty, Coercion::Implicit, "argument")?);
                }
            }
        }
        let ty = if op == EnumOp::Range { SqlType::Array(Elem::Enum(ty)) } else { enum_ty };
        Ok(Some(Typed { e: Expr::UserType(Arc::new(TypeOp::Enum(labels, op)), bound), ty: Some(ty) }))
    }

    /// CREATE TYPE name AS ENUM (…).
    pub(super) fn create_type(
        &mut self,
        name: &ast::ObjectName,
        representation: Option<&ast::UserDefinedTypeRepresentation>,
    ) -> Result<Plan, SqlError> {
        let name = relation_name(name)?;
        let labels = match representation {
            Some(ast::UserDefinedTypeRepresentation::Enum { labels }) => {
                labels.iter().map(|l| l.value.clone()).collect::<Vec<_>>()
            }
            Some(ast::UserDefinedTypeRepresentation::Composite { attributes }) => {
                let mut columns: Vec<snapscale_engine::catalog::ColumnDef> = Vec::new();
                for a in attributes {
                    let cname = ident(&a.name);
                    if columns.iter().any(|c| c.name == cname) {
                        return Err(SqlError::new(
                            SqlState::DUPLICATE_COLUMN,
                            format!("column \"{cname}\" specified more than once"),
                        ));
                    }
                    let (ty, domain) = self.resolve_type_with_domain(&a.data_type)?;
                    columns.push(snapscale_engine::catalog::ColumnDef {
                        name: cname,
                        ty,
                        not_null: false,
                        default: None,
                        domain: domain.map(|d| d.oid),
                        typmod: super::ddl::typmod_of(&a.data_type),
                        generated: None,
                        identity: None,
                        missing: None,
                        storage: None,
                        stats_target: None,
                    });
                }
                return Ok(Plan::Utility(Utility::CreateType { name, spec: TypeSpec::Composite(columns) }));
            }
            _ => return Err(not_supported("this form of CREATE TYPE")),
        };
        for l in &labels {
            check_label(l)?;
        }
        Ok(Plan::Utility(Utility::CreateType { name, spec: TypeSpec::Enum(labels) }))
    }

    /// ALTER TYPE name ADD VALUE / RENAME VALUE / RENAME TO.
    pub(super) fn alter_type(&mut self, a: &ast::AlterType) -> Result<Plan, SqlError> {
        let name = relation_name(&a.name)?;
        let entry = self.existing_type(&name)?;
        let op = match &a.operation {
            ast::AlterTypeOperation::AddValue(v) => {
                check_label(&v.value.value)?;
                AlterTypeOp::AddValue {
                    label: v.value.value.clone(),
                    if_not_exists: v.if_not_exists,
                    neighbour: v.position.as_ref().map(|p| match p {
                        ast::AlterTypeAddValuePosition::Before(n) => (n.value.clone(), true),
                        ast::AlterTypeAddValuePosition::After(n) => (n.value.clone(), false),
                    }),
                }
            }
            ast::AlterTypeOperation::RenameValue(r) => {
                check_label(&r.to.value)?;
                AlterTypeOp::RenameValue { from: r.from.value.clone(), to: r.to.value.clone() }
            }
            ast::AlterTypeOperation::Rename(r) => AlterTypeOp::Rename(ident(&r.new_name)),
        };
        if !matches!(entry.user_type, Some(TypeDef::Enum(_))) && !matches!(op, AlterTypeOp::Rename(_)) {
            return Err(SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("{name} is not an enum")));
        }
        Ok(Plan::Utility(Utility::AlterType { oid: entry.oid, op, domain: false }))
    }

    /// DROP TYPE / DROP DOMAIN [IF EXISTS] name, ….
    pub(super) fn drop_types(
        &mut self,
        names: &[ast::ObjectName],
        if_exists: bool,
        cascade: bool,
        domain: bool,
    ) -> Result<Plan, SqlError> {
        if cascade {
            return Err(not_supported(if domain {
                "DROP DOMAIN … CASCADE"
            } else {
                "DROP TYPE … CASCADE"
            }));
        }
        let mut targets = Vec::new();
        for n in names {
            let name = relation_name(n)?;
            match self.resolver.user_type(&name)? {
                Some(e) if domain && !matches!(e.user_type, Some(TypeDef::Domain(_))) => {
                    return Err(SqlError::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!("\"{name}\" is not a domain"),
                    ))
                }
                Some(e) => targets.push((name, Some(e.oid))),
                None if if_exists => targets.push((name, None)),
                None => return Err(no_type(&name)),
            }
        }
        Ok(Plan::Utility(Utility::DropType { targets, domain }))
    }

    /// ALTER DOMAIN name …: the constraint and default expressions bound
    /// now (an error in one is the statement's), the stored values
    /// checked when the statement runs.
    pub(super) fn alter_domain(&mut self, a: &AlterDomain) -> Result<Plan, SqlError> {
        let name = relation_name(&a.name)?;
        let entry = self.existing_type(&name)?;
        let Some(TypeDef::Domain(def)) = &entry.user_type else {
            return Err(SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("{name} is not a domain")));
        };
        let op = match &a.action {
            DomainAction::Default(Some(text)) => {
                let e = crate::parse::parse_expr(text, self.stack.limit())?;
                let t = self.expr(&e, &Scope::empty())?;
                self.coerce(t, def.base, Coercion::Assignment, "DEFAULT")?;
                AlterTypeOp::SetDefault(Some(text.clone()))
            }
            DomainAction::Default(None) => AlterTypeOp::SetDefault(None),
            DomainAction::NotNull(on) => AlterTypeOp::SetNotNull(*on),
            DomainAction::AddNotNull => AlterTypeOp::SetNotNull(true),
            DomainAction::AddCheck { name: cname, expr, not_valid } => {
                let check = self.domain_check_expr(expr, def.base)?;
                let cname = match cname {
                    Some(n) => n.clone(),
                    None => {
                        let stem = format!("{}_check", snapscale_engine::names::bare(&name));
                        let taken = |n: &str| def.checks.iter().any(|c| c.name == n);
                        let mut n = stem.clone();
                        let mut k = 1;
                        while taken(&n) {
                            n = format!("{stem}{k}");
                            k += 1;
                        }
                        n
                    }
                };
                AlterTypeOp::AddCheck { name: cname, expr: expr.clone(), check, not_valid: *not_valid }
            }
            DomainAction::DropConstraint { name: cname, if_exists, .. } => {
                AlterTypeOp::DropConstraint { name: cname.clone(), if_exists: *if_exists }
            }
            DomainAction::Validate(cname) => {
                let Some(c) = def.checks.iter().find(|c| &c.name == cname) else {
                    return Err(crate::plan::no_domain_constraint(cname, &name));
                };
                let check = self.domain_check_expr(&c.expr, def.base)?;
                AlterTypeOp::ValidateConstraint { name: cname.clone(), check }
            }
            DomainAction::Rename(to) => AlterTypeOp::Rename(to.clone()),
            DomainAction::RenameConstraint { from, to } => {
                AlterTypeOp::RenameConstraint { from: from.clone(), to: to.clone() }
            }
            DomainAction::Unsupported(what) => return Err(not_supported(*what)),
        };
        Ok(Plan::Utility(Utility::AlterType { oid: entry.oid, op, domain: true }))
    }

    fn existing_type(&mut self, name: &str) -> Result<Arc<RelEntry>, SqlError> {
        self.resolver.user_type(name)?.ok_or_else(|| no_type(name))
    }
}

fn no_type(name: &str) -> SqlError {
    SqlError::new(SqlState::UNDEFINED_OBJECT, format!("type \"{name}\" does not exist"))
}

/// A label fits in a name (NAMEDATALEN - 1 bytes), as PostgreSQL requires.
fn check_label(label: &str) -> Result<(), SqlError> {
    if label.len() > 63 {
        return Err(SqlError::new(SqlState::INVALID_NAME, format!("invalid enum label \"{label}\""))
            .with_detail("Labels must be 63 bytes or less."));
    }
    Ok(())
}

/// The fields of a row constructor, `ROW(a, b)` or `(a, b)`.
pub(super) fn row_items(e: &ast::Expr) -> Option<Vec<&ast::Expr>> {
    match e {
        ast::Expr::Tuple(items) => Some(items.iter().collect()),
        ast::Expr::Function(f) if f.name.to_string().eq_ignore_ascii_case("row") => match &f.args {
            ast::FunctionArguments::List(l) if l.clauses.is_empty() => l
                .args
                .iter()
                .map(|a| match a {
                    ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e),
                    _ => None,
                })
                .collect(),
            ast::FunctionArguments::None | ast::FunctionArguments::List(_) => Some(Vec::new()),
            _ => None,
        },
        _ => None,
    }
}
