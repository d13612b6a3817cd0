//! The functions over the catalog (`format_type`, `pg_get_indexdef`,
//! `pg_get_expr`, …) and the names of catalog objects for the oid alias
//! types, as [`crate::expr::Catalog`] for one statement's view.

use snapscale_engine::catalog::RelEntry;
use snapscale_values::{quote_ident, Reg, SqlError, SqlType, Value};

use super::deparse::Deparse;
use super::relations::typmod;
use super::types::{type_by_name, type_name, type_name_of};
use super::{catalog_relations, CatalogState, INFORMATION_SCHEMA, PG_CATALOG};
use crate::expr::{Catalog, CatalogFunc};

/// A type as format_type names it, a user-defined one included (without
/// a modifier: a routine's parameters have none).
pub(super) fn format_type_of(state: &CatalogState, ty: SqlType) -> String {
    match ty {
        SqlType::Enum(u) | SqlType::Composite(u) => {
            super::types::user_type_name(state, u.oid()).unwrap_or_else(|| u.name().to_owned())
        }
        SqlType::Array(snapscale_values::Elem::Enum(u) | snapscale_values::Elem::Composite(u)) => {
            format!(
                "{}[]",
                super::types::user_type_name(state, u.oid()).unwrap_or_else(|| u.name().to_owned())
            )
        }
        SqlType::Char(_) => "character".into(),
        SqlType::Void => "void".into(),
        SqlType::Trigger => "trigger".into(),
        SqlType::Poly(p) => p.name().into(),
        SqlType::Record(_) => "record".into(),
        other => format_type(other.oid(), -1),
    }
}

/// PostgreSQL's `format_type(type, typmod)`.
pub(crate) fn format_type(oid: u32, typmod: i32) -> String {
    let Some(ty) = SqlType::from_oid(oid) else {
        return type_name_of(oid).unwrap_or_else(|| "???".into());
    };
    let length = (typmod >= 4).then(|| typmod - 4);
    match (ty, length) {
        (SqlType::Varchar(_), Some(n)) => format!("character varying({n})"),
        (SqlType::Char(_), Some(n)) => format!("character({n})"),
        (SqlType::Char(_), None) => "bpchar".into(),
        (SqlType::Numeric(_), Some(_)) => {
            format!("numeric{}", snapscale_values::numeric::numeric_typmod_out(typmod))
        }
        (SqlType::Array(e), _) => {
            let elem = e.ty();
            format!("{}[]", format_type(elem.oid(), typmod))
        }
        (SqlType::Char1, _) => "\"char\"".into(),
        // A precision: timestamp(2) without time zone, time(0) with time
        // zone, interval(3).
        (SqlType::Timestamp | SqlType::TimestampTz | SqlType::Time | SqlType::TimeTz, _) if typmod >= 0 => {
            let name = type_name(ty);
            let (base, zone) = name.split_once(' ').unwrap_or((&name, ""));
            format!("{base}({typmod}) {zone}")
        }
        (SqlType::Interval, _) if typmod >= 0 => {
            use snapscale_values::interval_range;
            let fields = interval_range::name(interval_range::of(typmod)).unwrap_or("");
            match interval_range::precision(typmod) {
                Some(p) => format!("interval{fields}({p})"),
                None => format!("interval{fields}"),
            }
        }
        (other, _) => type_name(other),
    }
}

/// A relation's name schema-qualified (pg_get_triggerdef's).
pub(super) fn qualified_name(state: &CatalogState, e: &RelEntry) -> String {
    qualified(state, e)
}

/// A routine's name as PostgreSQL prints it in a definition: qualified
/// unless its schema is on the search_path.
pub(super) fn routine_name(state: &CatalogState, e: &RelEntry) -> String {
    let ns = state.namespace_name(state.namespace_of(e)).unwrap_or_default();
    if state.search_path.contains(&ns) {
        quote_ident(&e.name)
    } else {
        format!("{}.{}", quote_ident(&ns), quote_ident(&e.name))
    }
}

/// A SQL-standard body's expression (`RETURN expr`) as pg_get_functiondef
/// prints it.
pub(super) fn sql_body_expr(text: &str) -> String {
    // An operator's expression in parentheses, a constant or a cast
    // without (PostgreSQL's `RETURN ((a = b) AND c)`, `RETURN false`).
    let out = stored_expr(text, &[], false, false);
    match out.contains(' ') && !(out.starts_with('(') && out.ends_with(')')) {
        true => format!("({out})"),
        false => out,
    }
}

