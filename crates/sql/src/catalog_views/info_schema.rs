//! `information_schema`: the SQL standard's views of the same catalog.

use snapscale_engine::catalog::RelEntry;
use snapscale_values::{SqlError, SqlType, Value};

use super::defs::{c, CARDINAL, CHARDATA, SQL_ID, YESNO};
use super::functions::deparse_default;
use super::{CatalogState, RowBuilder, ViewColumn};

fn yes_no(b: bool) -> &'static str {
    if b {
        "YES"
    } else {
        "NO"
    }
}

fn schema_of(state: &CatalogState, e: &RelEntry) -> String {
    state.namespace_name(state.namespace_of(e)).unwrap_or_default()
}

pub(super) fn schemata(state: &CatalogState) -> Vec<Vec<Value>> {
    let public_dropped = state.dropped_builtins.contains(&snapscale_engine::catalog::PUBLIC_NAMESPACE);
    let builtin = ["pg_toast", "pg_catalog", "public", "information_schema"]
        .into_iter()
        .filter(|n| *n != "public" || !public_dropped)
        .map(|n| (n.to_owned(), None));
    let made = state.schemas.iter().map(|e| (e.name.clone(), Some(state.user.clone())));
    builtin
        .into_iter()
        .chain(made)
        .map(|(name, owner)| {
            let owner = owner
                .unwrap_or_else(|| if name == "public" { "pg_database_owner" } else { "postgres" }.into());
            RowBuilder::new(INFO_SCHEMATA)
                .set("catalog_name", state.database.as_str())
                .set("schema_name", name)
                .set("schema_owner", owner)
                .build()
        })
        .collect()
}

pub(super) fn tables(state: &CatalogState) -> Vec<Vec<Value>> {
    state
        .relations
        .iter()
        .filter(|e| e.sequence.is_none())
        .map(|e| {
            RowBuilder::new(INFO_TABLES)
                .set("table_catalog", state.database.as_str())
                .set("table_schema", schema_of(state, e))
                .set("table_name", e.name.as_str())
                .set(
                    "table_type",
                    match (e.is_view(), e.temp_owner.is_some()) {
                        (true, _) => "VIEW",
                        (false, true) => "LOCAL TEMPORARY",
                        (false, false) => "BASE TABLE",
                    },
                )
                .set("is_insertable_into", if e.is_view() { "NO" } else { "YES" })
                .set("is_typed", "NO")
                .set(
                    "commit_action",
                    if e.temp_owner.is_some() { Value::from("PRESERVE") } else { Value::Null },
                )
                .build()
        })
        .collect()
}

/// information_schema.views: the views, their definitions and CHECK
/// OPTIONs.
pub(super) fn views(state: &CatalogState) -> Vec<Vec<Value>> {
    state
        .relations
        .iter()
        .filter_map(|e| e.view.as_ref().filter(|v| v.materialized.is_none()).map(|v| (e, v)))
        .map(|(e, v)| {
            let check = match v.check_option {
                None => "NONE",
                Some(snapscale_engine::catalog::CheckOption::Local) => "LOCAL",
                Some(snapscale_engine::catalog::CheckOption::Cascaded) => "CASCADED",
            };
            RowBuilder::new(INFO_VIEWS)
                .set("table_catalog", state.database.as_str())
                .set("table_schema", schema_of(state, e))
                .set("table_name", e.name.as_str())
                .set("view_definition", super::deparse::view_definition(state, &v.query))
                .set("check_option", check)
                .set("is_updatable", "NO")
                .set("is_insertable_into", "NO")
                .set("is_trigger_updatable", "NO")
                .set("is_trigger_deletable", "NO")
                .set("is_trigger_insertable_into", "NO")
                .build()
        })
        .collect()
}

/// The standard's name of a type (`data_type`), and `udt_name`.
fn standard_type(ty: SqlType) -> (&'static str, &'static str) {
    match ty {
        SqlType::Array(_) | SqlType::Int2Vector | SqlType::OidVector => ("ARRAY", ty.internal_name()),
        SqlType::Reg(_) | SqlType::Oid | SqlType::Name | SqlType::Char1 => {
            ("USER-DEFINED", ty.internal_name())
        }
        other => (other.name(), other.internal_name()),
    }
}

