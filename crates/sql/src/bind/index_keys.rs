//! Index expressions and predicates: checked when CREATE INDEX binds
//! them, and compiled into the key function the engine's index calls
//! (`KeyCompiler`) wherever it needs a row's key: a write, a build, a
//! vacuum, a standby's replay.
//!
//! The definition keeps SQL text, as a CHECK constraint does; it is
//! compiled once per index build against the table's columns, with no
//! catalog (an index expression reads only its row, through functions
//! whose result their arguments fix). The compiled form is also what
//! the planner matches a query's expressions and WHERE against.

use std::sync::Arc;

use snapscale_engine::catalog::{IndexDef, KeyCompiler, RelEntry, EXPRESSION, ORDER_DESC, ORDER_NULLS_FIRST};
use snapscale_engine::index::KeyFunction;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType};
use sqlparser::ast;

use super::scope::Scope;
use super::{Binder, Coercion, Resolver};
use crate::expr::Expr;
use crate::plan::index_key::CompiledKey;
use crate::plan::Rel;
use crate::stack::DEFAULT_MAX_STACK_DEPTH;

/// Which part of an index an expression is, for PostgreSQL's messages.
#[derive(Clone, Copy)]
pub(super) enum Part {
    Key,
    Predicate,
}

impl Part {
    fn noun(self) -> &'static str {
        match self {
            Part::Key => "index expression",
            Part::Predicate => "index predicate",
        }
    }
}

impl<R: Resolver> Binder<'_, R> {
    /// An index's key expression or predicate over `columns`, with
    /// PostgreSQL's refusals: no subquery, aggregate, window function or
    /// parameter, only immutable functions; a predicate is boolean.
    pub(super) fn index_part(
        &mut self,
        e: &ast::Expr,
        columns: &[snapscale_engine::catalog::ColumnDef],
        part: Part,
    ) -> Result<Expr, SqlError> {
        let noun = part.noun();
        let plural = match part {
            Part::Key => "index expressions",
            Part::Predicate => "index predicates",
        };
        if !super::generated::immutable(e) {
            return Err(SqlError::new(
                SqlState::INVALID_OBJECT_DEFINITION,
                format!("functions in {noun} must be marked IMMUTABLE"),
            ));
        }
        let subqueries = self.statement.subqueries.len();
        let params = self.statement.params.len();
        let scope = Scope::columns(columns);
        let typed = self.expr(e, &scope).map_err(|err| super::generated::not_allowed_in(err, plural))?;
        if self.statement.subqueries.len() != subqueries {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("cannot use subquery in {noun}"),
            ));
        }
        if self.statement.params.len() != params {
            return Err(SqlError::new(
                SqlState::UNDEFINED_PARAMETER,
                format!("there is no parameter ${}", self.statement.params.len()),
            ));
        }
        match part {
            Part::Key => Ok(typed.e),
            Part::Predicate => self
                .coerce(typed, SqlType::Bool, Coercion::Implicit, "argument of WHERE")
                .map_err(|err| super::expr::locate(self.origin.as_deref(), err, e)),
        }
    }

    /// The key parts and predicate of an index of `rel` as CREATE INDEX
    /// writes them: a bare column (in parentheses or not) is that column,
    /// anything else an expression checked by [`Binder::index_part`].
    pub(super) fn index_key(
        &mut self,
        rel: &Rel,
        parts: &[ast::IndexColumn],
        predicate: Option<&ast::Expr>,
    ) -> Result<IndexKey, SqlError> {
        let mut key = IndexKey::default();
        let mut classes = Vec::new();
        for p in parts {
            let mut e = &p.column.expr;
            while let ast::Expr::Nested(inner) = e {
                e = inner;
            }
            let ty = if let ast::Expr::Identifier(i) = e {
                let name = super::ident(i);
                let pos = rel.entry.column(&name).ok_or_else(|| {
                    SqlError::new(SqlState::UNDEFINED_COLUMN, format!("column \"{name}\" does not exist"))
                })?;
                key.columns.push(pos);
                key.names.push(name);
                Some(rel.entry.columns[pos].ty)
            } else {
                self.index_part(e, &rel.entry.columns, Part::Key)?;
                key.columns.push(EXPRESSION);
                key.names.push(crate::parse::column_refs::expression_name(e));
                key.exprs.push(e.to_string());
                let scope = super::scope::Scope::columns(&rel.entry.columns);
                self.expr(e, &scope)?.ty
            };
            classes.push(match &p.operator_class {
                None => String::new(),
                Some(class) => operator_class(class, ty)?,
            });
            // DESC puts NULLs first unless NULLS LAST says otherwise.
            let desc = matches!(p.column.options.sort, Some(ast::OrderBySort::Desc));
            let nulls_first = p.column.options.nulls_first.unwrap_or(desc);
            let order = if desc { ORDER_DESC } else { 0 } | if nulls_first { ORDER_NULLS_FIRST } else { 0 };
            key.orders.push(order);
        }
        if key.orders.iter().all(|&o| o == 0) {
            key.orders.clear();
        }
        if classes.iter().any(|c| !c.is_empty()) {
            key.opclasses = classes;
        }
        if let Some(w) = predicate {
            self.index_part(w, &rel.entry.columns, Part::Predicate)?;
            key.predicate = Some(w.to_string());
        }
        Ok(key)
    }
}

