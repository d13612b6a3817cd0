//! COMMENT ON: which object a comment describes, found and checked as
//! PostgreSQL finds it (each kind word must name that kind; a column or
//! constraint must exist), and where it is kept: in the catalog row of
//! the relation or type it belongs to (COMMENTS in crates/sql/README.md),
//! written under SHARE UPDATE EXCLUSIVE.

use snapscale_engine::catalog::Described;
use snapscale_engine::user_types::TypeDef;
use snapscale_engine::LockMode;
use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::ast::ObjectName;

use super::{relation_name, Binder, Resolver};
use crate::parse::comment_syntax::{CommentOn, CommentTarget, RelationKind};
use crate::plan::{AlterTypeOp, Plan, RelKind, Utility};

fn wrong(name: &str, what: &str) -> SqlError {
    SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("\"{name}\" is not {what}"))
}

fn missing_relation(name: &str) -> SqlError {
    SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{name}\" does not exist"))
}

impl<R: Resolver> Binder<'_, R> {
    pub(super) fn comment(&mut self, c: &CommentOn) -> Result<Plan, SqlError> {
        let text = c.text.clone();
        let on_relation = |b: &mut Self, name: &ObjectName, on: Described| -> Result<Plan, SqlError> {
            let rel = b.any_relation(name, LockMode::ShareUpdateExclusive).map_err(|e| {
                SqlError::from(snapscale_values::ErrorData { position: None, ..e.into_data() })
            })?;
            Ok(Plan::Utility(Utility::Comment { rel, on, text: text.clone() }))
        };
        match &c.target {
            CommentTarget::Relation(RelationKind::Index, name) => {
                let n = relation_name(name)?;
                if let Some(owner) = self.resolver.index_owner(&n)? {
                    let table = self.name_of(&owner.entry)?;
                    return on_relation(self, &table, Described::Index(snapscale_engine::names::bare(&n)));
                }
                Err(match self.resolver.resolve(&n)? {
                    Some(_) => wrong(&n, "an index"),
                    None => missing_relation(&n),
                })
            }
            CommentTarget::Relation(kind, name) => {
                let n = relation_name(name)?;
                let Some(rel) = self.resolver.resolve(&n)? else { return Err(missing_relation(&n)) };
                let found = RelKind::of(&rel.entry);
                let (want, what) = match kind {
                    RelationKind::Table => (RelKind::Table, "a table"),
                    RelationKind::View => (RelKind::View, "a view"),
                    RelationKind::MatView => (RelKind::MatView, "a materialized view"),
                    RelationKind::Sequence => (RelKind::Sequence, "a sequence"),
                    RelationKind::Index => unreachable!("read above"),
                };
                if found != want {
                    return Err(wrong(&n, what));
                }
                on_relation(self, name, Described::Relation)
            }
            CommentTarget::Column(name, column) => {
                let n = relation_name(name)?;
                let Some(rel) = self.resolver.resolve(&n)? else {
                    // A composite type's attribute.
                    if let Some(entry) = self.resolver.user_type(&n)? {
                        if matches!(entry.user_type, Some(TypeDef::Composite))
                            && entry.column(column).is_some()
                        {
                            let op = AlterTypeOp::Comment { on: Described::Column(column.clone()), text };
                            return Ok(Plan::Utility(Utility::AlterType {
                                oid: entry.oid,
                                op,
                                domain: false,
                            }));
                        }
                    }
                    return Err(missing_relation(&n));
                };
                if RelKind::of(&rel.entry) == RelKind::Sequence {
                    return Err(SqlError::new(
                        SqlState::WRONG_OBJECT_TYPE,
                        format!("cannot set comment on relation \"{n}\""),
                    )
                    .with_detail("This operation is not supported for sequences."));
                }
                if rel.entry.column(column).is_none() {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("column \"{column}\" of relation \"{n}\" does not exist"),
                    ));
                }
                on_relation(self, name, Described::Column(column.clone()))
            }
            CommentTarget::Constraint(constraint, name, false) => {
                let n = relation_name(name)?;
                let Some(rel) = self.resolver.resolve(&n)? else { return Err(missing_relation(&n)) };
                let e = &rel.entry;
                let exists = e.checks.iter().any(|k| k.name == *constraint)
                    || e.foreign_keys.iter().any(|f| f.name == *constraint)
                    || e.indexes.iter().any(|i| i.constraint && i.name == *constraint);
                if !exists {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("constraint \"{constraint}\" for table \"{n}\" does not exist"),
                    ));
                }
                on_relation(self, name, Described::Constraint(constraint.clone()))
            }
            CommentTarget::Constraint(constraint, name, true) => {
                let entry = self.comment_type(name, true)?;
                let has = matches!(&entry.user_type, Some(TypeDef::Domain(d)) if d.checks.iter().any(|k| k.name == *constraint));
                if !has {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("constraint \"{constraint}\" for domain {} does not exist", entry.name),
                    ));
                }
                let op = AlterTypeOp::Comment { on: Described::Constraint(constraint.clone()), text };
                Ok(Plan::Utility(Utility::AlterType { oid: entry.oid, op, domain: true }))
            }
            CommentTarget::Routine(word, signature) => {
                let sql = format!("DROP FUNCTION {signature}");
                let dialect = sqlparser::dialect::PostgreSqlDialect {};
                let parsed = sqlparser::parser::Parser::parse_sql(&dialect, &sql).map_err(|_| {
                    SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{signature}\""))
                })?;
                let Some(sqlparser::ast::Statement::DropFunction(d)) = parsed.first() else {
                    return Err(SqlError::new(
                        SqlState::SYNTAX_ERROR,
                        format!("syntax error at or near \"{signature}\""),
                    ));
                };
                let Some(f) = d.func_desc.first() else {
                    return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at end of input"));
                };
                let w = match *word {
                    "PROCEDURE" => super::routines::Word::Procedure,
                    "ROUTINE" => super::routines::Word::Routine,
                    _ => super::routines::Word::Function,
                };
                let entry = self.lookup_routine(f, w, false)?.expect("not missing_ok");
                Ok(Plan::Utility(Utility::CommentRoutine { oid: entry.oid, text }))
            }
            CommentTarget::Trigger(trigger, name) => {
                let n = relation_name(name)?;
                let Some(rel) = self.resolver.resolve(&n)? else { return Err(missing_relation(&n)) };
                if !rel.entry.triggers.iter().any(|t| t.name == *trigger) {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("trigger \"{trigger}\" for table \"{}\" does not exist", rel.entry.name),
                    ));
                }
                on_relation(self, name, Described::Trigger(trigger.clone()))
            }
            CommentTarget::Type(name, domain) => {
                let entry = self.comment_type(name, *domain)?;
                let op = AlterTypeOp::Comment { on: Described::Relation, text };
                Ok(Plan::Utility(Utility::AlterType { oid: entry.oid, op, domain: *domain }))
            }
        }
    }

    /// The type (or, `domain`, the domain) `name`.
    fn comment_type(
        &mut self,
        name: &ObjectName,
        domain: bool,
    ) -> Result<std::sync::Arc<snapscale_engine::catalog::RelEntry>, SqlError> {
        let n = relation_name(name)?;
        let Some(entry) = self.resolver.user_type(&n)? else {
            return Err(SqlError::new(SqlState::UNDEFINED_OBJECT, format!("type \"{n}\" does not exist")));
        };
        if domain && !matches!(entry.user_type, Some(TypeDef::Domain(_))) {
            return Err(wrong(&n, "a domain"));
        }
        Ok(entry)
    }
}
