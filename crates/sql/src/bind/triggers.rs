//! CREATE TRIGGER, DROP TRIGGER, ALTER TRIGGER … RENAME and ALTER TABLE
//! … ENABLE / DISABLE TRIGGER: checked as PostgreSQL checks them, each a
//! change of the table's catalog row (TRIGGER-ROWS in the crate README).
//!
//! A trigger's WHEN condition is bound here over a row of the table's
//! columns twice, OLD then NEW ([`when_scope`]); statements that fire the
//! trigger bind it again the same way.

use snapscale_engine::catalog::RelEntry;
use snapscale_engine::triggers::{events, TriggerDef, TriggerTiming};
use snapscale_engine::LockMode;
use snapscale_sqlstate::SqlState;
use snapscale_values::{SqlError, SqlType};
use sqlparser::ast;

use super::scope::{Named, Scope};
use super::{relation_name, Binder, Resolver};
use crate::expr::Expr;
use crate::parse::trigger_syntax::{CreateTrigger, RenameTrigger};
use crate::plan::{Plan, Rel, RelKind, TriggerChange, Utility};

fn wrong_type(message: String, detail: &str) -> SqlError {
    SqlError::new(SqlState::WRONG_OBJECT_TYPE, message).with_detail(detail)
}

fn missing_trigger(name: &str, table: &str) -> SqlError {
    SqlError::new(
        SqlState::UNDEFINED_OBJECT,
        format!("trigger \"{name}\" for table \"{table}\" does not exist"),
    )
}

/// The scope a WHEN condition reads: OLD's columns, then NEW's.
pub(super) fn when_scope(rel: &Rel) -> Scope<'static> {
    let old = Named::table("old", rel, 0);
    let new = Named::table("new", rel, rel.entry.columns.len());
    Scope::empty().with_items(vec![old, new], Vec::new())
}

/// Which of OLD (`.0`) and NEW (`.1`) a bound WHEN condition reads.
pub(crate) fn when_reads(
    e: &Expr,
    width: usize,
    stack: &crate::stack::StackDepth,
) -> Result<(bool, bool), SqlError> {
    let (mut old, mut new) = (false, false);
    e.visit(stack, &mut |e| {
        if let Expr::Column(c) = e {
            if *c < width {
                old = true;
            } else {
                new = true;
            }
        }
    })?;
    Ok((old, new))
}

