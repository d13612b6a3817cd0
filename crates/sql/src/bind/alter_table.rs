//! ALTER TABLE: its actions applied in order to a copy of the table's
//! definition, collecting the work they need (a rewrite of the rows,
//! constraints to check, indexes to build), which `exec/alter_table.rs`
//! does.

use snapscale_engine::catalog::{ColumnDef, Described, Identity, RelEntry};
use snapscale_engine::LockMode;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType};
use sqlparser::ast::{self, AlterColumnOperation as Col, AlterTableOperation as Op, TableConstraint};

use super::ddl::typmod_of;
use super::index_ddl::IndexSpec;
use super::scope::Scope;
use super::{ident, not_supported, relation_name, Binder, Coercion, Resolver, Typed};
use crate::expr::Expr;
use crate::parse::identity_syntax;
use crate::plan::{AlterTable, NewIndex, Plan, Rel, Serial, Utility};

/// Where a column of the new row comes from.
enum Source {
    /// The old row's column.
    Old(usize),
    /// An expression over the old row (a new column's default, a
    /// converted column).
    Computed(Expr),
}

/// The definition being altered, and what altering it takes.
struct Draft {
    entry: RelEntry,
    sources: Vec<Source>,
    /// Indexes to add, by column name (resolved at the end).
    indexes: Vec<IndexSpec>,
    /// Constraints to check against every row, by name.
    validate: Vec<String>,
    /// Columns whose NULLs fail, by name.
    not_null: Vec<String>,
    rename: Option<String>,
    notices: Vec<(SqlState, String)>,
    serials: Vec<Serial>,
    /// Foreign keys to check against every row, by name.
    validate_fks: Vec<String>,
    alter_sequences: Vec<(Rel, snapscale_engine::sequence::SequenceDef, Option<i64>)>,
    drop_sequences: Vec<Rel>,
    /// Columns renamed (old, new), in order: the views that read them
    /// follow (VIEW-TEXT).
    renamed_columns: Vec<(String, String)>,
}

impl Draft {
    fn column(&self, name: &str) -> Result<usize, SqlError> {
        self.entry.column(name).ok_or_else(|| {
            SqlError::new(
                SqlState::UNDEFINED_COLUMN,
                format!("column \"{name}\" of relation \"{}\" does not exist", self.entry.name),
            )
        })
    }

    /// Every constraint name the table has (CHECK constraints and the
    /// indexes of PRIMARY KEY and UNIQUE ones, those being added too).
    fn constraint_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.entry.checks.iter().map(|c| c.name.clone()).collect();
        names.extend(self.entry.foreign_keys.iter().map(|f| f.name.clone()));
        names.extend(self.entry.indexes.iter().map(|i| i.name.clone()));
        names.extend(self.indexes.iter().filter_map(|i| i.name.clone()));
        names
    }
}

