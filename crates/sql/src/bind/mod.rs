//! The binder: a parsed statement → a logical [`Plan`]. It resolves
//! relation and column names, infers types (including those of parameters
//! the client left untyped, as pgbench does), and coerces literals and
//! parameters to the type their context needs. How rows are found is the
//! planner's business.
//!
//! `expr` binds expressions, `query` SELECT, `dml` INSERT/UPDATE/DELETE,
//! `ddl` the DDL; this module holds the binder itself and the statements'
//! dispatch.

mod aggregate_call;
mod aggregates;
mod alter_table;
mod array;
mod array_funcs;
mod assign;
mod builtins;
mod builtins_json;
mod builtins_math;
mod builtins_text;
mod checks;
mod clauses;
mod coerce;
mod comment;
mod create_as;
mod ddl;
mod dml;
mod dml_join;
mod expr;
mod foreign_keys;
mod from;
mod function;
mod generated;
mod index_ddl;
pub(crate) mod index_keys;
mod instead_of;
mod merge;
mod outer_agg;
mod polymorphic;
mod populate;
mod query;
pub(crate) mod reloptions;
mod routine_call;
mod routines;
mod row_json;
mod rows_from;
mod schema;
mod scope;
mod sequence;
mod setop;
mod state;
mod string_syntax;
mod subquery;
mod table_like;
pub(crate) mod triggers;
mod user_types;
mod view;
mod view_dml;
mod window;
mod with;

use std::sync::Arc;

use snapscale_engine::LockMode;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType};
use sqlparser::ast::{self, Ident, ObjectName};
use state::{QueryState, StatementState};

use crate::copy::{CopyDirection, CopySource};
use crate::expr::Expr;
use crate::parse::{Ast, Parsed};
use crate::plan::{Dep, Plan, Rel, RelKind, Select, Utility};
use crate::stack::StackDepth;

pub use ddl::data_type;
pub(crate) use routines::routine_kind_changed;
pub(crate) use view::{rename_column_in, rename_relation_in, requalify};

/// Where the binder finds relations.
pub(crate) trait Resolver {
    /// The relation `name` (already normalised), if it exists.
    fn resolve(&mut self, name: &str) -> Result<Option<Rel>, SqlError>;
    /// Setting `name`'s value as SHOW shows it, if the session has one
    /// (plpgsql.extra_warnings, read as a body is compiled).
    fn setting(&self, _name: &str) -> Option<String> {
        None
    }
    /// Sends the client a notice (a compiler's warning).
    fn notice(&mut self, _notice: snapscale_engine::xact::Notice) {}
    /// The session's TimeZone: literals of timestamptz are read in it when
    /// the statement is bound, as PostgreSQL reads them at parse analysis.
    fn zone(&self) -> snapscale_values::Style {
        snapscale_values::Style::default()
    }
    /// The user-defined type `name`, if it exists.
    fn user_type(
        &mut self,
        _name: &str,
    ) -> Result<Option<Arc<snapscale_engine::catalog::RelEntry>>, SqlError> {
        Ok(None)
    }
    /// The routines `name` (already normalised) finds (ROUTINE-ROWS).
    fn routines(&mut self, _name: &str) -> Result<Vec<Arc<snapscale_engine::catalog::RelEntry>>, SqlError> {
        Ok(Vec::new())
    }
    /// The routine with oid `oid`, if it exists (an aggregate's support
    /// function).
    fn routine_by_oid(
        &mut self,
        _oid: u32,
    ) -> Result<Option<Arc<snapscale_engine::catalog::RelEntry>>, SqlError> {
        Ok(None)
    }
    /// A WARNING for the client (CREATE AGGREGATE's unknown attributes).
    fn warning(&mut self, _code: SqlState, _message: String) {}
    /// The columns of the transition table `name` of a trigger firing
    /// now, if there is one (TRIGGER-FIRE).
    fn transition_table(&mut self, _name: &str) -> Option<Vec<(String, SqlType)>> {
        None
    }
    /// The user-defined type with oid `oid`, if it exists.
    fn user_type_by_oid(
        &mut self,
        _oid: u32,
    ) -> Result<Option<Arc<snapscale_engine::catalog::RelEntry>>, SqlError> {
        Ok(None)
    }
    /// The running transaction's top-level xid, if it has one.
    fn top_xid(&self) -> Option<u64> {
        None
    }
    /// The relation with oid `oid`, if it exists.
    fn relation_by_oid(&mut self, _oid: u32) -> Result<Option<Rel>, SqlError> {
        Ok(None)
    }
    /// The namespace called `name`, if there is one.
    fn namespace(&mut self, _name: &str) -> Result<Option<u32>, SqlError> {
        Ok(None)
    }
    /// The relations and types in namespace `oid` (not temporary ones).
    fn namespace_members(
        &mut self,
        _oid: u32,
    ) -> Result<Vec<Arc<snapscale_engine::catalog::RelEntry>>, SqlError> {
        Ok(Vec::new())
    }
    /// The session's user.
    fn session_user(&self) -> String {
        "postgres".into()
    }
    /// The schema CREATE puts a relation named `key` in (`None`: a
    /// temporary one, or no schema can be found; the executor says why).
    fn creation_schema(&mut self, _key: &str, _temp: bool) -> Result<Option<String>, SqlError> {
        Ok(Some("public".into()))
    }
    /// Whether CREATE can put a relation named `key` somewhere (3F000 or
    /// 42P16 as the executor would find it).
    fn check_creation(&mut self, _key: &str, _temp: bool) -> Result<(), SqlError> {
        Ok(())
    }
    /// The key that names `entry` whatever the search_path (REL-KEY).
    fn key_of(&mut self, entry: &snapscale_engine::catalog::RelEntry) -> Result<String, SqlError> {
        Ok(entry.name.clone())
    }
    /// The views whose queries read relation `oid`.
    fn dependent_views(&mut self, _oid: u32) -> Result<Vec<Rel>, SqlError> {
        Ok(Vec::new())
    }
    /// The table that has an index named `name`, if any.
    fn index_owner(&mut self, _name: &str) -> Result<Option<Rel>, SqlError> {
        Ok(None)
    }
    /// The keys of the tables this session may see, with their schemas
    /// (REINDEX SCHEMA).
    fn table_names(&mut self) -> Result<Vec<String>, SqlError> {
        Ok(Vec::new())
    }
    /// The constraints named `name` on any table: each one's oid (a
    /// foreign key's) and whether it is DEFERRABLE (`None`: not a foreign
    /// key, so never).
    fn constraints_named(&mut self, _name: &str) -> Result<Vec<Option<(u32, bool)>>, SqlError> {
        Ok(Vec::new())
    }
    /// The foreign keys referencing table `oid`, with the name of the
    /// table each belongs to.
    fn foreign_keys_referencing(
        &mut self,
        _oid: u32,
    ) -> Result<Vec<(String, snapscale_engine::catalog::ForeignKeyDef)>, SqlError> {
        Ok(Vec::new())
    }
}

