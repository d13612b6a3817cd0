//! Binding sequences: CREATE SEQUENCE, SERIAL and identity columns,
//! DROP SEQUENCE, and nextval / currval / setval / lastval (see
//! snapscale_engine::sequence for how their values behave).

use snapscale_engine::sequence::{type_bounds, OwnedBy, SequenceDef};
use snapscale_engine::LockMode;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType, Value};
use sqlparser::ast::{self, DataType, ObjectName, SequenceOptions};

use super::scope::Scope;
use super::{ident, not_supported, relation_name, Binder, Coercion, Resolver, Typed};
use crate::expr::{Expr, Func};
use crate::plan::{CreateTable, Plan, Serial, Utility};
use snapscale_values::quote_ident;

impl<R: Resolver> Binder<'_, R> {
    pub(super) fn create_sequence(
        &mut self,
        temp: bool,
        if_not_exists: bool,
        name: &ObjectName,
        data_type: Option<&DataType>,
        options: &[SequenceOptions],
        owned_by: Option<&ObjectName>,
    ) -> Result<Plan, SqlError> {
        let name = relation_name(name)?;
        let ty = match data_type {
            None => SqlType::Int8,
            Some(dt) => sequence_type(dt)?,
        };
        let mut def = self.sequence_def(ty, options)?;
        if let Some(owner) = owned_by {
            def.owned_by = self.owned_by(owner)?;
        }
        Ok(Plan::Utility(Utility::CreateTable(CreateTable {
            if_not_exists,
            ..CreateTable::sequence(name, temp, def)
        })))
    }

    /// A sequence's parameters from its options, with PostgreSQL's
    /// defaults and checks (22023).
    pub(super) fn sequence_def(
        &mut self,
        ty: SqlType,
        options: &[SequenceOptions],
    ) -> Result<SequenceDef, SqlError> {
        self.sequence_def_over(None, ty, options, None)
    }

    /// The parameters `options` give over `base` (ALTER SEQUENCE: what an
    /// option does not name stays; `None`: CREATE, PostgreSQL's defaults),
    /// of type `ty`, checked as PostgreSQL checks them, `restart` (the
    /// value ALTER SEQUENCE … RESTART sets, or the one the sequence is
    /// at) included.
    pub(super) fn sequence_def_over(
        &mut self,
        base: Option<&SequenceDef>,
        ty: SqlType,
        options: &[SequenceOptions],
        restart: Option<i64>,
    ) -> Result<SequenceDef, SqlError> {
        let mut increment = base.map_or(1, |b| b.increment);
        // Outer None: not named; Some(None): NO MINVALUE / NO MAXVALUE.
        let (mut min, mut max, mut start) = (None, None, None);
        let mut cycle = base.is_some_and(|b| b.cycle);
        for o in options {
            match o {
                SequenceOptions::IncrementBy(e, _) => increment = self.option_value(e)?,
                SequenceOptions::MinValue(e) => {
                    min = Some(e.as_ref().map(|e| self.option_value(e)).transpose()?)
                }
                SequenceOptions::MaxValue(e) => {
                    max = Some(e.as_ref().map(|e| self.option_value(e)).transpose()?)
                }
                SequenceOptions::StartWith(e, _) => start = Some(self.option_value(e)?),
                SequenceOptions::Cycle(no) => cycle = !*no,
                SequenceOptions::Cache(e) => {
                    // Values cached per session would be numbered
                    // differently: only the default is honoured.
                    if self.option_value(e)? != 1 {
                        return Err(not_supported("CACHE other than 1"));
                    }
                }
            }
        }
        let invalid = |m: String| SqlError::new(SqlState::INVALID_PARAMETER_VALUE, m);
        if increment == 0 {
            return Err(invalid("INCREMENT must not be zero".into()));
        }
        let (lo, hi) = type_bounds(ty);
        // A bound that was its old type's own follows a change of type,
        // as PostgreSQL's does.
        let kept = |old: Option<i64>, old_default: Option<i64>, new_default: i64| match (old, old_default) {
            (Some(o), Some(d)) if o == d => Some(new_default),
            (o, _) => o,
        };
        let (old_lo, old_hi) = base.map_or((None, None), |b| {
            let (l, h) = type_bounds(b.ty);
            (Some(l), Some(h))
        });
        let min = match min {
            Some(Some(v)) => v,
            Some(None) => {
                if increment > 0 {
                    1
                } else {
                    lo
                }
            }
            None => kept(base.map(|b| b.min), old_lo, lo).unwrap_or(if increment > 0 { 1 } else { lo }),
        };
        let max = match max {
            Some(Some(v)) => v,
            Some(None) => {
                if increment > 0 {
                    hi
                } else {
                    -1
                }
            }
            None => kept(base.map(|b| b.max), old_hi, hi).unwrap_or(if increment > 0 { hi } else { -1 }),
        };
        for (what, v) in [("MINVALUE", min), ("MAXVALUE", max)] {
            if v < lo || v > hi {
                return Err(invalid(format!(
                    "{what} ({v}) is out of range for sequence data type {}",
                    ty.name()
                )));
            }
        }
        if min >= max {
            return Err(invalid(format!("MINVALUE ({min}) must be less than MAXVALUE ({max})")));
        }
        let start = start.or(base.map(|b| b.start)).unwrap_or(if increment > 0 { min } else { max });
        if start < min {
            return Err(invalid(format!("START value ({start}) cannot be less than MINVALUE ({min})")));
        }
        if start > max {
            return Err(invalid(format!("START value ({start}) cannot be greater than MAXVALUE ({max})")));
        }
        if let Some(r) = restart {
            if r < min {
                return Err(invalid(format!("RESTART value ({r}) cannot be less than MINVALUE ({min})")));
            }
            if r > max {
                return Err(invalid(format!("RESTART value ({r}) cannot be greater than MAXVALUE ({max})")));
            }
        }
        Ok(SequenceDef {
            ty,
            increment,
            min,
            max,
            start,
            cycle,
            owned_by: base.and_then(|b| b.owned_by.clone()),
        })
    }

    /// ALTER SEQUENCE: a new definition, and where the sequence then is
    /// (RESTART's value, else where it was). RENAME TO is ALTER TABLE's.
    pub(super) fn alter_sequence(
        &mut self,
        a: &crate::parse::alter_sequence_syntax::AlterSequence,
    ) -> Result<Plan, SqlError> {
        use crate::parse::alter_sequence_syntax::SequenceAction;
        let name = relation_name(&a.name)?;
        let Some(found) = self.resolver.resolve(&name)? else {
            if a.if_exists {
                return Ok(Plan::Utility(Utility::Skip {
                    code: SqlState::SUCCESSFUL_COMPLETION,
                    notice: format!("relation \"{name}\" does not exist, skipping"),
                    tag: "ALTER SEQUENCE",
                }));
            }
            return Err(SqlError::new(
                SqlState::UNDEFINED_TABLE,
                format!("relation \"{name}\" does not exist"),
            ));
        };
        let Some(base) = found.entry.sequence.clone() else {
            return Err(SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("\"{name}\" is not a sequence")));
        };
        let (data_type, options, owned_by, restart) = match &a.action {
            SequenceAction::Unsupported(what) => return Err(not_supported(what)),
            SequenceAction::Rename(new) => return self.rename_relation(&a.name, new, "ALTER SEQUENCE"),
            SequenceAction::Options(c) => (&c.data_type, &c.options, &c.owned_by, &c.restart),
        };
        // ALTER SEQUENCE blocks nextval on it until it commits (PostgreSQL
        // takes ShareRowExclusive; nextval here takes no lock: see README).
        let rel = self.any_relation(&a.name, snapscale_engine::LockMode::ShareRowExclusive)?;
        let ty = match data_type {
            None => base.ty,
            Some(dt) => sequence_type(dt)?,
        };
        let restart = match restart {
            None => None,
            Some(None) => Some(None),
            Some(Some(e)) => Some(Some(self.option_value(e)?)),
        };
        // The value checked against the new bounds: RESTART's, else the
        // one the sequence is at (the executor reads it; the start stands
        // in for RESTART without a value).
        let mut def = self.sequence_def_over(Some(&base), ty, options, None)?;
        let at = match restart {
            Some(Some(v)) => Some(v),
            Some(None) => Some(def.start),
            None => None,
        };
        if let Some(v) = at {
            def = self.sequence_def_over(Some(&base), ty, options, Some(v))?;
        }
        if let Some(owner) = owned_by {
            def.owned_by = self.owned_by(owner)?;
        }
        Ok(Plan::Utility(Utility::AlterSequence { rel, def, restart: at }))
    }

    /// A sequence option's value (RESTART WITH's of an identity column).
    pub(super) fn sequence_option_value(&mut self, e: &ast::Expr) -> Result<i64, SqlError> {
        self.option_value(e)
    }

    fn option_value(&mut self, e: &ast::Expr) -> Result<i64, SqlError> {
        let t = self.expr(e, &Scope::empty())?;
        match self.coerce(t, SqlType::Int8, Coercion::Assignment, "")? {
            Expr::Const(Value::Int(v)) => Ok(v),
            _ => Err(SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{e}\""))),
        }
    }

    /// OWNED BY table.column (or NONE).
    fn owned_by(&mut self, owner: &ObjectName) -> Result<Option<OwnedBy>, SqlError> {
        let parts: Vec<String> = owner.0.iter().filter_map(|p| p.as_ident()).map(ident).collect();
        match parts.as_slice() {
            [none] if none == "none" => Ok(None),
            [table @ .., column] if !table.is_empty() => {
                let table =
                    ObjectName::from(table.iter().map(|t| ast::Ident::new(t.clone())).collect::<Vec<_>>());
                let rel = self.rel(&table, LockMode::AccessShare)?;
                if rel.entry.column(column).is_none() {
                    return Err(SqlError::new(
                        SqlState::UNDEFINED_COLUMN,
                        format!("column \"{column}\" of relation \"{}\" does not exist", rel.entry.name),
                    ));
                }
                Ok(Some(OwnedBy {
                    table_oid: rel.entry.oid,
                    table: rel.entry.name.clone(),
                    column: column.clone(),
                }))
            }
            _ => Err(SqlError::new(SqlState::INVALID_PARAMETER_VALUE, "invalid OWNED BY option".to_owned())
                .with_hint("Specify OWNED BY table.column or OWNED BY NONE.")),
        }
    }

    /// A SERIAL or identity column: its sequence (named as PostgreSQL names
    /// it) and the default that draws from it.
    pub(super) fn serial(
        &mut self,
        table: &str,
        column: &str,
        ty: SqlType,
        options: &[SequenceOptions],
        serials: &mut Vec<Serial>,
    ) -> Result<String, SqlError> {
        // Beside its table; the default names it with its schema unless
        // that is public, so that it finds it whatever the search_path
        // (PostgreSQL's names it by oid).
        let (schema, bare) = snapscale_engine::names::split(table);
        let seq_name = format!("{bare}_{column}_seq");
        let sequence = snapscale_engine::names::key(schema.as_deref(), &seq_name);
        let def = self.sequence_def(ty, options)?;
        let shown = match schema {
            Some(s) => Some(s),
            None => self.resolver.creation_schema(table, false)?,
        };
        let shown = match shown.as_deref() {
            Some(s) if s != "public" && s != "pg_temp" => {
                format!("{}.{}", quote_ident(s), quote_ident(&seq_name))
            }
            _ => quote_ident(&seq_name),
        };
        let default = format!("nextval('{}'::regclass)", shown.replace('\'', "''"));
        serials.push(Serial { column: column.to_owned(), sequence, def, numbers_rows: true });
        Ok(default)
    }

    /// nextval / currval / setval / lastval. The sequence is named by a
    /// constant (`'name'` or `'name'::regclass`), resolved now: the plan
    /// depends on it like on a table.
    pub(super) fn sequence_function(
        &mut self,
        name: &str,
        args: &[&ast::Expr],
        scope: &Scope<'_>,
    ) -> Result<Option<Typed>, SqlError> {
        let func = match (name, args.len()) {
            ("nextval", 1) => Func::NextVal,
            ("currval", 1) => Func::CurrVal,
            ("setval", 2 | 3) => Func::SetVal,
            ("lastval", 0) => {
                return Ok(Some(Typed { e: Expr::Func(Func::LastVal, Vec::new()), ty: Some(SqlType::Int8) }))
            }
            _ => return Ok(None),
        };
        let text = match sequence_name_arg(args[0]) {
            Some(t) => t,
            None => return Err(not_supported(format!("{name}() of a sequence not named by a constant"))),
        };
        let mode = if func == Func::CurrVal { LockMode::AccessShare } else { LockMode::RowExclusive };
        let n = sequence_name(&text)?;
        let rel = self.resolver.resolve(&n)?.ok_or_else(|| {
            SqlError::new(SqlState::UNDEFINED_TABLE, format!("relation \"{n}\" does not exist"))
        })?;
        if rel.entry.sequence.is_none() {
            return Err(SqlError::new(SqlState::WRONG_OBJECT_TYPE, format!("\"{n}\" is not a sequence")));
        }
        self.dep(&n, &rel, mode);
        let logged = rel.entry.temp_owner.is_none();
        let mut bound = vec![
            Expr::Const(Value::Int(rel.entry.storage as i64)),
            Expr::Const(Value::Text(rel.entry.name.clone())),
            Expr::Const(Value::Bool(logged)),
        ];
        if func == Func::SetVal {
            let v = self.expr(args[1], scope)?;
            bound.push(self.coerce(v, SqlType::Int8, Coercion::Implicit, "argument of setval")?);
            let called = match args.get(2) {
                Some(c) => {
                    let c = self.expr(c, scope)?;
                    self.coerce(c, SqlType::Bool, Coercion::Implicit, "argument of setval")?
                }
                None => Expr::Const(Value::Bool(true)),
            };
            bound.push(called);
        }
        Ok(Some(Typed { e: Expr::Func(func, bound), ty: Some(SqlType::Int8) }))
    }
}

