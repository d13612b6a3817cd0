//! `CREATE [OR REPLACE] [CONSTRAINT] TRIGGER` and `ALTER TRIGGER … RENAME
//! TO`, read whole: sqlparser reads a trigger function's arguments as a
//! declaration's (name and type), where PostgreSQL takes literals and bare
//! words, and it lacks ALTER TRIGGER.

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::ast::ObjectName;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::lock_syntax::{keyword, may_start_with, offset, statement_tokens};
use super::token_walk::{char_position, dotted, ident, matching, near};
use snapscale_engine::triggers::{events, TriggerTiming};

/// A CREATE TRIGGER statement.
#[derive(Clone, Debug)]
pub struct CreateTrigger {
    pub replace: bool,
    pub constraint: bool,
    pub name: String,
    pub timing: TriggerTiming,
    /// [`events`] bits.
    pub events: u8,
    /// UPDATE OF these columns.
    pub columns: Vec<String>,
    pub table: ObjectName,
    /// FROM referenced_table (constraint triggers).
    pub from: Option<ObjectName>,
    pub deferrable: bool,
    pub initially_deferred: bool,
    pub old_table: Option<String>,
    pub new_table: Option<String>,
    /// FOR EACH ROW.
    pub row: bool,
    /// The WHEN condition as written between its parentheses.
    pub when: Option<String>,
    /// Where the WHEN condition's text starts in the statement (1-based
    /// characters), for its errors' cursor.
    pub when_at: usize,
    pub function: ObjectName,
    pub args: Vec<String>,
}

/// `ALTER TRIGGER name ON table RENAME TO new`.
#[derive(Clone, Debug)]
pub struct RenameTrigger {
    pub name: String,
    pub table: ObjectName,
    pub new: String,
}

/// The statement, if `sql` is a CREATE TRIGGER.
pub(crate) fn parse_create_trigger(sql: &str) -> Option<Result<CreateTrigger, SqlError>> {
    if !may_start_with(sql, "create") {
        return None;
    }
    let tokens = statement_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    if kw(0) != Some(Keyword::CREATE) {
        return None;
    }
    let mut i = 1;
    let replace = kw(i) == Some(Keyword::OR) && kw(i + 1) == Some(Keyword::REPLACE);
    if replace {
        i += 2;
    }
    let constraint = kw(i) == Some(Keyword::CONSTRAINT);
    if constraint {
        i += 1;
    }
    if kw(i) != Some(Keyword::TRIGGER) {
        return None;
    }
    Some(read_create(sql, &tokens, i + 1, replace, constraint))
}

