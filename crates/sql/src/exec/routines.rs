//! CREATE [OR REPLACE] FUNCTION and DROP FUNCTION: routine rows changed
//! inside the transaction as types are (exec/types.rs), each under
//! AccessExclusive on the routine's oid until commit (ROUTINE-ROWS).

use std::sync::Arc;

use snapscale_engine::catalog::RelEntry;
use snapscale_engine::redo::Redo;
use snapscale_engine::routines::RoutineDef;
use snapscale_engine::{LockMode, Rel};
use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;

use super::ddl::RowKind;
use super::Executor;
use crate::output::Output;

impl Executor<'_> {
    pub(crate) async fn create_routine(
        &mut self,
        key: &str,
        def: &RoutineDef,
        replace: bool,
    ) -> Result<Output, SqlError> {
        let creation = self.creation_namespace(key, false).await?;
        let name = creation.name.as_str();
        snapscale_engine::routines::note_defined();
        let mut build = |db: &snapscale_engine::Database| RelEntry {
            routine: Some(def.clone()),
            ..RelEntry::empty(db.catalog.new_oid(), name, creation.namespace, db.catalog.create_storage())
        };
        let kind = RowKind::Routine(def.input_types());
        let tag = if def.kind == snapscale_engine::routines::RoutineKind::Procedure {
            "CREATE PROCEDURE"
        } else {
            "CREATE FUNCTION"
        };
        let existing = match self.insert_catalog_row(name, creation.namespace, None, kind, &mut build).await?
        {
            Ok(_) => return Ok(Output::Command(tag.into())),
            Err(existing) => existing,
        };
        if !replace {
            return Err(SqlError::new(
                SqlState::DUPLICATE_FUNCTION,
                format!("function \"{name}\" already exists with same argument types"),
            ));
        }
        let rel = self.locked_routine(existing.oid).await?;
        let old = rel.entry.routine.as_ref().expect("a routine row");
        if old.kind != def.kind {
            return Err(crate::bind::routine_kind_changed(&rel.entry));
        }
        check_replacement(old, def, &signature(name, old))?;
        self.replace_routine(&rel, def).await?;
        Ok(Output::Command(tag.into()))
    }

    /// ALTER FUNCTION / PROCEDURE / ROUTINE: routine `oid` with its
    /// attributes as `def` has them, renamed to `rename` if given.
    pub(crate) async fn alter_routine(
        &mut self,
        oid: u32,
        def: &RoutineDef,
        tag: &str,
        rename: Option<&str>,
    ) -> Result<Output, SqlError> {
        let rel = self.locked_routine(oid).await?;
        let Some(new) = rename else {
            self.replace_routine(&rel, def).await?;
            return Ok(Output::Command(tag.into()));
        };
        self.check_routine_name_free(&rel.entry, new, def)?;
        let entry =
            Arc::new(RelEntry { routine: Some(def.clone()), name: new.to_owned(), ..(*rel.entry).clone() });
        self.change_catalog(&rel, Some(Arc::clone(&entry))).await?;
        self.xact.log_change(&entry, Redo::Catalog(entry.clone())).await?;
        // The new name may come first along some search_path (REL-KEY).
        self.xact.invalidate_names();
        Ok(Output::Command(tag.into()))
    }

    /// 42723 when another routine of `entry`'s schema already has `name`
    /// and `def`'s input types (pg_proc's unique key).
    fn check_routine_name_free(
        &mut self,
        entry: &RelEntry,
        name: &str,
        def: &RoutineDef,
    ) -> Result<(), SqlError> {
        let db = Arc::clone(&self.xact.db);
        let inputs = def.input_types();
        let taken = db.catalog.table.all_versions().into_iter().any(|(tid, other)| {
            other.oid != entry.oid
                && other.name == name
                && other.namespace == entry.namespace
                && other.temp_owner == entry.temp_owner
                && other.routine.as_ref().is_some_and(|r| r.input_types() == inputs)
                && matches!(
                    db.catalog.table.liveness(&self.xact.session, tid),
                    snapscale_engine::Liveness::Live
                )
        });
        if !taken {
            return Ok(());
        }
        let schema = self.xact.namespace_name(entry.namespace)?.unwrap_or_default();
        Err(SqlError::new(
            SqlState::DUPLICATE_FUNCTION,
            format!("function {} already exists in schema \"{schema}\"", signature_spaced(name, def)),
        ))
    }

    /// The routine row `rel` with definition `def`, logged whole
    /// (CATALOG-REDO).
    async fn replace_routine(
        &mut self,
        rel: &snapscale_engine::catalog::Rel,
        def: &RoutineDef,
    ) -> Result<(), SqlError> {
        let entry = Arc::new(RelEntry { routine: Some(def.clone()), ..(*rel.entry).clone() });
        self.change_catalog(rel, Some(Arc::clone(&entry))).await?;
        self.xact.log_change(&entry, Redo::Catalog(entry.clone())).await?;
        Ok(())
    }

    /// COMMENT ON FUNCTION: the routine row with its comment set (or
    /// gone), logged whole.
    pub(crate) async fn comment_routine(&mut self, oid: u32, text: Option<String>) -> Result<Output, SqlError> {
        let rel = self.locked_routine(oid).await?;
        let mut entry = (*rel.entry).clone();
        entry.set_comment(snapscale_engine::catalog::Described::Relation, text);
        let entry = Arc::new(entry);
        self.change_catalog(&rel, Some(Arc::clone(&entry))).await?;
        self.xact.log_change(&entry, Redo::Catalog(entry.clone())).await?;
        Ok(Output::Command("COMMENT".into()))
    }

    pub(crate) async fn drop_routines(
        &mut self,
        targets: &[(String, Option<u32>)],
        tag: &str,
    ) -> Result<Output, SqlError> {
        for (name, oid) in targets {
            let Some(oid) = *oid else {
                self.xact.notice(SqlState::SUCCESSFUL_COMPLETION, format!("{name} does not exist, skipping"));
                continue;
            };
            let rel = self.locked_routine(oid).await?;
            self.change_catalog(&rel, None).await?;
            // CATALOG-REDO: a drop is logged as the oid.
            self.xact.log_change(&rel.entry, Redo::Drop(oid)).await?;
            self.xact.dropped_storage(rel.entry.storage);
        }
        Ok(Output::Command(tag.into()))
    }

    /// The routine `oid` as this transaction sees it once it holds the
    /// lock on it, as a [`Rel`] over its (empty) storage.
    async fn locked_routine(&mut self, oid: u32) -> Result<Rel, SqlError> {
        self.xact.lock_relation(oid, LockMode::AccessExclusive).await?;
        self.xact.accept_invalidations();
        let (tid, entry) = self.xact.routine_by_oid(oid)?.ok_or_else(|| {
            SqlError::new(SqlState::UNDEFINED_FUNCTION, format!("function with OID {oid} does not exist"))
        })?;
        let heap = self.xact.db.catalog.storage(entry.storage).ok_or_else(|| {
            SqlError::new(SqlState::INTERNAL_ERROR, format!("storage of function {} is missing", entry.name))
        })?;
        Ok(Rel { entry, heap, catalog_tid: tid })
    }
}