/// `'name'` or `'name'::regclass`.
fn sequence_name_arg(e: &ast::Expr) -> Option<String> {
    let mut e = e;
    while let ast::Expr::Nested(inner) = e {
        e = inner;
    }
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) => Some(s.clone()),
            _ => None,
        },
        ast::Expr::Cast { expr, data_type, .. } if data_type.to_string().eq_ignore_ascii_case("regclass") => {
            sequence_name_arg(expr)
        }
        _ => None,
    }
}

/// A relation name written in a string, as regclass reads it: unquoted
/// parts fold to lower case, quoted ones keep their case.
pub(super) fn sequence_name(text: &str) -> Result<String, SqlError> {
    let mut parts = Vec::new();
    let mut rest = text.trim();
    loop {
        let (part, after) = if let Some(q) = rest.strip_prefix('"') {
            let mut out = String::new();
            let mut chars = q.char_indices();
            let mut end = None;
            while let Some((i, c)) = chars.next() {
                if c == '"' {
                    if q[i + 1..].starts_with('"') {
                        out.push('"');
                        chars.next();
                    } else {
                        end = Some(i + 1);
                        break;
                    }
                } else {
                    out.push(c);
                }
            }
            let end = end.ok_or_else(|| {
                SqlError::new(SqlState::INVALID_NAME, format!("invalid name syntax: \"{text}\""))
            })?;
            (out, &q[end..])
        } else {
            let end = rest.find('.').unwrap_or(rest.len());
            let part = rest[..end].trim();
            if part.contains(char::is_whitespace) || part.contains('"') {
                return Err(SqlError::new(
                    SqlState::INVALID_NAME,
                    format!("invalid name syntax: \"{text}\""),
                ));
            }
            (part.to_lowercase(), &rest[end..])
        };
        if part.is_empty() {
            return Err(SqlError::new(SqlState::INVALID_NAME, format!("invalid name syntax: \"{text}\"")));
        }
        parts.push(part);
        match after.trim_start().strip_prefix('.') {
            Some(next) => rest = next.trim_start(),
            None if after.trim().is_empty() => break,
            None => {
                return Err(SqlError::new(SqlState::INVALID_NAME, format!("invalid name syntax: \"{text}\"")))
            }
        }
    }
    let idents: Vec<ast::Ident> = parts.into_iter().map(|p| ast::Ident::with_quote('"', p)).collect();
    relation_name(&ObjectName::from(idents))
}