/// A session binds against its transaction's catalog cache.
impl Resolver for snapscale_engine::Xact {
    fn resolve(&mut self, name: &str) -> Result<Option<Rel>, SqlError> {
        self.relation(name)
    }

    fn setting(&self, name: &str) -> Option<String> {
        self.session_view.as_ref().and_then(|v| (v.show)(name).ok())
    }

    fn notice(&mut self, notice: snapscale_engine::xact::Notice) {
        self.notice_full(notice);
    }

    fn relation_by_oid(&mut self, oid: u32) -> Result<Option<Rel>, SqlError> {
        snapscale_engine::Xact::relation_by_oid(self, oid)
    }

    fn routines(&mut self, name: &str) -> Result<Vec<Arc<snapscale_engine::catalog::RelEntry>>, SqlError> {
        snapscale_engine::Xact::routines(self, name)
    }

    fn routine_by_oid(
        &mut self,
        oid: u32,
    ) -> Result<Option<Arc<snapscale_engine::catalog::RelEntry>>, SqlError> {
        Ok(snapscale_engine::Xact::routine_by_oid(self, oid)?.map(|(_, e)| e))
    }

    fn warning(&mut self, code: SqlState, message: String) {
        snapscale_engine::Xact::warning(self, code, message);
    }

    fn transition_table(&mut self, name: &str) -> Option<Vec<(String, SqlType)>> {
        self.transition_tables.iter().rev().find(|t| t.name == name).map(|t| t.columns.clone())
    }

    fn key_of(&mut self, entry: &snapscale_engine::catalog::RelEntry) -> Result<String, SqlError> {
        self.qualified_key(entry)
    }

    fn namespace(&mut self, name: &str) -> Result<Option<u32>, SqlError> {
        snapscale_engine::Xact::namespace(self, name)
    }

    fn namespace_members(
        &mut self,
        oid: u32,
    ) -> Result<Vec<Arc<snapscale_engine::catalog::RelEntry>>, SqlError> {
        Ok(self
            .catalog_entries()?
            .into_iter()
            .map(|(_, e)| e)
            .filter(|e| !e.is_schema && e.temp_owner.is_none() && e.namespace == oid)
            .collect())
    }

    fn session_user(&self) -> String {
        self.session_view.as_ref().map_or_else(|| "postgres".to_owned(), |v| v.user.clone())
    }

    fn check_creation(&mut self, key: &str, temp: bool) -> Result<(), SqlError> {
        self.creation_namespace(key, temp).map(|_| ())
    }

    fn creation_schema(&mut self, key: &str, temp: bool) -> Result<Option<String>, SqlError> {
        match self.creation_namespace(key, temp) {
            Ok(c) if !c.temp => self.namespace_name(c.namespace),
            _ => Ok(None),
        }
    }

    fn dependent_views(&mut self, oid: u32) -> Result<Vec<Rel>, SqlError> {
        let views: Vec<u32> = self
            .catalog_entries()?
            .into_iter()
            .filter(|(_, e)| e.view.as_ref().is_some_and(|v| v.depends_on.contains(&oid)))
            .map(|(_, e)| e.oid)
            .collect();
        let mut out = Vec::new();
        for v in views {
            out.extend(snapscale_engine::Xact::relation_by_oid(self, v)?);
        }
        Ok(out)
    }

    fn index_owner(&mut self, name: &str) -> Result<Option<Rel>, SqlError> {
        snapscale_engine::Xact::index_owner(self, name)
    }

    fn table_names(&mut self) -> Result<Vec<String>, SqlError> {
        let tables: Vec<_> = self
            .catalog_entries()?
            .into_iter()
            .filter(|(_, e)| e.is_relation() && e.sequence.is_none() && !e.is_view())
            .map(|(_, e)| e)
            .collect();
        tables.iter().map(|e| self.qualified_key(e)).collect()
    }

    fn constraints_named(&mut self, name: &str) -> Result<Vec<Option<(u32, bool)>>, SqlError> {
        let mut out = Vec::new();
        for (_, e) in self.catalog_entries()? {
            out.extend(e.foreign_keys.iter().filter(|f| f.name == name).map(|f| Some((f.oid, f.deferrable))));
            let others = e.checks.iter().filter(|c| c.name == name).count()
                + e.indexes.iter().filter(|i| i.constraint && i.name == name).count();
            out.extend(std::iter::repeat_n(None, others));
        }
        Ok(out)
    }

    fn foreign_keys_referencing(
        &mut self,
        oid: u32,
    ) -> Result<Vec<(String, snapscale_engine::catalog::ForeignKeyDef)>, SqlError> {
        Ok(self
            .catalog_entries()?
            .into_iter()
            .flat_map(|(_, e)| {
                let fks: Vec<_> = e.foreign_keys.iter().filter(|f| f.parent == oid).cloned().collect();
                fks.into_iter().map(move |f| (e.name.clone(), f))
            })
            .collect())
    }

    fn zone(&self) -> snapscale_values::Style {
        self.session_style()
    }

    fn user_type(
        &mut self,
        name: &str,
    ) -> Result<Option<Arc<snapscale_engine::catalog::RelEntry>>, SqlError> {
        snapscale_engine::Xact::user_type(self, name)
    }