/// A trigger's WHEN condition as pg_get_triggerdef prints it.
pub(super) fn when_text(text: &str, pretty: bool) -> String {
    stored_expr(text, &[], pretty, true)
}

/// A relation's name as `CREATE INDEX` and `\d` print it: schema-qualified.
fn qualified(state: &CatalogState, e: &RelEntry) -> String {
    let ns = state.namespace_name(state.namespace_of(e)).unwrap_or_default();
    format!("{}.{}", quote_ident(&ns), quote_ident(&e.name))
}

/// `pg_get_indexdef` of index `i` of `e` (`pretty`: psql's form, with
/// the predicate's needless parentheses left out).
pub(super) fn index_def(state: &CatalogState, e: &RelEntry, i: usize, pretty: bool) -> String {
    let ix = &e.indexes[i];
    let predicate = match &ix.predicate {
        Some(p) => format!(" WHERE {}", stored_expr(p, &e.columns, pretty, true)),
        None => String::new(),
    };
    // Pretty, a table on the search path goes unqualified.
    let table = if pretty { quote_ident(&e.name) } else { qualified(state, e) };
    format!(
        "CREATE {}INDEX {} ON {table} USING btree {}{}{}{predicate}",
        if ix.unique { "UNIQUE " } else { "" },
        quote_ident(&ix.name),
        key_and_include(e, ix, pretty),
        if ix.nulls_not_distinct { " NULLS NOT DISTINCT" } else { "" },
        storage_parameters(&ix.options),
    )
}

/// ` WITH (name=value, …)` as ruleutils prints storage parameters: a
/// value that is a plain identifier as it is, anything else quoted.
pub(super) fn storage_parameters(options: &[String]) -> String {
    if options.is_empty() {
        return String::new();
    }
    let items: Vec<String> = options
        .iter()
        .map(|o| {
            let (name, value) = o.split_once('=').unwrap_or((o, ""));
            if crate::expr::scalar::text::quote_identifier(value) == value {
                format!("{name}={value}")
            } else {
                format!("{name}={}", crate::expr::scalar::text::quote_literal(value))
            }
        })
        .collect();
    format!(" WITH ({})", items.join(", "))
}

/// A stored expression of a table as ruleutils prints it, in parentheses
/// where `top_parens` asks for them unless `pretty` (an index predicate's
/// `WHERE (a > 0)`); text this server cannot read prints as it is.
fn stored_expr(
    text: &str,
    columns: &[snapscale_engine::catalog::ColumnDef],
    pretty: bool,
    top_parens: bool,
) -> String {
    match crate::parse::parse_expr(text, crate::stack::DEFAULT_MAX_STACK_DEPTH) {
        Ok(e) => {
            let out = Deparse { pretty, columns }.top(&e, None);
            let wrapped = out.starts_with('(') && out.ends_with(')');
            match top_parens && !pretty && !wrapped && !looks_like_function(&e) && !is_plain(&e) {
                true => format!("({out})"),
                false => out,
            }
        }
        Err(_) => text.to_owned(),
    }
}

/// Whether ruleutils prints `e` without parentheses of its own: a
/// constant or a column (`WHEN (true)`, `WHERE flag`).
fn is_plain(e: &sqlparser::ast::Expr) -> bool {
    use sqlparser::ast::Expr as E;
    match e {
        E::Nested(inner) => is_plain(inner),
        E::Value(_) | E::Identifier(_) | E::CompoundIdentifier(_) => true,
        _ => false,
    }
}

/// Whether ruleutils prints `e` as a function call (an index's key part
/// that is one goes without the parentheses around other expressions).
fn looks_like_function(e: &sqlparser::ast::Expr) -> bool {
    use sqlparser::ast::Expr as E;
    match e {
        E::Nested(inner) => looks_like_function(inner),
        E::Function(f) => !matches!(f.args, sqlparser::ast::FunctionArguments::None),
        _ => false,
    }
}

