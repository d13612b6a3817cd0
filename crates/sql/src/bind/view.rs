//! Views: CREATE [OR REPLACE] [TEMP] VIEW, and a view read in FROM.
//!
//! A view is kept as its query's text (`ViewDef::query`) and bound again
//! by every statement that reads it, as a subquery in FROM that sees
//! nothing of the statement around it (no outer columns, no WITH items).
//! Binding it afresh means a view sees its relations' definitions as they
//! are now; what PostgreSQL fixes when the view is made is fixed here by
//! rewriting the text before it is kept:
//!
//! * `*` and `t.*` are written out as the columns they stood for
//!   (`t.a, t.b`), so a column added to `t` later is not the view's;
//! * the view's own column names are in its catalog row, and a statement
//!   reading it renames the query's outputs to them.
//!
//! The relations the query read are the view's dependencies (dropping one
//! needs CASCADE); a view that reaches itself through others is refused
//! when it is read (42P17), as PostgreSQL refuses a recursive rule.

use std::collections::HashMap;

use snapscale_engine::catalog::{ColumnDef, ViewDef};
use snapscale_engine::LockMode;
use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::ast::{self, Ident};

use super::from::{rename, Item};
use super::scope::{Col, Named, Scope};
use super::{ident, not_supported, relation_name, Binder, Resolver};
use crate::expr::Expr;
use crate::parse::Parsed;
use crate::plan::{CreateTable, From, Plan, Rel, Utility};

/// Where a `*` was written (its token's line and column): the columns it
/// stood for, each with the name of the FROM item it came from (`None`
/// for a column a join's USING merged).
pub(super) type Wildcards = HashMap<(u64, u64), Vec<(Option<String>, String)>>;

