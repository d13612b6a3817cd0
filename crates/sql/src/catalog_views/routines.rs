//! pg_proc's rows for the user's functions, and what the catalog functions
//! say of them (pg_get_function_arguments, pg_get_function_result,
//! pg_function_is_visible, regproc and regprocedure). The built-in
//! functions are not listed: the value types carry their names only.

use snapscale_engine::catalog::RelEntry;
use snapscale_engine::routines::{AggSupport, ArgMode, RoutineDef, RoutineKind};
use snapscale_values::{quote_ident, SqlType, Value};

use super::defs::PG_PROC;
use super::{CatalogState, RowBuilder, POSTGRES_ROLE};

/// pg_language's oid of `internal` (an aggregate's).
const INTERNAL_LANGUAGE: u32 = 12;
/// pg_language's oid of `sql` (PostgreSQL's fixed one).
const SQL_LANGUAGE: u32 = 14;
/// pg_language's oid of `plpgsql` (the one PostgreSQL 15's initdb gives
/// the extension).
const PLPGSQL_LANGUAGE: u32 = 13563;

/// pg_language: the languages functions are written in here.
pub(super) fn languages() -> Vec<Vec<Value>> {
    [
        (INTERNAL_LANGUAGE, "internal", false, false),
        (13, "c", false, false),
        (SQL_LANGUAGE, "sql", false, true),
        (PLPGSQL_LANGUAGE, "plpgsql", true, true),
    ]
    .into_iter()
    .map(|(oid, name, pl, trusted)| {
        RowBuilder::new(super::defs::PG_LANGUAGE)
            .set("oid", oid)
            .set("lanname", name)
            .set("lanowner", POSTGRES_ROLE)
            .set("lanispl", pl)
            .set("lanpltrusted", trusted)
            .set("lanplcallfoid", 0u32)
            .set("laninline", 0u32)
            .set("lanvalidator", 0u32)
            .build()
    })
    .collect()
}

pub(super) fn procs(state: &CatalogState) -> Vec<Vec<Value>> {
    state
        .routines
        .iter()
        .filter_map(|e| {
            let r = e.routine.as_ref()?;
            let inputs: Vec<&_> = r.args.iter().filter(|a| a.mode.is_input()).collect();
            let plain = r.args.iter().all(|a| a.mode == ArgMode::In) && r.table_columns.is_empty();
            let all: Vec<(ArgMode, &str, SqlType, char)> = r
                .args
                .iter()
                .map(|a| (a.mode, a.name.as_str(), a.ty, a.mode.code()))
                .chain(r.table_columns.iter().map(|(n, ty)| (ArgMode::Out, n.as_str(), *ty, 't')))
                .collect();
            let named = all.iter().any(|(_, n, _, _)| !n.is_empty());
            let oids = |v: Vec<SqlType>| Value::array(v.into_iter().map(|t| Value::from(t.oid())).collect());
            let variadic = inputs
                .last()
                .filter(|a| a.mode == ArgMode::Variadic)
                .and_then(|a| a.ty.elem())
                .map_or(0, |t| t.oid());
            Some(
                RowBuilder::new(PG_PROC)
                    .set("oid", e.oid)
                    .set("proname", e.name.as_str())
                    .set("pronamespace", state.namespace_of(e))
                    .set("proowner", POSTGRES_ROLE)
                    .set(
                        "prolang",
                        match r.language.as_str() {
                            "plpgsql" => PLPGSQL_LANGUAGE,
                            "internal" => INTERNAL_LANGUAGE,
                            _ => SQL_LANGUAGE,
                        },
                    )
                    .set("procost", Value::Float(f64::from(r.cost)))
                    .set("prorows", Value::Float(f64::from(r.rows)))
                    .set("provariadic", variadic)
                    .set("prosupport", 0u32)
                    .set(
                        "prokind",
                        match r.kind {
                            RoutineKind::Procedure => 'p',
                            RoutineKind::Aggregate => 'a',
                            RoutineKind::Function => 'f',
                        },
                    )
                    .set("prosecdef", r.security_definer)
                    .set("proleakproof", r.leakproof)
                    .set("proisstrict", r.strict)
                    .set("proretset", r.returns_set)
                    .set("provolatile", r.volatility.code())
                    .set("proparallel", r.parallel as char)
                    .set("pronargs", inputs.len() as i64)
                    .set("pronargdefaults", inputs.iter().filter(|a| a.default.is_some()).count() as i64)
                    .set("prorettype", result_type(r).oid())
                    .set("proargtypes", oids(r.input_types()))
                    .set(
                        "proallargtypes",
                        if plain { Value::Null } else { oids(all.iter().map(|a| a.2).collect()) },
                    )
                    .set(
                        "proargmodes",
                        if plain {
                            Value::Null
                        } else {
                            Value::array(all.iter().map(|a| Value::from(a.3)).collect())
                        },
                    )
                    .set(
                        "proargnames",
                        if named {
                            Value::array(all.iter().map(|a| Value::Text(a.1.into())).collect())
                        } else {
                            Value::Null
                        },
                    )
                    .set("prosrc", r.body.as_str())
                    .build(),
            )
        })
        .collect()
}