impl<R: Resolver> Binder<'_, R> {
    pub(super) fn alter_table(&mut self, a: &ast::AlterTable) -> Result<Plan, SqlError> {
        super::clauses::alter_table(a)?;
        let name = relation_name(&a.name)?;
        // ALTER [MATERIALIZED] VIEW: ALTER TABLE's renames and (for a
        // view) column defaults, of that kind of relation only.
        let altered_view = self.statement.pre.altered_view.take();
        let tag = match altered_view {
            Some(false) => "ALTER VIEW",
            Some(true) => "ALTER MATERIALIZED VIEW",
            None => "ALTER TABLE",
        };
        let view_action = |o: &Op, materialized: bool| match o {
            Op::RenameTable { .. } | Op::RenameColumn { .. } => true,
            Op::AlterColumn { op: Col::SetDefault { .. } | Col::DropDefault, .. } => !materialized,
            _ => false,
        };

        if a.if_exists && self.resolver.resolve(&name)?.is_none() {
            // PostgreSQL's NOTICE, sent when the statement runs.
            return Ok(Plan::Utility(Utility::Skip {
                code: SqlState::SUCCESSFUL_COMPLETION,
                notice: format!("relation \"{name}\" does not exist, skipping"),
                tag,
            }));
        }
        if a.operations.len() > 1
            && a.operations.iter().any(|o| {
                matches!(o, Op::RenameTable { .. } | Op::RenameColumn { .. } | Op::RenameConstraint { .. })
            })
        {
            // PostgreSQL's RENAME is a statement of its own, which its
            // grammar ends before a comma.
            let word = match a.operations[0] {
                Op::RenameTable { .. } | Op::RenameColumn { .. } | Op::RenameConstraint { .. } => ",",
                _ => "RENAME",
            };
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{word}\"")));
        }
        // The strongest of the actions' lock levels (PostgreSQL's
        // AlterTableGetLockLevel): VALIDATE CONSTRAINT lets readers and
        // writers on, adding a foreign key lets readers on, every other
        // action shuts them out.
        let mode = a
            .operations
            .iter()
            .map(|o| match o {
                Op::ValidateConstraint { .. } => LockMode::ShareUpdateExclusive,
                Op::EnableTrigger { .. }
                | Op::EnableAlwaysTrigger { .. }
                | Op::EnableReplicaTrigger { .. }
                | Op::DisableTrigger { .. } => LockMode::ShareRowExclusive,
                Op::AddConstraint { constraint: ast::TableConstraint::ForeignKey { .. }, .. } => {
                    LockMode::ShareRowExclusive
                }
                _ => LockMode::AccessExclusive,
            })
            .max()
            .unwrap_or(LockMode::AccessExclusive);
        // A sequence may be renamed by ALTER TABLE, as in PostgreSQL. A
        // missing table's error has no position (PostgreSQL's has none
        // for the relation a DDL statement names).
        let unplaced =
            |e: SqlError| SqlError::from(snapscale_values::ErrorData { position: None, ..e.into_data() });
        let target = self.resolver.resolve(&name)?;
        let (is_view, is_matview) =
            target.as_ref().map_or((false, false), |r| (r.entry.is_view(), r.entry.is_matview()));
        match altered_view {
            Some(false) if target.is_some() && !is_view => {
                return Err(SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("\"{name}\" is not a view")))
            }
            Some(true) if target.is_some() && !is_matview => {
                return Err(SqlError::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    format!("\"{name}\" is not a materialized view"),
                ))
            }
            _ => {}
        }
        // ALTER TABLE reaches a view too, for what ALTER VIEW can do;
        // another action is PostgreSQL's 42809 naming it.
        if is_view || (is_matview && altered_view.is_some()) {
            if let Some(o) = a.operations.iter().find(|o| !view_action(o, is_matview)) {
                let kind = if is_matview { "materialized views" } else { "views" };
                return Err(match action_name(o) {
                    Some(action) => SqlError::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!("ALTER action {action} cannot be performed on relation \"{name}\""),
                    )
                    .with_detail(format!("This operation is not supported for {kind}.")),
                    None => not_supported(format!("this ALTER action on {kind}")),
                });
            }
        }
        let view_target = is_view;
        let rel = match a.operations.as_slice() {
            _ if view_target => self.any_relation(&a.name, mode).map_err(unplaced)?,
            [Op::RenameTable { .. }] => match self.any_relation(&a.name, mode).map_err(unplaced)? {
                rel if rel.entry.sequence.is_some() => rel,
                _ => self.rel(&a.name, mode).map_err(unplaced)?,
            },
            _ => self.rel(&a.name, mode).map_err(unplaced)?,
        };
        let mut draft = Draft {
            entry: (*rel.entry).clone(),
            sources: (0..rel.entry.columns.len()).map(Source::Old).collect(),
            indexes: Vec::new(),
            validate: Vec::new(),
            not_null: Vec::new(),
            rename: None,
            notices: Vec::new(),
            serials: Vec::new(),
            validate_fks: Vec::new(),
            alter_sequences: Vec::new(),
            drop_sequences: Vec::new(),
            renamed_columns: Vec::new(),
        };
        for op in &a.operations {
            self.alter_action(&rel, &mut draft, op)?;
        }
        // Comments on what the actions dropped go with it.
        draft.entry.prune_comments();
        let mut plan = self.finish_alter(rel, draft)?;
        if let (Plan::Utility(Utility::AlterTable(a)), Some(_)) = (&mut plan, altered_view) {
            a.tag = tag;
        }
        Ok(plan)
    }

    /// ALTER INDEX / SEQUENCE … RENAME TO of a relation: ALTER TABLE's
    /// rename, answered with the statement's own tag.
    pub(super) fn rename_relation(
        &mut self,
        name: &ast::ObjectName,
        new: &ast::ObjectName,
        tag: &'static str,
    ) -> Result<Plan, SqlError> {
        let alter = ast::AlterTable {
            name: name.clone(),
            if_exists: false,
            only: false,
            operations: vec![Op::RenameTable { table_name: ast::RenameTableNameKind::To(new.clone()) }],
            location: None,
            on_cluster: None,
            table_type: None,
            end_token: ast::helpers::attached_token::AttachedToken::empty(),
        };
        let mut plan = self.alter_table(&alter)?;
        if let Plan::Utility(Utility::AlterTable(a)) = &mut plan {
            a.tag = tag;
        }
        Ok(plan)
    }

    fn alter_action(&mut self, rel: &Rel, d: &mut Draft, op: &Op) -> Result<(), SqlError> {
        let table = d.entry.name.clone();
        match op {
            Op::AddColumn { column_keyword: _, if_not_exists, column_def, column_position: None } => {
                let cname = ident(&column_def.name);
                if d.entry.column(&cname).is_some() {
                    if *if_not_exists {
                        d.notices.push((
                            SqlState::DUPLICATE_COLUMN,
                            format!("column \"{cname}\" of relation \"{table}\" already exists, skipping"),
                        ));
                        return Ok(());
                    }
                    return Err(SqlError::new(
                        SqlState::DUPLICATE_COLUMN,
                        format!("column \"{cname}\" of relation \"{table}\" already exists"),
                    ));
                }
                if d.entry.columns.len() >= crate::limits::MAX_TABLE_COLUMNS {
                    return Err(SqlError::new(
                        SqlState::TOO_MANY_COLUMNS,
                        format!("tables can have at most {} columns", crate::limits::MAX_TABLE_COLUMNS),
                    ));
                }
                let serials = d.serials.len();
                let spec = self.column_def(&table, column_def, &mut d.serials)?;
                // Existing rows get the default, computed once per row
                // (NULL without one); a serial column's sequence is made
                // when the statement runs, which then numbers them.
                let value = if d.serials.len() > serials {
                    Expr::Const(snapscale_values::Value::Null)
                } else if spec.def.generated.is_some() {
                    // Computed over each old row (whose columns are the
                    // new row's first ones).
                    let mut columns = d.entry.columns.clone();
                    columns.push(spec.def.clone());
                    let scope_ok =
                        d.sources.iter().enumerate().all(|(i, s)| matches!(s, Source::Old(o) if *o == i));
                    if !scope_ok {
                        return Err(not_supported(
                            "ADD COLUMN … GENERATED with other columns added or dropped",
                        ));
                    }
                    self.generation_expr(&columns, columns.len() - 1)?
                } else {
                    self.column_default(&spec.def)?
                };
                if spec.def.not_null {
                    d.not_null.push(cname.clone());
                }
                d.entry.columns.push(spec.def);
                d.sources.push(Source::Computed(value));
                d.indexes.extend(spec.indexes);
                for (given, check) in spec.checks {
                    self.add_check(d, given, check, false)?;
                }
                for fk in spec.foreign_keys {
                    self.add_foreign_key(rel, d, Some(&cname), fk, false)?;
                }
            }
            Op::DropColumn { has_column_keyword: _, column_names, if_exists, drop_behavior } => {
                let cascade = matches!(drop_behavior, Some(ast::DropBehavior::Cascade));
                for n in column_names {
                    let cname = ident(n);
                    let Some(pos) = d.entry.column(&cname) else {
                        if *if_exists {
                            d.notices.push((
                                SqlState::SUCCESSFUL_COMPLETION,
                                format!(
                                    "column \"{cname}\" of relation \"{table}\" does not exist, skipping"
                                ),
                            ));
                            continue;
                        }
                        return Err(d.column(&cname).expect_err("missing"));
                    };
                    self.refuse_for_views(rel, Some(&cname), super::view::Altering::Drop)?;
                    if let Some(g) = d.entry.columns.iter().find(|c| {
                        c.generated.as_deref().is_some_and(|g| {
                            let names = d.entry.columns.iter().map(|c| c.name.as_str());
                            crate::parse::column_refs::columns_read(g, names).contains(&pos)
                        })
                    }) {
                        return Err(SqlError::new(
                            SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                            format!("cannot drop column {cname} of table {table} because other objects depend on it"),
                        )
                        .with_detail(format!("column {} of table {table} depends on column {cname} of table {table}", g.name))
                        .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
                    }
                    drop_column_triggers(d, &cname, cascade)?;
                    // What depends on the column goes with it, as in
                    // PostgreSQL: its indexes and CHECK constraints.
                    d.entry.columns.remove(pos);
                    d.sources.remove(pos);
                    let before = &rel.entry.columns;
                    // An index whose expressions or predicate read the
                    // column goes too.
                    let reads = |text: &String| {
                        let read = crate::parse::column_refs::columns_read(
                            text,
                            before.iter().map(|c| c.name.as_str()),
                        );
                        read.iter().any(|&r| before[r].name == cname)
                    };
                    d.entry.indexes.retain(|i| {
                        !i.all_columns().any(|c| c == pos) && !i.exprs.iter().chain(&i.predicate).any(reads)
                    });
                    for i in &mut d.entry.indexes {
                        for c in i.columns.iter_mut().chain(&mut i.include) {
                            if *c > pos && *c != snapscale_engine::catalog::EXPRESSION {
                                *c -= 1;
                            }
                        }
                    }
                    d.entry.checks.retain(|c| {
                        let read = crate::parse::column_refs::columns_read(
                            &c.expr,
                            before.iter().map(|c| c.name.as_str()),
                        );
                        !read.iter().any(|&r| before[r].name == cname)
                    });
                    d.indexes.retain(|i| !i.columns.contains(&cname) && !i.include.contains(&cname));
                    // Its foreign keys go too; keys of other tables that
                    // reference it stay, so it stays.
                    d.entry.foreign_keys.retain(|f| !f.columns.contains(&pos));
                    for f in &mut d.entry.foreign_keys {
                        for c in f.columns.iter_mut().chain(
                            if f.parent == d.entry.oid { Some(&mut f.parent_columns) } else { None }
                                .into_iter()
                                .flatten(),
                        ) {
                            if *c > pos {
                                *c -= 1;
                            }
                        }
                    }
                    self.refuse_dropping_referenced(rel, pos, &cname)?;
                }
            }
            Op::RenameColumn { old_column_name, new_column_name } => {
                let (old, new) = (ident(old_column_name), ident(new_column_name));
                let pos = d.entry.column(&old).ok_or_else(|| {
                    SqlError::new(SqlState::UNDEFINED_COLUMN, format!("column \"{old}\" does not exist"))
                })?;
                if d.entry.column(&new).is_some() {
                    return Err(SqlError::new(
                        SqlState::DUPLICATE_COLUMN,
                        format!("column \"{new}\" of relation \"{table}\" already exists"),
                    ));
                }
                self.views_follow_column_rename(rel, &old)?;
                d.renamed_columns.push((old.clone(), new.clone()));
                d.entry.columns[pos].name = new.clone();
                d.entry.rename_commented(&Described::Column(old.clone()), Described::Column(new.clone()));
                for c in &mut d.entry.checks {
                    c.expr = crate::parse::column_refs::rename_column(&c.expr, &old, &new);
                }
                for i in &mut d.entry.indexes {
                    for e in i.exprs.iter_mut().chain(&mut i.predicate) {
                        *e = crate::parse::column_refs::rename_column(e, &old, &new);
                    }
                }
                // Triggers name columns in UPDATE OF and in WHEN (as
                // OLD.c / NEW.c): they follow the column.
                for t in &mut d.entry.triggers {
                    for c in t.columns.iter_mut().filter(|c| **c == old) {
                        c.clone_from(&new);
                    }
                    if let Some(w) = &mut t.when {
                        *w = crate::parse::column_refs::rename_column(w, &old, &new);
                    }
                }
            }
            Op::RenameTable { table_name } => {
                let new = match table_name {
                    ast::RenameTableNameKind::To(n) | ast::RenameTableNameKind::As(n) if n.0.len() > 1 => {
                        return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \".\""))
                    }
                    ast::RenameTableNameKind::To(n) | ast::RenameTableNameKind::As(n) => super::bare_name(n)?,
                };
                // The views that read it follow it (exec: rewrite_readers).
                d.rename = Some(new);
            }
            Op::AlterColumn { column_name, op } => self.alter_column(rel, d, &ident(column_name), op)?,
            Op::AddConstraint { constraint, not_valid } => match constraint {
                TableConstraint::PrimaryKey(pk) => d.indexes.push(IndexSpec::primary_key(pk)?),
                TableConstraint::Unique(u) => d.indexes.push(IndexSpec::unique(u)?),
                TableConstraint::Check(check) => {
                    self.add_check(d, check.name.as_ref().map(ident), check, *not_valid)?;
                }
                TableConstraint::ForeignKey(fk) => self.add_foreign_key(rel, d, None, fk, *not_valid)?,
                other => return Err(not_supported(format!("ALTER TABLE ADD {other}"))),
            },
            Op::DropConstraint { if_exists, name, drop_behavior: _ } => {
                let cname = ident(name);
                if let Some(k) = d.entry.checks.iter().position(|c| c.name == cname) {
                    d.entry.checks.remove(k);
                    d.validate.retain(|v| *v != cname);
                } else if let Some(k) = d.entry.foreign_keys.iter().position(|f| f.name == cname) {
                    d.entry.foreign_keys.remove(k);
                    d.validate_fks.retain(|v| *v != cname);
                } else if let Some(k) = d.entry.indexes.iter().position(|i| i.constraint && i.name == cname) {
                    d.entry.indexes.remove(k);
                } else if let Some(k) = d.indexes.iter().position(|i| i.name.as_deref() == Some(&cname)) {
                    d.indexes.remove(k);
                } else if *if_exists {
                    d.notices.push((
                        SqlState::SUCCESSFUL_COMPLETION,
                        format!("constraint \"{cname}\" of relation \"{table}\" does not exist, skipping"),
                    ));
                } else {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("constraint \"{cname}\" of relation \"{table}\" does not exist"),
                    ));
                }
            }
            Op::RenameConstraint { old_name, new_name } => {
                let (old, new) = (ident(old_name), ident(new_name));
                if d.constraint_names().contains(&new) {
                    return Err(SqlError::new(
                        SqlState::DUPLICATE_OBJECT,
                        format!("constraint \"{new}\" for relation \"{table}\" already exists"),
                    ));
                }
                d.entry.rename_commented(
                    &Described::Constraint(old.clone()),
                    Described::Constraint(new.clone()),
                );
                if d.entry.indexes.iter().any(|i| i.constraint && i.name == old) {
                    d.entry.rename_commented(&Described::Index(old.clone()), Described::Index(new.clone()));
                }
                if let Some(c) = d.entry.checks.iter_mut().find(|c| c.name == old) {
                    c.name = new;
                } else if let Some(f) = d.entry.foreign_keys.iter_mut().find(|f| f.name == old) {
                    f.name = new;
                } else if let Some(i) = d.entry.indexes.iter_mut().find(|i| i.constraint && i.name == old) {
                    i.name = new;
                } else {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("constraint \"{old}\" for table \"{table}\" does not exist"),
                    ));
                }
            }
            Op::ValidateConstraint { name } => {
                let cname = ident(name);
                match d.entry.checks.iter_mut().find(|c| c.name == cname) {
                    Some(c) if !c.validated => {
                        c.validated = true;
                        d.validate.push(cname);
                    }
                    Some(_) => {}
                    None if d.entry.foreign_keys.iter().any(|f| f.name == cname) => {
                        if let Some(f) =
                            d.entry.foreign_keys.iter_mut().find(|f| f.name == cname && !f.validated)
                        {
                            f.validated = true;
                            d.validate_fks.push(cname);
                        }
                    }
                    None if d.entry.indexes.iter().any(|i| i.constraint && i.name == cname) => {}
                    None => {
                        return Err(SqlError::new(
                            SqlState::UNDEFINED_OBJECT,
                            format!("constraint \"{cname}\" of relation \"{table}\" does not exist"),
                        ))
                    }
                }
            }
            Op::EnableTrigger { name } => super::triggers::set_enabled(&mut d.entry, name, b'O')?,
            Op::EnableAlwaysTrigger { name } => super::triggers::set_enabled(&mut d.entry, name, b'A')?,
            Op::EnableReplicaTrigger { name } => super::triggers::set_enabled(&mut d.entry, name, b'R')?,
            Op::DisableTrigger { name } => super::triggers::set_enabled(&mut d.entry, name, b'D')?,
            other => {
                let text = other.to_string();
                let words: Vec<&str> = text
                    .split_whitespace()
                    .take_while(|w| w.chars().all(|c| c.is_ascii_uppercase()))
                    .collect();
                return Err(not_supported(format!("ALTER TABLE ... {}", words.join(" "))));
            }
        }
        Ok(())
    }

    /// ADD CONSTRAINT … CHECK (or a CHECK on an added column): named,
    /// and checked against the rows unless NOT VALID.
    fn add_check(
        &mut self,
        d: &mut Draft,
        given: Option<String>,
        check: &ast::CheckConstraint,
        not_valid: bool,
    ) -> Result<(), SqlError> {
        let others: Vec<String> = d.constraint_names();
        let mut def = self.new_check(&d.entry.name, &d.entry.columns, given, check, &[], &others)?;
        def.validated = !not_valid;
        if !not_valid {
            d.validate.push(def.name.clone());
        }
        d.entry.checks.push(def);
        Ok(())
    }

    /// ADD CONSTRAINT … FOREIGN KEY (or REFERENCES on an added column).
    fn add_foreign_key(
        &mut self,
        rel: &Rel,
        d: &mut Draft,
        column: Option<&str>,
        fk: &ast::ForeignKeyConstraint,
        not_valid: bool,
    ) -> Result<(), SqlError> {
        let others = d.constraint_names();
        let own = super::foreign_keys::unique_keys(&d.entry.indexes);
        let table = d.entry.name.clone();
        let (mut def, _) =
            self.foreign_key_def(&table, Some(rel.entry.oid), &d.entry.columns, column, fk, &others, &own)?;
        def.validated = !not_valid;
        if !not_valid {
            d.validate_fks.push(def.name.clone());
        }
        d.entry.foreign_keys.push(def);
        Ok(())
    }

    /// DROP COLUMN of a column another table's foreign key references:
    /// 2BP01, as PostgreSQL without CASCADE.
    fn refuse_dropping_referenced(&mut self, rel: &Rel, pos: usize, name: &str) -> Result<(), SqlError> {
        for &child in &rel.entry.referenced_by {
            let Some(c) = (if child == rel.entry.oid {
                Some(rel.clone())
            } else {
                self.resolver.relation_by_oid(child)?
            }) else {
                continue;
            };
            for fk in c.entry.foreign_keys.iter().filter(|f| f.parent == rel.entry.oid) {
                if c.entry.oid == rel.entry.oid {
                    continue;
                }
                // The referencing table's key names the referenced
                // columns by position, which the drop would move.
                if !fk.parent_columns.contains(&pos) {
                    if fk.parent_columns.iter().any(|&p| p > pos) {
                        return Err(not_supported(
                            "DROP COLUMN before a column another table's foreign key references",
                        ));
                    }
                    continue;
                }
                return Err(SqlError::new(
                    SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                    format!(
                        "cannot drop column {name} of table {} because other objects depend on it",
                        rel.entry.name
                    ),
                )
                .with_detail(format!(
                    "constraint {} on table {} depends on column {name} of table {}",
                    fk.name, c.entry.name, rel.entry.name
                ))
                .with_hint("Use DROP ... CASCADE to drop the dependent objects too."));
            }
        }
        Ok(())
    }

    fn alter_column(&mut self, rel: &Rel, d: &mut Draft, name: &str, op: &Col) -> Result<(), SqlError> {
        let pos = d.column(name)?;
        match op {
            Col::SetNotNull => {
                if !d.entry.columns[pos].not_null {
                    d.entry.columns[pos].not_null = true;
                    d.not_null.push(name.to_owned());
                }
            }
            Col::DropNotNull => {
                if d.entry.columns[pos].identity.is_some() {
                    // PostgreSQL's SQLSTATE here is 42601.
                    return Err(SqlError::new(
                        SqlState::SYNTAX_ERROR,
                        format!("column \"{name}\" of relation \"{}\" is an identity column", d.entry.name),
                    ));
                }
                if d.entry.indexes.iter().any(|i| i.primary && i.columns.contains(&pos)) {
                    return Err(SqlError::new(
                        SqlState::INVALID_TABLE_DEFINITION,
                        format!("column \"{name}\" is in a primary key"),
                    ));
                }
                d.entry.columns[pos].not_null = false;
            }
            Col::SetDefault { value: ast::Expr::Identifier(i) }
                if i.quote_style == Some('"') && i.value.starts_with(identity_syntax::MARKER) =>
            {
                let k: usize = i.value[identity_syntax::MARKER.len()..].parse().unwrap_or(usize::MAX);
                let steps =
                    self.statement.pre.identity_actions.as_ref().and_then(|a| a.get(k).cloned()).ok_or_else(
                        || SqlError::new(SqlState::INTERNAL_ERROR, "an identity action went missing"),
                    )?;
                for step in &steps {
                    self.identity_step(d, pos, name, step)?;
                }
            }
            Col::SetDefault { value } => {
                let ty = d.entry.columns[pos].ty;
                d.entry.columns[pos].default = Some(self.check_default(value, name, ty)?);
            }
            Col::DropDefault => d.entry.columns[pos].default = None,
            Col::SetDataType { data_type, using, had_set: _ } => {
                self.refuse_for_views(rel, Some(name), super::view::Altering::Type)?;
                let Source::Old(old) = d.sources[pos] else {
                    return Err(not_supported(
                        "ALTER COLUMN ... TYPE of a column added in the same statement",
                    ));
                };
                let (ty, domain) = self.resolve_type_with_domain(data_type)?;
                if !ty.storable() {
                    return Err(not_supported(format!("a column of type {}", ty.name())));
                }
                let mut col = ColumnDef {
                    ty,
                    domain: domain.map(|x| x.oid),
                    typmod: typmod_of(data_type),
                    ..d.entry.columns[pos].clone()
                };
                let converted = match using {
                    Some(e) => {
                        let scope = Scope::table(&rel.entry.name, rel);
                        let typed = self.expr(e, &scope)?;
                        self.coerce_to_column(typed, &col).map_err(|err| match err.code {
                            SqlState::DATATYPE_MISMATCH | SqlState::CANNOT_COERCE => SqlError::new(
                                SqlState::DATATYPE_MISMATCH,
                                format!(
                                    "result of USING clause for column \"{name}\" cannot be cast automatically to type {}",
                                    ty.name()
                                ),
                            )
                            .with_hint("You might need to add an explicit cast."),
                            _ => err,
                        })?
                    }
                    None => {
                        let from = rel.entry.columns[old].ty;
                        let typed = || Typed { e: Expr::Column(old), ty: Some(from) };
                        self.coerce(typed(), ty, Coercion::Assignment, "").map_err(|err| match err.code {
                            SqlState::DATATYPE_MISMATCH | SqlState::CANNOT_COERCE => SqlError::new(
                                SqlState::DATATYPE_MISMATCH,
                                format!(
                                    "column \"{name}\" cannot be cast automatically to type {}",
                                    ty.name()
                                ),
                            )
                            .with_hint(format!(
                                "You might need to specify \"USING {}::{}\".",
                                snapscale_values::quote_ident(name),
                                ty.name()
                            )),
                            _ => err,
                        })?;
                        self.coerce_to_column(typed(), &col)?
                    }
                };
                // The default must still fit the column (an identity's
                // draws from its sequence, which may not exist yet).
                if let Some(text) = col.default.clone().filter(|_| col.identity.is_none()) {
                    let e = crate::parse::parse_expr(&text, self.stack.limit())?;
                    let scope = Scope::empty();
                    let typed = self.expr(&e, &scope)?;
                    self.coerce(typed, ty, Coercion::Assignment, "").map_err(|_| {
                        SqlError::new(
                            SqlState::DATATYPE_MISMATCH,
                            format!(
                                "default for column \"{name}\" cannot be cast automatically to type {}",
                                ty.name()
                            ),
                        )
                    })?;
                }
                col.name = name.to_owned();
                d.entry.columns[pos] = col;
                d.sources[pos] = Source::Computed(converted);
                // The constraints that read it hold for the converted values.
                let names = d.entry.columns.iter().map(|c| c.name.as_str());
                for c in &d.entry.checks {
                    if crate::parse::column_refs::columns_read(&c.expr, names.clone()).contains(&pos)
                        && !d.validate.contains(&c.name)
                    {
                        d.validate.push(c.name.clone());
                    }
                }
            }
            Col::AddGenerated { generated_as, sequence_options } => {
                let table = d.entry.name.clone();
                let col = &d.entry.columns[pos];
                let unavailable = |m: String| SqlError::new(SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE, m);
                if !matches!(col.ty, SqlType::Int2 | SqlType::Int4 | SqlType::Int8) {
                    return Err(SqlError::new(
                        SqlState::INVALID_PARAMETER_VALUE,
                        "identity column type must be smallint, integer, or bigint",
                    ));
                }
                if col.identity.is_some() {
                    return Err(unavailable(format!(
                        "column \"{name}\" of relation \"{table}\" is already an identity column"
                    )));
                }
                if col.default.is_some() {
                    return Err(unavailable(format!(
                        "column \"{name}\" of relation \"{table}\" already has a default value"
                    )));
                }
                if !col.not_null {
                    return Err(unavailable(format!(
                        "column \"{name}\" of relation \"{table}\" must be declared NOT NULL before identity can be added"
                    )));
                }
                let kind = match generated_as {
                    Some(ast::GeneratedAs::ByDefault) => Identity::ByDefault,
                    _ => Identity::Always,
                };
                let ty = col.ty;
                let options = sequence_options.as_deref().unwrap_or_default();
                let default = self.serial(&table, name, ty, options, &mut d.serials)?;
                if let Some(s) = d.serials.last_mut() {
                    s.numbers_rows = false;
                }
                let col = &mut d.entry.columns[pos];
                col.identity = Some(kind);
                col.default = Some(default);
            }
        }
        Ok(())
    }

    /// One identity action on column `pos` (`name`): SET GENERATED, SET
    /// options / RESTART (ALTER SEQUENCE of the column's sequence), DROP
    /// IDENTITY (which drops the sequence), with PostgreSQL's 55000s.
    fn identity_step(
        &mut self,
        d: &mut Draft,
        pos: usize,
        name: &str,
        step: &identity_syntax::IdentityStep,
    ) -> Result<(), SqlError> {
        use identity_syntax::IdentityStep;
        let table = d.entry.name.clone();
        let not_identity = || {
            SqlError::new(
                SqlState::OBJECT_NOT_IN_PREREQUISITE_STATE,
                format!("column \"{name}\" of relation \"{table}\" is not an identity column"),
            )
        };
        let col = &d.entry.columns[pos];
        if col.identity.is_none() {
            if let IdentityStep::Drop { if_exists: true } = step {
                d.notices.push((
                    SqlState::SUCCESSFUL_COMPLETION,
                    format!("column \"{name}\" of relation \"{table}\" is not an identity column, skipping"),
                ));
                return Ok(());
            }
            return Err(not_identity());
        }
        // The sequence an identity column draws from: its default's
        // nextval('name'::regclass).
        let sequence = col
            .default
            .as_deref()
            .and_then(|t| t.split('\'').nth(1))
            .map(|s| s.replace("''", "'"))
            .ok_or_else(not_identity)?;
        let sequence = super::key_object_name(&super::sequence::sequence_name(&sequence)?);
        match step {
            IdentityStep::Generated(always) => {
                d.entry.columns[pos].identity =
                    Some(if *always { Identity::Always } else { Identity::ByDefault });
            }
            IdentityStep::Options(c) => {
                let rel = self.any_relation(&sequence, LockMode::ShareRowExclusive)?;
                let base = rel.entry.sequence.clone().ok_or_else(not_identity)?;
                // A sequence altered twice in one statement: the second
                // change is over the first.
                let base = d
                    .alter_sequences
                    .iter()
                    .rev()
                    .find(|(r, ..)| r.entry.oid == rel.entry.oid)
                    .map_or(base, |(_, def, _)| def.clone());
                let restart = match &c.restart {
                    None => None,
                    Some(None) => Some(base.start),
                    Some(Some(e)) => Some(self.sequence_option_value(e)?),
                };
                let def = self.sequence_def_over(Some(&base), base.ty, &c.options, restart)?;
                let restart = match &c.restart {
                    Some(None) => Some(def.start),
                    _ => restart,
                };
                match d.alter_sequences.iter_mut().find(|(r, ..)| r.entry.oid == rel.entry.oid) {
                    Some(entry) => {
                        entry.1 = def;
                        entry.2 = restart.or(entry.2);
                    }
                    None => d.alter_sequences.push((rel, def, restart)),
                }
            }
            IdentityStep::Drop { .. } => {
                let rel = self.any_relation(&sequence, LockMode::AccessExclusive)?;
                let col = &mut d.entry.columns[pos];
                col.identity = None;
                col.default = None;
                d.drop_sequences.push(rel);
            }
        }
        Ok(())
    }

    fn finish_alter(&mut self, rel: Rel, mut d: Draft) -> Result<Plan, SqlError> {
        let missing = self.appended(&rel, &mut d)?;
        let identity = d.sources.len() == rel.entry.columns.len()
            && d.sources.iter().enumerate().all(|(i, s)| matches!(s, Source::Old(o) if *o == i));
        let rewrite = (!identity).then(|| {
            d.sources
                .into_iter()
                .map(|s| match s {
                    Source::Old(o) => Expr::Column(o),
                    Source::Computed(e) => e,
                })
                .collect()
        });
        let scope = Scope::columns(&d.entry.columns);
        let mut validate = Vec::new();
        for c in d.entry.checks.iter().filter(|c| d.validate.contains(&c.name)) {
            let e = crate::parse::parse_expr(&c.expr, self.stack.limit())?;
            validate.push(crate::plan::TableCheck {
                name: c.name.clone(),
                expr: self.check_expr(&e, &scope)?,
                view: false,
                generated: None,
            });
        }
        let not_null = d.not_null.iter().filter_map(|n| d.entry.column(n)).collect();
        let serials = d.serials.into_iter().filter_map(|s| Some((d.entry.column(&s.column)?, s))).collect();
        let mut indexes: Vec<NewIndex> = Vec::new();
        for spec in d.indexes {
            indexes.push(spec.resolve(&d.entry.name, |n| d.entry.column(n))?);
        }
        Ok(Plan::Utility(Utility::AlterTable(Box::new(AlterTable {
            tag: "ALTER TABLE",
            rel,
            new: d.entry,
            rewrite,
            missing,
            validate,
            not_null,
            indexes,
            rename: d.rename,
            notices: d.notices,
            warnings: Vec::new(),
            serials,
            validate_fks: d.validate_fks,
            alter_sequences: d.alter_sequences,
            drop_sequences: d.drop_sequences,
            renamed_columns: d.renamed_columns,
        }))))
    }
}

