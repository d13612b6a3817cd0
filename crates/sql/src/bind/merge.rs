//! MERGE INTO target USING source ON condition WHEN [NOT] MATCHED [AND
//! condition] THEN UPDATE SET … | DELETE | INSERT … | DO NOTHING
//! (PostgreSQL 15's form).
//!
//! Bound as two queries over the same snapshot:
//!
//! * the matched pairs, as UPDATE … FROM binds its join (dml_join.rs):
//!   `SELECT <each WHEN MATCHED clause's condition and SET values> FROM
//!   target, source WHERE condition FOR [NO KEY] UPDATE OF target`, so each
//!   target row is locked as the join finds it and re-checked in its
//!   newest version (EPQ) before a clause is chosen for it;
//! * the source rows no target row matches: `SELECT <each WHEN NOT
//!   MATCHED clause's condition and values> FROM source WHERE NOT EXISTS
//!   (SELECT FROM target WHERE condition)`, read before any matched row is
//!   changed, so a row an UPDATE moves out of the join is not inserted
//!   again.
//!
//! Each row takes the first clause whose condition is true. What differs
//! from PostgreSQL: a target row that a concurrent transaction changes so
//! that it no longer matches is skipped, not offered to the WHEN NOT
//! MATCHED clauses.

use snapscale_engine::{LockMode, RowLockMode};
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType, Value};
use sqlparser::ast::{self, AssignmentTarget, MergeAction, MergeClauseKind};

use super::dml::is_default_keyword;
use super::{bare_name, ident, not_supported, relation_name, Binder, Coercion, Resolver, Typed};
use crate::expr::Expr;
use crate::plan::{MatchedAction, MatchedClause, Merge, NotMatchedClause, Plan};