/// pg_aggregate: a row for each of the user's aggregates.
pub(super) fn aggregates(state: &CatalogState) -> Vec<Vec<Value>> {
    // A user's function by its name now (it may have been renamed).
    let support = |f: Option<&AggSupport>| match f {
        Some(f) => {
            let now =
                state.routines.iter().find(|e| f.oid != 0 && e.oid == f.oid).map_or(&f.name, |e| &e.name);
            Value::Reg(f.oid, quote_ident(now).into())
        }
        None => Value::Reg(0, "-".into()),
    };
    state
        .routines
        .iter()
        .filter_map(|e| {
            let a = e.routine.as_ref()?.aggregate.as_ref()?;
            Some(
                RowBuilder::new(super::defs::PG_AGGREGATE)
                    .set("aggfnoid", Value::Reg(e.oid, quote_ident(&e.name).into()))
                    .set("aggkind", a.kind as char)
                    .set("aggnumdirectargs", i64::from(a.direct_args))
                    .set("aggtransfn", support(Some(&a.transfn)))
                    .set("aggfinalfn", support(a.finalfn.as_ref()))
                    .set("aggcombinefn", support(a.combinefn.as_ref()))
                    .set("aggserialfn", support(a.serialfn.as_ref()))
                    .set("aggdeserialfn", support(a.deserialfn.as_ref()))
                    .set("aggmtransfn", support(a.mtransfn.as_ref()))
                    .set("aggminvtransfn", support(a.minvtransfn.as_ref()))
                    .set("aggmfinalfn", support(a.mfinalfn.as_ref()))
                    .set("aggfinalextra", a.final_extra)
                    .set("aggmfinalextra", a.mfinal_extra)
                    .set("aggfinalmodify", a.final_modify as char)
                    .set("aggmfinalmodify", a.mfinal_modify as char)
                    .set("aggsortop", 0u32)
                    .set("aggtranstype", a.state.oid())
                    .set("aggtransspace", i64::from(a.state_space))
                    .set("aggmtranstype", a.mstate.map_or(0, |t| t.oid()))
                    .set("aggmtransspace", i64::from(a.mstate_space))
                    .set("agginitval", a.init.as_deref().map_or(Value::Null, |t| Value::Text(t.into())))
                    .set("aggminitval", a.minit.as_deref().map_or(Value::Null, |t| Value::Text(t.into())))
                    .build(),
            )
        })
        .collect()
}

impl CatalogState {
    fn routine(&self, oid: u32) -> Option<(&RelEntry, &RoutineDef)> {
        self.routines.iter().find(|e| e.oid == oid).and_then(|e| Some((&**e, e.routine.as_ref()?)))
    }

    /// Whether a name without a schema finds routine `oid`: its schema is
    /// searched, and no routine with its name and inputs comes before it.
    pub(super) fn routine_is_visible(&self, oid: u32) -> bool {
        let Some((e, r)) = self.routine(oid) else { return false };
        let searched = self.searched_namespaces();
        let Some(at) = searched.iter().position(|&ns| ns == self.namespace_of(e)) else { return false };
        !self.routines.iter().any(|o| {
            o.oid != oid
                && o.name == e.name
                && o.routine.as_ref().is_some_and(|q| q.input_types() == r.input_types())
                && searched.iter().position(|&ns| ns == self.namespace_of(o)).is_some_and(|p| p < at)
        })
    }

    /// `pg_get_function_result`: the result as CREATE FUNCTION declares it
    /// (a procedure has none: NULL).
    pub(super) fn function_result(&self, oid: u32) -> Option<String> {
        let (_, r) = self.routine(oid)?;
        if r.kind == RoutineKind::Procedure {
            return None;
        }
        if !r.table_columns.is_empty() {
            let cols: Vec<String> = r
                .table_columns
                .iter()
                .map(|(n, ty)| format!("{} {}", quote_ident(n), self.type_text(*ty)))
                .collect();
            return Some(format!("TABLE({})", cols.join(", ")));
        }
        let ty = match &r.row_type {
            Some(t) => quote_ident(&t.name),
            None => self.type_text(r.returns),
        };
        Some(if r.returns_set { format!("SETOF {ty}") } else { ty })
    }

