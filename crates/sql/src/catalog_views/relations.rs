//! The relations' catalogs: `pg_class`, `pg_attribute`, `pg_index`,
//! `pg_constraint`, `pg_attrdef`, `pg_sequence`, and the views over them
//! (`pg_tables`, `pg_indexes`, `pg_sequences`).

use snapscale_engine::catalog::{Described, RelEntry};
use snapscale_values::{SqlError, SqlType, Value};

use super::defs::{
    PG_ATTRDEF, PG_ATTRIBUTE, PG_CLASS, PG_CONSTRAINT, PG_DESCRIPTION, PG_INDEX, PG_INDEXES, PG_SEQUENCE,
    PG_SEQUENCES, PG_STAT_USER_TABLES, PG_TABLES,
};
use super::functions::{deparse_default, index_def};
use super::types::{collation_of, storage_of};
use super::{catalog_relations, CatalogState, RowBuilder, POSTGRES_ROLE};

/// pg_attribute's typmod for a column type: the declared length + 4.
pub(super) fn typmod(ty: SqlType) -> i32 {
    ty.typmod()
}

/// The columns a sequence shows.
const SEQUENCE_COLUMNS: &[(&str, SqlType)] =
    &[("last_value", SqlType::Int8), ("log_cnt", SqlType::Int8), ("is_called", SqlType::Bool)];

fn class(oid: u32, name: &str, namespace: u32, kind: char, natts: usize) -> RowBuilder {
    RowBuilder::new(PG_CLASS)
        .set("oid", oid)
        .set("relname", name)
        .set("relnamespace", namespace)
        .set("reltype", 0u32)
        .set("reloftype", 0u32)
        .set("relowner", POSTGRES_ROLE)
        .set(
            "relam",
            match kind {
                'r' => 2u32,
                'i' => 403,
                _ => 0,
            },
        )
        .set("relfilenode", if kind == 'v' { 0 } else { oid })
        .set("reltablespace", 0u32)
        .set("relpages", 0)
        .set("reltuples", Value::Float4(-1.0))
        .set("relallvisible", 0)
        .set("reltoastrelid", 0u32)
        .set("relhasindex", false)
        .set("relisshared", false)
        .set("relpersistence", 'p')
        .set("relkind", kind)
        .set("relnatts", natts as i64)
        .set("relchecks", 0)
        .set("relhasrules", kind == 'v')
        .set("relhastriggers", false)
        .set("relhassubclass", false)
        .set("relrowsecurity", false)
        .set("relforcerowsecurity", false)
        .set("relispopulated", true)
        .set("relreplident", if kind == 'r' { 'd' } else { 'n' })
        .set("relispartition", false)
        .set("relrewrite", 0u32)
        .set("relfrozenxid", 0i64)
        .set("relminmxid", 0i64)
}

/// reloptions: a relation's storage parameters, NULL for none (a TOAST
/// table's are not the relation's: PostgreSQL shows them on that table).
fn reloptions(options: &[String]) -> Value {
    let own: Vec<Value> =
        options.iter().filter(|o| !o.starts_with("toast.")).map(|o| Value::Text(o.as_str().into())).collect();
    if own.is_empty() {
        return Value::Null;
    }
    Value::Array(std::sync::Arc::new(snapscale_values::Array::new(own)))
}

/// A relation's frozen xid (relfrozenxid): its storage's (FROZEN-XID).
fn frozen_xid(state: &CatalogState, e: &RelEntry) -> i64 {
    state.db.catalog.storage(e.storage).map_or(0, |h| h.table.frozen_xid().0 as i64)
}

