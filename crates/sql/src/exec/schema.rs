//! CREATE / DROP / ALTER SCHEMA and ALTER … SET SCHEMA: catalog rows
//! changed inside the transaction, as relations' are (exec/ddl.rs). Each
//! sends PostgreSQL's invalidation of every name (REL-KEY): what a name
//! without a schema finds may change with them.
//!
//! A schema being dropped is held AccessExclusive on its oid; making a
//! relation or type in a schema holds AccessShare on it and checks it is
//! still there (`Executor::creation_namespace`), so neither can leave a
//! relation in a schema that is gone.

use std::sync::Arc;

use snapscale_engine::catalog::{RelEntry, BUILTIN_NAMESPACES};
use snapscale_engine::redo::Redo;
use snapscale_engine::{LockMode, Rel};
use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use super::ddl::RowKind;
use super::Executor;
use crate::output::Output;
use crate::plan::Utility;

impl Executor<'_> {
    pub(super) async fn create_schema(
        &mut self,
        name: &str,
        if_not_exists: bool,
    ) -> Result<Output, SqlError> {
        let exists =
            || SqlError::new(SqlState::DUPLICATE_SCHEMA, format!("schema \"{name}\" already exists"));
        let builtin = BUILTIN_NAMESPACES.iter().find(|(n, _)| *n == name).map(|&(_, oid)| oid);
        let created = if let Some(oid) = builtin {
            // A dropped built-in schema comes back when the row that hides
            // it goes.
            self.xact.lock_relation(oid, LockMode::AccessExclusive).await?;
            match self.catalog_row(oid)? {
                Some(hiding) => {
                    self.change_catalog(&hiding, None).await?;
                    // CATALOG-REDO: a drop is logged as the oid.
                    self.xact.log_change(&hiding.entry, Redo::Drop(oid)).await?;
                    self.xact.dropped_storage(hiding.entry.storage);
                    self.xact.invalidate_names();
                    true
                }
                None => false,
            }
        } else {
            let mut build = |db: &snapscale_engine::Database| schema_row(db, db.catalog.new_oid(), name);
            self.insert_catalog_row(name, 0, None, RowKind::Schema, &mut build).await?.is_ok()
        };
        if !created {
            if !if_not_exists {
                return Err(exists());
            }
            self.xact
                .notice(SqlState::DUPLICATE_SCHEMA, format!("schema \"{name}\" already exists, skipping"));
        }
        Ok(Output::Command("CREATE SCHEMA".into()))
    }

    pub(super) async fn drop_schema(
        &mut self,
        schemas: &[(String, Option<u32>)],
        relations: &Utility,
        types: &[(String, Option<u32>)],
        routines: &[(String, Option<u32>)],
        cascaded: &Option<(String, Option<String>)>,
    ) -> Result<Output, SqlError> {
        let mut rows = Vec::new();
        for (name, oid) in schemas {
            let Some(oid) = *oid else {
                self.skipped("schema", name);
                continue;
            };
            self.xact.lock_relation(oid, LockMode::AccessExclusive).await?;
            match self.catalog_row(oid)? {
                Some(rel) => rows.push(Ok(rel)),
                // A built-in schema (public) has no row to delete: one is
                // made that hides it.
                None if oid < snapscale_engine::catalog::FIRST_OID => rows.push(Err((oid, name.clone()))),
                None => return Err(snapscale_engine::xact::no_schema(name)),
            }
        }
        if let Some((notice, detail)) = cascaded {
            self.xact.notice_with_detail(SqlState::SUCCESSFUL_COMPLETION, notice.clone(), detail.clone());
        }
        if let Utility::DropTable { targets, kind, detach, .. } = relations {
            self.drop_tables(targets, *kind).await?;
            self.detach_foreign_keys(targets, detach).await?;
        }
        if !types.is_empty() {
            self.drop_types(types, false).await?;
        }
        if !routines.is_empty() {
            self.drop_routines(routines, "DROP FUNCTION", true).await?;
        }
        // What this statement dropped (its own deletes are not yet seen
        // by the catalog reads below).
        let mut planned: Vec<u32> = types.iter().chain(routines).filter_map(|(_, o)| *o).collect();
        if let Utility::DropTable { targets, .. } = relations {
            planned.extend(targets.iter().filter_map(|(_, r)| r.as_ref().map(|r| r.entry.oid)));
        }
        for row in rows {
            let (schema_oid, schema_name) = match &row {
                Ok(rel) => (rel.entry.oid, rel.entry.name.clone()),
                Err((oid, name)) => (*oid, name.clone()),
            };
            // A member made after the statement was planned (committed
            // before the schema's lock was had) stops the drop.
            let left: Vec<Arc<RelEntry>> = self
                .xact
                .catalog_entries()?
                .into_iter()
                .map(|(_, e)| e)
                .filter(|e| !e.is_schema && e.temp_owner.is_none() && e.namespace == schema_oid)
                .filter(|e| {
                    let owner = e.sequence.as_ref().and_then(|q| q.owned_by.as_ref()).map(|o| o.table_oid);
                    !planned.contains(&e.oid) && !owner.is_some_and(|o| planned.contains(&o))
                })
                .collect();
            if let Some(e) = left.first() {
                return Err(SqlError::new(
                    SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!("cannot drop schema {schema_name} because other objects depend on it"),
                )
                .with_detail(format!("relation {schema_name}.{} depends on schema {schema_name}", e.name))
                .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
            }
            match row {
                Ok(rel) => {
                    self.change_catalog(&rel, None).await?;
                    // CATALOG-REDO: a drop is logged as the oid.
                    self.xact.log_change(&rel.entry, Redo::Drop(rel.entry.oid)).await?;
                    self.xact.dropped_storage(rel.entry.storage);
                }
                Err((oid, name)) => {
                    let mut build = |db: &snapscale_engine::Database| schema_row(db, oid, &name);
                    let _ = self.insert_catalog_row(&name, 0, None, RowKind::Schema, &mut build).await?;
                }
            }
            self.xact.invalidate_names();
        }
        Ok(Output::Command("DROP SCHEMA".into()))
    }

    /// ALTER SCHEMA … RENAME TO `new` (OWNER TO: `None`, nothing to do).
    pub(super) async fn alter_schema(&mut self, oid: u32, new: Option<&str>) -> Result<Output, SqlError> {
        let Some(new) = new else { return Ok(Output::Command("ALTER SCHEMA".into())) };
        self.xact.lock_relation(oid, LockMode::AccessExclusive).await?;
        let Some(rel) = self.catalog_row(oid)? else {
            return Err(SqlError::new(
                SqlState::INVALID_SCHEMA_NAME,
                format!("schema with OID {oid} does not exist"),
            ));
        };
        let db = Arc::clone(&self.xact.db);
        {
            // NAME-UNIQUE: checked under the mutex inserts hold.
            let _names = db.catalog.names.lock().expect("catalog name lock poisoned");
            if self.xact.namespace(new)?.is_some() {
                return Err(SqlError::new(
                    SqlState::DUPLICATE_SCHEMA,
                    format!("schema \"{new}\" already exists"),
                ));
            }
        }
        self.rewrite_entry(&rel, |e| e.name = new.to_owned()).await?;
        self.xact.invalidate_names();
        Ok(Output::Command("ALTER SCHEMA".into()))
    }

    /// ALTER … SET SCHEMA: the relation or type `oid` moves to
    /// `namespace`, with the sequences its columns own.
    pub(super) async fn set_schema(
        &mut self,
        oid: u32,
        namespace: u32,
        tag: &'static str,
    ) -> Result<Output, SqlError> {
        self.xact.lock_relation(oid, LockMode::AccessExclusive).await?;
        if namespace >= snapscale_engine::catalog::FIRST_OID {
            self.xact.lock_relation(namespace, LockMode::AccessShare).await?;
        }
        let entries = self.xact.catalog_entries()?;
        let Some((_, entry)) = entries.iter().find(|(_, e)| e.oid == oid) else {
            return Err(SqlError::new(
                SqlState::UNDEFINED_TABLE,
                format!("relation with OID {oid} does not exist"),
            ));
        };
        if entries.iter().any(|(_, e)| {
            !e.is_schema
                && e.temp_owner.is_none()
                && e.namespace == namespace
                && e.name == entry.name
                && e.user_type.is_some() == entry.user_type.is_some()
        }) {
            let what = if entry.user_type.is_some() { "type" } else { "relation" };
            let schema = self.xact.namespace_name(namespace)?.unwrap_or_default();
            return Err(SqlError::new(
                SqlState::DUPLICATE_TABLE,
                format!("{what} \"{}\" already exists in schema \"{schema}\"", entry.name),
            ));
        }
        let owned: Vec<u32> = entries
            .iter()
            .filter(|(_, e)| {
                e.sequence.as_ref().and_then(|s| s.owned_by.as_ref()).is_some_and(|o| o.table_oid == oid)
            })
            .map(|(_, e)| e.oid)
            .collect();
        for moved in std::iter::once(oid).chain(owned) {
            let Some(rel) = self.catalog_row(moved)? else { continue };
            self.rewrite_entry(&rel, |e| e.namespace = namespace).await?;
        }
        // VIEW-TEXT: the views that read it go on reading it.
        if entry.is_relation() {
            let from = self.xact.namespace_name(entry.namespace)?.unwrap_or_default();
            let to = self.xact.namespace_name(namespace)?.unwrap_or_default();
            self.rewrite_readers(entry, |query| crate::bind::requalify(query, &entry.name, &from, &to))
                .await?;
        }
        self.xact.invalidate_names();
        Ok(Output::Command(tag.into()))
    }

    /// VIEW-TEXT: each view that reads `read` gets its query as `rewrite`
    /// leaves it (the relation moved or renamed: the text names it anew).
    pub(super) async fn rewrite_readers(
        &mut self,
        read: &RelEntry,
        rewrite: impl Fn(&mut sqlparser::ast::Query),
    ) -> Result<(), SqlError> {
        let readers: Vec<u32> = self
            .xact
            .catalog_entries()?
            .into_iter()
            .filter(|(_, e)| e.view.as_ref().is_some_and(|v| v.depends_on.contains(&read.oid)))
            .map(|(_, e)| e.oid)
            .collect();
        for reader in readers {
            self.xact.lock_relation(reader, LockMode::AccessExclusive).await?;
            let Some(view) = self.catalog_row(reader)? else { continue };
            let Some(def) = &view.entry.view else { continue };
            let mut query = crate::parse::parse_query(&def.query, self.limits.max_stack_depth)?;
            rewrite(&mut query);
            let text = query.to_string();
            self.rewrite_entry(&view, |e| {
                if let Some(v) = e.view.as_mut() {
                    v.query = text;
                }
            })
            .await?;
        }
        Ok(())
    }

    /// The catalog row with oid `oid` (a relation, type or schema), with
    /// its storage, as this transaction sees it now.
    pub(super) fn catalog_row(&mut self, oid: u32) -> Result<Option<Rel>, SqlError> {
        let found = self.xact.catalog_entries()?.into_iter().find(|(_, e)| e.oid == oid);
        let Some((tid, entry)) = found else { return Ok(None) };
        let heap = self.xact.db.catalog.storage(entry.storage).ok_or_else(|| {
            SqlError::new(SqlState::INTERNAL_ERROR, format!("storage of \"{}\" is missing", entry.name))
        })?;
        Ok(Some(Rel { entry, heap, catalog_tid: tid }))
    }
}

/// A schema's catalog row (with a built-in schema's oid, the row that
/// hides it: `RelEntry::hides_builtin`).
fn schema_row(db: &snapscale_engine::Database, oid: u32, name: &str) -> RelEntry {
    RelEntry { is_schema: true, ..RelEntry::empty(oid, name, 0, db.catalog.create_storage()) }
}
