//! What a transaction reads of the catalog: the statement snapshot, the
//! catalog rows visible now, invalidations from other sessions (PLAN-FRESH),
//! and a relation by name through the backend's cache.

use std::sync::Arc;

use snapscale_sqlstate::SqlState;
use snapscale_storage::Tid;
use snapscale_txn::Snapshot;
use snapscale_values::SqlError;

use super::Xact;
use crate::catalog::{Rel, RelEntry};
use crate::errors::txn_error;

impl Xact {
    pub fn statement_snapshot(&mut self) -> Result<Arc<Snapshot>, SqlError> {
        self.session.statement_snapshot().map_err(txn_error)
    }

    /// The end of a statement: the next one sees its changes.
    pub fn end_statement(&mut self) -> Result<(), SqlError> {
        self.session.end_statement().map_err(txn_error)
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

    /// A relation by name: the cache, or else the catalog as of a fresh
    /// snapshot. This backend's temporary table hides a permanent one of
    /// the same name (pg_temp is searched first).
    pub fn relation(&mut self, name: &str) -> Result<Option<Rel>, SqlError> {
        if let Some(rel) = self.cache.get(name) {
            return Ok(Some(rel.clone()));
        }
        let me = self.backend_id();
        let mut found = None;
        for (tid, entry) in self.catalog_entries()? {
            if entry.name != name || !entry.is_relation() {
                continue;
            }
            match entry.temp_owner {
                Some(owner) if owner == me => found = Some((tid, entry)),
                Some(_) => {}
                None if found.is_none() => found = Some((tid, entry)),
                None => {}
            }
        }
        let Some((tid, entry)) = found else { return Ok(None) };
        let heap = self.db.catalog.storage(entry.storage).ok_or_else(|| {
            SqlError::new(SqlState::INTERNAL_ERROR, format!("storage of relation \"{name}\" is missing"))
        })?;
        let rel = Rel { entry, heap, catalog_tid: tid };
        self.cache.insert(name.to_owned(), rel.clone());
        Ok(Some(rel))
    }

    /// The table with an index named `name`, as `relation` finds tables:
    /// this backend's temporary tables first.
    pub fn index_owner(&mut self, name: &str) -> Result<Option<Rel>, SqlError> {
        let me = self.backend_id();
        let mut owner: Option<Arc<RelEntry>> = None;
        for (_, entry) in self.catalog_entries()? {
            if !entry.is_relation() || !entry.indexes.iter().any(|i| i.name == name) {
                continue;
            }
            match entry.temp_owner {
                Some(o) if o == me => owner = Some(entry),
                Some(_) => {}
                None if owner.is_none() => owner = Some(entry),
                None => {}
            }
        }
        match owner {
            Some(e) => Ok(self.relation(&e.name)?.filter(|r| r.entry.oid == e.oid)),
            None => Ok(None),
        }
    }

    /// The user-defined type `name` as of a fresh snapshot (types are not
    /// cached: a statement that names one reads the catalog).
    pub fn user_type(&mut self, name: &str) -> Result<Option<Arc<RelEntry>>, SqlError> {
        Ok(self
            .catalog_entries()?
            .into_iter()
            .map(|(_, e)| e)
            .find(|e| e.user_type.is_some() && e.name == name))
    }

    /// The relation with oid `oid` (a table another references by its
    /// oid: a foreign key's), through the cache as `relation` finds it.
    pub fn relation_by_oid(&mut self, oid: u32) -> Result<Option<Rel>, SqlError> {
        let name = self
            .catalog_entries()?
            .into_iter()
            .find(|(_, e)| e.is_relation() && e.oid == oid)
            .map(|(_, e)| e.name.clone());
        match name {
            Some(name) => Ok(self.relation(&name)?.filter(|r| r.entry.oid == oid)),
            None => Ok(None),
        }
    }

    /// The user-defined type with oid `oid`, with its catalog tid.
    pub fn user_type_by_oid(&mut self, oid: u32) -> Result<Option<(Tid, Arc<RelEntry>)>, SqlError> {
        Ok(self.catalog_entries()?.into_iter().find(|(_, e)| e.user_type.is_some() && e.oid == oid))
    }
}