pub(super) fn columns(state: &CatalogState) -> Result<Vec<Vec<Value>>, SqlError> {
    let mut out = Vec::new();
    for e in state.relations.iter().filter(|e| e.sequence.is_none()) {
        for (i, c) in e.columns.iter().enumerate() {
            let (data_type, udt) = standard_type(c.ty);
            let (data_type, udt) = match c.ty {
                SqlType::Name => ("name", "name"),
                SqlType::Char1 => ("\"char\"", "char"),
                SqlType::Oid => ("oid", "oid"),
                _ => (data_type, udt),
            };
            let (precision, radix, scale) = match c.ty {
                SqlType::Int2 => (Value::Int(16), Value::Int(2), Value::Int(0)),
                SqlType::Int4 => (Value::Int(32), Value::Int(2), Value::Int(0)),
                SqlType::Int8 => (Value::Int(64), Value::Int(2), Value::Int(0)),
                SqlType::Float8 => (Value::Int(53), Value::Int(2), Value::Null),
                SqlType::Numeric(m) => match snapscale_values::numeric::numeric_typmod_decode(m) {
                    Some((p, s)) => (Value::Int(p.into()), Value::Int(10), Value::Int(s.into())),
                    None => (Value::Null, Value::Int(10), Value::Null),
                },
                _ => (Value::Null, Value::Null, Value::Null),
            };
            let length = match c.ty {
                SqlType::Varchar(Some(n)) | SqlType::Char(n) => Value::Int(n.into()),
                _ => Value::Null,
            };
            let octets = match c.ty {
                SqlType::Varchar(Some(n)) | SqlType::Char(n) => Value::Int(i64::from(n) * 4),
                SqlType::Text | SqlType::Varchar(None) => Value::Int(1_073_741_824),
                _ => Value::Null,
            };
            let datetime = match c.ty {
                SqlType::Date => Value::Int(0),
                SqlType::Timestamp | SqlType::TimestampTz | SqlType::Interval => Value::Int(6),
                _ => Value::Null,
            };
            let default = match &c.default {
                // An identity column's default is its identity.
                Some(_) if c.identity.is_some() => Value::Null,
                Some(d) => Value::Text(super::functions::print_default(&deparse_default(d, c.ty)?)),
                None => Value::Null,
            };
            let generation = match &c.generated {
                Some(g) => Value::Text(super::functions::print_default(&deparse_default(g, c.ty)?)),
                None => Value::Null,
            };
            out.push(
                RowBuilder::new(INFO_COLUMNS)
                    .set("table_catalog", state.database.as_str())
                    .set("table_schema", schema_of(state, e))
                    .set("table_name", e.name.as_str())
                    .set("column_name", c.name.as_str())
                    .set("ordinal_position", i as i64 + 1)
                    .set("column_default", default)
                    .set("is_nullable", yes_no(!c.not_null))
                    .set("data_type", data_type)
                    .set("character_maximum_length", length)
                    .set("character_octet_length", octets)
                    .set("numeric_precision", precision)
                    .set("numeric_precision_radix", radix)
                    .set("numeric_scale", scale)
                    .set("datetime_precision", datetime)
                    .set("udt_catalog", state.database.as_str())
                    .set("udt_schema", "pg_catalog")
                    .set("udt_name", udt)
                    .set("dtd_identifier", (i + 1).to_string())
                    .set("is_self_referencing", "NO")
                    .set("is_identity", yes_no(c.identity.is_some()))
                    .set(
                        "identity_generation",
                        match c.identity {
                            Some(snapscale_engine::catalog::Identity::Always) => Value::from("ALWAYS"),
                            Some(snapscale_engine::catalog::Identity::ByDefault) => Value::from("BY DEFAULT"),
                            None => Value::Null,
                        },
                    )
                    .set("identity_cycle", "NO")
                    .set("is_generated", if c.generated.is_some() { "ALWAYS" } else { "NEVER" })
                    .set("generation_expression", generation)
                    .set("is_updatable", "YES")
                    .build(),
            );
        }
    }
    Ok(out)
}

