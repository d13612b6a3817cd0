//! The `pg_catalog` and `information_schema` relations, computed from the
//! catalog as the reading statement's snapshot sees it.
//!
//! snapscale keeps one catalog row per relation (CATALOG-MVCC); the
//! relations psql, drivers and tools read (`pg_class`, `pg_attribute`,
//! `pg_type`, `pg_index`, …) are views of those rows, computed when a
//! statement reads them, so they are consistent with its snapshot and with
//! each other. Their columns are PostgreSQL 15's (`defs.rs`). Objects this
//! server does not have (triggers, rules, policies, publications, …) are
//! relations with no rows, so that queries over them bind and answer
//! correctly.
//!
//! Object ids: user relations and indexes have the catalog's oids (from
//! 16384, PostgreSQL's FirstNormalObjectId). A PRIMARY KEY or UNIQUE
//! constraint has its index's oid (PostgreSQL's oids are unique per
//! catalog, not across them), a column default the oid `relation × 1600 +
//! column` (modulo 2³²). Built-in objects have PostgreSQL's fixed oids:
//! the types, the `pg_catalog` (11) and `public` (2200) namespaces, the
//! bootstrap superuser `postgres` (10) that owns every object, the heap
//! (2) and btree (403) access methods, and the catalog relations
//! themselves, which `pg_class` lists too. A temporary table lives in its
//! session's `pg_temp_N` namespace, visible to that session only.

mod activity;
mod defs;
mod deparse;
mod functions;
pub(crate) use functions::index_key_parts;
mod info_schema;
mod relations;
mod routines;
mod statistics;
mod system;
mod triggers;
mod types;
pub(crate) use types::storage_of;

use std::sync::Arc;

use snapscale_engine::catalog::{RelEntry, Row};
use snapscale_engine::database::Database;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType, Value};
use sqlparser::ast::ObjectName;

/// A column of a computed relation.
#[derive(Clone, Copy, Debug)]
pub struct ViewColumn {
    pub name: &'static str,
    pub ty: SqlType,
}

/// Where a computed relation lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Schema {
    PgCatalog,
    InformationSchema,
}

/// One computed relation's definition.
struct ViewDef {
    schema: Schema,
    name: &'static str,
    oid: u32,
    /// `r` for PostgreSQL's catalog tables, `v` for its views.
    kind: char,
    columns: &'static [ViewColumn],
}

const fn view(
    schema: Schema,
    name: &'static str,
    oid: u32,
    kind: char,
    columns: &'static [ViewColumn],
) -> ViewDef {
    ViewDef { schema, name, oid, kind, columns }
}

use Schema::{InformationSchema as IS, PgCatalog as PG};

