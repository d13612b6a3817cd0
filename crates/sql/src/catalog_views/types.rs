//! `pg_type`: the types this server has, with PostgreSQL's oids and
//! attributes, their array types, and the few pseudo-types clients look up.

use snapscale_engine::user_types::TypeDef;
use snapscale_values::{Elem, Reg, SqlType, UserType, Value};

use super::defs::{PG_ENUM, PG_TYPE};
use super::{CatalogState, RowBuilder, DEFAULT_COLLATION, PG_CATALOG, POSTGRES_ROLE, PUBLIC};

/// A base type's attributes: (type, name, length, by value, category,
/// preferred, alignment, storage, input function prefix).
struct Base {
    ty: SqlType,
    name: &'static str,
    len: i32,
    byval: bool,
    category: char,
    preferred: bool,
    align: char,
    storage: char,
    io: &'static str,
}

// One row of a table: each argument is a column of it.
#[allow(clippy::too_many_arguments)]
const fn b(
    ty: SqlType,
    name: &'static str,
    len: i32,
    byval: bool,
    category: char,
    preferred: bool,
    align: char,
    storage: char,
    io: &'static str,
) -> Base {
    Base { ty, name, len, byval, category, preferred, align, storage, io }
}

static BASES: &[Base] = &[
    b(SqlType::Bool, "bool", 1, true, 'B', true, 'c', 'p', "bool"),
    b(SqlType::Bytea, "bytea", -1, false, 'U', false, 'i', 'x', "bytea"),
    b(SqlType::Char1, "char", 1, true, 'Z', false, 'c', 'p', "char"),
    b(SqlType::Name, "name", 64, false, 'S', false, 'c', 'p', "name"),
    b(SqlType::Int8, "int8", 8, true, 'N', false, 'd', 'p', "int8"),
    b(SqlType::Int2, "int2", 2, true, 'N', false, 's', 'p', "int2"),
    b(SqlType::Int2Vector, "int2vector", -1, false, 'A', false, 'i', 'p', "int2vector"),
    b(SqlType::Int4, "int4", 4, true, 'N', false, 'i', 'p', "int4"),
    b(SqlType::Reg(Reg::Proc), "regproc", 4, true, 'N', false, 'i', 'p', "regproc"),
    b(SqlType::Text, "text", -1, false, 'S', true, 'i', 'x', "text"),
    b(SqlType::Oid, "oid", 4, true, 'N', true, 'i', 'p', "oid"),
    b(SqlType::OidVector, "oidvector", -1, false, 'A', false, 'i', 'p', "oidvector"),
    b(SqlType::Float4, "float4", 4, true, 'N', false, 'i', 'p', "float4"),
    b(SqlType::Float8, "float8", 8, true, 'N', true, 'd', 'p', "float8"),
    b(SqlType::Char(1), "bpchar", -1, false, 'S', false, 'i', 'x', "bpchar"),
    b(SqlType::Varchar(None), "varchar", -1, false, 'S', false, 'i', 'x', "varchar"),
    b(SqlType::Date, "date", 4, true, 'D', false, 'i', 'p', "date"),
    b(SqlType::Timestamp, "timestamp", 8, true, 'D', false, 'd', 'p', "timestamp"),
    b(SqlType::TimestampTz, "timestamptz", 8, true, 'D', true, 'd', 'p', "timestamptz"),
    b(SqlType::Interval, "interval", 16, false, 'T', true, 'd', 'p', "interval"),
    b(SqlType::Time, "time", 8, true, 'D', false, 'd', 'p', "time"),
    b(SqlType::TimeTz, "timetz", 12, false, 'D', false, 'd', 'p', "timetz"),
    b(SqlType::Reg(Reg::Procedure), "regprocedure", 4, true, 'N', false, 'i', 'p', "regprocedure"),
    b(SqlType::Reg(Reg::Class), "regclass", 4, true, 'N', false, 'i', 'p', "regclass"),
    b(SqlType::Reg(Reg::Type), "regtype", 4, true, 'N', false, 'i', 'p', "regtype"),
    b(SqlType::Reg(Reg::Namespace), "regnamespace", 4, true, 'N', false, 'i', 'p', "regnamespace"),
    b(SqlType::Reg(Reg::Role), "regrole", 4, true, 'N', false, 'i', 'p', "regrole"),
    b(SqlType::Uuid, "uuid", 16, false, 'U', false, 'c', 'p', "uuid"),
    b(SqlType::Numeric(-1), "numeric", -1, false, 'N', false, 'i', 'm', "numeric"),
    b(SqlType::Json, "json", -1, false, 'U', false, 'i', 'x', "json"),
    b(SqlType::Jsonb, "jsonb", -1, false, 'U', false, 'i', 'x', "jsonb"),
    b(SqlType::JsonPath, "jsonpath", -1, false, 'U', false, 'i', 'x', "jsonpath"), // Read and written by text's functions, as in PostgreSQL.
    b(SqlType::Refcursor, "refcursor", -1, false, 'U', false, 'i', 'x', "text"),
];