pub(super) fn table_constraints(state: &CatalogState) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for e in &state.relations {
        for ix in e.indexes.iter().filter(|i| i.constraint) {
            out.push(
                RowBuilder::new(INFO_TABLE_CONSTRAINTS)
                    .set("constraint_catalog", state.database.as_str())
                    .set("constraint_schema", schema_of(state, e))
                    .set("constraint_name", ix.name.as_str())
                    .set("table_catalog", state.database.as_str())
                    .set("table_schema", schema_of(state, e))
                    .set("table_name", e.name.as_str())
                    .set("constraint_type", if ix.primary { "PRIMARY KEY" } else { "UNIQUE" })
                    .set("is_deferrable", "NO")
                    .set("initially_deferred", "NO")
                    .set("enforced", "YES")
                    .set("nulls_distinct", "YES")
                    .build(),
            );
        }
    }
    out
}

pub(super) fn key_column_usage(state: &CatalogState) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for e in &state.relations {
        for ix in e.indexes.iter().filter(|i| i.constraint) {
            for (k, &c) in ix.columns.iter().enumerate() {
                out.push(
                    RowBuilder::new(INFO_KEY_COLUMN_USAGE)
                        .set("constraint_catalog", state.database.as_str())
                        .set("constraint_schema", schema_of(state, e))
                        .set("constraint_name", ix.name.as_str())
                        .set("table_catalog", state.database.as_str())
                        .set("table_schema", schema_of(state, e))
                        .set("table_name", e.name.as_str())
                        .set("column_name", e.columns[c].name.as_str())
                        .set("ordinal_position", k as i64 + 1)
                        .build(),
                );
            }
        }
    }
    out
}

pub(super) fn constraint_column_usage(state: &CatalogState) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for e in &state.relations {
        for ix in e.indexes.iter().filter(|i| i.constraint) {
            for &c in &ix.columns {
                out.push(
                    RowBuilder::new(INFO_CONSTRAINT_COLUMN_USAGE)
                        .set("table_catalog", state.database.as_str())
                        .set("table_schema", schema_of(state, e))
                        .set("table_name", e.name.as_str())
                        .set("column_name", e.columns[c].name.as_str())
                        .set("constraint_catalog", state.database.as_str())
                        .set("constraint_schema", schema_of(state, e))
                        .set("constraint_name", ix.name.as_str())
                        .build(),
                );
            }
        }
    }
    out
}

pub(super) fn sequences(state: &CatalogState) -> Vec<Vec<Value>> {
    state
        .relations
        .iter()
        .filter_map(|e| {
            let s = e.sequence.as_ref()?;
            let bits = match s.ty {
                SqlType::Int2 => 16,
                SqlType::Int4 => 32,
                _ => 64,
            };
            Some(
                RowBuilder::new(INFO_SEQUENCES)
                    .set("sequence_catalog", state.database.as_str())
                    .set("sequence_schema", schema_of(state, e))
                    .set("sequence_name", e.name.as_str())
                    .set("data_type", s.ty.name())
                    .set("numeric_precision", bits)
                    .set("numeric_precision_radix", 2)
                    .set("numeric_scale", 0)
                    .set("start_value", s.start.to_string())
                    .set("minimum_value", s.min.to_string())
                    .set("maximum_value", s.max.to_string())
                    .set("increment", s.increment.to_string())
                    .set("cycle_option", yes_no(s.cycle))
                    .build(),
            )
        })
        .collect()
}

// The views' columns, as PostgreSQL 15 defines them.

pub(super) const INFO_SCHEMATA: &[ViewColumn] = &[
    c("catalog_name", SQL_ID),
    c("schema_name", SQL_ID),
    c("schema_owner", SQL_ID),
    c("default_character_set_catalog", SQL_ID),
    c("default_character_set_schema", SQL_ID),
    c("default_character_set_name", SQL_ID),
    c("sql_path", CHARDATA),
];

pub(super) const INFO_TABLES: &[ViewColumn] = &[
    c("table_catalog", SQL_ID),
    c("table_schema", SQL_ID),
    c("table_name", SQL_ID),
    c("table_type", CHARDATA),
    c("self_referencing_column_name", SQL_ID),
    c("reference_generation", CHARDATA),
    c("user_defined_type_catalog", SQL_ID),
    c("user_defined_type_schema", SQL_ID),
    c("user_defined_type_name", SQL_ID),
    c("is_insertable_into", YESNO),
    c("is_typed", YESNO),
    c("commit_action", CHARDATA),
];