/// Every computed relation; [`View`] is an index here.
static VIEWS: &[ViewDef] = &[
    view(PG, "pg_namespace", 2615, 'r', defs::PG_NAMESPACE),
    view(PG, "pg_class", 1259, 'r', defs::PG_CLASS),
    view(PG, "pg_attribute", 1249, 'r', defs::PG_ATTRIBUTE),
    view(PG, "pg_type", 1247, 'r', defs::PG_TYPE),
    view(PG, "pg_index", 2610, 'r', defs::PG_INDEX),
    view(PG, "pg_constraint", 2606, 'r', defs::PG_CONSTRAINT),
    view(PG, "pg_attrdef", 2604, 'r', defs::PG_ATTRDEF),
    view(PG, "pg_sequence", 2224, 'r', defs::PG_SEQUENCE),
    view(PG, "pg_am", 2601, 'r', defs::PG_AM),
    view(PG, "pg_database", 1262, 'r', defs::PG_DATABASE),
    view(PG, "pg_authid", 1260, 'r', defs::PG_AUTHID),
    view(PG, "pg_auth_members", 1261, 'r', defs::PG_AUTH_MEMBERS),
    view(PG, "pg_proc", 1255, 'r', defs::PG_PROC),
    view(PG, "pg_description", 2609, 'r', defs::PG_DESCRIPTION),
    view(PG, "pg_shdescription", 2396, 'r', defs::PG_SHDESCRIPTION),
    view(PG, "pg_inherits", 2611, 'r', defs::PG_INHERITS),
    view(PG, "pg_collation", 3456, 'r', defs::PG_COLLATION),
    view(PG, "pg_tablespace", 1213, 'r', defs::PG_TABLESPACE),
    view(PG, "pg_policy", 3256, 'r', defs::PG_POLICY),
    view(PG, "pg_statistic_ext", 3381, 'r', defs::PG_STATISTIC_EXT),
    view(PG, "pg_publication", 6104, 'r', defs::PG_PUBLICATION),
    view(PG, "pg_publication_rel", 6106, 'r', defs::PG_PUBLICATION_REL),
    view(PG, "pg_publication_namespace", 6237, 'r', defs::PG_PUBLICATION_NAMESPACE),
    view(PG, "pg_trigger", 2620, 'r', defs::PG_TRIGGER),
    view(PG, "pg_rewrite", 2618, 'r', defs::PG_REWRITE),
    view(PG, "pg_extension", 3079, 'r', defs::PG_EXTENSION),
    view(PG, "pg_enum", 3501, 'r', defs::PG_ENUM),
    view(PG, "pg_range", 3541, 'r', defs::PG_RANGE),
    view(PG, "pg_depend", 2608, 'r', defs::PG_DEPEND),
    view(PG, "pg_aggregate", 2600, 'r', defs::PG_AGGREGATE),
    view(PG, "pg_cast", 2605, 'r', defs::PG_CAST),
    view(PG, "pg_conversion", 2607, 'r', defs::PG_CONVERSION),
    view(PG, "pg_event_trigger", 3466, 'r', defs::PG_EVENT_TRIGGER),
    view(PG, "pg_foreign_data_wrapper", 2328, 'r', defs::PG_FOREIGN_DATA_WRAPPER),
    view(PG, "pg_foreign_server", 1417, 'r', defs::PG_FOREIGN_SERVER),
    view(PG, "pg_foreign_table", 3118, 'r', defs::PG_FOREIGN_TABLE),
    view(PG, "pg_language", 2612, 'r', defs::PG_LANGUAGE),
    view(PG, "pg_opclass", 2616, 'r', defs::PG_OPCLASS),
    view(PG, "pg_operator", 2617, 'r', defs::PG_OPERATOR),
    view(PG, "pg_opfamily", 2753, 'r', defs::PG_OPFAMILY),
    view(PG, "pg_ts_config", 3602, 'r', defs::PG_TS_CONFIG),
    view(PG, "pg_user_mapping", 1418, 'r', defs::PG_USER_MAPPING),
    view(PG, "pg_roles", 12001, 'v', defs::PG_ROLES),
    view(PG, "pg_user", 12002, 'v', defs::PG_USER),
    view(PG, "pg_settings", 12003, 'v', defs::PG_SETTINGS),
    view(PG, "pg_tables", 12004, 'v', defs::PG_TABLES),
    view(PG, "pg_indexes", 12005, 'v', defs::PG_INDEXES),
    view(PG, "pg_views", 12006, 'v', defs::PG_VIEWS),
    view(PG, "pg_matviews", 12007, 'v', defs::PG_MATVIEWS),
    view(PG, "pg_sequences", 12008, 'v', defs::PG_SEQUENCES),
    view(PG, "pg_stat_activity", 12009, 'v', defs::PG_STAT_ACTIVITY),
    view(PG, "pg_locks", 12010, 'v', defs::PG_LOCKS),
    view(PG, "pg_stat_user_tables", 12011, 'v', defs::PG_STAT_USER_TABLES),
    view(PG, "pg_cursors", 12012, 'v', defs::PG_CURSORS),
    view(PG, "pg_stat_ssl", 12040, 'v', defs::PG_STAT_SSL),
    view(PG, "pg_statistic", 2619, 'r', defs::PG_STATISTIC),
    view(PG, "pg_stats", 12013, 'v', defs::PG_STATS),
    view(IS, "schemata", 13001, 'v', info_schema::INFO_SCHEMATA),
    view(IS, "tables", 13002, 'v', info_schema::INFO_TABLES),
    view(IS, "columns", 13003, 'v', info_schema::INFO_COLUMNS),
    view(IS, "table_constraints", 13004, 'v', info_schema::INFO_TABLE_CONSTRAINTS),
    view(IS, "key_column_usage", 13005, 'v', info_schema::INFO_KEY_COLUMN_USAGE),
    view(IS, "sequences", 13006, 'v', info_schema::INFO_SEQUENCES),
    view(IS, "views", 13007, 'v', info_schema::INFO_VIEWS),
    view(IS, "referential_constraints", 13008, 'v', info_schema::INFO_REFERENTIAL_CONSTRAINTS),
    view(IS, "constraint_column_usage", 13009, 'v', info_schema::INFO_CONSTRAINT_COLUMN_USAGE),
    view(IS, "triggers", 13010, 'v', info_schema::INFO_TRIGGERS),
];