impl<R: Resolver> Binder<'_, R> {
    pub(super) fn create_trigger(&mut self, c: &CreateTrigger) -> Result<Plan, SqlError> {
        let n = relation_name(&c.table)?;
        let rel = self
            .any_relation(&c.table, LockMode::ShareRowExclusive)
            .map_err(|e| SqlError::from(snapscale_values::ErrorData { position: None, ..e.into_data() }))?;
        let table = rel.entry.name.clone();
        let kind = RelKind::of(&rel.entry);
        let row = c.row;
        match kind {
            RelKind::Table => {
                if c.timing == TriggerTiming::InsteadOf {
                    return Err(wrong_type(
                        format!("\"{table}\" is a table"),
                        "Tables cannot have INSTEAD OF triggers.",
                    ));
                }
            }
            RelKind::View => {
                if c.timing != TriggerTiming::InsteadOf && row {
                    return Err(wrong_type(
                        format!("\"{table}\" is a view"),
                        "Views cannot have row-level BEFORE or AFTER triggers.",
                    ));
                }
                if c.events & events::TRUNCATE != 0 {
                    return Err(wrong_type(
                        format!("\"{table}\" is a view"),
                        "Views cannot have TRUNCATE triggers.",
                    ));
                }
                if c.old_table.is_some() || c.new_table.is_some() {
                    return Err(wrong_type(
                        format!("\"{table}\" is a view"),
                        "Triggers on views cannot have transition tables.",
                    ));
                }
            }
            _ => {
                let what = match kind {
                    RelKind::Sequence => "sequences",
                    RelKind::MatView => "materialized views",
                    _ => "this kind of relation",
                };
                return Err(wrong_type(
                    format!("relation \"{n}\" cannot have triggers"),
                    &format!("This operation is not supported for {what}."),
                ));
            }
        }
        if c.timing == TriggerTiming::InsteadOf {
            if !c.row {
                return Err(not_supported_plain("INSTEAD OF triggers must be FOR EACH ROW"));
            }
            if c.when.is_some() {
                return Err(not_supported_plain("INSTEAD OF triggers cannot have WHEN conditions"));
            }
            if !c.columns.is_empty() {
                return Err(not_supported_plain("INSTEAD OF triggers cannot have column lists"));
            }
        }
        if c.row && c.events & events::TRUNCATE != 0 {
            return Err(not_supported_plain("TRUNCATE FOR EACH ROW triggers are not supported"));
        }
        if c.constraint && (c.timing != TriggerTiming::After || !c.row) {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at or near \"EXECUTE\""));
        }
        if c.deferrable || c.initially_deferred {
            // A constraint trigger fires as an AFTER ROW trigger; put off
            // to COMMIT or SET CONSTRAINTS it would not be yet.
            return Err(super::not_supported("DEFERRABLE constraint triggers (yet)"));
        }
        if c.old_table.is_some() || c.new_table.is_some() {
            self.check_transition_tables(c)?;
        }
        let mut columns: Vec<String> = Vec::new();
        for col in &c.columns {
            if rel.entry.column(col).is_none() {
                return Err(SqlError::new(
                    SqlState::UNDEFINED_COLUMN,
                    format!("column \"{col}\" of relation \"{table}\" does not exist"),
                ));
            }
            if columns.contains(col) {
                return Err(SqlError::new(
                    SqlState::DUPLICATE_COLUMN,
                    format!("column \"{col}\" specified more than once"),
                ));
            }
            columns.push(col.clone());
        }
        let when = match &c.when {
            Some(text) => Some(self.trigger_when(&rel, c, text)?),
            None => None,
        };
        let function = self.trigger_function(&c.function)?;
        let existing = rel.entry.triggers.iter().find(|t| t.name == c.name);
        if let Some(old) = existing {
            if !c.replace {
                return Err(SqlError::new(
                    SqlState::DUPLICATE_OBJECT,
                    format!("trigger \"{}\" for relation \"{table}\" already exists", c.name),
                ));
            }
            if old.constraint || c.constraint {
                return Err(SqlError::new(
                    SqlState::WRONG_OBJECT_TYPE,
                    format!("trigger \"{}\" for relation \"{table}\" is a constraint trigger", c.name),
                ));
            }
        }
        let def = TriggerDef {
            oid: 0,
            name: c.name.clone(),
            function,
            timing: c.timing,
            events: c.events,
            row: c.row,
            columns,
            when,
            args: c.args.clone(),
            enabled: b'O',
            constraint: c.constraint,
            deferrable: c.deferrable,
            initially_deferred: c.initially_deferred,
            old_table: c.old_table.clone(),
            new_table: c.new_table.clone(),
        };
        Ok(Plan::Utility(Utility::Trigger {
            rel,
            change: TriggerChange::Create(Box::new(def)),
            tag: "CREATE TRIGGER",
        }))
    }

    fn check_transition_tables(&mut self, c: &CreateTrigger) -> Result<(), SqlError> {
        let invalid = |m: &str| SqlError::new(SqlState::INVALID_OBJECT_DEFINITION, m.to_owned());
        if c.timing != TriggerTiming::After {
            return Err(invalid("transition table name can only be specified for an AFTER trigger"));
        }
        if c.events & events::TRUNCATE != 0 {
            return Err(invalid("TRUNCATE triggers with transition tables are not supported"));
        }
        if c.events.count_ones() > 1 {
            return Err(not_supported_plain(
                "transition tables cannot be specified for triggers with more than one event",
            ));
        }
        if !c.columns.is_empty() {
            return Err(not_supported_plain(
                "transition tables cannot be specified for triggers with column lists",
            ));
        }
        if c.new_table.is_some() && c.events & (events::INSERT | events::UPDATE) == 0 {
            return Err(invalid("NEW TABLE can only be specified for an INSERT or UPDATE trigger"));
        }
        if c.old_table.is_some() && c.events & (events::DELETE | events::UPDATE) == 0 {
            return Err(invalid("OLD TABLE can only be specified for a DELETE or UPDATE trigger"));
        }
        if c.old_table.is_some() && c.old_table == c.new_table {
            return Err(invalid("OLD TABLE name and NEW TABLE name cannot be the same"));
        }
        Ok(())
    }

    /// A WHEN condition bound and checked; its text as kept.
    fn trigger_when(&mut self, rel: &Rel, c: &CreateTrigger, text: &str) -> Result<String, SqlError> {
        let expr = parse_when(text, self.stack.limit())?;
        if contains_subquery(&expr) {
            return Err(not_supported_plain("cannot use subquery in trigger WHEN condition"));
        }
        let calls = self.statement.pl_calls.len();
        let bound = self.when_condition(rel, &expr)?;
        if self.statement.pl_calls.len() > calls {
            return Err(super::not_supported("a PL/pgSQL function in a trigger's WHEN condition (yet)"));
        }
        let (old, new) = when_reads(&bound, rel.entry.columns.len(), &self.stack)?;
        // The cursor goes to the first reference of the row the error is
        // about, as PostgreSQL places it.
        let invalid = |m: &str, rows: &[&str]| {
            let e = SqlError::new(SqlState::INVALID_OBJECT_DEFINITION, m.to_owned());
            match first_reference(text, rows) {
                Some(at) if c.when_at > 0 => e.at_position(c.when_at + at),
                _ => e,
            }
        };
        if !c.row && (old || new) {
            return Err(invalid(
                "statement trigger's WHEN condition cannot reference column values",
                &["old", "new"],
            ));
        }
        if old && c.events & events::INSERT != 0 {
            return Err(invalid("INSERT trigger's WHEN condition cannot reference OLD values", &["old"]));
        }
        if new && c.events & events::DELETE != 0 {
            return Err(invalid("DELETE trigger's WHEN condition cannot reference NEW values", &["new"]));
        }
        Ok(folded(expr).to_string())
    }

    /// `expr` bound over OLD and NEW as a boolean condition.
    pub(crate) fn when_condition(&mut self, rel: &Rel, expr: &ast::Expr) -> Result<Expr, SqlError> {
        let scope = when_scope(rel);
        self.filter(expr, &scope, "WHEN")
    }

    /// The trigger function a name finds: one of no arguments returning
    /// trigger.
    fn trigger_function(&mut self, name: &ast::ObjectName) -> Result<u32, SqlError> {
        let key = relation_name(name)?;
        let found = self.resolver.routines(&key)?;
        let f = found.iter().find(|e| {
            e.routine.as_ref().is_some_and(|r| {
                r.kind == snapscale_engine::routines::RoutineKind::Function && r.input_types().is_empty()
            })
        });
        let Some(f) = f else {
            return Err(SqlError::new(
                SqlState::UNDEFINED_FUNCTION,
                format!("function {key}() does not exist"),
            ));
        };
        if f.routine.as_ref().map(|r| r.returns) != Some(SqlType::Trigger) {
            return Err(SqlError::new(
                SqlState::INVALID_OBJECT_DEFINITION,
                format!("function {key} must return type trigger"),
            ));
        }
        Ok(f.oid)
    }

    pub(super) fn drop_trigger(&mut self, d: &ast::DropTrigger) -> Result<Plan, SqlError> {
        let name = snapscale_engine::names::bare(&relation_name(&d.trigger_name)?);
        let Some(table) = &d.table_name else {
            return Err(SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at end of input"));
        };
        let key = relation_name(table)?;
        if self.resolver.resolve(&key)?.is_none() {
            if d.if_exists {
                return Ok(skip(format!("relation \"{key}\" does not exist, skipping"), "DROP TRIGGER"));
            }
            return Err(SqlError::new(
                SqlState::UNDEFINED_TABLE,
                format!("relation \"{key}\" does not exist"),
            ));
        }
        let rel = self
            .any_relation(table, LockMode::AccessExclusive)
            .map_err(|e| SqlError::from(snapscale_values::ErrorData { position: None, ..e.into_data() }))?;
        if !rel.entry.triggers.iter().any(|t| t.name == name) {
            if d.if_exists {
                return Ok(skip(
                    format!(
                        "trigger \"{name}\" for relation \"{}\" does not exist, skipping",
                        rel.entry.name
                    ),
                    "DROP TRIGGER",
                ));
            }
            return Err(missing_trigger(&name, &rel.entry.name));
        }
        Ok(Plan::Utility(Utility::Trigger { rel, change: TriggerChange::Drop(name), tag: "DROP TRIGGER" }))
    }

    pub(super) fn rename_trigger(&mut self, r: &RenameTrigger) -> Result<Plan, SqlError> {
        let rel = self
            .any_relation(&r.table, LockMode::AccessExclusive)
            .map_err(|e| SqlError::from(snapscale_values::ErrorData { position: None, ..e.into_data() }))?;
        let table = rel.entry.name.clone();
        if !rel.entry.triggers.iter().any(|t| t.name == r.name) {
            return Err(missing_trigger(&r.name, &table));
        }
        if rel.entry.triggers.iter().any(|t| t.name == r.new) {
            return Err(SqlError::new(
                SqlState::DUPLICATE_OBJECT,
                format!("trigger \"{}\" for relation \"{table}\" already exists", r.new),
            ));
        }
        let change = TriggerChange::Rename { old: r.name.clone(), new: r.new.clone() };
        Ok(Plan::Utility(Utility::Trigger { rel, change, tag: "ALTER TRIGGER" }))
    }
}