/// Pseudo-types: (oid, name, input function prefix).
static PSEUDO: &[(u32, &str, &str)] = &[
    (705, "unknown", "unknown"),
    (2249, "record", "record"),
    (2277, "anyarray", "anyarray"),
    (2278, "void", "void"),
];

fn regproc(name: String) -> Value {
    // The functions are not in pg_proc: the value carries its name only.
    Value::Reg(0, name.into())
}

/// The collation a value of `ty` sorts by: the default for strings.
pub(super) fn collation_of(ty: SqlType) -> u32 {
    match ty {
        SqlType::Text | SqlType::Varchar(_) | SqlType::Char(_) => DEFAULT_COLLATION,
        // PostgreSQL 15: name sorts as "C".
        SqlType::Name => 950,
        _ => 0,
    }
}

/// A type's storage attributes for pg_attribute: (length, by value,
/// alignment, storage).
pub(crate) fn storage_of(ty: SqlType) -> (i32, bool, char, char) {
    let base = match ty {
        SqlType::Array(_) => return (-1, false, 'i', 'x'),
        SqlType::Varchar(_) => SqlType::Varchar(None),
        SqlType::Char(_) => SqlType::Char(1),
        other => other,
    };
    BASES
        .iter()
        .find(|b| b.ty == base)
        .map_or((-1, false, 'i', 'x'), |b| (b.len, b.byval, b.align, b.storage))
}

/// The rows of pg_type.
pub(super) fn types() -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for base in BASES {
        let array = Elem::of(base.ty).map_or(0, |e| SqlType::Array(e).oid());
        let elem = match base.ty {
            SqlType::Name => 18,
            SqlType::Int2Vector => 21,
            SqlType::OidVector => 26,
            _ => 0,
        };
        out.push(
            common(base.ty.oid(), base.name, base.io)
                .set("typlen", base.len)
                .set("typbyval", base.byval)
                .set("typtype", 'b')
                .set("typcategory", base.category)
                .set("typispreferred", base.preferred)
                .set("typelem", elem as u32)
                .set("typarray", array)
                .set("typalign", base.align)
                .set("typstorage", base.storage)
                .set("typcollation", collation_of(base.ty))
                .set("typsubscript", regproc(if elem != 0 { "array_subscript_handler" } else { "-" }.into()))
                .build(),
        );
        if let Some(e) = Elem::of(base.ty) {
            let array = SqlType::Array(e);
            out.push(
                common(array.oid(), &format!("_{}", base.name), "array")
                    .set("typlen", -1)
                    .set("typbyval", false)
                    .set("typtype", 'b')
                    .set("typcategory", 'A')
                    .set("typispreferred", false)
                    .set("typelem", base.ty.oid())
                    .set("typarray", 0u32)
                    .set("typalign", if base.align == 'd' { 'd' } else { 'i' })
                    .set("typstorage", 'x')
                    .set("typcollation", collation_of(base.ty))
                    .set("typsubscript", regproc("array_subscript_handler".into()))
                    .build(),
            );
        }
    }
    for &(oid, name, io) in PSEUDO {
        out.push(
            common(oid, name, io)
                .set("typlen", if name == "unknown" { -2 } else { 4 })
                .set("typbyval", name == "void")
                .set("typtype", 'p')
                .set("typcategory", if name == "unknown" { 'X' } else { 'P' })
                .set("typispreferred", false)
                .set("typelem", 0u32)
                .set("typarray", if name == "record" { 2287u32 } else { 0 })
                .set("typalign", 'i')
                .set("typstorage", 'p')
                .set("typcollation", 0u32)
                .set("typsubscript", regproc("-".into()))
                .build(),
        );
    }
    out
}