/// pg_class: every user relation (tables, their indexes, sequences), then
/// the catalog relations.
pub(super) fn classes(state: &CatalogState) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for e in &state.relations {
        let ns = state.namespace_of(e);
        let persistence = if e.temp_owner.is_some() { 't' } else { 'p' };
        if e.sequence.is_some() {
            out.push(
                class(e.oid, &e.name, ns, 'S', SEQUENCE_COLUMNS.len())
                    .set("relpersistence", persistence)
                    .set("relfrozenxid", frozen_xid(state, e))
                    .build(),
            );
            continue;
        }
        if e.is_view() {
            out.push(
                class(e.oid, &e.name, ns, 'v', e.columns.len())
                    .set("relpersistence", persistence)
                    .set("relhastriggers", !e.triggers.is_empty())
                    .set("reloptions", reloptions(&e.options))
                    .build(),
            );
            continue;
        }
        let kind = if e.is_matview() { 'm' } else { 'r' };
        // ANALYZE's count and pages; -1 and 0 until the first (STATS-SLOT).
        let analyzed = state.db.catalog.storage(e.storage).and_then(|h| h.stats.get());
        out.push(
            class(e.oid, &e.name, ns, kind, e.columns.len())
                .set("reltuples", Value::Float4(analyzed.as_ref().map_or(-1.0, |s| s.reltuples as f32)))
                .set("relpages", analyzed.as_ref().map_or(0, |s| s.relpages as i64))
                .set("relpersistence", persistence)
                .set("relhasindex", !e.indexes.is_empty())
                .set("relchecks", e.checks.len() as i64)
                // A foreign key is PostgreSQL's triggers on both tables.
                .set(
                    "relhastriggers",
                    !e.foreign_keys.is_empty() || !e.referenced_by.is_empty() || !e.triggers.is_empty(),
                )
                .set("relfrozenxid", frozen_xid(state, e))
                .set("reloptions", reloptions(&e.options))
                .build(),
        );
        for i in &e.indexes {
            out.push(
                class(i.oid, &i.name, ns, 'i', i.columns.len())
                    .set("relpersistence", persistence)
                    .set("reloptions", reloptions(&i.options))
                    .build(),
            );
        }
    }
    // The catalog relations are computed from the catalog's table: its
    // frozen xid is theirs.
    let catalog_frozen = state.db.catalog.table.frozen_xid().0 as i64;
    for (oid, name, ns, kind, columns) in catalog_relations() {
        let frozen = if kind == 'r' { catalog_frozen } else { 0 };
        out.push(class(oid, name, ns, kind, columns.len()).set("relfrozenxid", frozen).build());
    }
    out
}

/// pg_stat_user_tables: per table, its live and dead versions (counted
/// now, not estimated) and its vacuums; the counters this server does not
/// keep are 0.
pub(super) fn stat_user_tables(state: &CatalogState) -> Vec<Vec<Value>> {
    let when = |micros: i64| if micros == 0 { Value::Null } else { Value::TimestampTz(micros) };
    state
        .relations
        .iter()
        .filter(|e| e.sequence.is_none() && e.view.is_none())
        .filter_map(|e| state.db.catalog.storage(e.storage).map(|heap| (e, heap)))
        .map(|(e, heap)| {
            let (live, dead) = heap.table.count_versions(&state.db.engine);
            let v = &heap.vacuums;
            let mut row = RowBuilder::new(PG_STAT_USER_TABLES)
                .set("relid", e.oid)
                .set("schemaname", state.namespace_name(state.namespace_of(e)).unwrap_or_default())
                .set("relname", e.name.as_str())
                .set("n_live_tup", live as i64)
                .set("n_dead_tup", dead as i64)
                // Relaxed (all four): statistics.
                .set("last_vacuum", when(v.last.load(std::sync::atomic::Ordering::Relaxed)))
                .set("last_autovacuum", when(v.last_auto.load(std::sync::atomic::Ordering::Relaxed)))
                .set("vacuum_count", v.count.load(std::sync::atomic::Ordering::Relaxed) as i64)
                .set("autovacuum_count", v.auto_count.load(std::sync::atomic::Ordering::Relaxed) as i64);
            let a = &heap.stats;
            // Relaxed (all): statistics counters (STATS-SLOT).
            row = row
                .set("n_mod_since_analyze", a.changes_since_analyze() as i64)
                .set("last_analyze", when(a.last.load(std::sync::atomic::Ordering::Relaxed)))
                .set("last_autoanalyze", when(a.last_auto.load(std::sync::atomic::Ordering::Relaxed)))
                .set("analyze_count", a.count.load(std::sync::atomic::Ordering::Relaxed) as i64)
                .set("autoanalyze_count", a.auto_count.load(std::sync::atomic::Ordering::Relaxed) as i64);
            for counter in [
                "seq_scan",
                "seq_tup_read",
                "idx_scan",
                "idx_tup_fetch",
                "n_tup_ins",
                "n_tup_upd",
                "n_tup_del",
                "n_tup_hot_upd",
                "n_ins_since_vacuum",
            ] {
                row = row.set(counter, 0i64);
            }
            row.build()
        })
        .collect()
}