    fn user_type_by_oid(
        &mut self,
        oid: u32,
    ) -> Result<Option<Arc<snapscale_engine::catalog::RelEntry>>, SqlError> {
        Ok(snapscale_engine::Xact::user_type_by_oid(self, oid)?.map(|(_, e)| e))
    }

    fn top_xid(&self) -> Option<u64> {
        snapscale_engine::Xact::top_xid(self)
    }
}

/// A statement bound for execution.
#[derive(Debug)]
pub struct BoundStatement {
    pub plan: Plan,
    pub params: Vec<SqlType>,
    pub deps: Vec<Dep>,
    /// The subqueries its expressions use, by their [`crate::expr::SubLink`]
    /// plan numbers.
    pub subqueries: Vec<Select>,
    /// It calls a function that may wait for a lock inside an expression
    /// (`pg_advisory_lock`): its execution keeps a journal of volatile
    /// calls (EVAL-REPLAY).
    pub waits: bool,
    /// Its PL/pgSQL calls, run before it ([`crate::expr::Expr::Called`]).
    pub pl_calls: Vec<crate::plan::PlCall>,
}

pub(crate) fn not_supported(what: impl std::fmt::Display) -> SqlError {
    SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, format!("{what} is not supported"))
}

/// An identifier as PostgreSQL folds it: unquoted names are lower-cased.
pub fn ident(i: &Ident) -> String {
    if i.quote_style.is_some() {
        i.value.clone()
    } else {
        i.value.to_lowercase()
    }
}

/// A relation's key (REL-KEY in the engine's README): `name`, or
/// `schema.name` (a name with the database's is refused, 0A000).
pub fn relation_name(name: &ObjectName) -> Result<String, SqlError> {
    let parts: Vec<String> = name
        .0
        .iter()
        .map(|p| p.as_ident().map(ident).ok_or_else(|| not_supported(format!("relation name {name}"))))
        .collect::<Result<_, _>>()?;
    match parts.as_slice() {
        [n] => Ok(snapscale_engine::names::key(None, n)),
        [schema, n] => Ok(snapscale_engine::names::key(Some(schema), n)),
        [_, _, _] => Err(SqlError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            format!("cross-database references are not implemented: {}", parts.join(".")),
        )),
        _ => Err(SqlError::new(
            SqlState::SYNTAX_ERROR,
            format!("improper qualified name (too many dotted names): {}", parts.join(".")),
        )),
    }
}

/// The name a key (REL-KEY) stands for, each part quoted as it is.
pub(crate) fn key_object_name(key: &str) -> ObjectName {
    let (schema, name) = snapscale_engine::names::split(key);
    ObjectName::from(schema.into_iter().chain([name]).map(|p| Ident::with_quote('"', p)).collect::<Vec<_>>())
}

/// The name a relation's key gives it as a range-table entry (its alias
/// when it has none): the name without its schema.
pub fn bare_name(name: &ObjectName) -> Result<String, SqlError> {
    relation_name(name).map(|k| snapscale_engine::names::bare(&k))
}

/// A bound expression with its type; `None` is PostgreSQL's "unknown"
/// (a quoted literal, NULL, or an untyped parameter), resolved by context.
#[derive(Clone)]
pub(super) struct Typed {
    e: Expr,
    ty: Option<SqlType>,
}

/// How casts are applied (PostgreSQL's coercion contexts).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Coercion {
    Implicit,
    Assignment,
    Explicit,
}

pub(super) struct Binder<'r, R> {
    resolver: &'r mut R,
    /// The recursion's root (`max_stack_depth`).
    stack: StackDepth,
    /// The session's TimeZone, for literals folded now.
    zone: snapscale_values::Style,
    /// What the whole statement collects (state.rs).
    statement: StatementState,
    /// What the SELECT being bound collects (state.rs).
    query: QueryState,
    /// The WITH items in scope, outermost first (`with.rs`).
    ctes: Vec<with::Cte>,
    /// How many subqueries (SubLinks) deep the binder is: a recursive WITH
    /// item may not be referred to from one inside its recursive term.
    sublink_depth: usize,
    /// Where the statement is in the query string, to give errors their
    /// positions (`None`: unknown).
    origin: Option<std::sync::Arc<crate::statement::Origin>>,
    /// Binding a routine's body: `$n` is its parameter n (routines.rs).
    in_routine: bool,
    /// CREATE FUNCTION checking its body: the function being made, which
    /// the body may call (routines.rs).
    creating: Option<Arc<snapscale_engine::catalog::RelEntry>>,
    /// CREATE FUNCTION … RETURNS table: the row type found (routines.rs).
    row_type: Option<snapscale_engine::routines::RowType>,
}

/// Binds `statement`. `param_types` are the types the client declared
/// (`None` for "infer"); recursion stops at `max_stack_depth` bytes of
/// stack with 54001.
#[cfg(test)]
pub fn bind<R: Resolver>(
    resolver: &mut R,
    statement: &ast::Statement,
    param_types: &[Option<SqlType>],
    max_stack_depth: usize,
) -> Result<BoundStatement, SqlError> {
    finish(Binder::new(resolver, max_stack_depth, param_types.to_vec()), statement)
}

/// Binds a parsed statement, with the locking clauses' strengths the
/// pre-parser read (lock_syntax.rs).
pub fn bind_ast<R: Resolver>(
    resolver: &mut R,
    ast: &Ast,
    param_types: &[Option<SqlType>],
    max_stack_depth: usize,
) -> Result<BoundStatement, SqlError> {
    let mut b = Binder::new(resolver, max_stack_depth, param_types.to_vec());
    b.origin = ast.origin.clone();
    b.statement.lock_strengths = ast.lock_strengths.clone();
    b.statement.pre = (*ast.pre).clone();
    finish(b, ast)
}