/// SERIAL, BIGSERIAL, SMALLSERIAL (and serial4/8/2): the integer type of
/// the column they make.
pub(super) fn serial_type(dt: &DataType) -> Option<SqlType> {
    let DataType::Custom(name, modifiers) = dt else { return None };
    if !modifiers.is_empty() {
        return None;
    }
    match name.to_string().to_ascii_lowercase().as_str() {
        "serial" | "serial4" => Some(SqlType::Int4),
        "bigserial" | "serial8" => Some(SqlType::Int8),
        "smallserial" | "serial2" => Some(SqlType::Int2),
        _ => None,
    }
}

fn data_type_of(dt: &DataType) -> Result<SqlType, SqlError> {
    super::ddl::data_type(dt)
}

/// A sequence's type: smallint, integer or bigint (22023 otherwise).
fn sequence_type(dt: &DataType) -> Result<SqlType, SqlError> {
    match data_type_of(dt)? {
        t @ (SqlType::Int2 | SqlType::Int4 | SqlType::Int8) => Ok(t),
        _ => Err(SqlError::new(
            SqlState::INVALID_PARAMETER_VALUE,
            "sequence type must be smallint, integer, or bigint",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_strings_fold_as_regclass_does() {
        assert_eq!(sequence_name("Abc").unwrap(), "abc");
        assert_eq!(sequence_name("\"Abc\"").unwrap(), "Abc");
        assert_eq!(sequence_name("public.t_id_seq").unwrap(), "public.t_id_seq");
        // Keys (REL-KEY): a part with a quote is written quoted.
        assert_eq!(sequence_name("\"a\"\"b\"").unwrap(), snapscale_engine::names::key(None, "a\"b"));
        assert!(sequence_name("").is_err());
        assert!(sequence_name("a b").is_err());
        assert!(sequence_name("\"open").is_err());
        assert_eq!(sequence_name("Other.T").unwrap(), "other.t");
        assert!(sequence_name("a.b.c.d").is_err());
    }
}