/// The columns every type has alike.
fn common(oid: u32, name: &str, io: &str) -> RowBuilder {
    RowBuilder::new(PG_TYPE)
        .set("oid", oid)
        .set("typname", name)
        .set("typnamespace", PG_CATALOG)
        .set("typowner", POSTGRES_ROLE)
        .set("typisdefined", true)
        .set("typdelim", ',')
        .set("typrelid", 0u32)
        .set("typinput", regproc(format!("{io}in")))
        .set("typoutput", regproc(format!("{io}out")))
        .set("typreceive", regproc(format!("{io}recv")))
        .set("typsend", regproc(format!("{io}send")))
        .set("typmodin", regproc("-".into()))
        .set("typmodout", regproc("-".into()))
        .set("typanalyze", regproc("-".into()))
        .set("typnotnull", false)
        .set("typbasetype", 0u32)
        .set("typtypmod", -1)
        .set("typndims", 0)
}

/// The type a name (as regtype reads it) names: PostgreSQL's names and
/// aliases, `name[]` for arrays; with its oid and its name as it prints.
pub(super) fn type_by_name(name: &str) -> Option<(u32, String)> {
    let n = name.trim();
    let n = n.strip_prefix("pg_catalog.").unwrap_or(n);
    if let Some(elem) = n.strip_suffix("[]") {
        let (oid, _) = type_by_name(elem)?;
        let ty = SqlType::from_oid(oid).and_then(Elem::of).map(SqlType::Array)?;
        return Some((ty.oid(), ty.name().to_owned()));
    }
    if let Some(&(oid, name, _)) = PSEUDO.iter().find(|(_, p, _)| *p == n) {
        return Some((oid, name.to_owned()));
    }
    let ty = match n {
        "char" | "\"char\"" => SqlType::Char1,
        "bpchar" | "character" => SqlType::Char(1),
        "varchar" | "character varying" => SqlType::Varchar(None),
        other => match BASES.iter().find(|b| b.name == other) {
            Some(b) => b.ty,
            None => {
                if let Some(inner) = other.strip_prefix('_') {
                    let base = BASES.iter().find(|b| b.name == inner)?;
                    let ty = SqlType::Array(Elem::of(base.ty)?);
                    return Some((ty.oid(), ty.name().to_owned()));
                }
                SqlType::from_name(other, None).ok()?
            }
        },
    };
    Some((ty.oid(), type_name(ty)))
}

/// How a type prints as regtype and in format_type without a modifier.
pub(super) fn type_name(ty: SqlType) -> String {
    match ty {
        SqlType::Char(_) => "character".into(),
        SqlType::Varchar(_) => "character varying".into(),
        other => other.name().to_owned(),
    }
}

/// The name of type `oid` as regtype prints it.
pub(super) fn type_name_of(oid: u32) -> Option<String> {
    if let Some(&(_, name, _)) = PSEUDO.iter().find(|(o, _, _)| *o == oid) {
        return Some(name.to_owned());
    }
    SqlType::from_oid(oid).map(type_name)
}

