//! DDL: catalog rows changed inside the transaction (see snapscale_engine::catalog).
//!
//! Each statement holds AccessExclusive (Share for CREATE INDEX) on the
//! relation until commit, so no reader or writer acts on a definition
//! that is being changed; other sessions' caches learn of the change
//! through the invalidation sent at commit.

use std::collections::BTreeMap;
use std::sync::Arc;

use snapscale_engine::catalog::{ForeignKeyDef, Heap, IndexDef, RelEntry};
use snapscale_engine::database::Database;
use snapscale_engine::index::Key;
use snapscale_engine::redo::Redo;
use snapscale_engine::sequence::OwnedBy;
use snapscale_engine::xact::Creation;
use snapscale_engine::{Liveness, LockMode, Outcome, Tid};
use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use super::Executor;
use crate::output::Output;
use crate::plan::{CreateTable, NewIndex, Rel, RelKind};

impl Executor<'_> {
    pub(crate) async fn create_table(&mut self, c: &CreateTable) -> Result<Output, SqlError> {
        let tag = if c.sequence.is_some() { "CREATE SEQUENCE" } else { "CREATE TABLE" };
        if c.global {
            self.xact.warning(SqlState::WARNING, "GLOBAL is deprecated in temporary table creation");
        }
        let Some(Rel { entry: table, .. }) = self.create_relation(c).await? else {
            return Ok(Output::Command(tag.into()));
        };
        // SERIAL and identity columns: their sequences, owned by them.
        for s in &c.serials {
            let mut def = s.def.clone();
            def.owned_by =
                Some(OwnedBy { table_oid: table.oid, table: table.name.clone(), column: s.column.clone() });
            let sequence = CreateTable::sequence(s.sequence.clone(), c.temp, def);
            self.create_relation(&sequence).await?;
        }
        Ok(Output::Command(tag.into()))
    }

    /// CREATE [OR REPLACE] VIEW: a new catalog row, or the replaced
    /// view's row with the new query and columns (its oid kept, so what
    /// depends on it still does).
    pub(crate) async fn create_view(
        &mut self,
        c: &CreateTable,
        replace: Option<&Rel>,
    ) -> Result<Output, SqlError> {
        match replace {
            None => {
                self.create_relation(c).await?;
            }
            Some(rel) => {
                let mut new = (*rel.entry).clone();
                new.columns = c.columns.clone();
                new.view = c.view.clone();
                let new = Arc::new(new);
                // CATALOG-REDO: the whole new definition.
                self.xact.log_change(&new, Redo::Catalog(Arc::clone(&new))).await?;
                self.change_catalog(rel, Some(new)).await?;
            }
        }
        Ok(Output::Command("CREATE VIEW".into()))
    }

    /// CREATE TABLE … AS / SELECT … INTO: the table, then the query's rows
    /// in it (none WITH NO DATA); tagged as PostgreSQL tags them.
    pub(crate) async fn create_table_as(
        &mut self,
        c: &crate::plan::CreateTableAs<crate::plan::physical::Query>,
    ) -> Result<Output, SqlError> {
        if let Some(rel) = &c.refresh {
            return self.refresh_matview(rel, c).await;
        }
        let tag = if c.create.view.is_some() { "CREATE MATERIALIZED VIEW" } else { "CREATE TABLE AS" };
        let Some(rel) = self.create_relation(&c.create).await? else {
            return Ok(Output::Command(tag.into()));
        };
        if !c.data {
            return Ok(Output::Command(tag.into()));
        }
        let rows = self.query(&c.query).await?;
        let n = rows.len();
        for row in rows {
            self.xact.check_cancel()?;
            self.insert_row(&rel, row, &[]).await?;
        }
        Ok(Output::Command(crate::output::counted_tag("SELECT", n)))
    }

    /// `rel`'s definition, changed by `change`, naming new storage (the old
    /// one goes when the transaction commits, the new one if it aborts),
    /// logged (CATALOG-REDO); the catalog row is the caller's to update.
    async fn new_storage(
        &mut self,
        rel: &Rel,
        change: impl FnOnce(&mut RelEntry),
    ) -> Result<(Arc<RelEntry>, Arc<snapscale_engine::catalog::Heap>), SqlError> {
        let db = Arc::clone(&self.xact.db);
        let storage = db.catalog.create_storage();
        self.xact.created_storage(storage);
        self.xact.dropped_storage(rel.entry.storage);
        let mut new = (*rel.entry).clone();
        new.storage = storage;
        change(&mut new);
        let new = Arc::new(new);
        self.xact.log_change(&new, Redo::Catalog(Arc::clone(&new))).await?;
        let heap = db.catalog.storage(storage).expect("created above");
        Ok((new, heap))
    }

    /// REFRESH MATERIALIZED VIEW: the view's rows move to new storage
    /// filled from its query (left empty, and the view unpopulated, WITH
    /// NO DATA), as TRUNCATE moves a table's: readers of the old storage
    /// go on until the new one commits.
    async fn refresh_matview(
        &mut self,
        rel: &Rel,
        c: &crate::plan::CreateTableAs<crate::plan::physical::Query>,
    ) -> Result<Output, SqlError> {
        let rows = if c.data { self.query(&c.query).await? } else { Vec::new() };
        let (new, heap) = self
            .new_storage(rel, |e| {
                if let Some(v) = &mut e.view {
                    v.materialized = Some(c.data);
                }
            })
            .await?;
        let changed = self.change_catalog(rel, Some(Arc::clone(&new))).await?;
        let catalog_tid = changed.map_or(rel.catalog_tid, |r| r.catalog_tid);
        let rel = Rel { entry: new, heap, catalog_tid };
        self.xact.remember(rel.clone())?;
        for row in rows {
            self.xact.check_cancel()?;
            self.insert_row(&rel, row, &[]).await?;
        }
        Ok(Output::Command("REFRESH MATERIALIZED VIEW".into()))
    }

    /// Creates the relation `c` describes; `None` if it exists and IF NOT
    /// EXISTS said to skip it.
    pub(super) async fn create_relation(&mut self, c: &CreateTable) -> Result<Option<Rel>, SqlError> {
        let creation = self.creation_namespace(&c.name, c.temp).await?;
        let owner = creation.temp.then_some(self.xact.backend_id());
        let name = creation.name.clone();
        let mut build = |db: &Database| {
            let storage = db.catalog.create_storage();
            let oid = db.catalog.new_oid();
            let indexes = c
                .indexes
                .iter()
                .map(|i| {
                    let oid = db.catalog.new_oid();
                    IndexDef {
                        oid,
                        storage: oid,
                        name: i.name.clone(),
                        columns: i.columns.clone(),
                        unique: i.unique,
                        primary: i.primary,
                        constraint: i.constraint,
                        include: i.include.clone(),
                        nulls_not_distinct: i.nulls_not_distinct,
                        exprs: i.exprs.clone(),
                        predicate: i.predicate.clone(),
                        options: i.options.clone(),
                        opclasses: i.opclasses.clone(),
                        orders: i.orders.clone(),
                    }
                })
                .collect();
            RelEntry {
                oid,
                name: creation.name.clone(),
                namespace: creation.namespace,
                is_schema: false,
                temp_owner: owner,
                storage,
                columns: c.columns.clone(),
                indexes,
                sequence: c.sequence.clone(),
                user_type: None,
                checks: c.checks.clone(),
                // A parent of 0 is the table itself (a self-reference).
                foreign_keys: c
                    .foreign_keys
                    .iter()
                    .map(|f| ForeignKeyDef {
                        oid: db.catalog.new_oid(),
                        parent: if f.parent == 0 { oid } else { f.parent },
                        ..f.clone()
                    })
                    .collect(),
                referenced_by: if c.foreign_keys.iter().any(|f| f.parent == 0) {
                    vec![oid]
                } else {
                    Vec::new()
                },
                view: c.view.clone(),
                routine: None,
                triggers: Vec::new(),
                options: c.options.clone(),
                comments: Vec::new(),
            }
        };
        let (entry, tid) = match self
            .insert_catalog_row(&name, creation.namespace, owner, RowKind::Relation, &mut build)
            .await?
        {
            Ok(done) => done,
            Err(existing) => {
                // A type's name is a relation's too (PostgreSQL's row types).
                if !existing.is_relation() {
                    return Err(SqlError::new(
                        SqlState::DUPLICATE_OBJECT,
                        format!("type \"{name}\" already exists"),
                    )
                    .with_hint(
                        "A relation has an associated type of the same name, so you must use a name that doesn't conflict with any existing type.",
                    ));
                }
                if c.if_not_exists {
                    self.xact.notice(
                        SqlState::DUPLICATE_TABLE,
                        format!("relation \"{name}\" already exists, skipping"),
                    );
                    return Ok(None);
                }
                return Err(SqlError::new(
                    SqlState::DUPLICATE_TABLE,
                    format!("relation \"{name}\" already exists"),
                ));
            }
        };
        let heap = self.xact.db.catalog.storage(entry.storage).expect("created above");
        heap.install_sequence(&entry, None);
        let rel = Rel { entry: Arc::clone(&entry), heap, catalog_tid: tid };
        self.xact.remember(rel.clone())?;
        self.xact.cache.insert(c.name.clone(), rel.clone());
        self.reference_parents(&entry, &[]).await?;
        Ok(Some(rel))
    }

    /// After DROP TABLE: the tables in `detach` lose their foreign keys to
    /// the dropped tables (CASCADE) and their listings of them.
    pub(super) async fn detach_foreign_keys(
        &mut self,
        targets: &[(String, Option<Rel>)],
        detach: &[Rel],
    ) -> Result<(), SqlError> {
        let dropped: Vec<u32> = targets.iter().filter_map(|(_, r)| r.as_ref().map(|r| r.entry.oid)).collect();
        for rel in detach {
            // Re-read: an earlier step of this statement may have changed it.
            let Some(rel) = self.xact.relation_by_oid(rel.entry.oid)? else { continue };
            let mut new = (*rel.entry).clone();
            new.foreign_keys.retain(|f| !dropped.contains(&f.parent));
            new.referenced_by.retain(|o| !dropped.contains(o));
            if new == *rel.entry {
                continue;
            }
            let new = Arc::new(new);
            // CATALOG-REDO: the whole new definition.
            self.xact.log_change(&new, Redo::Catalog(Arc::clone(&new))).await?;
            self.change_catalog(&rel, Some(new)).await?;
        }
        Ok(())
    }

    /// The tables `entry`'s foreign keys reference list it in their
    /// catalog rows (`RelEntry::referenced_by`), and those it no longer
    /// references (`before`: the parents of its keys before) no longer do.
    /// Each parent is locked ShareRowExclusive by the statement's plan,
    /// which keeps two such changes of one parent's row apart.
    pub(super) async fn reference_parents(
        &mut self,
        entry: &RelEntry,
        before: &[u32],
    ) -> Result<(), SqlError> {
        let mut parents: Vec<u32> = entry.foreign_keys.iter().map(|f| f.parent).collect();
        parents.extend_from_slice(before);
        parents.sort_unstable();
        parents.dedup();
        for parent in parents {
            if parent == entry.oid {
                continue;
            }
            let refers = entry.foreign_keys.iter().any(|f| f.parent == parent);
            let Some(rel) = self.xact.relation_by_oid(parent)? else { continue };
            let listed = rel.entry.referenced_by.contains(&entry.oid);
            if refers == listed {
                continue;
            }
            let mut new = (*rel.entry).clone();
            if refers {
                new.referenced_by.push(entry.oid);
            } else {
                new.referenced_by.retain(|&o| o != entry.oid);
            }
            let new = Arc::new(new);
            // CATALOG-REDO: the parent's whole definition.
            self.xact.log_change(&new, Redo::Catalog(Arc::clone(&new))).await?;
            self.change_catalog(&rel, Some(new)).await?;
        }
        Ok(())
    }

    /// Inserts the catalog row `build` makes, named `name` in `namespace`
    /// or the temporary one of `owner` (a backend), once no live row
    /// there holds the name (nor, for a `relation`, an index of a table
    /// there: CREATE INDEX checks the relations' names in turn, without
    /// this mutex, so the two racing can both succeed); `Err` with the row
    /// that holds it. The row is logged, locked AccessExclusive, and
    /// invalidated at commit.
    pub(super) async fn insert_catalog_row(
        &mut self,
        name: &str,
        namespace: u32,
        owner: Option<u64>,
        kind: RowKind,
        build: &mut (dyn FnMut(&Database) -> RelEntry + Send),
    ) -> Result<Result<(Arc<RelEntry>, Tid), Arc<RelEntry>>, SqlError> {
        let (entry, tid) = loop {
            // Is the name taken? Rows of running transactions count
            // (PostgreSQL's unique index on pg_class waits for them).
            let wait = {
                let db = Arc::clone(&self.xact.db);
                // NAME-UNIQUE: the check and the insert under one mutex.
                let _names = db.catalog.names.lock().expect("catalog name lock poisoned");
                let mut wait = None;
                for (tid, other) in db.catalog.table.all_versions() {
                    // A relation's name may not be an index's either (they
                    // share pg_class); a type's may.
                    let index = kind == RowKind::Relation
                        && other.is_relation()
                        && other.indexes.iter().any(|i| i.name == name);
                    let elsewhere =
                        other.temp_owner != owner || (owner.is_none() && other.namespace != namespace);
                    // Schemas share one name space, relations and types
                    // another per schema.
                    let other_space = other.is_schema != (kind == RowKind::Schema)
                        || other.routine.is_some() != matches!(kind, RowKind::Routine(_));
                    if (other.name != name && !index) || elsewhere || other_space {
                        continue;
                    }
                    if let (RowKind::Routine(inputs), Some(r)) = (&kind, &other.routine) {
                        if r.input_types() != *inputs {
                            continue;
                        }
                    }
                    match db.catalog.table.liveness(&self.xact.session, tid) {
                        Liveness::Dead => {}
                        Liveness::Live => return Ok(Err(other)),
                        Liveness::Inserting(x) | Liveness::Deleting(x) => wait = Some(x),
                    }
                }
                match wait {
                    Some(x) => Err(x),
                    None => {
                        let entry = Arc::new(build(&db));
                        self.xact.created_storage(entry.storage);
                        self.xact.prepare_write()?;
                        let tid = db
                            .catalog
                            .table
                            .insert(&mut self.xact.session, Arc::clone(&entry))
                            .map_err(|e| SqlError::new(SqlState::INTERNAL_ERROR, e.to_string()))?;
                        Ok((entry, tid))
                    }
                }
            };
            match wait {
                Ok(done) => break done,
                Err(x) => self.xact.wait_for_xid(x).await?,
            }
        };
        // CATALOG-REDO: DDL is logged as the whole new definition.
        self.xact.log_change(&entry, Redo::Catalog(Arc::clone(&entry))).await?;
        self.xact.lock_relation(entry.oid, LockMode::AccessExclusive).await?;
        self.xact.invalidate(entry.oid);
        if owner.is_none() {
            // REL-KEY: the new name may come first along some search_path.
            self.xact.invalidate_names();
        }
        Ok(Ok((entry, tid)))
    }

    /// Where a relation being made goes: the schema `key` names or the
    /// search_path finds, held (AccessShare on its oid, which DROP SCHEMA
    /// takes exclusively) and seen to be there still.
    pub(super) async fn creation_namespace(&mut self, key: &str, temp: bool) -> Result<Creation, SqlError> {
        let creation = self.xact.creation_namespace(key, temp)?;
        if !creation.temp && creation.namespace >= snapscale_engine::catalog::FIRST_OID {
            self.xact.lock_relation(creation.namespace, LockMode::AccessShare).await?;
            if self.xact.namespace_name(creation.namespace)?.is_none() {
                let (schema, _) = snapscale_engine::names::split(key);
                return Err(snapscale_engine::xact::no_schema(schema.as_deref().unwrap_or_default()));
            }
        }
        Ok(creation)
    }

    pub(crate) async fn drop_tables(
        &mut self,
        targets: &[(String, Option<Rel>)],
        kind: RelKind,
    ) -> Result<Output, SqlError> {
        let what = kind.word();
        for (name, rel) in targets {
            match rel {
                Some(rel) => {
                    self.drop_relation(rel).await?;
                    // The sequences its columns own go with a table.
                    for owned in self.owned_sequences(rel.entry.oid) {
                        self.drop_relation(&owned).await?;
                    }
                }
                None => self.skipped(what, name),
            }
        }
        Ok(Output::Command(
            match kind {
                RelKind::Table => "DROP TABLE",
                RelKind::Sequence => "DROP SEQUENCE",
                RelKind::View => "DROP VIEW",
                RelKind::MatView => "DROP MATERIALIZED VIEW",
            }
            .into(),
        ))
    }

    /// The sequences owned by a column of table `oid` that this transaction
    /// sees (the catalog row lock of the table's drop keeps new ones from
    /// appearing: creating one names the table under a lock on it).
    fn owned_sequences(&mut self, oid: u32) -> Vec<Rel> {
        let db = Arc::clone(&self.xact.db);
        let mut out = Vec::new();
        for (tid, entry) in db.catalog.table.all_versions() {
            let owned =
                entry.sequence.as_ref().and_then(|s| s.owned_by.as_ref()).is_some_and(|o| o.table_oid == oid);
            if !owned || !matches!(db.catalog.table.liveness(&self.xact.session, tid), Liveness::Live) {
                continue;
            }
            if let Some(heap) = db.catalog.storage(entry.storage) {
                out.push(Rel { entry, heap, catalog_tid: tid });
            }
        }
        out
    }

    /// DROP … IF EXISTS of `what` `name` that is not there: the NOTICE.
    pub(super) fn skipped(&mut self, what: &str, name: &str) {
        self.xact
            .notice(SqlState::SUCCESSFUL_COMPLETION, format!("{what} \"{name}\" does not exist, skipping"));
    }

    pub(crate) async fn drop_relation(&mut self, rel: &Rel) -> Result<(), SqlError> {
        self.xact.lock_relation(rel.entry.oid, LockMode::AccessExclusive).await?;
        self.change_catalog(rel, None).await?;
        // CATALOG-REDO: a drop is logged as the oid.
        self.xact.log_change(&rel.entry, Redo::Drop(rel.entry.oid)).await?;
        self.xact.dropped_storage(rel.entry.storage);
        self.xact.cache.remove_oid(rel.entry.oid);
        Ok(())
    }

    /// Replaces (or, with `None`, deletes) a relation's catalog row, as an
    /// MVCC update or delete in this transaction (CATALOG-MVCC).
    pub(super) async fn change_catalog(
        &mut self,
        rel: &Rel,
        new: Option<Arc<RelEntry>>,
    ) -> Result<Option<Rel>, SqlError> {
        self.xact.prepare_write()?;
        let db = Arc::clone(&self.xact.db);
        loop {
            let outcome = match &new {
                Some(entry) => {
                    db.catalog.table.update(&mut self.xact.session, rel.catalog_tid, Arc::clone(entry))
                }
                None => db.catalog.table.delete(&mut self.xact.session, rel.catalog_tid),
            }
            .map_err(|e| SqlError::new(SqlState::INTERNAL_ERROR, e.to_string()))?;
            match outcome {
                Outcome::Ok(tid) => {
                    self.xact.invalidate(rel.entry.oid);
                    let Some(entry) = new else { return Ok(None) };
                    let rel = Rel { entry, heap: Arc::clone(&rel.heap), catalog_tid: tid };
                    // The cache holds relations; types are read afresh.
                    if rel.entry.is_relation() {
                        self.xact.remember(rel.clone())?;
                    }
                    return Ok(Some(rel));
                }
                Outcome::BeingModified(x) => self.xact.wait_for_xid(x).await?,
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
        let mut new = (*rel.entry).clone();
        if !self.index_into(&rel.heap, &mut new, index, if_not_exists)? {
            return Ok(());
        }
        let new = Arc::new(new);
        // CATALOG-REDO: the definition with its new index.
        self.xact.log_change(&new, Redo::Catalog(Arc::clone(&new))).await?;
        self.change_catalog(rel, Some(new)).await?;
        Ok(())
    }

    /// Changes `rel`'s list of indexes (DROP INDEX, ALTER INDEX … RENAME).
    /// A dropped index's entries stay in the storage until it goes (a
    /// rollback needs them), unread: no plan or write finds an index the
    /// definition no longer names.
    pub(super) async fn rewrite_indexes(
        &mut self,
        rel: &Rel,
        change: impl FnOnce(&mut Vec<IndexDef>),
    ) -> Result<(), SqlError> {
        self.rewrite_entry(rel, |entry| change(&mut entry.indexes)).await
    }

    /// `rel`'s catalog row changed by `change`, logged and installed.
    pub(super) async fn rewrite_entry(
        &mut self,
        rel: &Rel,
        change: impl FnOnce(&mut RelEntry),
    ) -> Result<(), SqlError> {
        let mut new = (*rel.entry).clone();
        change(&mut new);
        new.prune_comments();
        let new = Arc::new(new);
        // CATALOG-REDO: the new definition.
        self.xact.log_change(&new, Redo::Catalog(Arc::clone(&new))).await?;
        self.change_catalog(rel, Some(new)).await?;
        Ok(())
    }

    /// REINDEX of `rel`'s indexes `names`: each gets new storage, built
    /// from every version under the statement's lock; the old entries stay
    /// unread until the table goes (as a dropped index's do).
    pub(super) async fn reindex(&mut self, rel: &Rel, names: &[String]) -> Result<(), SqlError> {
        let fresh: Vec<(String, u32)> =
            names.iter().map(|n| (n.clone(), self.xact.db.catalog.new_oid())).collect();
        self.rewrite_indexes(rel, |indexes| {
            for ix in indexes.iter_mut() {
                if let Some((_, storage)) = fresh.iter().find(|(n, _)| *n == ix.name) {
                    ix.storage = *storage;
                }
            }
        })
        .await?;
        let Some(new) = self.xact.relation_by_oid(rel.entry.oid)? else { return Ok(()) };
        for def in new.entry.indexes.iter().filter(|i| names.contains(&i.name)) {
            new.heap.index(&new.entry, def);
        }
        Ok(())
    }

    /// Refuses a statement that may not run inside a transaction block
    /// (PostgreSQL's PreventInTransactionBlock).
    pub(super) fn refuse_in_block(&self, what: &str) -> Result<(), SqlError> {
        if self.in_block {
            return Err(SqlError::new(
                SqlState::ACTIVE_SQL_TRANSACTION,
                format!("{what} cannot run inside a transaction block"),
            ));
        }
        Ok(())
    }

    /// Adds `index` to `entry`, whose rows are in `heap`: checked against
    /// the rows there (no NULL under a primary key, no duplicate among
    /// live versions under a unique one) and built. `false` if an index of
    /// that name exists and `if_not_exists` said to skip it.
    pub(super) fn index_into(
        &mut self,
        heap: &Heap,
        entry: &mut RelEntry,
        index: &NewIndex,
        if_not_exists: bool,
    ) -> Result<bool, SqlError> {
        if index.primary && entry.indexes.iter().any(|i| i.primary) {
            return Err(SqlError::new(
                SqlState::INVALID_TABLE_DEFINITION,
                format!("multiple primary keys for table \"{}\" are not allowed", entry.name),
            ));
        }
        if entry.indexes.iter().any(|i| i.name == index.name) {
            if if_not_exists {
                self.xact.notice(
                    SqlState::DUPLICATE_TABLE,
                    format!("relation \"{}\" already exists, skipping", index.name),
                );
                return Ok(false);
            }
            return Err(SqlError::new(
                SqlState::DUPLICATE_TABLE,
                format!("relation \"{}\" already exists", index.name),
            ));
        }
        let oid = self.xact.db.catalog.new_oid();
        let def = IndexDef {
            oid,
            storage: oid,
            name: index.name.clone(),
            columns: index.columns.clone(),
            unique: index.unique,
            primary: index.primary,
            constraint: index.constraint,
            include: index.include.clone(),
            nulls_not_distinct: index.nulls_not_distinct,
            exprs: index.exprs.clone(),
            predicate: index.predicate.clone(),
            options: index.options.clone(),
            opclasses: index.opclasses.clone(),
            orders: index.orders.clone(),
        };
        // Every live row's key is computed (an expression that fails on
        // one fails the statement) and, in a unique index, checked.
        if index.unique || index.primary || def.computed() {
            let built = heap.index(entry, &def);
            let mut seen: BTreeMap<Key, ()> = BTreeMap::new();
            for (tid, row) in heap.table.all_versions() {
                if !matches!(
                    heap.table.liveness(&self.xact.session, tid),
                    Liveness::Live | Liveness::Deleting(_)
                ) {
                    continue;
                }
                let row = entry.complete(row);
                if index.primary {
                    for &c in &index.columns {
                        if matches!(row[c], snapscale_values::Value::Null) {
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
                let Some(key) = built.key_of(&row)? else { continue };
                if !index.unique || !built.checks_unique(&key) {
                    continue;
                }
                if seen.insert(key.clone(), ()).is_some() {
                    let cols = crate::catalog_views::index_key_parts(entry, &def, false);
                    let vals: Vec<String> =
                        key.0.iter().map(|v| v.to_text().unwrap_or_else(|| "null".into())).collect();
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
        if index.primary {
            for &c in &index.columns {
                entry.columns[c].not_null = true;
            }
        }
        entry.indexes.push(def.clone());
        // Build the entries now, under our lock, from every version.
        heap.index(entry, &def);
        Ok(true)
    }

    /// ALTER SEQUENCE: the sequence moves to new storage holding its value
    /// under the new parameters (RESTART's value, or the one it was at),
    /// as PostgreSQL gives it a new relfilenode: the change is the
    /// transaction's, and a rollback leaves the old storage as it was.
    pub(super) async fn alter_sequence(
        &mut self,
        rel: &Rel,
        def: &snapscale_engine::sequence::SequenceDef,
        restart: Option<i64>,
    ) -> Result<(), SqlError> {
        use snapscale_engine::sequence::SeqValue;
        let was = rel.heap.sequence.get().map(|s| s.current());
        let at = match (restart, was) {
            (Some(v), _) => SeqValue { last: v, called: false },
            (None, Some(v)) => {
                let invalid = |m: String| SqlError::new(SqlState::INVALID_PARAMETER_VALUE, m);
                if v.last < def.min {
                    return Err(invalid(format!(
                        "RESTART value ({}) cannot be less than MINVALUE ({})",
                        v.last, def.min
                    )));
                }
                if v.last > def.max {
                    return Err(invalid(format!(
                        "RESTART value ({}) cannot be greater than MAXVALUE ({})",
                        v.last, def.max
                    )));
                }
                v
            }
            (None, None) => SeqValue { last: def.start, called: false },
        };
        let (new, heap) = self.new_storage(rel, |e| e.sequence = Some(def.clone())).await?;
        // Then the value it starts at (recovery pairs them by storage).
        heap.install_sequence(&new, Some(at));
        let db = Arc::clone(&self.xact.db);
        if let (Some(log), None) = (&db.log, new.temp_owner) {
            let wal = snapscale_engine::redo::SequenceWal { log, storage: new.storage };
            snapscale_engine::sequence::SeqLog::log(&wal, at)?;
        }
        self.change_catalog(rel, Some(new)).await?;
        // Re-read through the cache so the new storage is used.
        self.xact.cache.remove_oid(rel.entry.oid);
        Ok(())
    }

    pub(crate) async fn truncate(&mut self, rels: &[Rel]) -> Result<Output, SqlError> {
        // Synchronous catalog updates: the relations are locked
        // AccessExclusive (by the plan), so no one else changes them.
        let db = Arc::clone(&self.xact.db);
        for rel in rels {
            let storage = db.catalog.create_storage();
            self.xact.created_storage(storage);
            self.xact.dropped_storage(rel.entry.storage);
            let mut new = (*rel.entry).clone();
            new.storage = storage;
            let new = Arc::new(new);
            // CATALOG-REDO: the definition naming the new storage.
            self.xact.log_change(&new, Redo::Catalog(Arc::clone(&new))).await?;
            self.xact.prepare_write()?;
            let outcome = db
                .catalog
                .table
                .update(&mut self.xact.session, rel.catalog_tid, new)
                .map_err(|e| SqlError::new(SqlState::INTERNAL_ERROR, e.to_string()))?;
            let Outcome::Ok(tid) = outcome else {
                return Err(SqlError::new(SqlState::INTERNAL_ERROR, "tuple concurrently updated"));
            };
            self.xact.invalidate(rel.entry.oid);
            // Re-read through the cache so the new row and storage are used.
            self.xact.cache.remove_oid(rel.entry.oid);
            let _ = tid;
        }
        Ok(Output::Command("TRUNCATE TABLE".into()))
    }
}

/// What a new catalog row is, for the uniqueness of its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum RowKind {
    /// A relation: its name may not be a relation's, a type's or an
    /// index's in its schema.
    Relation,
    /// A type: its name may not be a relation's or a type's.
    Type,
    /// A schema: its name may not be another schema's.
    Schema,
    /// A routine: its name and input argument types may not be another
    /// routine's in its schema (ROUTINE-ROWS).
    Routine(Vec<snapscale_values::SqlType>),
}