impl<R: Resolver> Binder<'_, R> {
    /// ALTER TABLE … ALTER [COLUMN] c SET STORAGE / SET STATISTICS: the
    /// catalog row alone changes (the storage mode is shown, not acted on:
    /// rows live in memory; the statistics target waits for ANALYZE's
    /// statistics, issue 28). PostgreSQL's lock: SHARE UPDATE EXCLUSIVE
    /// when only statistics targets change, else ACCESS EXCLUSIVE.
    pub(super) fn alter_column_options(
        &mut self,
        a: &crate::parse::column_option_syntax::AlterColumnOptions,
    ) -> Result<Plan, SqlError> {
        use crate::parse::column_option_syntax::ColumnSetting;
        let table = relation_name(&a.table)?;
        if a.if_exists && self.resolver.resolve(&table)?.is_none() {
            return Ok(Plan::Utility(Utility::Skip {
                code: SqlState::SUCCESSFUL_COMPLETION,
                notice: format!("relation \"{}\" does not exist, skipping", super::bare_name(&a.table)?),
                tag: "ALTER TABLE",
            }));
        }
        let only_statistics = a.options.iter().all(|o| matches!(o.setting, ColumnSetting::Statistics(_)));
        let mode = if only_statistics { LockMode::ShareUpdateExclusive } else { LockMode::AccessExclusive };
        let rel = self
            .rel(&a.table, mode)
            .map_err(|e| SqlError::from(snapscale_values::ErrorData { position: None, ..e.into_data() }))?;
        let mut entry = (*rel.entry).clone();
        let mut warnings = Vec::new();
        for o in &a.options {
            let name = &o.column;
            let Some(c) = entry.column(name) else {
                if SYSTEM_COLUMNS.contains(&name.as_str()) {
                    return Err(SqlError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        format!("cannot alter system column \"{name}\""),
                    ));
                }
                return Err(SqlError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{name}\" of relation \"{}\" does not exist", entry.name),
                ));
            };
            let col = &mut entry.columns[c];
            match &o.setting {
                ColumnSetting::Storage(word) => {
                    let letter = match word.as_str() {
                        "plain" => b'p',
                        "external" => b'e',
                        "extended" => b'x',
                        "main" => b'm',
                        _ => {
                            return Err(SqlError::new(
                                SqlState::INVALID_PARAMETER_VALUE,
                                format!("invalid storage type \"{word}\""),
                            ))
                        }
                    };
                    let own = crate::catalog_views::storage_of(col.ty).3 as u8;
                    if own == b'p' && letter != b'p' {
                        return Err(SqlError::new(
                            SqlState::FEATURE_NOT_SUPPORTED,
                            format!("column data type {} can only have storage PLAIN", col.ty.name()),
                        ));
                    }
                    col.storage = (letter != own).then_some(letter);
                }
                ColumnSetting::Statistics(n) => {
                    if *n < -1 {
                        return Err(SqlError::new(
                            SqlState::INVALID_PARAMETER_VALUE,
                            format!("statistics target {n} is too low"),
                        ));
                    }
                    let n = if *n > 10_000 {
                        warnings.push((
                            SqlState::INVALID_PARAMETER_VALUE,
                            "lowering statistics target to 10000".to_owned(),
                        ));
                        10_000
                    } else {
                        *n as i32
                    };
                    col.stats_target = (n != -1).then_some(n);
                }
            }
        }
        Ok(Plan::Utility(Utility::AlterTable(Box::new(AlterTable {
            tag: "ALTER TABLE",
            rel,
            new: entry,
            rewrite: None,
            missing: Vec::new(),
            validate: Vec::new(),
            not_null: Vec::new(),
            indexes: Vec::new(),
            rename: None,
            notices: Vec::new(),
            warnings,
            serials: Vec::new(),
            validate_fks: Vec::new(),
            alter_sequences: Vec::new(),
            drop_sequences: Vec::new(),
            renamed_columns: Vec::new(),
        }))))
    }

    /// MISSING-COLUMN: when the statement's only change to the rows is
    /// columns added at the end whose values need no row to compute (a
    /// default that is not volatile, or none), those columns (taken out of
    /// `d.sources`, so the rows are not rewritten) with the expression
    /// each one's missing value is computed from once. As PostgreSQL 11
    /// and later, a serial, identity or generated column, or one of a
    /// domain type (whose constraints PostgreSQL checks on every row),
    /// rewrites the table instead.
    fn appended(&mut self, rel: &Rel, d: &mut Draft) -> Result<Vec<(usize, Expr)>, SqlError> {
        let old = rel.entry.columns.len();
        if d.sources.len() <= old
            || !d.sources[..old].iter().enumerate().all(|(i, s)| matches!(s, Source::Old(o) if *o == i))
        {
            return Ok(Vec::new());
        }
        for (c, source) in d.sources.iter().enumerate().skip(old) {
            let col = &d.entry.columns[c];
            let Source::Computed(e) = source else { return Ok(Vec::new()) };
            if col.generated.is_some()
                || col.identity.is_some()
                || col.domain.is_some()
                || d.serials.iter().any(|s| s.column == col.name)
                || volatile(e, &self.stack)?
            {
                return Ok(Vec::new());
            }
        }
        Ok(d.sources
            .drain(old..)
            .enumerate()
            .map(|(i, s)| match s {
                Source::Computed(e) => (old + i, e),
                Source::Old(_) => unreachable!("checked above"),
            })
            .collect())
    }
}

