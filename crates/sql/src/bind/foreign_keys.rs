//! FOREIGN KEY constraints: their definitions as written (CREATE TABLE,
//! ALTER TABLE … ADD), checked and resolved to the referenced table's
//! unique key; and, for a statement that writes a table, the foreign keys
//! its writes must keep (`ForeignKeys`, which exec/ri.rs enforces).

use std::sync::Arc;

use snapscale_engine::catalog::{same_columns, ColumnDef, FkAction, ForeignKeyDef};
use snapscale_engine::LockMode;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType};
use sqlparser::ast;

use super::{ident, not_supported, relation_name, Binder, Resolver};
use crate::plan::{FkTable, ForeignKeys, Incoming, Plan, Rel, Utility};

/// What a statement does to its target table, for the foreign keys it
/// must check.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Writes {
    /// Inserts only: its rows' keys must be present in the tables they
    /// reference.
    Insert,
    /// Updates or deletes (an upsert may too): rows referencing the
    /// changed or deleted ones are checked or cascaded to.
    Change,
}

impl<R: Resolver> Binder<'_, R> {
    /// The foreign key `fk` of table `table` (`columns` its columns; `oid`
    /// its oid if it exists, else it is being created), `column` the
    /// column it is written on if a column constraint. `others`: the
    /// table's constraint names taken. The parent is locked as PostgreSQL
    /// locks it (ShareRowExclusive).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn foreign_key_def(
        &mut self,
        table: &str,
        oid: Option<u32>,
        columns: &[ColumnDef],
        column: Option<&str>,
        fk: &ast::ForeignKeyConstraint,
        others: &[String],
        own_keys: &[UniqueKey],
    ) -> Result<(ForeignKeyDef, Option<Rel>), SqlError> {
        let ast::ForeignKeyConstraint {
            name,
            index_name,
            columns: local,
            foreign_table,
            referred_columns,
            on_delete,
            on_update,
            match_kind,
            characteristics,
        } = fk;
        if index_name.is_some() {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"(\""));
        }
        let (mut deferrable, mut initially_deferred) = (false, false);
        if let Some(c) = characteristics {
            if c.enforced.is_some() {
                return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"ENFORCED\""));
            }
            initially_deferred = matches!(c.initially, Some(ast::DeferrableInitial::Deferred));
            if initially_deferred && c.deferrable == Some(false) {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    "constraint declared INITIALLY DEFERRED must be DEFERRABLE",
                ));
            }
            deferrable = c.deferrable == Some(true) || initially_deferred;
        }
        let match_full = match match_kind {
            None | Some(ast::ConstraintReferenceMatchKind::Simple) => false,
            Some(ast::ConstraintReferenceMatchKind::Full) => true,
            Some(ast::ConstraintReferenceMatchKind::Partial) => {
                return Err(not_supported("MATCH PARTIAL"));
            }
        };
        let local_names: Vec<String> = match column {
            Some(c) => vec![c.to_owned()],
            None => local.iter().map(ident).collect(),
        };
        let mut positions = Vec::new();
        for n in &local_names {
            let p = columns.iter().position(|c| &c.name == n).ok_or_else(|| {
                SqlError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{n}\" referenced in foreign key constraint does not exist"),
                )
            })?;
            positions.push(p);
        }
        let parent_name = relation_name(foreign_table)?;
        // A table referencing itself while it is being made.
        // The referenced table's unique keys: (columns, primary).
        let (parent, parent_columns_defs, keys): (Option<Rel>, Vec<ColumnDef>, Vec<UniqueKey>) =
            if oid.is_none() && parent_name == table {
                (None, columns.to_vec(), own_keys.to_vec())
            } else {
                if let Some(view) =
                    self.resolver.resolve(&relation_name(foreign_table)?)?.filter(|r| r.entry.is_view())
                {
                    return Err(SqlError::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!("referenced relation \"{}\" is not a table", view.entry.name),
                    ));
                }
                let rel = self.rel(foreign_table, LockMode::ShareRowExclusive)?;
                let keys = unique_keys(&rel.entry.indexes);
                (Some(rel.clone()), rel.entry.columns.clone(), keys)
            };
        let parent_positions: Vec<usize> = if referred_columns.is_empty() {
            match keys.iter().find(|(_, primary)| *primary).map(|(cols, _)| cols.clone()) {
                Some(cols) => cols,
                None => {
                    return Err(SqlError::new(
                        SqlState::INVALID_FOREIGN_KEY,
                        format!("there is no primary key for referenced table \"{parent_name}\""),
                    ))
                }
            }
        } else {
            let mut out = Vec::new();
            for c in referred_columns {
                let n = ident(c);
                let p = parent_columns_defs.iter().position(|d| d.name == n).ok_or_else(|| {
                    SqlError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("column \"{n}\" referenced in foreign key constraint does not exist"),
                    )
                })?;
                out.push(p);
            }
            // The referenced columns must be exactly a unique key.
            if !keys.iter().any(|(cols, _)| same_columns(cols, &out)) {
                return Err(SqlError::new(
                    SqlState::INVALID_FOREIGN_KEY,
                    format!("there is no unique constraint matching given keys for referenced table \"{parent_name}\""),
                ));
            }
            out
        };
        if positions.len() != parent_positions.len() {
            return Err(SqlError::new(
                SqlState::INVALID_FOREIGN_KEY,
                "number of referencing and referenced columns for foreign key disagree",
            ));
        }
        let name = match name {
            Some(n) => ident(n),
            None => {
                let taken = |n: &str| others.iter().any(|o| o == n);
                (0..)
                    .map(|k| {
                        let label = if k == 0 { "fkey".to_owned() } else { format!("fkey{k}") };
                        super::ddl::object_name(table, Some(&local_names.join("_")), &label)
                    })
                    .find(|n| !taken(n))
                    .expect("some number is free")
            }
        };
        for (&c, &p) in positions.iter().zip(&parent_positions) {
            let (a, b) = (columns[c].ty, parent_columns_defs[p].ty);
            if !comparable(a, b) {
                return Err(SqlError::new(
                    SqlState::DATATYPE_MISMATCH,
                    format!("foreign key constraint \"{name}\" cannot be implemented"),
                )
                .with_detail(format!(
                    "Key columns \"{}\" and \"{}\" are of incompatible types: {} and {}.",
                    columns[c].name,
                    parent_columns_defs[p].name,
                    a.name(),
                    b.name()
                )));
            }
        }
        // ON DELETE SET NULL / DEFAULT (columns): some of the key's own.
        let table_at = foreign_table
            .0
            .first()
            .and_then(|p| p.as_ident())
            .map(|i| (i.span.start.line, i.span.start.column));
        let listed = self
            .statement
            .pre
            .fk_set_columns
            .as_ref()
            .and_then(|lists| lists.iter().find(|l| Some(l.table_at) == table_at))
            .map(|l| l.columns.clone());
        let mut delete_set_columns = Vec::new();
        for n in listed.iter().flatten() {
            let p = columns.iter().position(|c| &c.name == n).ok_or_else(|| {
                SqlError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{n}\" referenced in foreign key constraint does not exist"),
                )
            })?;
            if !positions.contains(&p) {
                return Err(SqlError::new(
                    SqlState::INVALID_COLUMN_REFERENCE,
                    format!("column \"{n}\" referenced in ON DELETE SET action must be part of foreign key"),
                ));
            }
            if !delete_set_columns.contains(&p) {
                delete_set_columns.push(p);
            }
        }
        let action = |a: &Option<ast::ReferentialAction>| match a {
            None | Some(ast::ReferentialAction::NoAction) => FkAction::NoAction,
            Some(ast::ReferentialAction::Restrict) => FkAction::Restrict,
            Some(ast::ReferentialAction::Cascade) => FkAction::Cascade,
            Some(ast::ReferentialAction::SetNull) => FkAction::SetNull,
            Some(ast::ReferentialAction::SetDefault) => FkAction::SetDefault,
        };
        let def = ForeignKeyDef {
            // Given when the statement runs.
            oid: 0,
            name,
            columns: positions,
            parent: parent.as_ref().map_or(0, |r| r.entry.oid),
            parent_columns: parent_positions,
            on_delete: action(on_delete),
            on_update: action(on_update),
            match_full,
            validated: true,
            deferrable,
            initially_deferred,
            delete_set_columns,
        };
        Ok((def, parent))
    }

    /// The foreign keys a statement writing `rel` must keep: `rel`'s own
    /// (its new rows' keys must be present), and for `Writes::Change` the
    /// ones referencing it, following cascades to the tables they change.
    /// Each table involved is locked as PostgreSQL's RI queries lock it.
    pub(super) fn foreign_keys_for(
        &mut self,
        rel: &Rel,
        writes: Writes,
    ) -> Result<Arc<ForeignKeys>, SqlError> {
        if rel.entry.foreign_keys.is_empty() && rel.entry.referenced_by.is_empty() {
            // Most tables: one shared empty set, no allocation per statement.
            static NONE: std::sync::OnceLock<Arc<ForeignKeys>> = std::sync::OnceLock::new();
            return Ok(Arc::clone(NONE.get_or_init(Arc::default)));
        }
        let mut out = ForeignKeys::default();
        let mut todo = vec![(rel.clone(), true)];
        while let Some((r, target)) = todo.pop() {
            if out.table(r.entry.oid).is_some() {
                continue;
            }
            let mut outgoing = Vec::new();
            for fk in &r.entry.foreign_keys {
                let parent = self.related(&r, fk.parent, LockMode::RowShare)?;
                outgoing.push((fk.clone(), parent));
            }
            let mut incoming = Vec::new();
            if writes == Writes::Change || !target {
                for &child_oid in &r.entry.referenced_by {
                    let child = self.related(&r, child_oid, LockMode::RowExclusive)?;
                    for fk in child.entry.foreign_keys.iter().filter(|f| f.parent == r.entry.oid) {
                        let changes_child = |a: FkAction| {
                            matches!(a, FkAction::Cascade | FkAction::SetNull | FkAction::SetDefault)
                        };
                        let defaults =
                            if fk.on_delete == FkAction::SetDefault || fk.on_update == FkAction::SetDefault {
                                fk.columns
                                    .iter()
                                    .map(|&c| self.column_default(&child.entry.columns[c]))
                                    .collect::<Result<_, _>>()?
                            } else {
                                Vec::new()
                            };
                        if changes_child(fk.on_delete) || changes_child(fk.on_update) {
                            todo.push((child.clone(), false));
                        }
                        incoming.push(Incoming { child: child.clone(), fk: fk.clone(), defaults });
                    }
                }
            }
            let checks = if target { Vec::new() } else { self.table_checks(&r)? };
            out.tables.push(FkTable { rel: r, outgoing, incoming, checks });
        }
        Ok(Arc::new(out))
    }

    /// DROP TABLE of `targets`: the tables whose foreign keys reference one
    /// of them from outside the statement (2BP01 unless `cascade`, which
    /// drops those keys: the NOTICE says so), and the tables they
    /// reference, which stop listing them; all locked as the change of
    /// their catalog rows needs.
    #[allow(clippy::type_complexity)]
    pub(super) fn drop_dependents(
        &mut self,
        targets: &mut Vec<(String, Option<Rel>)>,
        cascade: bool,
    ) -> Result<(Vec<Rel>, Option<(String, Option<String>)>), SqlError> {
        let (detach, lines) = self.dependents(targets)?;
        if lines.is_empty() {
            return Ok((detach, None));
        }
        if !cascade {
            let (_, first) = &lines[0];
            let detail: Vec<String> = lines.iter().map(|(l, t)| format!("{l} depends on {t}")).collect();
            return Err(dependents_error(first, &detail));
        }
        let names: Vec<String> = lines.into_iter().map(|(l, _)| l).collect();
        Ok((detach, cascade_notice(&names)))
    }

    /// What dropping `targets` reaches: the views that read one (added to
    /// `targets`, and the views that read those in turn), the tables
    /// whose foreign keys reference one (to lose those keys) and the
    /// tables one references (to stop listing it); and each dependent as
    /// PostgreSQL's messages name it with what it depends on, in the order
    /// they were made.
    #[allow(clippy::type_complexity)]
    pub(super) fn dependents(
        &mut self,
        targets: &mut Vec<(String, Option<Rel>)>,
    ) -> Result<(Vec<Rel>, Vec<(String, String)>), SqlError> {
        let mut lines = Vec::new();
        // The views that read a target, and those that read them: with
        // CASCADE, targets too.
        let mut i = 0;
        while i < targets.len() {
            if let Some(rel) = targets[i].1.clone() {
                for view in self.resolver.dependent_views(rel.entry.oid)? {
                    let kind = crate::plan::RelKind::of(&rel.entry).word();
                    let view_kind = crate::plan::RelKind::of(&view.entry).word();
                    let (view_name, rel_name) = (self.shown_name(&view.entry)?, self.shown_name(&rel.entry)?);
                    lines.push((
                        view.entry.oid,
                        format!("{view_kind} {view_name}"),
                        format!("{kind} {rel_name}"),
                    ));
                    if targets.iter().any(|(_, t)| t.as_ref().is_some_and(|t| t.entry.oid == view.entry.oid))
                    {
                        continue;
                    }
                    let name = view.entry.name.clone();
                    self.dep_reached(&view, LockMode::AccessExclusive)?;
                    targets.push((name, Some(view)));
                }
            }
            i += 1;
        }
        let dropped: Vec<u32> = targets.iter().filter_map(|(_, r)| r.as_ref().map(|r| r.entry.oid)).collect();
        let mut detach: Vec<Rel> = Vec::new();
        for rel in targets.iter().filter_map(|(_, r)| r.as_ref()) {
            for &child in &rel.entry.referenced_by {
                if dropped.contains(&child) {
                    continue;
                }
                let child = self.related(rel, child, LockMode::AccessExclusive)?;
                let (child_name, rel_name) = (self.shown_name(&child.entry)?, self.shown_name(&rel.entry)?);
                for fk in child.entry.foreign_keys.iter().filter(|f| f.parent == rel.entry.oid) {
                    lines.push((
                        fk.oid,
                        format!("constraint {} on table {child_name}", fk.name),
                        format!("table {rel_name}"),
                    ));
                }
                if !detach.iter().any(|d| d.entry.oid == child.entry.oid) {
                    detach.push(child);
                }
            }
            for fk in &rel.entry.foreign_keys {
                if dropped.contains(&fk.parent) || detach.iter().any(|d| d.entry.oid == fk.parent) {
                    continue;
                }
                if let Some(parent) = self.resolver.relation_by_oid(fk.parent)? {
                    self.dep_reached(&parent, LockMode::ShareRowExclusive)?;
                    detach.push(parent);
                }
            }
        }
        // In the order they were made, as PostgreSQL lists dependents.
        lines.sort_by_key(|(oid, ..)| *oid);
        Ok((detach, lines.into_iter().map(|(_, l, t)| (l, t)).collect()))
    }

    /// A relation's name as PostgreSQL's messages give it: alone if the
    /// search_path finds it by that name, else with its schema.
    pub(super) fn shown_name(&mut self, e: &snapscale_engine::catalog::RelEntry) -> Result<String, SqlError> {
        let found = self.resolver.resolve(&snapscale_engine::names::key(None, &e.name))?;
        if found.is_some_and(|r| r.entry.oid == e.oid) {
            return Ok(e.name.clone());
        }
        let key = self.resolver.key_of(e)?;
        Ok(match snapscale_engine::names::split(&key) {
            (Some(schema), name) if schema != "pg_temp" => format!("{schema}.{name}"),
            (_, name) => name,
        })
    }

    /// TRUNCATE of `rels`: a table a foreign key of another table outside
    /// the list references is refused (0A000), or with CASCADE truncated
    /// too (and what references it, in turn).
    pub(super) fn truncate_referencing(
        &mut self,
        rels: &mut Vec<Rel>,
        cascade: bool,
    ) -> Result<(), SqlError> {
        let mut i = 0;
        while i < rels.len() {
            let rel = rels[i].clone();
            for &child in &rel.entry.referenced_by {
                if rels.iter().any(|r| r.entry.oid == child) {
                    continue;
                }
                let child = self.related(&rel, child, LockMode::AccessExclusive)?;
                if !cascade {
                    return Err(SqlError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        "cannot truncate a table referenced in a foreign key constraint",
                    )
                    .with_detail(format!("Table \"{}\" references \"{}\".", child.entry.name, rel.entry.name))
                    .with_hint(format!(
                        "Truncate table \"{}\" at the same time, or use TRUNCATE ... CASCADE.",
                        child.entry.name
                    )));
                }
                self.statement.truncate_cascades.push(child.entry.name.clone());
                rels.push(child);
            }
            i += 1;
        }
        Ok(())
    }

    /// The table `oid` related to `rel` by a foreign key (`rel` itself for
    /// a self-reference), locked in `mode` for the statement.
    /// ALTER TABLE … ALTER CONSTRAINT: a foreign key's deferrability,
    /// under the lock PostgreSQL takes (SHARE ROW EXCLUSIVE).
    pub(super) fn alter_constraint(
        &mut self,
        a: &crate::parse::alter_constraint_syntax::AlterConstraint,
    ) -> Result<Plan, SqlError> {
        let table = relation_name(&a.table)?;
        if a.if_exists && self.resolver.resolve(&table)?.is_none() {
            return Ok(Plan::Utility(Utility::Skip {
                code: SqlState::SUCCESSFUL_COMPLETION,
                notice: format!("relation \"{table}\" does not exist, skipping"),
                tag: "ALTER TABLE",
            }));
        }
        let rel = self
            .rel(&a.table, LockMode::ShareRowExclusive)
            .map_err(|e| SqlError::from(snapscale_values::ErrorData { position: None, ..e.into_data() }))?;
        let c = &a.constraint;
        let Some(fk) = rel.entry.foreign_keys.iter().find(|f| f.name == *c) else {
            let other = rel.entry.checks.iter().any(|k| k.name == *c)
                || rel.entry.indexes.iter().any(|i| i.constraint && i.name == *c);
            return Err(match other {
                true => SqlError::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    format!("constraint \"{c}\" of relation \"{table}\" is not a foreign key constraint"),
                ),
                false => SqlError::new(
                    SqlState::UNDEFINED_OBJECT,
                    format!("constraint \"{c}\" of relation \"{table}\" does not exist"),
                ),
            });
        };
        Ok(Plan::Utility(Utility::AlterConstraint {
            rel: rel.clone(),
            oid: fk.oid,
            deferrable: a.deferrable,
            initially_deferred: a.initially_deferred,
        }))
    }

    fn related(&mut self, rel: &Rel, oid: u32, mode: LockMode) -> Result<Rel, SqlError> {
        if oid == rel.entry.oid {
            return Ok(rel.clone());
        }
        let other = self.resolver.relation_by_oid(oid)?.ok_or_else(|| {
            SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation with OID {oid} does not exist"))
        })?;
        self.dep_reached(&other, mode)?;
        Ok(other)
    }
}