/// The key parts of index `ix` of `e` as pg_get_indexdef prints them: a
/// column's name, an expression (in parentheses unless a function call).
pub(crate) fn index_key_parts(
    e: &RelEntry,
    ix: &snapscale_engine::catalog::IndexDef,
    pretty: bool,
) -> Vec<String> {
    let mut exprs = ix.exprs.iter();
    ix.columns
        .iter()
        .map(|&c| match c {
            snapscale_engine::catalog::EXPRESSION => {
                let text = exprs.next().map_or("", String::as_str);
                let printed = stored_expr(text, &e.columns, pretty, false);
                match crate::parse::parse_expr(text, crate::stack::DEFAULT_MAX_STACK_DEPTH) {
                    Ok(parsed) if looks_like_function(&parsed) => printed,
                    _ => format!("({printed})"),
                }
            }
            c => quote_ident(&e.columns[c].name),
        })
        .collect()
}

/// `(a, b)`, then ` INCLUDE (c)` if the index has included columns.
fn key_and_include(e: &RelEntry, ix: &snapscale_engine::catalog::IndexDef, pretty: bool) -> String {
    // A part's operator class follows it where it is not the default,
    // then its order where it is not ASC NULLS LAST.
    let parts = index_key_parts(e, ix, pretty).into_iter().enumerate().map(|(k, mut part)| {
        if let Some(class) = ix.opclasses.get(k).filter(|c| !c.is_empty()) {
            part = format!("{part} {class}");
        }
        let order = ix.orders.get(k).copied().unwrap_or(0);
        let desc = order & snapscale_engine::catalog::ORDER_DESC != 0;
        let nulls_first = order & snapscale_engine::catalog::ORDER_NULLS_FIRST != 0;
        match (desc, nulls_first) {
            (true, true) => part + " DESC",
            (true, false) => part + " DESC NULLS LAST",
            (false, true) => part + " NULLS FIRST",
            (false, false) => part,
        }
    });
    let key = parts.collect::<Vec<_>>().join(", ");
    let names = |cols: &[usize]| -> String {
        cols.iter().map(|&c| quote_ident(&e.columns[c].name)).collect::<Vec<_>>().join(", ")
    };
    match ix.include.is_empty() {
        true => format!("({key})"),
        false => format!("({key}) INCLUDE ({})", names(&ix.include)),
    }
}

/// `pg_get_constraintdef` of the constraint of index `i` of `e`.
pub(super) fn constraint_def(e: &RelEntry, i: usize) -> Option<String> {
    let ix = e.indexes.get(i).filter(|x| x.constraint)?;
    let kind = match (ix.primary, ix.nulls_not_distinct) {
        (true, _) => "PRIMARY KEY",
        (false, false) => "UNIQUE",
        (false, true) => "UNIQUE NULLS NOT DISTINCT",
    };
    Some(format!("{kind} {}", key_and_include(e, ix, false)))
}

/// `pg_get_constraintdef` of a CHECK constraint.
fn check_def(
    c: &snapscale_engine::user_types::CheckDef,
    columns: &[snapscale_engine::catalog::ColumnDef],
    pretty: bool,
) -> String {
    let expr = match crate::parse::parse_expr(&c.expr, crate::stack::DEFAULT_MAX_STACK_DEPTH) {
        Ok(e) => Deparse { pretty, columns }.top(&e, None),
        Err(_) => c.expr.clone(),
    };
    let not_valid = if c.validated { "" } else { " NOT VALID" };
    format!("CHECK ({expr}){not_valid}")
}

/// A column default as pg_attrdef.adbin holds it: the column's type and
/// the expression's text, which pg_get_expr prints as PostgreSQL would.
pub(super) fn deparse_default(text: &str, ty: SqlType) -> Result<String, SqlError> {
    Ok(format!("{{DEFAULT :typid {} :typmod {} :expr {text}}}", ty.oid(), typmod(ty)))
}

/// A default as information_schema.columns shows it (pg_get_expr's
/// unpretty form).
pub(super) fn print_default(adbin: &str) -> String {
    get_expr(adbin, false)
}