/// `name(type,type)` as PostgreSQL's hints name a routine.
fn signature(name: &str, def: &RoutineDef) -> String {
    let types: Vec<&str> = def.input_types().iter().map(|t| t.name()).collect();
    format!("{name}({})", types.join(","))
}

/// `name(type, type)` as PostgreSQL's errors name a routine.
fn signature_spaced(name: &str, def: &RoutineDef) -> String {
    let types: Vec<&str> = def.input_types().iter().map(|t| t.name()).collect();
    format!("{name}({})", types.join(", "))
}

/// What CREATE OR REPLACE may not change of an existing routine: its kind,
/// its result, its input parameters' names, and the defaults it has.
fn check_replacement(old: &RoutineDef, new: &RoutineDef, signature: &str) -> Result<(), SqlError> {
    let refuse = |message: String| {
        SqlError::new(SqlState::INVALID_FUNCTION_DEFINITION, message)
            .with_hint(format!("Use DROP FUNCTION {signature} first."))
    };
    if old.returns != new.returns || old.returns_set != new.returns_set {
        return Err(refuse("cannot change return type of existing function".into()));
    }
    // The row type OUT parameters define matters where the result is a
    // record (several of them), as PostgreSQL compares it.
    let record = matches!(new.returns, snapscale_values::SqlType::Record(_));
    if record && old.result_columns() != new.result_columns() {
        return Err(refuse("cannot change return type of existing function".into())
            .with_detail("Row type defined by OUT parameters is different."));
    }
    let inputs = |d: &RoutineDef| d.args.iter().filter(|a| a.mode.is_input()).cloned().collect::<Vec<_>>();
    let (was, now) = (inputs(old), inputs(new));
    for (a, b) in was.iter().zip(&now) {
        if !a.name.is_empty() && a.name != b.name {
            return Err(refuse(format!("cannot change name of input parameter \"{}\"", a.name)));
        }
    }
    let defaults =
        |v: &[snapscale_engine::routines::RoutineArg]| v.iter().filter(|a| a.default.is_some()).count();
    if defaults(&now) < defaults(&was) {
        return Err(refuse("cannot remove parameter defaults from existing function".into()));
    }
    Ok(())
}