/// ALTER TABLE … {ENABLE [REPLICA | ALWAYS] | DISABLE} TRIGGER {name |
/// ALL | USER}: the draft row's triggers changed.
pub(super) fn set_enabled(entry: &mut RelEntry, which: &ast::Ident, state: u8) -> Result<(), SqlError> {
    let name = if which.quote_style.is_some() { which.value.clone() } else { which.value.to_lowercase() };
    let all = which.quote_style.is_none() && matches!(name.as_str(), "all" | "user");
    if !all && !entry.triggers.iter().any(|t| t.name == name) {
        return Err(missing_trigger(&name, &entry.name));
    }
    for t in entry.triggers.iter_mut().filter(|t| all || t.name == name) {
        t.enabled = state;
    }
    Ok(())
}

fn skip(notice: String, tag: &'static str) -> Plan {
    Plan::Utility(Utility::Skip { code: SqlState::SUCCESSFUL_COMPLETION, notice, tag })
}

fn not_supported_plain(message: &str) -> SqlError {
    SqlError::new(SqlState::FEATURE_NOT_SUPPORTED, message.to_owned())
}

/// Trigger `text`'s WHEN condition bound over `rel`'s OLD and NEW rows
/// (a row of its columns twice), for a statement that fires it.
pub(crate) fn bind_when<R: Resolver>(
    resolver: &mut R,
    rel: &Rel,
    text: &str,
    max_stack_depth: usize,
) -> Result<Expr, SqlError> {
    let expr = parse_when(text, max_stack_depth)?;
    let mut b = Binder::new(resolver, max_stack_depth, Vec::new());
    b.when_condition(rel, &expr)
}