impl<R: Resolver> Binder<'_, R> {
    pub(super) fn create_view(&mut self, v: &ast::CreateView) -> Result<Plan, SqlError> {
        if v.materialized {
            return self.create_matview(v);
        }
        if v.if_not_exists {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"NOT\""));
        }
        if v.or_alter || v.secure || v.to.is_some() || v.params.is_some() || !v.cluster_by.is_empty() {
            return Err(not_supported("this form of CREATE VIEW"));
        }
        if !matches!(v.options, ast::CreateTableOptions::None) {
            return Err(not_supported("these CREATE VIEW options"));
        }
        let params = self.statement.pre.storage_params.take().unwrap_or_default();
        let trailing = self.statement.pre.check_option.take();
        let name = relation_name(&v.name)?;
        self.statement.wildcards = Some(Wildcards::new());
        let deps_before = self.statement.deps.len();
        let named_before = self.statement.named_relations.len();
        let select = self.query(&v.query);
        let wildcards = self.statement.wildcards.take().unwrap_or_default();
        let select = select?;
        let untyped = std::mem::take(&mut self.query.untyped);
        if v.columns.len() > select.columns.len() {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "CREATE VIEW specifies more column names than columns",
            ));
        }
        if v.columns.iter().any(|c| c.data_type.is_some() || c.options.is_some()) {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"(\""));
        }
        let names: Vec<String> = v.columns.iter().map(|c| ident(&c.name)).collect();
        let columns = super::create_as::output_columns(&select, &names, &untyped, "a view column")?;
        if columns.len() > crate::limits::MAX_TABLE_COLUMNS {
            return Err(SqlError::new(
                SqlState::TOO_MANY_COLUMNS,
                format!("tables can have at most {} columns", crate::limits::MAX_TABLE_COLUMNS),
            ));
        }
        // What the query read: its dependencies. A view over a temporary
        // relation is temporary itself.
        let reads_temp = self.statement.deps[deps_before..].iter().any(|d| d.rel.entry.temp_owner.is_some());
        let mut depends_on: Vec<u32> = Vec::new();
        for &oid in &self.statement.named_relations[named_before..] {
            if !depends_on.contains(&oid) {
                depends_on.push(oid);
            }
        }
        let mut temp = v.temporary;
        let mut notice = None;
        if reads_temp && !temp {
            notice = Some(format!("view \"{name}\" will be a temporary view"));
            temp = true;
        }
        let mut query = (*v.query).clone();
        expand_wildcards(&mut query, &wildcards);
        self.qualify_relations(&mut query)?;
        let replace = match self.resolver.resolve(&name)? {
            Some(old) if v.or_replace && (old.entry.temp_owner.is_some() || !temp) => {
                if !old.entry.is_view() {
                    return Err(SqlError::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!("\"{name}\" is not a view"),
                    ));
                }
                replaceable(&old.entry.columns, &columns)?;
                // A view that reads its old self reads itself: refused
                // when read, not a dependency.
                depends_on.retain(|&o| o != old.entry.oid);
                self.dep(&name, &old, LockMode::AccessExclusive);
                Some(old)
            }
            _ => None,
        };
        // A check option needs an automatically updatable view (checked
        // before the options' values, as PostgreSQL does).
        let query_text = query.to_string();
        if trailing.is_some() || params.iter().any(|p| p.namespace.is_none() && p.name == "check_option") {
            let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
            self.check_option_allowed(&name, 0, &query_text, &names)?;
        }
        let (options, check_option) = super::reloptions::create_view(&params, trailing)?;
        let view = ViewDef { query: query_text, check_option, depends_on, materialized: None };
        let create = CreateTable { columns, view: Some(view), options, ..CreateTable::named(name, temp) };
        Ok(Plan::Utility(Utility::CreateView { create, replace, notice }))
    }

    /// CREATE MATERIALIZED VIEW [IF NOT EXISTS] name [(columns)] AS query
    /// [WITH [NO] DATA]: CREATE TABLE AS, keeping the query (its `*`
    /// expanded, as a view's) for REFRESH and the relations it reads.
    fn create_matview(&mut self, v: &ast::CreateView) -> Result<Plan, SqlError> {
        if v.or_replace {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"MATERIALIZED\""));
        }
        if v.temporary {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"MATERIALIZED\""));
        }
        if v.or_alter || v.secure || v.to.is_some() || v.params.is_some() || !v.cluster_by.is_empty() {
            return Err(not_supported("this form of CREATE MATERIALIZED VIEW"));
        }
        if !matches!(v.options, ast::CreateTableOptions::None) {
            return Err(not_supported("these CREATE MATERIALIZED VIEW options"));
        }
        let params = self.statement.pre.storage_params.take().unwrap_or_default();
        let options = super::reloptions::create_heap(&params, false)?;
        if v.columns.iter().any(|c| c.data_type.is_some() || c.options.is_some()) {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"(\""));
        }
        let name = relation_name(&v.name)?;
        let data = self.statement.pre.matview_data.take().unwrap_or(true);
        let names: Vec<String> = v.columns.iter().map(|c| ident(&c.name)).collect();
        self.statement.wildcards = Some(Wildcards::new());
        let deps_before = self.statement.deps.len();
        let named_before = self.statement.named_relations.len();
        let create =
            CreateTable { if_not_exists: v.if_not_exists, options, ..CreateTable::named(name, false) };
        let plan = self.table_as(create, &names, &v.query, data, false);
        let wildcards = self.statement.wildcards.take().unwrap_or_default();
        let mut plan = plan?;
        if self.statement.deps[deps_before..].iter().any(|d| d.rel.entry.temp_owner.is_some()) {
            return Err(not_supported("materialized views over temporary tables or views"));
        }
        let mut depends_on: Vec<u32> = Vec::new();
        for &oid in &self.statement.named_relations[named_before..] {
            if !depends_on.contains(&oid) {
                depends_on.push(oid);
            }
        }
        let mut query = (*v.query).clone();
        expand_wildcards(&mut query, &wildcards);
        self.qualify_relations(&mut query)?;
        if let Plan::CreateTableAs(c) = &mut plan {
            c.create.view = Some(ViewDef {
                query: query.to_string(),
                check_option: None,
                depends_on,
                materialized: Some(data),
            });
        }
        Ok(plan)
    }

    /// REFRESH MATERIALIZED VIEW [CONCURRENTLY] name [WITH [NO] DATA]:
    /// the view's query bound again, its rows to replace the view's.
    pub(super) fn refresh_matview(
        &mut self,
        name: &ast::ObjectName,
        concurrently: bool,
        data: bool,
    ) -> Result<Plan, SqlError> {
        if concurrently && !data {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                "CONCURRENTLY and WITH NO DATA options cannot be used together",
            ));
        }
        // CONCURRENTLY lets readers on (PostgreSQL's ExclusiveLock).
        let mode = if concurrently { LockMode::Exclusive } else { LockMode::AccessExclusive };
        let rel = self.any_relation(name, mode)?;
        let n = rel.entry.name.clone();
        let Some(view) = rel.entry.view.clone().filter(|v| v.materialized.is_some()) else {
            // PostgreSQL's SQLSTATE here is 0A000, not 42809.
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("\"{n}\" is not a materialized view"),
            ));
        };
        if concurrently && view.materialized == Some(false) {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "CONCURRENTLY cannot be used when the materialized view is not populated",
            ));
        }
        if concurrently && !rel.entry.indexes.iter().any(|i| i.unique && !i.computed()) {
            return Err(SqlError::new(
                SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("cannot refresh materialized view \"public.{n}\" concurrently"),
            )
            .with_hint(
                "Create a unique index with no WHERE clause on one or more columns of the materialized view.",
            ));
        }
        let ast = stored_query(&view.query, &n, self.stack.limit())?;
        let ast::Statement::Query(query) = &*ast else { unreachable!("stored_query checked") };
        let names: Vec<String> = rel.entry.columns.iter().map(|c| c.name.clone()).collect();
        let plan = self.table_as(CreateTable::named(n.clone(), false), &names, query, data, false)?;
        let Plan::CreateTableAs(mut c) = plan else { unreachable!("table_as makes CREATE TABLE AS") };
        if c.create.columns.len() != rel.entry.columns.len()
            || c.create.columns.iter().zip(&rel.entry.columns).any(|(a, b)| a.ty != b.ty)
        {
            return Err(SqlError::new(
                SqlState::INVALID_OBJECT_DEFINITION,
                format!("the query of materialized view \"{n}\" no longer gives its columns"),
            ));
        }
        c.refresh = Some(rel);
        Ok(Plan::CreateTableAs(c))
    }

    /// A view read in FROM at `offset`: its query, bound again in a scope
    /// of its own, its outputs named as the view's columns.
    pub(super) fn view_item(
        &mut self,
        rel: &Rel,
        alias: Option<&ast::TableAlias>,
        offset: usize,
    ) -> Result<Item, SqlError> {
        let view = rel.entry.view.as_ref().expect("a view");
        if self.statement.expanding.contains(&rel.entry.oid) {
            return Err(SqlError::new(
                SqlState::INVALID_OBJECT_DEFINITION,
                format!("infinite recursion detected in rules for relation \"{}\"", rel.entry.name),
            ));
        }
        let ast = stored_query(&view.query, &rel.entry.name, self.stack.limit())?;
        let ast::Statement::Query(query) = &*ast else { unreachable!("stored_query checked") };
        // The view's query sees nothing of the statement reading it.
        let ctes = std::mem::take(&mut self.ctes);
        let origin = self.origin.take();
        let strengths = self.statement.lock_strengths.take();
        let wildcards = self.statement.wildcards.take();
        let sublinks = std::mem::replace(&mut self.sublink_depth, 0);
        self.statement.expanding.push(rel.entry.oid);
        let bound = self.query(query);
        self.statement.expanding.pop();
        self.ctes = ctes;
        self.origin = origin;
        self.statement.lock_strengths = strengths;
        self.statement.wildcards = wildcards;
        self.sublink_depth = sublinks;
        let mut select = bound?;
        let columns = &rel.entry.columns;
        // `*` was written out when the view was made: the query's columns
        // change only if a relation's column it reads changed type.
        if select.columns.len() != columns.len()
            || select.columns.iter().zip(columns).any(|(c, d)| c.ty != d.ty)
        {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                format!("view \"{}\" no longer matches the relations it reads", rel.entry.name),
            )
            .with_hint("Recreate the view with CREATE OR REPLACE VIEW."));
        }
        select.columns =
            columns.iter().map(|d| crate::plan::Column { name: d.name.clone(), ty: d.ty }).collect();
        let alias_name = alias.map_or_else(|| rel.entry.name.clone(), |a| ident(&a.name));
        let cols = columns
            .iter()
            .enumerate()
            .map(|(i, c)| Col { name: c.name.clone(), expr: Expr::Column(offset + i), ty: c.ty })
            .collect();
        let named = rename(Named { alias: alias_name, columns: cols, table: None, nullable: false }, alias)?;
        Ok(Item { visible: named.columns.clone(), named: vec![named], from: From::Derived(Box::new(select)) })
    }

    /// Records, while a view's query is bound, what the `*` at `token`
    /// stood for (see [`expand_wildcards`]).
    pub(super) fn note_wildcard(
        &mut self,
        token: &ast::helpers::attached_token::AttachedToken,
        scope: &Scope<'_>,
        cols: &[Col],
        qualifier: Option<&str>,
    ) {
        let Some(w) = self.statement.wildcards.as_mut() else { return };
        let at = token.0.span.start;
        let items = cols
            .iter()
            .map(|c| {
                let from = match qualifier {
                    Some(q) => Some(q.to_owned()),
                    None => scope
                        .named
                        .iter()
                        .find(|n| n.columns.iter().any(|nc| nc.expr == c.expr && nc.name == c.name))
                        .map(|n| n.alias.clone()),
                };
                (from, c.name.clone())
            })
            .collect();
        w.insert((at.line, at.column), items);
    }
}

