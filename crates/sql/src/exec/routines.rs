//! CREATE [OR REPLACE] FUNCTION and DROP FUNCTION: routine rows changed
//! inside the transaction as types are (exec/types.rs), each under
//! AccessExclusive on the routine's oid until commit (ROUTINE-ROWS).

use std::sync::Arc;

use snapscale_engine::catalog::RelEntry;
use snapscale_engine::redo::Redo;
use snapscale_engine::routines::{RoutineDef, RoutineKind};
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
        let tag = match def.kind {
            RoutineKind::Procedure => "CREATE PROCEDURE",
            RoutineKind::Aggregate => "CREATE AGGREGATE",
            RoutineKind::Function => "CREATE FUNCTION",
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
        if let (Some(was), Some(now)) = (&old.aggregate, &def.aggregate) {
            check_aggregate_replacement(name, was, now)?;
        }
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

    /// DROP FUNCTION / PROCEDURE / ROUTINE / AGGREGATE: each routine, and
    /// with `cascade` the aggregates that call it (without, 2BP01 while
    /// one does).
    pub(crate) async fn drop_routines(
        &mut self,
        targets: &[(String, Option<u32>)],
        tag: &str,
        cascade: bool,
    ) -> Result<Output, SqlError> {
        let mut dropped: Vec<u32> = Vec::new();
        // An aggregate that is itself being dropped is no dependent.
        let named: Vec<u32> = targets.iter().filter_map(|(_, oid)| *oid).collect();
        for (name, oid) in targets {
            let Some(oid) = *oid else {
                self.xact.notice(SqlState::SUCCESSFUL_COMPLETION, format!("{name} does not exist, skipping"));
                continue;
            };
            if dropped.contains(&oid) {
                continue;
            }
            let dependents: Vec<Arc<RelEntry>> = self
                .xact
                .catalog_entries()?
                .into_iter()
                .map(|(_, e)| e)
                .filter(|e| !dropped.contains(&e.oid) && !named.contains(&e.oid))
                .filter(|e| {
                    e.routine.as_ref().and_then(|r| r.aggregate.as_ref()).is_some_and(|a| calls(a, oid))
                })
                .collect();
            if !dependents.is_empty() {
                let this = match self.xact.routine_by_oid(oid)? {
                    Some((_, e)) => self.routine_description(&e)?,
                    None => String::new(),
                };
                let each: Vec<String> =
                    dependents.iter().map(|e| self.routine_description(e)).collect::<Result<_, _>>()?;
                if !cascade {
                    let detail: Vec<String> = each.iter().map(|d| format!("{d} depends on {this}")).collect();
                    return Err(SqlError::new(
                        SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                        format!("cannot drop {this} because other objects depend on it"),
                    )
                    .with_detail(detail.join("\n"))
                    .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
                }
                match each.as_slice() {
                    [one] => {
                        self.xact.notice(SqlState::SUCCESSFUL_COMPLETION, format!("drop cascades to {one}"))
                    }
                    many => {
                        let detail: Vec<String> =
                            many.iter().map(|d| format!("drop cascades to {d}")).collect();
                        self.xact.notice_with_detail(
                            SqlState::SUCCESSFUL_COMPLETION,
                            format!("drop cascades to {} other objects", many.len()),
                            Some(detail.join("\n")),
                        );
                    }
                }
                for e in &dependents {
                    self.drop_routine(e.oid).await?;
                    dropped.push(e.oid);
                }
            }
            self.drop_routine(oid).await?;
            dropped.push(oid);
        }
        Ok(Output::Command(tag.into()))
    }

    /// A routine as PostgreSQL's dependency messages name it: `function
    /// name(type,type)`, the name qualified when its schema is not on the
    /// search_path.
    fn routine_description(&mut self, e: &RelEntry) -> Result<String, SqlError> {
        let types = e.routine.as_ref().map(|r| r.input_type_list()).unwrap_or_default();
        let word = match e.routine.as_ref().map(|r| r.kind) {
            Some(RoutineKind::Procedure) => "procedure",
            _ => "function",
        };
        let schema = self.xact.namespace_name(e.namespace)?.unwrap_or_default();
        let name = if e.temp_owner.is_none() && !self.xact.search_path().contains(&schema) {
            format!("{schema}.{}", e.name)
        } else {
            e.name.clone()
        };
        Ok(format!("{word} {name}({types})"))
    }

    async fn drop_routine(&mut self, oid: u32) -> Result<(), SqlError> {
        let rel = self.locked_routine(oid).await?;
        self.change_catalog(&rel, None).await?;
        // CATALOG-REDO: a drop is logged as the oid.
        self.xact.log_change(&rel.entry, Redo::Drop(oid)).await?;
        self.xact.dropped_storage(rel.entry.storage);
        Ok(())
    }

    /// ALTER AGGREGATE … SET SCHEMA: routine `oid` in schema `namespace`
    /// (42723 when one there has its name and inputs).
    pub(crate) async fn move_routine(
        &mut self,
        oid: u32,
        namespace: u32,
        tag: &str,
    ) -> Result<Output, SqlError> {
        let rel = self.locked_routine(oid).await?;
        if rel.entry.namespace == namespace {
            return Ok(Output::Command(tag.into()));
        }
        let moved = Arc::new(RelEntry { namespace, ..(*rel.entry).clone() });
        let def = moved.routine.clone().expect("a routine row");
        self.check_routine_name_free(&moved, &moved.name, &def)?;
        self.change_catalog(&rel, Some(Arc::clone(&moved))).await?;
        self.xact.log_change(&moved, Redo::Catalog(moved.clone())).await?;
        // It may now come first, or no longer, along a search_path.
        self.xact.invalidate_names();
        Ok(Output::Command(tag.into()))
    }

    /// COMMENT ON FUNCTION / PROCEDURE / ROUTINE / AGGREGATE: routine
    /// `oid` with its comment set (or removed).
    pub(crate) async fn comment_routine(
        &mut self,
        oid: u32,
        text: Option<String>,
    ) -> Result<Output, SqlError> {
        let rel = self.locked_routine(oid).await?;
        self.rewrite_entry(&rel, |e| e.set_comment(snapscale_engine::catalog::Described::Relation, text))
            .await?;
        Ok(Output::Command("COMMENT".into()))
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
    format!("{name}({})", def.input_type_list())
}

/// `name(type, type)` as PostgreSQL's errors name a routine.
fn signature_spaced(name: &str, def: &RoutineDef) -> String {
    let types: Vec<&str> = def.input_types().iter().map(|t| t.name()).collect();
    format!("{name}({})", types.join(", "))
}

/// What CREATE OR REPLACE may not change of an existing routine: its kind,
/// its result, its input parameters' names, and the defaults it has.
fn check_replacement(old: &RoutineDef, new: &RoutineDef, signature: &str) -> Result<(), SqlError> {
    let word = if old.kind == RoutineKind::Aggregate { "AGGREGATE" } else { "FUNCTION" };
    let refuse = |message: String| {
        SqlError::new(SqlState::INVALID_FUNCTION_DEFINITION, message)
            .with_hint(format!("Use DROP {word} {signature} first."))
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

/// What CREATE OR REPLACE AGGREGATE may not change of an existing
/// aggregate besides a function's: its kind and its direct arguments.
fn check_aggregate_replacement(
    name: &str,
    old: &snapscale_engine::routines::AggregateDef,
    new: &snapscale_engine::routines::AggregateDef,
) -> Result<(), SqlError> {
    if old.kind != new.kind {
        let what = match old.kind {
            b'o' => "an ordered-set aggregate",
            b'h' => "a hypothetical-set aggregate",
            _ => "an ordinary aggregate function",
        };
        return Err(SqlError::new(SqlState::WRONG_OBJECT_TYPE, "cannot change routine kind")
            .with_detail(format!("\"{name}\" is {what}.")));
    }
    if old.direct_args != new.direct_args {
        return Err(SqlError::new(
            SqlState::INVALID_FUNCTION_DEFINITION,
            "cannot change number of direct arguments of an aggregate function",
        ));
    }
    Ok(())
}

/// Whether aggregate `a` calls routine `oid`.
fn calls(a: &snapscale_engine::routines::AggregateDef, oid: u32) -> bool {
    std::iter::once(&a.transfn)
        .chain(
            [&a.finalfn, &a.combinefn, &a.serialfn, &a.deserialfn, &a.mtransfn, &a.minvtransfn, &a.mfinalfn]
                .into_iter()
                .flatten(),
        )
        .any(|f| f.oid == oid)
}
