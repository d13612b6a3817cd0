//! ALTER TABLE as the binder planned it (bind/alter_table.rs): the rows
//! rewritten into new storage when a column was added, dropped or
//! converted, else checked in place against the constraints being added;
//! then the new catalog row, and the indexes being added.
//!
//! A rewrite is PostgreSQL's: the rows this transaction sees go into new
//! storage, which the new catalog row names, so that a crash or an abort
//! leaves the old storage and the old row, and a commit the new ones,
//! never a mixture (CATALOG-MVCC). Like PostgreSQL's, it is not
//! MVCC-safe: a transaction whose snapshot is older than the commit sees
//! the table empty.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

use snapscale_engine::catalog::{Heap, RelEntry, Row};
use snapscale_engine::errors::storage_error;
use snapscale_engine::redo::Redo;
use snapscale_engine::sequence::OwnedBy;
use snapscale_engine::{Liveness, Outcome};
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, Value};

use super::Executor;
use crate::expr::Expr;
use crate::output::Output;
use crate::plan::{AlterTable, CreateTable, Rel};

impl Executor<'_> {
    pub(crate) async fn alter_table(&mut self, a: &AlterTable) -> Result<Output, SqlError> {
        for (code, n) in &a.notices {
            self.xact.notice(*code, n.clone());
        }
        for (code, n) in &a.warnings {
            self.xact.warning(*code, n.clone());
        }
        // Identity columns' sequences: altered, or dropped with the
        // identity (the column's new definition no longer names them).
        for (seq, def, restart) in &a.alter_sequences {
            self.alter_sequence(seq, def, *restart).await?;
        }
        if !a.drop_sequences.is_empty() {
            let targets: Vec<(String, Option<Rel>)> =
                a.drop_sequences.iter().map(|r| (r.entry.name.clone(), Some(r.clone()))).collect();
            self.drop_tables(&targets, crate::plan::RelKind::Sequence).await?;
        }
        let rel = &a.rel;
        let db = Arc::clone(&self.xact.db);
        let mut entry = a.new.clone();
        if let Some(name) = &a.rename {
            entry.name = name.clone();
        }
        let serials = self.create_serials(a).await?;
        let heap = match &a.rewrite {
            Some(exprs) => {
                let mut exprs = exprs.clone();
                for (c, e) in serials {
                    exprs[c] = e;
                }
                // Every row stored anew holds every column (MISSING-COLUMN).
                // PostgreSQL drops a column without a rewrite, so its
                // catalog goes on showing the others' missing values then;
                // any other rewrite clears them, as there.
                if !exprs.iter().all(|e| matches!(e, Expr::Column(_))) {
                    for col in &mut entry.columns {
                        col.missing = None;
                    }
                }
                let storage = db.catalog.create_storage();
                self.xact.created_storage(storage);
                self.xact.dropped_storage(rel.entry.storage);
                entry.storage = storage;
                let heap = db.catalog.storage(storage).expect("created above");
                // CATALOG-REDO: the definition naming the new storage comes
                // before the rows replay puts in it.
                self.xact.log_change(&entry, Redo::Catalog(Arc::new(entry.clone()))).await?;
                self.xact.prepare_write()?;
                for row in self.live_rows(rel) {
                    self.xact.check_cancel()?;
                    let mut new = self
                        .evaluate(|ex| {
                            let cx = ex.ctx(&row);
                            exprs.iter().map(|e| e.eval(&cx)).collect::<Result<Vec<Value>, SqlError>>()
                        })
                        .await?;
                    self.check_altered_row(&entry, a, &new, true).await?;
                    // The row keeps its id (ROW-ID).
                    new.push(row.last().cloned().unwrap_or(Value::Null));
                    let new = Row::from(new);
                    heap.table.insert(&mut self.xact.session, new.clone()).map_err(storage_error)?;
                    self.xact.log_change(&entry, Redo::Insert { storage, row: new }).await?;
                }
                // Relaxed (both): no data is published through the counter;
                // the table is locked AccessExclusive, so nothing takes ids
                // from the old storage meanwhile.
                heap.next_row_id.store(rel.heap.next_row_id.load(Relaxed), Relaxed);
                self.xact.touch(&heap);
                heap
            }
            None => {
                // MISSING-COLUMN: each added column's value for the rows
                // there are, computed once (PostgreSQL computes it even
                // for an empty table, and so fails where it fails).
                for (c, e) in &a.missing {
                    let v = self.evaluate(|ex| e.eval(&ex.ctx(&[]))).await?;
                    entry.columns[*c].missing = Some(v);
                }
                // A NOT NULL column added with a value is not NULL in any
                // row there is; any other is checked on every row.
                let given = |c: &usize| {
                    a.missing.iter().any(|(m, _)| m == c)
                        && !matches!(entry.columns[*c].missing, Some(Value::Null))
                };
                if !a.validate.is_empty() || a.not_null.iter().any(|c| !given(c)) {
                    for row in self.live_rows(rel) {
                        self.xact.check_cancel()?;
                        let row = entry.complete(row);
                        self.check_altered_row(&entry, a, &row, false).await?;
                    }
                }
                Arc::clone(&rel.heap)
            }
        };
        // Statistics of the columns still there with their types stay
        // (STATS-SLOT): a dropped or retyped column's go.
        let kept: Vec<(String, snapscale_values::SqlType)> =
            entry.columns.iter().map(|c| (c.name.clone(), c.ty)).collect();
        if a.rewrite.is_some() {
            heap.stats.inherit(&rel.heap.stats, &kept);
        } else {
            heap.stats.retain_columns(&kept);
        }
        // A rewritten table's indexes are built anew in its new storage.
        for def in &entry.indexes {
            heap.index(&entry, def);
        }
        for index in &a.indexes {
            self.index_into(&heap, &mut entry, index, false)?;
        }
        for fk in entry.foreign_keys.iter_mut().filter(|f| f.oid == 0) {
            fk.oid = db.catalog.new_oid();
        }
        if entry.foreign_keys.iter().any(|f| f.parent == entry.oid)
            && !entry.referenced_by.contains(&entry.oid)
        {
            entry.referenced_by.push(entry.oid);
        }
        let entry = Arc::new(entry);
        if a.rewrite.is_none() || !a.indexes.is_empty() {
            // CATALOG-REDO: the whole new definition.
            self.xact.log_change(&entry, Redo::Catalog(Arc::clone(&entry))).await?;
        }
        let new = self.replace_catalog_row(rel, Arc::clone(&entry), heap, a.rename.is_some())?;
        for (old, new) in &a.renamed_columns {
            // VIEW-TEXT: the views that name the column follow it.
            self.rewrite_readers(&rel.entry, |query| crate::bind::rename_column_in(query, old, new)).await?;
        }
        if a.rename.is_some() {
            // VIEW-TEXT: the views that read it go on reading it.
            self.rewrite_readers(&rel.entry, |query| {
                crate::bind::rename_relation_in(query, &rel.entry.name, &entry.name, rel.entry.namespace)
            })
            .await?;
        }
        let before: Vec<u32> = rel.entry.foreign_keys.iter().map(|f| f.parent).collect();
        self.reference_parents(&entry, &before).await?;
        // Foreign keys added or validated: every row's key present.
        for name in &a.validate_fks {
            let Some(fk) = entry.foreign_keys.iter().find(|f| &f.name == name) else { continue };
            let parent = if fk.parent == entry.oid {
                new.clone()
            } else {
                match self.xact.relation_by_oid(fk.parent)? {
                    Some(p) => p,
                    None => continue,
                }
            };
            for row in self.live_rows(&new) {
                self.xact.check_cancel()?;
                self.ri_check(&new, fk, &parent, &row).await?;
            }
        }
        Ok(Output::Command(a.tag.into()))
    }

    /// The sequences of the SERIAL columns added, owned by them; for each,
    /// the column and its `nextval` (which numbers the existing rows).
    async fn create_serials(&mut self, a: &AlterTable) -> Result<Vec<(usize, Expr)>, SqlError> {
        let mut out = Vec::new();
        for (c, s) in &a.serials {
            let mut def = s.def.clone();
            def.owned_by = Some(OwnedBy {
                table_oid: a.rel.entry.oid,
                table: a.rel.entry.name.clone(),
                column: s.column.clone(),
            });
            let sequence = CreateTable::sequence(s.sequence.clone(), a.rel.entry.temp_owner.is_some(), def);
            let Some(Rel { entry, .. }) = self.create_relation(&sequence).await? else { continue };
            let args = vec![
                Expr::Const(Value::Int(entry.storage as i64)),
                Expr::Const(Value::Text(entry.name.clone())),
                Expr::Const(Value::Bool(entry.temp_owner.is_none())),
            ];
            if s.numbers_rows {
                out.push((*c, Expr::Func(crate::expr::Func::NextVal, args)));
            }
        }
        Ok(out)
    }

    /// The rows of `rel` this transaction sees.
    fn live_rows(&mut self, rel: &Rel) -> Vec<Row> {
        rel.all_versions()
            .into_iter()
            .filter(|(tid, _)| matches!(rel.heap.table.liveness(&self.xact.session, *tid), Liveness::Live))
            .map(|(_, row)| row)
            .collect()
    }

    /// Checks a row of the altered table against the constraints the
    /// statement adds or validates (after a rewrite, against every NOT NULL).
    async fn check_altered_row(
        &mut self,
        entry: &RelEntry,
        a: &AlterTable,
        row: &[Value],
        rewritten: bool,
    ) -> Result<(), SqlError> {
        for (c, col) in entry.columns.iter().enumerate() {
            let checked = a.not_null.contains(&c) || (rewritten && col.not_null);
            if checked && matches!(row.get(c), Some(Value::Null)) {
                return Err(SqlError::new(
                    SqlState::NOT_NULL_VIOLATION,
                    format!("column \"{}\" of relation \"{}\" contains null values", col.name, entry.name),
                )
                .on_table(super::modify::schema_of(entry), &entry.name)
                .on_column(&col.name));
            }
        }
        if a.validate.is_empty() {
            return Ok(());
        }
        match self.first_failing_check(&a.validate, row, false).await?.map(|i| &a.validate[i].name) {
            None => Ok(()),
            Some(name) => Err(SqlError::new(
                SqlState::CHECK_VIOLATION,
                format!("check constraint \"{name}\" of relation \"{}\" is violated by some row", entry.name),
            )
            .on_table(super::modify::schema_of(entry), &entry.name)
            .on_constraint(name)),
        }
    }

    /// Replaces `rel`'s catalog row with `entry` (its rows in `heap`); a
    /// new name is checked free under the catalog's name lock, held until
    /// the row has it (NAME-UNIQUE).
    fn replace_catalog_row(
        &mut self,
        rel: &Rel,
        entry: Arc<RelEntry>,
        heap: Arc<Heap>,
        renamed: bool,
    ) -> Result<Rel, SqlError> {
        self.xact.prepare_write()?;
        let db = Arc::clone(&self.xact.db);
        let tid = {
            let _names = renamed.then(|| db.catalog.names.lock().expect("catalog name lock poisoned"));
            if renamed {
                for (tid, other) in db.catalog.table.all_versions() {
                    // One name per schema, a relation's or a type's.
                    let same = other.name == entry.name
                        && other.temp_owner == entry.temp_owner
                        && (entry.temp_owner.is_some() || other.namespace == entry.namespace)
                        && !other.is_schema;
                    if same && !matches!(db.catalog.table.liveness(&self.xact.session, tid), Liveness::Dead) {
                        return Err(SqlError::new(
                            SqlState::DUPLICATE_TABLE,
                            format!("relation \"{}\" already exists", entry.name),
                        ));
                    }
                }
            }
            // The table is locked against every other change of its row.
            match db.catalog.table.update(&mut self.xact.session, rel.catalog_tid, Arc::clone(&entry)) {
                Ok(Outcome::Ok(tid)) => tid,
                _ => return Err(SqlError::new(SqlState::INTERNAL_ERROR, "tuple concurrently updated")),
            }
        };
        self.xact.invalidate(entry.oid);
        if renamed && entry.temp_owner.is_none() {
            // REL-KEY: the new name may come first along some search_path.
            self.xact.invalidate_names();
        }
        self.xact.cache.remove_oid(entry.oid);
        let new = Rel { entry, heap, catalog_tid: tid };
        self.xact.remember(new.clone())?;
        Ok(new)
    }
}