fn read_create(
    sql: &str,
    tokens: &[TokenWithSpan],
    mut i: usize,
    replace: bool,
    constraint: bool,
) -> Result<CreateTrigger, SqlError> {
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    let name = ident(sql, tokens, i)?;
    i += 1;
    let timing = match (kw(i), kw(i + 1)) {
        (Some(Keyword::BEFORE), _) => TriggerTiming::Before,
        (Some(Keyword::AFTER), _) => TriggerTiming::After,
        (Some(Keyword::INSTEAD), Some(Keyword::OF)) => {
            i += 1;
            TriggerTiming::InsteadOf
        }
        _ => return Err(near(sql, tokens, i)),
    };
    i += 1;
    let mut evs = 0u8;
    let mut duplicate = false;
    let mut columns = Vec::new();
    loop {
        let bit = match kw(i) {
            Some(Keyword::INSERT) => events::INSERT,
            Some(Keyword::DELETE) => events::DELETE,
            Some(Keyword::UPDATE) => events::UPDATE,
            Some(Keyword::TRUNCATE) => events::TRUNCATE,
            _ => return Err(near(sql, tokens, i)),
        };
        duplicate |= evs & bit != 0;
        evs |= bit;
        i += 1;
        if bit == events::UPDATE && kw(i) == Some(Keyword::OF) {
            i += 1;
            loop {
                columns.push(ident(sql, tokens, i)?);
                i += 1;
                if !matches!(tokens.get(i).map(|t| &t.token), Some(Token::Comma)) {
                    break;
                }
                i += 1;
            }
        }
        if kw(i) != Some(Keyword::OR) {
            break;
        }
        i += 1;
    }
    if kw(i) != Some(Keyword::ON) {
        return Err(near(sql, tokens, i));
    }
    if duplicate {
        return Err(SqlError::new(
            SqlState::SYNTAX_ERROR,
            "duplicate trigger events specified at or near \"ON\"",
        )
        .at_position(char_position(sql, tokens[i].span.start)));
    }
    let (table, next) = dotted(sql, tokens, i + 1)?;
    i = next;
    let mut from = None;
    if kw(i) == Some(Keyword::FROM) {
        let (t, next) = dotted(sql, tokens, i + 1)?;
        from = Some(t);
        i = next;
    }
    let (mut deferrable, mut initially_deferred) = (false, false);
    loop {
        match (kw(i), kw(i + 1)) {
            (Some(Keyword::NOT), Some(Keyword::DEFERRABLE)) => i += 2,
            (Some(Keyword::DEFERRABLE), _) => {
                deferrable = true;
                i += 1;
            }
            (Some(Keyword::INITIALLY), Some(Keyword::DEFERRED)) => {
                initially_deferred = true;
                i += 2;
            }
            (Some(Keyword::INITIALLY), Some(Keyword::IMMEDIATE)) => i += 2,
            _ => break,
        }
    }
    let (mut old_table, mut new_table) = (None, None);
    if kw(i) == Some(Keyword::REFERENCING) {
        i += 1;
        while matches!(kw(i), Some(Keyword::OLD | Keyword::NEW)) {
            let old = kw(i) == Some(Keyword::OLD);
            if kw(i + 1) != Some(Keyword::TABLE) {
                return Err(match kw(i + 1) {
                    Some(Keyword::ROW) => SqlError::new(
                        SqlState::FEATURE_NOT_SUPPORTED,
                        "ROW variable naming in the REFERENCING clause is not supported",
                    )
                    .with_hint("Use OLD TABLE or NEW TABLE for naming transition tables."),
                    _ => near(sql, tokens, i + 1),
                });
            }
            i += 2;
            if kw(i) == Some(Keyword::AS) {
                i += 1;
            }
            let n = ident(sql, tokens, i)?;
            i += 1;
            let slot = if old { &mut old_table } else { &mut new_table };
            if slot.is_some() {
                let which = if old { "OLD" } else { "NEW" };
                return Err(SqlError::new(
                    SqlState::SYNTAX_ERROR,
                    format!("{which} TABLE cannot be specified multiple times"),
                ));
            }
            *slot = Some(n);
        }
    }
    let mut row = false;
    if kw(i) == Some(Keyword::FOR) {
        i += 1;
        if kw(i) == Some(Keyword::EACH) {
            i += 1;
        }
        row = match kw(i) {
            Some(Keyword::ROW) => true,
            Some(Keyword::STATEMENT) => false,
            _ => return Err(near(sql, tokens, i)),
        };
        i += 1;
    }
    let mut when = None;
    let mut when_at = 0;
    if kw(i) == Some(Keyword::WHEN) {
        i += 1;
        if !matches!(tokens.get(i).map(|t| &t.token), Some(Token::LParen)) {
            return Err(near(sql, tokens, i));
        }
        let close = matching(tokens, i).ok_or_else(|| near(sql, tokens, tokens.len()))?;
        let line_starts: Vec<usize> =
            std::iter::once(0).chain(sql.match_indices('\n').map(|(k, _)| k + 1)).collect();
        let from = offset(&line_starts, sql, tokens[i].span.end);
        let to = offset(&line_starts, sql, tokens[close].span.start);
        let text = &sql[from..to];
        let lead = text.len() - text.trim_start().len();
        when_at = sql[..from + lead].chars().count() + 1;
        when = Some(text.trim().to_owned());
        i = close + 1;
    }
    if kw(i) != Some(Keyword::EXECUTE) || !matches!(kw(i + 1), Some(Keyword::FUNCTION | Keyword::PROCEDURE)) {
        return Err(near(sql, tokens, i));
    }
    let (function, next) = dotted(sql, tokens, i + 2)?;
    i = next;
    if !matches!(tokens.get(i).map(|t| &t.token), Some(Token::LParen)) {
        return Err(near(sql, tokens, i));
    }
    i += 1;
    let mut args = Vec::new();
    if !matches!(tokens.get(i).map(|t| &t.token), Some(Token::RParen)) {
        loop {
            args.push(match tokens.get(i).map(|t| &t.token) {
                Some(Token::SingleQuotedString(s) | Token::EscapedStringLiteral(s)) => s.clone(),
                Some(Token::DollarQuotedString(d)) => d.value.clone(),
                Some(Token::Number(n, _)) => match n.parse::<i64>() {
                    Ok(v) if i32::try_from(v).is_ok() => v.to_string(),
                    _ => n.clone(),
                },
                Some(Token::Word(w)) if w.quote_style.is_some() => w.value.clone(),
                Some(Token::Word(w)) => w.value.to_lowercase(),
                _ => return Err(near(sql, tokens, i)),
            });
            i += 1;
            match tokens.get(i).map(|t| &t.token) {
                Some(Token::Comma) => i += 1,
                Some(Token::RParen) => break,
                _ => return Err(near(sql, tokens, i)),
            }
        }
    }
    i += 1;
    if i != tokens.len() {
        return Err(near(sql, tokens, i));
    }
    Ok(CreateTrigger {
        replace,
        constraint,
        name,
        timing,
        events: evs,
        columns,
        table,
        from,
        deferrable,
        initially_deferred,
        old_table,
        new_table,
        row,
        when,
        when_at,
        function,
        args,
    })
}