/// A WHEN condition's text parsed as an expression.
pub(crate) fn parse_when(text: &str, max_stack_depth: usize) -> Result<ast::Expr, SqlError> {
    // `OLD.*` / `NEW.*` (a whole row, which sqlparser reads only as a
    // select list's wildcard) as the whole-row names `old` / `new`.
    let text = whole_rows(text);
    let mut parsed = crate::parse::parse(&format!("SELECT {text}"), max_stack_depth)?;
    let stmt =
        parsed.pop().ok_or_else(|| SqlError::new(SqlState::SYNTAX_ERROR, "syntax error at end of input"))?;
    let crate::parse::Parsed::Sql(ast) = stmt else {
        return Err(SqlError::new(SqlState::SYNTAX_ERROR, "a WHEN condition that is not an expression"));
    };
    if let ast::Statement::Query(q) = &*ast {
        if let ast::SetExpr::Select(s) = &*q.body {
            if let [ast::SelectItem::UnnamedExpr(e)] = s.projection.as_slice() {
                return Ok(e.clone());
            }
        }
    }
    Err(SqlError::new(SqlState::SYNTAX_ERROR, "a WHEN condition that is not an expression"))
}

/// `text` with each `old.*` / `new.*` (any case, outside quotes) written
/// as the bare name.
fn whole_rows(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let mut after_word = false;
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        if quote.is_none() && !after_word {
            let name =
                ["old", "new"].into_iter().find(|n| rest.get(..3).is_some_and(|w| w.eq_ignore_ascii_case(n)));
            let star = name
                .and_then(|_| rest[3..].trim_start().strip_prefix('.'))
                .and_then(|r| r.trim_start().strip_prefix('*'));
            if let (Some(name), Some(after)) = (name, star) {
                out.push_str(name);
                rest = after;
                after_word = true;
                continue;
            }
        }
        match quote {
            Some(q) if c == q => quote = None,
            None if c == '\'' || c == '"' => quote = Some(c),
            _ => {}
        }
        out.push(c);
        after_word = c.is_alphanumeric() || c == '_' || c == '.';
        rest = &rest[c.len_utf8()..];
    }
    out
}