impl<R: Resolver> Binder<'_, R> {
    /// The arbiter indexes of `ON CONFLICT (elements) [WHERE predicate]`
    /// on `rel`, as PostgreSQL infers them: each unique index whose key
    /// parts are exactly the elements (in any order, repeats allowed) and,
    /// if it is partial, whose predicate the WHERE implies.
    pub(super) fn infer_arbiters(
        &mut self,
        rel: &Rel,
        elements: &[String],
        predicate: Option<&str>,
    ) -> Result<Vec<usize>, SqlError> {
        let scope = Scope::columns(&rel.entry.columns);
        let origin = self.origin.take();
        let bound = (|| {
            let mut wanted = Vec::with_capacity(elements.len());
            for text in elements {
                let e = crate::parse::parse_expr(text, self.stack.limit())?;
                let typed = self.expr(&e, &scope)?;
                wanted.push(typed.e);
            }
            let given = match predicate {
                Some(text) => {
                    let e = crate::parse::parse_expr(text, self.stack.limit())?;
                    let typed = self.expr(&e, &scope)?;
                    Some(self.coerce(typed, SqlType::Bool, Coercion::Implicit, "argument of WHERE")?)
                }
                None => None,
            };
            Ok::<_, SqlError>((wanted, given))
        })();
        self.origin = origin;
        let (wanted, given) = bound?;
        let given: &[Expr] = given.as_ref().map_or(&[], crate::plan::implied::conjuncts);
        let mut found = Vec::new();
        for (k, def) in rel.entry.indexes.iter().enumerate() {
            if !def.unique {
                continue;
            }
            let Some((parts, _)) = crate::plan::planner::usable_index(rel, def, given) else { continue };
            // (No elements: a decoration no index has matched nothing.)
            if !wanted.is_empty()
                && parts.iter().all(|p| wanted.contains(p))
                && wanted.iter().all(|w| parts.contains(w))
            {
                found.push(k);
            }
        }
        if found.is_empty() {
            return Err(SqlError::new(
                SqlState::INVALID_COLUMN_REFERENCE,
                "there is no unique or exclusion constraint matching the ON CONFLICT specification",
            ));
        }
        Ok(found)
    }
}

/// An index key as CREATE INDEX gives it.
#[derive(Default)]
pub(super) struct IndexKey {
    /// Column positions, [`EXPRESSION`] for an expression.
    pub columns: Vec<usize>,
    /// Each part's name in the index's default name (`lower`, `expr`).
    pub names: Vec<String>,
    pub exprs: Vec<String>,
    pub predicate: Option<String>,
    /// Each part's operator class, if any part names one.
    pub opclasses: Vec<String>,
    /// Each part's declared order, if any part is not ASC NULLS LAST.
    pub orders: Vec<u8>,
}

/// Binds an index's stored text: no relation, type or function of the
/// catalog is visible (the expression is immutable and reads its row).
struct NoCatalog;

impl Resolver for NoCatalog {
    fn resolve(&mut self, _name: &str) -> Result<Option<Rel>, SqlError> {
        Ok(None)
    }
}

/// Compiles the key parts and predicate of `def`, an index of `entry`.
fn compile_key(entry: &RelEntry, def: &IndexDef) -> Result<(CompiledKey, Vec<SqlType>), SqlError> {
    let mut resolver = NoCatalog;
    let mut b = Binder::new(&mut resolver, DEFAULT_MAX_STACK_DEPTH, Vec::new());
    let mut exprs = def.exprs.iter();
    let mut parts = Vec::with_capacity(def.columns.len());
    let mut types = Vec::with_capacity(def.columns.len());
    for &c in &def.columns {
        if c != EXPRESSION {
            parts.push(Expr::Column(c));
            types.push(entry.columns[c].ty);
            continue;
        }
        let text = exprs.next().ok_or_else(|| corrupt(def))?;
        let parsed = crate::parse::parse_expr(text, DEFAULT_MAX_STACK_DEPTH)?;
        let scope = Scope::columns(&entry.columns);
        let typed = b.expr(&parsed, &scope)?;
        types.push(typed.ty.unwrap_or(SqlType::Text));
        parts.push(typed.e);
    }
    let predicate = match &def.predicate {
        Some(text) => {
            let parsed = crate::parse::parse_expr(text, DEFAULT_MAX_STACK_DEPTH)?;
            Some(b.index_part(&parsed, &entry.columns, Part::Predicate)?)
        }
        None => None,
    };
    Ok((CompiledKey { parts, predicate }, types))
}