/// A unique key a foreign key may reference: its columns, and whether it
/// is the primary key.
pub(super) type UniqueKey = (Vec<usize>, bool);

/// A table's unique keys, as `foreign_key_def` takes them.
pub(super) fn unique_keys(indexes: &[snapscale_engine::catalog::IndexDef]) -> Vec<UniqueKey> {
    // PostgreSQL refuses a partial or expression index as a key.
    indexes.iter().filter(|i| i.unique && !i.computed()).map(|i| (i.columns.clone(), i.primary)).collect()
}

/// Whether keys of types `a` and `b` can be compared by equality: the same
/// type, or two of one family (integers, numbers, strings).
fn comparable(a: SqlType, b: SqlType) -> bool {
    use SqlType as T;
    let family = |t: SqlType| match t {
        T::Int2 | T::Int4 | T::Int8 | T::Numeric(_) | T::Float4 | T::Float8 => 1,
        T::Text | T::Varchar(_) | T::Char(_) | T::Name => 2,
        T::Timestamp | T::TimestampTz | T::Date => 3,
        _ => 0,
    };
    a == b || (family(a) != 0 && family(a) == family(b))
}

/// 2BP01 for a drop without CASCADE that something depends on.
pub(super) fn dependents_error(first: &str, detail: &[String]) -> SqlError {
    SqlError::new(
        SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
        format!("cannot drop {first} because other objects depend on it"),
    )
    .with_detail(detail.join("\n"))
    .with_hint("Use DROP ... CASCADE to drop the dependent objects too.")
}

/// CASCADE's NOTICE (and its DETAIL) naming what else a drop drops.
pub(super) fn cascade_notice(names: &[String]) -> Option<(String, Option<String>)> {
    match names {
        [] => None,
        [one] => Some((format!("drop cascades to {one}"), None)),
        many => Some((
            format!("drop cascades to {} other objects", many.len()),
            Some(many.iter().map(|l| format!("drop cascades to {l}")).collect::<Vec<_>>().join("\n")),
        )),
    }
}