impl<R: Resolver> Binder<'_, R> {
    /// The views that read `rel` and whose query names `column` (any
    /// column of that name: the query is kept as text, so a column of
    /// another relation with the same name counts too); with `None`, every
    /// view that reads `rel`.
    pub(super) fn views_reading(&mut self, rel: &Rel, column: Option<&str>) -> Result<Vec<String>, SqlError> {
        let mut out = Vec::new();
        for v in self.resolver.dependent_views(rel.entry.oid)? {
            let Some(def) = v.entry.view.as_ref() else { continue };
            let names = match column {
                None => true,
                Some(c) => names_word(&def.query, c),
            };
            if names {
                out.push(v.entry.name.clone());
            }
        }
        Ok(out)
    }

    /// RENAME COLUMN of `old` of `rel`: the views that name it follow when
    /// their query is one SELECT, with no WITH or subquery, from relations
    /// of which `rel` alone has a column `old` (so every reference to
    /// `old` is `rel`'s: `rename_column_in`); 0A000 for any other that
    /// names it.
    pub(super) fn views_follow_column_rename(&mut self, rel: &Rel, old: &str) -> Result<(), SqlError> {
        for v in self.resolver.dependent_views(rel.entry.oid)? {
            let Some(def) = v.entry.view.as_ref() else { continue };
            if !names_word(&def.query, old) {
                continue;
            }
            let query = crate::parse::parse_query(&def.query, self.stack.limit()).ok();
            let mut simple = query.as_ref().and_then(|q| plain_select_relations(q));
            if let Some(names) = simple.take() {
                let mut only = true;
                for n in names {
                    match self.resolver.resolve(&n)? {
                        Some(r) if r.entry.oid == rel.entry.oid => {}
                        Some(r) if r.entry.column(old).is_none() => {}
                        _ => only = false,
                    }
                }
                simple = only.then(Vec::new);
            }
            if simple.is_none() {
                return Err(not_supported(format!(
                    "renaming a column that view \"{}\" reads where another relation or a subquery may name it",
                    v.entry.name
                )));
            }
        }
        Ok(())
    }

    /// ALTER TABLE's refusals for a column or table a view reads (the
    /// view's text would no longer mean what it meant).
    pub(super) fn refuse_for_views(
        &mut self,
        rel: &Rel,
        column: Option<&str>,
        action: Altering,
    ) -> Result<(), SqlError> {
        let views = self.views_reading(rel, column)?;
        let Some(first) = views.first() else { return Ok(()) };
        let table = &rel.entry.name;
        let c = column.unwrap_or_default();
        let mut lines: Vec<String> =
            views.iter().map(|v| format!("view {v} depends on column {c} of table {table}")).collect();
        if matches!(action, Altering::Drop) {
            // And the views that read those, as DROP lists them.
            let mut i = 0;
            let mut reached: Vec<String> = views.clone();
            while i < reached.len() {
                if let Some(v) = self.resolver.resolve(&reached[i])? {
                    for w in self.resolver.dependent_views(v.entry.oid)? {
                        lines.push(format!("view {} depends on view {}", w.entry.name, v.entry.name));
                        if !reached.contains(&w.entry.name) {
                            reached.push(w.entry.name.clone());
                        }
                    }
                }
                i += 1;
            }
        }
        Err(match action {
            Altering::Drop => SqlError::new(
                SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                format!("cannot drop column {c} of table {table} because other objects depend on it"),
            )
            .with_detail(lines.join("\n"))
            .with_hint("Use DROP ... CASCADE to drop the dependent objects too."),
            Altering::Type => SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "cannot alter type of a column used by a view or rule",
            )
            .with_detail(format!("rule _RETURN on view {first} depends on column \"{c}\"")),
        })
    }
}

