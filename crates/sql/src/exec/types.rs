//! CREATE / ALTER / DROP TYPE: catalog rows changed inside the transaction,
//! as relations are (exec/ddl.rs), each under AccessExclusive on the
//! type's oid until commit.

use std::sync::Arc;

use snapscale_engine::catalog::RelEntry;
use snapscale_engine::redo::Redo;
use snapscale_engine::user_types::{EnumDef, LabelError, TypeDef};
use snapscale_engine::{LockMode, Rel};
use snapscale_sqlstate::SqlState;
use snapscale_values::{Elem, SqlError, SqlType};

use super::Executor;
use crate::output::Output;
use crate::plan::{AlterTypeOp, TypeSpec};

impl Executor<'_> {
    pub(crate) async fn create_type(&mut self, name: &str, spec: &TypeSpec) -> Result<Output, SqlError> {
        let mut build = |db: &snapscale_engine::Database| {
            // Two oids in a row: the type's, and its array type's.
            let oid = db.catalog.new_oids(2);
            let def = match spec {
                TypeSpec::Enum(labels) => TypeDef::Enum(EnumDef::new(oid, labels, || db.catalog.new_oid())),
                TypeSpec::Domain(d) => TypeDef::Domain(d.clone()),
                TypeSpec::Composite(_) => TypeDef::Composite,
            };
            RelEntry {
                oid,
                name: name.to_owned(),
                temp_owner: None,
                storage: db.catalog.create_storage(),
                columns: match spec {
                    TypeSpec::Composite(columns) => columns.clone(),
                    _ => Vec::new(),
                },
                indexes: Vec::new(),
                sequence: None,
                user_type: Some(def),
            }
        };
        if self.insert_catalog_row(name, None, &mut build).await?.is_err() {
            return Err(exists(name));
        }
        let tag = if matches!(spec, TypeSpec::Domain(_)) { "CREATE DOMAIN" } else { "CREATE TYPE" };
        Ok(Output::Command(tag.into()))
    }

    /// The type `oid` as this transaction sees it once it holds the lock
    /// on it, as a [`Rel`] over its (empty) storage.
    async fn locked_type(&mut self, oid: u32) -> Result<Rel, SqlError> {
        self.xact.lock_relation(oid, LockMode::AccessExclusive).await?;
        self.xact.accept_invalidations();
        let (tid, entry) = self.xact.user_type_by_oid(oid)?.ok_or_else(|| {
            SqlError::new(SqlState::UNDEFINED_OBJECT, format!("type with OID {oid} does not exist"))
        })?;
        let heap = self.xact.db.catalog.storage(entry.storage).ok_or_else(|| {
            SqlError::new(SqlState::INTERNAL_ERROR, format!("storage of type {} is missing", entry.name))
        })?;
        Ok(Rel { entry, heap, catalog_tid: tid })
    }

    pub(crate) async fn alter_type(&mut self, oid: u32, op: &AlterTypeOp) -> Result<Output, SqlError> {
        let rel = self.locked_type(oid).await?;
        let xid = self.xact.prepare_write()?;
        let mut new = (*rel.entry).clone();
        let type_name = new.name.clone();
        match (op, &mut new.user_type) {
            (AlterTypeOp::Rename(to), _) => {
                if self.xact.user_type(to)?.is_some() || self.xact.relation(to)?.is_some() {
                    return Err(exists(to));
                }
                new.name = to.clone();
            }
            (AlterTypeOp::AddValue { label, if_not_exists, neighbour }, Some(TypeDef::Enum(def))) => {
                let label_oid = self.xact.db.catalog.new_oid();
                let neighbour = neighbour.as_ref().map(|(n, before)| (n.as_str(), *before));
                match def.add(oid, label, neighbour, label_oid, xid.0) {
                    Ok(()) => {}
                    Err(LabelError::Exists) if *if_not_exists => {
                        self.xact.notice(
                            SqlState::DUPLICATE_OBJECT,
                            format!("enum label \"{label}\" already exists, skipping"),
                        );
                        return Ok(Output::Command("ALTER TYPE".into()));
                    }
                    Err(LabelError::Exists) => return Err(label_exists(label)),
                    Err(LabelError::NoNeighbour) => {
                        return Err(not_a_label(neighbour.map(|n| n.0).unwrap_or_default()))
                    }
                    Err(LabelError::NoRoom) => {
                        return Err(SqlError::new(
                            SqlState::PROGRAM_LIMIT_EXCEEDED,
                            format!(
                            "no room for enum label \"{label}\" before the first label of type {type_name}"
                        ),
                        ))
                    }
                }
            }
            (AlterTypeOp::RenameValue { from, to }, Some(TypeDef::Enum(def))) => {
                let at = def.position(from).ok_or_else(|| not_a_label(from))?;
                if def.position(to).is_some() {
                    return Err(label_exists(to));
                }
                let name: Arc<str> = to.as_str().into();
                def.labels[at].name = Arc::clone(&name);
                let cell = Arc::clone(&def.labels[at].cell);
                self.xact.rename_label(&cell, name);
            }
            _ => {
                return Err(SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("{type_name} is not an enum")))
            }
        }
        let new = Arc::new(new);
        // CATALOG-REDO: the whole new definition.
        self.xact.log_change(&new, Redo::Catalog(Arc::clone(&new))).await?;
        self.change_catalog(&rel, Some(new)).await?;
        Ok(Output::Command("ALTER TYPE".into()))
    }

    pub(crate) async fn drop_types(
        &mut self,
        targets: &[(String, Option<u32>)],
        domain: bool,
    ) -> Result<Output, SqlError> {
        for (name, oid) in targets {
            let Some(oid) = *oid else {
                self.xact.notice(
                    SqlState::SUCCESSFUL_COMPLETION,
                    format!("type \"{name}\" does not exist, skipping"),
                );
                continue;
            };
            let rel = self.locked_type(oid).await?;
            let dependents = self.type_dependents(oid)?;
            if !dependents.is_empty() {
                return Err(SqlError::new(
                    SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!("cannot drop type {} because other objects depend on it", rel.entry.name),
                )
                .with_detail(dependents.join("\n"))
                .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
            }
            self.change_catalog(&rel, None).await?;
            // CATALOG-REDO: a drop is logged as the oid.
            self.xact.log_change(&rel.entry, Redo::Drop(oid)).await?;
            self.xact.dropped_storage(rel.entry.storage);
        }
        Ok(Output::Command(if domain { "DROP DOMAIN" } else { "DROP TYPE" }.into()))
    }

    /// What depends on type `oid`, as PostgreSQL's DETAIL lines name it:
    /// each dependent in the order it was created, a domain followed by
    /// what depends on it in turn.
    fn type_dependents(&mut self, oid: u32) -> Result<Vec<String>, SqlError> {
        let mut entries: Vec<_> = self.xact.catalog_entries()?.into_iter().map(|(_, e)| e).collect();
        entries.sort_by_key(|e| e.oid);
        let mut out = Vec::new();
        dependents_of(&entries, oid, &mut out, 0);
        Ok(out)
    }
}

