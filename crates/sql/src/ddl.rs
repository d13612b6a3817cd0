//! DDL: catalog rows changed inside the transaction (see crate::catalog).
//!
//! Each statement holds AccessExclusive (Share for CREATE INDEX) on the
//! relation until commit, so no reader or writer acts on a definition
//! that is being changed; other sessions' caches learn of the change
//! through the invalidation sent at commit.

use std::collections::BTreeMap;
use std::sync::Arc;

use snapscale_lock::LockMode;
use snapscale_sinval::Invalidation;
use snapscale_storage::{Liveness, Outcome};

use crate::catalog::{IndexDef, RelEntry};
use crate::conn::{Conn, Gucs, Output};
use crate::durable::Redo;
use crate::error::SqlError;
use crate::index::Key;
use crate::plan::{CreateTable, NewIndex, Rel};
use crate::sqlstate::SqlState;

impl<G: Gucs> Conn<G> {
    fn level(&mut self) -> &mut crate::conn::Level {
        self.levels.last_mut().expect("DDL runs inside a transaction")
    }

    pub(crate) async fn create_table(&mut self, c: &CreateTable) -> Result<Output, SqlError> {
        let owner = c.temp.then_some(self.id);
        let entry = loop {
            // Is the name taken? Rows of running transactions count
            // (PostgreSQL's unique index on pg_class waits for them).
            let wait = {
                let db = Arc::clone(&self.db);
                let _names = db.names.lock().expect("catalog name lock poisoned");
                let mut wait = None;
                let mut exists = false;
                for (tid, other) in self.db.catalog.all_versions() {
                    if other.name != c.name || other.temp_owner != owner {
                        continue;
                    }
                    match self.db.catalog.liveness(&self.session, tid) {
                        Liveness::Dead => {}
                        Liveness::Live => exists = true,
                        Liveness::Inserting(x) | Liveness::Deleting(x) => wait = Some(x),
                    }
                }
                if exists {
                    drop(_names);
                    if c.if_not_exists {
                        self.notice(
                            SqlState::DUPLICATE_TABLE,
                            format!("relation \"{}\" already exists, skipping", c.name),
                        );
                        return Ok(Output::Command("CREATE TABLE".into()));
                    }
                    return Err(SqlError::new(
                        SqlState::DUPLICATE_TABLE,
                        format!("relation \"{}\" already exists", c.name),
                    ));
                }
                match wait {
                    Some(x) => Err(x),
                    None => {
                        let storage = self.db.create_storage();
                        let oid = self.db.new_oid();
                        let indexes = c
                            .indexes
                            .iter()
                            .map(|i| IndexDef {
                                oid: self.db.new_oid(),
                                name: i.name.clone(),
                                columns: i.columns.clone(),
                                unique: i.unique,
                                primary: i.primary,
                            })
                            .collect();
                        let entry = Arc::new(RelEntry {
                            oid,
                            name: c.name.clone(),
                            temp_owner: owner,
                            storage,
                            columns: c.columns.clone(),
                            indexes,
                        });
                        self.level().created.push(storage);
                        self.prepare_write()?;
                        let tid = self
                            .db
                            .catalog
                            .insert(&mut self.session, Arc::clone(&entry))
                            .map_err(|e| SqlError::new(SqlState::INTERNAL_ERROR, e.to_string()))?;
                        Ok((entry, tid))
                    }
                }
            };
            match wait {
                Ok(done) => break done,
                Err(x) => self.wait_for_xid(x).await?,
            }
        };
        let (entry, tid) = entry;
        self.redo(&entry, Redo::Catalog(Arc::clone(&entry)));
        self.lock_relation(entry.oid, LockMode::AccessExclusive).await?;
        let heap = self.db.storage(entry.storage).expect("created above");
        self.level().invalidations.push(Invalidation::Relation(entry.oid));
        self.cache.insert(c.name.clone(), Rel { entry, heap, catalog_tid: tid });
        Ok(Output::Command("CREATE TABLE".into()))
    }

    pub(crate) async fn drop_tables(
        &mut self,
        targets: &[(String, Option<Rel>)],
    ) -> Result<Output, SqlError> {
        for (name, rel) in targets {
            match rel {
                Some(rel) => self.drop_relation(rel).await?,
                None => self.notice(
                    SqlState::SUCCESSFUL_COMPLETION,
                    format!("table \"{name}\" does not exist, skipping"),
                ),
            }
        }
        Ok(Output::Command("DROP TABLE".into()))
    }

    pub(crate) async fn drop_relation(&mut self, rel: &Rel) -> Result<(), SqlError> {
        self.lock_relation(rel.entry.oid, LockMode::AccessExclusive).await?;
        self.change_catalog(rel, None).await?;
        self.redo(&rel.entry, Redo::Drop(rel.entry.oid));
        self.level().dropped.push(rel.entry.storage);
        self.cache.retain(|_, r| r.entry.oid != rel.entry.oid);
        Ok(())
    }