    /// `pg_get_function_arguments`: the parameters as CREATE FUNCTION
    /// declares them, defaults included.
    pub(super) fn function_arguments(&self, oid: u32) -> Option<String> {
        let (_, r) = self.routine(oid)?;
        // A procedure's parameters are all its signature: each says its
        // mode, IN too.
        let procedure = r.kind == RoutineKind::Procedure;
        let args: Vec<String> = r
            .args
            .iter()
            .map(|a| {
                let mut s = String::new();
                match a.mode {
                    ArgMode::In if procedure => s.push_str("IN "),
                    ArgMode::In => {}
                    ArgMode::Out => s.push_str("OUT "),
                    ArgMode::InOut => s.push_str("INOUT "),
                    ArgMode::Variadic => s.push_str("VARIADIC "),
                }
                if !a.name.is_empty() {
                    s.push_str(&quote_ident(&a.name));
                    s.push(' ');
                }
                s.push_str(&self.type_text(a.ty));
                if let Some(d) = &a.default {
                    // As PostgreSQL prints the stored expression: typed.
                    s.push_str(" DEFAULT ");
                    match super::functions::deparse_default(d, a.ty) {
                        Ok(adbin) => s.push_str(&super::functions::print_default(&adbin)),
                        Err(_) => s.push_str(d),
                    }
                }
                s
            })
            .collect();
        Some(args.join(", "))
    }

    /// `pg_get_functiondef`: a CREATE OR REPLACE statement that makes the
    /// routine again, laid out as PostgreSQL lays it out.
    pub(super) fn function_def(&self, oid: u32) -> Option<String> {
        let (e, r) = self.routine(oid)?;
        let function = r.kind == RoutineKind::Function;
        let schema = self.namespace_name(self.namespace_of(e)).unwrap_or_default();
        let mut s = format!(
            "CREATE OR REPLACE {} {}.{}({})\n",
            if function { "FUNCTION" } else { "PROCEDURE" },
            quote_ident(&schema),
            quote_ident(&e.name),
            self.function_arguments(oid)?
        );
        if function {
            s.push_str(&format!(" RETURNS {}\n", self.function_result(oid)?));
        }
        s.push_str(&format!(" LANGUAGE {}\n", quote_ident(&r.language)));
        let mut options = String::new();
        match r.volatility {
            snapscale_engine::routines::Volatility::Immutable => options.push_str(" IMMUTABLE"),
            snapscale_engine::routines::Volatility::Stable => options.push_str(" STABLE"),
            snapscale_engine::routines::Volatility::Volatile => {}
        }
        match r.parallel {
            b's' => options.push_str(" PARALLEL SAFE"),
            b'r' => options.push_str(" PARALLEL RESTRICTED"),
            _ => {}
        }
        for (on, word) in
            [(r.strict, " STRICT"), (r.security_definer, " SECURITY DEFINER"), (r.leakproof, " LEAKPROOF")]
        {
            if on {
                options.push_str(word);
            }
        }
        if r.cost != 100.0 {
            options.push_str(&format!(" COST {}", r.cost));
        }
        if r.rows > 0.0 && r.rows != 1000.0 {
            options.push_str(&format!(" ROWS {}", r.rows));
        }
        if !options.is_empty() {
            s.push_str(&options);
            s.push('\n');
        }
        if r.atomic {
            s.push_str("BEGIN ATOMIC\n");
            for statement in crate::parse::atomic_statements(&r.body) {
                s.push_str(&format!(" {};\n", atomic_statement_text(statement)));
            }
            s.push_str("END\n");
            return Some(s);
        }
        match r.body.strip_prefix("RETURN ") {
            Some(e) if r.language == "sql" => {
                s.push_str(&format!("RETURN {}", super::functions::sql_body_expr(e)));
            }
            _ => {
                // Dollar quotes no body contains.
                let mut quote = format!("${}", if function { "function" } else { "procedure" });
                while r.body.contains(&format!("{quote}$")) {
                    quote.push('x');
                }
                quote.push('$');
                s.push_str(&format!("AS {quote}{}{quote}", r.body));
            }
        }
        s.push('\n');
        Some(s)
    }