/// Whether `e` calls a volatile function (one it would call again for
/// each row).
fn volatile(e: &Expr, stack: &crate::stack::StackDepth) -> Result<bool, SqlError> {
    let mut found = false;
    e.visit(stack, &mut |x| {
        if let Expr::Func(f, _) = x {
            found |= f.is_volatile();
        }
    })?;
    Ok(found)
}

/// The system columns' names (PostgreSQL refuses to alter them).
const SYSTEM_COLUMNS: [&str; 6] = ["ctid", "xmin", "xmax", "cmin", "cmax", "tableoid"];

/// An action's name as PostgreSQL's messages word it.
fn action_name(o: &Op) -> Option<&'static str> {
    Some(match o {
        Op::AddColumn { .. } => "ADD COLUMN",
        Op::DropColumn { .. } => "DROP COLUMN",
        Op::AddConstraint { .. } => "ADD CONSTRAINT",
        Op::DropConstraint { .. } => "DROP CONSTRAINT",
        Op::RenameConstraint { .. } => "RENAME CONSTRAINT",
        Op::ValidateConstraint { .. } => "VALIDATE CONSTRAINT",
        Op::AlterColumn { op, .. } => match op {
            Col::SetNotNull => "ALTER COLUMN ... SET NOT NULL",
            Col::DropNotNull => "ALTER COLUMN ... DROP NOT NULL",
            Col::SetDataType { .. } => "ALTER COLUMN ... SET DATA TYPE",
            Col::AddGenerated { .. } => "ALTER COLUMN ... ADD IDENTITY",
            Col::SetDefault { .. } | Col::DropDefault => "ALTER COLUMN ... SET DEFAULT",
        },
        _ => return None,
    })
}

