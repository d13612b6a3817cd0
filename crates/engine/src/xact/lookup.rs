//! What a transaction reads of the catalog: the statement snapshot, the
//! catalog rows visible now, invalidations from other sessions (PLAN-FRESH),
//! and a relation by name through the backend's cache.

use std::sync::Arc;

use snapscale_sqlstate::SqlState;
use snapscale_storage::Tid;
use snapscale_txn::Snapshot;
use snapscale_values::SqlError;

use super::Xact;
use crate::catalog::{Rel, RelEntry, BUILTIN_NAMESPACES, PUBLIC_NAMESPACE};
use crate::errors::txn_error;
use crate::names;

impl Xact {
    pub fn statement_snapshot(&mut self) -> Result<Arc<Snapshot>, SqlError> {
        self.session.statement_snapshot().map_err(txn_error)
    }

    /// The end of a statement: the next one sees its changes.
    pub fn end_statement(&mut self) -> Result<(), SqlError> {
        self.session.end_statement().map_err(txn_error)
    }

    /// The statement snapshot held across statements nested in the
    /// running one (a trigger's); give it back to
    /// [`Xact::restore_statement_snapshot`].
    pub fn hold_statement_snapshot(&mut self) -> Result<Option<snapscale_txn::SnapshotId>, SqlError> {
        self.session.hold_statement_snapshot().map_err(txn_error)
    }

    /// The held snapshot is the statement's again.
    pub fn restore_statement_snapshot(
        &mut self,
        held: Option<snapscale_txn::SnapshotId>,
    ) -> Result<(), SqlError> {
        self.session.restore_statement_snapshot(held).map_err(txn_error)
    }

    /// Every catalog row visible now, with its tid.
    pub fn catalog_entries(&mut self) -> Result<Vec<(Tid, Arc<RelEntry>)>, SqlError> {
        let (id, snapshot) = self.session.register_snapshot().map_err(txn_error)?;
        let rows = self.db.catalog.table.scan(&self.session.reader(&snapshot));
        self.session.unregister_snapshot(id).map_err(txn_error)?;
        Ok(rows)
    }

    /// Drops cached entries other sessions invalidated (PostgreSQL's
    /// AcceptInvalidationMessages).
    pub fn accept_invalidations(&mut self) {
        self.cache.accept(&self.db.sinval, self.session.slot());
    }

    /// A relation by key (REL-KEY): the cache, or else the catalog as of a
    /// fresh snapshot. A key without a schema is looked for in this
    /// backend's temporary tables, then in each schema of the session's
    /// search_path in turn; `pg_temp.name` in the temporary tables alone.
    pub fn relation(&mut self, key: &str) -> Result<Option<Rel>, SqlError> {
        self.follow_search_path();
        if let Some(rel) = self.cache.get(key) {
            return Ok(Some(rel.clone()));
        }
        let entries = self.catalog_entries()?;
        let found = self.find(&entries, key, |e, name| e.is_relation() && e.name == name);
        let Some((tid, entry)) = found else { return Ok(None) };
        let rel = self.rel(tid, entry)?;
        self.cache.insert(key.to_owned(), rel.clone());
        Ok(Some(rel))
    }

    /// Caches `rel`, just changed by this transaction, under its
    /// qualified key alone (REL-KEY: what its bare name finds depends on
    /// the search_path, so that is left to the next lookup).
    pub fn remember(&mut self, rel: Rel) -> Result<(), SqlError> {
        self.cache.remove_oid(rel.entry.oid);
        let key = self.qualified_key(&rel.entry)?;
        self.cache.insert(key, rel);
        Ok(())
    }

    /// The storage of catalog row `entry`, as a [`Rel`].
    fn rel(&self, tid: Tid, entry: Arc<RelEntry>) -> Result<Rel, SqlError> {
        let heap = self.db.catalog.storage(entry.storage).ok_or_else(|| {
            SqlError::new(
                SqlState::INTERNAL_ERROR,
                format!("storage of relation \"{}\" is missing", entry.name),
            )
        })?;
        Ok(Rel { entry, heap, catalog_tid: tid })
    }

    /// The cache holds what names resolved to under one search_path: a
    /// new one empties it.
    fn follow_search_path(&mut self) {
        if let Some(path) = &self.path_override {
            self.cache.follow(path);
        } else if let Some(view) = &self.session_view {
            self.cache.follow(&view.search_path);
        }
    }

    /// The session's search_path: the schemas' names, in order (`$user`
    /// replaced by the user's name).
    pub fn search_path(&self) -> Vec<String> {
        if let Some(path) = &self.path_override {
            return path.to_vec();
        }
        match &self.session_view {
            Some(v) => v.search_path.to_vec(),
            None => vec!["public".to_owned()],
        }
    }