fn attribute(rel: u32, name: &str, num: i64, ty: SqlType, not_null: bool) -> RowBuilder {
    let (len, byval, align, storage) = storage_of(ty);
    RowBuilder::new(PG_ATTRIBUTE)
        .set("attrelid", rel)
        .set("attname", name)
        .set("atttypid", ty.oid())
        .set("attstattarget", -1)
        .set("attlen", len)
        .set("attnum", num)
        .set("attndims", i32::from(matches!(ty, SqlType::Array(_))))
        .set("attcacheoff", -1)
        .set("atttypmod", typmod(ty))
        .set("attbyval", byval)
        .set("attalign", align)
        .set("attstorage", storage)
        .set("attcompression", "")
        .set("attnotnull", not_null)
        .set("atthasdef", false)
        .set("atthasmissing", false)
        .set("attidentity", "")
        .set("attgenerated", "")
        .set("attisdropped", false)
        .set("attislocal", true)
        .set("attinhcount", 0)
        .set("attcollation", collation_of(ty))
}

/// pg_attribute: the user columns of every relation (numbered from 1;
/// system columns are not listed), the index columns, a sequence's three
/// columns, and the catalog relations' columns.
pub(super) fn attributes(state: &CatalogState) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for e in &state.relations {
        if e.sequence.is_some() {
            for (i, (name, ty)) in SEQUENCE_COLUMNS.iter().enumerate() {
                out.push(attribute(e.oid, name, i as i64 + 1, *ty, true).build());
            }
            continue;
        }
        for (i, c) in e.columns.iter().enumerate() {
            out.push(
                attribute(e.oid, &c.name, i as i64 + 1, c.ty, c.not_null)
                    .set("atthasdef", c.default.is_some() || c.generated.is_some())
                    .set("attgenerated", if c.generated.is_some() { "s" } else { "" })
                    // PostgreSQL keeps a missing value only when it is not
                    // NULL (MISSING-COLUMN).
                    .set("atthasmissing", c.missing.as_ref().is_some_and(|v| !matches!(v, Value::Null)))
                    .set(
                        "attidentity",
                        match c.identity {
                            Some(snapscale_engine::catalog::Identity::Always) => "a",
                            Some(snapscale_engine::catalog::Identity::ByDefault) => "d",
                            None => "",
                        },
                    )
                    // A domain column's type is the domain (its values the base type's).
                    .set("atttypid", c.domain.unwrap_or_else(|| c.ty.oid()))
                    .set("atttypmod", c.typmod.unwrap_or_else(|| typmod(c.ty)))
                    .set("attstattarget", c.stats_target.unwrap_or(-1))
                    .set(
                        "attstorage",
                        c.storage
                            .map_or_else(|| storage_of(c.ty).3.to_string(), |s| char::from(s).to_string()),
                    )
                    .build(),
            );
        }
        for ix in &e.indexes {
            // An expression's attribute is named for it (`lower`, `expr`)
            // and has its type.
            let types = ix.computed().then(|| snapscale_engine::catalog::computed_key_types(e, ix)).flatten();
            let mut exprs = ix.exprs.iter();
            for (k, &c) in ix.columns.iter().chain(&ix.include).enumerate() {
                let (name, ty) = match c {
                    snapscale_engine::catalog::EXPRESSION => (
                        exprs.next().map_or("expr".into(), |t| crate::parse::column_refs::part_name(t)),
                        types.as_ref().and_then(|t| t.get(k).copied()).unwrap_or(SqlType::Text),
                    ),
                    c => (e.columns[c].name.clone(), e.columns[c].ty),
                };
                out.push(attribute(ix.oid, &name, k as i64 + 1, ty, false).build());
            }
        }
    }
    for (oid, _, _, _, columns) in catalog_relations() {
        for (i, c) in columns.iter().enumerate() {
            out.push(attribute(oid, c.name, i as i64 + 1, c.ty, false).build());
        }
    }
    out
}