/// pg_get_expr(adbin, relation, pretty): a default as PostgreSQL prints
/// it; text that is not a default this server wrote prints as it is.
fn get_expr(adbin: &str, pretty: bool) -> String {
    let parsed = adbin.strip_prefix("{DEFAULT :typid ").and_then(|rest| {
        let (typid, rest) = rest.split_once(" :typmod ")?;
        let (typmod, rest) = rest.split_once(" :expr ")?;
        let expr = rest.strip_suffix('}')?;
        Some((typid.parse::<u32>().ok()?, typmod.parse::<i32>().ok()?, expr))
    });
    let Some((typid, typmod, text)) = parsed else { return adbin.to_owned() };
    let ty = SqlType::from_oid(typid).map(|t| t.with_typmod(typmod));
    match crate::parse::parse_expr(text, crate::stack::DEFAULT_MAX_STACK_DEPTH) {
        Ok(e) => Deparse { pretty, columns: &[] }.top(&e, ty),
        Err(_) => text.to_owned(),
    }
}

/// Splits a possibly qualified, possibly quoted name (`public."Foo"`) into
/// its parts, folding unquoted ones to lower case.
fn name_parts(name: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut chars = name.trim().chars().peekable();
    let mut quoted = false;
    let mut was_quoted = false;
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                cur.push('"');
            }
            '"' => {
                quoted = !quoted;
                was_quoted = true;
            }
            '.' if !quoted => {
                parts.push(if was_quoted {
                    std::mem::take(&mut cur)
                } else {
                    std::mem::take(&mut cur).to_lowercase()
                });
                was_quoted = false;
            }
            c => cur.push(c),
        }
    }
    parts.push(if was_quoted { cur } else { cur.to_lowercase() });
    parts
}

impl CatalogState {
    /// The comment whose pg_description key `matches` (obj_description,
    /// col_description), or NULL.
    fn description(&self, matches: impl Fn((u32, u32, i64)) -> bool) -> Value {
        self.relations
            .iter()
            .chain(&self.user_types)
            .chain(&self.routines)
            .flat_map(|e| e.comments.iter().map(move |c| (e, c)))
            .find(|(e, c)| super::relations::described_object(e, &c.on).is_some_and(&matches))
            .map_or(Value::Null, |(_, c)| Value::Text(c.text.as_str().into()))
    }
}

impl CatalogState {
    /// A relation (or index, or sequence, or catalog relation) by name, as
    /// regclass reads it: its oid and its name as regclass prints it.
    pub(super) fn relation_by_name(&self, name: &str) -> Option<(u32, String)> {
        let parts = name_parts(name);
        let (schema, rel) = match parts.as_slice() {
            [rel] => (None, rel.as_str()),
            [schema, rel] => (Some(schema.as_str()), rel.as_str()),
            _ => return None,
        };
        // A relation, or an index of one, called `rel` in namespace `ns`.
        let user = |ns: u32| {
            self.relations.iter().filter(|e| self.namespace_of(e) == ns).find_map(|e| {
                if e.name == rel {
                    return Some(e.oid);
                }
                e.indexes.iter().find(|i| i.name == rel).map(|i| i.oid)
            })
        };
        let catalog =
            |ns: u32| catalog_relations().find(|(_, n, s, _, _)| *n == rel && *s == ns).map(|r| r.0);
        let in_namespace =
            |ns: u32| if ns == PG_CATALOG || ns == INFORMATION_SCHEMA { catalog(ns) } else { user(ns) };
        let oid = match schema {
            None => self.searched_namespaces().into_iter().find_map(in_namespace),
            Some(s) => in_namespace(self.namespace_by_name_exact(s)?),
        }?;
        Some((oid, self.class_name(oid)?))
    }

    /// How regclass prints relation `oid`: qualified unless its schema is
    /// searched (pg_catalog, public, this session's temporary schema).
    fn class_name(&self, oid: u32) -> Option<String> {
        if let Some((e, index)) = self.relation(oid) {
            let name = match index {
                Some(i) => &e.indexes[i].name,
                None => &e.name,
            };
            if index.is_none() && !self.relation_visible(oid) {
                let ns = self.namespace_name(self.namespace_of(e)).unwrap_or_default();
                return Some(format!("{}.{}", quote_ident(&ns), quote_ident(name)));
            }
            return Some(quote_ident(name));
        }
        catalog_relations().find(|r| r.0 == oid).map(|(_, name, ns, _, _)| {
            if ns == PG_CATALOG {
                name.to_owned()
            } else {
                format!("information_schema.{name}")
            }
        })
    }