pub(super) const INFO_COLUMNS: &[ViewColumn] = &[
    c("table_catalog", SQL_ID),
    c("table_schema", SQL_ID),
    c("table_name", SQL_ID),
    c("column_name", SQL_ID),
    c("ordinal_position", CARDINAL),
    c("column_default", CHARDATA),
    c("is_nullable", YESNO),
    c("data_type", CHARDATA),
    c("character_maximum_length", CARDINAL),
    c("character_octet_length", CARDINAL),
    c("numeric_precision", CARDINAL),
    c("numeric_precision_radix", CARDINAL),
    c("numeric_scale", CARDINAL),
    c("datetime_precision", CARDINAL),
    c("interval_type", CHARDATA),
    c("interval_precision", CARDINAL),
    c("character_set_catalog", SQL_ID),
    c("character_set_schema", SQL_ID),
    c("character_set_name", SQL_ID),
    c("collation_catalog", SQL_ID),
    c("collation_schema", SQL_ID),
    c("collation_name", SQL_ID),
    c("domain_catalog", SQL_ID),
    c("domain_schema", SQL_ID),
    c("domain_name", SQL_ID),
    c("udt_catalog", SQL_ID),
    c("udt_schema", SQL_ID),
    c("udt_name", SQL_ID),
    c("scope_catalog", SQL_ID),
    c("scope_schema", SQL_ID),
    c("scope_name", SQL_ID),
    c("maximum_cardinality", CARDINAL),
    c("dtd_identifier", SQL_ID),
    c("is_self_referencing", YESNO),
    c("is_identity", YESNO),
    c("identity_generation", CHARDATA),
    c("identity_start", CHARDATA),
    c("identity_increment", CHARDATA),
    c("identity_maximum", CHARDATA),
    c("identity_minimum", CHARDATA),
    c("identity_cycle", YESNO),
    c("is_generated", CHARDATA),
    c("generation_expression", CHARDATA),
    c("is_updatable", YESNO),
];

pub(super) const INFO_TABLE_CONSTRAINTS: &[ViewColumn] = &[
    c("constraint_catalog", SQL_ID),
    c("constraint_schema", SQL_ID),
    c("constraint_name", SQL_ID),
    c("table_catalog", SQL_ID),
    c("table_schema", SQL_ID),
    c("table_name", SQL_ID),
    c("constraint_type", CHARDATA),
    c("is_deferrable", YESNO),
    c("initially_deferred", YESNO),
    c("enforced", YESNO),
    c("nulls_distinct", YESNO),
];

pub(super) const INFO_KEY_COLUMN_USAGE: &[ViewColumn] = &[
    c("constraint_catalog", SQL_ID),
    c("constraint_schema", SQL_ID),
    c("constraint_name", SQL_ID),
    c("table_catalog", SQL_ID),
    c("table_schema", SQL_ID),
    c("table_name", SQL_ID),
    c("column_name", SQL_ID),
    c("ordinal_position", CARDINAL),
    c("position_in_unique_constraint", CARDINAL),
];

pub(super) const INFO_SEQUENCES: &[ViewColumn] = &[
    c("sequence_catalog", SQL_ID),
    c("sequence_schema", SQL_ID),
    c("sequence_name", SQL_ID),
    c("data_type", CHARDATA),
    c("numeric_precision", CARDINAL),
    c("numeric_precision_radix", CARDINAL),
    c("numeric_scale", CARDINAL),
    c("start_value", CHARDATA),
    c("minimum_value", CHARDATA),
    c("maximum_value", CHARDATA),
    c("increment", CHARDATA),
    c("cycle_option", YESNO),
];

pub(super) const INFO_VIEWS: &[ViewColumn] = &[
    c("table_catalog", SQL_ID),
    c("table_schema", SQL_ID),
    c("table_name", SQL_ID),
    c("view_definition", CHARDATA),
    c("check_option", CHARDATA),
    c("is_updatable", YESNO),
    c("is_insertable_into", YESNO),
    c("is_trigger_updatable", YESNO),
    c("is_trigger_deletable", YESNO),
    c("is_trigger_insertable_into", YESNO),
];

pub(super) const INFO_REFERENTIAL_CONSTRAINTS: &[ViewColumn] = &[
    c("constraint_catalog", SQL_ID),
    c("constraint_schema", SQL_ID),
    c("constraint_name", SQL_ID),
    c("unique_constraint_catalog", SQL_ID),
    c("unique_constraint_schema", SQL_ID),
    c("unique_constraint_name", SQL_ID),
    c("match_option", CHARDATA),
    c("update_rule", CHARDATA),
    c("delete_rule", CHARDATA),
];