fn dependents_of(entries: &[Arc<RelEntry>], oid: u32, out: &mut Vec<String>, depth: usize) {
    let Some(name) = entries.iter().find(|e| e.oid == oid).map(|e| e.name.clone()) else { return };
    // The type's array type depends on it in turn, and PostgreSQL names
    // what uses the array type first.
    let of_array =
        |ty: SqlType| matches!(ty, SqlType::Array(Elem::Enum(u) | Elem::Composite(u)) if u.oid() == oid);
    let of_type = |ty: SqlType| matches!(ty, SqlType::Enum(u) | SqlType::Composite(u) if u.oid() == oid);
    for array in [true, false] {
        let uses = |ty: SqlType| if array { of_array(ty) } else { of_type(ty) };
        let named = if array { format!("{name}[]") } else { name.clone() };
        for e in entries {
            match &e.user_type {
                // A domain over a domain names the one under it (a chain
                // is as deep as the domains created, each over an earlier
                // one).
                Some(TypeDef::Domain(d))
                    if (!array && d.parent == Some(oid) || uses(d.base)) && depth < entries.len() =>
                {
                    out.push(format!("type {} depends on type {named}", e.name));
                    dependents_of(entries, e.oid, out, depth + 1);
                }
                Some(TypeDef::Composite) => {
                    for c in e
                        .columns
                        .iter()
                        .filter(|c| !array && c.domain == Some(oid) || (c.domain.is_none() && uses(c.ty)))
                    {
                        out.push(format!(
                            "column {} of composite type {} depends on type {named}",
                            c.name, e.name
                        ));
                    }
                }
                None if e.sequence.is_none() => {
                    for c in e
                        .columns
                        .iter()
                        .filter(|c| !array && c.domain == Some(oid) || (c.domain.is_none() && uses(c.ty)))
                    {
                        out.push(format!("column {} of table {} depends on type {named}", c.name, e.name));
                    }
                }
                _ => {}
            }
        }
    }
}

fn exists(name: &str) -> SqlError {
    SqlError::new(SqlState::DUPLICATE_OBJECT, format!("type \"{name}\" already exists"))
}

fn label_exists(label: &str) -> SqlError {
    SqlError::new(SqlState::DUPLICATE_OBJECT, format!("enum label \"{label}\" already exists"))
}

fn not_a_label(label: &str) -> SqlError {
    SqlError::new(SqlState::INVALID_PARAMETER_VALUE, format!("\"{label}\" is not an existing enum label"))
}