/// pg_index.
pub(super) fn indexes(state: &CatalogState) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for e in &state.relations {
        for ix in &e.indexes {
            use snapscale_engine::catalog::EXPRESSION;
            // An expression's key part is attribute 0, as in PostgreSQL.
            let keys: Vec<Value> = ix
                .columns
                .iter()
                .chain(&ix.include)
                .map(|&c| Value::Int(if c == EXPRESSION { 0 } else { c as i64 + 1 }))
                .collect();
            let collations: Vec<Value> = ix
                .columns
                .iter()
                .map(|&c| Value::Int(if c == EXPRESSION { 0 } else { collation_of(e.columns[c].ty).into() }))
                .collect();
            // pg_node_tree is opaque to clients: the stored SQL text stands
            // for it (NULL where there is none, which clients do test).
            let exprs = match ix.exprs.is_empty() {
                true => Value::Null,
                false => Value::Text(format!("({})", ix.exprs.join(") ("))),
            };
            let predicate = ix.predicate.clone().map_or(Value::Null, Value::Text);
            let zeros: Vec<Value> = ix.columns.iter().map(|_| Value::Int(0)).collect();
            out.push(
                RowBuilder::new(PG_INDEX)
                    .set("indexrelid", ix.oid)
                    .set("indrelid", e.oid)
                    .set("indnatts", (ix.columns.len() + ix.include.len()) as i64)
                    .set("indnkeyatts", ix.columns.len() as i64)
                    .set("indisunique", ix.unique)
                    .set("indnullsnotdistinct", ix.nulls_not_distinct)
                    .set("indisprimary", ix.primary)
                    .set("indisexclusion", false)
                    .set("indimmediate", true)
                    .set("indisclustered", false)
                    .set("indisvalid", true)
                    .set("indcheckxmin", false)
                    .set("indisready", true)
                    .set("indislive", true)
                    .set("indisreplident", false)
                    .set("indkey", Value::array(keys))
                    .set("indcollation", Value::array(collations))
                    .set("indclass", Value::array(zeros.clone()))
                    // PostgreSQL's INDOPTION_DESC (1) and _NULLS_FIRST (2),
                    // the bits IndexDef::orders keeps.
                    .set(
                        "indoption",
                        Value::array(
                            (0..ix.columns.len())
                                .map(|k| Value::Int(i64::from(ix.orders.get(k).copied().unwrap_or(0))))
                                .collect(),
                        ),
                    )
                    .set("indexprs", exprs)
                    .set("indpred", predicate)
                    .build(),
            );
        }
    }
    out
}

