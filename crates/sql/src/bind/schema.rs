//! CREATE SCHEMA, DROP SCHEMA, ALTER SCHEMA and ALTER … SET SCHEMA: the
//! namespaces relations and types live in (REL-KEY in the engine's
//! README says how names find them).

use snapscale_engine::catalog::{RelEntry, PG_CATALOG_NAMESPACE, PUBLIC_NAMESPACE};
use snapscale_engine::{LockMode, Rel};
use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::ast;

use super::{ident, not_supported, relation_name, Binder, Resolver};
use crate::parse::schema_syntax::{SetSchema, SetSchemaKind};
use crate::plan::{Plan, RelKind, Utility};

/// A schema name as written: one identifier.
fn schema_name(name: &ast::ObjectName) -> Result<String, SqlError> {
    match name.0.as_slice() {
        [part] => part.as_ident().map(ident).ok_or_else(|| not_supported(format!("schema name {name}"))),
        _ => Err(SqlError::new(
            SqlState::SYNTAX_ERROR,
            format!("improper qualified name (too many dotted names): {name}"),
        )),
    }
}

/// 42704 for a role that is not the session's (there is one role per
/// session until roles exist).
pub(super) fn check_role(role: &str, user: &str) -> Result<(), SqlError> {
    let keyword = ["current_user", "current_role", "session_user"].contains(&role);
    if keyword || role == user {
        Ok(())
    } else {
        Err(SqlError::new(SqlState::UNDEFINED_OBJECT, format!("role \"{role}\" does not exist")))
    }
}

/// 42939 for a name in the `pg_` prefix PostgreSQL keeps for itself.
fn check_reserved(name: &str) -> Result<(), SqlError> {
    if name.starts_with("pg_") {
        return Err(SqlError::new(SqlState::RESERVED_NAME, format!("unacceptable schema name \"{name}\""))
            .with_detail("The prefix \"pg_\" is reserved for system schemas."));
    }
    Ok(())
}