/// The statement, if `sql` is an ALTER TRIGGER.
pub(crate) fn parse_alter_trigger(sql: &str) -> Option<Result<RenameTrigger, SqlError>> {
    if !may_start_with(sql, "alter") {
        return None;
    }
    let tokens = statement_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    if kw(0) != Some(Keyword::ALTER) || kw(1) != Some(Keyword::TRIGGER) {
        return None;
    }
    Some((|| {
        let name = ident(sql, &tokens, 2)?;
        // ON ONLY: PostgreSQL's grammar has no ONLY here.
        if kw(3) != Some(Keyword::ON) || kw(4) == Some(Keyword::ONLY) {
            return Err(near(sql, &tokens, if kw(3) == Some(Keyword::ON) { 4 } else { 3 }));
        }
        let (table, i) = dotted(sql, &tokens, 4)?;
        if kw(i) == Some(Keyword::NO) || kw(i) == Some(Keyword::DEPENDS) {
            return Err(SqlError::new(
                SqlState::FEATURE_NOT_SUPPORTED,
                "ALTER TRIGGER … DEPENDS ON EXTENSION is not supported",
            ));
        }
        if kw(i) != Some(Keyword::RENAME) || kw(i + 1) != Some(Keyword::TO) {
            return Err(near(sql, &tokens, i));
        }
        let new = ident(sql, &tokens, i + 2)?;
        if i + 3 != tokens.len() {
            return Err(near(sql, &tokens, i + 3));
        }
        Ok(RenameTrigger { name, table, new })
    })())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trigger_is_read() {
        let t = parse_create_trigger(
            "create trigger t before update of a, \"B\" or insert on s.tab for each row \
             when (old.a is distinct from (new.a)) execute procedure f('x', 42, foo)",
        )
        .unwrap()
        .unwrap();
        assert_eq!(t.timing, TriggerTiming::Before);
        assert_eq!(t.events, events::UPDATE | events::INSERT);
        assert_eq!(t.columns, ["a", "B"]);
        assert_eq!(t.table.to_string(), "s.tab");
        assert!(t.row);
        assert_eq!(t.when.as_deref(), Some("old.a is distinct from (new.a)"));
        assert_eq!(t.args, ["x", "42", "foo"]);
        assert!(parse_create_trigger("create table t (a int)").is_none());
        assert!(parse_create_trigger("create trigger t before on x execute function f()").unwrap().is_err());
    }

    #[test]
    fn a_rename_is_read() {
        let r = parse_alter_trigger("ALTER TRIGGER a ON t RENAME TO b").unwrap().unwrap();
        assert_eq!((r.name.as_str(), r.new.as_str()), ("a", "b"));
    }
}