    /// The row among `entries` that `key` names, where `matches` says
    /// whether a row holds a name: a key with a schema looks in that schema
    /// only (`pg_temp`: this backend's temporary tables), one without in
    /// the temporary tables and then along the search_path.
    fn find(
        &self,
        entries: &[(Tid, Arc<RelEntry>)],
        key: &str,
        matches: impl Fn(&RelEntry, &str) -> bool,
    ) -> Option<(Tid, Arc<RelEntry>)> {
        let (schema, name) = names::split(key);
        let me = self.backend_id();
        let own_temp = || entries.iter().find(|(_, e)| e.temp_owner == Some(me) && matches(e, &name));
        let in_namespace = |ns: u32| {
            entries.iter().find(|(_, e)| e.temp_owner.is_none() && e.namespace == ns && matches(e, &name))
        };
        let found = match schema.as_deref() {
            Some("pg_temp") => own_temp(),
            Some(s) => namespace_oid(entries, s).and_then(in_namespace),
            None => own_temp().or_else(|| {
                self.search_path().iter().filter_map(|s| namespace_oid(entries, s)).find_map(in_namespace)
            }),
        };
        found.cloned()
    }

    /// The namespace `schema` names, as of a fresh snapshot.
    pub fn namespace(&mut self, schema: &str) -> Result<Option<u32>, SqlError> {
        Ok(namespace_oid(&self.catalog_entries()?, schema))
    }

    /// The name of namespace `oid`, as of a fresh snapshot.
    pub fn namespace_name(&mut self, oid: u32) -> Result<Option<String>, SqlError> {
        Ok(namespace_name(&self.catalog_entries()?, oid))
    }

    /// Where CREATE puts a relation or type that `key` names, and its
    /// name there: the schema the key names, or else the first schema of
    /// the search_path that exists; a temporary table (`temp`, or a key in
    /// `pg_temp`) goes to this backend's temporary schema.
    pub fn creation_namespace(&mut self, key: &str, temp: bool) -> Result<Creation, SqlError> {
        let (schema, name) = names::split(key);
        let entries = self.catalog_entries()?;
        let namespace = match schema.as_deref() {
            Some("pg_temp") => return Ok(Creation { namespace: PUBLIC_NAMESPACE, name, temp: true }),
            Some(s) if namespace_oid(&entries, s).is_none() => return Err(no_schema(s)),
            _ if temp && schema.is_some() => {
                return Err(SqlError::new(
                    SqlState::INVALID_TABLE_DEFINITION,
                    "cannot create temporary relation in non-temporary schema",
                ))
            }
            _ if temp => PUBLIC_NAMESPACE,
            Some("pg_catalog") => {
                return Err(SqlError::new(
                    SqlState::INSUFFICIENT_PRIVILEGE,
                    format!("permission denied to create \"{}\"", names::key(Some("pg_catalog"), &name)),
                )
                .with_detail("System catalog modifications are currently disallowed."))
            }
            Some(s) => namespace_oid(&entries, s).ok_or_else(|| no_schema(s))?,
            None => {
                let path = self.search_path();
                let first =
                    path.iter().filter(|s| *s != "pg_catalog").find_map(|s| namespace_oid(&entries, s));
                first.ok_or_else(|| {
                    SqlError::new(SqlState::INVALID_SCHEMA_NAME, "no schema has been selected to create in")
                })?
            }
        };
        Ok(Creation { namespace, name, temp })
    }

    /// The key that names `entry` wherever the search_path stands: its
    /// schema's name and its own (`pg_temp.name` for a temporary table).
    pub fn qualified_key(&mut self, entry: &RelEntry) -> Result<String, SqlError> {
        if entry.temp_owner.is_some() {
            return Ok(key_among(&[], entry));
        }
        Ok(key_among(&self.catalog_entries()?, entry))
    }

    /// The table with an index that `key` names, as `relation` finds
    /// tables (an index is in its table's schema).
    pub fn index_owner(&mut self, key: &str) -> Result<Option<Rel>, SqlError> {
        self.follow_search_path();
        let entries = self.catalog_entries()?;
        let owner =
            self.find(&entries, key, |e, name| e.is_relation() && e.indexes.iter().any(|i| i.name == name));
        match owner {
            Some((_, e)) => self.relation_by_oid(e.oid),
            None => Ok(None),
        }
    }

    /// The user-defined type `key` names, as of a fresh snapshot (types
    /// are not cached: a statement that names one reads the catalog).
    pub fn user_type(&mut self, key: &str) -> Result<Option<Arc<RelEntry>>, SqlError> {
        let entries = self.catalog_entries()?;
        Ok(self.find(&entries, key, |e, name| e.user_type.is_some() && e.name == name).map(|(_, e)| e))
    }