/// Namespace oids (PostgreSQL's for the built-in ones).
pub(crate) const PG_CATALOG: u32 = 11;
pub(crate) const PUBLIC: u32 = 2200;
pub(crate) const INFORMATION_SCHEMA: u32 = 13000;
pub(crate) const PG_TOAST: u32 = 99;
/// The bootstrap superuser, owner of everything.
pub(crate) const POSTGRES_ROLE: u32 = 10;
/// `pg_database_owner`, owner of `public` since PostgreSQL 15.
pub(crate) const DATABASE_OWNER_ROLE: u32 = 6171;
/// The role a session whose user is not `postgres` is shown as.
pub(crate) const SESSION_ROLE: u32 = 16383;
/// The default collation.
pub(crate) const DEFAULT_COLLATION: u32 = 100;

/// A computed relation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct View(u16);

impl View {
    /// The view a FROM item names, if it names one: `pg_catalog.x` or an
    /// unqualified `pg_…` name (pg_catalog is searched first, as in
    /// PostgreSQL), or `information_schema.x`.
    pub fn named(name: &ObjectName) -> Result<Option<View>, SqlError> {
        let fold = |i: &sqlparser::ast::Ident| {
            if i.quote_style.is_some() {
                i.value.clone()
            } else {
                i.value.to_lowercase()
            }
        };
        let parts: Vec<String> = name.0.iter().filter_map(|p| p.as_ident()).map(fold).collect();
        let (schema, rel) = match parts.as_slice() {
            [rel] => (None, rel.as_str()),
            [schema, rel] => (Some(schema.as_str()), rel.as_str()),
            _ => return Ok(None),
        };
        let wanted = match schema {
            None | Some("pg_catalog") => PG,
            Some("information_schema") => IS,
            Some(_) => return Ok(None),
        };
        let found = VIEWS.iter().position(|v| v.schema == wanted && v.name == rel);
        if found.is_none() && schema.is_some_and(|s| s == "pg_catalog" || s == "information_schema") {
            return Err(SqlError::new(
                SqlState::UNDEFINED_TABLE,
                format!("relation \"{}.{rel}\" does not exist", schema.unwrap_or_default()),
            ));
        }
        Ok(found.map(|i| View(i as u16)))
    }

    fn def(self) -> &'static ViewDef {
        &VIEWS[usize::from(self.0)]
    }

    /// Its name (EXPLAIN's scan of it).
    pub fn name(&self) -> &'static str {
        self.def().name
    }

    /// Its columns.
    pub fn columns(&self) -> &'static [ViewColumn] {
        self.def().columns
    }
}