/// pg_constraint: the PRIMARY KEY and UNIQUE constraints (their indexes'
/// oids), and the domains' CHECK constraints.
pub(super) fn constraints(state: &CatalogState) -> Vec<Vec<Value>> {
    // The columns every constraint here sets alike (none deferrable, none
    // a foreign key, none inherited).
    let row = |oid: u32, name: &str, namespace: u32, kind: char| {
        RowBuilder::new(PG_CONSTRAINT)
            .set("oid", oid)
            .set("conname", name)
            .set("connamespace", namespace)
            .set("contype", kind)
            .set("condeferrable", false)
            .set("condeferred", false)
            .set("conparentid", 0u32)
            .set("confrelid", 0u32)
            .set("confupdtype", ' ')
            .set("confdeltype", ' ')
            .set("confmatchtype", ' ')
            .set("conislocal", true)
            .set("coninhcount", 0)
    };
    let mut out = Vec::new();
    for e in &state.relations {
        for ix in e.indexes.iter().filter(|i| i.constraint) {
            let keys: Vec<Value> = ix.columns.iter().map(|&c| Value::Int(c as i64 + 1)).collect();
            let kind = if ix.primary { 'p' } else { 'u' };
            out.push(
                row(ix.oid, &ix.name, state.namespace_of(e), kind)
                    .set("convalidated", true)
                    .set("conrelid", e.oid)
                    .set("contypid", 0u32)
                    .set("conindid", ix.oid)
                    .set("connoinherit", true)
                    .set("conkey", Value::array(keys))
                    .build(),
            );
        }
        for (k, c) in e.checks.iter().enumerate() {
            let names = e.columns.iter().map(|c| c.name.as_str());
            let keys: Vec<Value> = crate::parse::column_refs::columns_read(&c.expr, names)
                .into_iter()
                .map(|p| Value::Int(p as i64 + 1))
                .collect();
            out.push(
                row(check_oid(e.oid, k), &c.name, state.namespace_of(e), 'c')
                    .set("convalidated", c.validated)
                    .set("conrelid", e.oid)
                    .set("contypid", 0u32)
                    .set("conindid", 0u32)
                    .set("connoinherit", false)
                    .set("conkey", Value::array(keys))
                    .build(),
            );
        }
        for fk in &e.foreign_keys {
            let nums =
                |cols: &[usize]| Value::array(cols.iter().map(|&c| Value::Int(c as i64 + 1)).collect());
            let parent = state.relations.iter().find(|p| p.oid == fk.parent);
            let index = parent.and_then(|p| {
                p.indexes.iter().find(|i| {
                    i.unique && snapscale_engine::catalog::same_columns(&i.columns, &fk.parent_columns)
                })
            });
            out.push(
                row(fk.oid, &fk.name, state.namespace_of(e), 'f')
                    .set("convalidated", fk.validated)
                    .set("conrelid", e.oid)
                    .set("contypid", 0u32)
                    .set("conindid", index.map_or(0, |i| i.oid))
                    .set("confrelid", fk.parent)
                    .set("confupdtype", fk.on_update.letter())
                    .set("confdeltype", fk.on_delete.letter())
                    .set("confmatchtype", if fk.match_full { 'f' } else { 's' })
                    .set("condeferrable", fk.deferrable)
                    .set("condeferred", fk.initially_deferred)
                    .set("connoinherit", true)
                    .set("conkey", nums(&fk.columns))
                    .set("confkey", nums(&fk.parent_columns))
                    .set(
                        "confdelsetcols",
                        if fk.delete_set_columns.is_empty() {
                            Value::Null
                        } else {
                            nums(&fk.delete_set_columns)
                        },
                    )
                    .build(),
            );
        }
    }
    // Each domain's CHECK constraints (NOT NULL is the domain's own flag).
    for e in &state.user_types {
        let Some(snapscale_engine::user_types::TypeDef::Domain(d)) = &e.user_type else { continue };
        for (k, c) in d.checks.iter().enumerate() {
            out.push(
                row(check_oid(e.oid, k), &c.name, state.namespace_of(e), 'c')
                    .set("convalidated", c.validated)
                    .set("conrelid", 0u32)
                    .set("contypid", e.oid)
                    .set("conindid", 0u32)
                    .set("connoinherit", false)
                    .build(),
            );
        }
    }
    out
}

/// The oid pg_constraint shows for CHECK constraint `k` of relation or
/// domain `owner` (they are not objects of their own here).
pub(super) fn check_oid(owner: u32, k: usize) -> u32 {
    owner.wrapping_mul(1601).wrapping_add(k as u32 + 1)
}

/// The oid of column `num`'s default of relation `rel`.
pub(super) fn attrdef_oid(rel: u32, num: usize) -> u32 {
    rel.wrapping_mul(1600).wrapping_add(num as u32)
}

/// pg_attrdef: each column default, as PostgreSQL prints it.
pub(super) fn attrdefs(state: &CatalogState) -> Result<Vec<Vec<Value>>, SqlError> {
    let mut out = Vec::new();
    for e in &state.relations {
        for (i, c) in e.columns.iter().enumerate() {
            // A generated column's expression is its pg_attrdef row too.
            if let Some(d) = c.default.as_ref().or(c.generated.as_ref()) {
                out.push(
                    RowBuilder::new(PG_ATTRDEF)
                        .set("oid", attrdef_oid(e.oid, i + 1))
                        .set("adrelid", e.oid)
                        .set("adnum", i as i64 + 1)
                        .set("adbin", deparse_default(d, c.ty)?)
                        .build(),
                );
            }
        }
    }
    Ok(out)
}

