//! The cluster's catalogs: namespaces, databases, roles, access methods,
//! collations and tablespaces.

use snapscale_values::Value;

use super::defs::{
    PG_AM, PG_AUTHID, PG_COLLATION, PG_CURSORS, PG_DATABASE, PG_NAMESPACE, PG_ROLES, PG_SETTINGS,
    PG_TABLESPACE, PG_USER,
};
use super::{
    CatalogState, RowBuilder, DATABASE_OWNER_ROLE, DEFAULT_COLLATION, INFORMATION_SCHEMA, PG_CATALOG,
    PG_TOAST, POSTGRES_ROLE, PUBLIC,
};

/// pg_namespace: the built-in schemas, and this session's temporary one
/// once it has a temporary table.
pub(super) fn namespaces(state: &CatalogState) -> Vec<Vec<Value>> {
    let mut spaces = vec![
        (PG_TOAST, "pg_toast".to_owned(), POSTGRES_ROLE),
        (PG_CATALOG, "pg_catalog".to_owned(), POSTGRES_ROLE),
        (PUBLIC, "public".to_owned(), DATABASE_OWNER_ROLE),
        (INFORMATION_SCHEMA, "information_schema".to_owned(), POSTGRES_ROLE),
    ];
    if state.relations.iter().any(|e| e.temp_owner.is_some()) {
        spaces.push((state.temp_namespace(), state.temp_namespace_name(), POSTGRES_ROLE));
    }
    spaces.retain(|(oid, ..)| !state.dropped_builtins.contains(oid));
    spaces.extend(state.schemas.iter().map(|e| (e.oid, e.name.clone(), state.role_of(&state.user))));
    spaces
        .into_iter()
        .map(|(oid, name, owner)| {
            RowBuilder::new(PG_NAMESPACE).set("oid", oid).set("nspname", name).set("nspowner", owner).build()
        })
        .collect()
}

/// pg_am: PostgreSQL's access methods (only heap and btree are used here).
pub(super) fn access_methods() -> Vec<Vec<Value>> {
    [
        (2u32, "heap", "heap_tableam_handler", 't'),
        (403, "btree", "bthandler", 'i'),
        (405, "hash", "hashhandler", 'i'),
        (783, "gist", "gisthandler", 'i'),
        (2742, "gin", "ginhandler", 'i'),
        (4000, "spgist", "spghandler", 'i'),
        (3580, "brin", "brinhandler", 'i'),
    ]
    .into_iter()
    .map(|(oid, name, handler, kind)| {
        RowBuilder::new(PG_AM)
            .set("oid", oid)
            .set("amname", name)
            .set("amhandler", Value::Reg(0, handler.into()))
            .set("amtype", kind)
            .build()
    })
    .collect()
}

/// pg_database: the database the session is in (`postgres` unless it
/// asked for another name), and the two templates. Text sorts as bytes
/// here: the "C" collation.
pub(super) fn databases(state: &CatalogState) -> Vec<Vec<Value>> {
    let template_acl =
        || Value::array(vec![Value::from("=c/postgres"), Value::from("postgres=CTc/postgres")]);
    let mut dbs = vec![
        (1u32, "template1".to_owned(), true, true, template_acl()),
        (4, "template0".into(), true, false, template_acl()),
    ];
    dbs.push((5, "postgres".into(), false, true, Value::Null));
    if state.database != "postgres" && state.database != "template0" && state.database != "template1" {
        dbs.push((16383, state.database.clone(), false, true, Value::Null));
    }
    dbs.into_iter()
        .map(|(oid, name, template, allow, acl)| {
            RowBuilder::new(PG_DATABASE)
                .set("oid", oid)
                .set("datname", name)
                .set("datdba", POSTGRES_ROLE)
                .set("encoding", 6)
                .set("datlocprovider", 'c')
                .set("datistemplate", template)
                .set("datallowconn", allow)
                .set("datconnlimit", -1)
                .set("datfrozenxid", state.db.engine.frozen_xid().0 as i64)
                .set("datminmxid", 1i64)
                .set("dattablespace", 1663u32)
                .set("datcollate", "C")
                .set("datctype", "C")
                .set("datacl", acl)
                .build()
        })
        .collect()
}

/// The roles: `postgres`, `pg_database_owner`, and the session's user if
/// it is another (every role here is a superuser).
fn role_list(state: &CatalogState) -> Vec<(u32, String, bool)> {
    let mut roles = vec![
        (POSTGRES_ROLE, "postgres".to_owned(), true),
        (DATABASE_OWNER_ROLE, "pg_database_owner".to_owned(), false),
    ];
    if state.user != "postgres" {
        roles.push((state.role_of(&state.user), state.user.clone(), true));
    }
    roles
}