    /// `pg_get_function_sqlbody`: a SQL-standard body (`RETURN expr`) as
    /// PostgreSQL prints it; NULL for a body kept as a string.
    pub(super) fn function_sqlbody(&self, oid: u32) -> Option<String> {
        let (_, r) = self.routine(oid)?;
        if r.atomic {
            let statements: Vec<String> = crate::parse::atomic_statements(&r.body)
                .into_iter()
                .map(|st| format!(" {};\n", atomic_statement_text(st)))
                .collect();
            return Some(format!("BEGIN ATOMIC\n{}END", statements.concat()));
        }
        let e = r.body.strip_prefix("RETURN ").filter(|_| r.language == "sql")?;
        Some(format!("RETURN {}", super::functions::sql_body_expr(e)))
    }

    /// A routine by name, as regproc reads it: the one routine so named
    /// (the name read as an identifier: folded to lower case unless
    /// quoted, and qualified or not).
    pub(super) fn routine_by_name(&self, name: &str) -> Option<(u32, String)> {
        let n = name.trim();
        let n = n.split_once('(').map_or(n, |(n, _)| n).trim();
        let parts = identifier_parts(n)?;
        let (schema, n) = match parts.as_slice() {
            [n] => (None, n.as_str()),
            [schema, n] => (Some(schema.as_str()), n.as_str()),
            _ => return None,
        };
        let in_schema = |e: &RelEntry| match schema {
            None => true,
            Some(s) => self.namespace_name(self.namespace_of(e)).is_some_and(|ns| ns == s),
        };
        let mut found = self.routines.iter().filter(|e| e.name == n && in_schema(e));
        let e = found.next()?;
        if found.next().is_some() {
            return None;
        }
        Some((e.oid, quote_ident(&e.name)))
    }

    /// A routine as regprocedure prints it: `name(type,type)`.
    pub(super) fn routine_signature(&self, oid: u32) -> Option<String> {
        let (e, r) = self.routine(oid)?;
        let types: Vec<String> = r.input_types().into_iter().map(|t| self.type_text(t)).collect();
        Some(format!("{}({})", quote_ident(&e.name), types.join(",")))
    }

    fn type_text(&self, ty: SqlType) -> String {
        super::functions::format_type_of(self, ty)
    }
}

/// pg_proc.prorettype: a procedure with output parameters returns a
/// record, even of one.
fn result_type(r: &RoutineDef) -> SqlType {
    if r.kind == RoutineKind::Procedure && !r.output_columns().is_empty() {
        return SqlType::Record(snapscale_values::Rec::Anonymous);
    }
    r.returns
}

/// A dotted name's parts as identifiers: quoted ones as written (a
/// doubled quote one), the others folded to lower case.
fn identifier_parts(text: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut chars = text.chars().peekable();
    loop {
        let mut part = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next()? {
                    '"' if chars.peek() == Some(&'"') => {
                        chars.next();
                        part.push('"');
                    }
                    '"' => break,
                    c => part.push(c),
                }
            }
        } else {
            while let Some(&c) = chars.peek() {
                if c == '.' {
                    break;
                }
                part.push(c.to_ascii_lowercase());
                chars.next();
            }
        }
        parts.push(part.trim().to_owned());
        match chars.next() {
            None => return Some(parts),
            Some('.') => {}
            Some(_) => return None,
        }
    }
}

/// One statement of a `BEGIN ATOMIC` body as pg_get_functiondef prints
/// it: RETURN and a SELECT of expressions alone with their expressions as
/// PostgreSQL prints them, anything else as written.
fn atomic_statement_text(statement: &str) -> String {
    if let Some(e) = crate::parse::return_expr(statement) {
        return format!("RETURN {}", super::functions::sql_body_expr(e));
    }
    let Ok(mut parsed) = crate::parse::parse(statement, crate::stack::DEFAULT_MAX_STACK_DEPTH) else {
        return statement.to_owned();
    };
    if let (Some(crate::parse::Parsed::Sql(ast)), true) = (parsed.pop(), parsed.is_empty()) {
        if let Some(sqlparser::ast::Statement::Query(q)) = ast.statement.as_deref() {
            if let sqlparser::ast::SetExpr::Select(sel) = q.body.as_ref() {
                let plain = sel.from.is_empty()
                    && sel.selection.is_none()
                    && q.order_by.is_none()
                    && q.limit_clause.is_none()
                    && q.with.is_none();
                let exprs: Option<Vec<String>> = sel
                    .projection
                    .iter()
                    .map(|item| match item {
                        sqlparser::ast::SelectItem::UnnamedExpr(e) => {
                            Some(super::functions::sql_body_expr(&e.to_string()))
                        }
                        _ => None,
                    })
                    .collect();
                if let (true, Some(exprs)) = (plain, exprs) {
                    return format!("SELECT {}", exprs.join(", "));
                }
            }
        }
    }
    statement.to_owned()
}