    /// Is relation `oid` visible by its bare name (pg_table_is_visible)?
    fn relation_visible(&self, oid: u32) -> bool {
        if let Some((e, index)) = self.relation(oid) {
            // The first of its name along the searched namespaces.
            let name = index.map_or(e.name.as_str(), |i| e.indexes[i].name.as_str());
            let first = self.searched_namespaces().into_iter().find_map(|ns| {
                self.relations.iter().filter(|o| self.namespace_of(o) == ns).find_map(|o| {
                    if o.name == name {
                        return Some(o.oid);
                    }
                    o.indexes.iter().find(|i| i.name == name).map(|i| i.oid)
                })
            });
            return first == Some(oid);
        }
        catalog_relations().any(|r| r.0 == oid && r.2 == PG_CATALOG)
    }

    /// `text` with each `'name'::regclass` naming a relation as regclass
    /// prints it now (qualified only where the search_path does not find
    /// it), as PostgreSQL prints the oid it keeps.
    fn regclass_literals(&self, text: String) -> String {
        const CAST: &str = "'::regclass";
        let mut out = String::new();
        let mut rest = text.as_str();
        while let Some(end) = rest.find(CAST) {
            let Some(start) = rest[..end].rfind('\'') else { break };
            let literal = rest[start + 1..end].replace("''", "'");
            let shown = self.relation_by_name(&literal).map(|(_, n)| n).unwrap_or(literal);
            out.push_str(&rest[..start + 1]);
            out.push_str(&shown.replace('\'', "''"));
            out.push_str(CAST);
            rest = &rest[end + CAST.len()..];
        }
        out.push_str(rest);
        out
    }

    fn role_by_name(&self, name: &str) -> Option<u32> {
        let name = name_parts(name).pop()?;
        match name.as_str() {
            "postgres" => Some(super::POSTGRES_ROLE),
            "pg_database_owner" => Some(super::DATABASE_OWNER_ROLE),
            n if n == self.user => Some(self.role_of(n)),
            _ => None,
        }
    }

    fn namespace_by_name(&self, name: &str) -> Option<u32> {
        let parts = name_parts(name);
        let [name] = parts.as_slice() else { return None };
        if name == "pg_temp" {
            return None;
        }
        self.namespace_by_name_exact(name)
    }
}

fn int(v: &Value) -> Option<i64> {
    match v {
        Value::Int(i) => Some(*i),
        Value::Reg(o, _) => Some(i64::from(*o)),
        _ => None,
    }
}

fn oid(v: &Value) -> Option<u32> {
    int(v).and_then(|i| u32::try_from(i).ok())
}

fn text(v: &Value) -> Option<&str> {
    match v {
        Value::Text(s) => Some(s),
        _ => None,
    }
}

impl Catalog for CatalogState {
    fn oid_of(&self, reg: Reg, name: &str) -> Option<(u32, String)> {
        match reg {
            Reg::Class => self.relation_by_name(name),
            Reg::Type => type_by_name(name).or_else(|| super::types::user_type_by_name(self, name)),
            Reg::Namespace => {
                self.namespace_by_name(name).map(|o| (o, self.namespace_name(o).unwrap_or_default()))
            }
            Reg::Role => self.role_by_name(name).map(|o| (o, self.role_name(o).unwrap_or_default())),
            Reg::Proc | Reg::Procedure => self.routine_by_name(name),
        }
    }

    fn name_of(&self, reg: Reg, oid: u32) -> Option<String> {
        match reg {
            Reg::Class => self.class_name(oid),
            Reg::Type => type_name_of(oid).or_else(|| super::types::user_type_name(self, oid)),
            Reg::Namespace => self.namespace_name(oid).map(|n| quote_ident(&n)),
            Reg::Role => self.role_name(oid).map(|n| quote_ident(&n)),
            Reg::Proc => self.routines.iter().find(|e| e.oid == oid).map(|e| quote_ident(&e.name)),
            Reg::Procedure => self.routine_signature(oid),
        }
    }