impl<R: Resolver> Binder<'_, R> {
    pub(super) fn merge_into(&mut self, m: &ast::Merge) -> Result<Plan, SqlError> {
        match &m.output {
            None => {}
            // PostgreSQL 15's grammar has no MERGE … RETURNING.
            Some(ast::OutputClause::Returning { returning_token, .. }) => {
                let err = SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"RETURNING\"");
                let at = returning_token.0.span.start;
                return Err(match self.origin.as_deref().and_then(|o| o.position(at.line, at.column)) {
                    Some(p) => err.at_position(p),
                    None => err,
                });
            }
            Some(_) => return Err(not_supported("MERGE … OUTPUT")),
        }
        if !m.into {
            return Err(SqlError::new(
                SqlState::SYNTAX_ERROR,
                format!("syntax error at or near \"{}\"", m.table),
            ));
        }
        if m.clauses.is_empty() {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at end of input"));
        }
        if let ast::TableFactor::Table { name, .. } = &m.table {
            self.refuse_on_view(name, SqlState::FEATURE_NOT_SUPPORTED, |v| {
                format!("cannot execute MERGE on relation \"{v}\"")
            })?;
            let n = relation_name(name)?;
            if self.resolver.resolve(&n)?.is_some_and(|r| r.entry.is_matview()) {
                return Err(SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    format!("cannot execute MERGE on relation \"{n}\""),
                )
                .with_detail("This operation is not supported for materialized views."));
            }
        }
        // A WHEN clause after one of its kind without a condition can
        // never run.
        let (mut open_matched, mut open_unmatched) = (false, false);
        for c in &m.clauses {
            let open = match c.clause_kind {
                MergeClauseKind::Matched => &mut open_matched,
                _ => &mut open_unmatched,
            };
            if *open {
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    "unreachable WHEN clause specified after unconditional WHEN clause",
                ));
            }
            *open = c.predicate.is_none();
        }
        let (rel, alias) = self.table_factor(&m.table, LockMode::RowExclusive)?;
        let source_name = match &m.source {
            ast::TableFactor::Table { alias: Some(a), .. } => Some(ident(&a.name)),
            ast::TableFactor::Table { name, alias: None, .. } => bare_name(name).ok(),
            ast::TableFactor::Derived { alias: Some(a), .. } => Some(ident(&a.name)),
            _ => None,
        };
        if source_name.as_deref() == Some(alias.as_str()) {
            return Err(SqlError::new(
                SqlState::DUPLICATE_ALIAS,
                format!("name \"{alias}\" specified more than once"),
            )
            .with_detail("The name is used both as MERGE target table and data source."));
        }
        // The WHEN MATCHED clauses' conditions and SET values, in order,
        // as the join's outputs; DEFAULT is a NULL there, replaced by the
        // column's default once bound.
        let mut values: Vec<String> = Vec::new();
        let mut defaults: Vec<(usize, usize)> = Vec::new();
        let mut matched = Vec::new();
        let mut key_change = false;
        // The WHEN NOT MATCHED clauses' conditions and values.
        let mut inserts: Vec<String> = Vec::new();
        let mut not_matched: Vec<NotMatched> = Vec::new();
        let mut insert_defaults: Vec<usize> = Vec::new();
        for c in &m.clauses {
            let kind = match c.clause_kind {
                MergeClauseKind::Matched => true,
                MergeClauseKind::NotMatched | MergeClauseKind::NotMatchedByTarget => false,
                MergeClauseKind::NotMatchedBySource => {
                    return Err(not_supported("WHEN NOT MATCHED BY SOURCE"))
                }
            };
            if kind {
                if let Some(p) = &c.predicate {
                    values.push(p.to_string());
                }
                let action = match &c.action {
                    MergeAction::Update(u) => {
                        let ast::MergeUpdateKind::Set(assignments) = &u.kind else {
                            return Err(not_supported("UPDATE SET *"));
                        };
                        if u.update_predicate.is_some() || u.delete_predicate.is_some() {
                            return Err(not_supported("this form of MERGE … UPDATE"));
                        }
                        let mut sets = Vec::new();
                        let assignments = super::dml::single_assignments(self, assignments)?;
                        for a in assignments.iter() {
                            let AssignmentTarget::ColumnName(name) = &a.target else {
                                return Err(not_supported("multiple-column UPDATE SET in MERGE"));
                            };
                            let n = name.0.last().and_then(|p| p.as_ident()).map(ident).unwrap_or_default();
                            let pos = rel.entry.column(&n).ok_or_else(|| {
                                SqlError::new(
                                    SqlState::UNDEFINED_COLUMN,
                                    format!(
                                        "column \"{n}\" of relation \"{}\" does not exist",
                                        rel.entry.name
                                    ),
                                )
                            })?;
                            if sets.iter().any(|(p, _)| *p == pos) {
                                return Err(SqlError::new(
                                    SqlState::SYNTAX_ERROR,
                                    format!("multiple assignments to same column \"{n}\""),
                                ));
                            }
                            super::generated::check_writable(
                                &rel.entry.columns[pos],
                                true,
                                is_default_keyword(&a.value),
                            )?;
                            key_change |=
                                rel.entry.indexes.iter().any(|i| i.unique && i.columns.contains(&pos));
                            if is_default_keyword(&a.value) {
                                defaults.push((values.len(), pos));
                                values.push("NULL".into());
                            } else {
                                values.push(a.value.to_string());
                            }
                            sets.push((pos, Expr::Const(Value::Null)));
                        }
                        MatchedAction::Update(sets)
                    }
                    MergeAction::Delete { .. } => {
                        key_change = true;
                        MatchedAction::Delete
                    }
                    MergeAction::DoNothing { .. } => MatchedAction::Nothing,
                    MergeAction::Insert(_) => {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            "syntax error at or near \"INSERT\"",
                        ))
                    }
                };
                matched.push(MatchedClause {
                    cond: c.predicate.as_ref().map(|_| Expr::Const(Value::Null)),
                    action,
                });
            } else {
                let cond = c.predicate.as_ref().map(|p| {
                    inserts.push(p.to_string());
                    inserts.len() - 1
                });
                match &c.action {
                    MergeAction::Insert(i) => {
                        let ast::MergeInsertKind::Values(v) = &i.kind else {
                            return Err(not_supported("INSERT ROW"));
                        };
                        let [row] = v.rows.as_slice() else {
                            return Err(SqlError::new(
                                SqlState::SYNTAX_ERROR,
                                "syntax error at or near \",\"",
                            ));
                        };
                        let row = &row.content;
                        let targets: Vec<usize> = if i.columns.is_empty() {
                            (0..row.len().min(rel.entry.columns.len())).collect()
                        } else {
                            i.columns
                                .iter()
                                .map(|c| {
                                    let n =
                                        c.0.last().and_then(|p| p.as_ident()).map(ident).unwrap_or_default();
                                    rel.entry.column(&n).ok_or_else(|| {
                                        SqlError::new(
                                            SqlState::UNDEFINED_COLUMN,
                                            format!(
                                                "column \"{n}\" of relation \"{}\" does not exist",
                                                rel.entry.name
                                            ),
                                        )
                                    })
                                })
                                .collect::<Result<_, _>>()?
                        };
                        if row.len() > targets.len() || (row.len() > rel.entry.columns.len()) {
                            return Err(SqlError::new(
                                SqlState::SYNTAX_ERROR,
                                "INSERT has more expressions than target columns",
                            ));
                        }
                        if row.len() < targets.len() {
                            return Err(SqlError::new(
                                SqlState::SYNTAX_ERROR,
                                "INSERT has more target columns than expressions",
                            ));
                        }
                        for (e, &t) in row.iter().zip(&targets) {
                            super::generated::check_writable(
                                &rel.entry.columns[t],
                                false,
                                is_default_keyword(e),
                            )?;
                        }
                        let mut outputs = Vec::new();
                        for e in row {
                            outputs.push(inserts.len());
                            if is_default_keyword(e) {
                                insert_defaults.push(inserts.len());
                                inserts.push("NULL".into());
                            } else {
                                inserts.push(e.to_string());
                            }
                        }
                        not_matched.push(NotMatched { cond, targets: Some(targets), outputs });
                    }
                    MergeAction::DoNothing { .. } => {
                        not_matched.push(NotMatched { cond, targets: None, outputs: Vec::new() })
                    }
                    _ => {
                        return Err(SqlError::new(
                            SqlState::SYNTAX_ERROR,
                            "syntax error at or near \"UPDATE\"",
                        ))
                    }
                }
            }
        }
        let source = ast::TableWithJoins { relation: m.source.clone(), joins: Vec::new() };
        // The matched pairs, each target row locked.
        let strength = if key_change { RowLockMode::Update } else { RowLockMode::NoKeyUpdate };
        let mut join = self.join_query(&m.table, &alias, &[source], Some(&m.on), &values, None, strength)?;
        for (k, pos) in defaults {
            join.outputs[k] = self.column_default(&rel.entry.columns[pos])?;
            join.untyped.retain(|&u| u != k);
            join.columns[k].ty = rel.entry.columns[pos].ty;
        }
        let mut k = 0;
        let mut take = |b: &mut Self, want: Option<SqlType>, pos: Option<usize>| -> Result<Expr, SqlError> {
            let e = std::mem::replace(&mut join.outputs[k], Expr::Const(Value::Null));
            let ty = if join.untyped.contains(&k) { None } else { Some(join.columns[k].ty) };
            k += 1;
            match (want, pos) {
                (Some(t), _) => b.coerce(Typed { e, ty }, t, Coercion::Implicit, "argument of WHEN"),
                (None, Some(p)) => {
                    let col = rel.entry.columns[p].clone();
                    b.coerce_to_column(Typed { e, ty }, &col)
                }
                (None, None) => Ok(e),
            }
        };
        let mut outputs = Vec::new();
        for c in &mut matched {
            if c.cond.is_some() {
                let e = take(self, Some(SqlType::Bool), None)?;
                outputs.push(e);
            }
            if let MatchedAction::Update(sets) = &mut c.action {
                for (pos, _) in sets.iter() {
                    outputs.push(take(self, None, Some(*pos))?);
                }
            }
        }
        join.select.outputs = outputs;
        // The source rows nothing matches. The target is not theirs to
        // read: PostgreSQL's message names it so.
        let mut unmatched = self.unmatched_query(m, &alias, &inserts).map_err(|e| {
            if e.code == SqlState::UNDEFINED_TABLE
                && e.message == format!("missing FROM-clause entry for table \"{alias}\"")
            {
                SqlError::from(snapscale_values::ErrorData { message: format!("invalid reference to FROM-clause entry for table \"{alias}\""), ..e.into_data() })
                    .with_hint(format!(
                        "There is an entry for table \"{alias}\", but it cannot be referenced from this part of the query."
                    ))
            } else {
                e
            }
        })?;
        let untyped = std::mem::take(&mut self.query.untyped);
        let mut clauses = Vec::new();
        for NotMatched { cond, targets: insert, outputs: outs } in not_matched {
            if let Some(at) = cond {
                let e = std::mem::replace(&mut unmatched.outputs[at], Expr::Const(Value::Null));
                let ty = if untyped.contains(&at) { None } else { Some(unmatched.columns[at].ty) };
                unmatched.outputs[at] =
                    self.coerce(Typed { e, ty }, SqlType::Bool, Coercion::Implicit, "argument of WHEN")?;
            }
            let insert = match insert {
                None => None,
                Some(targets) => {
                    for (&t, &o) in targets.iter().zip(&outs) {
                        let col = rel.entry.columns[t].clone();
                        let e = std::mem::replace(&mut unmatched.outputs[o], Expr::Const(Value::Null));
                        unmatched.outputs[o] = if insert_defaults.contains(&o) {
                            self.column_default(&col)?
                        } else {
                            let ty = if untyped.contains(&o) { None } else { Some(unmatched.columns[o].ty) };
                            self.coerce_to_column(Typed { e, ty }, &col)?
                        };
                    }
                    let defaults = self.defaults(&rel, &targets)?;
                    Some((targets, outs, defaults))
                }
            };
            clauses.push(NotMatchedClause { cond, insert });
        }
        let mut checks = self.table_checks(&rel)?;
        checks.extend(self.take_view_checks(&rel)?);
        let foreign_keys = self.foreign_keys_for(&rel, super::foreign_keys::Writes::Change)?;
        Ok(Plan::Merge(Box::new(Merge {
            rel,
            join: join.select,
            matched,
            unmatched,
            not_matched: clauses,
            checks,
            foreign_keys,
        })))
    }

    /// `SELECT <items> FROM source WHERE NOT EXISTS (SELECT FROM target
    /// WHERE condition)`.
    fn unmatched_query(
        &mut self,
        m: &ast::Merge,
        alias: &str,
        items: &[String],
    ) -> Result<crate::plan::Select, SqlError> {
        let list = if items.is_empty() { "NULL".to_owned() } else { items.join(", ") };
        let target = match &m.table {
            ast::TableFactor::Table { name, .. } => {
                format!("{name} AS {}", snapscale_values::quote_ident(alias))
            }
            other => other.to_string(),
        };
        let sql =
            format!("SELECT {list} FROM {} WHERE NOT EXISTS (SELECT FROM {target} WHERE {})", m.source, m.on);
        let mut parsed = crate::parse::parse(&sql, self.stack.limit())?;
        let Some(crate::parse::Parsed::Sql(ast)) = parsed.pop() else {
            return Err(SqlError::new(SqlState::INTERNAL_ERROR, "the source query of a MERGE did not parse"));
        };
        let ast::Statement::Query(q) = &*ast else {
            return Err(SqlError::new(
                SqlState::INTERNAL_ERROR,
                "the source query of a MERGE is not a query",
            ));
        };
        // Not the user's text: its positions are not theirs to report.
        let origin = self.origin.take();
        let select = self.query(q);
        self.origin = origin;
        select
    }
}

/// A WHEN NOT MATCHED clause as its outputs are laid out: where its
/// condition is, and for INSERT the target columns and where their values
/// are.
struct NotMatched {
    cond: Option<usize>,
    targets: Option<Vec<usize>>,
    outputs: Vec<usize>,
}