fn finish<R: Resolver>(mut b: Binder<'_, R>, statement: &ast::Statement) -> Result<BoundStatement, SqlError> {
    // A WITH with data-modifying items must be the statement's own (a
    // query's, or one before INSERT, UPDATE or DELETE).
    b.statement.top_with = matches!(statement, ast::Statement::Query(_));
    let mut plan = b.statement(statement)?;
    let items = std::mem::take(&mut b.statement.modifying);
    if !items.is_empty() {
        plan = Plan::With(Box::new(crate::plan::WithModifying { items, main: plan }));
    }
    // Parameters nothing constrained are text, as PostgreSQL resolves
    // "unknown"; one declared of an enum type is received as its label's
    // text (`declared_enum_param`).
    let StatementState { params, deps, subqueries, waits, pl_calls, .. } = b.statement;
    let params = params
        .iter()
        .map(|t| match t {
            None | Some(SqlType::Enum(_)) => SqlType::Text,
            Some(t) => *t,
        })
        .collect();
    Ok(BoundStatement { plan, params, deps, subqueries, waits, pl_calls })
}
impl<'r, R: Resolver> Binder<'r, R> {
    fn new(resolver: &'r mut R, max_stack_depth: usize, params: Vec<Option<SqlType>>) -> Self {
        let zone = resolver.zone();
        Binder {
            resolver,
            stack: StackDepth::here(max_stack_depth),
            zone,
            statement: StatementState { params, ..StatementState::default() },
            query: QueryState::default(),
            ctes: Vec::new(),
            sublink_depth: 0,
            origin: None,
            in_routine: false,
            creating: None,
            row_type: None,
        }
    }

