//! CREATE / ALTER / DROP TYPE: catalog rows changed inside the transaction,
//! as relations are (exec/ddl.rs), each under AccessExclusive on the
//! type's oid until commit.

use std::sync::Arc;

use snapscale_engine::catalog::RelEntry;
use snapscale_engine::redo::Redo;
use snapscale_engine::user_types::{CheckDef, EnumDef, LabelError, TypeDef};
use snapscale_engine::{LockMode, Rel};
use snapscale_sqlstate::SqlState;
use snapscale_values::{Elem, SqlError, SqlType};

use super::Executor;
use crate::output::Output;
use crate::plan::{AlterTypeOp, TypeSpec};

impl Executor<'_> {
    pub(crate) async fn create_type(&mut self, key: &str, spec: &TypeSpec) -> Result<Output, SqlError> {
        let creation = self.creation_namespace(key, false).await?;
        let name = creation.name.as_str();
        let mut build = |db: &snapscale_engine::Database| {
            // Two oids in a row: the type's, and its array type's.
            let oid = db.catalog.new_oids(2);
            let def = match spec {
                TypeSpec::Enum(labels) => TypeDef::Enum(EnumDef::new(oid, labels, || db.catalog.new_oid())),
                TypeSpec::Domain(d) => TypeDef::Domain(d.clone()),
                TypeSpec::Composite(_) => TypeDef::Composite,
            };
            RelEntry {
                columns: match spec {
                    TypeSpec::Composite(columns) => columns.clone(),
                    _ => Vec::new(),
                },
                user_type: Some(def),
                ..RelEntry::empty(oid, name, creation.namespace, db.catalog.create_storage())
            }
        };
        if self
            .insert_catalog_row(name, creation.namespace, None, super::ddl::RowKind::Type, &mut build)
            .await?
            .is_err()
        {
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

    pub(crate) async fn alter_type(
        &mut self,
        oid: u32,
        op: &AlterTypeOp,
        domain: bool,
    ) -> Result<Output, SqlError> {
        let tag = match op {
            AlterTypeOp::Comment { .. } => "COMMENT",
            _ if domain => "ALTER DOMAIN",
            _ => "ALTER TYPE",
        };
        let rel = self.locked_type(oid).await?;
        let xid = self.xact.prepare_write()?;
        let mut new = (*rel.entry).clone();
        let type_name = new.name.clone();
        match (op, &mut new.user_type) {
            (AlterTypeOp::Comment { on, text }, _) => new.set_comment(on.clone(), text.clone()),
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
                        return Ok(Output::Command(tag.into()));
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
            (AlterTypeOp::SetDefault(d), Some(TypeDef::Domain(def))) => def.default = d.clone(),
            (AlterTypeOp::SetNotNull(on), Some(TypeDef::Domain(def))) => {
                if *on && !def.not_null {
                    self.check_domain_values(oid, None).await?;
                }
                def.not_null = *on;
            }
            (AlterTypeOp::AddCheck { name, expr, check, not_valid }, Some(TypeDef::Domain(def))) => {
                if def.checks.iter().any(|c| &c.name == name) {
                    return Err(SqlError::new(
                        SqlState::DUPLICATE_OBJECT,
                        format!("constraint \"{name}\" for domain \"{type_name}\" already exists"),
                    ));
                }
                if !not_valid {
                    self.check_domain_values(oid, Some(check)).await?;
                }
                def.checks.push(CheckDef { name: name.clone(), expr: expr.clone(), validated: !not_valid });
            }
            (AlterTypeOp::DropConstraint { name, if_exists }, Some(TypeDef::Domain(def))) => {
                match def.checks.iter().position(|c| &c.name == name) {
                    Some(at) => {
                        def.checks.remove(at);
                    }
                    None if *if_exists => {
                        self.xact.notice(
                            SqlState::SUCCESSFUL_COMPLETION,
                            format!(
                                "constraint \"{name}\" of domain \"{type_name}\" does not exist, skipping"
                            ),
                        );
                        return Ok(Output::Command(tag.into()));
                    }
                    None => return Err(crate::plan::no_domain_constraint(name, &type_name)),
                }
            }
            (AlterTypeOp::ValidateConstraint { name, check }, Some(TypeDef::Domain(def))) => {
                let Some(at) = def.checks.iter().position(|c| &c.name == name) else {
                    return Err(crate::plan::no_domain_constraint(name, &type_name));
                };
                if !def.checks[at].validated {
                    self.check_domain_values(oid, Some(check)).await?;
                    def.checks[at].validated = true;
                }
            }
            (AlterTypeOp::RenameConstraint { from, to }, Some(TypeDef::Domain(def))) => {
                let Some(at) = def.checks.iter().position(|c| &c.name == from) else {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("constraint \"{from}\" for domain {type_name} does not exist"),
                    ));
                };
                if def.checks.iter().any(|c| &c.name == to) {
                    return Err(SqlError::new(
                        SqlState::DUPLICATE_OBJECT,
                        format!("constraint \"{to}\" for domain \"{type_name}\" already exists"),
                    ));
                }
                def.checks[at].name = to.clone();
                new.rename_commented(
                    &snapscale_engine::catalog::Described::Constraint(from.clone()),
                    snapscale_engine::catalog::Described::Constraint(to.clone()),
                );
            }
            _ => {
                return Err(SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("{type_name} is not an enum")))
            }
        }
        new.prune_comments();
        let new = Arc::new(new);
        // CATALOG-REDO: the whole new definition.
        self.xact.log_change(&new, Redo::Catalog(Arc::clone(&new))).await?;
        self.change_catalog(&rel, Some(new)).await?;
        Ok(Output::Command(tag.into()))
    }

    /// Checks the values stored in every table column of domain `oid`, or
    /// of a domain over it: NOT NULL (`check` None) or a CHECK over the
    /// value. Each table is locked SHARE first, so no write to it can
    /// slip past the check.
    async fn check_domain_values(
        &mut self,
        oid: u32,
        check: Option<&crate::expr::Expr>,
    ) -> Result<(), SqlError> {
        let entries = self.xact.catalog_entries()?;
        // The domain and the domains over it, to any depth.
        let mut domains = vec![oid];
        let mut grew = true;
        while grew {
            grew = false;
            for (_, e) in &entries {
                if let Some(TypeDef::Domain(d)) = &e.user_type {
                    if d.parent.is_some_and(|p| domains.contains(&p)) && !domains.contains(&e.oid) {
                        domains.push(e.oid);
                        grew = true;
                    }
                }
            }
        }
        for (_, e) in &entries {
            if e.user_type.is_some() || e.sequence.is_some() {
                continue;
            }
            let columns: Vec<usize> = (0..e.columns.len())
                .filter(|&i| e.columns[i].domain.is_some_and(|d| domains.contains(&d)))
                .collect();
            if columns.is_empty() {
                continue;
            }
            self.xact.lock_relation(e.oid, LockMode::Share).await?;
            let Some(heap) = self.xact.db.catalog.storage(e.storage) else { continue };
            for (tid, row) in heap.table.all_versions() {
                if !matches!(
                    heap.table.liveness(&self.xact.session, tid),
                    snapscale_engine::Liveness::Live | snapscale_engine::Liveness::Deleting(_)
                ) {
                    continue;
                }
                let row = e.complete(row);
                for &c in &columns {
                    let v = &row[c];
                    let bad = match check {
                        None => matches!(v, snapscale_values::Value::Null),
                        Some(expr) => {
                            let cx = self.ctx(std::slice::from_ref(v));
                            matches!(expr.eval(&cx)?, snapscale_values::Value::Bool(false))
                        }
                    };
                    if bad {
                        let column = &e.columns[c].name;
                        return Err(match check {
                            None => SqlError::new(
                                SqlState::NOT_NULL_VIOLATION,
                                format!("column \"{column}\" of table \"{}\" contains null values", e.name),
                            ),
                            Some(_) => SqlError::new(
                                SqlState::CHECK_VIOLATION,
                                format!(
                                    "column \"{column}\" of table \"{}\" contains values that violate the new constraint",
                                    e.name
                                ),
                            ),
                        });
                    }
                }
            }
        }
        Ok(())
    }

    pub(crate) async fn drop_types(
        &mut self,
        targets: &[(String, Option<u32>)],
        domain: bool,
    ) -> Result<Output, SqlError> {
        for (name, oid) in targets {
            let Some(oid) = *oid else {
                self.skipped("type", name);
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