pub(super) fn authids(state: &CatalogState) -> Vec<Vec<Value>> {
    role_list(state)
        .into_iter()
        .map(|(oid, name, login)| {
            RowBuilder::new(PG_AUTHID)
                .set("oid", oid)
                .set("rolname", name)
                .set("rolsuper", login)
                .set("rolinherit", true)
                .set("rolcreaterole", login)
                .set("rolcreatedb", login)
                .set("rolcanlogin", login)
                .set("rolreplication", login)
                .set("rolbypassrls", login)
                .set("rolconnlimit", -1)
                .build()
        })
        .collect()
}

pub(super) fn roles(state: &CatalogState) -> Vec<Vec<Value>> {
    role_list(state)
        .into_iter()
        .map(|(oid, name, login)| {
            RowBuilder::new(PG_ROLES)
                .set("oid", oid)
                .set("rolname", name)
                .set("rolsuper", login)
                .set("rolinherit", true)
                .set("rolcreaterole", login)
                .set("rolcreatedb", login)
                .set("rolcanlogin", login)
                .set("rolreplication", login)
                .set("rolbypassrls", login)
                .set("rolconnlimit", -1)
                .set("rolpassword", "********")
                .build()
        })
        .collect()
}

pub(super) fn users(state: &CatalogState) -> Vec<Vec<Value>> {
    role_list(state)
        .into_iter()
        .filter(|(_, _, login)| *login)
        .map(|(oid, name, _)| {
            RowBuilder::new(PG_USER)
                .set("usename", name)
                .set("usesysid", oid)
                .set("usecreatedb", true)
                .set("usesuper", true)
                .set("userepl", true)
                .set("usebypassrls", true)
                .set("passwd", "********")
                .build()
        })
        .collect()
}

pub(super) fn collations() -> Vec<Vec<Value>> {
    [(DEFAULT_COLLATION, "default", 'd', ""), (950, "C", 'c', "C"), (951, "POSIX", 'c', "POSIX")]
        .into_iter()
        .map(|(oid, name, provider, locale)| {
            let locale = if locale.is_empty() { Value::Null } else { Value::from(locale) };
            RowBuilder::new(PG_COLLATION)
                .set("oid", oid)
                .set("collname", name)
                .set("collnamespace", PG_CATALOG)
                .set("collowner", POSTGRES_ROLE)
                .set("collprovider", provider)
                .set("collisdeterministic", true)
                .set("collencoding", -1)
                .set("collcollate", locale.clone())
                .set("collctype", locale)
                .build()
        })
        .collect()
}

pub(super) fn tablespaces() -> Vec<Vec<Value>> {
    [(1663u32, "pg_default"), (1664, "pg_global")]
        .into_iter()
        .map(|(oid, name)| {
            RowBuilder::new(PG_TABLESPACE)
                .set("oid", oid)
                .set("spcname", name)
                .set("spcowner", POSTGRES_ROLE)
                .build()
        })
        .collect()
}

/// pg_cursors: the session's open cursors.
pub(super) fn cursors(state: &CatalogState) -> Vec<Vec<Value>> {
    state
        .cursors
        .iter()
        .map(|c| {
            RowBuilder::new(PG_CURSORS)
                .set("name", c.name.as_str())
                .set("statement", &*c.statement)
                .set("is_holdable", c.holdable)
                .set("is_binary", c.binary)
                .set("is_scrollable", c.scrollable)
                .set("creation_time", Value::TimestampTz(c.created))
                .build()
        })
        .collect()
}

/// pg_settings: every setting with its value as SHOW prints it and its
/// context; PostgreSQL's spelling of the names clients look up.
pub(super) fn settings(state: &CatalogState) -> Vec<Vec<Value>> {
    let mut rows: Vec<(String, &String, &str)> = state
        .settings
        .iter()
        .map(|(name, value, context)| {
            let shown = match *name {
                "timezone" => "TimeZone",
                "datestyle" => "DateStyle",
                "intervalstyle" => "IntervalStyle",
                other => other,
            };
            (shown.to_owned(), value, *context)
        })
        .collect();
    rows.sort_by(|a, b| a.0.cmp(&b.0));
    rows.into_iter()
        .map(|(name, value, context)| {
            let (setting, unit, vartype) = match crate::setting_kinds::describe(&name, value) {
                Some(described) => described,
                None if value == "on" || value == "off" => (value.clone(), None, "bool"),
                None if value.parse::<i64>().is_ok() => (value.clone(), None, "integer"),
                None => (value.clone(), None, "string"),
            };
            RowBuilder::new(PG_SETTINGS)
                .set("name", name)
                .set("setting", setting)
                .set("unit", unit.map_or(Value::Null, Value::from))
                .set("context", context)
                .set("vartype", vartype)
                .set("source", if context == "user" { "session" } else { "default" })
                .set("pending_restart", false)
                .build()
        })
        .collect()
}