impl<R: Resolver> Binder<'_, R> {
    pub(super) fn create_schema(
        &mut self,
        name: &ast::SchemaName,
        if_not_exists: bool,
    ) -> Result<Plan, SqlError> {
        let user = self.resolver.session_user();
        let name = match name {
            ast::SchemaName::Simple(n) => schema_name(n)?,
            ast::SchemaName::UnnamedAuthorization(role) => {
                let role = ident(role);
                check_role(&role, &user)?;
                if ["current_user", "current_role", "session_user"].contains(&role.as_str()) {
                    user.clone()
                } else {
                    role
                }
            }
            ast::SchemaName::NamedAuthorization(n, role) => {
                check_role(&ident(role), &user)?;
                schema_name(n)?
            }
        };
        check_reserved(&name)?;
        Ok(Plan::Utility(Utility::CreateSchema { name, if_not_exists }))
    }

    /// DROP SCHEMA [IF EXISTS] name, … [CASCADE | RESTRICT].
    pub(super) fn drop_schema(
        &mut self,
        names: &[ast::ObjectName],
        if_exists: bool,
        cascade: bool,
    ) -> Result<Plan, SqlError> {
        let mut schemas = Vec::new();
        let mut members: Vec<(String, std::sync::Arc<RelEntry>)> = Vec::new();
        for n in names {
            let name = schema_name(n)?;
            match self.resolver.namespace(&name)? {
                None if if_exists => schemas.push((name, None)),
                None => return Err(snapscale_engine::xact::no_schema(&name)),
                Some(oid) if oid < snapscale_engine::catalog::FIRST_OID && oid != PUBLIC_NAMESPACE => {
                    return Err(SqlError::new(
                        SqlState::DEPENDENT_OBJECTS_STILL_EXIST,
                        format!("cannot drop schema {name} because it is required by the database system"),
                    ))
                }
                Some(oid) => {
                    members
                        .extend(self.resolver.namespace_members(oid)?.into_iter().map(|e| (name.clone(), e)));
                    schemas.push((name, Some(oid)));
                }
            }
        }
        // Each schema's members in the order they were made; the schemas
        // last named first, as PostgreSQL's report lists them.
        let order: Vec<String> = schemas.iter().map(|(n, _)| n.clone()).collect();
        members.sort_by_key(|(s, e)| (std::cmp::Reverse(order.iter().position(|n| n == s)), e.oid));
        // A sequence a column owns goes with its table, unnamed.
        let oids: Vec<u32> = members.iter().map(|(_, e)| e.oid).collect();
        members.retain(|(_, e)| {
            !e.sequence
                .as_ref()
                .and_then(|q| q.owned_by.as_ref())
                .is_some_and(|o| oids.contains(&o.table_oid))
        });
        let mut targets = Vec::new();
        let mut named = Vec::new();
        for (schema, e) in &members {
            let shown = match e.is_relation() {
                true => self.shown_name(e)?,
                // A function as PostgreSQL names it: qualified, with its
                // input types.
                false if e.routine.is_some() => {
                    let types = e.routine.as_ref().map(|r| r.input_type_list()).unwrap_or_default();
                    format!("{schema}.{}({types})", e.name)
                }
                // A type as format_type names it: qualified unless the
                // search_path finds it.
                false => match self.resolver.user_type(&snapscale_engine::names::key(None, &e.name))? {
                    Some(t) if t.oid == e.oid => e.name.clone(),
                    _ => format!("{schema}.{}", e.name),
                },
            };
            named.push(format!("{} {shown}", member_kind(e)));
            if !e.is_relation() {
                continue;
            }
            let Some(rel) = self.resolver.relation_by_oid(e.oid)? else { continue };
            self.dep_reached(&rel, LockMode::AccessExclusive)?;
            targets.push((e.name.clone(), Some(rel)));
        }
        let (detach, reached) = self.dependents(&mut targets)?;
        // Depth first from each member in the order they were made, each
        // object once, as PostgreSQL's dependency walk names them.
        let mut lines: Vec<(String, String)> = Vec::new();
        for ((schema, _), member) in members.iter().zip(&named) {
            walk(member, &format!("schema {schema}"), &reached, &named, &mut lines);
        }
        if !cascade && !lines.is_empty() {
            let (_, first) = &lines[0];
            let detail: Vec<String> = lines.iter().map(|(l, t)| format!("{l} depends on {t}")).collect();
            return Err(super::foreign_keys::dependents_error(first, &detail));
        }
        let names: Vec<String> = lines.into_iter().map(|(l, _)| l).collect();
        let cascaded = super::foreign_keys::cascade_notice(&names);
        let types = members
            .iter()
            .filter(|(_, e)| e.user_type.is_some())
            .map(|(_, e)| (e.name.clone(), Some(e.oid)))
            .collect();
        let routines = members
            .iter()
            .filter(|(_, e)| e.routine.is_some())
            .map(|(_, e)| (e.name.clone(), Some(e.oid)))
            .collect();
        let relations =
            Box::new(Utility::DropTable { targets, kind: RelKind::Table, detach, cascaded: None });
        Ok(Plan::Utility(Utility::DropSchema { schemas, relations, types, routines, cascaded }))
    }

    /// ALTER SCHEMA name {RENAME TO new | OWNER TO role}.
    pub(super) fn alter_schema(&mut self, a: &ast::AlterSchema) -> Result<Plan, SqlError> {
        let name = schema_name(&a.name)?;
        let [op] = a.operations.as_slice() else {
            return Err(not_supported("ALTER SCHEMA with several actions"));
        };
        let oid = match self.resolver.namespace(&name)? {
            Some(oid) => oid,
            None => return Err(snapscale_engine::xact::no_schema(&name)),
        };
        match op {
            ast::AlterSchemaOperation::Rename { name: new } => {
                let new = schema_name(new)?;
                if oid < snapscale_engine::catalog::FIRST_OID {
                    return Err(not_supported(format!("renaming schema {name}")));
                }
                check_reserved(&new)?;
                if self.resolver.namespace(&new)?.is_some() {
                    return Err(SqlError::new(
                        SqlState::DUPLICATE_SCHEMA,
                        format!("schema \"{new}\" already exists"),
                    ));
                }
                Ok(Plan::Utility(Utility::AlterSchema { oid, new: Some(new) }))
            }
            ast::AlterSchemaOperation::OwnerTo { owner } => {
                let role = owner.to_string();
                let role = match role.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
                    Some(quoted) => quoted.replace("\"\"", "\""),
                    None => role.to_lowercase(),
                };
                check_role(&role, &self.resolver.session_user())?;
                Ok(Plan::Utility(Utility::AlterSchema { oid, new: None }))
            }
            other => Err(not_supported(format!("ALTER SCHEMA … {other}"))),
        }
    }

    /// ALTER {TABLE | VIEW | MATERIALIZED VIEW | SEQUENCE | TYPE | DOMAIN}
    /// [IF EXISTS] name SET SCHEMA schema.
    pub(super) fn set_schema(&mut self, s: &SetSchema) -> Result<Plan, SqlError> {
        let key = relation_name(&s.name)?;
        let tag = s.kind.tag();
        let (oid, entry) = match s.kind {
            SetSchemaKind::Type | SetSchemaKind::Domain => match self.resolver.user_type(&key)? {
                Some(e) => (e.oid, e),
                None if s.if_exists => {
                    return Ok(skip(format!("type \"{key}\" does not exist, skipping"), tag))
                }
                None => {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_OBJECT,
                        format!("type \"{key}\" does not exist"),
                    ))
                }
            },
            _ => match self.resolver.resolve(&key)? {
                Some(rel) => {
                    self.check_kind(&rel, s.kind, &key)?;
                    self.dep(&key, &rel, LockMode::AccessExclusive);
                    (rel.entry.oid, rel.entry.clone())
                }
                None if s.if_exists => {
                    return Ok(skip(format!("relation \"{key}\" does not exist, skipping"), tag));
                }
                None => {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_TABLE,
                        format!("relation \"{key}\" does not exist"),
                    ))
                }
            },
        };
        let namespace = match self.resolver.namespace(&s.schema)? {
            Some(n) => n,
            None => return Err(snapscale_engine::xact::no_schema(&s.schema)),
        };
        if entry.temp_owner.is_some() {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "cannot move objects into or out of temporary schemas",
            ));
        }
        if namespace == PG_CATALOG_NAMESPACE || entry.namespace == PG_CATALOG_NAMESPACE {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "cannot move objects into or out of TOAST schema",
            ));
        }
        if let Some(seq) = entry.sequence.as_ref().and_then(|q| q.owned_by.as_ref()) {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "cannot move an owned sequence into another schema",
            )
            .with_detail(format!("Sequence \"{}\" is linked to table \"{}\".", entry.name, seq.table)));
        }
        if namespace == entry.namespace {
            // What is already there stays, as PostgreSQL leaves it.
            return Ok(Plan::Utility(Utility::Skip {
                code: SqlState::SUCCESSFUL_COMPLETION,
                notice: String::new(),
                tag,
            }));
        }
        let moved = snapscale_engine::names::key(Some(&s.schema), &entry.name);
        let taken = match entry.user_type {
            Some(_) => self.resolver.user_type(&moved)?.is_some(),
            None => self.resolver.resolve(&moved)?.is_some(),
        };
        if taken {
            let (code, what) = match entry.user_type {
                Some(_) => (SqlState::DUPLICATE_OBJECT, "type"),
                None => (SqlState::DUPLICATE_TABLE, "relation"),
            };
            return Err(SqlError::new(
                code,
                format!("{what} \"{}\" already exists in schema \"{}\"", entry.name, s.schema),
            ));
        }
        Ok(Plan::Utility(Utility::SetSchema { oid, namespace, tag }))
    }

    /// 42809 when the relation is not of the kind the statement names
    /// (ALTER TABLE takes any, as PostgreSQL's does).
    fn check_kind(&self, rel: &Rel, kind: SetSchemaKind, key: &str) -> Result<(), SqlError> {
        let is = RelKind::of(&rel.entry);
        let wrong = match kind {
            SetSchemaKind::Table => false,
            SetSchemaKind::View => is != RelKind::View,
            SetSchemaKind::MatView => is != RelKind::MatView,
            SetSchemaKind::Sequence => is != RelKind::Sequence,
            SetSchemaKind::Type | SetSchemaKind::Domain => false,
        };
        if wrong {
            return Err(SqlError::new(
                SqlState::WRONG_OBJECT_TYPE,
                format!("\"{}\" is not a {}", snapscale_engine::names::bare(key), kind.word()),
            ));
        }
        Ok(())
    }
}

fn skip(notice: String, tag: &'static str) -> Plan {
    Plan::Utility(Utility::Skip { code: SqlState::SUCCESSFUL_COMPLETION, notice, tag })
}

/// How PostgreSQL's dependency messages name a member of a schema.
fn member_kind(e: &RelEntry) -> &'static str {
    if e.routine.is_some() {
        return "function";
    }
    match (&e.user_type, RelKind::of(e)) {
        (Some(_), _) => "type",
        (None, RelKind::Table) => "table",
        (None, RelKind::View) => "view",
        (None, RelKind::MatView) => "materialized view",
        (None, RelKind::Sequence) => "sequence",
    }
}

/// `what` (depending on `on`) and, depth first, what depends on it among
/// `reached`, each named once in `lines`; a member of the schema is named
/// as depending on the schema, in its own turn.
fn walk(
    what: &str,
    on: &str,
    reached: &[(String, String)],
    members: &[String],
    lines: &mut Vec<(String, String)>,
) {
    if lines.iter().any(|(l, _)| l == what) {
        return;
    }
    lines.push((what.to_owned(), on.to_owned()));
    for (dependent, target) in reached {
        if target == what && !members.contains(dependent) {
            walk(dependent, what, reached, members, lines);
        }
    }
}
