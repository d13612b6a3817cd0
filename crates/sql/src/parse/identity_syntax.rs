//! `ALTER TABLE … ALTER [COLUMN] c` identity actions, which sqlparser's
//! grammar lacks: SET GENERATED {ALWAYS | BY DEFAULT}, SET followed by a
//! sequence option, RESTART [[WITH] n] (any number of these in a row), and
//! DROP IDENTITY [IF EXISTS]. Each such action is replaced in the text by
//! `ALTER COLUMN c SET DEFAULT "$identityN"`, which sqlparser reads and
//! the binder (`alter_table.rs`) recognises as the action kept here.

use snapscale_sqlstate::SqlState;
use snapscale_values::SqlError;
use sqlparser::keywords::Keyword;
use sqlparser::tokenizer::{Token, TokenWithSpan};

use super::alter_sequence_syntax::{parse_alter_sequence, SequenceAction, SequenceChanges};
use super::lock_syntax::{keyword, may_start_with, offset, significant_tokens};

/// Each identity action's steps, by its marker's number.
pub(crate) type Actions = Vec<Vec<IdentityStep>>;

/// The marker an identity action leaves in the text.
pub(crate) const MARKER: &str = "$identity";

pub(crate) use crate::statement::{IdentityStep, SequenceChangesOwned};

fn syntax_error(near: &str) -> SqlError {
    SqlError::new(SqlState::SYNTAX_ERROR, format!("syntax error at or near \"{near}\""))
}

/// Whether the action after `ALTER [COLUMN] c` at token `j` is an
/// identity one.
fn is_identity_action(kw: &dyn Fn(usize) -> Option<Keyword>, j: usize) -> bool {
    match kw(j) {
        Some(Keyword::SET) => matches!(
            kw(j + 1),
            Some(
                Keyword::GENERATED
                    | Keyword::INCREMENT
                    | Keyword::START
                    | Keyword::MINVALUE
                    | Keyword::MAXVALUE
                    | Keyword::NO
                    | Keyword::CACHE
                    | Keyword::CYCLE
            )
        ),
        Some(Keyword::RESTART) => true,
        Some(Keyword::DROP) => kw(j + 1) == Some(Keyword::IDENTITY),
        _ => false,
    }
}