    /// The table or sequence `name`, locked in `mode` (a view is refused:
    /// see [`Binder::relation_or_view`]).
    pub(super) fn rel(&mut self, name: &ObjectName, mode: LockMode) -> Result<Rel, SqlError> {
        let rel = self.relation_or_view(name, mode)?;
        if rel.entry.is_view() {
            let n = &rel.entry.name;
            return Err(match mode {
                LockMode::RowExclusive => not_supported(format!("changing the rows of view \"{n}\"")),
                _ => SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("\"{n}\" is not a table")),
            });
        }
        Ok(rel)
    }

    /// The relation `name` (a view too), locked in `mode`.
    pub(super) fn relation_or_view(&mut self, name: &ObjectName, mode: LockMode) -> Result<Rel, SqlError> {
        if mode == LockMode::RowExclusive {
            self.not_transition_table(name)?;
        }
        let rel = self.any_relation(name, mode)?;
        let n = &rel.entry.name;
        if rel.entry.is_matview() && mode == LockMode::RowExclusive {
            return Err(SqlError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("cannot change materialized view \"{n}\""),
            ));
        }
        if rel.entry.sequence.is_some() {
            return Err(match mode {
                LockMode::AccessShare | LockMode::RowShare => {
                    not_supported("reading a sequence as a table (use currval() or nextval())")
                }
                LockMode::RowExclusive => {
                    SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("cannot change sequence \"{n}\""))
                }
                _ => SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("\"{n}\" is not a table")),
            });
        }
        Ok(rel)
    }

    /// 0A000 where `name` is a trigger's transition table (a statement
    /// may read one, never change it).
    pub(super) fn not_transition_table(&mut self, name: &ObjectName) -> Result<(), SqlError> {
        if name.0.len() == 1 {
            let n = relation_name(name)?;
            if self.resolver.transition_table(&n).is_some() {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    format!("relation \"{n}\" cannot be the target of a modifying statement"),
                ));
            }
        }
        Ok(())
    }

    /// The relation `name` of any kind (a sequence too), locked in `mode`.
    pub(super) fn any_relation(&mut self, name: &ObjectName, mode: LockMode) -> Result<Rel, SqlError> {
        let n = relation_name(name)?;
        let Some(rel) = self.resolver.resolve(&n)? else {
            let err = SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{n}\" does not exist"));
            // PostgreSQL places it at the name, where the statement reads
            // a relation (not for DDL naming one).
            let start = sqlparser::ast::Spanned::span(name).start;
            return Err(match self.origin.as_deref().and_then(|o| o.position(start.line, start.column)) {
                Some(p) if mode != LockMode::AccessExclusive => err.at_position(p),
                _ => err,
            });
        };
        self.dep(&n, &rel, mode);
        Ok(rel)
    }

    /// True if the column that owns sequence `rel` (SERIAL, identity) draws
    /// its default from it: then the sequence cannot be dropped alone.
    fn default_depends_on(&mut self, rel: &Rel) -> Result<bool, SqlError> {
        let Some(owner) = rel.entry.sequence.as_ref().and_then(|s| s.owned_by.as_ref()) else {
            return Ok(false);
        };
        let Some(table) = self.resolver.relation_by_oid(owner.table_oid)? else { return Ok(false) };
        let quoted = format!("'{}'", rel.entry.name.replace('\'', "''"));
        Ok(table.entry.oid == owner.table_oid
            && table
                .entry
                .columns
                .iter()
                .any(|c| c.name == owner.column && c.default.as_deref().is_some_and(|d| d.contains(&quoted))))
    }

    /// `err` placed at `name` in the statement, as PostgreSQL places the
    /// errors of a name it resolves.
    pub(super) fn at_name(&self, err: SqlError, name: &ObjectName) -> SqlError {
        let start = sqlparser::ast::Spanned::span(name).start;
        match self.origin.as_deref().and_then(|o| o.position(start.line, start.column)) {
            Some(p) if err.position.is_none() => err.at_position(p),
            _ => err,
        }
    }

    /// The name that finds `entry` whatever the search_path.
    pub(super) fn name_of(
        &mut self,
        entry: &snapscale_engine::catalog::RelEntry,
    ) -> Result<ObjectName, SqlError> {
        Ok(key_object_name(&self.resolver.key_of(entry)?))
    }

    /// A dependency on a relation the statement reaches through another
    /// (a view's reader, a key's parent), named by its qualified key so
    /// that PLAN-FRESH finds it whatever the search_path.
    pub(super) fn dep_reached(&mut self, rel: &Rel, mode: LockMode) -> Result<(), SqlError> {
        let key = self.resolver.key_of(&rel.entry)?;
        self.dep(&key, rel, mode);
        Ok(())
    }

    pub(super) fn dep(&mut self, name: &str, rel: &Rel, mode: LockMode) {
        if self.statement.expanding.is_empty() {
            self.statement.named_relations.push(rel.entry.oid);
        }
        self.statement.deps.push(Dep { name: name.to_owned(), rel: rel.clone(), mode, nowait: false });
    }

    pub(super) fn statement(&mut self, s: &ast::Statement) -> Result<Plan, SqlError> {
        use ast::Statement as S;
        match s {
            S::Query(q) if q.with.is_some() && with::dml_body(q).is_some() => self.dml_with_ctes(q),
            S::AlterIndex { name, operation: ast::AlterIndexOperation::RenameIndex { index_name } } => {
                self.rename_index(name, index_name)
            }
            S::Query(q) => match create_as::select_into(q) {
                Some((into, query)) => self.select_into(into, &query),
                None => Ok(Plan::Select(Box::new(self.query(q)?))),
            },
            S::Insert(i) => self.insert(i),
            S::Update(u) => self.update(u),
            S::Delete(d) => self.delete(d),
            S::Merge(m) => self.merge_into(m),
            S::CreateTable(c) => self.create_table(c),
            S::CreateView(v) => self.create_view(v),
            S::CreateSequence { temporary, if_not_exists, name, data_type, sequence_options, owned_by } => {
                self.create_sequence(
                    *temporary,
                    *if_not_exists,
                    name,
                    data_type.as_ref(),
                    sequence_options,
                    owned_by.as_ref(),
                )
            }
            S::Drop {
                object_type:
                    object_type @ (ast::ObjectType::Table
                    | ast::ObjectType::Sequence
                    | ast::ObjectType::View
                    | ast::ObjectType::MaterializedView),
                if_exists,
                names,
                cascade,
                // The default: nothing depends on a table but its own
                // sequences, which go with it.
                restrict: _,
                purge,
                temporary,
                table,
            } => {
                if *purge {
                    return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"PURGE\""));
                }
                if *temporary {
                    return Err(SqlError::new(
                        SqlState::SYNTAX_ERROR,
                        "syntax error at or near \"TEMPORARY\"",
                    ));
                }
                if table.is_some() {
                    return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"ON\""));
                }
                let kind = match object_type {
                    ast::ObjectType::Sequence => RelKind::Sequence,
                    ast::ObjectType::View => RelKind::View,
                    ast::ObjectType::MaterializedView => RelKind::MatView,
                    _ => RelKind::Table,
                };
                let sequences = kind == RelKind::Sequence;
                let what = kind.word();
                let mut targets = Vec::new();
                for name in names {
                    let n = relation_name(name)?;
                    match self.resolver.resolve(&n)? {
                        Some(rel) if RelKind::of(&rel.entry) != kind => {
                            let is = RelKind::of(&rel.entry);
                            let upper =
                                if is == RelKind::Table { "TABLE" } else { &is.word().to_uppercase() };
                            return Err(SqlError::new(
                                SqlState::WRONG_OBJECT_TYPE,
                                format!("\"{n}\" is not a {what}"),
                            )
                            .with_hint(format!("Use DROP {upper} to remove a {}.", is.word())));
                        }
                        Some(rel) if sequences && self.default_depends_on(&rel)? => {
                            let owner = rel
                                .entry
                                .sequence
                                .as_ref()
                                .and_then(|s| s.owned_by.clone())
                                .expect("checked");
                            let message =
                                format!("cannot drop sequence {n} because other objects depend on it");
                            if *cascade {
                                return Err(not_supported(
                                    "DROP SEQUENCE … CASCADE of a sequence a column owns",
                                ));
                            }
                            return Err(SqlError::new(SqlState::DEPENDENT_OBJECTS_STILL_EXIST, message)
                                .with_detail(format!(
                                    "default value for column {} of table {} depends on sequence {n}",
                                    owner.column, owner.table
                                ))
                                .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
                        }
                        Some(rel) => {
                            self.dep(&n, &rel, LockMode::AccessExclusive);
                            targets.push((n, Some(rel)));
                        }
                        None if *if_exists => targets.push((n, None)),
                        None => {
                            return Err(SqlError::new(
                                SqlState::UNDEFINED_TABLE,
                                format!("{what} \"{n}\" does not exist"),
                            ))
                        }
                    }
                }
                let (detach, cascaded) = self.drop_dependents(&mut targets, *cascade)?;
                Ok(Plan::Utility(Utility::DropTable { targets, kind, detach, cascaded }))
            }
            S::Drop {
                object_type: ast::ObjectType::Index,
                if_exists,
                names,
                cascade,
                purge: false,
                temporary: false,
                table: None,
                ..
            } => {
                let concurrently = self.statement.pre.concurrently;
                self.drop_index(names, *if_exists, *cascade, concurrently)
            }
            S::Drop { object_type: ast::ObjectType::Type, if_exists, names, cascade, .. } => {
                // DROP DOMAIN with several names, as the pre-parser wrote it.
                let marker = crate::parse::domain_syntax::DROP_DOMAIN;
                match names.split_first() {
                    Some((first, rest)) if relation_name(first).is_ok_and(|n| n == marker) => {
                        self.drop_types(rest, *if_exists, *cascade, true)
                    }
                    _ => self.drop_types(names, *if_exists, *cascade, false),
                }
            }
            S::CreateDomain(cd) => self.create_domain(cd),
            S::CreateFunction(c) => self.create_function(c),
            S::DropTrigger(d) => self.drop_trigger(d),
            S::AlterFunction(a) => self.alter_function(a),
            S::DropFunction(d) => {
                let word = routines::Word::of(self.statement.pre.routine_word);
                let cascade = d.drop_behavior == Some(ast::DropBehavior::Cascade);
                self.drop_function(&d.func_desc, d.if_exists, word, cascade)
            }
            S::DropProcedure { if_exists, proc_desc, drop_behavior } => {
                let cascade = *drop_behavior == Some(ast::DropBehavior::Cascade);
                self.drop_function(proc_desc, *if_exists, routines::Word::Procedure, cascade)
            }
            S::Call(f) => self.call_procedure(f),
            S::DropDomain(d) => self.drop_types(
                std::slice::from_ref(&d.name),
                d.if_exists,
                matches!(d.drop_behavior, Some(ast::DropBehavior::Cascade)),
                true,
            ),
            S::Drop { object_type: ast::ObjectType::Schema, if_exists, names, cascade, .. } => {
                self.drop_schema(names, *if_exists, *cascade)
            }
            S::Drop { object_type, .. } => Err(not_supported(format!("DROP {object_type}"))),
            S::CreateSchema {
                schema_name,
                if_not_exists,
                or_replace: false,
                with: None,
                options: None,
                default_collate_spec: None,
                clone: None,
            } => self.create_schema(schema_name, *if_not_exists),
            S::AlterSchema(a) => self.alter_schema(a),
            S::CreateType { name, representation } => self.create_type(name, representation.as_ref()),
            S::AlterType(a) => self.alter_type(a),
            S::AlterTable(a) => self.alter_table(a),
            S::CreateIndex(c) => self.create_index(c),
            S::Truncate(t) => {
                clauses::truncate(t)?;
                let mut rels: Vec<Rel> = t
                    .table_names
                    .iter()
                    .map(|t| self.rel(&t.name, LockMode::AccessExclusive))
                    .collect::<Result<_, _>>()?;
                self.truncate_referencing(&mut rels, t.cascade == Some(ast::CascadeOption::Cascade))?;
                let cascaded = std::mem::take(&mut self.statement.truncate_cascades);
                Ok(Plan::Utility(Utility::Truncate(rels, cascaded)))
            }
            S::Lock(l) => {
                use ast::LockTableMode as M;
                let mode = match l.lock_mode.as_ref().unwrap_or(&M::AccessExclusive) {
                    M::AccessShare => LockMode::AccessShare,
                    M::RowShare => LockMode::RowShare,
                    M::RowExclusive => LockMode::RowExclusive,
                    M::ShareUpdateExclusive => LockMode::ShareUpdateExclusive,
                    M::Share => LockMode::Share,
                    M::ShareRowExclusive => LockMode::ShareRowExclusive,
                    M::Exclusive => LockMode::Exclusive,
                    M::AccessExclusive => LockMode::AccessExclusive,
                };
                for target in &l.tables {
                    self.rel(&target.name, mode)?;
                    self.statement.deps.last_mut().expect("just pushed").nowait = l.nowait;
                }
                Ok(Plan::Utility(Utility::LockTable { mode }))
            }
            other => {
                let text = other.to_string();
                let kind: Vec<&str> = text.split_whitespace().take(2).collect();
                Err(not_supported(kind.join(" ").to_uppercase()))
            }
        }
    }
}