/// pg_sequence.
pub(super) fn sequences(state: &CatalogState) -> Vec<Vec<Value>> {
    state
        .relations
        .iter()
        .filter_map(|e| {
            let s = e.sequence.as_ref()?;
            Some(
                RowBuilder::new(PG_SEQUENCE)
                    .set("seqrelid", e.oid)
                    .set("seqtypid", s.ty.oid())
                    .set("seqstart", s.start)
                    .set("seqincrement", s.increment)
                    .set("seqmax", s.max)
                    .set("seqmin", s.min)
                    .set("seqcache", 1i64)
                    .set("seqcycle", s.cycle)
                    .build(),
            )
        })
        .collect()
}

/// pg_views: the views, with their definitions.
pub(super) fn views_view(state: &CatalogState) -> Vec<Vec<Value>> {
    state
        .relations
        .iter()
        .filter_map(|e| e.view.as_ref().filter(|v| v.materialized.is_none()).map(|v| (e, v)))
        .map(|(e, v)| {
            RowBuilder::new(super::defs::PG_VIEWS)
                .set("schemaname", state.namespace_name(state.namespace_of(e)).unwrap_or_default())
                .set("viewname", e.name.as_str())
                .set("viewowner", "postgres")
                .set("definition", super::deparse::view_definition(state, &v.query))
                .build()
        })
        .collect()
}

/// The oid of view `view`'s `_RETURN` rule (pg_rewrite).
pub(super) fn rule_oid(view: u32) -> u32 {
    view.wrapping_mul(1603).wrapping_add(1)
}

/// pg_rewrite: each view's `_RETURN` rule (PostgreSQL's view is a table
/// with an ON SELECT DO INSTEAD rule; here the rule is the view's query).
pub(super) fn rewrites(state: &CatalogState) -> Vec<Vec<Value>> {
    state
        .relations
        .iter()
        .filter(|e| e.is_view())
        .map(|e| {
            RowBuilder::new(super::defs::PG_REWRITE)
                .set("oid", rule_oid(e.oid))
                .set("rulename", "_RETURN")
                .set("ev_class", e.oid)
                .set("ev_type", '1')
                .set("ev_enabled", 'O')
                .set("is_instead", true)
                .set("ev_qual", "<>")
                .set("ev_action", e.view.as_ref().map_or_else(String::new, |v| v.query.clone()))
                .build()
        })
        .collect()
}

/// pg_matviews: the materialized views, with their definitions.
pub(super) fn matviews_view(state: &CatalogState) -> Vec<Vec<Value>> {
    state
        .relations
        .iter()
        .filter_map(|e| e.view.as_ref().and_then(|v| Some((e, v, v.materialized?))))
        .map(|(e, v, populated)| {
            RowBuilder::new(super::defs::PG_MATVIEWS)
                .set("schemaname", state.namespace_name(state.namespace_of(e)).unwrap_or_default())
                .set("matviewname", e.name.as_str())
                .set("matviewowner", "postgres")
                .set("hasindexes", !e.indexes.is_empty())
                .set("ispopulated", populated)
                .set("definition", super::deparse::view_definition(state, &v.query))
                .build()
        })
        .collect()
}

/// pg_tables: the tables (not the catalogs'), with their schema and owner.
pub(super) fn tables_view(state: &CatalogState) -> Vec<Vec<Value>> {
    let mut out: Vec<Vec<Value>> = state
        .relations
        .iter()
        .filter(|e| e.sequence.is_none() && e.view.is_none())
        .map(|e| {
            RowBuilder::new(PG_TABLES)
                .set("schemaname", state.namespace_name(state.namespace_of(e)).unwrap_or_default())
                .set("tablename", e.name.as_str())
                .set("tableowner", "postgres")
                .set("hasindexes", !e.indexes.is_empty())
                .set("hasrules", false)
                .set("hastriggers", false)
                .set("rowsecurity", false)
                .build()
        })
        .collect();
    for (_, name, ns, kind, _) in catalog_relations() {
        if kind == 'r' {
            out.push(
                RowBuilder::new(PG_TABLES)
                    .set("schemaname", state.namespace_name(ns).unwrap_or_default())
                    .set("tablename", name)
                    .set("tableowner", "postgres")
                    .set("hasindexes", false)
                    .set("hasrules", false)
                    .set("hastriggers", false)
                    .set("rowsecurity", false)
                    .build(),
            );
        }
    }
    out
}