/// The rows of pg_type for user-defined types: each type and its array.
pub(super) fn user_types(state: &CatalogState) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for e in &state.user_types {
        if let Some(TypeDef::Domain(d)) = &e.user_type {
            let (len, byval, align, storage) = storage_of(d.base);
            let category = BASES.iter().find(|b| b.ty == d.base).map_or('U', |b| b.category);
            out.push(
                common(e.oid, &e.name, "domain_")
                    .set("typnamespace", PUBLIC)
                    .set("typlen", len)
                    .set("typbyval", byval)
                    .set("typtype", 'd')
                    .set("typcategory", category)
                    .set("typispreferred", false)
                    .set("typelem", 0u32)
                    .set("typarray", 0u32)
                    .set("typalign", align)
                    .set("typstorage", storage)
                    .set("typcollation", collation_of(d.base))
                    .set("typsubscript", regproc("-".into()))
                    .set("typnotnull", d.not_null)
                    .set("typbasetype", d.parent.unwrap_or_else(|| d.base.oid()))
                    .set("typtypmod", d.base.typmod())
                    .build(),
            );
            continue;
        }
        if let Some(TypeDef::Composite) = &e.user_type {
            out.push(
                common(e.oid, &e.name, "record_")
                    .set("typnamespace", PUBLIC)
                    // PostgreSQL's row type has a pg_class row (relkind
                    // 'c'); snapscale reserves its oid, the type's next,
                    // and lists no such relation.
                    .set("typrelid", e.oid.wrapping_add(1))
                    .set("typlen", -1)
                    .set("typbyval", false)
                    .set("typtype", 'c')
                    .set("typcategory", 'C')
                    .set("typispreferred", false)
                    .set("typelem", 0u32)
                    .set("typarray", 0u32)
                    .set("typalign", 'd')
                    .set("typstorage", 'x')
                    .set("typcollation", 0u32)
                    .set("typsubscript", regproc("-".into()))
                    .build(),
            );
            continue;
        }
        let Some(TypeDef::Enum(_)) = &e.user_type else { continue };
        let u = UserType::new(e.oid, &e.name);
        let user = |b: RowBuilder| b.set("typnamespace", PUBLIC).set("typlen", 4).set("typbyval", true);
        out.push(
            user(common(e.oid, &e.name, "enum_"))
                .set("typtype", 'e')
                .set("typcategory", 'E')
                .set("typispreferred", false)
                .set("typelem", 0u32)
                .set("typarray", u.array_oid())
                .set("typalign", 'i')
                .set("typstorage", 'p')
                .set("typcollation", 0u32)
                .set("typsubscript", regproc("-".into()))
                .build(),
        );
        out.push(
            common(u.array_oid(), u.array_internal(), "array")
                .set("typnamespace", PUBLIC)
                .set("typlen", -1)
                .set("typbyval", false)
                .set("typtype", 'b')
                .set("typcategory", 'A')
                .set("typispreferred", false)
                .set("typelem", e.oid)
                .set("typarray", 0u32)
                .set("typalign", 'i')
                .set("typstorage", 'x')
                .set("typcollation", 0u32)
                .set("typsubscript", regproc("array_subscript_handler".into()))
                .build(),
        );
    }
    out
}

/// The rows of pg_enum.
pub(super) fn enum_labels(state: &CatalogState) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for e in &state.user_types {
        let Some(TypeDef::Enum(def)) = &e.user_type else { continue };
        for l in &def.labels {
            out.push(
                RowBuilder::new(PG_ENUM)
                    .set("oid", l.cell.oid)
                    .set("enumtypid", e.oid)
                    .set("enumsortorder", Value::Float4(l.sort_order))
                    .set("enumlabel", &*l.name)
                    .build(),
            );
        }
    }
    out
}

/// A user-defined type (or its array) by name: its oid and name.
pub(super) fn user_type_by_name(state: &CatalogState, name: &str) -> Option<(u32, String)> {
    let n = name.trim();
    let n = n.strip_prefix("public.").unwrap_or(n);
    let (n, array) = match n.strip_suffix("[]") {
        Some(elem) => (elem, true),
        None => (n, false),
    };
    let e = state.user_types.iter().find(|e| e.name == n)?;
    Some(if array { (e.oid.wrapping_add(1), format!("{}[]", e.name)) } else { (e.oid, e.name.clone()) })
}

/// The name of user-defined type `oid` (or of its array), as regtype
/// prints it.
pub(super) fn user_type_name(state: &CatalogState, oid: u32) -> Option<String> {
    state.user_types.iter().find_map(|e| {
        if e.oid == oid {
            Some(e.name.clone())
        } else if e.oid.wrapping_add(1) == oid && matches!(e.user_type, Some(TypeDef::Enum(_))) {
            Some(format!("{}[]", e.name))
        } else {
            None
        }
    })
}