    /// Replaces (or, with `None`, deletes) a relation's catalog row.
    async fn change_catalog(
        &mut self,
        rel: &Rel,
        new: Option<Arc<RelEntry>>,
    ) -> Result<Option<Rel>, SqlError> {
        self.prepare_write()?;
        loop {
            let outcome = match &new {
                Some(entry) => self.db.catalog.update(&mut self.session, rel.catalog_tid, Arc::clone(entry)),
                None => self.db.catalog.delete(&mut self.session, rel.catalog_tid),
            }
            .map_err(|e| SqlError::new(SqlState::INTERNAL_ERROR, e.to_string()))?;
            match outcome {
                Outcome::Ok(tid) => {
                    self.level().invalidations.push(Invalidation::Relation(rel.entry.oid));
                    return Ok(new.map(|entry| {
                        let rel = Rel { entry, heap: Arc::clone(&rel.heap), catalog_tid: tid };
                        self.cache.insert(rel.entry.name.clone(), rel.clone());
                        rel
                    }));
                }
                Outcome::BeingModified(x) => self.wait_for_xid(x).await?,
                _ => return Err(SqlError::new(SqlState::INTERNAL_ERROR, "tuple concurrently updated")),
            }
        }
    }

    pub(crate) async fn add_index(
        &mut self,
        rel: &Rel,
        index: &NewIndex,
        if_not_exists: bool,
    ) -> Result<(), SqlError> {
        let entry = &rel.entry;
        if index.primary && entry.indexes.iter().any(|i| i.primary) {
            return Err(SqlError::new(
                SqlState::INVALID_TABLE_DEFINITION,
                format!("multiple primary keys for table \"{}\" are not allowed", entry.name),
            ));
        }
        if entry.indexes.iter().any(|i| i.name == index.name) {
            if if_not_exists {
                self.notice(
                    SqlState::DUPLICATE_TABLE,
                    format!("relation \"{}\" already exists, skipping", index.name),
                );
                return Ok(());
            }
            return Err(SqlError::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{}\" already exists", index.name),
            ));
        }
        // Validate against the rows that exist: no NULLs under a primary
        // key, no duplicate among live versions under a unique one.
        if index.unique || index.primary {
            let mut seen: BTreeMap<Key, ()> = BTreeMap::new();
            for (tid, row) in rel.heap.table.all_versions() {
                if !matches!(
                    rel.heap.table.liveness(&self.session, tid),
                    Liveness::Live | Liveness::Deleting(_)
                ) {
                    continue;
                }
                if index.primary {
                    for &c in &index.columns {
                        if matches!(row[c], crate::types::Value::Null) {
                            return Err(SqlError::new(
                                SqlState::NOT_NULL_VIOLATION,
                                format!(
                                    "column \"{}\" of relation \"{}\" contains null values",
                                    entry.columns[c].name, entry.name
                                ),
                            ));
                        }
                    }
                }
                let key = Key(index.columns.iter().map(|&c| row[c].clone()).collect());
                if key.has_null() {
                    continue;
                }
                if seen.insert(key.clone(), ()).is_some() {
                    let cols: Vec<&str> =
                        index.columns.iter().map(|&c| entry.columns[c].name.as_str()).collect();
                    let vals: Vec<String> = key.0.iter().map(|v| v.to_text().unwrap_or_default()).collect();
                    return Err(SqlError::new(
                        SqlState::UNIQUE_VIOLATION,
                        format!("could not create unique index \"{}\"", index.name),
                    )
                    .with_detail(format!(
                        "Key ({})=({}) is duplicated.",
                        cols.join(", "),
                        vals.join(", ")
                    )));
                }
            }
        }
        let mut new = (**entry).clone();
        if index.primary {
            for &c in &index.columns {
                new.columns[c].not_null = true;
            }
        }
        let def = IndexDef {
            oid: self.db.new_oid(),
            name: index.name.clone(),
            columns: index.columns.clone(),
            unique: index.unique,
            primary: index.primary,
        };
        new.indexes.push(def.clone());
        let new = Arc::new(new);
        // Build the entries now, under our lock, from every version.
        rel.heap.index(&new, &def);
        self.redo(&new, Redo::Catalog(Arc::clone(&new)));
        self.change_catalog(rel, Some(new)).await?;
        Ok(())
    }

    pub(crate) fn truncate(&mut self, rels: &[Rel]) -> Result<Output, SqlError> {
        // Synchronous catalog updates: the relations are locked
        // AccessExclusive (by the plan), so no one else changes them.
        for rel in rels {
            let storage = self.db.create_storage();
            self.level().created.push(storage);
            self.level().dropped.push(rel.entry.storage);
            let mut new = (*rel.entry).clone();
            new.storage = storage;
            let new = Arc::new(new);
            self.redo(&new, Redo::Catalog(Arc::clone(&new)));
            self.prepare_write()?;
            let outcome = self
                .db
                .catalog
                .update(&mut self.session, rel.catalog_tid, new)
                .map_err(|e| SqlError::new(SqlState::INTERNAL_ERROR, e.to_string()))?;
            let Outcome::Ok(tid) = outcome else {
                return Err(SqlError::new(SqlState::INTERNAL_ERROR, "tuple concurrently updated"));
            };
            self.level().invalidations.push(Invalidation::Relation(rel.entry.oid));
            // Re-read through the cache so the new row and storage are used.
            self.cache.retain(|_, r| r.entry.oid != rel.entry.oid);
            let _ = tid;
        }
        Ok(Output::Command("TRUNCATE TABLE".into()))
    }
}