impl<R: Resolver> Binder<'_, R> {
    /// PostgreSQL's refusal (`code`) of an operation on relation `name`
    /// when it is a view: `message` words it from the view's name.
    pub(super) fn refuse_on_view(
        &mut self,
        name: &ast::ObjectName,
        code: SqlState,
        message: impl FnOnce(&str) -> String,
    ) -> Result<(), SqlError> {
        let n = relation_name(name)?;
        match self.resolver.resolve(&n)? {
            Some(rel) if rel.entry.is_view() => {
                Err(SqlError::new(code, message(&n))
                    .with_detail("This operation is not supported for views."))
            }
            _ => Ok(()),
        }
    }
}

/// What ALTER TABLE does to something a view reads.
#[derive(Clone, Copy)]
pub(super) enum Altering {
    Drop,
    Type,
}

impl<R: Resolver> Binder<'_, R> {
    /// Writes the schema into each relation name of a view's query that
    /// the search_path found outside public (REL-KEY), so that the view
    /// reads the same relations whatever the search_path of whoever reads
    /// it later (PostgreSQL keeps their oids). Names of WITH items are not
    /// relations; names in public are left as written, as pg_get_viewdef
    /// prints them.
    fn qualify_relations(&mut self, query: &mut ast::Query) -> Result<(), SqlError> {
        let ctes = cte_names(query);
        let mut names = Vec::new();
        let _ = ast::visit_relations(&*query, |n| {
            if let [part] = n.0.as_slice() {
                if let Some(i) = part.as_ident() {
                    let name = ident(i);
                    if !ctes.contains(&name) && !names.contains(&name) {
                        names.push(name);
                    }
                }
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
        let mut schemas = HashMap::new();
        for name in names {
            let Some(rel) = self.resolver.resolve(&snapscale_engine::names::key(None, &name))? else {
                continue;
            };
            if rel.entry.temp_owner.is_some()
                || rel.entry.namespace == snapscale_engine::catalog::PUBLIC_NAMESPACE
            {
                continue;
            }
            let (schema, _) = snapscale_engine::names::split(&self.resolver.key_of(&rel.entry)?);
            if let Some(schema) = schema {
                schemas.insert(name, schema);
            }
        }
        if schemas.is_empty() {
            return Ok(());
        }
        let _ = ast::visit_relations_mut(query, |n| {
            let found = match n.0.as_slice() {
                [part] => part.as_ident().and_then(|i| schemas.get(&ident(i))),
                _ => None,
            };
            if let Some(schema) = found {
                let quoted = |s: &str| match snapscale_values::quote_ident(s) == s {
                    true => ast::Ident::new(s),
                    false => ast::Ident::with_quote('"', s),
                };
                let table = n.0[0].as_ident().map(|i| quoted(&ident(i))).expect("one identifier");
                *n = ast::ObjectName::from(vec![quoted(schema), table]);
            }
            std::ops::ControlFlow::<()>::Continue(())
        });
        Ok(())
    }
}

/// The names of WITH items anywhere in `query` (they are not relations).
fn cte_names(query: &ast::Query) -> Vec<String> {
    struct Ctes(Vec<String>);
    impl ast::Visitor for Ctes {
        type Break = ();
        fn pre_visit_query(&mut self, q: &ast::Query) -> std::ops::ControlFlow<()> {
            if let Some(with) = &q.with {
                self.0.extend(with.cte_tables.iter().map(|c| ident(&c.alias.name)));
            }
            std::ops::ControlFlow::Continue(())
        }
    }
    let mut ctes = Ctes(Vec::new());
    let _ = ast::Visit::visit(query, &mut ctes);
    ctes.0
}

/// A view's stored query after relation `name` moved from schema `from`
/// to schema `to` (ALTER … SET SCHEMA): each name of it, unqualified if
/// it was in public, qualified with `from` otherwise, is written as
/// `qualify_relations` would write it now (VIEW-TEXT: the view goes on
/// reading what it read).
pub(crate) fn requalify(query: &mut ast::Query, name: &str, from: &str, to: &str) {
    let ctes = cte_names(query);
    let _ = ast::visit_relations_mut(query, |n| {
        let parts: Vec<Option<String>> = n.0.iter().map(|p| p.as_ident().map(ident)).collect();
        let hit = match parts.as_slice() {
            [Some(t)] => from == "public" && t == name && !ctes.contains(t),
            [Some(s), Some(t)] => s == from && t == name,
            _ => false,
        };
        if hit {
            let quoted = |s: &str| match snapscale_values::quote_ident(s) == s {
                true => Ident::new(s),
                false => Ident::with_quote('"', s),
            };
            *n = match to {
                "public" => ast::ObjectName::from(vec![quoted(name)]),
                schema => ast::ObjectName::from(vec![quoted(schema), quoted(name)]),
            };
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
}

/// A view's stored query after relation `old` (in namespace `namespace`)
/// was renamed `new` (ALTER … RENAME TO): each reference to it names
/// `new`, and so do the column references qualified with its old name
/// where it had no alias (PostgreSQL's view follows the relation, and
/// pg_get_viewdef prints the new name in both places).
pub(crate) fn rename_relation_in(query: &mut ast::Query, old: &str, new: &str, namespace: u32) {
    struct Rename<'a> {
        old: &'a str,
        new: &'a str,
        public: bool,
        ctes: Vec<String>,
        /// A reference without an alias was renamed: its qualified
        /// columns follow.
        bare: bool,
    }
    let quoted = |s: &str| match snapscale_values::quote_ident(s) == s {
        true => Ident::new(s),
        false => Ident::with_quote('"', s),
    };
    impl ast::VisitorMut for Rename<'_> {
        type Break = ();
        fn pre_visit_table_factor(&mut self, t: &mut ast::TableFactor) -> std::ops::ControlFlow<()> {
            if let ast::TableFactor::Table { name, alias, .. } = t {
                let parts: Vec<Option<String>> = name.0.iter().map(|p| p.as_ident().map(ident)).collect();
                let hit = match parts.as_slice() {
                    [Some(n)] => self.public && n == self.old && !self.ctes.contains(n),
                    [Some(_), Some(n)] => n == self.old,
                    _ => false,
                };
                if hit {
                    if let Some(last) = name.0.last_mut() {
                        let new = match snapscale_values::quote_ident(self.new) == self.new {
                            true => Ident::new(self.new),
                            false => Ident::with_quote('"', self.new),
                        };
                        *last = ast::ObjectNamePart::Identifier(new);
                    }
                    self.bare |= alias.is_none();
                }
            }
            std::ops::ControlFlow::Continue(())
        }
    }
    let ctes = cte_names(query);
    let public = namespace == snapscale_engine::catalog::PUBLIC_NAMESPACE;
    let mut rename = Rename { old, new, public, ctes, bare: false };
    let _ = ast::VisitMut::visit(query, &mut rename);
    if !rename.bare {
        return;
    }
    let _ = ast::visit_expressions_mut(query, |e| {
        if let ast::Expr::CompoundIdentifier(parts) = e {
            let n = parts.len();
            if n >= 2 && ident(&parts[n - 2]) == old {
                parts[n - 2] = quoted(new);
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
}

/// The keys of the relations a query reads if it is one SELECT with no
/// WITH and no subquery anywhere, reading tables and views only (`None`
/// otherwise).
fn plain_select_relations(query: &ast::Query) -> Option<Vec<String>> {
    let ast::SetExpr::Select(select) = query.body.as_ref() else { return None };
    if query.with.is_some() {
        return None;
    }
    let mut names = Vec::new();
    for from in &select.from {
        for factor in std::iter::once(&from.relation).chain(from.joins.iter().map(|j| &j.relation)) {
            let ast::TableFactor::Table { name, args: None, .. } = factor else { return None };
            names.push(relation_name(name).ok()?);
        }
    }
    let mut subquery = false;
    let _ = ast::visit_expressions(query, |e| {
        subquery |=
            matches!(e, ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. });
        std::ops::ControlFlow::<()>::Continue(())
    });
    (!subquery).then_some(names)
}

/// A view's stored query (one SELECT in which only the table has a
/// column `old`: `views_follow_column_rename`) after its column `old` was renamed
/// `new`: each reference names `new`, and a select item that was the
/// column itself keeps its output name with `AS old`, as pg_get_viewdef
/// prints PostgreSQL's view.
pub(crate) fn rename_column_in(query: &mut ast::Query, old: &str, new: &str) {
    let quoted = |s: &str| match snapscale_values::quote_ident(s) == s {
        true => Ident::new(s),
        false => Ident::with_quote('"', s),
    };
    if let ast::SetExpr::Select(select) = query.body.as_mut() {
        for item in select.projection.iter_mut() {
            let ast::SelectItem::UnnamedExpr(e) = item else { continue };
            let names_it = match e {
                ast::Expr::Identifier(i) => ident(i) == old,
                ast::Expr::CompoundIdentifier(parts) => parts.last().is_some_and(|i| ident(i) == old),
                _ => false,
            };
            if names_it {
                *item = ast::SelectItem::ExprWithAlias { expr: e.clone(), alias: quoted(old) };
            }
        }
    }
    let _ = ast::visit_expressions_mut(query, |e| {
        match e {
            ast::Expr::Identifier(i) if ident(i) == old => *i = quoted(new),
            ast::Expr::CompoundIdentifier(parts) if parts.last().is_some_and(|i| ident(i) == old) => {
                if let Some(last) = parts.last_mut() {
                    *last = quoted(new);
                }
            }
            _ => {}
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
}

/// Whether `query` has the identifier `name` (folded as the binder folds).
fn names_word(query: &str, name: &str) -> bool {
    let dialect = sqlparser::dialect::PostgreSqlDialect {};
    let Ok(tokens) = sqlparser::tokenizer::Tokenizer::new(&dialect, query).tokenize() else { return true };
    tokens.iter().any(|t| match t {
        sqlparser::tokenizer::Token::Word(w) => match w.quote_style {
            Some(_) => w.value == name,
            None => w.value.to_lowercase() == name,
        },
        _ => false,
    })
}

/// CREATE OR REPLACE VIEW keeps the old view's columns, in order, with
/// their names and types; it may add columns after them.
fn replaceable(old: &[ColumnDef], new: &[ColumnDef]) -> Result<(), SqlError> {
    if new.len() < old.len() {
        return Err(SqlError::new(SqlState::INVALID_TABLE_DEFINITION, "cannot drop columns from view"));
    }
    for (o, n) in old.iter().zip(new) {
        if o.name != n.name {
            return Err(SqlError::new(
                SqlState::INVALID_TABLE_DEFINITION,
                format!("cannot change name of view column \"{}\" to \"{}\"", o.name, n.name),
            )
            .with_hint("Use ALTER VIEW ... RENAME COLUMN ... to change name of view column instead."));
        }
        if o.ty != n.ty {
            return Err(SqlError::new(
                SqlState::INVALID_TABLE_DEFINITION,
                format!(
                    "cannot change data type of view column \"{}\" from {} to {}",
                    o.name,
                    o.ty.name(),
                    n.ty.name()
                ),
            ));
        }
    }
    Ok(())
}

/// Writes each `*` of `q` (and of the queries in its FROM, WITH and set
/// operations) out as the columns `wildcards` says it stood for. A `*` in
/// a subquery of an expression (`EXISTS (SELECT * …)`) is left: what it
/// stands for does not reach the view's columns.
pub(super) fn expand_wildcards(q: &mut ast::Query, wildcards: &Wildcards) {
    if wildcards.is_empty() {
        return;
    }
    if let Some(with) = &mut q.with {
        for cte in &mut with.cte_tables {
            expand_wildcards(&mut cte.query, wildcards);
        }
    }
    expand_set_expr(&mut q.body, wildcards);
}

fn expand_set_expr(body: &mut ast::SetExpr, wildcards: &Wildcards) {
    match body {
        ast::SetExpr::Select(s) => {
            for t in &mut s.from {
                expand_factor(&mut t.relation, wildcards);
                for j in &mut t.joins {
                    expand_factor(&mut j.relation, wildcards);
                }
            }
            let items = std::mem::take(&mut s.projection);
            for item in items {
                let token = match &item {
                    ast::SelectItem::Wildcard(o) | ast::SelectItem::QualifiedWildcard(_, o) => {
                        Some(o.wildcard_token.0.span.start)
                    }
                    _ => None,
                };
                match token.and_then(|at| wildcards.get(&(at.line, at.column))) {
                    Some(cols) => s.projection.extend(cols.iter().map(|(from, name)| {
                        let column = quoted(name);
                        ast::SelectItem::UnnamedExpr(match from {
                            Some(f) => ast::Expr::CompoundIdentifier(vec![quoted(f), column]),
                            None => ast::Expr::Identifier(column),
                        })
                    })),
                    None => s.projection.push(item),
                }
            }
        }
        ast::SetExpr::Query(q) => expand_wildcards(q, wildcards),
        ast::SetExpr::SetOperation { left, right, .. } => {
            expand_set_expr(left, wildcards);
            expand_set_expr(right, wildcards);
        }
        _ => {}
    }
}

fn expand_factor(t: &mut ast::TableFactor, wildcards: &Wildcards) {
    match t {
        ast::TableFactor::Derived { subquery, .. } => expand_wildcards(subquery, wildcards),
        ast::TableFactor::NestedJoin { table_with_joins, .. } => {
            expand_factor(&mut table_with_joins.relation, wildcards);
            for j in &mut table_with_joins.joins {
                expand_factor(&mut j.relation, wildcards);
            }
        }
        _ => {}
    }
}

/// `name` as an identifier that reads back as itself: quoted unless it is
/// lower case, plain and not a keyword.
pub(super) fn quoted(name: &str) -> Ident {
    let plain = name.chars().next().is_some_and(|c| c.is_ascii_lowercase() || c == '_')
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '$');
    let keyword =
        sqlparser::keywords::ALL_KEYWORDS.binary_search(&name.to_ascii_uppercase().as_str()).is_ok();
    if plain && !keyword {
        Ident::new(name)
    } else {
        Ident::with_quote('"', name)
    }
}

/// The stored query of (materialized) view `name`, parsed: one query.
fn stored_query(text: &str, name: &str, limit: usize) -> Result<crate::statement::Ast, SqlError> {
    let mut parsed = crate::parse::parse(text, limit)?;
    match (parsed.pop(), parsed.is_empty()) {
        (Some(Parsed::Sql(ast)), true) if matches!(&*ast, ast::Statement::Query(_)) => Ok(ast),
        _ => Err(SqlError::new(
            SqlState::INTERNAL_ERROR,
            format!("the query of view \"{name}\" does not parse as a query"),
        )),
    }
}
