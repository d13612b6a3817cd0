//! Indexes: CREATE INDEX, DROP INDEX, and a PRIMARY KEY or UNIQUE
//! constraint as written (`IndexSpec`) until the columns it names are
//! known.
//!
//! Index names share the relations' namespace, as in PostgreSQL: a new
//! index may not take the name of a table, view, sequence or another
//! table's index, and DROP INDEX finds an index by its name alone.

use snapscale_engine::LockMode;
use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::ast::{self, ObjectName};

use super::ddl::{index_columns, index_name, key_positions};
use super::{ident, relation_name, Binder, Resolver};
use crate::plan::{NewIndex, Plan, Rel, RelKind, Utility};

/// A PRIMARY KEY or UNIQUE constraint as written, by column names.
#[derive(Clone, Debug)]
pub(super) struct IndexSpec {
    pub columns: Vec<String>,
    /// INCLUDE (…): stored beside the key, outside its uniqueness.
    pub include: Vec<String>,
    pub primary: bool,
    pub nulls_not_distinct: bool,
    /// CONSTRAINT name, if given.
    pub name: Option<String>,
}

impl IndexSpec {
    /// A table's `PRIMARY KEY (…) [INCLUDE (…)]`, or a column's (`columns`
    /// empty: the caller names the column).
    pub(super) fn primary_key(pk: &ast::PrimaryKeyConstraint) -> Result<IndexSpec, SqlError> {
        super::clauses::primary_key(pk)?;
        Ok(IndexSpec {
            columns: index_columns(&pk.columns)?,
            include: pk.include.iter().map(ident).collect(),
            primary: true,
            nulls_not_distinct: false,
            name: pk.name.as_ref().map(ident),
        })
    }

    /// A table's or a column's `UNIQUE [NULLS [NOT] DISTINCT] (…) [INCLUDE (…)]`.
    pub(super) fn unique(u: &ast::UniqueConstraint) -> Result<IndexSpec, SqlError> {
        super::clauses::unique(u)?;
        Ok(IndexSpec {
            columns: index_columns(&u.columns)?,
            include: u.include.iter().map(ident).collect(),
            primary: false,
            nulls_not_distinct: u.nulls_distinct == ast::NullsDistinctOption::NotDistinct,
            name: u.name.as_ref().map(ident),
        })
    }

    /// The index of table `table`, whose column `n` is at `position(n)`.
    pub(super) fn resolve(
        &self,
        table: &str,
        position: impl Fn(&str) -> Option<usize>,
    ) -> Result<NewIndex, SqlError> {
        let find = |n: &String| {
            position(n).ok_or_else(|| {
                SqlError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{n}\" named in key does not exist"),
                )
            })
        };
        let columns = self.columns.iter().map(find).collect::<Result<Vec<_>, _>>()?;
        let include = self.include.iter().map(find).collect::<Result<Vec<_>, _>>()?;
        // PostgreSQL names a constraint's index after all its columns.
        let named: Vec<String> = self.columns.iter().chain(&self.include).cloned().collect();
        Ok(NewIndex {
            name: self.name.clone().unwrap_or_else(|| index_name(table, &named, self.primary, true)),
            columns,
            include,
            unique: true,
            primary: self.primary,
            nulls_not_distinct: self.nulls_not_distinct,
            constraint: true,
            exprs: Vec::new(),
            predicate: None,
            options: Vec::new(),
            opclasses: Vec::new(),
            orders: Vec::new(),
        })
    }
}