fn corrupt(def: &IndexDef) -> SqlError {
    SqlError::new(
        SqlState::INTERNAL_ERROR,
        format!("index \"{}\" names more expressions than it has", def.name),
    )
}

/// The SQL layer's compiler of index expressions.
struct Compiler;

impl KeyCompiler for Compiler {
    fn compile(
        &self,
        entry: &RelEntry,
        def: &IndexDef,
    ) -> Result<(Arc<dyn KeyFunction>, Vec<SqlType>), SqlError> {
        let (key, types) = compile_key(entry, def)?;
        Ok((Arc::new(key), types))
    }
}

/// Makes the engine compute index expressions with this crate (every
/// entry point that opens or serves a database calls it; the first call
/// installs, the rest do nothing).
pub fn install() {
    snapscale_engine::catalog::install_key_compiler(&Compiler);
}

/// A key part's operator class: one of the btree classes PostgreSQL 15
/// has, for the part's type (42704 for another name, 42804 for a class of
/// another type); "" for the type's default class, which pg_get_indexdef
/// leaves out.
fn operator_class(class: &ast::ObjectName, ty: Option<SqlType>) -> Result<String, SqlError> {
    use SqlType as T;
    let name = class.0.last().and_then(|p| p.as_ident()).map(super::ident).unwrap_or_default();
    let text_like = |t: T| matches!(t, T::Text | T::Varchar(_) | T::Name);
    let fits: Option<fn(T) -> bool> = match name.as_str() {
        "int2_ops" => Some(|t| t == T::Int2),
        "int4_ops" => Some(|t| t == T::Int4),
        "int8_ops" => Some(|t| t == T::Int8),
        "float4_ops" => Some(|t| t == T::Float4),
        "float8_ops" => Some(|t| t == T::Float8),
        "numeric_ops" => Some(|t| matches!(t, T::Numeric(_))),
        "text_ops" | "text_pattern_ops" | "varchar_ops" | "varchar_pattern_ops" => {
            Some(|t| matches!(t, T::Text | T::Varchar(_) | T::Name))
        }
        "bpchar_ops" | "bpchar_pattern_ops" => Some(|t| matches!(t, T::Char(_))),
        "name_ops" => Some(|t| t == T::Name),
        "bool_ops" => Some(|t| t == T::Bool),
        "bytea_ops" => Some(|t| t == T::Bytea),
        "date_ops" => Some(|t| t == T::Date),
        "time_ops" => Some(|t| t == T::Time),
        "timetz_ops" => Some(|t| t == T::TimeTz),
        "timestamp_ops" => Some(|t| t == T::Timestamp),
        "timestamptz_ops" => Some(|t| t == T::TimestampTz),
        "interval_ops" => Some(|t| t == T::Interval),
        "uuid_ops" => Some(|t| t == T::Uuid),
        "oid_ops" => Some(|t| t == T::Oid),
        "jsonb_ops" => Some(|t| t == T::Jsonb),
        _ => None,
    };
    let Some(fits) = fits else {
        return Err(SqlError::new(
            SqlState::UNDEFINED_OBJECT,
            format!("operator class \"{name}\" does not exist for access method \"btree\""),
        ));
    };
    let Some(ty) = ty else { return Ok(name) };
    if !fits(ty) {
        return Err(SqlError::new(
            SqlState::DATATYPE_MISMATCH,
            format!("operator class \"{name}\" does not accept data type {}", ty.name()),
        ));
    }
    // The type's default class prints as nothing.
    let default = match name.as_str() {
        "text_ops" => text_like(ty) && ty != T::Name,
        "name_ops" | "bpchar_ops" | "int2_ops" | "int4_ops" | "int8_ops" | "float4_ops" | "float8_ops"
        | "numeric_ops" | "bool_ops" | "bytea_ops" | "date_ops" | "time_ops" | "timetz_ops"
        | "timestamp_ops" | "timestamptz_ops" | "interval_ops" | "uuid_ops" | "oid_ops" | "jsonb_ops" => true,
        _ => false,
    };
    Ok(if default { String::new() } else { name })
}