/// `sql` with its identity actions replaced by markers, and the actions
/// (the marker's number is the position here); `None` for other text.
pub(crate) fn read_identity_actions(sql: &str) -> Option<Result<(String, Actions), SqlError>> {
    if !may_start_with(sql, "alter") {
        return None;
    }
    let tokens = significant_tokens(sql)?;
    let kw = |i: usize| tokens.get(i).and_then(|t| keyword(&t.token));
    if kw(0) != Some(Keyword::ALTER) || kw(1) != Some(Keyword::TABLE) {
        return None;
    }
    let line_starts: Vec<usize> =
        std::iter::once(0).chain(sql.match_indices('\n').map(|(k, _)| k + 1)).collect();
    let start_of = |i: usize| offset(&line_starts, sql, tokens[i].span.start);
    let end_of = |i: usize| offset(&line_starts, sql, tokens[i].span.end);
    let mut actions = Vec::new();
    let mut out = String::new();
    let mut copied = 0;
    let mut depth = 0usize;
    let mut i = 2;
    while i < tokens.len() {
        match tokens[i].token {
            Token::LParen => depth += 1,
            Token::RParen => depth = depth.saturating_sub(1),
            _ => {}
        }
        let after_name_or_comma = matches!(tokens[i - 1].token, Token::Comma | Token::Word(_));
        if depth != 0 || kw(i) != Some(Keyword::ALTER) || !after_name_or_comma {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        if kw(j) == Some(Keyword::COLUMN) {
            j += 1;
        }
        let Some(TokenWithSpan { token: Token::Word(column), .. }) = tokens.get(j) else {
            i += 1;
            continue;
        };
        j += 1;
        if !is_identity_action(&kw, j) {
            i += 1;
            continue;
        }
        // The action runs to the next comma at this level.
        let mut end = j;
        let mut d = 0usize;
        while end < tokens.len() {
            match tokens[end].token {
                Token::LParen => d += 1,
                Token::RParen => d = d.saturating_sub(1),
                Token::Comma if d == 0 => break,
                Token::SemiColon | Token::EOF => break,
                _ => {}
            }
            end += 1;
        }
        let steps = match steps(sql, &tokens[j..end], &start_of, &end_of, j) {
            Ok(s) => s,
            Err(e) => return Some(Err(e)),
        };
        let column = match column.quote_style {
            Some(_) => column.value.clone(),
            None => column.value.to_lowercase(),
        };
        out.push_str(&sql[copied..start_of(i)]);
        out.push_str(&format!(
            "ALTER COLUMN \"{}\" SET DEFAULT \"{MARKER}{}\"",
            column.replace('"', "\"\""),
            actions.len()
        ));
        copied = end_of(end - 1);
        actions.push(steps);
        i = end;
    }
    if actions.is_empty() {
        return None;
    }
    out.push_str(&sql[copied..]);
    Some(Ok((out, actions)))
}

/// The steps of one action, whose tokens are `t` (`first`: the index of
/// `t[0]` among the statement's tokens).
fn steps(
    sql: &str,
    t: &[TokenWithSpan],
    start_of: &dyn Fn(usize) -> usize,
    end_of: &dyn Fn(usize) -> usize,
    first: usize,
) -> Result<Vec<IdentityStep>, SqlError> {
    let kw = |i: usize| t.get(i).and_then(|x| keyword(&x.token));
    let near = |i: usize| t.get(i).map_or_else(String::new, |x| x.token.to_string());
    if kw(0) == Some(Keyword::DROP) {
        let if_exists = kw(2) == Some(Keyword::IF) && kw(3) == Some(Keyword::EXISTS);
        let n = if if_exists { 4 } else { 2 };
        if t.len() != n {
            return Err(syntax_error(&near(n)));
        }
        return Ok(vec![IdentityStep::Drop { if_exists }]);
    }
    let mut steps = Vec::new();
    let mut options = String::new();
    let mut i = 0;
    while i < t.len() {
        let begins = |k: usize| matches!(kw(k), Some(Keyword::SET | Keyword::RESTART));
        match (kw(i), kw(i + 1)) {
            (Some(Keyword::SET), Some(Keyword::GENERATED)) => {
                let always = match (kw(i + 2), kw(i + 3)) {
                    (Some(Keyword::ALWAYS), _) => true,
                    (Some(Keyword::BY), Some(Keyword::DEFAULT)) => false,
                    _ => return Err(syntax_error(&near(i + 2))),
                };
                steps.push(IdentityStep::Generated(always));
                i += if always { 3 } else { 4 };
            }
            (Some(Keyword::SET), _) | (Some(Keyword::RESTART), _) => {
                // This option's words, up to the next SET or RESTART.
                let from = if kw(i) == Some(Keyword::SET) { i + 1 } else { i };
                let mut to = from + 1;
                while to < t.len() && !begins(to) {
                    to += 1;
                }
                if from >= t.len() {
                    return Err(syntax_error(&near(i)));
                }
                options.push(' ');
                options.push_str(&sql[start_of(first + from)..end_of(first + to - 1)]);
                i = to;
            }
            _ => return Err(syntax_error(&near(i))),
        }
    }
    if !options.is_empty() {
        let text = format!("ALTER SEQUENCE identity{options}");
        let changes = match parse_alter_sequence(&text) {
            Some(Ok(a)) => match a.action {
                SequenceAction::Options(c) => c,
                _ => return Err(syntax_error(options.trim())),
            },
            Some(Err(e)) => return Err(e),
            None => return Err(syntax_error(options.trim())),
        };
        let SequenceChanges { options, restart, data_type, owned_by } = *changes;
        if data_type.is_some() || owned_by.is_some() {
            return Err(syntax_error(if data_type.is_some() { "AS" } else { "OWNED" }));
        }
        steps.push(IdentityStep::Options(Box::new(SequenceChangesOwned { options, restart })));
    }
    Ok(steps)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_actions_become_markers() {
        let sql = "ALTER TABLE t ALTER COLUMN a SET GENERATED BY DEFAULT SET INCREMENT BY 2 RESTART, ALTER b DROP IDENTITY IF EXISTS, ALTER c SET NOT NULL";
        let (text, actions) = read_identity_actions(sql).unwrap().unwrap();
        assert_eq!(
            text,
            "ALTER TABLE t ALTER COLUMN \"a\" SET DEFAULT \"$identity0\", ALTER COLUMN \"b\" SET DEFAULT \"$identity1\", ALTER c SET NOT NULL"
        );
        assert!(matches!(actions[0][0], IdentityStep::Generated(false)));
        assert!(
            matches!(&actions[0][1], IdentityStep::Options(c) if c.options.len() == 1 && c.restart == Some(None))
        );
        assert!(matches!(actions[1][0], IdentityStep::Drop { if_exists: true }));
        assert!(read_identity_actions("ALTER TABLE t ALTER COLUMN a SET DEFAULT 1").is_none());
        assert!(read_identity_actions("ALTER TABLE t ALTER a SET NOT NULL").is_none());
    }
}