/// The catalog as one statement sees it: the relations visible to its
/// snapshot (this session's temporary tables, no one else's), and who is
/// asking.
pub(crate) struct CatalogState {
    pub relations: Vec<Arc<RelEntry>>,
    /// The user-defined types' catalog rows.
    pub user_types: Vec<Arc<RelEntry>>,
    /// The user-defined functions' catalog rows (ROUTINE-ROWS).
    pub routines: Vec<Arc<RelEntry>>,
    /// The schemas made by CREATE SCHEMA.
    pub schemas: Vec<Arc<RelEntry>>,
    /// The built-in schemas DROP SCHEMA dropped (public).
    pub dropped_builtins: Vec<u32>,
    /// The session's search_path (REL-KEY).
    pub search_path: Vec<String>,
    /// The session's backend id (its temporary namespace).
    pub backend: u64,
    pub user: String,
    pub database: String,
    pub db: Arc<Database>,
    /// The session's settings: (name, value, context).
    pub settings: Vec<(&'static str, String, &'static str)>,
    /// The session's open cursors (pg_cursors).
    pub cursors: Arc<[snapscale_engine::session_view::OpenCursor]>,
}

impl CatalogState {
    /// The namespace of a relation.
    fn namespace_of(&self, e: &RelEntry) -> u32 {
        match e.temp_owner {
            Some(_) => self.temp_namespace(),
            None => e.namespace,
        }
    }

    /// The namespaces a name without a schema is looked for in, in order:
    /// this session's temporary one, pg_catalog (unless the path places
    /// it), then the search_path's that exist.
    fn searched_namespaces(&self) -> Vec<u32> {
        let mut out = vec![self.temp_namespace()];
        if !self.search_path.iter().any(|s| s == "pg_catalog") {
            out.push(PG_CATALOG);
        }
        for s in &self.search_path {
            if let Some(oid) = self.namespace_by_name_exact(s) {
                if !out.contains(&oid) {
                    out.push(oid);
                }
            }
        }
        out
    }

    /// The namespace called `name` (no folding), if there is one.
    fn namespace_by_name_exact(&self, name: &str) -> Option<u32> {
        if name == "pg_temp" || name == self.temp_namespace_name() {
            return Some(self.temp_namespace());
        }
        match snapscale_engine::catalog::BUILTIN_NAMESPACES.iter().find(|(n, _)| *n == name) {
            Some(&(_, oid)) => (!self.dropped_builtins.contains(&oid)).then_some(oid),
            None => self.schemas.iter().find(|e| e.name == name).map(|e| e.oid),
        }
    }

    /// This session's temporary namespace's oid.
    fn temp_namespace(&self) -> u32 {
        0x7000_0000 | (self.backend as u32 & 0x0fff_ffff)
    }

    fn temp_namespace_name(&self) -> String {
        format!("pg_temp_{}", self.backend)
    }

    /// The oid of the role a session user is shown as.
    fn role_of(&self, user: &str) -> u32 {
        if user == "postgres" {
            POSTGRES_ROLE
        } else {
            SESSION_ROLE
        }
    }

    /// A role's name.
    fn role_name(&self, oid: u32) -> Option<String> {
        match oid {
            POSTGRES_ROLE => Some("postgres".into()),
            DATABASE_OWNER_ROLE => Some("pg_database_owner".into()),
            SESSION_ROLE if self.user != "postgres" => Some(self.user.clone()),
            _ => None,
        }
    }

    /// A relation (table, index or sequence) by oid: the entry and, for an
    /// index, which of its indexes.
    fn relation(&self, oid: u32) -> Option<(&Arc<RelEntry>, Option<usize>)> {
        self.relations.iter().find_map(|e| {
            if e.oid == oid {
                return Some((e, None));
            }
            e.indexes.iter().position(|i| i.oid == oid).map(|i| (e, Some(i)))
        })
    }