    fn call(&self, f: CatalogFunc, args: &[Value]) -> Result<Value, SqlError> {
        use CatalogFunc as C;
        // Every one of these is strict: NULL in, NULL out (the privilege
        // checks aside, which take a NULL user as "current").
        // format_type takes a NULL modifier as none.
        let strict_args = if f == C::FormatType { &args[..1] } else { args };
        if !matches!(f, C::HasPrivilege) && strict_args.iter().any(|a| matches!(a, Value::Null)) {
            return Ok(Value::Null);
        }
        Ok(match f {
            C::FormatType => {
                let typmod = args.get(1).and_then(int).unwrap_or(-1) as i32;
                oid(&args[0]).map_or(Value::Null, |o| {
                    Value::Text(match SqlType::from_oid(o) {
                        None => {
                            super::types::user_type_name(self, o).unwrap_or_else(|| format_type(o, typmod))
                        }
                        Some(_) => format_type(o, typmod),
                    })
                })
            }
            C::GetExpr => {
                let pretty = matches!(args.get(2), Some(Value::Bool(true)));
                text(&args[0])
                    .map_or(Value::Null, |t| Value::Text(self.regclass_literals(get_expr(t, pretty))))
            }
            C::GetIndexDef => {
                let Some((e, Some(i))) = oid(&args[0]).and_then(|o| self.relation(o)) else {
                    return Ok(Value::Null);
                };
                let pretty = matches!(args.get(2), Some(Value::Bool(true)));
                match args.get(1).and_then(int) {
                    Some(col) if col > 0 => Value::Text(
                        index_key_parts(e, &e.indexes[i], pretty)
                            .into_iter()
                            .nth(col as usize - 1)
                            .unwrap_or_default(),
                    ),
                    _ => Value::Text(index_def(self, e, i, pretty)),
                }
            }
            C::GetConstraintDef => {
                let Some(o) = oid(&args[0]) else { return Ok(Value::Null) };
                let pretty = matches!(args.get(1), Some(Value::Bool(true)));
                if let Some((e, Some(i))) = self.relation(o) {
                    return Ok(constraint_def(e, i).map_or(Value::Null, Value::Text));
                }
                if let Some(def) = self.foreign_key_def(o) {
                    return Ok(Value::Text(def));
                }
                self.check_constraint(o)
                    .map_or(Value::Null, |(c, cols)| Value::Text(check_def(c, cols, pretty)))
            }
            C::GetUserById => {
                let o = oid(&args[0]).unwrap_or(0);
                Value::Text(self.role_name(o).unwrap_or_else(|| format!("unknown (OID={o})")))
            }
            C::TableIsVisible => Value::Bool(oid(&args[0]).is_some_and(|o| self.relation_visible(o))),
            C::TypeIsVisible => Value::Bool(oid(&args[0]).is_some_and(|o| type_name_of(o).is_some())),
            C::FunctionIsVisible => Value::Bool(oid(&args[0]).is_some_and(|o| self.routine_is_visible(o))),
            C::CollationIsVisible => {
                Value::Bool(oid(&args[0]).is_some_and(|o| [super::DEFAULT_COLLATION, 950, 951].contains(&o)))
            }
            C::EncodingToChar => Value::Text(if int(&args[0]) == Some(6) { "UTF8" } else { "" }.into()),
            C::GetFunctionResult => {
                oid(&args[0]).and_then(|o| self.function_result(o)).map_or(Value::Null, Value::Text)
            }
            C::GetFunctionSqlBody => {
                oid(&args[0]).and_then(|o| self.function_sqlbody(o)).map_or(Value::Null, Value::Text)
            }
            C::GetFunctionDef => {
                oid(&args[0]).and_then(|o| self.function_def(o)).map_or(Value::Null, Value::Text)
            }
            C::GetFunctionArguments => {
                oid(&args[0]).and_then(|o| self.function_arguments(o)).map_or(Value::Null, Value::Text)
            }
            C::GetViewDef => {
                let target = match &args[0] {
                    Value::Text(name) => match self.relation_by_name(name) {
                        Some((o, _)) => Some(o),
                        None => return Err(Reg::Class.missing(name)),
                    },
                    other => oid(other),
                };
                match self.relations.iter().find(|e| Some(e.oid) == target).and_then(|e| e.view.as_ref()) {
                    Some(v) => Value::Text(super::deparse::view_definition(self, &v.query)),
                    None => Value::Null,
                }
            }
            // A view's `_RETURN` rule, as PostgreSQL's ruleutils writes
            // it (pretty: on lines of their own).
            C::GetRuleDef => {
                let rule = oid(&args[0]);
                let view = self
                    .relations
                    .iter()
                    .find(|e| e.is_view() && Some(super::relations::rule_oid(e.oid)) == rule);
                match view.and_then(|e| Some((e, e.view.as_ref()?))) {
                    Some((e, v)) => {
                        let pretty = matches!(args.get(1), Some(Value::Bool(true)));
                        let on = if pretty { "\n    ON" } else { " ON" };
                        let name = self.class_name(e.oid).unwrap_or_else(|| e.name.clone());
                        let def = super::deparse::view_definition(self, &v.query);
                        Value::Text(format!(
                            "CREATE RULE \"_RETURN\" AS{on} SELECT TO {name} DO INSTEAD {def}"
                        ))
                    }
                    None => Value::Null,
                }
            }
            C::RelationIsPublishable => Value::Bool(false),
            C::GetTriggerDef => {
                let pretty = matches!(args.get(1), Some(Value::Bool(true)));
                oid(&args[0])
                    .and_then(|o| super::triggers::trigger_def(self, o, pretty))
                    .map_or(Value::Null, Value::Text)
            }
            C::IsolationTestSessionIsBlocked => {
                let pids: Vec<i64> = match &args[1] {
                    Value::Array(a) => a.items().iter().filter_map(int).collect(),
                    _ => Vec::new(),
                };
                Value::Bool(int(&args[0]).is_some_and(|pid| super::activity::blocked_by(self, pid, &pids)))
            }
            C::StatisticsObjDefColumns => Value::Null,
            C::ObjDescription => {
                let catalog = match args.get(1).and_then(text) {
                    None => None,
                    Some("pg_class") => Some(1259),
                    Some("pg_type") => Some(1247),
                    Some("pg_constraint") => Some(2606),
                    Some("pg_proc") => Some(1255),
                    Some("pg_trigger") => Some(2620),
                    Some(_) => return Ok(Value::Null),
                };
                let Some(o) = oid(&args[0]) else { return Ok(Value::Null) };
                self.description(|(objoid, classoid, subid)| {
                    objoid == o && subid == 0 && catalog.is_none_or(|c| c == classoid)
                })
            }
            C::ColDescription => {
                let (Some(o), Some(n)) = (oid(&args[0]), int(&args[1])) else { return Ok(Value::Null) };
                self.description(|key| key == (o, 1259, n))
            }
            C::ShobjDescription => Value::Null,
            C::GetSerialSequence => {
                let (Some(table), Some(column)) = (text(&args[0]), text(&args[1])) else {
                    return Ok(Value::Null);
                };
                let Some((table_oid, _)) = self.relation_by_name(table) else {
                    return Err(Reg::Class.missing(table));
                };
                let column = name_parts(column).pop().unwrap_or_default();
                let owned = self.relations.iter().find(|e| {
                    e.sequence
                        .as_ref()
                        .and_then(|s| s.owned_by.as_ref())
                        .is_some_and(|o| o.table_oid == table_oid && o.column == column)
                });
                match owned {
                    Some(s) => Value::Text(format!("public.{}", quote_ident(&s.name))),
                    None => Value::Null,
                }
            }
            // One role, a superuser: every privilege.
            C::HasPrivilege => Value::Bool(true),
            // Data lives in memory: no relation has a size on disk.
            C::RelationSize => Value::Int(0),
            C::SizePretty => {
                let n = int(&args[0]).unwrap_or(0);
                Value::Text(size_pretty(n))
            }
            C::ToReg(reg) => {
                let Some(name) = text(&args[0]) else { return Ok(Value::Null) };
                match self.oid_of(reg, name) {
                    Some((o, n)) => Value::Reg(o, n.into()),
                    None => Value::Null,
                }
            }
            C::CurrentSchemas => {
                let implicit = matches!(args[0], Value::Bool(true));
                let mut schemas = Vec::new();
                for ns in self.searched_namespaces() {
                    let temp = ns == self.temp_namespace();
                    let placed = self.namespace_name(ns).is_some_and(|n| self.search_path.contains(&n));
                    // The implicit ones (pg_catalog, the temporary schema)
                    // only when asked for, and when they exist.
                    if (temp && !self.relations.iter().any(|e| e.temp_owner.is_some()))
                        || (!implicit && !placed && (temp || ns == PG_CATALOG))
                    {
                        continue;
                    }
                    if let Some(n) = self.namespace_name(ns) {
                        schemas.push(Value::Text(n));
                    }
                }
                Value::array(schemas)
            }
            C::MyTempSchema => {
                let has = self.relations.iter().any(|e| e.temp_owner.is_some());
                Value::Int(if has { self.temp_namespace().into() } else { 0 })
            }
            C::IsOtherTempSchema => Value::Bool(false),
            C::TablespaceLocation => Value::Text(String::new()),
            C::PostmasterStartTime => Value::TimestampTz(self.db.started_at()),
            // As PostgreSQL: the special xids (0, 1, 2) are infinitely old.
            C::XidAge => match int(&args[0]) {
                Some(x) if x >= 3 => {
                    let age = (self.db.engine.next_xid().0 as i64).saturating_sub(x);
                    Value::Int(age.clamp(0, i64::from(i32::MAX)))
                }
                _ => Value::Int(i64::from(i32::MAX)),
            },
        })
    }
}