/// DROP COLUMN of a column a trigger names (in UPDATE OF or its WHEN
/// condition): 2BP01 naming each such trigger, as PostgreSQL's
/// dependencies do; with CASCADE the triggers go with the column.
fn drop_column_triggers(d: &mut Draft, cname: &str, cascade: bool) -> Result<(), SqlError> {
    let names: Vec<&str> = d.entry.columns.iter().map(|c| c.name.as_str()).collect();
    let Some(pos) = names.iter().position(|n| *n == cname) else { return Ok(()) };
    let depends = |t: &snapscale_engine::triggers::TriggerDef| {
        t.columns.iter().any(|c| c == cname)
            || t.when.as_deref().is_some_and(|w| {
                crate::parse::column_refs::columns_read(w, names.iter().copied()).contains(&pos)
            })
    };
    let table = d.entry.name.clone();
    // In the order they were made (the table keeps its triggers in name
    // order, the order they fire in).
    let mut found: Vec<_> = d.entry.triggers.iter().filter(|t| depends(t)).collect();
    found.sort_by_key(|t| t.oid);
    let dependents: Vec<String> =
        found.iter().map(|t| format!("trigger {} on table {table}", t.name)).collect();
    if dependents.is_empty() {
        return Ok(());
    }
    if !cascade {
        let detail: Vec<String> =
            dependents.iter().map(|t| format!("{t} depends on column {cname} of table {table}")).collect();
        return Err(super::foreign_keys::dependents_error(
            &format!("column {cname} of table {table}"),
            &detail,
        ));
    }
    let doomed: Vec<String> =
        d.entry.triggers.iter().filter(|t| depends(t)).map(|t| t.name.clone()).collect();
    d.entry.triggers.retain(|t| !doomed.contains(&t.name));
    if let Some((notice, _)) = super::foreign_keys::cascade_notice(&dependents) {
        d.notices.push((SqlState::SUCCESSFUL_COMPLETION, notice));
    }
    Ok(())
}