impl BoundStatement {
    /// A statement the pre-parser read by hand: no parameters, no lock
    /// waits in its expressions, no PL/pgSQL calls.
    fn of(plan: Plan, deps: Vec<Dep>, subqueries: Vec<Select>) -> BoundStatement {
        BoundStatement { plan, params: Vec::new(), deps, subqueries, waits: false, pl_calls: Vec::new() }
    }
}

/// Binds one parsed statement: sqlparser's statements through [`bind`],
/// and those the pre-parser read by hand (VACUUM, ANALYZE, COPY) here.
pub fn bind_parsed<R: Resolver>(
    resolver: &mut R,
    parsed: &Parsed,
    declared: &[Option<SqlType>],
    max_stack_depth: usize,
) -> Result<BoundStatement, SqlError> {
    let utility = |plan, deps| BoundStatement::of(Plan::Utility(plan), deps, Vec::new());
    let resolve = |resolver: &mut R, name: &str| {
        resolver.resolve(name)?.ok_or_else(|| {
            SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist"))
        })
    };
    match parsed {
        Parsed::Sql(s) => bind_ast(resolver, s, declared, max_stack_depth),
        // EXPLAIN plans the statement it explains (explain/).
        Parsed::Explain(e) => bind_parsed(resolver, &e.statement, declared, max_stack_depth),
        Parsed::Analyze { verbose, targets } => {
            let mut bound = Vec::new();
            let mut deps = Vec::new();
            for (t, columns) in targets {
                let rel = resolve(resolver, t)?;
                let mut picked = Vec::new();
                for c in columns {
                    let Some(i) = rel.entry.column(c) else {
                        return Err(SqlError::new(
                            SqlState::UNDEFINED_COLUMN,
                            format!("column \"{c}\" of relation \"{}\" does not exist", rel.entry.name),
                        ));
                    };
                    picked.push(i);
                }
                deps.push(Dep {
                    name: t.clone(),
                    rel: rel.clone(),
                    mode: LockMode::ShareUpdateExclusive,
                    nowait: false,
                });
                bound.push((rel, picked));
            }
            Ok(utility(Utility::Analyze { targets: bound, verbose: *verbose }, deps))
        }
        Parsed::Checkpoint => Ok(utility(Utility::Checkpoint, Vec::new())),
        Parsed::AlterDomain(a) => {
            let mut b = Binder::new(resolver, max_stack_depth, declared.to_vec());
            let plan = b.alter_domain(a)?;
            let StatementState { deps, .. } = b.statement;
            Ok(BoundStatement::of(plan, deps, Vec::new()))
        }
        Parsed::AlterSequence(a) => {
            let mut b = Binder::new(resolver, max_stack_depth, declared.to_vec());
            let plan = b.alter_sequence(a)?;
            let StatementState { deps, .. } = b.statement;
            Ok(BoundStatement::of(plan, deps, Vec::new()))
        }
        Parsed::CreateTrigger(c) => {
            let mut b = Binder::new(resolver, max_stack_depth, declared.to_vec());
            let plan = b.create_trigger(c)?;
            let StatementState { deps, .. } = b.statement;
            Ok(BoundStatement::of(plan, deps, Vec::new()))
        }
        Parsed::CreateAggregate(c) => {
            let mut b = Binder::new(resolver, max_stack_depth, declared.to_vec());
            let plan = b.create_aggregate(c)?;
            let StatementState { deps, .. } = b.statement;
            Ok(BoundStatement::of(plan, deps, Vec::new()))
        }
        Parsed::DropAggregate(d) => {
            let mut b = Binder::new(resolver, max_stack_depth, declared.to_vec());
            let plan = b.drop_aggregate(d)?;
            let StatementState { deps, .. } = b.statement;
            Ok(BoundStatement::of(plan, deps, Vec::new()))
        }
        Parsed::CommentAggregate(c) => {
            let mut b = Binder::new(resolver, max_stack_depth, declared.to_vec());
            let plan = b.comment_aggregate(c)?;
            let StatementState { deps, .. } = b.statement;
            Ok(BoundStatement::of(plan, deps, Vec::new()))
        }
        Parsed::AlterAggregate(a) => {
            let mut b = Binder::new(resolver, max_stack_depth, declared.to_vec());
            let plan = b.alter_aggregate(a)?;
            let StatementState { deps, .. } = b.statement;
            Ok(BoundStatement::of(plan, deps, Vec::new()))
        }
        Parsed::RenameTrigger(r) => {
            let mut b = Binder::new(resolver, max_stack_depth, declared.to_vec());
            let plan = b.rename_trigger(r)?;
            let StatementState { deps, .. } = b.statement;
            Ok(BoundStatement::of(plan, deps, Vec::new()))
        }
        Parsed::Comment(c) => {
            let mut b = Binder::new(resolver, max_stack_depth, declared.to_vec());
            let plan = b.comment(c)?;
            let StatementState { deps, .. } = b.statement;
            Ok(BoundStatement::of(plan, deps, Vec::new()))
        }
        Parsed::AlterColumnOptions(a) => {
            let mut b = Binder::new(resolver, max_stack_depth, declared.to_vec());
            let plan = b.alter_column_options(a)?;
            let StatementState { deps, .. } = b.statement;
            Ok(BoundStatement::of(plan, deps, Vec::new()))
        }
        Parsed::AlterConstraint(a) => {
            let mut b = Binder::new(resolver, max_stack_depth, declared.to_vec());
            let plan = b.alter_constraint(a)?;
            let StatementState { deps, .. } = b.statement;
            Ok(BoundStatement::of(plan, deps, Vec::new()))
        }
        Parsed::SetSchema(a) => {
            let mut b = Binder::new(resolver, max_stack_depth, declared.to_vec());
            let plan = b.set_schema(a)?;
            let StatementState { deps, .. } = b.statement;
            Ok(BoundStatement::of(plan, deps, Vec::new()))
        }
        Parsed::AlterOptions(a) => {
            let mut b = Binder::new(resolver, max_stack_depth, declared.to_vec());
            let plan = b.alter_options(a)?;
            let StatementState { deps, .. } = b.statement;
            Ok(BoundStatement::of(plan, deps, Vec::new()))
        }
        Parsed::SetConstraints { names, deferred } => {
            let oids = match names {
                None => None,
                Some(names) => {
                    let mut oids = Vec::new();
                    for n in names {
                        let found = resolver.constraints_named(n)?;
                        if found.is_empty() {
                            return Err(SqlError::new(
                                SqlState::UNDEFINED_OBJECT,
                                format!("constraint \"{n}\" does not exist"),
                            ));
                        }
                        for c in found {
                            match c {
                                Some((oid, true)) => oids.push(oid),
                                _ => {
                                    return Err(SqlError::new(
                                        SqlState::WRONG_OBJECT_TYPE,
                                        format!("constraint \"{n}\" is not deferrable"),
                                    ))
                                }
                            }
                        }
                    }
                    Some(oids)
                }
            };
            Ok(utility(Utility::SetConstraints { oids, deferred: *deferred }, Vec::new()))
        }
        Parsed::Reindex { kind, concurrently, name } => {
            let mut b = Binder::new(resolver, max_stack_depth, declared.to_vec());
            let plan = b.reindex(*kind, *concurrently, name.as_ref())?;
            let StatementState { deps, .. } = b.statement;
            Ok(BoundStatement::of(plan, deps, Vec::new()))
        }
        // The session runs these itself (Conn::execute_parsed).
        Parsed::InSchema { .. } | Parsed::Tag(_) => {
            Err(SqlError::new(SqlState::INTERNAL_ERROR, "a part of CREATE SCHEMA bound alone"))
        }
        Parsed::Do { .. } => Err(SqlError::new(SqlState::INTERNAL_ERROR, "DO is the session's to run")),
        // The session runs FETCH over its cursors; a function's SQL has
        // PL/pgSQL's own FETCH.
        Parsed::Fetch(f) => Err(SqlError::new(
            SqlState::FEATURE_NOT_SUPPORTED,
            format!(
                "{} within a function's SQL statement is not supported",
                if f.is_move { "MOVE" } else { "FETCH" }
            ),
        )),
        Parsed::Refresh { name, concurrently, data } => {
            let mut b = Binder::new(resolver, max_stack_depth, declared.to_vec());
            let plan = b.refresh_matview(name, *concurrently, *data)?;
            let StatementState { deps, subqueries, .. } = b.statement;
            Ok(BoundStatement::of(plan, deps, subqueries))
        }
        Parsed::Vacuum { tables, analyze, freeze } => {
            let mut rels = Vec::new();
            let mut deps = Vec::new();
            for t in tables {
                let rel = resolve(resolver, t)?;
                deps.push(Dep {
                    name: t.clone(),
                    rel: rel.clone(),
                    mode: LockMode::ShareUpdateExclusive,
                    nowait: false,
                });
                rels.push(rel);
            }
            Ok(utility(Utility::Vacuum { rels, analyze: *analyze, freeze: *freeze }, deps))
        }
        Parsed::Copy(copy) => {
            let options = copy.options.clone();
            let (table, columns) = match &copy.source {
                CopySource::Table { table, columns } => (table, columns),
                CopySource::Query(ast) => {
                    let bound = bind_ast(resolver, ast, declared, max_stack_depth)?;
                    let Plan::Select(select) = bound.plan else {
                        return Err(not_supported("COPY of a statement other than a query"));
                    };
                    return Ok(BoundStatement { plan: Plan::CopyQuery(select, options), ..bound });
                }
            };
            let rel = resolve(resolver, table)?;
            // A view has no rows of its own to copy, and takes none.
            if rel.entry.is_view() {
                return Err(match copy.direction {
                    CopyDirection::ToStdout => SqlError::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!("cannot copy from view \"{table}\""),
                    )
                    .with_hint("Try the COPY (SELECT ...) TO variant."),
                    CopyDirection::FromStdin => {
                        SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("cannot copy to view \"{table}\""))
                            .with_hint("To enable copying to a view, provide an INSTEAD OF INSERT trigger.")
                    }
                });
            }
            let positions: Vec<usize> = if columns.is_empty() {
                // Generated columns are not copied (they are computed).
                (0..rel.entry.columns.len()).filter(|&i| rel.entry.columns[i].generated.is_none()).collect()
            } else {
                columns
                    .iter()
                    .map(|c| {
                        rel.entry.column(c).ok_or_else(|| {
                            SqlError::new(
                                SqlState::UNDEFINED_COLUMN,
                                format!("column \"{c}\" of relation \"{table}\" does not exist"),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?
            };
            if let Some(&g) = positions.iter().find(|&&p| rel.entry.columns[p].generated.is_some()) {
                return Err(SqlError::new(
                    SqlState::INVALID_COLUMN_REFERENCE,
                    format!("column \"{}\" is a generated column", rel.entry.columns[g].name),
                )
                .with_detail("Generated columns cannot be used in COPY."));
            }
            let (plan, mode) = match copy.direction {
                CopyDirection::FromStdin => {
                    // Columns not copied take their defaults, as in INSERT.
                    let mut b = Binder::new(resolver, max_stack_depth, Vec::new());
                    let defaults = b.defaults(&rel, &positions)?;
                    let mut enums = Vec::with_capacity(positions.len());
                    let mut checks = Vec::new();
                    for &c in &positions {
                        let col = &rel.entry.columns[c];
                        enums.push(match col.ty {
                            SqlType::Enum(u) => Some(b.enum_labels(u)?),
                            _ => None,
                        });
                        if let Some(oid) = col.domain {
                            let d = b.domain_of(oid)?;
                            checks.push(b.domain_checked(Expr::Column(c), &d)?);
                        }
                    }
                    let table_checks = b.table_checks(&rel)?;
                    let foreign_keys = b.foreign_keys_for(&rel, foreign_keys::Writes::Insert)?;
                    let mut deps = b.statement.deps;
                    deps.push(Dep {
                        name: table.clone(),
                        rel: rel.clone(),
                        mode: LockMode::RowExclusive,
                        nowait: false,
                    });
                    let waits = b.statement.waits;
                    let plan = Utility::CopyFrom {
                        rel,
                        columns: positions,
                        defaults,
                        enums,
                        checks,
                        table_checks,
                        foreign_keys,
                        options,
                    };
                    return Ok(BoundStatement { waits, ..utility(plan, deps) });
                }
                CopyDirection::ToStdout => {
                    (Utility::CopyTo { rel: rel.clone(), columns: positions, options }, LockMode::AccessShare)
                }
            };
            Ok(utility(plan, vec![Dep { name: table.clone(), rel, mode, nowait: false }]))
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! Parameter type inference; access paths are tested with the planner.
    use std::sync::Arc;

    use sqlparser::dialect::PostgreSqlDialect;
    use sqlparser::parser::Parser;

    use super::*;
    use snapscale_engine::catalog::{ColumnDef, IndexDef, RelEntry};
    use snapscale_engine::database::{Database, DatabaseConfig};

    /// A resolver that knows one table: t (a int4 PRIMARY KEY, b text).
    pub(crate) struct One(Rel);

    impl Resolver for One {
        fn resolve(&mut self, name: &str) -> Result<Option<Rel>, SqlError> {
            Ok((name == "t").then(|| self.0.clone()))
        }
    }

    pub(crate) fn table() -> One {
        let db = Database::in_memory(DatabaseConfig::default());
        let storage = db.catalog.create_storage();
        let entry = RelEntry {
            oid: 1,
            name: "t".into(),
            temp_owner: None,
            namespace: snapscale_engine::catalog::PUBLIC_NAMESPACE,
            is_schema: false,
            storage,
            columns: vec![
                ColumnDef {
                    name: "a".into(),
                    ty: SqlType::Int4,
                    not_null: true,
                    default: None,
                    domain: None,
                    typmod: None,
                    generated: None,
                    identity: None,
                    missing: None,
                    storage: None,
                    stats_target: None,
                },
                ColumnDef {
                    name: "b".into(),
                    ty: SqlType::Text,
                    not_null: false,
                    default: None,
                    domain: None,
                    typmod: None,
                    generated: None,
                    identity: None,
                    missing: None,
                    storage: None,
                    stats_target: None,
                },
            ],
            indexes: vec![IndexDef {
                oid: 2,
                name: "t_pkey".into(),
                columns: vec![0],
                unique: true,
                primary: true,
                constraint: true,
                include: Vec::new(),
                nulls_not_distinct: false,
                exprs: Vec::new(),
                predicate: None,
                storage: 2,
                options: Vec::new(),
                opclasses: Vec::new(),
                orders: Vec::new(),
            }],
            sequence: None,
            checks: Vec::new(),
            foreign_keys: Vec::new(),
            referenced_by: Vec::new(),
            view: None,
            routine: None,
            triggers: Vec::new(),
            user_type: None,
            options: Vec::new(),
            comments: Vec::new(),
        };
        One(Rel { entry: Arc::new(entry), heap: db.catalog.storage(storage).unwrap(), catalog_tid: 0 })
    }

    pub(crate) fn bound(sql: &str) -> BoundStatement {
        let statement = Parser::parse_sql(&PostgreSqlDialect {}, sql).unwrap().remove(0);
        bind(&mut table(), &statement, &[], crate::stack::DEFAULT_MAX_STACK_DEPTH)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    #[test]
    fn untyped_parameters_take_their_context_type() {
        assert_eq!(bound("UPDATE t SET a = a + $1 WHERE a = $2").params, [SqlType::Int4, SqlType::Int4]);
        assert_eq!(bound("INSERT INTO t (b, a) VALUES ($1, $2)").params, [SqlType::Text, SqlType::Int4]);
        assert_eq!(bound("SELECT $1 FROM t").params, [SqlType::Text]);
        assert_eq!(bound("SELECT b FROM t LIMIT $1").params, [SqlType::Int8]);
    }
}