/// pg_indexes.
pub(super) fn indexes_view(state: &CatalogState) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for e in &state.relations {
        for (i, ix) in e.indexes.iter().enumerate() {
            out.push(
                RowBuilder::new(PG_INDEXES)
                    .set("schemaname", state.namespace_name(state.namespace_of(e)).unwrap_or_default())
                    .set("tablename", e.name.as_str())
                    .set("indexname", ix.name.as_str())
                    .set("indexdef", index_def(state, e, i, false))
                    .build(),
            );
        }
    }
    out
}

/// pg_sequences.
pub(super) fn sequences_view(state: &CatalogState) -> Vec<Vec<Value>> {
    state
        .relations
        .iter()
        .filter_map(|e| {
            let s = e.sequence.as_ref()?;
            let last = state
                .db
                .catalog
                .storage(e.storage)
                .and_then(|h| h.sequence.get().map(|q| q.current()))
                .filter(|v| v.called)
                .map_or(Value::Null, |v| Value::Int(v.last));
            Some(
                RowBuilder::new(PG_SEQUENCES)
                    .set("schemaname", state.namespace_name(state.namespace_of(e)).unwrap_or_default())
                    .set("sequencename", e.name.as_str())
                    .set("sequenceowner", "postgres")
                    .set("data_type", snapscale_values::Reg::value(s.ty.oid(), s.ty.name()))
                    .set("start_value", s.start)
                    .set("min_value", s.min)
                    .set("max_value", s.max)
                    .set("increment_by", s.increment)
                    .set("cycle", s.cycle)
                    .set("cache_size", 1i64)
                    .set("last_value", last)
                    .build(),
            )
        })
        .collect()
}

/// pg_description: every COMMENT ON, keyed as PostgreSQL keys it.
pub(super) fn descriptions(state: &CatalogState) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for e in state.relations.iter().chain(&state.user_types).chain(&state.routines) {
        for c in &e.comments {
            let Some((objoid, classoid, subid)) = described_object(e, &c.on) else { continue };
            out.push(
                RowBuilder::new(PG_DESCRIPTION)
                    .set("objoid", objoid)
                    .set("classoid", classoid)
                    .set("objsubid", subid)
                    .set("description", c.text.as_str())
                    .build(),
            );
        }
    }
    out
}

/// The (objoid, classoid, objsubid) of what a comment describes: a
/// relation or index in pg_class (a column by its attnum), a type in
/// pg_type, a constraint in pg_constraint (with the oids pg_constraint
/// shows).
pub(super) fn described_object(e: &RelEntry, on: &Described) -> Option<(u32, u32, i64)> {
    const CLASS: u32 = 1259;
    const TYPE: u32 = 1247;
    const CONSTRAINT: u32 = 2606;
    const PROC: u32 = 1255;
    const TRIGGER: u32 = 2620;
    match on {
        Described::Relation if e.routine.is_some() => Some((e.oid, PROC, 0)),
        Described::Relation => Some((e.oid, if e.is_relation() { CLASS } else { TYPE }, 0)),
        Described::Trigger(n) => Some((e.triggers.iter().find(|t| t.name == *n)?.oid, TRIGGER, 0)),
        Described::Column(n) => Some((e.oid, CLASS, e.column(n)? as i64 + 1)),
        Described::Index(n) => Some((e.indexes.iter().find(|i| i.name == *n)?.oid, CLASS, 0)),
        Described::Constraint(n) => {
            let checks = match &e.user_type {
                Some(snapscale_engine::user_types::TypeDef::Domain(d)) => &d.checks,
                _ => &e.checks,
            };
            let oid = checks
                .iter()
                .position(|k| k.name == *n)
                .map(|k| check_oid(e.oid, k))
                .or_else(|| e.foreign_keys.iter().find(|f| f.name == *n).map(|f| f.oid))
                .or_else(|| e.indexes.iter().find(|i| i.constraint && i.name == *n).map(|i| i.oid))?;
            Some((oid, CONSTRAINT, 0))
        }
    }
}