    /// The routines `key` names, as of a fresh snapshot: with a schema,
    /// those in it; without, those in each schema of the search_path in
    /// turn (a temporary schema's are found only by naming it).
    pub fn routines(&mut self, key: &str) -> Result<Vec<Arc<RelEntry>>, SqlError> {
        if !crate::routines::may_exist() {
            return Ok(Vec::new());
        }
        let entries = self.catalog_entries()?;
        let (schema, name) = names::split(key);
        let me = self.backend_id();
        let of = |e: &RelEntry, ns: Option<u32>, temp: bool| {
            e.routine.is_some()
                && e.name == name
                && if temp {
                    e.temp_owner == Some(me)
                } else {
                    e.temp_owner.is_none() && Some(e.namespace) == ns
                }
        };
        let in_namespace = |ns: Option<u32>, temp: bool| -> Vec<Arc<RelEntry>> {
            entries.iter().filter(|(_, e)| of(e, ns, temp)).map(|(_, e)| Arc::clone(e)).collect()
        };
        Ok(match schema.as_deref() {
            Some("pg_temp") => in_namespace(None, true),
            Some(s) => in_namespace(namespace_oid(&entries, s), false),
            None => self
                .search_path()
                .iter()
                .filter_map(|s| namespace_oid(&entries, s))
                .flat_map(|ns| in_namespace(Some(ns), false))
                .collect(),
        })
    }

    /// The routine with oid `oid`, with its catalog tid.
    pub fn routine_by_oid(&mut self, oid: u32) -> Result<Option<(Tid, Arc<RelEntry>)>, SqlError> {
        Ok(self.catalog_entries()?.into_iter().find(|(_, e)| e.routine.is_some() && e.oid == oid))
    }

    /// The relation with oid `oid` (a table another references by its
    /// oid: a foreign key's), through the cache under its qualified key.
    pub fn relation_by_oid(&mut self, oid: u32) -> Result<Option<Rel>, SqlError> {
        // One read of the catalog finds the row and its schema's name.
        let entries = self.catalog_entries()?;
        let key = entries
            .iter()
            .find(|(_, e)| e.is_relation() && e.oid == oid)
            .map(|(_, e)| key_among(&entries, e));
        match key {
            Some(key) => Ok(self.relation(&key)?.filter(|r| r.entry.oid == oid)),
            None => Ok(None),
        }
    }

    /// The user-defined type with oid `oid`, with its catalog tid.
    pub fn user_type_by_oid(&mut self, oid: u32) -> Result<Option<(Tid, Arc<RelEntry>)>, SqlError> {
        Ok(self.catalog_entries()?.into_iter().find(|(_, e)| e.user_type.is_some() && e.oid == oid))
    }
}

/// [`Xact::qualified_key`] of `entry`, its schema's name found among
/// `entries` (a temporary table's needs none).
fn key_among(entries: &[(Tid, Arc<RelEntry>)], entry: &RelEntry) -> String {
    if entry.temp_owner.is_some() {
        return names::key(Some("pg_temp"), &entry.name);
    }
    let schema = namespace_name(entries, entry.namespace).unwrap_or_else(|| "public".to_owned());
    names::key(Some(&schema), &entry.name)
}

/// Where CREATE puts a new relation or type ([`Xact::creation_namespace`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Creation {
    pub namespace: u32,
    /// Its name, without the schema.
    pub name: String,
    /// A temporary relation (this backend's).
    pub temp: bool,
}

/// 3F000 for a schema that is not there.
pub fn no_schema(schema: &str) -> SqlError {
    SqlError::new(SqlState::INVALID_SCHEMA_NAME, format!("schema \"{schema}\" does not exist"))
}

/// The oid of the namespace called `schema` among `entries` (the built-in
/// ones are always there).
pub fn namespace_oid(entries: &[(Tid, Arc<RelEntry>)], schema: &str) -> Option<u32> {
    if let Some(&(_, oid)) = BUILTIN_NAMESPACES.iter().find(|(n, _)| *n == schema) {
        return (!hidden(entries, oid)).then_some(oid);
    }
    entries.iter().find(|(_, e)| e.is_schema && !e.hides_builtin() && e.name == schema).map(|(_, e)| e.oid)
}

/// Whether built-in namespace `oid` was dropped ([`RelEntry::hides_builtin`]).
fn hidden(entries: &[(Tid, Arc<RelEntry>)], oid: u32) -> bool {
    entries.iter().any(|(_, e)| e.hides_builtin() && e.oid == oid)
}

/// The name of namespace `oid` among `entries`.
pub fn namespace_name(entries: &[(Tid, Arc<RelEntry>)], oid: u32) -> Option<String> {
    if let Some(&(name, _)) = BUILTIN_NAMESPACES.iter().find(|(_, o)| *o == oid) {
        return (!hidden(entries, oid)).then(|| name.to_owned());
    }
    entries.iter().find(|(_, e)| e.is_schema && e.oid == oid).map(|(_, e)| e.name.clone())
}