/// pg_size_pretty: bytes, kB, MB, GB, TB, rounding halves up, as
/// PostgreSQL does.
fn size_pretty(n: i64) -> String {
    let units = ["bytes", "kB", "MB", "GB", "TB", "PB"];
    let mut size = n;
    let mut unit = 0;
    // PostgreSQL switches unit below 10 240 of the next.
    while size.unsigned_abs() >= 10 * 1024 && unit + 1 < units.len() {
        size = if unit == 0 { size / 512 } else { size / 1024 };
        if unit == 0 {
            size = (size + size.signum()) / 2;
        }
        unit += 1;
    }
    format!("{size} {}", units[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_type_as_postgresql() {
        assert_eq!(format_type(1042, -1), "bpchar");
        assert_eq!(format_type(1042, 7), "character(3)");
        assert_eq!(format_type(1043, -1), "character varying");
        assert_eq!(format_type(1015, 14), "character varying(10)[]");
        assert_eq!(format_type(1007, -1), "integer[]");
        assert_eq!(format_type(18, -1), "\"char\"");
        assert_eq!(format_type(19, -1), "name");
        assert_eq!(format_type(2205, -1), "regclass");
        assert_eq!(format_type(99999, -1), "???");
        assert_eq!(format_type(1184, -1), "timestamp with time zone");
        assert_eq!(format_type(1700, -1), "numeric");
        assert_eq!(format_type(1700, (12 << 16 | 2) + 4), "numeric(12,2)");
    }

    #[test]
    fn defaults_print_as_postgresql() {
        let show = |text: &str, ty: SqlType| get_expr(&deparse_default(text, ty).unwrap(), true);
        assert_eq!(show("1", SqlType::Int4), "1");
        assert_eq!(show("-1", SqlType::Int4), "'-1'::integer");
        assert_eq!(show("1.5", SqlType::Float8), "1.5");
        assert_eq!(show("'x'", SqlType::Text), "'x'::text");
        assert_eq!(show("'y'", SqlType::Varchar(Some(5))), "'y'::character varying");
        assert_eq!(show("true", SqlType::Bool), "true");
        assert_eq!(show("now()", SqlType::TimestampTz), "now()");
        assert_eq!(show("CURRENT_TIMESTAMP", SqlType::Timestamp), "CURRENT_TIMESTAMP");
        assert_eq!(show("'2024-01-02'", SqlType::Date), "'2024-01-02'::date");
        assert_eq!(show("1+2", SqlType::Int4), "1 + 2");
        assert_eq!(get_expr(&deparse_default("1+2", SqlType::Int4).unwrap(), false), "(1 + 2)");
        assert_eq!(show("'ab'", SqlType::Char(3)), "'ab'::bpchar");
        assert_eq!(show("'1 day'", SqlType::Interval), "'1 day'::interval");
        assert_eq!(show("nextval('t_a_seq'::regclass)", SqlType::Int4), "nextval('t_a_seq'::regclass)");
    }

    #[test]
    fn sizes_print_as_postgresql() {
        assert_eq!(size_pretty(0), "0 bytes");
        assert_eq!(size_pretty(10239), "10239 bytes");
        assert_eq!(size_pretty(10240), "10 kB");
        assert_eq!(size_pretty(1 << 30), "1024 MB");
    }

    #[test]
    fn qualified_names_split_as_identifiers() {
        assert_eq!(name_parts("public.\"Foo\""), ["public", "Foo"]);
        assert_eq!(name_parts("Pg_Class"), ["pg_class"]);
        assert_eq!(name_parts("\"a\"\"b\""), ["a\"b"]);
    }
}