/// `e` with its unquoted identifiers folded to lower case, as PostgreSQL
/// keeps them, and the whole rows `old` / `new` written `old.*` /
/// `new.*`, as PostgreSQL prints them.
fn folded(mut e: ast::Expr) -> ast::Expr {
    use std::ops::ControlFlow;
    let fold = |i: &mut ast::Ident| {
        if i.quote_style.is_none() {
            i.value = i.value.to_lowercase();
        }
    };
    let _ = ast::visit_expressions_mut(&mut e, |e| {
        match e {
            ast::Expr::Identifier(i)
                if i.quote_style.is_none()
                    && ["old", "new"].iter().any(|n| i.value.eq_ignore_ascii_case(n)) =>
            {
                let name = ast::ObjectName::from(vec![ast::Ident::new(i.value.to_lowercase())]);
                *e = ast::Expr::QualifiedWildcard(name, ast::helpers::attached_token::AttachedToken::empty());
            }
            ast::Expr::Identifier(i) => fold(i),
            ast::Expr::CompoundIdentifier(parts) => parts.iter_mut().for_each(fold),
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    e
}

/// The character offset in `text` of its first word among `rows`
/// (`old`, `new`) that qualifies a column (`old.a`, `old.*`), outside
/// quotes.
fn first_reference(text: &str, rows: &[&str]) -> Option<usize> {
    let mut quote = None;
    let chars: Vec<char> = text.chars().collect();
    for (k, &c) in chars.iter().enumerate() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => continue,
            None if c == '\'' || c == '"' => quote = Some(c),
            None => {}
        }
        if quote.is_some() || (k > 0 && (chars[k - 1].is_alphanumeric() || chars[k - 1] == '_')) {
            continue;
        }
        for r in rows {
            let n = r.len();
            let word: String = chars[k..].iter().take(n).collect();
            let after = chars[k + word.chars().count()..].iter().find(|c| !c.is_whitespace());
            if word.eq_ignore_ascii_case(r) && after == Some(&'.') {
                return Some(k);
            }
        }
    }
    None
}

fn contains_subquery(e: &ast::Expr) -> bool {
    use sqlparser::ast::Visit;
    use std::ops::ControlFlow;
    struct Finder;
    impl ast::Visitor for Finder {
        type Break = ();
        fn pre_visit_query(&mut self, _q: &ast::Query) -> ControlFlow<()> {
            ControlFlow::Break(())
        }
    }
    e.visit(&mut Finder).is_break()
}

#[cfg(test)]
mod tests {
    #[test]
    fn whole_rows_are_named() {
        assert_eq!(super::whole_rows("OLD.* IS DISTINCT FROM new . *"), "old IS DISTINCT FROM new");
        assert_eq!(super::whole_rows("'old.*' = x.old.* and gold.*"), "'old.*' = x.old.* and gold.*");
    }
}
