//! `ALTER TABLE [IF EXISTS] [ONLY] name ALTER CONSTRAINT constraint
//! [[NOT] DEFERRABLE] [INITIALLY {DEFERRED | IMMEDIATE}] …`, which
//! sqlparser's grammar lacks, read whole as the statement's one action.
//! The attributes are checked as PostgreSQL's grammar checks them: a
//! conflicting pair is a syntax error at its second element, NOT VALID
//! and NO INHERIT are refused for a foreign key.

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::lock_syntax::{alter_table_statement, keyword, word};

/// The statement read.
#[derive(Clone, Debug)]
pub struct AlterConstraint {
    pub table: sqlparser::ast::ObjectName,
    pub if_exists: bool,
    pub constraint: String,
    pub deferrable: bool,
    pub initially_deferred: bool,
}

/// The statement, or its error with the character offset in `sql` it
/// points at; `None` for any other text.
pub(crate) fn parse_alter_constraint(
    sql: &str,
) -> Option<Result<AlterConstraint, (SqlError, Option<usize>)>> {
    let (tokens, table, if_exists, mut i) = alter_table_statement(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    if kw(i) != Some(Keyword::ALTER) || kw(i + 1) != Some(Keyword::CONSTRAINT) {
        return None;
    }
    let constraint = word(tokens.get(i + 2)?)?.0;
    i += 3;
    let at = |k: usize| offset_of(sql, &tokens[k]);
    let syntax = |k: usize, message: &str| {
        Some(Err((SqlError::new(SqlState::SYNTAX_ERROR, message.to_owned()), Some(at(k)))))
    };
    let (mut deferrable, mut initially): (Option<bool>, Option<bool>) = (None, None);
    while i < tokens.len() {
        let element = i;
        match (kw(i), kw(i + 1)) {
            (Some(Keyword::DEFERRABLE), _) => {
                if deferrable == Some(false) {
                    return syntax(element, "conflicting constraint properties");
                }
                deferrable = Some(true);
                i += 1;
            }
            (Some(Keyword::NOT), Some(Keyword::DEFERRABLE)) => {
                if deferrable == Some(true) {
                    return syntax(element, "conflicting constraint properties");
                }
                if initially == Some(true) {
                    return syntax(element, "constraint declared INITIALLY DEFERRED must be DEFERRABLE");
                }
                deferrable = Some(false);
                i += 2;
            }
            (Some(Keyword::INITIALLY), Some(Keyword::DEFERRED | Keyword::IMMEDIATE)) => {
                let deferred = kw(i + 1) == Some(Keyword::DEFERRED);
                if initially == Some(!deferred) {
                    return syntax(element, "conflicting constraint properties");
                }
                if deferred && deferrable == Some(false) {
                    return syntax(element, "constraint declared INITIALLY DEFERRED must be DEFERRABLE");
                }
                initially = Some(deferred);
                i += 2;
            }
            (Some(Keyword::NOT), _) if matches!(&tokens.get(i + 1)?.token, Token::Word(w) if w.value.eq_ignore_ascii_case("valid")) =>
            {
                let err = SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "FOREIGN KEY constraints cannot be marked NOT VALID",
                );
                return Some(Err((err, None)));
            }
            (Some(Keyword::NO), Some(Keyword::INHERIT)) => {
                let err = SqlError::new(
                    SqlState::FEATURE_NOT_SUPPORTED,
                    "FOREIGN KEY constraints cannot be marked NO INHERIT",
                );
                return Some(Err((err, None)));
            }
            _ => {
                let near = sql[at(i)..].split_whitespace().next().unwrap_or_default().to_owned();
                return syntax(i, &format!("syntax error at or near \"{near}\""));
            }
        }
    }
    let initially_deferred = initially == Some(true);
    Some(Ok(AlterConstraint {
        table,
        if_exists,
        constraint,
        deferrable: deferrable == Some(true) || initially_deferred,
        initially_deferred,
    }))
}

/// The byte offset in `sql` where token `t` starts.
fn offset_of(sql: &str, t: &TokenWithSpan) -> usize {
    let line_starts: Vec<usize> =
        std::iter::once(0).chain(sql.match_indices('\n').map(|(k, _)| k + 1)).collect();
    super::lock_syntax::offset(&line_starts, sql, t.span.start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_are_read_and_checked() {
        let a = parse_alter_constraint("ALTER TABLE t ALTER CONSTRAINT c DEFERRABLE INITIALLY IMMEDIATE;")
            .unwrap()
            .unwrap();
        assert_eq!((a.constraint.as_str(), a.deferrable, a.initially_deferred), ("c", true, false));
        let a = parse_alter_constraint("alter table if exists s.t alter constraint \"C\" initially deferred")
            .unwrap()
            .unwrap();
        assert!(a.if_exists && a.deferrable && a.initially_deferred);
        assert_eq!(a.constraint, "C");
        let (e, at) =
            parse_alter_constraint("alter table t alter constraint c not deferrable initially deferred")
                .unwrap()
                .unwrap_err();
        assert_eq!(e.message, "constraint declared INITIALLY DEFERRED must be DEFERRABLE");
        assert_eq!(at, Some(48));
        let (e, _) =
            parse_alter_constraint("alter table t alter constraint c no inherit").unwrap().unwrap_err();
        assert_eq!(e.message, "FOREIGN KEY constraints cannot be marked NO INHERIT");
        assert!(parse_alter_constraint("alter table t alter column c set not null").is_none());
    }
}