pub(super) const INFO_CONSTRAINT_COLUMN_USAGE: &[ViewColumn] = &[
    c("table_catalog", SQL_ID),
    c("table_schema", SQL_ID),
    c("table_name", SQL_ID),
    c("column_name", SQL_ID),
    c("constraint_catalog", SQL_ID),
    c("constraint_schema", SQL_ID),
    c("constraint_name", SQL_ID),
];

pub(super) const INFO_TRIGGERS: &[ViewColumn] = &[
    c("trigger_catalog", SQL_ID),
    c("trigger_schema", SQL_ID),
    c("trigger_name", SQL_ID),
    c("event_manipulation", CHARDATA),
    c("event_object_catalog", SQL_ID),
    c("event_object_schema", SQL_ID),
    c("event_object_table", SQL_ID),
    c("action_order", CARDINAL),
    c("action_condition", CHARDATA),
    c("action_statement", CHARDATA),
    c("action_orientation", CHARDATA),
    c("action_timing", CHARDATA),
    c("action_reference_old_table", SQL_ID),
    c("action_reference_new_table", SQL_ID),
    c("action_reference_old_row", SQL_ID),
    c("action_reference_new_row", SQL_ID),
    c("created", SqlType::TimestampTz),
];

/// information_schema.triggers: a row per trigger and event (INSERT,
/// DELETE, UPDATE; TRUNCATE left out, as the standard has it), its
/// action_order its rank among the table's triggers of that event,
/// orientation and timing by name, its condition and statement cut from
/// pg_get_triggerdef's text, as PostgreSQL's view cuts them.
pub(super) fn triggers(state: &CatalogState) -> Vec<Vec<Value>> {
    use snapscale_engine::triggers::{events, TriggerTiming};
    let mut out = Vec::new();
    for e in &state.relations {
        let schema = schema_of(state, e);
        for (event, word) in
            [(events::INSERT, "INSERT"), (events::DELETE, "DELETE"), (events::UPDATE, "UPDATE")]
        {
            for t in e.triggers.iter().filter(|t| t.events & event != 0) {
                let order = e
                    .triggers
                    .iter()
                    .filter(|o| {
                        o.events & event != 0 && o.row == t.row && o.timing == t.timing && o.name < t.name
                    })
                    .count()
                    + 1;
                let def = super::triggers::trigger_def(state, t.oid, false).unwrap_or_default();
                // PostgreSQL's view cuts it from the definition's text:
                // `WHEN \((.+)\) EXECUTE FUNCTION`.
                let condition = def.find(" WHEN (").and_then(|at| {
                    let rest = &def[at + " WHEN (".len()..];
                    rest.rfind(") EXECUTE FUNCTION").map(|end| rest[..end].to_owned())
                });
                let statement = def.find("EXECUTE FUNCTION").map(|at| def[at..].to_owned());
                out.push(
                    RowBuilder::new(INFO_TRIGGERS)
                        .set("trigger_catalog", state.database.as_str())
                        .set("trigger_schema", schema.as_str())
                        .set("trigger_name", t.name.as_str())
                        .set("event_manipulation", word)
                        .set("event_object_catalog", state.database.as_str())
                        .set("event_object_schema", schema.as_str())
                        .set("event_object_table", e.name.as_str())
                        .set("action_order", Value::Int(order as i64))
                        .set("action_condition", condition.map_or(Value::Null, Value::Text))
                        .set("action_statement", statement.map_or(Value::Null, Value::Text))
                        .set("action_orientation", if t.row { "ROW" } else { "STATEMENT" })
                        .set(
                            "action_timing",
                            match t.timing {
                                TriggerTiming::Before => "BEFORE",
                                TriggerTiming::After => "AFTER",
                                TriggerTiming::InsteadOf => "INSTEAD OF",
                            },
                        )
                        .set(
                            "action_reference_old_table",
                            t.old_table.clone().map_or(Value::Null, Value::Text),
                        )
                        .set(
                            "action_reference_new_table",
                            t.new_table.clone().map_or(Value::Null, Value::Text),
                        )
                        .build(),
                );
            }
        }
    }
    out
}