impl<R: Resolver> Binder<'_, R> {
    pub(super) fn create_index(&mut self, c: &ast::CreateIndex) -> Result<Plan, SqlError> {
        super::clauses::create_index(c)?;
        self.refuse_on_view(&c.table_name, SqlState::WRONG_OBJECT_TYPE, |v| {
            format!("cannot create index on relation \"{v}\"")
        })?;
        // CONCURRENTLY builds under Share too: writers wait for the build
        // instead of the build catching up with them (crates/sql/README.md).
        let rel = self.rel(&c.table_name, LockMode::Share)?;
        let params = self.statement.pre.storage_params.take().unwrap_or_default();
        let options = super::reloptions::create_index(&params)?;
        let key = self.index_key(&rel, &c.columns, c.predicate.as_ref())?;
        let names = key.names;
        let columns = key.columns;
        let included: Vec<String> = c.include.iter().map(ident).collect();
        let include = key_positions(&rel, &included)?;
        let name = match &c.name {
            Some(n) => super::bare_name(n)?,
            None => {
                let all: Vec<String> = names.iter().chain(&included).cloned().collect();
                self.free_name(&rel, &index_name(&rel.entry.name, &all, false, false))?
            }
        };
        let index = NewIndex {
            name,
            columns,
            include,
            unique: c.unique,
            primary: false,
            nulls_not_distinct: c.nulls_distinct == Some(false),
            constraint: false,
            exprs: key.exprs,
            predicate: key.predicate,
            options,
            opclasses: key.opclasses,
            orders: key.orders,
        };
        if c.name.is_some() && self.relation_name_taken(&index.name, &rel)? {
            if c.if_not_exists {
                return Ok(Plan::Utility(Utility::Skip {
                    code: SqlState::DUPLICATE_TABLE,
                    notice: format!("relation \"{}\" already exists, skipping", index.name),
                    tag: "CREATE INDEX",
                }));
            }
            return Err(SqlError::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{}\" already exists", index.name),
            ));
        }
        Ok(Plan::Utility(Utility::AddIndex {
            rel,
            index,
            if_not_exists: c.if_not_exists,
            concurrently: c.concurrently,
            tag: "CREATE INDEX",
        }))
    }

    /// `name`, or the first of `name1`, `name2`, … that no relation or
    /// index has (PostgreSQL's choice of a name nobody gave).
    fn free_name(&mut self, rel: &Rel, name: &str) -> Result<String, SqlError> {
        let mut candidate = name.to_owned();
        for n in 1.. {
            let own = rel.entry.indexes.iter().any(|i| i.name == candidate);
            if !own && !self.relation_name_taken(&candidate, rel)? {
                break;
            }
            // PostgreSQL shortens the parts to fit a long name; these fit.
            candidate = format!("{name}{n}");
        }
        Ok(candidate)
    }

    /// Whether `name` names a relation, or an index of a table other than
    /// `table` (the executor checks the table's own indexes).
    /// An index is in its table's schema: the name is looked for there.
    fn relation_name_taken(&mut self, name: &str, table: &Rel) -> Result<bool, SqlError> {
        let (schema, _) = snapscale_engine::names::split(&self.resolver.key_of(&table.entry)?);
        let key = snapscale_engine::names::key(schema.as_deref(), &snapscale_engine::names::bare(name));
        if self.resolver.resolve(&key)?.is_some() {
            return Ok(true);
        }
        Ok(self.resolver.index_owner(&key)?.is_some_and(|rel| rel.entry.oid != table.entry.oid))
    }

    /// DROP INDEX [CONCURRENTLY] [IF EXISTS] name, … [CASCADE | RESTRICT].
    pub(super) fn drop_index(
        &mut self,
        names: &[ObjectName],
        if_exists: bool,
        cascade: bool,
        concurrently: bool,
    ) -> Result<Plan, SqlError> {
        if concurrently && names.len() > 1 {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "DROP INDEX CONCURRENTLY does not support dropping multiple objects",
            ));
        }
        if concurrently && cascade {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "DROP INDEX CONCURRENTLY does not support CASCADE",
            ));
        }
        let mode = if concurrently { LockMode::ShareUpdateExclusive } else { LockMode::AccessExclusive };
        let mut drops: Vec<(Rel, Vec<String>)> = Vec::new();
        let mut notices = Vec::new();
        for name in names {
            let n = relation_name(name)?;
            if let Some(rel) = self.resolver.resolve(&n)? {
                let is = RelKind::of(&rel.entry);
                let upper = if is == RelKind::Table { "TABLE".to_owned() } else { is.word().to_uppercase() };
                return Err(SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("\"{n}\" is not an index"))
                    .with_hint(format!("Use DROP {upper} to remove a {}.", is.word())));
            }
            let Some(owner) = self.resolver.index_owner(&n)? else {
                if if_exists {
                    notices.push(format!("index \"{n}\" does not exist, skipping"));
                    continue;
                }
                return Err(SqlError::new(
                    SqlState::UNDEFINED_OBJECT,
                    format!("index \"{n}\" does not exist"),
                ));
            };
            let n = snapscale_engine::names::bare(&n);
            let table = owner.entry.name.clone();
            let def = owner.entry.indexes.iter().find(|i| i.name == n).expect("found by its name");
            if def.constraint {
                return Err(SqlError::new(
                    SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!("cannot drop index {n} because constraint {n} on table {table} requires it"),
                )
                .with_hint(format!("You can drop constraint {n} on table {table} instead.")));
            }
            self.refuse_if_a_foreign_key_needs(&owner, &n, cascade)?;
            let table = self.name_of(&owner.entry)?;
            let rel = self.rel(&table, mode)?;
            match drops.iter_mut().find(|(r, _)| r.entry.oid == rel.entry.oid) {
                Some((_, names)) => names.push(n),
                None => drops.push((rel, vec![n])),
            }
        }
        Ok(Plan::Utility(Utility::DropIndex { drops, notices, concurrently }))
    }

    /// A foreign key whose referenced columns only this unique index
    /// covers depends on it (PostgreSQL records the index a foreign key
    /// uses): 2BP01, and CASCADE, which would drop the foreign key, is not
    /// supported.
    fn refuse_if_a_foreign_key_needs(
        &mut self,
        owner: &Rel,
        index: &str,
        cascade: bool,
    ) -> Result<(), SqlError> {
        let entry = &owner.entry;
        let def = entry.indexes.iter().find(|i| i.name == index).expect("the owner's index");
        if !def.unique {
            return Ok(());
        }
        let same_set = |a: &[usize], b: &[usize]| {
            let (mut a, mut b) = (a.to_vec(), b.to_vec());
            a.sort_unstable();
            b.sort_unstable();
            a == b
        };
        let covered_elsewhere = |cols: &[usize]| {
            entry.indexes.iter().any(|i| i.name != index && i.unique && same_set(&i.columns, cols))
        };
        let mut dependents = Vec::new();
        for (child_name, fk) in self.resolver.foreign_keys_referencing(entry.oid)? {
            if same_set(&fk.parent_columns, &def.columns) && !covered_elsewhere(&fk.parent_columns) {
                dependents
                    .push(format!("constraint {} on table {child_name} depends on index {index}", fk.name));
            }
        }
        if dependents.is_empty() {
            return Ok(());
        }
        if cascade {
            return Err(super::not_supported("DROP INDEX … CASCADE of an index a foreign key uses"));
        }
        Err(SqlError::new(
            SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
            format!("cannot drop index {index} because other objects depend on it"),
        )
        .with_detail(dependents.join("\n"))
        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."))
    }

    /// ALTER INDEX name RENAME TO new: the index (and the constraint it
    /// backs, which has its name), or, as PostgreSQL allows, a relation of
    /// that name, renamed as ALTER TABLE renames it.
    pub(super) fn rename_index(&mut self, name: &ObjectName, new: &ObjectName) -> Result<Plan, SqlError> {
        let n = relation_name(name)?;
        let new_name = super::bare_name(new)?;
        if self.resolver.resolve(&n)?.is_some() {
            return self.rename_relation(name, new, "ALTER INDEX");
        }
        let Some(owner) = self.resolver.index_owner(&n)? else {
            return Err(SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{n}\" does not exist")));
        };
        let n = snapscale_engine::names::bare(&n);
        let taken = owner.entry.indexes.iter().any(|i| i.name == new_name);
        if taken || self.relation_name_taken(&new_name, &owner)? {
            return Err(SqlError::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{new_name}\" already exists"),
            ));
        }
        let table = self.name_of(&owner.entry)?;
        let rel = self.rel(&table, LockMode::ShareUpdateExclusive)?;
        Ok(Plan::Utility(Utility::RenameIndex { rel, old: n, new: new_name }))
    }

    /// REINDEX: the indexes to rebuild, by table, under Share (writers
    /// wait, readers go on) or, CONCURRENTLY, ShareUpdateExclusive.
    pub(super) fn reindex(
        &mut self,
        kind: crate::parse::ReindexKind,
        concurrently: bool,
        name: Option<&ObjectName>,
    ) -> Result<Plan, SqlError> {
        use crate::parse::ReindexKind as K;
        let mode = if concurrently { LockMode::ShareUpdateExclusive } else { LockMode::Share };
        let mut targets: Vec<(Rel, Vec<String>)> = Vec::new();
        let mut notices = Vec::new();
        match (kind, name) {
            (K::Index, Some(name)) => {
                let n = relation_name(name)?;
                if self.resolver.resolve(&n)?.is_some() {
                    return Err(SqlError::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!("\"{n}\" is not an index"),
                    ));
                }
                let Some(owner) = self.resolver.index_owner(&n)? else {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_TABLE,
                        format!("relation \"{n}\" does not exist"),
                    ));
                };
                let table = self.name_of(&owner.entry)?;
                targets.push((self.rel(&table, mode)?, vec![snapscale_engine::names::bare(&n)]));
            }
            (K::Table, Some(name)) => {
                let rel = self.rel(name, mode)?;
                if rel.entry.indexes.is_empty() {
                    notices.push(match concurrently {
                        true => format!(
                            "table \"{}\" has no indexes that can be reindexed concurrently",
                            rel.entry.name
                        ),
                        false => format!("table \"{}\" has no indexes to reindex", rel.entry.name),
                    });
                }
                let names = rel.entry.indexes.iter().map(|i| i.name.clone()).collect();
                targets.push((rel, names));
            }
            (K::System, _) if concurrently => {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "cannot reindex system catalogs concurrently",
                ))
            }
            // The catalogs here are computed, with no indexes to rebuild.
            (K::System, _) => {}
            (K::Schema, Some(name)) if relation_name(name)? == "pg_catalog" => {
                if concurrently {
                    return Err(SqlError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        "cannot reindex system catalogs concurrently",
                    ));
                }
            }
            (K::Schema | K::Database, name) => {
                let schema = match name {
                    Some(n) if kind == K::Schema => {
                        let n = relation_name(n)?;
                        if self.resolver.namespace(&n)?.is_none() {
                            return Err(snapscale_engine::xact::no_schema(&n));
                        }
                        Some(n)
                    }
                    _ => None,
                };
                for n in self.resolver.table_names()? {
                    if schema
                        .as_ref()
                        .is_some_and(|s| snapscale_engine::names::split(&n).0.as_ref() != Some(s))
                    {
                        continue;
                    }
                    let table = super::key_object_name(&n);
                    let rel = self.rel(&table, mode)?;
                    let names: Vec<String> = rel.entry.indexes.iter().map(|i| i.name.clone()).collect();
                    if !names.is_empty() {
                        targets.push((rel, names));
                    }
                }
            }
            (K::Index | K::Table, None) => {
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at end of input"))
            }
        }
        Ok(Plan::Utility(Utility::Reindex { targets, notices, concurrently }))
    }
}