    /// The CHECK constraint (of a table or a domain) pg_constraint shows
    /// as `oid`.
    /// `pg_get_constraintdef` of the foreign key pg_constraint shows as
    /// `oid`.
    fn foreign_key_def(&self, oid: u32) -> Option<String> {
        use snapscale_engine::catalog::FkAction;
        let (e, fk) =
            self.relations.iter().find_map(|e| Some((e, e.foreign_keys.iter().find(|f| f.oid == oid)?)))?;
        let parent = self.relations.iter().find(|p| p.oid == fk.parent)?;
        let cols = |t: &snapscale_engine::catalog::RelEntry, c: &[usize]| {
            c.iter()
                .map(|&i| snapscale_values::quote_ident(&t.columns[i].name))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut out = format!(
            "FOREIGN KEY ({}) REFERENCES {}({})",
            cols(e, &fk.columns),
            snapscale_values::quote_ident(&parent.name),
            cols(parent, &fk.parent_columns)
        );
        if fk.match_full {
            out.push_str(" MATCH FULL");
        }
        let words = |a: FkAction| match a {
            FkAction::NoAction => None,
            FkAction::Restrict => Some("RESTRICT"),
            FkAction::Cascade => Some("CASCADE"),
            FkAction::SetNull => Some("SET NULL"),
            FkAction::SetDefault => Some("SET DEFAULT"),
        };
        if let Some(w) = words(fk.on_update) {
            out.push_str(&format!(" ON UPDATE {w}"));
        }
        if let Some(w) = words(fk.on_delete) {
            out.push_str(&format!(" ON DELETE {w}"));
            if !fk.delete_set_columns.is_empty() {
                out.push_str(&format!(" ({})", cols(e, &fk.delete_set_columns)));
            }
        }
        if fk.initially_deferred {
            out.push_str(" DEFERRABLE INITIALLY DEFERRED");
        } else if fk.deferrable {
            out.push_str(" DEFERRABLE");
        }
        if !fk.validated {
            out.push_str(" NOT VALID");
        }
        Some(out)
    }

    /// With the columns of its table (none for a domain's).
    fn check_constraint(
        &self,
        oid: u32,
    ) -> Option<(&snapscale_engine::user_types::CheckDef, &[snapscale_engine::catalog::ColumnDef])> {
        let of_tables = self.relations.iter().map(|e| (e.oid, &e.checks, e.columns.as_slice()));
        let of_domains = self.user_types.iter().filter_map(|e| match &e.user_type {
            Some(snapscale_engine::user_types::TypeDef::Domain(d)) => Some((e.oid, &d.checks, &[][..])),
            _ => None,
        });
        of_tables.chain(of_domains).find_map(|(owner, checks, columns)| {
            let (_, c) = checks.iter().enumerate().find(|(k, _)| relations::check_oid(owner, *k) == oid)?;
            Some((c, columns))
        })
    }

    /// A namespace's name.
    fn namespace_name(&self, oid: u32) -> Option<String> {
        if self.dropped_builtins.contains(&oid) {
            return None;
        }
        Some(match oid {
            PG_CATALOG => "pg_catalog".into(),
            PUBLIC => "public".into(),
            INFORMATION_SCHEMA => "information_schema".into(),
            PG_TOAST => "pg_toast".into(),
            o if o == self.temp_namespace() => self.temp_namespace_name(),
            o => return self.schemas.iter().find(|e| e.oid == o).map(|e| e.name.clone()),
        })
    }
}

/// The rows of `view` as `state` sees it.
pub(crate) fn rows(view: View, state: &CatalogState) -> Result<Vec<Row>, SqlError> {
    let def = view.def();
    let rows = match (def.schema, def.name) {
        (PG, "pg_namespace") => system::namespaces(state),
        (PG, "pg_class") => relations::classes(state),
        (PG, "pg_attribute") => relations::attributes(state),
        (PG, "pg_type") => {
            let mut rows = types::types();
            rows.extend(types::user_types(state));
            rows
        }
        (PG, "pg_enum") => types::enum_labels(state),
        (PG, "pg_proc") => routines::procs(state),
        (PG, "pg_aggregate") => routines::aggregates(state),
        (PG, "pg_language") => routines::languages(),
        (PG, "pg_index") => relations::indexes(state),
        (PG, "pg_constraint") => relations::constraints(state),
        (PG, "pg_description") => relations::descriptions(state),
        (PG, "pg_attrdef") => relations::attrdefs(state)?,
        (PG, "pg_sequence") => relations::sequences(state),
        (PG, "pg_am") => system::access_methods(),
        (PG, "pg_database") => system::databases(state),
        (PG, "pg_authid") => system::authids(state),
        (PG, "pg_roles") => system::roles(state),
        (PG, "pg_user") => system::users(state),
        (PG, "pg_collation") => system::collations(),
        (PG, "pg_tablespace") => system::tablespaces(),
        (PG, "pg_tables") => relations::tables_view(state),
        (PG, "pg_views") => relations::views_view(state),
        (PG, "pg_matviews") => relations::matviews_view(state),
        (IS, "views") => info_schema::views(state),
        (PG, "pg_indexes") => relations::indexes_view(state),
        (PG, "pg_sequences") => relations::sequences_view(state),
        (PG, "pg_stat_activity") => activity::stat_activity(state),
        (PG, "pg_stat_ssl") => activity::stat_ssl(state),
        (PG, "pg_settings") => system::settings(state),
        (PG, "pg_cursors") => system::cursors(state),
        (PG, "pg_locks") => activity::locks(state),
        (PG, "pg_stat_user_tables") => relations::stat_user_tables(state),
        (PG, "pg_statistic") => statistics::statistic(state),
        (PG, "pg_stats") => statistics::stats_view(state),
        (PG, "pg_rewrite") => relations::rewrites(state),
        (PG, "pg_trigger") => triggers::triggers(state),
        (IS, "schemata") => info_schema::schemata(state),
        (IS, "tables") => info_schema::tables(state),
        (IS, "columns") => info_schema::columns(state)?,
        (IS, "table_constraints") => info_schema::table_constraints(state),
        (IS, "key_column_usage") => info_schema::key_column_usage(state),
        (IS, "constraint_column_usage") => info_schema::constraint_column_usage(state),
        (IS, "sequences") => info_schema::sequences(state),
        (IS, "triggers") => info_schema::triggers(state),
        // Objects this server does not have: no rows.
        _ => Vec::new(),
    };
    debug_assert!(rows.iter().all(|r| r.len() == def.columns.len()), "{} rows of the wrong width", def.name);
    Ok(rows.into_iter().map(Row::from).collect())
}

/// A row of a view, built column by column by name, so that a row cannot
/// drift from its columns: unset columns are NULL.
pub(crate) struct RowBuilder {
    columns: &'static [ViewColumn],
    values: Vec<Value>,
}

impl RowBuilder {
    pub(crate) fn new(columns: &'static [ViewColumn]) -> RowBuilder {
        RowBuilder { columns, values: vec![Value::Null; columns.len()] }
    }

    /// Sets column `name` (which must exist: a typo is a bug, caught by the
    /// views' tests).
    pub(crate) fn set(mut self, name: &str, v: impl Into<Value>) -> RowBuilder {
        let i =
            self.columns.iter().position(|c| c.name == name).unwrap_or_else(|| panic!("no column {name}"));
        let mut v = v.into();
        // int2vector and oidvector count from 0.
        if let (SqlType::Int2Vector | SqlType::OidVector, Value::Array(a)) = (self.columns[i].ty, &v) {
            v = Value::Array(std::sync::Arc::new(snapscale_values::Array::with_lower(0, a.to_vec())));
        }
        self.values[i] = v;
        self
    }

    pub(crate) fn build(self) -> Vec<Value> {
        self.values
    }
}

/// The catalog relations themselves, as `pg_class` lists them: (oid, name,
/// namespace, kind, columns).
fn catalog_relations() -> impl Iterator<Item = (u32, &'static str, u32, char, &'static [ViewColumn])> {
    VIEWS.iter().map(|v| {
        let ns = if v.schema == PG { PG_CATALOG } else { INFORMATION_SCHEMA };
        (v.oid, v.name, ns, v.kind, v.columns)
    })
}
